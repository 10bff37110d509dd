"""The mapping from SDK and HTTP errors to failure reasons, and the strict reading of numbers."""

from __future__ import annotations

import json
import math
import socket
import sys
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
from checkprofile.adapters._common import sendable
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
    read_yes_no,
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


# Found by mutation runs, each under its draw's seed (docs/mutation-results.md) --------------------


# found by a mutation draw (seed 27): a 400 or 422 naming the content filter was no refusal
@pytest.mark.parametrize(
    "body",
    [
        {"error": {"code": "content_filter", "message": "blocked"}},
        {"detail": "The request was refused by the safety system."},
        {"error": {"message": "Flagged by our content policy."}},
    ],
)
@pytest.mark.parametrize("status", [400, 422])
def test_a_400_or_422_naming_the_content_filter_is_a_refusal(status: int, body: Any) -> None:
    assert failure_from_status(status, body, {}).reason == "refusal"


def test_a_422_about_something_else_is_not_a_refusal() -> None:
    assert failure_from_status(422, {"detail": "questions: field required"}, {}).reason == (
        "unknown"
    )


# found by a mutation draw (seed 27): adapters/_errors (each mutant in the test's comment)
@pytest.mark.parametrize(
    ("detail", "said"),
    [
        ([{"msg": "a", "loc": ["body", "x"]}, {"msg": "b"}], "body.x: a; b"),
        ({"msg": "a", "loc": ["body", "x"]}, "body.x: a"),
        ([{"msg": "a", "loc": list("abcdefgh")}], "a.b.c.d.e.f.g.h: a"),
        ([{"msg": "a"}, {"msg": "b"}, {"msg": "c"}, {"msg": "d"}], "a; b; c; and 1 more"),
    ],
    ids=["every-item-said", "one-item-alone", "eight-places", "more-than-three"],
)
def test_a_structured_error_is_said_as_its_messages_and_where_they_point(
    detail: Any, said: str
) -> None:
    assert failure_from_status(422, {"detail": detail}, {}).detail == f"HTTP 422: {said}"


def test_a_long_error_message_is_cut_to_two_hundred_characters_and_marked() -> None:
    failure = failure_from_status(500, {"error": {"message": "x" * 1000}}, {})
    assert failure.detail == "HTTP 500: " + "x" * 199 + "…"


@pytest.mark.parametrize(("length", "cut"), [(300, False), (1000, True)])
def test_an_evaluator_errors_own_words_are_kept_up_to_four_hundred_characters(
    length: int, cut: bool
) -> None:
    failure = failure_from_exception(EvaluatorError("x" * length, reason="timeout"))
    assert failure.reason == "timeout"
    assert failure.detail.startswith("EvaluatorError: xxx")
    if cut:
        assert len(failure.detail) == 400 and failure.detail.endswith("…")
    else:
        assert failure.detail == "EvaluatorError: " + "x" * length


def test_with_the_typesafe_sdk_loaded_each_error_is_read_by_its_own_family() -> None:
    # The SDK's type check negated survived (the tests had not loaded the SDK): its errors
    # were left to the other readers, and every other error was read as the SDK's.
    sdk = pytest.importorskip("typesafe_sdk")
    assert failure_from_exception(sdk.TypeSafeAPITimeoutError(5.0)).reason == "timeout"
    assert failure_from_exception(TimeoutError("slow")).reason == "timeout"
    assert failure_from_exception(EvaluatorError("busy", reason="rate_limited")).reason == (
        "rate_limited"
    )


def test_the_time_a_retry_after_is_read_at_is_given_by_name() -> None:
    assert retry_after_seconds({"retry-after": "2"}, now=0.0) == 2.0
    with pytest.raises(TypeError, match="positional argument"):
        retry_after_seconds({"retry-after": "2"}, 0.0)  # type: ignore[call-arg]


# found by a mutation draw (seed 27): adapters/_read, how an answer is read and refused
def test_a_choice_named_as_sent_is_read_back_as_the_name_it_stands_for() -> None:
    # A name with a lone surrogate is sent escaped; a provider that names it so is answered
    # with the name itself.
    names = ["caf\ud800", "tea"]
    answer = read_choice(
        sendable(names[0]), 0.9, [(sendable(names[0]), 0.9), ("tea", 0.1)], names, source="native"
    )
    assert (answer.name, answer.confidence) == (names[0], 0.9)
    plain = read_choice("tea", 0.8, [("caf\ud800", 0.2), ("tea", 0.8)], names, source="native")
    assert plain.name == "tea"


@pytest.mark.parametrize("choice", ["coffee", 3, None])
def test_a_choice_that_is_not_an_answer_name_is_malformed(choice: object) -> None:
    with pytest.raises(Malformed, match="is not one of calm, angry"):
        read_choice(
            choice, 0.9, [("calm", 0.9), ("angry", 0.1)], ["calm", "angry"], source="native"
        )


def test_two_answer_names_sent_as_one_text_make_the_answer_ambiguous() -> None:
    # "caf\ud800" is sent escaped, as the six characters a name may also be spelled with.
    names = ["caf\ud800", "caf\\ud800"]
    assert sendable(names[0]) == sendable(names[1])
    with pytest.raises(Malformed, match="two answer names are the same text once sent"):
        read_choice(names[1], 0.9, [(names[1], 0.9), (names[0], 0.1)], names, source="native")


def test_a_choice_among_hundreds_of_names_is_read() -> None:
    # No cap on a choice's names: hundreds of them are read as a few are.
    names = [f"option-{index}" for index in range(300)]
    shares = [(name, 0.5 if index == 7 else 0.5 / 299) for index, name in enumerate(names)]
    answer = read_choice("option-7", 0.5, shares, names, source="native")
    assert (answer.name, answer.confidence) == ("option-7", 0.5)


@pytest.mark.parametrize("p", ["0.9", None, [0.9], {"p": 0.9}, True])
def test_a_probability_that_is_not_a_number_is_malformed_and_named(p: object) -> None:
    with pytest.raises(Malformed, match=r"the yes-probability must be a finite number in \[0, 1\]"):
        read_yes_no(p, source="native")


@pytest.mark.parametrize("p", [1.5, 1.0000001, -0.1, -1e-12])
def test_a_probability_outside_zero_to_one_is_malformed_and_named(p: float) -> None:
    with pytest.raises(Malformed, match=f"must be a finite number in \\[0, 1\\], got {p}"):
        read_yes_no(p, source="native")


@pytest.mark.parametrize("total", [0.5, 0.98, 1.02, 1.3])
def test_probabilities_that_do_not_sum_to_one_are_malformed(total: float) -> None:
    shares = [("calm", 0.4), ("angry", total - 0.4)]
    with pytest.raises(Malformed, match="the choice probabilities sums to"):
        read_choice("calm", 0.9, shares, ["calm", "angry"], source="native")
    with pytest.raises(Malformed, match="the level probabilities sums to"):
        read_rubric(0.9, [(0, 0.4), (1, total - 0.4)], 2, source="native")


def test_where_an_answer_comes_from_is_given_by_name() -> None:
    # The readers' source is keyword-only: a reader called with it in a wrong place fails.
    with pytest.raises(TypeError, match="positional argument"):
        read_yes_no(0.9, "native")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional argument"):
        read_choice("calm", 0.9, [("calm", 1.0)], ["calm"], "native")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional argument"):
        read_rubric(0.9, [(0, 1.0)], 1, "native")  # type: ignore[call-arg]


def test_probabilities_missing_options_name_the_first_missing() -> None:
    with pytest.raises(Malformed, match=r'the choice probabilities has no probability for "b"$'):
        read_choice("a", 0.9, [("a", 1.0)], ["a", "b", "c"], source="native")


def test_a_choice_not_the_most_probable_names_the_first_of_those_tied_above_it() -> None:
    # Tied within a billionth, the two most probable print apart at six digits: the message
    # gives the first one's.
    low, high = 0.1234565 - 2e-10, 0.1234565 + 2e-10
    rest = "cdefghi"
    shares = [("a", low), ("b", high), *((name, (1 - low - high) / len(rest)) for name in rest)]
    with pytest.raises(Malformed) as caught:
        read_choice("c", 0.9, shares, ["a", "b", *rest], source="native")
    assert str(caught.value).endswith("is not the most probable (a, b: p=0.123456)")


# found by a mutation draw (seed 2026): a detail list's messages after an item that is none
def test_a_structured_error_says_the_messages_after_an_item_that_is_none() -> None:
    # A host's detail list may hold an item that is no message; the messages after it are said.
    detail = ["not an item", {"msg": "field required", "loc": ["body", "questions"]}]
    said = failure_from_status(422, {"detail": detail}, {}).detail
    assert said.startswith("HTTP 422: body.questions: field required")


# found by a mutation draw (seed 2027): the openai SDK's timeout check negated
def test_with_the_openai_sdk_loaded_its_timeout_is_a_timeout_and_its_other_errors_are_not() -> None:
    # Found by a third mutation draw (seed 2027): the SDK's timeout check negated survived.
    import httpx2
    import openai

    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    assert failure_from_exception(openai.APITimeoutError(request)).reason == "timeout"
    refused = openai.APIConnectionError(message="refused", request=request)
    assert failure_from_exception(refused).reason == "unavailable"


# found by a mutation draw (seed 2028): an exception's words, and httpx beside httpx2
@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (RuntimeError("x" * 1000), "unknown"),
        (TimeoutError("x" * 1000), "timeout"),
        (ConnectionRefusedError("x" * 1000), "unavailable"),
    ],
    ids=["unknown", "timeout", "unavailable"],
)
def test_an_exceptions_own_words_are_kept_up_to_four_hundred_characters(
    error: BaseException, reason: str
) -> None:
    # `_DETAIL_CHARS * 2` -> `- 2` survived in naming an exception of no SDK's family.
    failure = failure_from_exception(error)
    assert failure.reason == reason
    assert len(failure.detail) == 400 and failure.detail.endswith("x…")
    kept = failure_from_exception(type(error)("y" * 300))
    assert kept.detail == f"{type(error).__name__}: " + "y" * 300


def _httpx_like() -> Any:
    """A module with httpx's error classes: a host may have httpx itself installed."""
    import types

    module = types.ModuleType("httpx")
    module.HTTPError = type("HTTPError", (Exception,), {})  # type: ignore[attr-defined]
    module.TimeoutException = type("TimeoutException", (module.HTTPError,), {})  # type: ignore[attr-defined]
    module.HTTPStatusError = type("HTTPStatusError", (module.HTTPError,), {})  # type: ignore[attr-defined]
    return module


def test_an_httpx_error_is_read_as_such_when_httpx2_is_loaded_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `continue` -> `break` survived: with httpx2 loaded, an httpx error was never looked at,
    # and a timeout of httpx's was "unknown".
    import httpx2

    httpx = _httpx_like()
    monkeypatch.setitem(sys.modules, "httpx", httpx)
    assert "httpx2" in sys.modules and not isinstance(httpx.TimeoutException(), httpx2.HTTPError)
    assert failure_from_exception(httpx.TimeoutException("slow")).reason == "timeout"
    assert failure_from_exception(httpx.HTTPError("refused")).reason == "unavailable"


# found by hunting in the usual modules (seed 4002): a long message, a chained error's reason
def test_a_servers_message_is_read_as_far_as_four_times_what_the_detail_keeps() -> None:
    # A message padded with whitespace (collapsed to one space) is quoted when its words
    # start within the first 800 characters, and not read further: a body's message may be
    # megabytes, and only what a detail of 200 characters can show is looked at.
    words = "Slow down"
    within = failure_from_status(500, {"error": {"message": " " * (800 - len(words)) + words}}, {})
    beyond = failure_from_status(500, {"error": {"message": " " * 800 + words}}, {})
    assert within.detail == f"HTTP 500: {words}"
    assert beyond.detail == "HTTP 500"


@pytest.mark.parametrize("how", ["cause", "context", "both"])
def test_an_evaluator_error_inside_an_sdks_error_keeps_its_reason_however_it_was_chained(
    how: str,
) -> None:
    # `__cause__ or __context__` -> `and` survived: an SDK that raises its connection error
    # inside its own `except` (a context, no cause) hid the boundary's reason.
    from checkprofile.adapters._transport import BoundaryError

    boundary = BoundaryError("a redirect to http://elsewhere", reason="redirected")
    raised = ConnectionError("Connection error.")
    # `raise ... from boundary` sets the cause; raising inside `except` sets the context.
    if how in ("cause", "both"):
        raised.__cause__ = boundary
    if how in ("context", "both"):
        raised.__context__ = boundary
    assert failure_from_exception(raised).reason == "redirected"
    assert failure_from_exception(ConnectionError("Connection error.")).reason == "unavailable"
