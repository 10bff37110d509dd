"""Newer wire shapes, read or refused by one rule (design decision 19) in every adapter.

Hosts grow: Jev 1.14 added a fourth question type, ``box``; vLLM adds ``diagnostics`` and a
noul answer's ``probabilities``. The rule: a field the library does not read is ignored, at
any depth; an answer under a name the library never asked is ignored (it answers nothing the
check asked); an answer of a type the library never asked for, under a name it did ask, fails
that question alone as ``malformed`` (and it is asked once more), naming the type.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

from loopback import (
    LoopbackServer,
    Recorded,
    Scripted,
    decisions,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
    systemone,
)

from checkprofile import Evaluator, Outcome, parse_check
from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.sglang_decisions import SglangDecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from support import spec_full_form

#: A Jev 1.14 ``box`` answer (a region of an image), which the library never asks for.
BOX = {"type": "box", "box": [0.1, 0.2, 0.5, 0.6], "confidence": 0.9}


def sglang(overrides: dict[str, Any]) -> Callable[[Recorded], Scripted]:
    """An sglang host's valid answers (its map by id), with ``overrides``."""

    def respond(request: Recorded) -> Scripted:
        answers: dict[str, Any] = {}
        for question in request.json["questions"]:
            if question["type"] == "yes_no":
                answers[question["id"]] = {
                    "type": "yes_no",
                    "probabilities": {"yes": 0.95, "no": 0.05},
                }
            elif question["type"] == "choice":
                names = [option["name"] for option in question["options"]]
                rest = 0.2 / (len(names) - 1)
                answers[question["id"]] = {
                    "type": "choice",
                    "choice": names[0],
                    "probabilities": {n: 0.8 if i == 0 else rest for i, n in enumerate(names)},
                }
            else:
                count = len(question["levels"])
                rest = 0.3 / (count - 1)
                answers[question["id"]] = {
                    "type": "score",
                    "probabilities": {
                        str(i): 0.7 if i == count - 1 else rest for i in range(count)
                    },
                }
        answers.update(overrides)
        return Scripted(json={"model": "m", "answers": answers})

    return respond


def host(adapter: str, change: Callable[[Any, Any], None]) -> Callable[[Recorded], Scripted]:
    """The adapter's host answering every question validly, its body then changed
    (``change(body, request)``)."""
    base: Callable[[Recorded], Scripted]
    if adapter == "systemone":
        base = systemone()
    elif adapter == "decisions":
        base = decisions()
    else:
        base = sglang({})

    def respond(request: Recorded) -> Scripted:
        body = json.loads(base(request).payload())
        change(body, request.json)
        return Scripted(json=body)

    return respond


def evaluator(server: LoopbackServer, adapter: str) -> Evaluator:
    if adapter == "systemone":
        return SystemOneEvaluator("m", base_url=server.url, api_key="k", timeout=5)
    if adapter == "decisions":
        return DecisionsEvaluator("m", base_url=f"{server.url}/v1", api_key="k", timeout=5)
    return SglangDecisionsEvaluator("m", base_url=f"{server.url}/v1", timeout=5)


def run(server: LoopbackServer, adapter: str, change: Callable[[Any, Any], None]) -> Outcome:
    server.default = host(adapter, change)
    return run_example_check(evaluator(server, adapter), parse_check(spec_full_form()))


def unchanged(body: Any, request: Any) -> None:
    pass


ADAPTERS = ["systemone", "decisions", "sglang"]


def every_answer(body: Any) -> list[Any]:
    answers = body["answers"]
    return list(answers if isinstance(answers, list) else answers.values())


def put(body: Any, request: Any, ask: str, answer: Any) -> None:
    """``answer`` in place of the answer to the question asking ``ask`` (the request names
    its questions by their position in it: a question asked again has another name)."""
    questions = request["questions"]
    if isinstance(questions, dict):  # System One: a map by name
        (name,) = [n for n, q in questions.items() if q["instructions"] == ask]
        body["answers"][name] = answer
        return
    (index,) = [
        i for i, q in enumerate(questions) if q.get("instructions", q.get("question")) == ask
    ]
    name = questions[index].get("name", questions[index].get("id"))
    if isinstance(body["answers"], list):  # Decisions: a list in question order
        body["answers"][index] = {**answer, "name": name}
    else:  # sglang: a map by id
        body["answers"][name] = answer


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_fields_never_read_are_ignored_at_every_depth(
    loopback: LoopbackServer, adapter: str
) -> None:
    def more(body: Any, request: Any) -> None:
        body["diagnostics"] = {"q0": {"label_mass": 0.9}}
        body["object"] = "structured_decision"
        for answer in every_answer(body):
            answer["label_mass"] = 0.9
            answer["explanation"] = {"nested": [1, 2, 3]}

    outcome = run(loopback, adapter, more)
    assert outcome.failures == ()
    assert outcome.answers == run(loopback, adapter, unchanged).answers


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_answer_of_a_type_never_asked_fails_only_its_question(
    loopback: LoopbackServer, adapter: str
) -> None:
    ask = spec_full_form()[1]["ask"]
    outcome = run(loopback, adapter, lambda body, request: put(body, request, ask, BOX))
    assert outcome.verdict.verdict == "error"
    assert outcome.attempts == 2  # asked once more, as any answer that does not fit
    ((failed, failure),) = outcome.failures
    assert failed == ask
    assert failure.reason == "malformed"
    assert "box" in failure.detail
    # The other two questions kept their answers: only this one was asked again.
    assert len(loopback.last().json["questions"]) == 1


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_answer_to_a_question_never_asked_is_ignored(
    loopback: LoopbackServer, adapter: str
) -> None:
    def extra(body: Any, request: Any) -> None:
        answers = body["answers"]
        if isinstance(answers, list):
            answers.append({**BOX, "name": "region"})
        else:
            answers["region"] = BOX

    outcome = run(loopback, adapter, extra)
    assert outcome.failures == ()
    assert outcome.answers == run(loopback, adapter, unchanged).answers
