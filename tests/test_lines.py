"""Issue lines and JavaScript number printing (design decision 11)."""

from __future__ import annotations

import math
import re
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkprofile import (
    Answer,
    ChoiceAnswer,
    QuestionResult,
    RubricAnswer,
    Verdict,
    YesNoAnswer,
    answer_text,
    combine,
    error_verdict,
    issue_lines,
    js_number,
    parse_check,
)
from support import AT, spec_full_form

ARROW = "\u2192"
MODEL = "example-evaluator-1"

SCREENED = "The cleared verdict matches the report"
SUMMARY = "What does the summary do?"
COMPLETE = "How complete is the screening?"
CHECK = parse_check(spec_full_form(SCREENED))
PASSING: list[Answer] = [YesNoAnswer(0.95), ChoiceAnswer("states", 0.95), RubricAnswer(2, 0.95)]


def lines_for(*answers: Answer) -> tuple[str, ...]:
    return issue_lines(combine(CHECK, list(answers), model=MODEL, at=AT))


# --- issue_lines ------------------------------------------------------------------------------


def test_the_example_line_of_the_profile() -> None:
    check = parse_check(SCREENED)
    verdict = combine(check, [YesNoAnswer(0.12)], model=MODEL, at=AT)
    assert issue_lines(verdict) == ("check: The cleared verdict matches the report → no (0.12)",)


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        pytest.param(PASSING, (), id="all-pass-no-lines"),
        pytest.param(
            [YesNoAnswer(0.12), *PASSING[1:]],
            (f"check: {SCREENED} → no (0.12)",),
            id="yes-no-fail",
        ),
        pytest.param(
            [YesNoAnswer(0.62), *PASSING[1:]],
            (f"check: {SCREENED} → no (0.62)",),
            id="yes-no-unsure",
        ),
        pytest.param(
            [YesNoAnswer(0.0), *PASSING[1:]],
            (f"check: {SCREENED} → no (0)",),
            id="yes-no-zero",
        ),
        pytest.param(
            [YesNoAnswer(1e-7), *PASSING[1:]],
            (f"check: {SCREENED} → no (1e-7)",),
            id="yes-no-tiny-as-javascript",
        ),
        pytest.param(
            [YesNoAnswer(0.00005), *PASSING[1:]],
            (f"check: {SCREENED} → no (0.00005)",),
            id="yes-no-small-without-exponent",
        ),
        pytest.param(
            [PASSING[0], ChoiceAnswer("hedges", 0.9), PASSING[2]],
            (f"check: {SUMMARY} → hedges (0.9)",),
            id="choice-fail",
        ),
        pytest.param(
            [PASSING[0], ChoiceAnswer("unclear", 1), PASSING[2]],
            (f"check: {SUMMARY} → unclear (1)",),
            id="choice-unsure-name",
        ),
        pytest.param(
            [PASSING[0], ChoiceAnswer("states", 0.5), PASSING[2]],
            (f"check: {SUMMARY} → states (0.5)",),
            id="choice-low-confidence",
        ),
        pytest.param(
            [*PASSING[:2], RubricAnswer(1, 0.85)],
            (f"check: {COMPLETE} → level 1: One list is covered. (0.85)",),
            id="rubric-fail",
        ),
        pytest.param(
            [*PASSING[:2], RubricAnswer(0, 0.9)],
            (f"check: {COMPLETE} → level 0: Neither list is clearly covered. (0.9)",),
            id="rubric-level-0",
        ),
        pytest.param(
            [*PASSING[:2], RubricAnswer(2, 0.25)],
            (
                f"check: {COMPLETE} → level 2: Both lists are covered with the search terms"
                " stated. (0.25)",
            ),
            id="rubric-low-confidence",
        ),
        pytest.param(
            [YesNoAnswer(0.3), ChoiceAnswer("states", 0.9), RubricAnswer(0, 0.99)],
            (
                f"check: {SCREENED} → no (0.3)",
                f"check: {COMPLETE} → level 0: Neither list is clearly covered. (0.99)",
            ),
            id="two-lines-in-question-order",
        ),
        pytest.param(
            [YesNoAnswer(0.7), ChoiceAnswer("hedges", 0.3), RubricAnswer(1, 0.8)],
            (
                f"check: {SCREENED} → no (0.7)",
                f"check: {SUMMARY} → hedges (0.3)",
                f"check: {COMPLETE} → level 1: One list is covered. (0.8)",
            ),
            id="every-question",
        ),
    ],
)
def test_issue_lines(answers: list[Answer], expected: tuple[str, ...]) -> None:
    assert lines_for(*answers) == expected


def test_the_arrow_is_u2192_with_one_space_each_side() -> None:
    (line,) = lines_for(YesNoAnswer(0.12), *PASSING[1:])
    assert line.count(ARROW) == 1
    assert f" {ARROW} " in line
    assert f"  {ARROW}" not in line
    assert f"{ARROW}  " not in line
    assert "->" not in line


def test_whitespace_runs_in_ask_and_level_texts_are_collapsed() -> None:
    check = parse_check(
        [
            {"ask": "The  cleared\tverdict\n matches   the report", "pass": 0.9},
            {
                "ask": "How\n\ncomplete is the screening?",
                "levels": ["Neither list.", "One \t list\n  is covered.", "Both lists."],
                "pass": 2,
            },
        ]
    )
    verdict = combine(check, [YesNoAnswer(0.12), RubricAnswer(1, 0.85)], model=MODEL, at=AT)
    assert issue_lines(verdict) == (
        "check: The cleared verdict matches the report → no (0.12)",
        "check: How complete is the screening? → level 1: One list is covered. (0.85)",
    )


def test_an_error_verdict_has_a_line_per_question_without_an_answer() -> None:
    assert issue_lines(error_verdict(CHECK, model=MODEL, at=AT)) == (
        f"check: {SCREENED} → no answer",
        f"check: {SUMMARY} → no answer",
        f"check: {COMPLETE} → no answer",
    )


def test_advisory_and_truncated_do_not_change_the_lines() -> None:
    answers: list[Answer] = [YesNoAnswer(0.12), ChoiceAnswer("hedges", 0.9), RubricAnswer(1, 0.85)]
    plain = issue_lines(combine(CHECK, answers, model=MODEL, at=AT))
    flagged = issue_lines(
        combine(CHECK, answers, model=MODEL, at=AT, advisory=True, truncated=True)
    )
    assert flagged == plain
    assert len(plain) == 3


def test_a_rubric_line_without_its_check_names_only_the_level() -> None:
    verdict = combine(CHECK, [*PASSING[:2], RubricAnswer(1, 0.85)], model=MODEL, at=AT)
    recorded = Verdict.from_json(verdict.to_json())
    assert issue_lines(recorded) == (f"check: {COMPLETE} → level 1 (0.85)",)
    known = Verdict.from_json(verdict.to_json(), check=CHECK)
    assert issue_lines(known) == (f"check: {COMPLETE} → level 1: One list is covered. (0.85)",)


def test_lines_of_a_recorded_verdict_without_its_check() -> None:
    answers: list[Answer] = [YesNoAnswer(0.12), ChoiceAnswer("hedges", 0.9), RubricAnswer(2, 0.5)]
    recorded = Verdict.from_json(combine(CHECK, answers, model=MODEL, at=AT).to_json())
    assert issue_lines(recorded) == (
        f"check: {SCREENED} → no (0.12)",
        f"check: {SUMMARY} → hedges (0.9)",
        f"check: {COMPLETE} → level 2 (0.5)",
    )


# --- answer_text ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            QuestionResult(ask="Q?", kind="yes_no", answer=0.95, result="pass"),
            "yes (0.95)",
            id="yes-no-pass-is-yes",
        ),
        pytest.param(
            QuestionResult(ask="Q?", kind="yes_no", answer=1, result="pass"),
            "yes (1)",
            id="yes-no-integer",
        ),
        pytest.param(
            QuestionResult(ask="Q?", kind="yes_no", answer=0.12, result="fail"),
            "no (0.12)",
            id="yes-no-fail-is-no",
        ),
        pytest.param(
            QuestionResult(ask="Q?", kind="yes_no", answer=0.62, result="unsure"),
            "no (0.62)",
            id="yes-no-unsure-is-no",
        ),
        pytest.param(
            QuestionResult(ask="Q?", kind="choice", answer="hedges", confidence=0.9, result="fail"),
            "hedges (0.9)",
            id="choice",
        ),
        pytest.param(
            QuestionResult(ask="Q?", kind="rubric", answer=1, confidence=0.85, result="fail"),
            "level 1 (0.85)",
            id="rubric-without-question",
        ),
        pytest.param(
            QuestionResult(ask="Q?", kind="rubric", answer=None, result="unsure"),
            "no answer",
            id="no-answer",
        ),
    ],
)
def test_answer_text(record: QuestionResult, expected: str) -> None:
    assert answer_text(record) == expected


def test_answer_text_names_the_level_of_a_known_question() -> None:
    record = QuestionResult(ask=COMPLETE, kind="rubric", answer=1, confidence=0.85, result="fail")
    assert answer_text(record, CHECK[2]) == "level 1: One list is covered. (0.85)"


# --- js_number --------------------------------------------------------------------------------

# What JavaScript's String(x) prints for each value (ECMA-262 Number::toString).
JAVASCRIPT = [
    pytest.param(0.12, "0.12", id="0.12"),
    pytest.param(0.9, "0.9", id="0.9"),
    pytest.param(0.62, "0.62", id="0.62"),
    pytest.param(1, "1", id="integer-1"),
    pytest.param(1.0, "1", id="float-1"),
    pytest.param(0, "0", id="integer-0"),
    pytest.param(0.0, "0", id="float-0"),
    pytest.param(-0.0, "0", id="negative-zero"),
    pytest.param(0.00005, "0.00005", id="0.00005"),
    pytest.param(1e-7, "1e-7", id="1e-7"),
    pytest.param(-1e-7, "-1e-7", id="minus-1e-7"),
    pytest.param(1.5e-7, "1.5e-7", id="1.5e-7"),
    pytest.param(0.000001, "0.000001", id="1e-6-plain"),
    pytest.param(0.0000015, "0.0000015", id="1.5e-6-plain"),
    pytest.param(math.nextafter(1e-6, 0), "9.999999999999997e-7", id="just-below-1e-6"),
    pytest.param(1e21, "1e+21", id="1e21"),
    pytest.param(1.2345e21, "1.2345e+21", id="1.2345e21"),
    pytest.param(math.nextafter(1e21, 0), "999999999999999900000", id="just-below-1e21"),
    pytest.param(1e20, "100000000000000000000", id="1e20"),
    pytest.param(123456789012345678901, "123456789012345680000", id="large-integer"),
    pytest.param(100, "100", id="100"),
    pytest.param(123.456, "123.456", id="123.456"),
    pytest.param(0.1 + 0.2, "0.30000000000000004", id="0.1+0.2"),
    pytest.param(1 / 3, "0.3333333333333333", id="one-third"),
    pytest.param(5e-324, "5e-324", id="smallest-subnormal"),
    pytest.param(1.7976931348623157e308, "1.7976931348623157e+308", id="largest-double"),
    pytest.param(2**53, "9007199254740992", id="2**53"),
    pytest.param(math.nan, "NaN", id="nan"),
    pytest.param(math.inf, "Infinity", id="infinity"),
    pytest.param(-math.inf, "-Infinity", id="minus-infinity"),
    pytest.param(-1.5, "-1.5", id="minus-1.5"),
]


@pytest.mark.parametrize(("value", "expected"), JAVASCRIPT)
def test_js_number_prints_as_javascript_does(value: float, expected: str) -> None:
    assert js_number(value) == expected


finite = st.floats(allow_nan=False, allow_infinity=False)


@given(finite)
def test_js_number_round_trips(x: float) -> None:
    assert float(js_number(x)) == x


@given(finite)
def test_js_number_uses_the_shortest_digits(x: float) -> None:
    # The same decimal value as repr(), which is the shortest that round-trips: no rounding,
    # no extra digits.
    assert Decimal(js_number(x)) == Decimal(repr(x))


@given(finite)
def test_js_number_uses_an_exponent_only_outside_1e_minus_6_to_1e21(x: float) -> None:
    text = js_number(x)
    if x == 0 or 1e-6 <= abs(x) < 1e21:
        assert "e" not in text
    else:
        assert re.fullmatch(r"-?\d(\.\d+)?e[+-]\d+", text), text
    assert not re.search(r"\.\d*0(e|$)", text), text  # no trailing zeros after a point
    assert not text.endswith(".")


@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_js_number_prints_safe_integers_plainly(n: int) -> None:
    assert js_number(n) == str(n)
    assert js_number(float(n)) == str(n)
