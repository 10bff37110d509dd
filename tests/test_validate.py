"""validate_check, parse_check and check_schema: the check key from the user's side.

Every invalid key below is pinned by the exact JSON Pointers reported (one problem per fault)
and by what its message says; the laws (never raises, the schema is a necessary condition,
normalization is idempotent) are Hypothesis properties.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from functools import cache
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkprofile import (
    Check,
    CheckError,
    CheckprofileError,
    ChoiceQuestion,
    Limits,
    Problem,
    RubricQuestion,
    YesNoQuestion,
    check_schema,
    parse_check,
    validate_check,
)
from checkprofile.testing.strategies import check_keys, limits, probabilities, texts
from support import (
    SPEC_ASK,
    SPEC_CHOICE_ASK,
    SPEC_LEVELS,
    SPEC_ONE_OF,
    SPEC_RUBRIC_ASK,
    json_like,
    spec_full_form,
)

NAN = float("nan")
INF = float("inf")

ASK = SPEC_ASK
CHOICE_ASK = SPEC_CHOICE_ASK
RUBRIC_ASK = SPEC_RUBRIC_ASK
ONE_OF = SPEC_ONE_OF
LEVELS = SPEC_LEVELS
#: The profile's own full-form example (section 2), as a user writes it.
SPEC_FULL_FORM = spec_full_form()

_DROP = object()


def _question(base: Mapping[Any, Any], changes: Mapping[Any, Any] | None) -> dict[Any, Any]:
    question = copy.deepcopy(dict(base))
    for key, value in (changes or {}).items():
        if value is _DROP:
            question.pop(key, None)
        else:
            question[key] = value
    return question


def yes_no(changes: Mapping[Any, Any] | None = None) -> list[Any]:
    """A one-question check: a valid yes/no question with ``changes`` applied."""
    return [_question({"ask": ASK}, changes)]


def choice(changes: Mapping[Any, Any] | None = None) -> list[Any]:
    """A one-question check: a valid choice question with ``changes`` applied."""
    base = {"ask": CHOICE_ASK, "one_of": ONE_OF, "pass": ["states"]}
    return [_question(base, changes)]


def rubric(changes: Mapping[Any, Any] | None = None) -> list[Any]:
    """A one-question check: a valid rubric question with ``changes`` applied."""
    return [_question({"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 2}, changes)]


@cache
def schema_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(check_schema())


def assert_problems(
    raw: object, expected: Mapping[str, tuple[str, ...]], *, limits: Limits = Limits()
) -> None:
    """``raw`` has exactly the problems ``expected`` (pointer -> substrings of its message)."""
    problems = validate_check(raw, limits=limits)
    assert all(isinstance(problem, Problem) for problem in problems)
    shown = [str(problem) for problem in problems]
    assert {problem.pointer for problem in problems} == set(expected), shown
    # One fault, one problem: no pointer is reported twice.
    assert len(problems) == len(expected), shown
    for problem in problems:
        for text in expected[problem.pointer]:
            assert text in problem.message, (problem.pointer, problem.message, text)


# --- invalid check keys ------------------------------------------------------------------------

SHAPES = [
    pytest.param(None, {"": ("got null", "non-empty list of questions")}, id="root-null"),
    pytest.param(3, {"": ("got 3",)}, id="root-number"),
    pytest.param(True, {"": ("got true",)}, id="root-bool"),
    pytest.param({"ask": ASK}, {"": ("got a map",)}, id="root-map-not-in-a-list"),
    pytest.param("", {"": ("non-blank", 'got ""')}, id="root-empty-string"),
    pytest.param(" \t\n ", {"": ("non-blank",)}, id="root-blank-string"),
    pytest.param([], {"": ("at least one question", "empty list")}, id="root-empty-list"),
    pytest.param([ASK], {"/0": ("question map", '"The cleared verdict')}, id="question-string"),
    pytest.param([None], {"/0": ("got null",)}, id="question-null"),
    pytest.param([7], {"/0": ("got 7",)}, id="question-number"),
    pytest.param([[{"ask": ASK}]], {"/0": ("got a list",)}, id="question-list"),
    pytest.param(
        [{"ask": ASK, "one_of": ONE_OF, "levels": LEVELS, "pass": 2}],
        {"/0": ("one_of", "levels", "not both")},
        id="both-one_of-and-levels",
    ),
]

UNKNOWN_KEYS = [
    pytest.param(yes_no({"pas": 0.9}), {"/0/pas": ('did you mean "pass"',)}, id="yes-no-pas"),
    pytest.param(
        yes_no({"oneOf": ONE_OF}), {"/0/oneOf": ('"one_of"', "choice")}, id="yes-no-oneOf"
    ),
    pytest.param(
        yes_no({"one-of": ONE_OF}), {"/0/one-of": ('"one_of"', "choice")}, id="yes-no-one-of"
    ),
    pytest.param(
        yes_no({"levles": LEVELS}), {"/0/levles": ('"levels"', "rubric")}, id="yes-no-levles"
    ),
    pytest.param(
        choice({"oneOf": ONE_OF}), {"/0/oneOf": ('did you mean "one_of"',)}, id="choice-oneOf"
    ),
    pytest.param(
        choice({"one-of": ONE_OF}), {"/0/one-of": ('did you mean "one_of"',)}, id="choice-one-of"
    ),
    pytest.param(
        rubric({"levles": LEVELS}), {"/0/levles": ('did you mean "levels"',)}, id="rubric-levles"
    ),
    pytest.param(
        choice({"pass": _DROP, "pas": ["states"]}),
        {"/0": ('missing "pass"',), "/0/pas": ('did you mean "pass"',)},
        id="choice-pas-instead-of-pass",
    ),
    pytest.param(
        rubric({"confidance": 0.5}),
        {"/0/confidance": ('did you mean "confidence"',)},
        id="rubric-confidance",
    ),
    pytest.param(
        [{"ASK": ASK}],
        {"/0": ('missing "ask"',), "/0/ASK": ('did you mean "ask"',)},
        id="ASK-in-capitals",
    ),
    pytest.param(
        yes_no({"confidence": 0.8}),
        {"/0/confidence": ("confidence is for choice and rubric",)},
        id="yes-no-confidence",
    ),
    pytest.param(
        yes_no({"unsure": ["no"]}),
        {"/0/unsure": ("unsure lists answer names of a choice question",)},
        id="yes-no-unsure",
    ),
    pytest.param(
        choice({"fail": 0.5}), {"/0/fail": ("fail is a yes/no threshold",)}, id="choice-fail"
    ),
    pytest.param(
        rubric({"fail": 0.5}), {"/0/fail": ("fail is a yes/no threshold",)}, id="rubric-fail"
    ),
    pytest.param(
        rubric({"unsure": []}),
        {"/0/unsure": ("unsure lists answer names of a choice question",)},
        id="rubric-unsure",
    ),
    pytest.param(
        yes_no({"advisory": True}),
        {"/0/advisory": ("step key beside check",)},
        id="yes-no-advisory",
    ),
    pytest.param(
        choice({"advisory": True}),
        {"/0/advisory": ("step key beside check",)},
        id="choice-advisory",
    ),
    pytest.param(
        rubric({"advisory": False}),
        {"/0/advisory": ("step key beside check",)},
        id="rubric-advisory",
    ),
    pytest.param(
        yes_no({"zzz": 1}),
        {"/0/zzz": ('unknown key "zzz"', "a yes/no question takes ask, pass, fail")},
        id="yes-no-unknown-key",
    ),
    pytest.param(
        choice({"zzz": 1}),
        {"/0/zzz": ("a choice question takes ask, one_of, pass, unsure, confidence",)},
        id="choice-unknown-key",
    ),
    pytest.param(
        rubric({"zzz": 1}),
        {"/0/zzz": ("a rubric question takes ask, levels, pass, confidence",)},
        id="rubric-unknown-key",
    ),
    pytest.param(
        yes_no({1: "x"}),
        {"/0/1": ("the key 1 is not text", "keys are strings")},
        id="non-string-key",
    ),
]

MISSING = [
    pytest.param([{}], {"/0": ('missing "ask"',)}, id="empty-question"),
    pytest.param(
        [{"pass": 0.9}], {"/0": ('missing "ask"', "in plain language")}, id="yes-no-no-ask"
    ),
    pytest.param(choice({"ask": _DROP}), {"/0": ('missing "ask"',)}, id="choice-no-ask"),
    pytest.param(rubric({"ask": _DROP}), {"/0": ('missing "ask"',)}, id="rubric-no-ask"),
    pytest.param(
        choice({"pass": _DROP}),
        {"/0": ('missing "pass"', "answer names that pass")},
        id="choice-no-pass",
    ),
    pytest.param(
        rubric({"pass": _DROP}), {"/0": ('missing "pass"', "0-based level")}, id="rubric-no-pass"
    ),
]

# (value, how the message quotes it): not a finite number in [0, 1].
BAD_NUMBERS: list[tuple[str, object, str]] = [
    ("true", True, "got true"),
    ("false", False, "got false"),
    ("string", "0.9", 'got "0.9"'),
    ("null", None, "got null"),
    ("list", [0.5], "got a list"),
    ("nan", NAN, "got nan"),
    ("inf", INF, "got inf"),
    ("minus-inf", -INF, "got -inf"),
    ("negative", -0.1, "got -0.1"),
    ("above-one", 1.5, "got 1.5"),
    ("two", 2, "got 2"),
]
NUMBERS = [
    pytest.param(
        make({key: value}),
        {f"/0/{key}": (shown, "[0, 1]")},
        id=f"{name}-{key}-{value_id}",
    )
    for name, make, key in [
        ("yes-no", yes_no, "pass"),
        ("yes-no", yes_no, "fail"),
        ("choice", choice, "confidence"),
        ("rubric", rubric, "confidence"),
    ]
    for value_id, value, shown in BAD_NUMBERS
]

THRESHOLDS = [
    pytest.param(
        yes_no({"pass": 0.5, "fail": 0.6}),
        {"/0/fail": ("fail 0.6 is above pass 0.5",)},
        id="fail-above-pass",
    ),
    pytest.param(
        yes_no({"pass": 0, "fail": 1}),
        {"/0/fail": ("fail 1 is above pass 0",)},
        id="fail-1-above-pass-0",
    ),
    pytest.param(
        yes_no({"fail": 0.95}),
        {"/0/fail": ("0.95", "default pass 0.9", "checkPass")},
        id="fail-above-default-pass",
    ),
]

CHOICES = [
    pytest.param(
        choice({"one_of": {"states": "States it."}, "pass": ["states"]}),
        {"/0/one_of": ("two or more", "got 1 entry")},
        id="one-answer",
    ),
    pytest.param(
        choice({"one_of": ["states", "hedges"]}), {"/0/one_of": ("got a list",)}, id="not-a-map"
    ),
    pytest.param(
        choice({"one_of": {"": "Nothing.", "states": "States it."}}),
        {"/0/one_of/": ("answer name", 'got ""')},
        id="empty-name",
    ),
    pytest.param(
        choice({"one_of": {"  ": "Nothing.", "states": "States it."}}),
        {"/0/one_of/  ": ("answer name", 'got "  "')},
        id="blank-name",
    ),
    pytest.param(
        choice({"one_of": {1: "One.", "states": "States it."}}),
        {"/0/one_of/1": ("the key 1 is not text", "keys are strings")},
        id="int-name",
    ),
    pytest.param(
        choice({"one_of": {True: "Yes.", "states": "States it."}}),
        {"/0/one_of/true": ("the key true is not text", "keys are strings")},
        id="bool-name",
    ),
    pytest.param(
        choice({"one_of": {**ONE_OF, "hedges": "  "}}),
        {"/0/one_of/hedges": ("non-blank", 'got "  "')},
        id="blank-description",
    ),
    pytest.param(
        choice({"one_of": {**ONE_OF, "hedges": 3}}),
        {"/0/one_of/hedges": ("got 3",)},
        id="number-description",
    ),
    pytest.param(
        choice({"one_of": {**ONE_OF, "hedges": None}}),
        {"/0/one_of/hedges": ("got null",)},
        id="null-description",
    ),
    pytest.param(
        choice({"pass": []}), {"/0/pass": ("non-empty", "got 0 entries")}, id="pass-empty"
    ),
    pytest.param(
        choice({"pass": "states"}), {"/0/pass": ('got "states"', "list")}, id="pass-a-string"
    ),
    pytest.param(choice({"pass": NAN}), {"/0/pass": ("got nan", "answer names")}, id="pass-nan"),
    pytest.param(
        choice({"pass": ["states", " "]}), {"/0/pass/1": ("non-blank",)}, id="pass-blank-name"
    ),
    pytest.param(
        choice({"pass": ["states", 1]}), {"/0/pass/1": ("got 1",)}, id="pass-non-string-name"
    ),
    pytest.param(
        choice({"pass": ["stats"]}),
        {"/0/pass/0": ('"stats" is not an answer', 'did you mean "states"')},
        id="pass-unknown-answer-with-hint",
    ),
    pytest.param(
        choice({"pass": ["zzz"]}),
        {"/0/pass/0": ("not an answer of one_of (states, hedges, unclear)",)},
        id="pass-unknown-answer",
    ),
    pytest.param(
        choice({"unsure": ["unclaer"]}),
        {"/0/unsure/0": ('"unclaer" is not an answer', 'did you mean "unclear"')},
        id="unsure-unknown-answer-with-hint",
    ),
    pytest.param(
        choice({"unsure": "unclear"}), {"/0/unsure": ('got "unclear"',)}, id="unsure-a-string"
    ),
    pytest.param(
        choice({"pass": ["states", "hedges", "states"]}),
        {"/0/pass/2": ('"states" is listed twice in pass', "first at 0")},
        id="pass-duplicate",
    ),
    pytest.param(
        choice({"unsure": ["unclear", "unclear"]}),
        {"/0/unsure/1": ("listed twice in unsure",)},
        id="unsure-duplicate",
    ),
    pytest.param(
        choice({"unsure": ["unclear", "states"]}),
        {"/0/unsure/1": ('"states" is in both pass and unsure',)},
        id="pass-unsure-overlap",
    ),
    pytest.param(
        choice({"pass": ["states", "states", 1]}),
        {"/0/pass/1": ("listed twice",), "/0/pass/2": ("got 1",)},
        id="pass-duplicate-beside-non-string",
    ),
]

RUBRICS = [
    pytest.param(
        rubric({"levels": ["Only."], "pass": 0}),
        {"/0/levels": ("2 to 10", "got 1 entry")},
        id="one-level",
    ),
    pytest.param(
        rubric({"levels": [f"Level {i}." for i in range(11)], "pass": 0}),
        {"/0/levels": ("2 to 10", "got 11 entries")},
        id="eleven-levels",
    ),
    pytest.param(rubric({"levels": "bad"}), {"/0/levels": ('got "bad"',)}, id="levels-a-string"),
    pytest.param(
        rubric({"levels": ["Worst.", " ", "Best."]}),
        {"/0/levels/1": ("non-blank", 'got " "')},
        id="blank-level",
    ),
    pytest.param(
        rubric({"levels": ["Worst.", 2, "Best."]}), {"/0/levels/1": ("got 2",)}, id="number-level"
    ),
    pytest.param(
        rubric({"levels": ["Same.", "Other.", "Same."]}),
        {"/0/levels/2": ("level 2 repeats level 0",)},
        id="duplicate-level",
    ),
    pytest.param(
        rubric({"levels": ["Both  lists\tcovered.", "Other.", " Both lists covered.\n"]}),
        {"/0/levels/2": ("repeats level 0",)},
        id="duplicate-level-whitespace",
    ),
    pytest.param(
        rubric({"levels": ["Same.", "Same.", 3], "pass": 0}),
        {"/0/levels/1": ("repeats level 0",), "/0/levels/2": ("got 3",)},
        id="duplicate-level-beside-non-string",
    ),
    pytest.param(
        rubric({"pass": 3}), {"/0/pass": ("from 0 to 2", "got 3")}, id="pass-above-top-level"
    ),
    pytest.param(
        rubric({"pass": 3.0}), {"/0/pass": ("from 0 to 2", "got 3.0")}, id="pass-3.0-above-top"
    ),
    pytest.param(rubric({"pass": 2**40}), {"/0/pass": ("from 0 to 2",)}, id="pass-far-above-top"),
    pytest.param(rubric({"pass": -1}), {"/0/pass": ("got -1",)}, id="pass-negative"),
    pytest.param(
        rubric({"pass": 1.5}), {"/0/pass": ("got 1.5", "integer")}, id="pass-not-integral"
    ),
    pytest.param(rubric({"pass": True}), {"/0/pass": ("got true",)}, id="pass-true"),
    pytest.param(rubric({"pass": "2"}), {"/0/pass": ('got "2"',)}, id="pass-a-string"),
    pytest.param(rubric({"pass": INF}), {"/0/pass": ("got inf",)}, id="pass-inf"),
    pytest.param(rubric({"pass": NAN}), {"/0/pass": ("got nan", "level")}, id="pass-nan"),
]

TEXTS = [
    pytest.param(yes_no({"ask": ""}), {"/0/ask": ("non-blank", 'got ""')}, id="empty-ask"),
    pytest.param(yes_no({"ask": " \n\t"}), {"/0/ask": ("non-blank",)}, id="blank-ask"),
    pytest.param(choice({"ask": " "}), {"/0/ask": ("non-blank",)}, id="choice-blank-ask"),
    pytest.param(rubric({"ask": None}), {"/0/ask": ("got null",)}, id="rubric-null-ask"),
    pytest.param(yes_no({"ask": 3}), {"/0/ask": ("got 3",)}, id="number-ask"),
    pytest.param(
        [{"ask": "Same?"}, {"ask": "Other?"}, {"ask": "Same?"}],
        {"/2/ask": ("same ask as question 0", '"Same?"')},
        id="duplicate-ask",
    ),
    pytest.param(
        [{"ask": "Is the  report\tcomplete?"}, {"ask": " Is the report complete?\n"}],
        {"/1/ask": ("same ask as question 0",)},
        id="duplicate-ask-whitespace",
    ),
    pytest.param(
        [*yes_no({"ask": CHOICE_ASK}), *choice()],
        {"/1/ask": ("same ask as question 0",)},
        id="duplicate-ask-across-kinds",
    ),
    pytest.param(
        [{"ask": "Same?"}, {"ask": "Same?"}, {"ask": "Same?"}],
        {"/1/ask": ("question 0",), "/2/ask": ("question 0",)},
        id="ask-three-times",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), SHAPES)
def test_shapes_refused(raw: object, expected: dict[str, tuple[str, ...]]) -> None:
    assert_problems(raw, expected)


@pytest.mark.parametrize(("raw", "expected"), UNKNOWN_KEYS)
def test_unknown_keys_refused_with_hint(raw: object, expected: dict[str, tuple[str, ...]]) -> None:
    assert_problems(raw, expected)


@pytest.mark.parametrize(("raw", "expected"), MISSING)
def test_missing_required_keys(raw: object, expected: dict[str, tuple[str, ...]]) -> None:
    assert_problems(raw, expected)


def test_missing_ask_and_pass_are_two_problems() -> None:
    problems = validate_check(choice({"ask": _DROP, "pass": _DROP}))
    assert [problem.pointer for problem in problems] == ["/0", "/0"]
    messages = " | ".join(problem.message for problem in problems)
    assert 'missing "ask"' in messages
    assert 'missing "pass"' in messages


@pytest.mark.parametrize(("raw", "expected"), NUMBERS)
def test_thresholds_are_finite_numbers_in_unit_interval(
    raw: object, expected: dict[str, tuple[str, ...]]
) -> None:
    assert_problems(raw, expected)


@pytest.mark.parametrize(("raw", "expected"), THRESHOLDS)
def test_fail_above_pass_refused(raw: object, expected: dict[str, tuple[str, ...]]) -> None:
    assert_problems(raw, expected)


@pytest.mark.parametrize(("raw", "expected"), CHOICES)
def test_choice_rules(raw: object, expected: dict[str, tuple[str, ...]]) -> None:
    assert_problems(raw, expected)


@pytest.mark.parametrize(("raw", "expected"), RUBRICS)
def test_rubric_rules(raw: object, expected: dict[str, tuple[str, ...]]) -> None:
    assert_problems(raw, expected)


@pytest.mark.parametrize(("raw", "expected"), TEXTS)
def test_text_rules(raw: object, expected: dict[str, tuple[str, ...]]) -> None:
    assert_problems(raw, expected)


LIMITED = [
    pytest.param(
        yes_no({"fail": 0.8}),
        Limits(check_pass=0.7),
        {"/0/fail": ("fail 0.8", "default pass 0.7", "checkPass", "set pass too")},
        id="fail-above-limits-check-pass",
    ),
    pytest.param(
        yes_no({"pass": 0.3}),
        Limits(check_fail=0.4),
        {"/0/pass": ("pass 0.3", "default fail 0.4", "checkFail")},
        id="pass-below-limits-check-fail",
    ),
    pytest.param(
        yes_no({"pass": 0}),
        Limits(check_fail=0.1),
        {"/0/pass": ("pass 0", "default fail 0.1")},
        id="pass-0-below-limits-check-fail",
    ),
    pytest.param(
        yes_no({"pass": 0.5, "fail": 0.6}),
        Limits(check_pass=0.7, check_fail=0.2),
        {"/0/fail": ("fail 0.6 is above pass 0.5",)},
        id="explicit-fail-above-explicit-pass-whatever-the-limits",
    ),
]


@pytest.mark.parametrize(("raw", "limits", "expected"), LIMITED)
def test_thresholds_against_limits_defaults(
    raw: object, limits: Limits, expected: dict[str, tuple[str, ...]]
) -> None:
    assert_problems(raw, expected, limits=limits)


def test_limits_default_rules_apply_only_to_yes_no_thresholds() -> None:
    # A choice or rubric has no yes/no default to collide with, whatever the limits say.
    limits = Limits(check_pass=0.5, check_fail=0.5, check_confidence=0.99)
    raw = [*choice({"confidence": 0.1}), *rubric({"confidence": 0.2, "pass": 0})]
    assert validate_check(raw, limits=limits) == ()


# Realistic: json.loads turns a long run of digits into an int that no float can hold.
HUGE = 10**400
HUGE_NUMBERS = [
    pytest.param(yes_no({"pass": HUGE}), "/0/pass", id="yes-no-pass"),
    pytest.param(yes_no({"fail": HUGE}), "/0/fail", id="yes-no-fail"),
    pytest.param(choice({"confidence": HUGE}), "/0/confidence", id="choice-confidence"),
    pytest.param(rubric({"confidence": HUGE}), "/0/confidence", id="rubric-confidence"),
    pytest.param(rubric({"pass": HUGE}), "/0/pass", id="rubric-pass"),
]


@pytest.mark.parametrize(("raw", "pointer"), HUGE_NUMBERS)
def test_huge_integers_are_problems_not_exceptions(raw: object, pointer: str) -> None:
    problems = validate_check(raw)
    assert [problem.pointer for problem in problems] == [pointer]


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(10**5000, id="root"),
        pytest.param([{"ask": 10**5000}], id="ask"),
        pytest.param(choice({"one_of": {"a": 10**5000, "b": "B."}}), id="description"),
    ],
)
def test_integers_python_cannot_print_are_problems_not_exceptions(raw: object) -> None:
    # Beyond sys.get_int_max_str_digits() even repr() raises; "whatever raw is" includes these.
    assert validate_check(raw)


def test_huge_integer_from_json_text() -> None:
    raw = json.loads('[{"ask": "Is it cleared?", "pass": 1' + "0" * 400 + "}]")
    assert [problem.pointer for problem in validate_check(raw)] == ["/0/pass"]
    with pytest.raises(CheckError):
        parse_check(raw)


# --- several problems at once --------------------------------------------------------------------


def test_every_problem_of_every_question_at_once() -> None:
    raw = [
        {"ask": " ", "pass": 1.5, "confidence": 0.8},
        {"ask": "Other?", "one_of": {"yes": "Yes.", "no": ""}, "pass": ["yse"], "unsure": 3},
        {"ask": "Other?", "levels": ["A.", "A."], "pass": 2},
        "not a question",
        {"ask": "Fine?", "pass": 0.9, "fail": 0.5},
        {"ask": "Last?", "levels": ["A.", "B."], "pass": 1, "fail": 0.5},
    ]
    problems = validate_check(raw)
    assert sorted(problem.pointer for problem in problems) == sorted(
        [
            "/0/ask",
            "/0/pass",
            "/0/confidence",
            "/1/one_of/no",
            "/1/pass/0",
            "/1/unsure",
            "/2/levels/1",
            "/2/pass",
            "/2/ask",
            "/3",
            "/5/fail",
        ]
    )
    by_pointer = {problem.pointer: problem.message for problem in problems}
    assert 'did you mean "yes"' in by_pointer["/1/pass/0"]
    assert "same ask as question 1" in by_pointer["/2/ask"]
    assert "from 0 to 1" in by_pointer["/2/pass"]


def test_problems_are_sorted_by_question() -> None:
    # The duplicate ask of question 1 is found after question 2's problem; it is still listed first.
    raw = [{"ask": "A?"}, {"ask": "A?", "pass": 2}, {"ask": "B?", "pass": 7}, {"ask": "C?"}]
    problems = validate_check(raw)
    assert [problem.path[0] for problem in problems] == [1, 1, 2]
    assert {problem.pointer for problem in problems[:2]} == {"/1/ask", "/1/pass"}
    assert problems[2].pointer == "/2/pass"


def test_problem_paths_are_from_the_check_key_root() -> None:
    (problem,) = validate_check(choice({"one_of": {**ONE_OF, "hedges": ""}}))
    assert problem.path == (0, "one_of", "hedges")


# --- valid check keys -----------------------------------------------------------------------------

VALID = [
    pytest.param(ASK, Limits(), id="short-form"),
    pytest.param(" Padded question? ", Limits(), id="short-form-padded"),
    pytest.param(SPEC_FULL_FORM, Limits(), id="spec-full-form"),
    pytest.param(yes_no(), Limits(), id="yes-no-defaults"),
    pytest.param(yes_no({"pass": 0.7, "fail": 0.7}), Limits(), id="fail-equals-pass"),
    pytest.param(yes_no({"pass": 1, "fail": 0}), Limits(), id="integer-thresholds"),
    pytest.param(yes_no({"pass": 0.0}), Limits(), id="pass-zero"),
    pytest.param(yes_no({"pass": -0.0}), Limits(), id="pass-minus-zero"),
    pytest.param(yes_no({"fail": 0.9}), Limits(), id="fail-equals-default-pass"),
    pytest.param(yes_no({"fail": 0.6}), Limits(check_pass=0.6), id="fail-equals-limits-pass"),
    pytest.param(yes_no({"pass": 0.4}), Limits(check_fail=0.4), id="pass-equals-limits-fail"),
    pytest.param(
        yes_no({"pass": 0.3, "fail": 0.1}), Limits(check_fail=0.4), id="own-fail-below-limits"
    ),
    pytest.param(ASK, Limits(check_pass=0.6, check_fail=0.6), id="short-form-with-limits"),
    pytest.param(choice(), Limits(), id="choice-minimal"),
    pytest.param(choice({"unsure": []}), Limits(), id="choice-unsure-empty"),
    pytest.param(choice({"pass": ["states", "hedges", "unclear"]}), Limits(), id="choice-all-pass"),
    pytest.param(
        choice({"one_of": {"a/b": "Slash.", "~": "Tilde."}, "pass": ["a/b"], "unsure": ["~"]}),
        Limits(),
        id="choice-names-with-pointer-characters",
    ),
    pytest.param(choice({"confidence": 0}), Limits(), id="choice-confidence-zero"),
    pytest.param(rubric({"levels": ["Bad.", "Good."], "pass": 0}), Limits(), id="rubric-2"),
    pytest.param(
        rubric({"levels": [f"Level {i}." for i in range(10)], "pass": 9}), Limits(), id="rubric-10"
    ),
    pytest.param(rubric({"pass": 2.0}), Limits(), id="rubric-pass-2.0"),
    pytest.param(rubric({"pass": 0, "confidence": 1}), Limits(), id="rubric-confidence-one"),
    pytest.param(
        [{"ask": "Is it A?"}, {"ask": "Is it  B?"}, {"ask": "Is it\tC?"}],
        Limits(),
        id="distinct-asks",
    ),
]


@pytest.mark.parametrize(("raw", "limits"), VALID)
def test_valid_keys_have_no_problems(raw: object, limits: Limits) -> None:
    assert validate_check(raw, limits=limits) == ()
    assert isinstance(parse_check(raw, limits=limits), Check)
    assert schema_validator().is_valid(raw)


def test_validation_and_parsing_leave_the_raw_value_alone() -> None:
    raw = copy.deepcopy(SPEC_FULL_FORM)
    validate_check(raw)
    parse_check(raw)
    assert raw == SPEC_FULL_FORM


# --- parse_check and CheckError ------------------------------------------------------------------

ERRORS = [
    pytest.param(None, Limits(), id="root-null"),
    pytest.param("  ", Limits(), id="blank-short-form"),
    pytest.param(yes_no({"pass": 1.5, "pas": 0.9}), Limits(), id="two-problems"),
    pytest.param(yes_no({"fail": 0.8}), Limits(check_pass=0.7), id="against-limits"),
    pytest.param(
        [*choice({"pass": ["stats"]}), *rubric({"pass": 5}), {"ask": CHOICE_ASK}],
        Limits(),
        id="three-questions",
    ),
]


@pytest.mark.parametrize(("raw", "limits"), ERRORS)
def test_parse_check_raises_every_problem(raw: object, limits: Limits) -> None:
    with pytest.raises(CheckError) as info:
        parse_check(raw, limits=limits)
    error = info.value
    assert isinstance(error, ValueError)
    assert isinstance(error, CheckprofileError)
    assert error.problems == validate_check(raw, limits=limits)
    assert error.problems
    text = str(error)
    for problem in error.problems:
        assert f"{problem.pointer or '(root)'}: {problem.message}" in text
    assert f"{len(error.problems)} problem" in text


def test_limits_decide_whether_a_key_parses() -> None:
    raw = yes_no({"fail": 0.8})
    assert parse_check(raw) == Check((YesNoQuestion(ASK, 0.9, 0.8),))
    with pytest.raises(CheckError):
        parse_check(raw, limits=Limits(check_pass=0.7))


# --- Problem -------------------------------------------------------------------------------------


def test_pointer_escapes_tilde_and_slash() -> None:
    problem = Problem((0, "a/b", "~x", "~1", "/~"), "bad")
    assert problem.pointer == "/0/a~1b/~0x/~01/~1~0"


def test_pointer_of_the_root_is_empty() -> None:
    problem = Problem((), "bad")
    assert problem.pointer == ""
    assert str(problem) == "(root): bad"


def test_path_given_as_list_is_a_tuple() -> None:
    problem = Problem([1, "pass"], "bad")
    assert problem.path == (1, "pass")
    assert problem.pointer == "/1/pass"
    assert str(problem) == "/1/pass: bad"


def _resolve(document: Any, pointer: str) -> Any:
    """RFC 6901 evaluation, written out here so the library is not checked against itself."""
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        document = document[int(key)] if isinstance(document, list) else document[key]
    return document


@pytest.mark.parametrize(
    ("raw", "pointer", "value"),
    [
        pytest.param(yes_no({"a/b~c": 1}), "/0/a~1b~0c", 1, id="unknown-key"),
        pytest.param(
            choice({"one_of": {"a/b": "", "~1": "Tilde one."}, "pass": ["~1"]}),
            "/0/one_of/a~1b",
            "",
            id="answer-name",
        ),
    ],
)
def test_reported_pointer_resolves_to_the_bad_value(raw: object, pointer: str, value: Any) -> None:
    (problem,) = validate_check(raw)
    assert problem.pointer == pointer
    assert _resolve(raw, problem.pointer) == value


def test_rerooted_prefixes_the_path() -> None:
    problem = Problem((0, "pass"), "expected a number in [0, 1], got 1.5")
    moved = problem.rerooted("steps", 3, "check")
    assert moved.path == ("steps", 3, "check", 0, "pass")
    assert moved.pointer == "/steps/3/check/0/pass"
    assert moved.message == problem.message
    assert problem.path == (0, "pass")
    assert problem.rerooted() == problem
    assert Problem((), "m").rerooted("a/b").pointer == "/a~1b"


def test_problems_are_values() -> None:
    assert Problem((0, "ask"), "m") == Problem([0, "ask"], "m")
    assert hash(Problem((0, "ask"), "m")) == hash(Problem((0, "ask"), "m"))
    assert Problem((0, "ask"), "m") != Problem((1, "ask"), "m")


# --- check_schema ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(None, id="null"),
        pytest.param("", id="empty-string"),
        pytest.param([], id="empty-list"),
        pytest.param(yes_no({"pass": 1.5}), id="pass-1.5"),
        pytest.param(yes_no({"confidence": 0.5}), id="confidence-on-yes-no"),
        pytest.param(choice({"pass": []}), id="choice-pass-empty"),
        pytest.param(rubric({"pass": 1.5}), id="rubric-pass-1.5"),
        pytest.param(rubric({"levels": ["One."]}), id="one-level"),
    ],
)
def test_check_schema_rejects_structural_faults(raw: object) -> None:
    assert not schema_validator().is_valid(raw)
    assert validate_check(raw)


# --- properties ----------------------------------------------------------------------------------


def valid_keys() -> st.SearchStrategy[tuple[Any, Limits]]:
    """A valid check key (short or full form, all three kinds) and the limits it is valid under."""
    return limits().flatmap(lambda chosen: st.tuples(check_keys(limits=chosen), st.just(chosen)))


#: Values that are sometimes right for a key, so the deeper (semantic) rules are reached.
near_values = (
    json_like
    | probabilities()
    | st.sampled_from([NAN, INF, -0.1, 1.5, True, 2.0, 3, -1, "", " ", "a"])
    | st.lists(st.sampled_from(["a", "b", "c", "", " ", 1, "a "]), max_size=4)
    | st.dictionaries(st.sampled_from(["a", "b", "c", "", " ", "a/b"]) | st.integers(), texts())
    | st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["A.", "", None, 1]))
)
question_like = st.fixed_dictionaries(
    {},
    optional={
        "ask": st.sampled_from(["A?", "B?", "A? ", " ", ""]) | json_like,
        "pass": near_values,
        "fail": near_values,
        "confidence": near_values,
        "one_of": near_values,
        "unsure": near_values,
        "levels": near_values
        | st.lists(st.sampled_from(["x", "y", "x ", "z", " "]), min_size=1, max_size=11),
        "advisory": st.booleans(),
        "pas": json_like,
    },
)
question_lists = st.lists(question_like | json_like, max_size=4)
lists_of_maps = st.lists(
    st.dictionaries(st.text(max_size=8) | st.integers() | st.booleans(), json_like, max_size=5),
    max_size=4,
)
anything = json_like | lists_of_maps | question_lists


def _assert_well_formed(raw: object, problems: tuple[Problem, ...]) -> None:
    assert isinstance(problems, tuple)
    for problem in problems:
        assert isinstance(problem, Problem)
        assert isinstance(problem.message, str)
        assert problem.message
        assert problem.pointer == "" or problem.pointer.startswith("/")
    if isinstance(raw, list) and raw:
        indexes = [problem.path[0] for problem in problems]
        assert all(isinstance(index, int) and 0 <= index < len(raw) for index in indexes)
        assert indexes == sorted(indexes)


@given(json_like, limits())
def test_validate_never_raises_on_json_like(raw: object, limits: Limits) -> None:
    _assert_well_formed(raw, validate_check(raw, limits=limits))


@given(lists_of_maps)
def test_validate_never_raises_on_lists_of_maps(raw: list[Any]) -> None:
    _assert_well_formed(raw, validate_check(raw))


@given(question_lists, limits())
def test_validate_never_raises_on_question_like_maps(raw: list[Any], limits: Limits) -> None:
    _assert_well_formed(raw, validate_check(raw, limits=limits))


@given(anything, limits())
def test_parse_check_succeeds_exactly_when_validate_finds_nothing(
    raw: object, limits: Limits
) -> None:
    problems = validate_check(raw, limits=limits)
    if problems:
        with pytest.raises(CheckError) as info:
            parse_check(raw, limits=limits)
        assert info.value.problems == problems
    else:
        assert isinstance(parse_check(raw, limits=limits), Check)


@given(anything, limits())
def test_no_problem_is_reported_twice(raw: object, limits: Limits) -> None:
    problems = validate_check(raw, limits=limits)
    assert len(set(problems)) == len(problems), [str(problem) for problem in problems]


@given(valid_keys())
def test_generated_valid_keys_are_valid_and_schema_valid(case: tuple[Any, Limits]) -> None:
    raw, limits = case
    assert validate_check(raw, limits=limits) == ()
    assert schema_validator().is_valid(raw)


@given(valid_keys())
def test_parse_check_is_idempotent_through_to_json(case: tuple[Any, Limits]) -> None:
    raw, limits = case
    check = parse_check(raw, limits=limits)
    full = check.to_json()
    assert validate_check(full, limits=limits) == ()
    again = parse_check(full, limits=limits)
    assert again == check
    assert again.to_json() == full
    # The full form is plain JSON: it survives a trip through JSON text.
    assert parse_check(json.loads(json.dumps(full)), limits=limits) == check


@given(valid_keys())
def test_parse_check_fills_defaults_from_limits(case: tuple[Any, Limits]) -> None:
    raw, limits = case
    check = parse_check(raw, limits=limits)
    items: list[dict[str, Any]] = [{"ask": raw}] if isinstance(raw, str) else raw
    assert len(check) == len(items)
    for item, question in zip(items, check, strict=True):
        assert question.ask == item["ask"]
        if "one_of" in item:
            assert isinstance(question, ChoiceQuestion)
            assert question.one_of == tuple(item["one_of"].items())
            assert question.passing == tuple(item["pass"])
            assert question.unsure == tuple(item.get("unsure", []))
            assert question.confidence == item.get("confidence", limits.check_confidence)
        elif "levels" in item:
            assert isinstance(question, RubricQuestion)
            assert question.levels == tuple(item["levels"])
            assert question.pass_level == item["pass"]
            assert type(question.pass_level) is int
            assert question.confidence == item.get("confidence", limits.check_confidence)
        else:
            assert isinstance(question, YesNoQuestion)
            assert question.pass_at == item.get("pass", limits.check_pass)
            assert question.fail_below == item.get("fail", limits.check_fail)


@given(valid_keys(), st.data())
def test_one_problem_in_a_valid_key_is_reported(
    case: tuple[Any, Limits], data: st.DataObject
) -> None:
    # Break one question of a valid key: exactly that question is reported.
    raw, limits = case
    if isinstance(raw, str):
        raw = [{"ask": raw}]
    index = data.draw(st.integers(min_value=0, max_value=len(raw) - 1))
    broken = copy.deepcopy(raw)
    broken[index]["zzz"] = True
    problems = validate_check(broken, limits=limits)
    assert [problem.pointer for problem in problems] == [f"/{index}/zzz"]


@given(anything | valid_keys().map(lambda case: case[0]))
def test_schema_is_a_necessary_condition(raw: object) -> None:
    # Whenever validate_check accepts, the schema accepts; whenever it rejects, validate reports.
    schema_ok = schema_validator().is_valid(raw)
    problems = validate_check(raw)
    if not problems:
        assert schema_ok
    if not schema_ok:
        assert problems


def test_nan_passes_the_schema_but_not_validate_check() -> None:
    # The schema is necessary, not sufficient: NaN passes its minimum/maximum, validate refuses.
    raw = yes_no({"pass": NAN})
    assert schema_validator().is_valid(raw)
    assert [problem.pointer for problem in validate_check(raw)] == ["/0/pass"]
    assert math.isnan(raw[0]["pass"])


def test_an_anchored_true_from_ruamel_is_a_bool_not_the_number_1() -> None:
    # ruamel.yaml's round-trip loader gives `pass: &t true` as ScalarBoolean, an int subclass;
    # taken as a number it was the threshold 1. It is the bool it stands for: refused.
    from ruamel.yaml.scalarbool import ScalarBoolean

    problems = validate_check([{"ask": "Done?", "pass": ScalarBoolean(True)}])
    assert [(p.pointer, p.message) for p in problems] == [
        ("/0/pass", "expected a number in [0, 1], got true")
    ]


def test_a_float_subclass_is_judged_by_its_value_not_its_comparisons() -> None:
    class Always(float):
        def __le__(self, other: object) -> bool:
            return True

        def __ge__(self, other: object) -> bool:
            return True

    assert [p.pointer for p in validate_check([{"ask": "Done?", "pass": Always(7.0)}])] == [
        "/0/pass"
    ]
    check = parse_check([{"ask": "Done?", "pass": Always(0.5)}])
    assert check[0].pass_at == 0.5 and type(check[0].pass_at) is float  # type: ignore[union-attr]
