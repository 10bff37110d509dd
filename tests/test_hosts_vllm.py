"""Both decision adapters against vLLM 0.33's own protocol, offline (tests/vllmproto.py).

vLLM serves ``/v1/systemone`` (since 0.32) and an OpenAI-shaped ``/v1/decisions`` (0.33) from
a running engine, which needs a GPU. Here a loopback host answers as vLLM's route handlers
do, with vLLM's own code from its wheel: each request is validated by vLLM's pydantic request
model (a refusal is the 400 its validation handler writes), each question is turned into
options by vLLM's own question types, and each answer is built by vLLM's own answer code from
label probabilities chosen here, then dumped by its response model. What is not run is the
engine's read of the label probabilities from a model.

vLLM's ``/v1/decisions`` is OpenAI's schema but takes text input only: the Decisions adapter
speaks it with ``material_part="input_text"``, and its default ``input_json`` part is refused.
No dialect of its own is needed.

The wheel is ``CHECKPROFILE_TEST_VLLM_WHEEL`` (``.ci/run`` downloads it). Without it the tests
skip, saying why; with ``CI`` set they fail instead.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

import pydantic
import vllmproto
from loopback import (
    VENDOR_SUMMARY,
    LoopbackServer,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
)
from vllmproto import LABEL_MASS, SERVED, label_probabilities, vllm_decisions, vllm_systemone

from checkprofile import (
    ChoiceAnswer,
    Evaluator,
    Outcome,
    RubricAnswer,
    YesNoAnswer,
    parse_check,
)
from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from support import SPEC_LEVELS, SPEC_ONE_OF, spec_full_form, unavailable

YES_NO, CHOICE, RUBRIC = spec_full_form()

# Every test needs the wheel (the fixture skips, or fails on CI, without it).
pytestmark = pytest.mark.usefixtures("protocol")


@pytest.fixture(scope="module")
def protocol() -> Any:
    try:
        return vllmproto.protocol()
    except LookupError:
        unavailable(
            f"no vLLM wheel: set {vllmproto.ENV} to the file `pip download --no-deps"
            f" vllm=={vllmproto.VERSION}` fetches (.ci/run does)",
            "check the adapters against vLLM's own protocol",
        )


ROUTES = ["systemone", "decisions"]


def evaluator(server: LoopbackServer, route: str, **options: Any) -> Evaluator:
    if route == "systemone":
        server.default = vllm_systemone(vllmproto.protocol())
        return SystemOneEvaluator("qwen3", base_url=server.url, api_key="unused", timeout=5)
    server.default = vllm_decisions(vllmproto.protocol())
    options.setdefault("material_part", "input_text")
    return DecisionsEvaluator(
        "qwen3", base_url=f"{server.url}/v1", api_key="unused", timeout=5, **options
    )


def ask(server: LoopbackServer, route: str, check: Any = None, **options: Any) -> Outcome:
    spec = parse_check(check if check is not None else spec_full_form())
    return run_example_check(evaluator(server, route, **options), spec)


# --- The requests ------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_each_request_validates_against_vllms_request_model(
    loopback: LoopbackServer, protocol: Any, route: str
) -> None:
    outcome = ask(loopback, route)
    assert outcome.failures == (), outcome.failures
    sent = loopback.last().json
    if route == "systemone":
        parsed = protocol.systemone.StructuredDecisionRequest.model_validate(sent)
        assert [spec.type for spec in parsed.questions.values()] == ["noul", "choice", "score"]
        assert json.dumps(sent["state"]).count(VENDOR_SUMMARY) == 1  # the material as data
    else:
        parsed = protocol.decisions.DecisionRequest.model_validate(sent)
        assert [q.type for q in parsed.questions] == ["predicate", "choice", "score"]
        (message,) = parsed.input
        (part,) = message.content
        assert json.loads(part.text)["submission"]["summary"] == VENDOR_SUMMARY


def test_the_default_input_json_part_is_refused_by_vllm_without_quoting_it(
    loopback: LoopbackServer, protocol: Any
) -> None:
    outcome = ask(loopback, "decisions", material_part="input_json")
    assert outcome.verdict.verdict == "error"
    with pytest.raises(pydantic.ValidationError):
        protocol.decisions.DecisionRequest.model_validate(loopback.last().json)
    _, failure = outcome.failures[0]
    assert failure.reason == "unknown"
    # Its type "Bad Request" is not an identifier, and its message quotes the request after
    # the count: the detail keeps the count.
    assert failure.detail.endswith("HTTP 400: 5 validation errors")
    assert "Acme" not in failure.detail  # vLLM's message quotes the request's input


@pytest.mark.parametrize("route", ROUTES)
def test_a_choice_beyond_vllms_26_labels_is_refused_and_read_as_an_error(
    loopback: LoopbackServer, route: str
) -> None:
    names = {f"name{i:02d}": f"description {i}" for i in range(27)}
    outcome = ask(loopback, route, [{"ask": "Which one?", "one_of": names, "pass": ["name00"]}])
    assert outcome.verdict.verdict == "error"
    ((_, failure),) = outcome.failures
    assert failure.reason == "unknown"
    assert "HTTP 400 (BadRequestError)" in failure.detail


# --- Reading the answers -----------------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_vllms_answers_to_every_kind_are_read_exactly(loopback: LoopbackServer, route: str) -> None:
    outcome = ask(loopback, route)
    assert outcome.failures == ()
    assert outcome.verdict.model == SERVED
    yes_no, choice, rubric = outcome.answers
    two, three = label_probabilities(2), label_probabilities(3)
    assert type(yes_no) is YesNoAnswer
    # noul labels are (yes, no), its probability yes's; a predicate's are (false, true).
    assert yes_no.p == (two[0] if route == "systemone" else two[1])
    assert type(choice) is ChoiceAnswer and choice.name == list(SPEC_ONE_OF)[-1]
    assert choice.confidence == three[-1] * LABEL_MASS  # the chosen label's share of all
    assert choice.distribution == tuple(zip(SPEC_ONE_OF, three, strict=True))
    assert type(rubric) is RubricAnswer and rubric.level == len(SPEC_LEVELS) - 1
    assert rubric.confidence == three[-1] * LABEL_MASS
    assert rubric.distribution == tuple(enumerate(three))
    assert all(answer.source == "native" for answer in outcome.answers)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("question", [YES_NO, CHOICE, RUBRIC], ids=["yes_no", "choice", "rubric"])
def test_each_kind_alone_gets_a_verdict(
    loopback: LoopbackServer, route: str, question: dict[str, Any]
) -> None:
    outcome = ask(loopback, route, [question])
    assert outcome.failures == ()
    assert outcome.verdict.verdict in ("pass", "fail", "unsure")


def test_fields_the_library_does_not_read_are_ignored(loopback: LoopbackServer) -> None:
    # vLLM's System One answers carry more than the API documents (a noul answer's
    # probabilities and confidence) and the response its id, object, created and
    # diagnostics: decision 19 reads the fields it knows and ignores the rest.
    outcome = ask(loopback, "systemone")
    assert outcome.failures == ()
    served = json.loads(loopback.default(loopback.last()).payload())  # type: ignore[operator]
    assert {"id", "object", "created", "diagnostics"} <= set(served)
    assert {"probabilities", "confidence"} <= set(served["answers"]["q0"])


@pytest.mark.parametrize("route", ROUTES)
def test_usage_is_read_as_vllm_reports_it(loopback: LoopbackServer, route: str) -> None:
    (call,) = ask(loopback, route).calls
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.output_tokens) == (321, 3)
    assert call.usage.cached_tokens == (300 if route == "decisions" else None)
