"""The mapping from SDK and HTTP errors to failure reasons, and the strict reading of numbers."""

from __future__ import annotations

import json
import math
import socket
from datetime import datetime, timezone
from email.utils import format_datetime
from typing import Any

import pytest
from loopback import (
    LoopbackServer,
    Scripted,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
)

from checkprofile import ChoiceAnswer, EvaluatorError, RubricAnswer
from checkprofile.adapters._errors import (
    failure_from_exception,
    failure_from_status,
    retry_after_seconds,
)
from checkprofile.adapters._read import (
    Malformed,
    distribution,
    most_probable,
    probability,
    read_choice,
    read_rubric,
)

NOW = datetime(2026, 10, 6, 9, 4, 20, tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        pytest.param({"Retry-After": "3"}, 3.0, id="seconds"),
        pytest.param({"retry-after": "0.5"}, 0.5, id="fraction"),
        pytest.param({"RETRY-AFTER": " 7 "}, 7.0, id="any-case-and-spaces"),
        pytest.param({"retry-after-ms": "250", "retry-after": "9"}, 0.25, id="ms-wins"),
        pytest.param({"retry-after": "Tue, 06 Oct 2026 09:04:50 GMT"}, 30.0, id="http-date"),
        pytest.param({"retry-after": "Tue, 06 Oct 2026 09:00:00 GMT"}, 0.0, id="date-in-past"),
        pytest.param({"retry-after": "soon"}, None, id="garbage"),
        pytest.param({"retry-after": "-1"}, None, id="negative"),
        pytest.param({"retry-after": "inf"}, None, id="infinite"),
        # ASCII digits only (RFC 9110's delay-seconds): float() takes these, a header not.
        pytest.param({"retry-after": "\u0661\u0662"}, None, id="arabic-indic-digits"),
        pytest.param({"retry-after": "\uff13"}, None, id="fullwidth-digit"),
        pytest.param({"retry-after": "1_000"}, None, id="underscores"),
        pytest.param({"retry-after": "1e3"}, None, id="exponent"),
        pytest.param({"retry-after": "nan"}, None, id="nan"),
        pytest.param({}, None, id="absent"),
    ],
)
def test_retry_after_reads_seconds_milliseconds_and_dates(
    headers: dict[str, str], seconds: float | None
) -> None:
    assert retry_after_seconds(headers, now=NOW) == seconds


def test_retry_after_dates_use_the_clock_by_default() -> None:
    later = datetime.now(timezone.utc).timestamp() + 60
    date = format_datetime(datetime.fromtimestamp(later, timezone.utc), usegmt=True)
    wait = retry_after_seconds({"Retry-After": date})
    assert wait is not None and 55 <= wait <= 61


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (401, {"error": {"message": "bad key"}}, "auth"),
        (403, None, "auth"),
        (429, {"error": "slow down"}, "rate_limited"),
        (408, None, "timeout"),
        (413, "too large", "tokens_exceeded"),
        (400, {"error": {"code": "context_length_exceeded", "message": "x"}}, "tokens_exceeded"),
        (422, {"detail": "The input is too long for the model."}, "tokens_exceeded"),
        (400, {"error": {"code": "content_filter", "message": "blocked"}}, "refusal"),
        (400, {"detail": "questions.q0: Field required"}, "unknown"),
        (404, {"detail": "model not found"}, "unknown"),
        (500, {"error": "boom"}, "server_error"),
        (501, None, "server_error"),
        (502, None, "unavailable"),
        (503, None, "unavailable"),
        (504, None, "unavailable"),
        (529, None, "unavailable"),
    ],
)
def test_each_status_has_its_reason(status: int, body: object, reason: str) -> None:
    failure = failure_from_status(status, body, {}, where="POST /v1/x")
    assert failure.reason == reason
    assert failure.detail.startswith(f"POST /v1/x: HTTP {status}")


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        # LiteLLM's proxy, word for word (tests/hosts/litellm-1.104.3/).
        (
            400,
            {"error": {"message": "No connected db.", "type": "no_db_connection", "code": "400"}},
            "auth",
        ),
        (401, {"error": {"message": "x", "type": "auth_error", "code": "401"}}, "auth"),
        (400, {"error": {"message": "x", "type": "key_model_access_denied"}}, "auth"),
        (500, {"error": {"message": "x", "type": "no_db_connection"}}, "server_error"),
        (
            500,
            {
                "error": {
                    "message": "litellm.APIConnectionError: TypesafeException - Cannot connect to"
                    " host REDACTED:44083 ssl:<ssl.SSLContext object>",
                    "type": "internal_server_error",
                    "code": "500",
                }
            },
            "unavailable",
        ),
        (500, {"error": {"message": "Connection refused by the model server"}}, "unavailable"),
        # Only the host's own words count: the same words quoted from the request do not.
        (500, {"error": {"message": "bad state: 'Cannot connect to host'"}}, "server_error"),
        (400, {"error": {"message": "litellm.APIConnectionError: x"}}, "unknown"),
    ],
)
def test_a_proxys_own_words_give_the_reason_where_they_say_it_plainly(
    status: int, body: object, reason: str
) -> None:
    assert failure_from_status(status, body, {}).reason == reason


def test_the_detail_quotes_the_server_briefly_and_keeps_the_hint() -> None:
    failure = failure_from_status(
        429,
        {"error": {"message": "Rate limit " + "x" * 500, "code": "rate_limit"}},
        {"Retry-After": "2"},
    )
    assert failure.detail.startswith("HTTP 429 (rate_limit): Rate limit xxx")
    assert len(failure.detail) < 260
    assert failure.retry_after == 2.0


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        pytest.param(EvaluatorError("no", reason="auth"), "auth", id="evaluator-error"),
        pytest.param(TimeoutError("slow"), "timeout", id="timeout"),
        pytest.param(ConnectionRefusedError("refused"), "unavailable", id="connection"),
        pytest.param(json.JSONDecodeError("Expecting value", "x", 0), "malformed", id="json"),
        pytest.param(ValueError("odd"), "unknown", id="other"),
    ],
)
def test_plain_exceptions_have_reasons(error: BaseException, reason: str) -> None:
    failure = failure_from_exception(error)
    assert failure.reason == reason
    assert failure.detail


def test_transport_errors_from_a_real_socket(loopback: LoopbackServer) -> None:
    httpx2 = pytest.importorskip("httpx2")
    loopback.script(Scripted(json={"a": "b" * 100}, cut_off=True), Scripted(json={}, delay=0.5))
    with pytest.raises(httpx2.HTTPError) as cut:
        httpx2.get(loopback.url + "/x")
    assert failure_from_exception(cut.value).reason == "malformed"
    with pytest.raises(httpx2.HTTPError) as slow:
        httpx2.get(loopback.url + "/x", timeout=0.1)
    assert failure_from_exception(slow.value).reason == "timeout"
    with socket.socket() as unused:  # a port that nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(httpx2.HTTPError) as refused:
        httpx2.get(f"http://127.0.0.1:{port}/x")
    assert failure_from_exception(refused.value).reason == "unavailable"


# --- Strict reading ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [-0.01, 1.01, math.nan, math.inf, True, "0.5", None, [0.5]], ids=repr
)
def test_a_probability_is_a_finite_number_in_0_1(value: object) -> None:
    with pytest.raises(Malformed, match="must be a finite number in \\[0, 1\\], got"):
        probability(value, "p")


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, 0.5])
def test_probabilities_at_and_within_the_bounds_are_read(value: float) -> None:
    assert probability(value, "p") == value


@pytest.mark.parametrize(
    ("pairs", "words"),
    [
        pytest.param([("a", 0.5)], 'no probability for "b"', id="missing"),
        pytest.param(
            [("a", 0.5), ("b", 0.5), ("c", 0.0)], 'names "c", which was not asked', id="extra"
        ),
        pytest.param([("a", 0.5), ("a", 0.5)], 'names "a" twice', id="twice"),
        pytest.param([("a", 0.5), ("b", 0.6)], "sums to 1.1, not 1", id="sum-high"),
        pytest.param([("a", 0.4), ("b", 0.5)], "sums to 0.9, not 1", id="sum-low"),
    ],
)
def test_a_distribution_covers_each_option_once_and_sums_to_1(
    pairs: list[tuple[str, Any]], words: str
) -> None:
    with pytest.raises(Malformed) as caught:
        distribution(pairs, ["a", "b"], "the probabilities")
    assert words in str(caught.value)


def test_a_rounded_distribution_is_accepted_in_option_order() -> None:
    thirds = [("c", 0.333), ("a", 0.333), ("b", 0.333)]
    assert distribution(thirds, ["a", "b", "c"], "p") == (("a", 0.333), ("b", 0.333), ("c", 0.333))


def test_a_boolean_is_not_a_level() -> None:
    with pytest.raises(Malformed, match="names true"):
        distribution([(0, 0.5), (True, 0.5)], range(2), "levels")


def test_ties_are_all_most_probable() -> None:
    assert most_probable((("a", 0.4), ("b", 0.4), ("c", 0.2))) == ["a", "b"]
    assert most_probable(((0, 0.1), (1, 0.45), (2, 0.45))) == [1, 2]


def test_a_rubric_level_is_the_most_probable_ties_to_the_worse() -> None:
    answer = read_rubric(0.7, [(2, 0.45), (1, 0.45), (0, 0.1)], 3, source="native")
    assert answer == RubricAnswer(1, 0.7)
    assert answer.distribution == ((0, 0.1), (1, 0.45), (2, 0.45))


def test_a_choice_must_be_most_probable() -> None:
    pairs = [("a", 0.6), ("b", 0.4)]
    assert read_choice("a", 0.6, pairs, ["a", "b"], source="native") == ChoiceAnswer("a", 0.6)
    with pytest.raises(Malformed, match=r'"b" \(p=0.4\) is not the most probable \(a: p=0.6\)'):
        read_choice("b", 0.6, pairs, ["a", "b"], source="native")
