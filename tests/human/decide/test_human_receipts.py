"""Receipts: what a person reads to decide, as JSON that waits in a queue and as plain text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from core2 import assert_shape
from hypothesis import given
from hypothesis import strategies as st
from test_docs import fenced_blocks, script_pairs
from test_human_records import (
    CHECK,
    FAILING,
    MODEL,
    RUN,
    STEP,
    UNSURE,
    make_outcome,
    outcome_of,
    round_trip,
)

from checkprofile import (
    Answer,
    Check,
    ChoiceAnswer,
    ChoiceQuestion,
    Failure,
    QuestionResult,
    RubricAnswer,
    RubricQuestion,
    Submission,
    YesNoAnswer,
    YesNoQuestion,
    build_bundle,
    canonical_json,
    combine,
    outcome_for,
)
from checkprofile.human import (
    SHOWN_PIECES,
    Receipt,
    ReceiptError,
    ShownPiece,
    bundle_bytes,
    bundle_sha256,
    distance_from_passing,
    drivers,
    receipt_for,
    shown_pieces,
)
from support import AT, SPEC_ASK, SPEC_CHOICE_ASK, SPEC_ONE_OF, SPEC_RUBRIC_ASK, material

PAGE = Path(__file__).resolve().parents[3] / "docs" / "human-side.md"


def unsure_receipt() -> Receipt:
    return receipt_for(outcome_of("unsure"), run_id=RUN, step_id=STEP)


# --- what a receipt holds ----------------------------------------------------------------------


def test_an_unsure_receipt_holds_each_question_with_answer_threshold_and_result() -> None:
    data = unsure_receipt().to_json()
    assert data["questions"] == [
        {
            "ask": SPEC_ASK,
            "result": "unsure",
            "answer": "no (0.62)",
            "threshold": "passes at 0.9 or more; fails below 0.5, else unsure",
            "distance": 0.9 - 0.62,
            "source": "scripted",
        },
        {
            "ask": SPEC_CHOICE_ASK,
            "result": "pass",
            "answer": "states (0.91)",
            "threshold": "passes: states; unsure: unclear; any other fails;"
            " unsure below confidence 0.8",
            "distance": 0.0,
            "source": "scripted",
        },
        {
            "ask": SPEC_RUBRIC_ASK,
            "result": "fail",
            "answer": "level 1: One list is covered. (0.9)",
            "threshold": "passes at level 2 (Both lists are covered with the search terms"
            " stated.) or above; unsure below confidence 0.8",
            "distance": 0.5,
            "source": "scripted",
        },
    ]
    assert data["drivers"] == [0]  # unsure drove the verdict; the fail did not
    assert data["verdict"]["verdict"] == "unsure"
    assert data["action"] == "escalate"
    assert data["candidate"] == {"output": {"cleared": True}, "summary": "done", "evidence": []}
    assert data["issues"] == [
        f"check: {SPEC_ASK} → no (0.62)",
        f"check: {SPEC_RUBRIC_ASK} → level 1: One list is covered. (0.9)",
    ]


def test_a_receipt_keeps_where_each_answer_came_from_and_its_distribution() -> None:
    # The distributions an adapter reads stay out of the verdict record (its shape is fixed),
    # but a person deciding sees how the model's probability was spread.
    script: dict[str, Answer | Failure] = {
        SPEC_ASK: YesNoAnswer(0.62, source="native"),
        SPEC_CHOICE_ASK: ChoiceAnswer(
            "states",
            0.91,
            source="logprobs",
            distribution=(("hedges", 0.06), ("states", 0.91), ("unclear", 0.03)),
        ),
        SPEC_RUBRIC_ASK: RubricAnswer(
            1, 0.9, source="native", distribution=((0, 0.02), (1, 0.9), (2, 0.08))
        ),
    }
    receipt = receipt_for(make_outcome(script), run_id=RUN, step_id=STEP)
    questions = receipt.to_json()["questions"]
    assert [q["source"] for q in questions] == ["native", "logprobs", "native"]
    assert "distribution" not in questions[0]  # p is the whole of a yes/no distribution
    assert questions[1]["distribution"] == [["states", 0.91], ["hedges", 0.06], ["unclear", 0.03]]
    assert questions[2]["distribution"] == [[1, 0.9], [2, 0.08], [0, 0.02]]
    assert "distribution" not in json.dumps(receipt.to_json()["verdict"])
    text = receipt.render_text()
    assert "the model's spread (logprobs): states 0.91, hedges 0.06, unclear 0.03" in text
    assert "the model's spread (native): level 1 0.9, level 2 0.08, level 0 0.02" in text
    assert Receipt.from_json(round_trip(receipt.to_json())) == receipt


@pytest.mark.parametrize(
    ("distribution", "message"),
    [
        pytest.param([["states", 0.5], ["hedges", 0.3]], "sums to 0.8", id="not-summing-to-1"),
        pytest.param([["hedges", 0.9], ["states", 0.1]], "not the most probable", id="not-top"),
        pytest.param([["maybe", 1.0]], "not an option", id="unknown-option"),
        pytest.param("states", r"\[option, p\] pairs", id="not-pairs"),
    ],
)
def test_a_receipt_whose_distribution_contradicts_its_answer_is_refused(
    distribution: Any, message: str
) -> None:
    data = unsure_receipt().to_json()
    data["questions"][1]["distribution"] = distribution
    with pytest.raises(ReceiptError, match=message):
        Receipt.from_json(data)


def test_the_receipt_shows_each_piece_the_evaluator_was_shown_with_its_size() -> None:
    outcome = outcome_of("unsure")
    assert outcome.bundle is not None
    receipt = receipt_for(outcome, run_id=RUN, step_id=STEP)
    pieces = shown_pieces(outcome.bundle)
    assert [piece.name for piece in receipt.shown] == list(SHOWN_PIECES)
    for piece in receipt.shown:
        assert piece.bytes == len(pieces[piece.name].encode("utf-8"))
    # The pieces are the canonical object's members: their sizes and the JSON punctuation
    # around them make up the whole.
    punctuation = 2 + (len(SHOWN_PIECES) - 1) + sum(len(f'"{n}":') for n in SHOWN_PIECES)
    assert receipt.shown_bytes == sum(p.bytes for p in receipt.shown) + punctuation
    assert receipt.shown_bytes == len(bundle_bytes(outcome.bundle))
    assert receipt.bundle_sha256 == bundle_sha256(outcome.bundle)


def test_the_canonical_bytes_of_a_bundle_are_the_canonical_json_of_what_was_shown() -> None:
    outcome = make_outcome(UNSURE, output={"name": "Zoë & Co", "lists": ["OFAC", "EU"]})
    bundle = outcome.bundle
    assert bundle is not None
    expected = {
        "instructions": bundle.instructions,
        "body": bundle.body,
        "questions": [
            {"ask": SPEC_ASK, "kind": "yes_no"},
            {"ask": SPEC_CHOICE_ASK, "kind": "choice", "one_of": SPEC_ONE_OF},
            {"ask": SPEC_RUBRIC_ASK, "kind": "rubric", "levels": list(CHECK[2].levels)},  # type: ignore[union-attr]
        ],
        "run_data": bundle.run_data,
        "dropped_steps": [],
        "dropped_fields": [],
        "submission": bundle.submission.to_json(),
    }
    assert bundle_bytes(bundle) == canonical_json(expected).encode("utf-8")
    # Thresholds are not shown to the evaluator, so they do not change the bytes.
    first = CHECK[0]
    assert isinstance(first, YesNoQuestion)
    stricter = Check([attrs.evolve(first, pass_at=0.99), CHECK[1], CHECK[2]])
    assert bundle_bytes(bundle.with_check(stricter)) == bundle_bytes(bundle)


def test_a_receipt_names_the_steps_and_fields_that_were_cut() -> None:
    run_data = {
        "inputs": {"vendor": "ACME"},
        "steps": {
            "intake": {"at": "2026-10-06T08:00:00Z", "output": {"text": "x" * 400}},
            "lookup": {"at": "2026-10-06T08:30:00Z", "output": {"text": "y" * 400}},
            "draft": {"at": "2026-10-06T09:00:00Z", "output": {"text": "z" * 100}},
        },
    }
    outcome = make_outcome(UNSURE, run_data=run_data, state_bytes=300)
    receipt = receipt_for(outcome, run_id=RUN, step_id=STEP)
    assert receipt.dropped_steps == ("intake", "lookup")
    assert receipt.verdict.truncated
    text = receipt.render_text()
    assert "cut: 2 steps left out, oldest first: intake, lookup" in text
    run_piece = next(p for p in receipt.shown if p.name == "run_data")
    assert run_piece.bytes <= 300


def test_an_error_receipt_says_what_was_not_answered() -> None:
    receipt = receipt_for(outcome_of("error"), run_id=RUN, step_id=STEP)
    assert receipt.failures == ((SPEC_ASK, "timeout", "no reply in 30s"),)
    # Every question drove an error verdict; none was answered (all equally far), so by ask.
    assert [CHECK[i].ask for i in receipt.drivers] == sorted(CHECK.asks)
    text = receipt.render_text()
    assert "Not answered by the evaluator" in text
    assert f"{SPEC_ASK}: timeout: no reply in 30s" in text
    assert "the agent gets retry" in text


def test_a_receipt_can_be_made_for_a_fail_on_request() -> None:
    receipt = receipt_for(make_outcome(FAILING), run_id=RUN, step_id=STEP)
    assert receipt.action == "not_accepted"
    assert receipt.drivers == (2,)
    assert "Refused (not_accepted)" in receipt.render_text()


def test_an_advisory_receipt_says_nothing_waits() -> None:
    receipt = receipt_for(outcome_of("unsure", advisory=True), run_id=RUN, step_id=STEP)
    lines = receipt.render_text().splitlines()
    assert lines[0].endswith("(advisory)")
    assert "nothing waits on you" in lines[2]


def test_a_receipt_needs_what_the_evaluator_was_shown() -> None:
    with pytest.raises(ValueError, match="what the evaluator was shown is unknown"):
        receipt_for(outcome_for(outcome_of("unsure").verdict), run_id=RUN, step_id=STEP)
    with pytest.raises(ValueError, match='step_id must be a non-blank string, got ""'):
        receipt_for(outcome_of("unsure"), run_id=RUN, step_id="")


# --- how far from passing, and the ranking -----------------------------------------------------

YES_NO = YesNoQuestion("q", 0.9, 0.5)
CHOICE = ChoiceQuestion("c", SPEC_ONE_OF.items(), ["states"], ["unclear"], 0.8)
RUBRIC = RubricQuestion("r", ["none", "one", "two", "all"], 3, 0.8)


def result(kind: str, answer: Any, result: str, confidence: float | None = None) -> QuestionResult:
    return QuestionResult(
        ask="x",
        kind=kind,  # type: ignore[arg-type]
        answer=answer,
        confidence=confidence,
        result=result,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("question", "record", "distance"),
    [
        pytest.param(YES_NO, result("yes_no", 0.95, "pass"), 0.0, id="yes-no-pass"),
        pytest.param(YES_NO, result("yes_no", 0.65, "unsure"), 0.9 - 0.65, id="yes-no-unsure"),
        pytest.param(YES_NO, result("yes_no", 0.0, "fail"), 0.9, id="yes-no-fail"),
        pytest.param(CHOICE, result("choice", "hedges", "fail", 0.9), 1.0, id="choice-other"),
        pytest.param(CHOICE, result("choice", "unclear", "unsure", 0.9), 1.0, id="choice-unsure"),
        pytest.param(
            CHOICE, result("choice", "states", "unsure", 0.5), 0.8 - 0.5, id="choice-low-conf"
        ),
        pytest.param(RUBRIC, result("rubric", 2, "fail", 0.9), 1 / 3, id="rubric-one-short"),
        pytest.param(RUBRIC, result("rubric", 0, "fail", 0.9), 1.0, id="rubric-worst"),
        pytest.param(RUBRIC, result("rubric", 3, "unsure", 0.7), 0.8 - 0.7, id="rubric-low-conf"),
        pytest.param(RUBRIC, result("rubric", 2, "unsure", 0.1), 0.7, id="rubric-both"),
        pytest.param(RUBRIC, result("rubric", None, "unsure"), 1.0, id="not-answered"),
    ],
)
def test_distance_from_passing(question: Any, record: QuestionResult, distance: float) -> None:
    assert distance_from_passing(question, record) == pytest.approx(distance)


answers_for_the_example = st.tuples(
    st.floats(0, 1).map(YesNoAnswer),
    st.builds(ChoiceAnswer, st.sampled_from(list(SPEC_ONE_OF)), st.floats(0, 1)),
    st.builds(RubricAnswer, st.integers(0, 2), st.floats(0, 1)),
)


@given(answers_for_the_example, st.permutations([0, 1, 2]))
def test_the_ranking_does_not_depend_on_the_order_of_the_questions(
    answers: tuple[Answer, Answer, Answer], order: list[int]
) -> None:
    def ranked(indexes: list[int]) -> list[str]:
        check = Check([CHECK[i] for i in indexes])
        verdict = combine(check, [answers[i] for i in indexes], model=MODEL, at=AT)
        return [check[i].ask for i in drivers(check, verdict)]

    assert ranked(order) == ranked([0, 1, 2])


@given(answers_for_the_example)
def test_the_drivers_are_the_questions_with_the_verdicts_result_furthest_first(
    answers: tuple[Answer, Answer, Answer],
) -> None:
    verdict = combine(CHECK, answers, model=MODEL, at=AT)
    ranked = drivers(CHECK, verdict)
    assert {verdict.questions[i].result for i in ranked} == {verdict.verdict}
    assert set(ranked) == {
        i for i, q in enumerate(verdict.questions) if q.result == verdict.verdict
    }
    far = [distance_from_passing(CHECK[i], verdict.questions[i]) for i in ranked]
    assert far == sorted(far, reverse=True)


# --- JSON --------------------------------------------------------------------------------------


@pytest.mark.parametrize("advisory", [False, True], ids=["blocking", "advisory"])
@pytest.mark.parametrize("verdict", ["pass", "fail", "unsure", "error"])
def test_a_receipts_candidate_is_core_2_s_candidate_whatever_the_verdict(
    verdict: str, advisory: bool
) -> None:
    receipt = receipt_for(outcome_of(verdict, advisory=advisory), run_id=RUN, step_id=STEP)
    data = round_trip(receipt.to_json())
    assert_shape("candidate", data["candidate"])
    assert_shape("step-record", {"check": data["verdict"], "history": []})


def test_a_receipt_survives_a_json_round_trip_exactly() -> None:
    receipt = unsure_receipt()
    data = round_trip(receipt.to_json())
    again = Receipt.from_json(data)
    assert again == receipt
    assert again.to_json() == data
    assert again.render_text() == receipt.render_text()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


@given(
    answers_for_the_example,
    st.dictionaries(st.text(), json_values, max_size=3),
    st.none() | st.text(),
    st.lists(
        st.fixed_dictionaries(
            {"kind": st.sampled_from(["file", "link"]), "ref": st.text(min_size=1)}
        ),
        max_size=2,
    ),
    st.none() | st.text(min_size=1),
    st.none() | st.text(),
    st.booleans(),
)
def test_every_receipt_survives_a_json_round_trip(
    answers: tuple[Answer, Answer, Answer],
    output: dict[str, Any],
    summary: str | None,
    evidence: list[dict[str, str]],
    next_: str | None,
    reason: str | None,
    advisory: bool,
) -> None:
    verdict = combine(CHECK, answers, model=MODEL, at=AT, advisory=advisory)
    submission = Submission(output, summary, evidence, next=next_, reason=reason)
    shown = attrs.evolve(material(), submission=submission)
    bundle = build_bundle(CHECK, shown, state_bytes=65536)
    receipt = receipt_for(outcome_for(verdict, bundle=bundle), run_id=RUN, step_id=STEP)
    data = json.loads(json.dumps(receipt.to_json()))
    again = Receipt.from_json(data)
    assert again == receipt
    assert again.to_json() == data
    # The candidate keeps the route, and is core-2's candidate shape.
    assert again.candidate == submission
    assert_shape("candidate", data["candidate"])


def _set(path: list[Any], value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(_set(["receipt"], 2), '"receipt" must be 1, got 2', id="format"),
        pytest.param(_set(["drivers"], [2]), "derived parts", id="drivers-changed"),
        pytest.param(_set(["questions", 0, "distance"], 0.1), "derived parts", id="distance"),
        pytest.param(_set(["issues"], []), "derived parts", id="issues"),
        pytest.param(_set(["verdict", "verdict"], "pass"), "not the worst", id="verdict"),
        pytest.param(_set(["check", 0, "pass"], 0.5), "grades", id="check-disagrees"),
        pytest.param(_set(["shown", 0], {"name": "x", "bytes": 1}), "shown items", id="shown"),
        pytest.param(_set(["candidate"], {"summary": "s"}), "output", id="candidate"),
        pytest.param(_set(["run"], 7), "run must be a string, got 7", id="run"),
        pytest.param(_set(["action"], "approve"), 'got "approve"', id="action"),
        pytest.param(_set(["shown_bytes"], "718"), 'got "718"', id="shown-bytes"),
        pytest.param(_set(["failures"], [{"ask": 1}]), "failures are", id="failures"),
    ],
)
def test_a_receipt_that_does_not_hold_together_is_refused(change: Any, message: str) -> None:
    data = round_trip(unsure_receipt().to_json())
    change(data)
    with pytest.raises(ReceiptError, match=message):
        Receipt.from_json(data)


@pytest.mark.parametrize("data", [None, [], "receipt", {"receipt": 1}], ids=repr)
def test_what_is_not_a_receipt_is_refused(data: object) -> None:
    with pytest.raises(ReceiptError, match="receipt"):
        Receipt.from_json(data)


# --- text --------------------------------------------------------------------------------------


def test_the_text_puts_what_to_decide_and_why_first() -> None:
    lines = unsure_receipt().render_text().splitlines()
    assert lines[0] == f"Check UNSURE on step {STEP} of run {RUN} (blocking)"
    assert lines[2].startswith("  Held for you. Decide: returned")
    drove = lines.index("What drove the verdict, furthest from passing first")
    assert lines[drove + 1] == f"  1.  unsure  {SPEC_ASK}"
    assert lines[drove + 2] == "              answer no (0.62), 0.28 from passing"


@given(answers_for_the_example, st.integers(40, 160))
def test_the_text_keeps_to_its_width_except_for_longer_words(
    answers: tuple[Answer, Answer, Answer], width: int
) -> None:
    verdict = combine(CHECK, answers, model=MODEL, at=AT)
    bundle = build_bundle(CHECK, material(), state_bytes=65536)
    receipt = receipt_for(outcome_for(verdict, bundle=bundle), run_id=RUN, step_id=STEP)
    for line in receipt.render_text(width=width).splitlines():
        assert len(line) <= width or len(line.split()) == 1, line


def test_a_long_output_is_cut_in_the_text_but_not_in_the_json() -> None:
    output = {f"field{n:02d}": n for n in range(60)}
    receipt = receipt_for(make_outcome(UNSURE, output=output), run_id=RUN, step_id=STEP)
    text = receipt.render_text()
    assert "… 22 more lines: see the receipt's JSON" in text
    assert receipt.to_json()["candidate"]["output"] == output


def test_shown_pieces_are_named_as_listed() -> None:
    assert [p.name for p in unsure_receipt().shown] == list(SHOWN_PIECES)
    assert ShownPiece("body", 3) == ShownPiece("body", 3)


# --- the docs show what the code renders -------------------------------------------------------


def test_the_human_side_page_shows_a_receipt_the_code_renders() -> None:
    # tests/test_docs.py runs every python/text pair of every page and compares the output;
    # this guards that docs/human-side.md keeps one that renders a receipt.
    text = PAGE.read_text(encoding="utf-8")
    pairs = script_pairs(text, fenced_blocks(text))
    rendering = [(script, shown) for script, shown in pairs if "render_text()" in script.body]
    assert rendering, "docs/human-side.md has no script that prints a rendered receipt"
    assert any("What drove the verdict" in shown.body for _, shown in rendering)
