"""SystemOneEvaluator against jev-compatible-server 0.1.1, run for real (tests/jevhost.py).

The host serves a tiny random-weight Llama made from a fixed seed through its Transformers
backend: every kind of question gets a real answer, computed by the host from the model's
logits, and the verdict is made from it. The same model, limited to ``noul`` by its
``decision.question_types``, answers the other kinds ``unsupported``.

The host's Python is ``CHECKPROFILE_TEST_JEV_PYTHON`` (a virtual environment with the host
installed: see tests/jevhost.py; ``.ci/run`` makes one). Without it the tests skip, saying
why; with ``CI`` set they fail instead, so a missing host cannot pass for a green run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")

import jevhost
from loopback import run_example_check

from checkprofile import ChoiceAnswer, Outcome, RubricAnswer, YesNoAnswer, parse_check
from checkprofile.adapters.systemone import SystemOneEvaluator
from support import (
    SPEC_ASK,
    SPEC_CHOICE_ASK,
    SPEC_LEVELS,
    SPEC_RUBRIC_ASK,
    spec_full_form,
    unavailable,
)

NO_HOST = (
    f"no jev-compatible-server: set {jevhost.ENV} to the Python of a virtual environment"
    " that has it (tests/jevhost.py says how; .ci/run makes one)"
)


@pytest.fixture(scope="module")
def host() -> Iterator[jevhost.JevHost]:
    python = os.environ.get(jevhost.ENV)
    if not python:
        unavailable(NO_HOST, "run the real-host tests")
    with jevhost.JevHost(python) as running:
        yield running


def ask(host: jevhost.JevHost, check: list[dict[str, Any]], model: str = jevhost.MODEL) -> Outcome:
    evaluator = SystemOneEvaluator(model, base_url=host.url, api_key="unused", timeout=30)
    return run_example_check(evaluator, parse_check(check))


YES_NO = spec_full_form()[0]
CHOICE = spec_full_form()[1]
RUBRIC = spec_full_form()[2]


@pytest.mark.parametrize(
    ("question", "kind"),
    [(YES_NO, YesNoAnswer), (CHOICE, ChoiceAnswer), (RUBRIC, RubricAnswer)],
    ids=["yes_no", "choice", "rubric"],
)
def test_each_kind_alone_gets_a_verdict_from_the_host(
    host: jevhost.JevHost, question: dict[str, Any], kind: type[Any]
) -> None:
    before = host.requests()
    outcome = ask(host, [question])
    assert outcome.verdict.verdict in ("pass", "fail", "unsure"), outcome.failures
    assert outcome.failures == ()
    assert outcome.verdict.model == jevhost.MODEL_NAME  # the host's name, not the alias asked
    (answer,) = outcome.answers
    assert type(answer) is kind
    assert answer.source == "native"
    assert host.served(before) == 1


def test_a_check_of_every_kind_gets_one_verdict_from_one_request(host: jevhost.JevHost) -> None:
    before = host.requests()
    outcome = ask(host, spec_full_form())
    assert outcome.verdict.verdict in ("pass", "fail", "unsure"), outcome.failures
    assert outcome.attempts == 1
    assert host.served(before) == 1
    yes_no, choice, rubric = outcome.answers
    assert type(yes_no) is YesNoAnswer and 0 < yes_no.p < 1
    assert type(choice) is ChoiceAnswer and choice.distribution is not None
    assert [name for name, _ in choice.distribution] == list(CHOICE["one_of"])
    # The host's choice is its most probable name, and its confidence that name's probability.
    assert choice.confidence == max(p for _, p in choice.distribution)
    assert dict(choice.distribution)[choice.name] == choice.confidence
    assert type(rubric) is RubricAnswer and rubric.distribution is not None
    assert [level for level, _ in rubric.distribution] == list(range(len(SPEC_LEVELS)))
    best = max(p for _, p in rubric.distribution)
    assert dict(rubric.distribution)[rubric.level] == best
    # Each question's verdict line names its own ask, in the check's order.
    asks = [result.ask for result in outcome.verdict.questions]
    assert asks == [SPEC_ASK, SPEC_CHOICE_ASK, SPEC_RUBRIC_ASK]


def test_the_hosts_zero_usage_reads_as_not_reported(host: jevhost.JevHost) -> None:
    # jev-compatible-server writes {"input_tokens": 0, "output_tokens": 0}: it measured
    # nothing, and a zero would read as a free call in a cost report.
    (call,) = ask(host, spec_full_form()).calls
    assert call.usage is None or (call.usage.input_tokens, call.usage.output_tokens) == (
        None,
        None,
    )
    assert call.seconds > 0


def test_the_fixed_seed_model_answers_the_same_twice(host: jevhost.JevHost) -> None:
    first = ask(host, spec_full_form())
    second = ask(host, spec_full_form())
    assert first.answers == second.answers
    assert first.verdict.questions == second.verdict.questions


def test_a_kind_the_model_cannot_answer_is_an_error_after_one_request(
    host: jevhost.JevHost,
) -> None:
    before = host.requests()
    outcome = ask(host, [YES_NO, CHOICE], model=jevhost.LIMITED)
    assert outcome.verdict.verdict == "error"
    assert outcome.attempts == 1  # asking again is certain to get the same answer
    assert host.served(before) == 1
    (failure,) = outcome.failures
    ask_text, reason = failure
    assert ask_text == SPEC_CHOICE_ASK
    assert reason.reason == "unsupported"
    assert "choice" in reason.detail and "noul" in reason.detail


def test_a_check_of_only_unanswerable_kinds_is_an_error_after_one_request(
    host: jevhost.JevHost,
) -> None:
    # With no question it can answer, the host answers every one unsupported without the model.
    before = host.requests()
    outcome = ask(host, [CHOICE, RUBRIC], model=jevhost.LIMITED)
    assert outcome.verdict.verdict == "error"
    assert host.served(before) == 1
    assert [failure.reason for _, failure in outcome.failures] == ["unsupported", "unsupported"]


def test_a_refused_request_is_an_error_that_does_not_echo_the_request(
    host: jevhost.JevHost,
) -> None:
    # The host takes at most 255 criteria and refuses more with a 422 that echoes the request.
    names = {f"name{i:03d}": f"secret description {i}" for i in range(256)}
    check = [{"ask": "Which one?", "one_of": names, "pass": ["name000"]}]
    outcome = ask(host, check)
    assert outcome.verdict.verdict == "error"
    (failure,) = outcome.failures
    _, reason = failure
    assert "secret description" not in reason.detail
    assert "name255" not in reason.detail
    assert "Acme GmbH" not in reason.detail  # nor the material
