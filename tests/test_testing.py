"""checkprofile.testing: the evaluators users' test suites rely on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from checkprofile import (
    Bundle,
    ChoiceAnswer,
    EvaluatorError,
    Failure,
    Limits,
    Reply,
    YesNoAnswer,
    build_bundle,
    parse_check,
    run_check_sync,
)
from checkprofile.testing import RecordingEvaluator, ScriptedEvaluator
from support import AT, material

CHECK = parse_check(
    [
        {"ask": "Is the report attached?"},
        {"ask": "Tone?", "one_of": {"calm": "Calm.", "angry": "Angry."}, "pass": ["calm"]},
    ]
)


def bundle(check: Any = CHECK) -> Bundle:
    return build_bundle(check, material(), state_bytes=1000)


def answer(evaluator: Any, check: Any = CHECK) -> Reply:
    reply: Reply = asyncio.run(evaluator.answer(bundle(check)))
    return reply


def test_answers_are_looked_up_by_ask_in_question_order() -> None:
    evaluator = ScriptedEvaluator(
        {"Tone?": ChoiceAnswer("calm", 0.9), "Is the report attached?": YesNoAnswer(0.97)},
        model="scripted-2",
    )
    reply = answer(evaluator)
    assert reply == Reply("scripted-2", [YesNoAnswer(0.97), ChoiceAnswer("calm", 0.9)])
    assert evaluator.model == "scripted-2"
    assert ScriptedEvaluator({}).model == "scripted"


def test_a_single_answer_is_given_every_time() -> None:
    evaluator = ScriptedEvaluator({"Is the report attached?": YesNoAnswer(0.5)})
    check = parse_check("Is the report attached?")
    assert answer(evaluator, check) == answer(evaluator, check)
    assert evaluator.asked("Is the report attached?") == 2


def test_a_list_is_consumed_one_per_ask_and_then_runs_out() -> None:
    check = parse_check("Is the report attached?")
    evaluator = ScriptedEvaluator(
        {"Is the report attached?": [TimeoutError("slow"), YesNoAnswer(0.9)]}
    )
    first, second, third = (answer(evaluator, check).answers[0] for _ in range(3))
    assert first == Failure("unknown", "TimeoutError: slow")
    assert second == YesNoAnswer(0.9)
    assert isinstance(third, Failure)
    assert "only 2 answers" in third.detail


def test_an_evaluator_error_keeps_its_reason() -> None:
    check = parse_check("Is the report attached?")
    evaluator = ScriptedEvaluator(
        {"Is the report attached?": EvaluatorError("too long", reason="tokens_exceeded")}
    )
    assert answer(evaluator, check).answers == (Failure("tokens_exceeded", "too long"),)


def test_a_forgotten_question_is_not_answered_and_says_what_is_scripted() -> None:
    evaluator = ScriptedEvaluator({"Tone?": ChoiceAnswer("calm", 0.9)})
    missing = answer(evaluator).answers[0]
    assert isinstance(missing, Failure)
    assert '"Is the report attached?"' in missing.detail
    assert '"Tone?"' in missing.detail
    # So it can never pass: the check errors.
    outcome = run_check_sync(CHECK, material(), evaluator, limits=Limits(), now=AT)
    assert outcome.verdict.verdict == "error"


@pytest.mark.parametrize(
    "script",
    [
        pytest.param({"q": 0.9}, id="bare-number"),
        pytest.param({"q": "yes"}, id="string"),
        pytest.param({"q": [YesNoAnswer(0.9), {"p": 1}]}, id="list-with-a-dict"),
        pytest.param([("q", YesNoAnswer(0.9))], id="not-a-map"),
    ],
)
def test_a_script_of_non_answers_is_refused_at_once(script: Any) -> None:
    with pytest.raises(TypeError):
        ScriptedEvaluator(script)


def test_calls_keeps_every_bundle_asked() -> None:
    evaluator = ScriptedEvaluator(
        {
            "Is the report attached?": YesNoAnswer(0.99),
            "Tone?": [ValueError(), ChoiceAnswer("calm", 1)],
        }
    )
    run_check_sync(CHECK, material(), evaluator, limits=Limits(), now=AT)
    assert [b.check.asks for b in evaluator.calls] == [CHECK.asks, ("Tone?",)]


def test_recording_evaluator_keeps_what_the_model_would_have_seen() -> None:
    inner = ScriptedEvaluator({"Is the report attached?": YesNoAnswer(0.99)}, model="inner-1")
    recorder = RecordingEvaluator(inner)
    check = parse_check("Is the report attached?")
    run_data = {"inputs": {"vendor": "ACME"}, "steps": {}}
    outcome = run_check_sync(check, material(run_data), recorder, limits=Limits(), now=AT)
    assert outcome.verdict.model == "inner-1"
    assert recorder.model == "inner-1"
    [seen] = recorder.bundles
    assert seen.run_data == run_data
    assert seen.instructions == material().instructions
    assert recorder.replies == [Reply("inner-1", [YesNoAnswer(0.99)])]


def test_recording_evaluator_records_a_raising_call_and_re_raises() -> None:
    class Broken:
        model = "broken"

        async def answer(self, bundle: Bundle) -> Reply:
            raise RuntimeError("down")

    recorder = RecordingEvaluator(Broken())
    with pytest.raises(RuntimeError, match="down"):
        answer(recorder)
    assert len(recorder.bundles) == 1
    assert recorder.replies == [None]
