"""SglangDecisionsEvaluator against a loopback host that speaks sglang's ``/v1/decisions`` by
sglang's own pydantic models, imported from the 0.5.23 wheel (tests/sglangproto.py).

Every request the adapter sends is validated by sglang's ``DecisionRequest`` (a request it
would refuse is answered as sglang answers it: 400), and every answer is built as sglang's
``DecisionResponse`` and dumped as its server dumps it (``model_dump(exclude_none=True)``).
The wheel is ``CHECKPROFILE_TEST_SGLANG_WHEEL``; without it these tests skip, saying why, and
with ``CI`` set they fail instead (``.ci/run`` downloads the wheel).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import sglangproto
from loopback import (
    LoopbackServer,
    Recorded,
    Scripted,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
)
from test_provider_boundary import MB, peak_memory

from checkprofile import (
    ChoiceAnswer,
    Failure,
    Outcome,
    RubricAnswer,
    YesNoAnswer,
    parse_check,
)
from checkprofile.adapters._spec import evaluator_from_spec
from checkprofile.adapters.sglang_decisions import (
    SglangDecisionsEvaluator,
    sglang_question,
    unsendable,
)
from checkprofile.human import JsonLinesRecorder, read_records, verdict_record
from support import SPEC_LEVELS, SPEC_ONE_OF, spec_full_form, unavailable

pytest.importorskip("httpx2")

MODEL = "Qwen/Qwen3-0.6B"
NO_WHEEL = (
    f"no sglang wheel: set {sglangproto.ENV} to the file"
    f" `pip download --no-deps sglang=={sglangproto.VERSION}` fetches (.ci/run does)"
)


@pytest.fixture(scope="module")
def protocol() -> Any:
    if not os.environ.get(sglangproto.ENV):
        unavailable(NO_WHEEL, "test the sglang dialect")
    return sglangproto.protocol()


#: How the scripted host answers one question: the probabilities, in its candidate order.
Answering = Callable[[Any], list[float]]


def confident(question: Any) -> list[float]:
    """0.9 on the first candidate (yes; the first option; the top level for a score)."""
    count = _count(question)
    rest = 0.1 / (count - 1)
    if question.type == "score":
        return [rest] * (count - 1) + [0.9]
    return [0.9] + [rest] * (count - 1)


def _count(question: Any) -> int:
    if question.type == "choice":
        return len(question.options)
    if question.type == "score":
        return len(question.levels)
    return 2


def _names(question: Any) -> list[str]:
    # sglang's candidate names (serving_decisions._decision_view).
    if question.type == "choice":
        return [option.name for option in question.options]
    if question.type == "score":
        return [str(level) for level in range(len(question.levels))]
    return ["yes", "no"]


def sglang_host(
    protocol: Any,
    answering: Answering = confident,
    *,
    overrides: Mapping[str, Any] | None = None,
) -> Callable[[Recorded], Scripted]:
    """A host that validates each request with sglang's ``DecisionRequest`` and answers with
    its ``DecisionResponse``, each answer built as sglang's ``_build_answer`` builds it: the
    choice is the most probable name, the score the expected level. ``overrides`` replaces the
    dumped answer of a question id (``None`` leaves it out)."""
    import pydantic

    def respond(request: Recorded) -> Scripted:
        try:
            parsed = protocol.DecisionRequest.model_validate(request.json)
        except pydantic.ValidationError as error:
            body = {
                "object": "error",
                "message": f"{error.error_count()} validation errors",
                "type": "Bad Request",
                "param": None,
                "code": 400,
            }
            return Scripted(status=400, json=body)
        answers = {}
        for question in parsed.questions:
            probabilities = answering(question)
            names = _names(question)
            value: dict[str, Any] = {}
            if question.type == "choice":
                value["choice"] = names[probabilities.index(max(probabilities))]
            elif question.type == "score":
                value["score"] = math.fsum(i * p for i, p in enumerate(probabilities))
            answers[question.id] = protocol.DecisionAnswer(
                type=question.type,
                probabilities=dict(zip(names, probabilities, strict=True)),
                label_mass=0.97,
                **value,
            )
        response = protocol.DecisionResponse(
            model=parsed.model,
            prompt_format_version=1,
            answers=answers,
            usage=protocol.UsageInfo(prompt_tokens=321, total_tokens=321),
        )
        body = response.model_dump(exclude_none=True)
        for name, answer in (overrides or {}).items():
            if answer is None:
                body["answers"].pop(name, None)
            else:
                body["answers"][name] = answer
        return Scripted(json=body)

    return respond


def evaluator(server: LoopbackServer, **options: Any) -> SglangDecisionsEvaluator:
    options.setdefault("timeout", 5)
    return SglangDecisionsEvaluator(MODEL, base_url=f"{server.url}/v1", **options)


def run(server: LoopbackServer, check: Any = None, **options: Any) -> Outcome:
    spec = parse_check(check) if check is not None else None
    return run_example_check(evaluator(server, **options), spec)


# --- The request ---------------------------------------------------------------------------------


def test_the_request_is_sglangs_schema_with_the_material_as_data(
    loopback: LoopbackServer, protocol: Any
) -> None:
    loopback.default = sglang_host(protocol)
    run(loopback)
    assert loopback.count() == 1
    sent = loopback.last()
    assert (sent.method, sent.path) == ("POST", "/v1/decisions")
    parsed = protocol.DecisionRequest.model_validate(sent.json)  # sglang takes it as it is
    assert parsed.model == MODEL
    assert sent.json["questions"] == [
        {"id": "q0", "type": "yes_no", "question": spec_full_form()[0]["ask"]},
        {
            "id": "q1",
            "type": "choice",
            "question": "What does the summary do?",
            "options": [{"name": n, "description": d} for n, d in SPEC_ONE_OF.items()],
        },
        {
            "id": "q2",
            "type": "score",
            "question": "How complete is the screening?",
            "levels": list(SPEC_LEVELS),  # worst first: a level's index is its label
        },
    ]
    state = sent.json["input"]  # one JSON object, never text spliced into the questions
    assert state["submission"]["summary"] == "Acme GmbH is cleared on both lists."
    assert "Acme GmbH" not in str(sent.json["questions"])


def test_an_api_key_is_sent_as_a_bearer_token(loopback: LoopbackServer, protocol: Any) -> None:
    loopback.default = sglang_host(protocol)
    run(loopback, api_key="sk-local")
    assert loopback.last().headers["authorization"] == "Bearer sk-local"
    run(loopback)
    assert "authorization" not in loopback.last().headers


def test_the_largest_questions_sglang_takes_are_sent_and_read(
    loopback: LoopbackServer, protocol: Any
) -> None:
    loopback.default = sglang_host(protocol)
    names = {chr(ord("a") + i) * 3: f"option {i}" for i in range(26)}
    check = [
        {"ask": "Which?", "one_of": names, "pass": ["aaa"]},
        {"ask": "How good?", "levels": [f"level {i}" for i in range(10)], "pass": 9},
    ]
    outcome = run(loopback, check)
    assert outcome.failures == ()
    assert outcome.verdict.verdict == "pass"


# --- Reading the answers -------------------------------------------------------------------------


def test_sglang_answers_become_a_verdict_with_the_hosts_distribution(
    loopback: LoopbackServer, protocol: Any
) -> None:
    loopback.default = sglang_host(protocol)
    outcome = run(loopback)
    assert outcome.verdict.verdict == "pass"
    yes_no, choice, rubric = outcome.answers
    assert type(yes_no) is YesNoAnswer and yes_no.p == pytest.approx(0.9)
    assert type(choice) is ChoiceAnswer and choice.name == "states"
    assert choice.confidence == pytest.approx(0.9)
    assert [name for name, _ in choice.distribution or ()] == list(SPEC_ONE_OF)
    assert type(rubric) is RubricAnswer and rubric.level == 2
    assert rubric.confidence == pytest.approx(0.9)
    assert all(answer.source == "native" for answer in outcome.answers)


def test_the_reply_names_the_model_sent_which_sglang_echoes(
    loopback: LoopbackServer, protocol: Any
) -> None:
    loopback.default = sglang_host(protocol)
    outcome = run(loopback)
    assert outcome.verdict.model == MODEL
    # The name says nothing of which model answered, and each answer says so.
    assert all(answer.model_echoed for answer in outcome.answers)


def test_a_no_answer_is_read_as_a_low_yes_probability(
    loopback: LoopbackServer, protocol: Any
) -> None:
    def unlikely(question: Any) -> list[float]:
        return [0.2, 0.8] if question.type == "yes_no" else confident(question)

    loopback.default = sglang_host(protocol, unlikely)
    outcome = run(loopback, [spec_full_form()[0]])
    (answer,) = outcome.answers
    assert type(answer) is YesNoAnswer and answer.p == pytest.approx(0.2)
    assert outcome.verdict.verdict == "fail"


BAD_ANSWERS = [
    ({"type": "choice", "probabilities": {"yes": 0.9, "no": 0.1}, "label_mass": 1}, "got a"),
    ({"type": "yes_no", "probabilities": {"yes": 0.9}, "label_mass": 1}, "no probability"),
    ({"type": "yes_no", "probabilities": {"yes": 0.9, "no": 0.3}, "label_mass": 1}, "sums"),
    ({"type": "yes_no", "probabilities": [0.9, 0.1], "label_mass": 1}, "not a map"),
    ({"type": "yes_no", "probabilities": {"yes": "0.9", "no": 0.1}, "label_mass": 1}, "finite"),
    ("yes", "not a JSON object"),
    (None, "no yes_no answer"),
]


@pytest.mark.parametrize(("answer", "said"), BAD_ANSWERS)
def test_an_answer_that_does_not_fit_fails_its_own_question_only(
    loopback: LoopbackServer, protocol: Any, answer: Any, said: str
) -> None:
    loopback.default = sglang_host(protocol, overrides={"q0": answer})
    outcome = run(loopback)
    assert outcome.verdict.verdict == "error"
    ((ask, failure),) = outcome.failures
    assert ask == spec_full_form()[0]["ask"]
    assert failure.reason == "malformed" and said in failure.detail
    assert loopback.count() == 2  # the failed question alone is asked again
    assert [q["id"] for q in loopback.last().json["questions"]] == ["q0"]


def test_a_choice_that_is_not_the_most_probable_is_malformed(
    loopback: LoopbackServer, protocol: Any
) -> None:
    wrong = {
        "type": "choice",
        "choice": "hedges",
        "probabilities": {"states": 0.7, "hedges": 0.2, "unclear": 0.1},
        "label_mass": 0.9,
    }
    loopback.default = sglang_host(protocol, overrides={"q0": wrong})
    outcome = run(loopback, [spec_full_form()[1]])
    ((_, failure),) = outcome.failures
    assert failure.reason == "malformed" and "most" in failure.detail


def test_a_score_label_that_is_not_a_level_is_malformed(
    loopback: LoopbackServer, protocol: Any
) -> None:
    wrong = {
        "type": "score",
        "score": 1.0,
        "probabilities": {"0": 0.1, "1": 0.1, "x": 0.8},
        "label_mass": 0.9,
    }
    loopback.default = sglang_host(protocol, overrides={"q0": wrong})
    outcome = run(loopback, [spec_full_form()[2]])
    ((_, failure),) = outcome.failures
    assert failure.reason == "malformed" and '"x"' in failure.detail


@pytest.mark.parametrize(
    "body",
    [[], {"model": MODEL, "answers": []}, {"answers": {}}, {"model": "m" * 10_000, "answers": {}}],
    ids=["not-an-object", "answers-a-list", "no-model", "model-too-long"],
)
def test_a_response_that_is_not_sglangs_fails_every_question(
    loopback: LoopbackServer, body: Any
) -> None:
    loopback.default = Scripted(json=body)
    outcome = run(loopback)
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"malformed"}
    assert all("m" * 300 not in failure.detail for _, failure in outcome.failures)


# --- What sglang would refuse --------------------------------------------------------------------


REFUSED = [
    ({f"n{i}": f"option {i}" for i in range(27)}, "at most 26 options"),
    ({"Yes": "agree", "yes": "also agree"}, "repeats another"),
    ({"a\nb": "two lines", "c": "one line"}, "control character"),
]


@pytest.mark.parametrize(("one_of", "said"), REFUSED, ids=["27-options", "case", "newline"])
def test_a_choice_sglang_would_refuse_is_unsupported_and_not_sent(
    loopback: LoopbackServer, protocol: Any, one_of: dict[str, str], said: str
) -> None:
    import pydantic

    choice = {"ask": "Which?", "one_of": one_of, "pass": [next(iter(one_of))]}
    question = parse_check([choice])[0]
    # sglang's own model refuses that question: the local rule is sglang's rule.
    with pytest.raises(pydantic.ValidationError):
        protocol.DecisionRequest.model_validate(
            {"input": "x", "questions": [sglang_question(question, "q0")]}
        )
    assert said in (unsendable(question) or "")
    loopback.default = sglang_host(protocol)
    outcome = run(loopback, [spec_full_form()[0], choice])
    assert outcome.verdict.verdict == "error"
    ((ask, failure),) = outcome.failures
    assert ask == "Which?" and failure.reason == "unsupported" and said in failure.detail
    # The other question was asked, once, and answered.
    assert [q["id"] for r in loopback.requests for q in r.json["questions"]] == ["q0"]
    assert outcome.attempts == 1  # the yes/no question was answered; the choice is not re-asked


# --- Failures of the exchange --------------------------------------------------------------------


def test_sglangs_error_body_is_a_failure_of_every_question_without_an_echo(
    loopback: LoopbackServer,
) -> None:
    # sglang's ErrorResponse (serving_base.create_error_response), here its context refusal.
    message = "the prompt has 9000 tokens, which does not fit the context length of 8192 tokens"
    body = {"object": "error", "message": message, "type": "BadRequestError", "code": 400}
    loopback.default = Scripted(status=400, json=body)
    outcome = run(loopback)
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"tokens_exceeded"}
    assert all("POST /v1/decisions: HTTP 400" in f.detail for _, f in outcome.failures)


@pytest.mark.parametrize(
    ("status", "reason"),
    [(401, "auth"), (429, "rate_limited"), (500, "server_error"), (503, "unavailable")],
)
def test_http_failures_have_their_reasons(
    loopback: LoopbackServer, status: int, reason: str
) -> None:
    loopback.default = Scripted(status=status, json={"object": "error", "message": "no"})
    outcome = run(loopback)
    assert {failure.reason for _, failure in outcome.failures} == {reason}


def test_a_redirect_is_not_followed(loopback: LoopbackServer) -> None:
    with LoopbackServer() as elsewhere:
        elsewhere.default = Scripted(json={"model": MODEL, "answers": {}})
        target = f"{elsewhere.url}/v1/decisions?token=secret"
        loopback.default = Scripted(status=307, headers={"Location": target})
        outcome = run(loopback)
        assert elsewhere.count() == 0
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"redirected"}
    assert all("secret" not in failure.detail for _, failure in outcome.failures)


def test_a_host_that_does_not_answer_in_time_is_a_timeout(loopback: LoopbackServer) -> None:
    loopback.default = Scripted(json={}, delay=3)
    outcome = run(loopback, [spec_full_form()[0]], timeout=0.5)
    ((_, failure),) = outcome.failures
    assert failure.reason == "timeout"


def test_an_answer_dripped_a_byte_at_a_time_ends_within_the_timeout_and_a_second(
    loopback: LoopbackServer, protocol: Any
) -> None:
    host = sglang_host(protocol)

    def drip(request: Recorded) -> Scripted:
        return Scripted(json=host(request).json, drip=0.5)

    loopback.default = drip
    start = time.monotonic()
    outcome = run(loopback, timeout=2)
    # Two attempts (the profile's re-ask), each ended by its own deadline.
    assert time.monotonic() - start < 2 * (2 + 1)
    assert {failure.reason for _, failure in outcome.failures} == {"timeout"}


def test_a_body_that_never_ends_costs_at_most_the_cap(loopback: LoopbackServer) -> None:
    loopback.default = Scripted(endless=True)
    outcome, peak = peak_memory(lambda: run(loopback, timeout=30))
    assert peak < 100 * MB
    assert {failure.reason for _, failure in outcome.failures} == {"malformed"}
    assert all("max_response_bytes" in failure.detail for _, failure in outcome.failures)


def test_a_model_name_of_9_mb_never_loses_the_verdict_record(
    loopback: LoopbackServer, protocol: Any, tmp_path: Path
) -> None:
    host = sglang_host(protocol)

    def huge(request: Recorded) -> Scripted:
        return Scripted(json={**host(request).json, "model": "m" * (9 * 1000 * 1000)})

    loopback.default = huge
    outcome = run(loopback, max_response_bytes=32 * MB)
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"malformed"}
    assert outcome.verdict.model == MODEL
    trail = tmp_path / "audit.jsonl"
    JsonLinesRecorder(str(trail)).record(verdict_record(outcome, run_id="r-1", step_id="s-1"))
    (record,) = read_records(trail)
    assert record.verdict.verdict == "error"  # type: ignore[union-attr]


# --- Set-up --------------------------------------------------------------------------------------


@pytest.mark.parametrize("base_url", [None, "", "127.0.0.1:30000/v1", "ftp://host/v1"], ids=repr)
def test_a_base_url_is_required(base_url: Any) -> None:
    with pytest.raises(ValueError, match="base_url must be an sglang server's API root"):
        SglangDecisionsEvaluator(MODEL, base_url=base_url)


def test_the_spec_builds_it_from_the_environment(loopback: LoopbackServer, protocol: Any) -> None:
    loopback.default = sglang_host(protocol)
    environ = {"SGLANG_BASE_URL": f"{loopback.url}/v1"}
    built = evaluator_from_spec(f"sglang-decisions:{MODEL}", environ=environ)
    assert type(built) is SglangDecisionsEvaluator and built.model == MODEL
    outcome = run_example_check(built)
    assert outcome.verdict.verdict == "pass"
    with pytest.raises(ValueError, match="SGLANG_BASE_URL"):
        evaluator_from_spec(f"sglang-decisions:{MODEL}", environ={})


def test_a_failure_is_never_a_pass(loopback: LoopbackServer) -> None:
    loopback.default = Scripted(status=200, body=b"{not json")
    outcome = run(loopback)
    assert outcome.verdict.verdict == "error"
    assert all(type(f) is Failure for _, f in outcome.failures)


def test_the_usage_is_what_the_host_reported(protocol: Any, loopback: LoopbackServer) -> None:
    # sglang's own UsageInfo, as its server writes it: 321 prompt tokens.
    loopback.default = sglang_host(protocol)
    outcome = run(loopback)
    (call,) = outcome.calls
    assert call.usage is not None
    assert call.usage.input_tokens == 321
    assert call.usage.output_tokens in (0, None)  # sglang writes 0 or leaves it out
