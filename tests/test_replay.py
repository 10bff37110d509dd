"""checkprofile.testing.replay_evaluator: recorded answers replayed, as ``replay:ANSWERS`` does."""

from __future__ import annotations

from typing import Any

import pytest

from checkprofile import (
    ChoiceAnswer,
    Failure,
    Limits,
    YesNoAnswer,
    parse_check,
    run_check_sync,
)
from checkprofile.testing import ReplayError, replay_evaluator
from support import AT, material

CLEARED = "Is the vendor cleared?"
SUMMARY = "What does the summary do?"
CHECK = parse_check(
    [
        {"ask": CLEARED},
        {
            "ask": SUMMARY,
            "one_of": {"states": "States it.", "hedges": "Hedges."},
            "pass": ["states"],
        },
    ]
)


def test_recorded_answers_are_given_for_each_attempt() -> None:
    replayed = replay_evaluator(
        {
            CLEARED: {"answer": 0.97},
            SUMMARY: [{"error": "timeout"}, {"answer": "states", "confidence": 0.9}],
        },
        check=CHECK,
    )
    assert replayed.model == "replay"
    outcome = run_check_sync(CHECK, material(), replayed, limits=Limits(), now=AT)
    assert (outcome.action, outcome.attempts) == ("complete", 2)
    assert outcome.answers == (
        YesNoAnswer(0.97, source="replayed"),
        ChoiceAnswer("states", 0.9, source="replayed"),
    )


def test_a_recorded_verdict_replays_as_it_is_under_its_model() -> None:
    first = replay_evaluator(
        {CLEARED: {"answer": 0.4}, SUMMARY: {"answer": "hedges", "confidence": 0.95}}, check=CHECK
    )
    verdict = run_check_sync(CHECK, material(), first, limits=Limits(), now=AT).verdict
    recorded: dict[str, Any] = {**verdict.to_json(), "model": "model-2026-10-01"}
    again = run_check_sync(
        CHECK, material(), replay_evaluator(recorded, check=CHECK), limits=Limits(), now=AT
    )
    assert again.verdict.to_json() == {**verdict.to_json(), "model": "model-2026-10-01"}


@pytest.mark.parametrize(
    ("answers", "path", "key", "text"),
    [
        pytest.param(
            {CLEARED: {"answer": 0.9}},
            (),
            False,
            f'no recorded answer for "{SUMMARY}"',
            id="a-question-unanswered",
        ),
        pytest.param(
            {
                CLEARED: {"answer": 0.9},
                SUMMARY: {"answer": "states", "confidence": 1},
                "Is it?": {},
            },
            ("Is it?",),
            True,
            '/Is it?: "Is it?" is not a question of this check',
            id="an-answer-for-no-question",
        ),
        pytest.param(
            {
                CLEARED: {"answer": 0.9, "confidence": 0.5},
                SUMMARY: {"answer": "states", "confidence": 1},
            },
            (CLEARED, "confidence"),
            True,
            f"/{CLEARED}/confidence: a yes/no answer has no confidence",
            id="a-yes-no-confidence",
        ),
        pytest.param(
            {CLEARED: {"error": "tired"}, SUMMARY: {"answer": "states", "confidence": 1}},
            (CLEARED, "error"),
            False,
            f'/{CLEARED}/error: "tired" is not a reason',
            id="an-unknown-reason",
        ),
        pytest.param(
            {CLEARED: [], SUMMARY: {"answer": "states", "confidence": 1}},
            (CLEARED,),
            False,
            f"/{CLEARED}: an empty list records no attempt",
            id="no-attempt",
        ),
        pytest.param(
            ["not", "a", "map"],
            (),
            False,
            "expected a map from each question's ask to its answer",
            id="not-a-map",
        ),
    ],
)
def test_answers_that_cannot_replay_are_refused_with_where(
    answers: Any, path: tuple[str, ...], key: bool, text: str
) -> None:
    with pytest.raises(ReplayError) as raised:
        replay_evaluator(answers, check=CHECK)
    assert (raised.value.path, raised.value.key) == (path, key)
    assert str(raised.value).startswith(text)
    assert isinstance(raised.value, ValueError)


def test_a_check_that_is_not_a_check_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="check must be a Check"):
        replay_evaluator({CLEARED: {"answer": 0.9}}, check=[{"ask": CLEARED}])  # type: ignore[arg-type]


def test_a_replayed_answer_that_does_not_fit_is_not_answered() -> None:
    replayed = replay_evaluator(
        {CLEARED: {"answer": 7}, SUMMARY: {"answer": "states", "confidence": 0.9}}, check=CHECK
    )
    outcome = run_check_sync(CHECK, material(), replayed, limits=Limits(), now=AT)
    assert outcome.verdict.verdict == "error"
    assert [type(failure) for _, failure in outcome.failures] == [Failure]


class _LyingStr(str):
    def __str__(self) -> str:
        raise AssertionError("the value's own code ran")


def test_answers_are_read_as_plain_data_without_running_their_own_code() -> None:
    replayed = replay_evaluator(
        {_LyingStr(CLEARED): {"answer": 0.97}, SUMMARY: {"answer": "states", "confidence": 0.9}},
        check=CHECK,
    )
    assert run_check_sync(CHECK, material(), replayed, limits=Limits(), now=AT).action == "complete"
    with pytest.raises(ReplayError) as raised:
        replay_evaluator({CLEARED: {"answer": float("nan")}}, check=CHECK)
    assert raised.value.path == (CLEARED, "answer")
    assert "not JSON data" in str(raised.value)


def test_replayed_verdicts_name_the_model_given() -> None:
    # Issue 40, item 6: without model= every replayed verdict said "replay".
    answers = {CLEARED: {"answer": 0.97}, SUMMARY: {"answer": "states", "confidence": 0.9}}
    replayed = replay_evaluator(answers, check=CHECK, model="model-2026-10-01")
    outcome = run_check_sync(CHECK, material(), replayed, limits=Limits(), now=AT)
    assert outcome.verdict.model == "model-2026-10-01"
    assert replay_evaluator(answers, check=CHECK).model == "replay"
    with pytest.raises(TypeError, match="model must be a string"):
        replay_evaluator(answers, check=CHECK, model=7)  # type: ignore[arg-type]
    for bad in ("", "  ", "m" * 1001):
        with pytest.raises(ValueError, match="model must be a non-blank text"):
            replay_evaluator(answers, check=CHECK, model=bad)
