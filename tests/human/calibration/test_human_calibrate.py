"""Calibration: the figures against a data set computed by hand, the too-few marking, the
records left out, the command line (in a subprocess and in process), the example records, and
the HTML report opened in a real headless Chromium. The example report that
docs/earning-trust.md shows is run by tests/test_docs.py."""

from __future__ import annotations

import base64
import html.parser
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from attrs import evolve
from browser import Browser, complaints, need_chromium, png_size
from hypothesis import example, given, settings
from hypothesis import strategies as st

from checkprofile import (
    Answer,
    Check,
    ChoiceAnswer,
    ModelCall,
    RubricAnswer,
    Submission,
    Usage,
    YesNoAnswer,
    combine,
    error_verdict,
    grade,
    outcome_for,
    parse_check,
)
from checkprofile.cli import main
from checkprofile.human import (
    CheckCalibration,
    Completed,
    Decision,
    Failed,
    JsonLinesRecorder,
    Returned,
    VerdictRecord,
    decision_record,
    read_records,
    verdict_record,
)
from checkprofile.human._audit._fast._reader import _Reader
from checkprofile.human._audit._recorders import record_line
from checkprofile.human._audit._sources import _lines
from checkprofile.human._calibration._calibrate import (
    GRID,
    Calibration,
    CallCost,
    Case,
    CheckCases,
    Figures,
    Person,
    Thresholds,
    TokenTotal,
    calibrate,
    calibrate_cases,
)
from checkprofile.human._calibration._report import calibration_html, calibration_text
from support import write_decision, write_verdict

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "advisory_records.jsonl"
AT = "2026-11-02T09:00:00Z"
LATER = "2026-11-02T15:30:00Z"
CSP = "default-src 'none'; style-src 'unsafe-inline'"

# --- the hand-computed data set ---------------------------------------------------------------
#
# One check, two questions:
#   Q1 yes/no  pass 0.9, fail 0.5
#   Q2 choice  states (passes) / hedges (fails), confidence 0.8
#
#  case  Q1 p   Q2 answer (conf)  the person's decision          person
#   1    0.95   states 0.90       completed with the candidate   accepted
#   2    0.92   states 0.85       completed with the candidate   accepted
#   3    0.91   states 0.70       completed with the candidate   accepted
#   4    0.85   states 0.95       completed with the candidate   accepted
#   5    0.70   hedges 0.90       completed with the candidate   accepted
#   6    0.60   states 0.90       returned                       refused
#   7    0.40   hedges 0.95       failed                         refused
#   8    0.30   hedges 0.60       completed with their own output refused
#   9    0.93   hedges 0.90       returned                       refused
#  10    0.10   hedges 0.85       failed                         refused
#
# Q1 at pass 0.9 / fail 0.5: pass 1,2,3,9; unsure 4,5,6; fail 7,8,10.
#   confusion (accepted/refused): pass 3/1, fail 0/3, unsure 2/1.
#   decided 7, agreed 3 + 3 = 6: agreement 6/7.
#   kappa: po = 6/7 = 42/49; pe = (4 passed * 3 accepted + 3 failed * 4 refused) / 7^2 = 24/49;
#   (42/49 - 24/49) / (1 - 24/49) = 18/25 = 0.72. To a person: 3 of 10.
# Q1 suggested at target 0.95 (min_cases 5): with 5 to 9 decided cases, 0.95 means no
#   disagreement. Case 9 (0.93, refused) can neither pass nor fail without dragging accepted
#   cases with it, so it must be unsure: pass >= 0.94, and the accepted 0.92, 0.91, 0.85, 0.70
#   must be unsure too: fail <= 0.70. Fewest unsure (5) when 0.95 still passes (pass <= 0.95)
#   and 0.60 fails (fail >= 0.61). Nearest to 0.9 / 0.5 of those: pass 0.94, fail 0.61.
#   confusion: pass 1/0, fail 0/4, unsure 4/1; agreement 5/5 = 1; kappa: pe = (1*1 + 4*4)/25
#   = 17/25, so (1 - 17/25) / (1 - 17/25) = 1. To a person: 5 of 10.
# Q2 at confidence 0.8: pass 1,2,4,6; fail 5,7,9,10; unsure 3 (0.70), 8 (0.60).
#   confusion: pass 3/1, fail 1/3, unsure 1/1; agreement 6/8 = 0.75;
#   kappa: pe = (4*4 + 4*4)/64 = 1/2, so (3/4 - 1/2) / (1 - 1/2) = 0.5. To a person: 2 of 10.
# Q2 suggested: cases 6 and 5 disagree at confidence 0.90; leaving them out (c >= 0.91) leaves
#   2 decided cases, too few. Of the thresholds with 5 or more decided cases, agreement is
#   8/10 for c <= 0.60, 7/9 up to 0.70, 6/8 up to 0.85, 4/6 up to 0.90: none reaches 0.95, so
#   the suggestion is the highest agreement, 0.8, nearest 0.8: confidence 0.6, target not met.
#   confusion: pass 4/1, fail 1/4, unsure 0/0; kappa: pe = (5*5 + 5*5)/100 = 1/2, so 0.6.
# The check (worst of the two) at current thresholds: pass 1,2; fail 7,9,10; unsure 3,4,5,6,8.
#   confusion: pass 2/0, fail 0/3, unsure 3/2; agreement 5/5; kappa 1. To a person: 5.
# The check with both suggestions: pass 1; fail 6,7,8,10; unsure 2,3,4,5,9.
#   confusion: pass 1/0, fail 0/4, unsure 4/1; agreement 1; kappa 1. To a person: 5.

HAND_CHECK = parse_check(
    [
        {"ask": "The report matches its receipts.", "pass": 0.9, "fail": 0.5},
        {
            "ask": "What does the summary do?",
            "one_of": {"states": "States the verdict.", "hedges": "Avoids a verdict."},
            "pass": ["states"],
            "confidence": 0.8,
        },
    ]
)
ACCEPT: Decision = Completed(by="pat", at=LATER)
RETURN: Decision = Returned(note="Two receipts are missing.", by="pat", at=LATER)
FAIL: Decision = Failed(note="Not an expense report.", by="sam", at=LATER)
OWN: Decision = Completed(by="sam", at=LATER, output={"fixed": True})
HAND: list[tuple[float, str, float, Decision]] = [
    (0.95, "states", 0.90, ACCEPT),
    (0.92, "states", 0.85, ACCEPT),
    (0.91, "states", 0.70, ACCEPT),
    (0.85, "states", 0.95, ACCEPT),
    (0.70, "hedges", 0.90, ACCEPT),
    (0.60, "states", 0.90, RETURN),
    (0.40, "hedges", 0.95, FAIL),
    (0.30, "hedges", 0.60, OWN),
    (0.93, "hedges", 0.90, RETURN),
    (0.10, "hedges", 0.85, FAIL),
]


def hand_answers(p: float, name: str, confidence: float) -> tuple[Answer, ...]:
    return (YesNoAnswer(p), ChoiceAnswer(name, confidence))


def record(
    path: Path,
    check: Check,
    answers: Sequence[Answer] | None,
    decision: Decision | None,
    *,
    run: str,
    step: str = "review",
    advisory: bool = True,
    model: str = "m",
    at: str = AT,
) -> None:
    """Append a verdict (an error verdict when ``answers`` is None) and, when given, the
    decision on the same submission, as a host would."""
    recorder = JsonLinesRecorder(path)
    submission = Submission({"report": run})
    verdict = (
        error_verdict(check, model=model, at=at, advisory=advisory)
        if answers is None
        else combine(check, answers, model=model, at=at, advisory=advisory)
    )
    recorder.record(
        verdict_record(outcome_for(verdict), run_id=run, step_id=step, submission=submission)
    )
    if decision is not None:
        recorder.record(decision_record(decision, run_id=run, step_id=step, submission=submission))


def decide(
    path: Path, decision: Decision, *, run: str, step: str = "review", at: str | None = None
) -> None:
    if at is not None:
        decision = evolve(decision, at=at)
    JsonLinesRecorder(path).record(
        decision_record(decision, run_id=run, step_id=step, submission=Submission({"report": run}))
    )


@pytest.fixture
def hand_records(tmp_path: Path) -> Path:
    path = tmp_path / "records.jsonl"
    for number, (p, name, confidence, decision) in enumerate(HAND, 1):
        record(path, HAND_CHECK, hand_answers(p, name, confidence), decision, run=f"run-{number}")
    return path


def confusion(figures: Figures | None) -> dict[str, dict[str, int]]:
    assert figures is not None
    return figures.confusion.to_json()


def matrix(pass_: tuple[int, int], fail: tuple[int, int], unsure: tuple[int, int]) -> Any:
    return {
        name: {"accepted": accepted, "refused": refused}
        for name, (accepted, refused) in (("pass", pass_), ("fail", fail), ("unsure", unsure))
    }


def hand_calibration(path: Path, *, min_cases: int = 5) -> Calibration:
    return calibrate(path, target=0.95, min_cases=min_cases)


# --- the figures ------------------------------------------------------------------------------


def test_each_question_at_its_current_thresholds(hand_records: Path) -> None:
    (check,) = hand_calibration(hand_records).checks
    q1, q2 = check.questions
    assert q1.current == Thresholds(pass_at=0.9, fail_below=0.5)
    assert confusion(q1.at_current) == matrix((3, 1), (0, 3), (2, 1))
    assert q1.at_current.agreement.value == pytest.approx(6 / 7)
    assert q1.at_current.agreement.cases == 7
    assert q1.at_current.kappa.value == pytest.approx(0.72)
    assert (q1.at_current.to_person, q1.at_current.to_person_share.value) == (3, 0.3)

    assert q2.current == Thresholds(confidence=0.8)
    assert confusion(q2.at_current) == matrix((3, 1), (1, 3), (1, 1))
    assert q2.at_current.agreement.value == 0.75
    assert q2.at_current.agreement.cases == 8
    assert q2.at_current.kappa.value == pytest.approx(0.5)
    assert q2.at_current.to_person == 2


def test_the_suggested_thresholds_are_the_hand_computed_ones(hand_records: Path) -> None:
    (check,) = hand_calibration(hand_records).checks
    q1, q2 = check.questions
    assert q1.suggested == Thresholds(pass_at=0.94, fail_below=0.61)
    assert confusion(q1.at_suggested) == matrix((1, 0), (0, 4), (4, 1))
    assert q1.at_suggested is not None
    assert (q1.at_suggested.agreement.value, q1.at_suggested.kappa.value) == (1.0, 1.0)
    # 5 of 5 reach 0.95, but not to trust: the Wilson interval of n of n starts at
    # n / (n + z**2) = 5 / 8.84 = 0.566, so the target is not met.
    assert q1.at_suggested.agreement.low == pytest.approx(5 / (5 + 1.959963984540054**2))
    assert not q1.meets_target
    assert q1.at_suggested.to_person == 5
    # Its curve: agreement against pass, from the suggested fail (0.61) up, fail held there;
    # the point at the suggested pass is the suggestion's figures.
    assert q1.curve_of == "pass"
    assert [point.threshold for point in q1.curve] == [p / 100 for p in range(61, 101)]
    at_suggested = next(point for point in q1.curve if point.threshold == 0.94)
    assert (at_suggested.agreement, at_suggested.decided, at_suggested.to_person) == (1.0, 5, 5)

    # No confidence reaches 0.95 on 5 or more decided cases: the best agreement, nearest 0.8.
    assert q2.suggested == Thresholds(confidence=0.6)
    assert not q2.meets_target
    assert confusion(q2.at_suggested) == matrix((4, 1), (1, 4), (0, 0))
    assert q2.at_suggested is not None
    assert q2.at_suggested.agreement.value == pytest.approx(0.8)
    assert q2.at_suggested.kappa.value == pytest.approx(0.6)


def test_the_whole_check_at_current_and_suggested_thresholds(hand_records: Path) -> None:
    (check,) = hand_calibration(hand_records).checks
    assert check.name == "review"
    assert confusion(check.at_current) == matrix((2, 0), (0, 3), (3, 2))
    assert (check.at_current.agreement.value, check.at_current.kappa.value) == (1.0, 1.0)
    assert check.at_current.to_person == 5
    assert confusion(check.at_suggested) == matrix((1, 0), (0, 4), (4, 1))
    assert check.at_suggested.to_person == 5


def test_a_rubric_keeps_its_confidence_when_that_is_already_best() -> None:
    # Level 1 passes, confidence 0.8. Below 0.70 every case is decided and case 4 (level 0,
    # accepted) disagrees: 3/4. From 0.71 to 0.75 case 4 alone joins: 2/3. From 0.76 to 0.90
    # cases 1 and 2 are decided and agree: 2/2, two to a person, the fewest that meet 0.95;
    # 0.8 is among them, so it stays.
    check = parse_check([{"ask": "How complete?", "levels": ["none", "some", "all"], "pass": 1}])
    people: list[tuple[RubricAnswer, Person]] = [
        (RubricAnswer(2, 0.9), "accepted"),
        (RubricAnswer(0, 0.9), "refused"),
        (RubricAnswer(1, 0.7), "accepted"),
        (RubricAnswer(0, 0.75), "accepted"),
    ]
    cases = tuple(
        Case(key=str(i), answers=(answer,), person=person)
        for i, (answer, person) in enumerate(people)
    )
    report = calibrate_cases([CheckCases(name="r", check=check, cases=cases)], min_cases=1)
    (question,) = report.checks[0].questions
    assert question.suggested == Thresholds(confidence=0.8)
    # 2 of 2 agree, but on two cases the Wilson interval starts at 2 / (2 + z**2) = 0.34.
    assert not question.meets_target
    assert question.at_suggested == question.at_current
    assert question.curve_of == "confidence"
    by_threshold = {point.threshold: point for point in question.curve}
    assert by_threshold[0.7].agreement == 0.75
    assert by_threshold[0.75].agreement == pytest.approx(2 / 3)
    assert (by_threshold[0.9].agreement, by_threshold[0.9].to_person) == (1.0, 2)
    assert by_threshold[0.91].agreement is None  # nothing decided: no agreement to speak of


def test_kappa_is_undefined_when_neither_side_ever_varied() -> None:
    check = parse_check("Fine?")
    cases = tuple(
        Case(key=str(i), answers=(YesNoAnswer(0.99),), person="accepted") for i in range(3)
    )
    report = calibrate_cases([CheckCases(name="s", check=check, cases=cases)], min_cases=1)
    figures = report.checks[0].at_current
    assert (figures.agreement.value, figures.kappa.value) == (1.0, None)


# --- too few cases ----------------------------------------------------------------------------


def test_figures_on_fewer_than_min_cases_are_marked_too_few(hand_records: Path) -> None:
    report = hand_calibration(hand_records, min_cases=30)  # the default
    assert report.min_cases == 30
    (check,) = report.checks
    q1 = check.questions[0]
    assert q1.too_few
    assert q1.at_current.agreement.too_few and q1.at_current.kappa.too_few
    assert q1.at_current.to_person_share.too_few
    # With too few cases behind every threshold, nothing meets the target.
    assert not any(q.meets_target for q in check.questions)
    text = calibration_text(report)
    assert "6/7" not in text and "0.857 (0.487-0.974) n=7*" in text
    assert "*: fewer than 30 cases behind the figure: too few to trust." in text
    as_json = report.to_json()
    assert as_json["checks"][0]["questions"][0]["at_current"]["agreement"] == {
        "value": pytest.approx(6 / 7),
        "cases": 7,
        "too_few": True,
        # The 95% Wilson interval of 6 of 7 (statsmodels' proportion_confint, method="wilson").
        "low": pytest.approx(0.48687, abs=1e-5),
        "high": pytest.approx(0.97432, abs=1e-5),
    }


def test_at_min_cases_a_figure_is_trusted(hand_records: Path) -> None:
    (check,) = hand_calibration(hand_records, min_cases=7).checks
    assert not check.questions[0].at_current.agreement.too_few  # 7 decided cases
    assert check.questions[0].at_current.to_person_share.too_few is False  # 10 cases
    assert check.at_current.agreement.too_few  # 5 decided cases


# --- joining the audit trail ------------------------------------------------------------------


WIDE_CHECK = parse_check(
    [
        {"ask": "Is the report signed?", "pass": 0.9},
        {"ask": "Does it cite its receipts?", "pass": 0.8, "fail": 0.3},
        {
            "ask": "How complete is it?",
            "levels": ["Not at all.", "Partly.", "Fully."],
            "pass": 2,
            "confidence": 0.7,
        },
    ]
)


def test_a_trail_read_a_few_submissions_at_a_time_gives_the_same_report(
    hand_records: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The join makes room for submissions a chunk at a time, and for more questions when a
    # check asks more than any before it: with room for two at a time (so it grows many
    # times, and widens after rows are filled), the report is the one made in one chunk.
    from checkprofile.human._calibration import _join as _calibrate_join

    for number in range(7):
        p, level = (0.95, 2) if number % 2 else (0.4, 0)
        answers = (YesNoAnswer(p), YesNoAnswer(1 - p), RubricAnswer(level, 0.9))
        decision = ACCEPT if number % 3 else RETURN
        record(hand_records, WIDE_CHECK, answers, decision, run=f"wide-{number}", step="sign")
    whole = calibrate(hand_records, min_cases=1).to_json()
    assert [check["name"] for check in whole["checks"]] == ["review", "sign"]
    monkeypatch.setattr(_calibrate_join, "_CHUNK", 2)
    assert calibrate(hand_records, min_cases=1).to_json() == whole


def test_records_left_out_are_counted_by_reason(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    yes = (YesNoAnswer(0.95), ChoiceAnswer("states", 0.9))
    record(path, HAND_CHECK, yes, ACCEPT, run="kept")
    record(path, HAND_CHECK, yes, RETURN, run="blocking", advisory=False)
    record(path, HAND_CHECK, None, ACCEPT, run="no-answer")
    record(path, HAND_CHECK, yes, None, run="waiting")
    decide(path, ACCEPT, run="never-checked")
    # A second decision on the same submission: the last one counts.
    decide(path, RETURN, run="kept")
    report = calibrate(read_records(path), min_cases=1)
    assert dict(report.skipped) == {
        "not_advisory": 1,
        "error": 1,
        "no_decision": 1,
        "no_verdict": 1,
        "superseded": 1,
    }
    (check,) = report.checks
    assert confusion(check.at_current) == matrix((0, 1), (0, 0), (0, 0))
    text = calibration_text(report)
    assert "Left out: blocking verdicts, which changed what people saw: 1." in text
    assert "Left out: decisions on submissions with no verdict: 1." in text


def test_a_step_whose_thresholds_changed_is_one_check_at_its_latest_thresholds(
    tmp_path: Path,
) -> None:
    path = tmp_path / "records.jsonl"
    stricter = parse_check([{**HAND_CHECK.to_json()[0], "pass": 0.95}, HAND_CHECK.to_json()[1]])
    answers = (YesNoAnswer(0.93), ChoiceAnswer("states", 0.9))
    record(path, HAND_CHECK, answers, ACCEPT, run="early")
    record(path, stricter, answers, ACCEPT, run="late")
    record(path, HAND_CHECK, answers, ACCEPT, run="other-step", step="sign_off")
    report = calibrate(read_records(path), min_cases=1)
    assert [(c.name, c.at_current.cases) for c in report.checks] == [
        ("review", 2),
        ("sign_off", 1),
    ]
    review = report.checks[0]
    assert review.questions[0].current == Thresholds(pass_at=0.95, fail_below=0.5)
    assert review.at_current.to_person == 2  # 0.93 is unsure under pass 0.95


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        # The earlier day's clock reads later; the earlier month's day too.
        ("2026-11-01T23:00:00Z", "2026-11-02T01:00:00Z"),
        ("2026-10-31T12:00:00Z", "2026-11-01T11:00:00Z"),
        ("2025-12-31T23:59:59Z", "2026-01-01T00:00:00Z"),
        # Within one second, by the fraction, read in either order.
        ("2026-11-02T09:00:00.2Z", "2026-11-02T09:00:00.5Z"),
        ("2026-11-02T09:00:00.05Z", "2026-11-02T09:00:00.5Z"),
    ],
)
@pytest.mark.parametrize("read", ["in-time-order", "latest-first"])
def test_the_latest_thresholds_and_the_first_check_are_found_by_the_whole_time(
    tmp_path: Path, earlier: str, later: str, read: str
) -> None:
    # A step whose thresholds changed is one check at the thresholds of its latest verdict,
    # and checks come in the order of their first verdict: by date, time and fraction, not
    # by the order read.
    path = tmp_path / "records.jsonl"
    stricter = parse_check([{**HAND_CHECK.to_json()[0], "pass": 0.95}, HAND_CHECK.to_json()[1]])
    answers = (YesNoAnswer(0.93), ChoiceAnswer("states", 0.9))
    writes = [
        (HAND_CHECK, "early", "review", earlier),
        (stricter, "late", "review", later),
        (HAND_CHECK, "first-sign-off", "sign_off", earlier),
        (HAND_CHECK, "second-sign-off", "sign_off", later),
    ]
    if read == "latest-first":
        writes.reverse()
    for check, run, step, at in writes:
        record(path, check, answers, ACCEPT, run=run, step=step, at=at)
    checks = {check.name: check for check in calibrate(path, min_cases=1).checks}
    review, sign_off = checks["review"], checks["sign_off"]
    assert review.questions[0].current == Thresholds(pass_at=0.95, fail_below=0.5)
    assert sign_off.questions[0].current == Thresholds(pass_at=0.9, fail_below=0.5)
    # A step whose first verdict is later comes after one whose first verdict is earlier.
    other = tmp_path / "ordered.jsonl"
    record(other, HAND_CHECK, answers, ACCEPT, run="b", step="b_step", at=later)
    record(other, HAND_CHECK, answers, ACCEPT, run="a", step="a_step", at=earlier)
    assert [c.name for c in calibrate(other, min_cases=1).checks] == ["a_step", "b_step"]


def test_checks_asking_different_things_on_one_step_are_numbered(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    record(path, parse_check("Is it right?"), (YesNoAnswer(0.9),), ACCEPT, run="a")
    record(path, parse_check("Is it complete?"), (YesNoAnswer(0.9),), ACCEPT, run="b")
    names = [check.name for check in calibrate(read_records(path)).checks]
    assert names == ["review (check 1)", "review (check 2)"]


def test_each_model_is_calibrated_on_its_own(tmp_path: Path) -> None:
    # Thresholds that suit one model need not suit the next: a new model starts afresh.
    path = tmp_path / "records.jsonl"
    check = parse_check("Is it right?")
    record(path, check, (YesNoAnswer(0.9),), ACCEPT, run="a", model="model-1")
    record(path, check, (YesNoAnswer(0.9),), RETURN, run="b", model="model-2")
    record(path, check, (YesNoAnswer(0.9),), ACCEPT, run="c", model="model-2")
    record(path, check, (YesNoAnswer(0.9),), ACCEPT, run="d", step="other", model="model-2")
    report = calibrate(read_records(path))
    assert [(c.name, c.at_current.cases) for c in report.checks] == [
        ("review (model model-1)", 1),
        ("review (model model-2)", 2),
        ("other", 1),
    ]


def test_no_case_yet_is_a_report_that_says_so(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    record(path, HAND_CHECK, (YesNoAnswer(0.95), ChoiceAnswer("states", 0.9)), None, run="a")
    report = calibrate(read_records(path))
    assert report.checks == ()
    assert "No case joins an advisory verdict to a person's decision yet." in calibration_text(
        report
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"target": 0}, "target must be a number above 0 and at most 1, got 0"),
        ({"target": 1.5}, "target must be a number above 0 and at most 1, got 1.5"),
        ({"target": True}, "target must be a number above 0 and at most 1, got true"),
        ({"min_cases": 0}, "min_cases must be a whole number of at least 1, got 0"),
    ],
    ids=["target-zero", "target-above-one", "target-bool", "min-cases-zero"],
)
def test_bad_options_are_refused_naming_the_value(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        calibrate((), **options)


def test_a_case_must_answer_every_question() -> None:
    with pytest.raises(ValueError, match=r'case "k" has 1 answers for the 2 questions of "s"'):
        CheckCases(
            name="s",
            check=HAND_CHECK,
            cases=(Case(key="k", answers=(YesNoAnswer(0.5),), person="accepted"),),
        )


def test_of_thresholds_whose_agreement_reaches_the_target_the_higher_agreement_wins() -> None:
    # None of these reaches 0.7 to trust (four cases: the interval starts near 0.51), so the
    # suggestion is among those whose agreement itself reaches it, the fewest to a person,
    # then the highest agreement: pass 0.79 agrees on all four, the current 0.9 on three
    # (the 0.79 accepted would fail). The nearer 0.9 does not win on nearness.
    check = parse_check([{"ask": "Fine?", "pass": 0.9}])
    people: list[tuple[float, Person]] = [
        (0.76, "refused"), (0.12, "refused"), (0.47, "refused"), (0.79, "accepted"),
    ]  # fmt: skip
    cases = tuple(
        Case(key=f"k{i}", answers=(YesNoAnswer(p),), person=who)
        for i, (p, who) in enumerate(people)
    )
    report = calibrate_cases(
        [CheckCases(name="s", check=check, cases=cases)], target=0.7, min_cases=1
    )
    (question,) = report.checks[0].questions
    assert question.suggested == Thresholds(pass_at=0.79)
    assert question.at_suggested is not None and question.at_suggested.agreement.value == 1.0
    assert not question.meets_target
    assert question.at_current.agreement.value == 0.75


def test_cases_of_a_check_of_300_questions_answered_in_full_are_taken() -> None:
    # Counts of 300 are two int objects: compared by identity, full answers were refused.
    check = parse_check([{"ask": f"Is part {i} right?", "pass": 0.9} for i in range(300)])
    answers = tuple(YesNoAnswer(0.95) for _ in range(300))
    cases = tuple(Case(key=f"k{i}", answers=answers, person="accepted") for i in range(2))
    assert CheckCases(name="s", check=check, cases=cases).cases == cases
    short = (Case(key="k0", answers=answers[1:], person="accepted"),)
    with pytest.raises(ValueError, match=r'case "k0" has 299 answers for the 300 questions'):
        CheckCases(name="s", check=check, cases=short)


@pytest.mark.parametrize(
    ("person", "shown"),
    [("unsure", '"unsure"'), ("Refused", '"Refused"'), (None, "null"), (1, "1"), (True, "true")],
)
def test_a_case_whose_person_neither_accepted_nor_refused_is_refused(
    person: object, shown: str
) -> None:
    # Each was counted as accepted: a host's "Refused" moved every figure the wrong way.
    with pytest.raises(ValueError, match=f'person is "accepted" or "refused", got {shown}$'):
        Case(key="k", answers=(YesNoAnswer(0.5),), person=person)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", [None, 7, b"sha256:00"])
def test_a_case_whose_key_is_no_text_is_refused(key: object) -> None:
    with pytest.raises(ValueError, match="a case's key is the submission key's text, got "):
        Case(key=key, answers=(YesNoAnswer(0.5),), person="accepted")  # type: ignore[arg-type]


@pytest.mark.parametrize("person", ["accepted", "refused"])
def test_cases_in_hand_count_each_persons_decision_as_given(person: Person) -> None:
    case = Case(key="k", answers=(YesNoAnswer(0.95), ChoiceAnswer("states", 0.9)), person=person)
    (check,) = calibrate_cases(
        [CheckCases(name="s", check=HAND_CHECK, cases=(case,))], min_cases=1
    ).checks
    assert check.at_current.confusion.to_json()["pass"][person] == 1


def test_the_report_is_plain_json(hand_records: Path) -> None:
    data = hand_calibration(hand_records).to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["target"] == 0.95 and data["min_cases"] == 5
    q1 = data["checks"][0]["questions"][0]
    assert q1["current"] == {"pass": 0.9, "fail": 0.5}
    assert q1["suggested"] == {"pass": 0.94, "fail": 0.61}
    assert data["checks"][0]["questions"][1]["suggested"] == {"confidence": 0.6}
    assert q1["at_current"]["confusion"] == matrix((3, 1), (0, 3), (2, 1))
    assert q1["curve_of"] == "pass" and len(q1["curve"]) == 101 - 61


# --- what the check's model calls cost -------------------------------------------------------


def costed(
    path: Path,
    run: str,
    calls: Sequence[ModelCall],
    answers: Sequence[Answer] | None,
    *,
    step: str = "review",
) -> None:
    """A verdict that keeps ``calls`` (an error verdict when ``answers`` is None), and the
    person's decision on it."""
    submission = Submission({"report": run})
    verdict = (
        error_verdict(HAND_CHECK, model="m", at=AT, advisory=True)
        if answers is None
        else combine(HAND_CHECK, answers, model="m", at=AT, advisory=True)
    )
    outcome = outcome_for(verdict, attempts=max(len(calls), 1), calls=tuple(calls))
    recorder = JsonLinesRecorder(path)
    recorder.record(verdict_record(outcome, run_id=run, step_id=step, submission=submission))
    recorder.record(decision_record(ACCEPT, run_id=run, step_id=step, submission=submission))


def test_the_report_sums_the_checks_calls_and_tokens_from_the_trail(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    yes = (YesNoAnswer(0.95), ChoiceAnswer("states", 0.9))
    full = Usage(input_tokens=1000, output_tokens=10, cached_tokens=800, request_ids=("r-1",))
    costed(path, "run-1", [ModelCall(seconds=1.5, questions=2, usage=full)], yes)
    # An error verdict cost its two attempts too: one reported input tokens only, one nothing.
    costed(
        path,
        "run-2",
        [
            ModelCall(seconds=2.0, questions=2, usage=Usage(input_tokens=500)),
            ModelCall(seconds=1.0, questions=2),
        ],
        None,
    )
    record(path, HAND_CHECK, yes, ACCEPT, run="run-3")  # written before calls were kept
    # Another step whose host reports no usage at all: not reported, never 0 tokens.
    costed(path, "run-4", [ModelCall(seconds=0.25, questions=2)], yes, step="other")
    copy = path.read_text().splitlines(keepends=True)[0]
    with path.open("a") as file:
        file.write(copy)  # a replica wrote run-1's verdict too: it cost its call once

    report = calibrate(path, min_cases=1)
    review, other = report.checks
    assert review.cost == CallCost(
        verdicts=3,
        without_calls=1,
        calls=3,
        seconds=4.5,
        input_tokens=TokenTotal(total=1500, not_reported=1),
        output_tokens=TokenTotal(total=10, not_reported=2),
        cached_tokens=TokenTotal(total=800, not_reported=2),
    )
    nothing = TokenTotal(total=0, not_reported=1)
    assert other.cost == CallCost(
        verdicts=1,
        calls=1,
        seconds=0.25,
        input_tokens=nothing,
        output_tokens=nothing,
        cached_tokens=nothing,
    )
    assert report.cost is not None and (report.cost.verdicts, report.cost.calls) == (4, 4)
    assert report.cost.input_tokens == TokenTotal(total=1500, not_reported=2)

    text = " ".join(calibration_text(report).split())
    assert (
        "Model calls: 3 model calls for 3 verdicts (1 verdict kept no calls): 4.5 s of model"
        " time; 1,500 input tokens (1 call not reported), 10 output tokens (2 calls not"
        " reported), 800 cached input tokens (2 calls not reported)."
    ) in text
    assert (
        "Model calls: 1 model call for 1 verdict: 0.2 s of model time; input tokens not"
        " reported, output tokens not reported, cached input tokens not reported."
    ) in text
    assert "Model calls, every verdict read: 4 model calls for 4 verdicts" in text
    data = json.loads(json.dumps(report.to_json()))
    assert data["checks"][0]["cost"] == {
        "verdicts": 3,
        "without_calls": 1,
        "calls": 3,
        "seconds": 4.5,
        "input_tokens": {"total": 1500, "not_reported": 1},
        "output_tokens": {"total": 10, "not_reported": 2},
        "cached_tokens": {"total": 800, "not_reported": 2},
    }
    assert data["cost"]["calls"] == 4
    page = calibration_html(report)
    assert "<p>Model calls: 3 model calls for 3 verdicts (1 verdict kept no calls)" in page


def test_a_trail_without_calls_says_nothing_of_them(hand_records: Path) -> None:
    report = hand_calibration(hand_records)
    assert report.cost is not None and report.cost.calls == 0
    assert report.cost.without_calls == report.cost.verdicts == len(HAND)
    assert "Model calls" not in calibration_text(report)


# --- the sweep is the core's grading ----------------------------------------------------------


def regraded(question_check: Check, thresholds: Thresholds, cases: Sequence[Case]) -> Counter[Any]:
    question = thresholds.apply(question_check[0])
    return Counter((grade(question, case.answers[0]), case.person) for case in cases)


@settings(max_examples=10, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1).map(lambda p: round(p, 3)), st.sampled_from(["accepted", "refused"])
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([0.5, 0.8, 0.95]),
)
# Four of four agree: their Wilson interval starts above 0.5, the corrected bound does not.
@example([(0.0, "accepted")] * 4, 0.5)
def test_the_suggestion_is_the_best_of_every_threshold_graded_directly(
    rows: list[tuple[float, Person]], target: float
) -> None:
    check = parse_check([{"ask": "Right?", "pass": 0.9, "fail": 0.5}])
    cases = tuple(
        Case(key=str(i), answers=(YesNoAnswer(p),), person=person)
        for i, (p, person) in enumerate(rows)
    )
    report = calibrate_cases(
        [CheckCases(name="s", check=check, cases=cases)], target=target, min_cases=1
    )
    (question,) = report.checks[0].questions
    assert question.suggested is not None and question.at_suggested is not None
    counts = regraded(check, question.suggested, cases)
    assert question.at_suggested.confusion.to_json() == {
        r: {p: counts[(r, p)] for p in ("accepted", "refused")} for r in ("pass", "fail", "unsure")
    }
    # No thresholds on the grid, graded one by one, meet the target with fewer to a person:
    # first among those that meet it to trust (the exact chance of so many agreements at an
    # agreement of only the target is at most 5% over the 5,151 thresholds searched), then,
    # when none do, among those whose agreement alone reaches it.
    best: dict[bool, int] = {}
    for p in GRID:
        for fail in (None, *(f for f in GRID if f <= p)):
            counts = regraded(check, Thresholds(pass_at=p, fail_below=fail), cases)
            decided = sum(n for (result, _), n in counts.items() if result != "unsure")
            agreed = counts[("pass", "accepted")] + counts[("fail", "refused")]
            if decided and agreed / decided >= target:
                tail = sum(
                    math.comb(decided, k) * target**k * (1 - target) ** (decided - k)
                    for k in range(agreed, decided + 1)
                )
                trusted = tail <= 0.05 / 5151
                unsure = len(cases) - decided
                for tier in {trusted, False}:
                    best[tier] = min(best.get(tier, unsure), unsure)
    assert question.meets_target == (True in best)
    if best:
        assert question.at_suggested.to_person == best.get(True, best[False])
        assert question.at_suggested.agreement.value is not None
        assert question.at_suggested.agreement.value >= target


# --- many replicas ----------------------------------------------------------------------------


def figures(report: Calibration) -> dict[str, Any]:
    """What a report says about the people and the model (not where it read it)."""
    data = report.to_json()
    return {key: data[key] for key in ("target", "min_cases", "checks", "skipped")}


def split(source: Path, folder: Path, *, replicas: int = 3) -> list[Path]:
    """The lines of ``source`` dealt to ``replicas`` files, verdicts and their decisions
    mostly apart: one replica ran the check, another took the decision."""
    folder.mkdir()
    files = [folder / f"replica-{r}.jsonl" for r in range(replicas)]
    for number, line in enumerate(source.read_bytes().splitlines(keepends=True)):
        with files[(number * 7) % replicas].open("ab") as out:
            out.write(line)
    return files


def test_replicas_files_are_one_trail(hand_records: Path, tmp_path: Path) -> None:
    files = split(hand_records, tmp_path / "replicas")
    (tmp_path / "replicas" / "README.txt").write_text("not records")  # only *.jsonl are read
    one = hand_calibration(hand_records)
    for sources in ([*files], [tmp_path / "replicas"], [files[2], tmp_path / "replicas"]):
        report = calibrate(*sources, target=0.95, min_cases=5)
        assert figures(report) == figures(one)
        assert report.sources == tuple(map(str, files)) or report.sources == tuple(
            str(f) for f in (files[2], files[0], files[1])
        )
        assert report.duplicates == 0  # a file named twice is read once


def test_a_record_two_replicas_wrote_counts_once(hand_records: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.jsonl"
    lines = hand_records.read_bytes().splitlines(keepends=True)
    again.write_bytes(b"".join(lines[::2]))  # every verdict, a second time
    report = calibrate(hand_records, again, target=0.95, min_cases=5)
    assert figures(report) == figures(hand_calibration(hand_records))
    assert report.duplicates == len(lines[::2])
    assert f"Read twice, counted once: {len(lines[::2])} records." in calibration_text(report)


def test_the_latest_record_wins_whichever_replica_holds_it(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    check = parse_check("Is it right?")
    record(a, check, (YesNoAnswer(0.95),), None, run="r")
    decide(a, ACCEPT, run="r", at="2026-11-02T10:00:00Z")
    decide(b, RETURN, run="r", at="2026-11-02T09:59:59.5Z")  # earlier, though read later
    for order in ((a, b), (b, a)):
        report = calibrate(*order, min_cases=1)
        assert confusion(report.checks[0].at_current) == matrix((1, 0), (0, 0), (0, 0))
        assert dict(report.skipped)["superseded"] == 1


# --- windows ----------------------------------------------------------------------------------


def window_records(path: Path) -> None:
    """Verdicts and decisions around November 2026 (the window the tests choose)."""
    check = parse_check("Is it right?")
    yes = (YesNoAnswer(0.95),)
    record(path, check, yes, None, run="october", at="2026-10-31T23:59:59Z")
    decide(path, ACCEPT, run="october", at="2026-11-01T08:00:00Z")  # its verdict is out
    record(path, check, yes, ACCEPT, run="first", at="2026-11-01T00:00:00Z")  # since: in
    record(path, check, yes, None, run="last", at="2026-11-30T23:00:00Z")
    decide(path, RETURN, run="last", at="2026-12-01T09:00:00Z")  # decided after: counts
    record(path, check, yes, ACCEPT, run="december", at="2026-12-01T00:00:00Z")  # until: out
    record(path, check, yes, ACCEPT, run="blocking", advisory=False, at="2026-11-10T00:00:00Z")
    decide(path, ACCEPT, run="orphan-in", at="2026-11-15T00:00:00Z")
    decide(path, ACCEPT, run="orphan-out", at="2026-12-02T00:00:00Z")


@pytest.mark.parametrize(
    ("since", "until"),
    [
        ("2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"),
        ("2026-11-01", "2026-12-01"),  # a date is midnight UTC
        ("2026-11-01T01:00:00+01:00", "2026-11-30T19:00:00-05:00"),
        (datetime(2026, 11, 1, tzinfo=timezone.utc), "2026-12-01T00:00:00.000Z"),
    ],
    ids=["utc", "dates", "offsets", "datetime"],
)
def test_a_window_takes_verdicts_by_their_time_with_their_decisions(
    tmp_path: Path, since: Any, until: Any
) -> None:
    path = tmp_path / "records.jsonl"
    window_records(path)
    report = calibrate(path, since=since, until=until, min_cases=1)
    (check,) = report.checks
    assert check.at_current.cases == 2  # first and last
    assert confusion(check.at_current) == matrix((1, 1), (0, 0), (0, 0))
    assert dict(report.skipped) == {
        "not_advisory": 1,
        "error": 0,
        "no_decision": 0,
        "no_verdict": 1,  # orphan-in; orphan-out and october's decision are out of the window
        "superseded": 0,
    }
    assert (report.since, report.until) == ("2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z")
    text = calibration_text(report)
    assert (
        "Window: verdicts at or after 2026-11-01T00:00:00Z and before 2026-12-01T00:00:00Z,"
        " with the decisions on them whenever made." in text
    )
    data = report.to_json()
    assert (data["since"], data["until"], data["sources"]) == (
        "2026-11-01T00:00:00Z",
        "2026-12-01T00:00:00Z",
        [str(path)],
    )
    assert "Window: verdicts at or after 2026-11-01T00:00:00Z" in calibration_html(report)


def test_without_a_window_every_record_counts(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    window_records(path)
    report = calibrate(path, min_cases=1)
    assert report.checks[0].at_current.cases == 4  # october, first, last, december
    assert "Window: every record." in calibration_text(report)
    since_only = calibrate(path, since="2026-11-01", min_cases=1)
    assert since_only.checks[0].at_current.cases == 3
    assert "Window: verdicts at or after 2026-11-01T00:00:00Z, with" in calibration_text(since_only)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"since": "2026-12-01", "until": "2026-11-01"}, "since must be before until"),
        ({"since": "2026-11-01", "until": "2026-11-01"}, "since must be before until"),
        ({"since": "yesterday"}, "since must be an RFC 3339 time (2026-11-01T00:00:00Z, with Z"),
        ({"until": "2026-02-30"}, 'until names no real time: "2026-02-30"'),
        ({"since": "２０２６-11-01"}, "since must be an RFC 3339 time"),  # not ASCII digits
        ({"since": datetime(2026, 11, 1)}, "since must be a timezone-aware datetime"),
        (
            {"since": datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5)))},
            "since names no time in UTC's years 1 to 9999 (its offset takes it past them), got",
        ),
        (
            {"until": datetime(1, 1, 1, 1, tzinfo=timezone(timedelta(hours=5)))},
            "until names no time in UTC's years 1 to 9999",
        ),
        ({"until": 20261101}, "until must be an RFC 3339 time"),
    ],
    ids=[
        "reversed",
        "empty",
        "words",
        "no-such-day",
        "wide-digits",
        "naive",
        "past-year-9999-in-utc",
        "before-year-1-in-utc",
        "number",
    ],
)
def test_a_bad_window_is_refused_naming_it(
    hand_records: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        calibrate(hand_records, **options)


def test_calibration_memory_grows_with_submissions_not_lines(tmp_path: Path) -> None:
    # The same 50 submissions recorded again and again (as replicas re-sending would): the
    # memory calibration needs stays that of 50 submissions, at 4 times the lines.
    check = parse_check("Is it right?")
    base = tmp_path / "base.jsonl"
    for n in range(50):
        record(base, check, (YesNoAnswer(0.5 + n / 100),), ACCEPT, run=f"r{n}")
    lines = base.read_bytes()
    peaks = []
    for copies in (20, 80):
        path = tmp_path / f"x{copies}.jsonl"
        path.write_bytes(lines * copies)
        code = (
            "import sys, tracemalloc\n"
            "from checkprofile.human import calibrate\n"
            "tracemalloc.start()\n"
            "report = calibrate(sys.argv[1], min_cases=1)\n"
            "assert report.duplicates == 100 * (int(sys.argv[2]) - 1), report.duplicates\n"
            "print(tracemalloc.get_traced_memory()[1])\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(path), str(copies)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        peaks.append(int(done.stdout))
    assert peaks[1] < peaks[0] * 1.2, peaks


# --- the command line -------------------------------------------------------------------------


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checkprofile", "calibrate", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_cli_prints_the_text_report(hand_records: Path) -> None:
    done = run_cli(hand_records, "--min-cases", "5")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == calibration_text(hand_calibration(hand_records))
    assert "  Q1 yes/no  current    pass 0.9 fail 0.5" in done.stdout
    assert "suggested  pass 0.94 fail 0.61" in done.stdout


def test_cli_json_and_html(hand_records: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    done = run_cli(hand_records, "--json", "--target", "0.95", "--min-cases", "5", "--html", page)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == hand_calibration(hand_records).to_json()
    text = page.read_text(encoding="utf-8")
    # Per question: its curve, and its reliability diagram against the decision.
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") == 4


def test_cli_a_bad_line_is_one_line_naming_it_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b'{"record": "decision"}\n')
    done = run_cli(path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f'checkprofile: {path}:1: a decision record needs "format"\n'


def main_of(args: Sequence[str | Path], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit code and standard error of the command run in this process."""
    try:
        code = main(["calibrate", *map(str, args)])
    except SystemExit as exit_:  # argparse refusing an option
        code = exit_.code if isinstance(exit_.code, int) else 1
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "{path}: audit records not found"),
        (b'{"record": "verdict"}\nnot json\n', '{path}:1: a verdict record needs "format"'),
        (b"\n", "{path}:1: an empty line"),
        (b"[1, 2]\n", "{path}:1: a record must be a JSON object, got a list"),
        (b"\xff\n", "{path}:1: not JSON: "),
    ],
    ids=["missing", "bad-record", "empty-line", "not-an-object", "not-utf-8"],
)
def test_cli_unreadable_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, expected: str
) -> None:
    path = tmp_path / "records.jsonl"
    if content is not None:
        path.write_bytes(content)
    code, err = main_of([path], capsys)
    assert code == 2
    assert err.startswith(f"checkprofile: {expected.format(path=path)}") and err.count("\n") == 1


def test_cli_a_folder_without_audit_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A directory stands for its *.jsonl files (one per replica); none is a mistake to say.
    (tmp_path / "notes.txt").write_text("not records")
    assert main_of([tmp_path], capsys) == (
        2,
        f"checkprofile: {tmp_path}: no audit records (*.jsonl) in this directory\n",
    )


def test_cli_names_the_line_of_a_bad_record_after_good_ones(
    hand_records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = hand_records.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines[:3]) + lines[3].replace(b'"format":1', b'"format":2'))
    assert main_of([bad], capsys) == (2, f"checkprofile: {bad}:4: format 2 is not 1\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "1.2"], "argument --target: must be above 0 and at most 1, got '1.2'"),
        (["--target", "high"], "argument --target: not a number: 'high'"),
        (["--min-cases", "0"], "argument --min-cases: must be at least 1, got '0'"),
    ],
    ids=["target-above-one", "target-not-a-number", "min-cases-zero"],
)
def test_cli_bad_options_exit_2_naming_the_value(
    hand_records: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, err = main_of([hand_records, *args], capsys)
    assert code == 2
    assert message in err and err.count("\n") == 1


def test_cli_refuses_an_html_path_it_cannot_write(
    hand_records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = main_of([hand_records, "--html", tmp_path], capsys)
    assert code == 2
    assert err.startswith(f"checkprofile: {tmp_path}: cannot write the HTML report: ")


def test_cli_reads_replicas_files_and_a_window(hand_records: Path, tmp_path: Path) -> None:
    files = split(hand_records, tmp_path / "replicas")
    window = ["--since", "2026-11-02", "--until", "2026-11-02T12:00:00+01:00"]
    done = run_cli(tmp_path / "replicas", "--min-cases", "5", *window)
    assert (done.returncode, done.stderr) == (0, "")
    expected = calibrate(
        *files, min_cases=5, since="2026-11-02T00:00:00Z", until="2026-11-02T11:00:00Z"
    )
    assert done.stdout == calibration_text(expected)
    assert f"Sources: {files[0]}, {files[1]}, {files[2]}." in done.stdout
    page = tmp_path / "report.html"
    done = run_cli(*files, "--json", "--html", page, "--min-cases", "5", *window)
    assert json.loads(done.stdout) == expected.to_json()
    assert "<title>Calibration: replica-0.jsonl and 2 more</title>" in page.read_text()


def test_cli_reports_a_torn_line_and_reads_on(hand_records: Path, tmp_path: Path) -> None:
    lines = hand_records.read_bytes().splitlines(keepends=True)
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b"".join(lines[:4]) + lines[4][:50] + b"\n" + b"".join(lines[5:]))
    done = run_cli(torn, "--min-cases", "5")
    assert done.returncode == 0
    assert done.stderr == (
        f"checkprofile: warning: {torn}:5: a torn line (a write that did not finish), skipped\n"
    )
    assert f"Skipped: 1 torn line (a write that did not finish): {torn}:5." in done.stdout
    data = json.loads(run_cli(torn, "--json").stdout)
    assert (data["torn"], data["torn_lines"]) == ([{"path": str(torn), "line": 5}], 1)
    # The torn line was case 3's verdict (unsure, accepted): the other nine are read, and
    # its decision is one with no verdict.
    assert data["checks"][0]["at_current"]["confusion"] == matrix((2, 0), (0, 3), (2, 2))
    assert dict(data["skipped"])["no_verdict"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "noon"], "argument --since: must be an RFC 3339 time"),
        (["--until", "2026-13-01"], 'argument --until: names no real time: "2026-13-01"'),
        (["--since", "2026-11-02", "--until", "2026-11-01"], "since must be before until"),
    ],
    ids=["since-words", "until-no-such-month", "reversed"],
)
def test_cli_a_bad_window_exits_2_naming_it(
    hand_records: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, err = main_of([hand_records, *args], capsys)
    assert code == 2
    assert message in err and err.count("\n") == 1


def test_cli_needs_a_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main_of([], capsys) == (
        2,
        "checkprofile: calibrate: give an audit file or directory, or --db CONNINFO\n",
    )


# --- the example and the guide ----------------------------------------------------------------


def test_the_example_records_are_what_their_generator_writes(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_advisory_records.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == EXAMPLE.read_bytes()


# --- the HTML page ----------------------------------------------------------------------------


def hostile_records(path: Path) -> None:
    ask = '</title><script>alert("ask")</script> & <b>bold</b>'
    check = parse_check([{"ask": ask, "pass": 0.9}])
    for number in range(3):
        record(
            path,
            check,
            (YesNoAnswer(0.5 + number / 5),),
            ACCEPT if number else RETURN,
            run=f"r{number}",
            step='<img src="https://example.invalid/x.png">',
        )


class Tags(html.parser.HTMLParser):
    """Every start tag of a page with its attributes, and the text of its style elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data


def test_the_page_is_self_contained_and_escapes_every_user_text(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    hostile_records(path)
    page = calibration_html(calibrate(read_records(path)), title="<Report & co>")
    assert "&lt;script&gt;alert(&quot;ask&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold" in page
    assert "&lt;img src=&quot;https://example.invalid/x.png&quot;&gt;" in page
    assert "&lt;Report &amp; co&gt;" in page
    parsed = Tags()
    parsed.feed(page)
    names = {tag for tag, _ in parsed.tags}
    assert names <= {
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "span",
        "table", "tr", "th", "td", "small", "svg", "rect", "line", "polyline", "text",
        "circle",
    }  # fmt: skip
    # Nothing is fetched: no attribute names an address, the style imports nothing.
    for tag, attrs in parsed.tags:
        assert not {"src", "href", "xlink:href", "srcset", "action"} & set(attrs), tag
    assert "url(" not in parsed.style and "@import" not in parsed.style
    assert ("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}) in parsed.tags


# --- the HTML page in a real browser ----------------------------------------------------------


def test_the_report_opens_in_headless_chromium_without_errors(tmp_path: Path) -> None:
    chromium = need_chromium()
    page = tmp_path / "report.html"
    assert main(["calibrate", str(EXAMPLE), "--html", str(page), "--json"]) == 0
    browser = Browser(chromium, tmp_path / "profile")
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=1200,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        browser.send("Page.navigate", session, url=page.as_uri())
        browser.wait(lambda m: m.get("method") == "Page.loadEventFired")
        shown = browser.send(
            "Runtime.evaluate",
            session,
            expression="[document.title, document.querySelectorAll('svg polyline').length,"
            " document.querySelectorAll('table').length, document.body.scrollHeight]",
            returnByValue=True,
        )["result"]["value"]
        shot = browser.send(
            "Page.captureScreenshot", session, format="png", captureBeyondViewport=True
        )
    finally:
        browser.close()
    title, polylines, tables, height = shown
    assert title == "Calibration: advisory_records.jsonl"
    assert polylines >= 3 and tables == 1 and height > 900
    screenshot = tmp_path / "report.png"
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    width, shot_height = png_size(screenshot.read_bytes())
    assert width >= 1000 and shot_height >= 900  # less a scroll bar, where one is drawn
    assert screenshot.stat().st_size > 20_000  # charts and tables, not a blank page
    assert complaints(browser.events) == []


def test_the_browser_check_would_see_a_page_that_fetches(tmp_path: Path) -> None:
    # The no-errors assertion above means something only if a refused load is reported.
    chromium = need_chromium()
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'
        '<img src="https://example.invalid/x.png">',
        encoding="utf-8",
    )
    browser = Browser(chromium, tmp_path / "profile")
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        browser.send("Log.enable", session)
        browser.send("Page.enable", session)
        browser.send("Page.navigate", session, url=page.as_uri())
        browser.wait(lambda m: m.get("method") == "Page.loadEventFired")
    finally:
        browser.close()
    assert any("Content Security Policy" in line for line in complaints(browser.events))


# --- the fast reading calibrates as the full reading does --------------------------------------

FAST_CHECK = parse_check(
    [
        {"ask": "The cleared verdict matches the report.", "pass": 0.9, "fail": 0.5},
        {
            "ask": "What does the summary do?",
            "one_of": {"states": "States the verdict.", "hedges": "Avoids a verdict."},
            "pass": ["states"],
            "confidence": 0.8,
        },
        {
            "ask": "How complete is the screening?",
            "levels": ["Neither list.", "One list.", "Both lists."],
            "pass": 2,
            "confidence": 0.8,
        },
    ]
)
fast_answers = st.tuples(
    st.floats(0, 1).map(lambda p: YesNoAnswer(p, source="native")),
    st.tuples(st.sampled_from(["states", "hedges"]), st.floats(0.5, 1)).map(
        lambda drawn: ChoiceAnswer(
            drawn[0],
            drawn[1],
            source="native",
            distribution=(
                (drawn[0], drawn[1]),
                ("hedges" if drawn[0] == "states" else "states", 1 - drawn[1]),
            ),
        )
    ),
    st.tuples(st.integers(0, 2), st.sampled_from([0.5, 0.8, 0.9, 1.0])).map(
        lambda drawn: RubricAnswer(drawn[0], drawn[1], source="logprobs")
    ),
)
fast_decisions = st.sampled_from([ACCEPT, RETURN, FAIL, OWN, None])
moments = st.sampled_from(
    ["2026-10-31T23:59:59Z", "2026-11-01T00:00:00Z", AT, LATER, "2026-11-02T15:30:00.5Z"]
)


@st.composite
def fast_trails(draw: st.DrawFn) -> list[tuple[str, list[bytes]]]:
    """Verdicts and decisions of a few submissions, dealt to two replicas' files as lines,
    some written twice, some recorded again later, and a torn last line now and then."""
    files: list[list[bytes]] = [[], []]
    for number in range(draw(st.integers(1, 12))):
        run, submission = f"run-{number % 9}", Submission({"report": number % 9})
        at, advisory = draw(moments), draw(st.booleans() | st.just(True))
        if draw(st.integers(0, 9)) == 0:
            verdict = error_verdict(FAST_CHECK, model="m", at=at, advisory=advisory)
            outcome = outcome_for(verdict)
        else:
            answers = draw(fast_answers)
            verdict = combine(
                FAST_CHECK, answers, model=draw(st.sampled_from(["m", "n"])), at=at,
                advisory=advisory,
            )  # fmt: skip
            outcome = outcome_for(verdict, answers=answers)
        line = record_line(
            verdict_record(outcome, run_id=run, step_id="screen", submission=submission)
        )
        files[draw(st.integers(0, 1))].append(line)
        if draw(st.integers(0, 5)) == 0:
            files[draw(st.integers(0, 1))].append(line)
        decision = draw(fast_decisions)
        if decision is not None:
            decision = evolve(decision, at=draw(moments))
            made = decision_record(decision, run_id=run, step_id="screen", submission=submission)
            files[draw(st.integers(0, 1))].append(record_line(made))
    for lines in files:
        if lines and draw(st.integers(0, 4)) == 0:
            lines.append(lines[0][: draw(st.integers(1, len(lines[0]) - 2))])  # torn
    return [(f"replica-{n}.jsonl", lines) for n, lines in enumerate(files) if lines]


def fully_read(path: Path) -> list[Any]:
    """Every record of ``path`` as the full reading (no fast path) reads it."""
    reader = _Reader(fast=False)
    return [reader.line(name, number, line) for name, number, line in _lines(path)]


@settings(max_examples=60, deadline=None)
@given(fast_trails(), st.sampled_from([(None, None), ("2026-11-01", None), (None, AT)]))
def test_calibrating_files_gives_the_report_the_full_reading_gives(
    trail: list[tuple[str, list[bytes]]], window: tuple[str | None, str | None]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, lines in trail:
            path = Path(folder) / name
            path.write_bytes(b"".join(lines))
            paths.append(path)
        since, until = window
        fast = calibrate(*paths, since=since, until=until, min_cases=1)
        full = calibrate(*map(fully_read, paths), since=since, until=until, min_cases=1)
    assert fast.to_json() == {**full.to_json(), "sources": [str(path) for path in paths]}


@pytest.mark.parametrize("position", [0, 1, 3])
def test_an_answer_that_does_not_fit_is_refused_wherever_it_is_among_the_cases(
    position: int,
) -> None:
    # Grading would refuse it, so calibration never counts it, first case or last.
    check = parse_check([{"ask": "How complete?", "levels": ["none", "some", "all"], "pass": 1}])
    answers = [
        RubricAnswer(2, 0.9),
        RubricAnswer(1, 0.8),
        RubricAnswer(0, 0.9),
        RubricAnswer(2, 0.7),
    ]
    answers[position] = RubricAnswer(7, 0.9)
    cases = tuple(
        Case(key=f"k{i}", answers=(answer,), person="accepted") for i, answer in enumerate(answers)
    )
    with pytest.raises(ValueError, match=rf'case "k{position}" of "r", question "How complete\?"'):
        calibrate_cases([CheckCases(name="r", check=check, cases=cases)], min_cases=1)


def test_typed_records_join_by_any_key_and_one_that_does_not_fit_is_refused(
    tmp_path: Path,
) -> None:
    # Records handed over typed are joined by their own key, even one the library would not
    # write; an answer its check would refuse is named, with its case, as it is read.
    path = tmp_path / "records.jsonl"
    check = parse_check("Is it right?")
    record(path, check, (YesNoAnswer(0.95),), ACCEPT, run="r")
    verdict, decision = read_records(path)
    keyed = [evolve(verdict, key="my-own-key"), evolve(decision, key="my-own-key")]
    report = calibrate(keyed, min_cases=1)
    assert confusion(report.checks[0].at_current) == matrix((1, 0), (0, 0), (0, 0))
    assert isinstance(verdict, VerdictRecord)
    question = evolve(verdict.verdict.questions[0], answer=1.5)
    bad = evolve(verdict, verdict=evolve(verdict.verdict, questions=(question,)))
    with pytest.raises(ValueError, match=r'case "sha256:.*question "Is it right\?"'):
        calibrate([bad, decision], min_cases=1)


def test_calibrations_memory_grows_with_the_records_not_with_a_checks_questions(
    tmp_path: Path,
) -> None:
    # Issue 34, finding 9: one advisory verdict of 2,000 questions (a 176 KB line) made the
    # join allocate an array per question sized for 65,536 submissions: 1.6 GB. Its answers
    # are now kept one after another, so joining this trail costs a few megabytes.
    import tracemalloc

    from checkprofile.human._audit._sources import Window, open_sources
    from checkprofile.human._calibration._join import Join

    check = parse_check([{"ask": f"Is part {i} right?", "pass": 0.9} for i in range(2000)])
    path = tmp_path / "wide.jsonl"
    record(path, check, [YesNoAnswer(0.95)] * 2000, ACCEPT, run="wide")
    for number in range(3):  # and a few ordinary checks beside it
        record(path, HAND_CHECK, hand_answers(0.95, "states", 0.9), ACCEPT, run=f"r{number}")
    window = Window.of(None, None)
    tracemalloc.start()
    try:
        join = Join(window)
        for item, fingerprint in open_sources([path], window)[1]:
            join.add(item, fingerprint)
        made = join.cases()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(len(each.columns), len(each)) for each in made] == [(2000, 1), (2, 3)]
    assert [column.values[0] for column in made[0].columns] == [0.95] * 2000
    assert peak < 64 * 2**20, peak


# Found by mutation runs, each under its draw's seed (docs/mutation-results.md) --------------------


LATEST = "2026-11-02T18:00:00Z"


# found by a mutation draw (seed 27): which verdict and decision count; a `fail` that does nothing
@pytest.mark.parametrize("order", ["in-time-order", "latest-first"])
def test_of_two_verdicts_on_one_submission_the_latest_counts(tmp_path: Path, order: str) -> None:
    # The earliest verdict winning survived. The submission was checked twice: at AT it would
    # pass (0.95), at LATER it fails (0.10); the person accepted it. The case is the latest
    # verdict's, whichever line comes first: a fail the person accepted.
    path = tmp_path / "trail.jsonl"
    early, late = (0.95, AT), (0.10, LATER)
    for p, at in (early, late) if order == "in-time-order" else (late, early):
        write_verdict(path, "a", p, at=at)
    write_decision(path, "a", Completed(by="pat", at=LATEST))
    report = calibrate(path, min_cases=1)
    (check,) = report.checks
    assert check.at_current.confusion.to_json()["fail"] == {"accepted": 1, "refused": 0}
    assert check.at_current.confusion.to_json()["pass"] == {"accepted": 0, "refused": 0}
    assert dict(report.skipped)["superseded"] == 1


@pytest.mark.parametrize("last", ["fail", "pass"])
def test_of_two_verdicts_at_the_same_time_the_one_read_last_counts(
    tmp_path: Path, last: str
) -> None:
    # docs/earning-trust.md: "at the same time, the one read last". Two verdicts on one
    # submission at AT, one passing (0.95) and one failing (0.10); the person accepted it.
    path = tmp_path / "trail.jsonl"
    ps = {"pass": 0.95, "fail": 0.10}
    first = "pass" if last == "fail" else "fail"
    for name in (first, last):
        write_verdict(path, "a", ps[name], at=AT)
    write_decision(path, "a", Completed(by="pat", at=LATEST))
    report = calibrate(path, min_cases=1)
    (check,) = report.checks
    confusion = check.at_current.confusion.to_json()
    assert (confusion[last]["accepted"], confusion[first]["accepted"]) == (1, 0)
    assert dict(report.skipped)["superseded"] == 1


@pytest.mark.parametrize("last", ["returned", "completed"])
def test_of_two_decisions_at_the_same_time_the_one_read_last_counts(
    tmp_path: Path, last: str
) -> None:
    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a", 0.95, at=AT)
    made = {
        "returned": Returned(note="Attach the report.", by="pat", at=LATEST),
        "completed": Completed(by="pat", at=LATEST),
    }
    first = "completed" if last == "returned" else "returned"
    for name in (first, last):
        write_decision(path, "a", made[name])
    report = calibrate(path, min_cases=1)
    (check,) = report.checks
    person = "refused" if last == "returned" else "accepted"
    assert check.at_current.confusion.to_json()["pass"][person] == 1


def test_the_suggested_thresholds_add_no_fail_that_changes_nothing(tmp_path: Path) -> None:
    # The threshold search preferring a `fail` that changes nothing survived: `fail` equal to
    # `pass` grades as no `fail` at all, so the suggestion leaves it out, as the check does.
    path = tmp_path / "trail.jsonl"
    people = [(0.95, True), (0.92, True), (0.3, False), (0.2, False)]
    for number, (p, accepted) in enumerate(people):
        run = f"run-{number}"
        write_verdict(path, run, p)
        decision = (
            Completed(by="pat", at=LATER) if accepted else Returned(note="No.", by="pat", at=LATER)
        )
        write_decision(path, run, decision)
    (check,) = calibrate(path, min_cases=1).checks
    (question,) = check.questions
    assert question.suggested is not None
    assert question.suggested.fail_below is None
    assert question.suggested.pass_at == question.current.pass_at == 0.9


def test_a_check_calibration_is_made_by_keyword_only() -> None:
    # kw_only=False survived (tools/mutation.py): the house rule for options and records.
    with pytest.raises(TypeError):
        CheckCalibration("review", (), None, None)  # type: ignore[call-arg, arg-type]
