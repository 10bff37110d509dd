"""Behaviour a mutation run found no test for in the adapters (issue 27): how a provider's
error is named, and how an answer is read from a chat completion's first-token logprobs."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest

from checkprofile import EvaluatorError, Failure, RubricAnswer, YesNoAnswer, parse_check
from checkprofile.adapters._common import sendable
from checkprofile.adapters._errors import (
    failure_from_exception,
    failure_from_status,
    retry_after_seconds,
)
from checkprofile.adapters._read import Malformed, read_choice, read_rubric, read_yes_no
from checkprofile.adapters.openai_chat import _chat_usage, labels_for, read_response

CHECK = parse_check(
    [
        {"ask": "Is it right?"},
        {"ask": "How many lists?", "levels": ["None.", "One.", "Both."], "pass": 2},
    ]
)
YES_NO, RUBRIC = CHECK


# adapters/_errors: a 422 naming the content filter (not read as `refusal` survived) ---------


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


# adapters/_errors, found by tools/mutation.py -------------------------------------------------


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


# adapters/openai_chat: reading the first token's logprobs -----------------------------------


def response(*pairs: tuple[str, float], logprobs: bool = False) -> dict[str, Any]:
    """A chat completion whose first token has ``pairs`` (token, probability or logprob)."""
    top = [{"token": t, "logprob": v if logprobs else math.log(v)} for t, v in pairs]
    return {
        "model": "judge-1",
        "choices": [
            {
                "finish_reason": "length",
                "message": {"role": "assistant", "content": top[0]["token"]},
                "logprobs": {"content": [{**top[0], "top_logprobs": top}]},
            }
        ],
    }


def read(question: Any, data: dict[str, Any], **kwargs: Any) -> Any:
    model, entry = read_response(data, question, **kwargs)
    assert model == "judge-1"
    return entry


def test_a_response_of_several_choices_is_read_from_the_first() -> None:
    # `choices[0]` -> `choices[-1]` survived: the first choice is the answer (n=1 asks one).
    data = response(("yes", 0.9), ("no", 0.1))
    data["choices"] += response(("no", 0.8), ("yes", 0.2))["choices"]
    entry = read(YES_NO, data)
    assert isinstance(entry, YesNoAnswer)
    assert entry.p == pytest.approx(0.9)


def test_labels_need_half_the_probability_unless_told_otherwise() -> None:
    # The default 0.5 -> -0.5 survived: a first token mostly outside the labels is no answer.
    entry = read(YES_NO, response(("yes", 0.2), ("no", 0.1), ("maybe", 0.7)))
    assert isinstance(entry, Failure) and "below min_label_mass" in entry.detail
    kept = read(YES_NO, response(("yes", 0.4), ("no", 0.1), ("maybe", 0.5)))
    assert isinstance(kept, YesNoAnswer) and kept.p == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("header", "named"), [([], ["chatcmpl-7"]), (["req-1"], ["req-1"])], ids=["none", "header"]
)
def test_a_chat_calls_request_id_is_the_completions_own_when_no_header_names_one(
    header: list[str], named: list[str]
) -> None:
    # `ids or [own]` -> `ids and [own]` survived.
    usage = _chat_usage(
        {"id": "chatcmpl-7", "usage": {"prompt_tokens": 10, "completion_tokens": 1}}, header
    )
    assert usage is not None
    assert list(usage.request_ids) == named
    assert (usage.input_tokens, usage.output_tokens) == (10, 1)


def test_labels_with_exactly_the_minimum_mass_are_read() -> None:
    # `mass < min_label_mass` -> `<=` survived: the minimum itself is enough.
    data = response(("yes", 0.3), ("no", 0.2))
    mass = math.exp(math.log(0.3)) + math.exp(math.log(0.2))
    entry = read(YES_NO, data, min_label_mass=mass)
    assert isinstance(entry, YesNoAnswer)
    assert entry.p == pytest.approx(0.6)
    below = read(YES_NO, data, min_label_mass=math.nextafter(mass, 1.0))
    assert isinstance(below, Failure) and "below min_label_mass" in below.detail


def test_unaccounted_probability_does_not_matter_when_every_label_is_listed() -> None:
    # The leftover check run even with no label missing survived: with yes and no both
    # listed, what other tokens took changes neither label's share.
    entry = read(YES_NO, response(("yes", 0.45), ("no", 0.15)))
    assert isinstance(entry, YesNoAnswer)
    assert entry.p == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("listed", "read_as_zero"),
    [(0.985, True), (0.975, False), (0.95, False)],
)
def test_a_missing_label_is_read_as_zero_only_within_two_hundredths(
    listed: float, read_as_zero: bool
) -> None:
    # The tolerance 0.02 -> 0.03 survived: "no" absent, yes listed at `listed`, the rest
    # unaccounted for. Up to 2% unaccounted, "no" is 0; more is a guess, never an answer.
    entry = read(YES_NO, response(("yes", listed)))
    if read_as_zero:
        assert isinstance(entry, YesNoAnswer)
        assert entry.p == pytest.approx(1.0)
    else:
        assert isinstance(entry, Failure) and entry.reason == "malformed"
        assert "too much to read as 0" in entry.detail


@pytest.mark.parametrize(
    ("tied", "level"),
    [((0, 2), 0), ((1, 2), 1), ((0, 1), 0), ((0, 1, 2), 0)],
)
def test_a_rubric_tie_goes_to_the_lowest_tied_level(tied: tuple[int, ...], level: int) -> None:
    # A tie going to the higher level survived: a coin flip must never raise the grade.
    labels = labels_for(RUBRIC)
    share = 1 / len(tied)
    entry = read(RUBRIC, response(*[(labels[i], share) for i in tied]))
    assert isinstance(entry, RubricAnswer)
    assert entry.level == level
    assert entry.confidence == pytest.approx(share)


@pytest.mark.parametrize(("logprob", "kept"), [(0.0, True), (5e-7, True), (1e-3, False)])
def test_a_logprob_above_zero_is_malformed_beyond_rounding(logprob: float, kept: bool) -> None:
    # The tolerance 1e-6 -> 1.0 survived: a logprob of 0.001 is a probability above 1.
    entry = read(YES_NO, response(("yes", logprob), ("no", -30.0), logprobs=True))
    if kept:
        assert isinstance(entry, YesNoAnswer)
    else:
        assert isinstance(entry, Failure)
        assert "is not <= 0" in entry.detail


def test_a_rubric_near_tie_is_answered_with_the_chosen_levels_own_probability() -> None:
    # Within the tie margin the lower level is chosen (read_rubric's rule), and the answer's
    # confidence is that level's probability, never the probability of the level passed over.
    labels = labels_for(RUBRIC)
    entry = read(RUBRIC, response((labels[2], 0.5 + 3e-10), (labels[0], 0.5 - 3e-10)))
    assert isinstance(entry, RubricAnswer)
    assert entry.level == 0
    assert entry.distribution is not None
    shares = dict(entry.distribution)
    assert shares[0] < shares[2]
    assert entry.confidence == shares[0]


# adapters/_read, found by tools/mutation.py ---------------------------------------------------


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


def test_a_short_refusal_is_quoted_whole_and_a_long_one_cut() -> None:
    data = response(("yes", 0.9))
    data["choices"][0]["message"]["refusal"] = "I cannot help with that."
    entry = read(YES_NO, data)
    assert entry == Failure("refusal", "the model refused: I cannot help with that.")
    data["choices"][0]["message"]["refusal"] = "no " * 500
    long = read(YES_NO, data)
    assert isinstance(long, Failure) and long.detail.endswith("…")
    assert len(long.detail) == len("the model refused: ") + 200


# found by a fresh-seed mutation run (tools/mutation.py --seed 2026) -----------------------------


def test_a_structured_error_says_the_messages_after_an_item_that_is_none() -> None:
    # A host's detail list may hold an item that is no message; the messages after it are said.
    detail = ["not an item", {"msg": "field required", "loc": ["body", "questions"]}]
    said = failure_from_status(422, {"detail": detail}, {}).detail
    assert said.startswith("HTTP 422: body.questions: field required")


def test_choice_names_that_differ_only_in_case_are_lettered_afresh() -> None:
    # "a" and "A" are two answers to the check but one to a model reading letters: they are
    # sent as A and B, so neither is mistaken for the other.
    [choice] = parse_check(
        [{"ask": "Which?", "one_of": {"a": "lower", "A": "upper"}, "pass": ["a"]}]
    ).questions
    assert labels_for(choice) == ("A", "B")
    [plain] = parse_check(
        [{"ask": "Which?", "one_of": {"a": "lower", "b": "other"}, "pass": ["a"]}]
    ).questions
    assert labels_for(plain) == ("a", "b")


def test_with_the_openai_sdk_loaded_its_timeout_is_a_timeout_and_its_other_errors_are_not() -> None:
    # Found by a third mutation draw (seed 2027): the SDK's timeout check negated survived.
    import httpx2
    import openai

    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    assert failure_from_exception(openai.APITimeoutError(request)).reason == "timeout"
    refused = openai.APIConnectionError(message="refused", request=request)
    assert failure_from_exception(refused).reason == "unavailable"


# found by a fourth mutation draw (seed 2028) ------------------------------------------------------


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


# found by a sixth mutation draw (seed 2030) -------------------------------------------------------

ESCAPED = ["`", "<", ">", "\x7f", "\u2028", "\u2029", *map(chr, range(0x80, 0xA0))]


@pytest.mark.parametrize("char", ESCAPED, ids=[f"U+{ord(c):04X}" for c in ESCAPED])
def test_each_character_a_prompt_must_not_hold_raw_is_sent_as_an_escape(char: str) -> None:
    # `range(0x80, 0xA0)` -> `range(129, 0xA0)` survived: U+0080 went into the prompt raw.
    import json

    from checkprofile import Material, Submission, build_bundle
    from checkprofile.adapters.openai_chat import _material_message_json, material_message

    value = f"a{char}b"
    bundle = build_bundle(
        parse_check("Is it right?"),
        Material(
            instructions="Check it.",
            body=value,
            run_data={"inputs": {}, "steps": {}},
            submission=Submission({"note": value}),
        ),
        state_bytes=65536,
    )
    message = material_message(bundle)
    line = message.split("\n")[2]  # the material, between the fence's lines
    assert char not in line
    assert f"\\u{ord(char):04x}" in line
    state = json.loads(line)
    assert state["submission"]["output"] == {"note": value}
    assert _material_message_json(bundle) == json.dumps(message, ensure_ascii=False)


# found by hunting in the usual modules (seed 4002) ----------------------------------------------


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
