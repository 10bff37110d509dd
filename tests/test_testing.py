"""checkprofile.testing: the evaluators users' test suites rely on."""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkprofile import (
    Bundle,
    Check,
    ChoiceAnswer,
    EvaluatorError,
    Failure,
    Limits,
    Material,
    Reply,
    YesNoAnswer,
    build_bundle,
    parse_check,
    run_check_sync,
)
from checkprofile.testing import RecordingEvaluator, ScriptedEvaluator, Step, assert_outcome
from checkprofile.testing.cassette import Cassette, CassetteError
from checkprofile.testing.strategies import answers_for, checks, materials
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


# --- assert_outcome ----------------------------------------------------------------------------


def failing_outcome() -> Any:
    scripted = ScriptedEvaluator(
        {"Is the report attached?": YesNoAnswer(0.2), "Tone?": ChoiceAnswer("calm", 0.9)},
        model="m-2026-10-01",
    )
    return run_check_sync(CHECK, material(), scripted, limits=Limits(), now=AT)


def test_assert_outcome_passes_on_what_the_outcome_holds() -> None:
    outcome = failing_outcome()
    assert_outcome(
        outcome,
        action="not_accepted",
        verdict="fail",
        issues=["check: Is the report attached? → no (0.2)"],
        results=["fail", "pass"],
        model="m-2026-10-01",
    )
    assert_outcome(outcome, results={"Tone?": "pass"})
    assert_outcome(outcome, issues=("check: Is the report attached? → no (0.2)",))


@pytest.mark.parametrize(
    "expected",
    [
        pytest.param({"action": "complete"}, id="action"),
        pytest.param({"verdict": "pass"}, id="verdict"),
        pytest.param({"issues": []}, id="issues"),
        pytest.param({"results": ["pass", "pass"]}, id="results"),
        pytest.param({"results": {"Is the report attached?": "pass"}}, id="result-by-ask"),
        pytest.param({"model": "m-2026-10-02"}, id="model"),
    ],
)
def test_assert_outcome_fails_on_any_difference(expected: dict[str, Any]) -> None:
    with pytest.raises(AssertionError):
        assert_outcome(failing_outcome(), **expected)


@pytest.mark.parametrize(
    ("expected", "error", "message"),
    [
        pytest.param({}, TypeError, "needs something to compare", id="nothing"),
        pytest.param({"action": "accepted"}, ValueError, "action must be one of", id="action"),
        pytest.param({"verdict": "ok"}, ValueError, "verdict must be one of", id="verdict"),
        pytest.param({"issues": "check: x"}, TypeError, "a list of issue lines", id="issues"),
        pytest.param(
            {"results": ["passed"]}, ValueError, "each result must be one of", id="result"
        ),
        pytest.param(
            {"results": {"Is the report there?": "pass"}},
            ValueError,
            'no question asks "Is the report there?"',
            id="unknown-ask",
        ),
        pytest.param({"model": 1}, TypeError, "model must be a string", id="model"),
    ],
)
def test_assert_outcome_refuses_an_expectation_that_could_never_hold(
    expected: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        assert_outcome(failing_outcome(), **expected)


def test_assert_outcome_takes_an_outcome() -> None:
    with pytest.raises(TypeError, match="takes an Outcome"):
        assert_outcome({"action": "complete"}, action="complete")  # type: ignore[arg-type]


# --- cassettes without pytest's plugin ---------------------------------------------------------

LIVE: dict[str, Step] = {
    "Is the report attached?": YesNoAnswer(0.97),
    "Tone?": ChoiceAnswer("calm", 0.9),
}


def record_into(path: Path, check: Check = CHECK) -> Any:
    cassette = Cassette(path, record=True)
    live = ScriptedEvaluator(LIVE, model="judge-2026-09-30")
    outcome = run_check_sync(check, material(), cassette.evaluator(live), limits=Limits(), now=AT)
    assert cassette.save()
    return outcome


def test_a_cassette_replays_what_it_recorded(tmp_path: Path) -> None:
    path = tmp_path / "screening.json"
    recorded = record_into(path)
    cassette = Cassette(path)
    assert len(cassette) == 1
    replayed = run_check_sync(CHECK, material(), cassette.evaluator(), limits=Limits(), now=AT)
    assert replayed.verdict == recorded.verdict
    assert replayed.verdict.model == "judge-2026-09-30"
    assert replayed.answers == recorded.answers
    assert [answer.source for answer in replayed.answers] == ["replayed", "replayed"]
    assert cassette.unused() == ()
    assert not cassette.save()  # a replay changes nothing, so writes nothing


def test_a_cassette_keys_a_choices_names_in_their_order(tmp_path: Path) -> None:
    # The model is shown "calm" then "angry": a check that lists them the other way round
    # asks another question, and is not answered from this recording.
    path = tmp_path / "screening.json"
    record_into(path)
    cassette = Cassette(path)  # read back: the file keeps the order its key was made from
    reordered = parse_check(
        [
            {"ask": "Is the report attached?"},
            {"ask": "Tone?", "one_of": {"angry": "Angry.", "calm": "Calm."}, "pass": ["calm"]},
        ]
    )
    assert reordered.to_json() == CHECK.to_json()  # equal as JSON: only the order differs
    with pytest.raises(pytest.fail.Exception) as failed:
        run_check_sync(reordered, material(), cassette.evaluator(), limits=Limits(), now=AT)
    # The nearest recording differs in the questions: the names' order, shown as a diff.
    assert "differs in: questions\n" in str(failed.value)


def test_a_cassette_miss_fails_the_test_with_what_changed(tmp_path: Path) -> None:
    path = tmp_path / "screening.json"
    record_into(path)
    cassette = Cassette(path)
    evaluator = cassette.evaluator()
    changed = material(instructions="Check the vendor against the UN list.")
    with pytest.raises(pytest.fail.Exception) as failed:
        run_check_sync(CHECK, changed, evaluator, limits=Limits(), now=AT)
    message = str(failed.value)
    assert "differs in: instructions\n" in message
    assert "-Check the vendor against the OFAC and EU lists.\n" in message
    assert "+Check the vendor against the UN list.\n" in message
    assert evaluator.misses == [message]


@given(checks(max_questions=3), materials(max_steps=3), st.data())
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
def test_a_cassette_reads_back_byte_for_byte(
    check: Check, shown: Material, data: st.DataObject
) -> None:
    # Whatever was shown and answered, the file reads back as it was written, and a replay
    # gives the same verdict the recording did.
    answers = data.draw(answers_for(check))
    live = ScriptedEvaluator(dict(zip(check.asks, answers, strict=True)), model="m-2026")
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "c.json"
        cassette = Cassette(path, record=True)
        recorded = run_check_sync(check, shown, cassette.evaluator(live), limits=Limits(), now=AT)
        cassette.save()
        text = path.read_text(encoding="utf-8")
        again = Cassette(path)
        assert again.text() == text
        replayed = run_check_sync(check, shown, again.evaluator(), limits=Limits(), now=AT)
    assert replayed.verdict == recorded.verdict
    assert replayed.answers == recorded.answers


def corrupt(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def entry(data: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = data["entries"][0]
    return found


@pytest.mark.parametrize(
    ("text", "change", "message"),
    [
        pytest.param("{", None, "1:2: not JSON: Expecting property name", id="not-json"),
        pytest.param('{"a": 1, "a": 2}', None, 'the key "a" appears twice', id="duplicate-key"),
        pytest.param("[]", None, "the file: a cassette is a JSON object", id="list"),
        pytest.param(
            None,
            lambda d: d.update(format="checkprofile-cassette-1"),
            'format: expected "checkprofile-cassette-2", got "checkprofile-cassette-1"',
            id="old-format",
        ),
        pytest.param(None, lambda d: d.update(extra=1), "extra: unknown key", id="unknown-key"),
        pytest.param(
            None,
            lambda d: entry(d).update(key="ABC"),
            "entries[0].key: a key is 64 lower-case hex digits",
            id="bad-key",
        ),
        pytest.param(
            None,
            lambda d: d["entries"].append(entry(d)),
            "entries[1].key: the key",
            id="same-key-twice",
        ),
        pytest.param(
            None,
            lambda d: entry(d)["questions"][1]["answer"].update(name="furious"),
            'entries[0].questions[1].answer: the answer does not fit its question: "furious"',
            id="unknown-name",
        ),
        pytest.param(
            None,
            lambda d: entry(d)["questions"][0]["answer"].update(p=float("nan")),
            "NaN is not a JSON number",
            id="nan",
        ),
        pytest.param(
            None,
            lambda d: entry(d)["questions"][0].update(failure={"reason": "tired"}),
            'entries[0].questions[0]: a recorded question has an "answer" or a "failure"',
            id="both",
        ),
        pytest.param(
            None,
            lambda d: entry(d)["questions"][0].update(pass_=1),
            "entries[0].questions[0].pass_: unknown key",
            id="question-key",
        ),
        pytest.param(
            None,
            lambda d: entry(d).update(model=None),
            "entries[0].model: answers need the model version that gave them",
            id="no-model",
        ),
        pytest.param(
            None,
            lambda d: entry(d)["shown"].update(body="text"),
            "entries[0].shown.body: expected a list of lines",
            id="shown",
        ),
    ],
)
def test_a_cassette_that_does_not_read_is_refused_with_where(
    tmp_path: Path, text: str | None, change: Any, message: str
) -> None:
    path = tmp_path / "screening.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    else:
        record_into(path)
        corrupt(path, change)
    before = path.read_bytes()
    with pytest.raises(CassetteError) as error:
        Cassette(path, record=True)
    assert str(error.value).startswith(f"{path}:")
    assert message in str(error.value)
    assert path.read_bytes() == before


def test_a_cassette_refuses_a_live_evaluator_it_cannot_use(tmp_path: Path) -> None:
    cassette = Cassette(tmp_path / "c.json", record=True)
    with pytest.raises(TypeError, match="live must be an evaluator or a function"):
        cassette.evaluator(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"live\(\) must return an evaluator"):
        cassette.evaluator(lambda: "judge")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="record must be true or false"):
        Cassette(tmp_path / "c.json", record="yes")  # type: ignore[arg-type]


def test_a_replaying_cassette_never_makes_the_live_evaluator(tmp_path: Path) -> None:
    def make() -> ScriptedEvaluator:
        raise AssertionError("the live evaluator was made during a replay")

    evaluator = Cassette(tmp_path / "c.json").evaluator(make)
    assert evaluator.live is None
