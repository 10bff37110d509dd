"""Check and its questions: the normalized full form a host works with after parse_check."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import attrs
import pytest

from checkprofile import (
    Check,
    ChoiceQuestion,
    Limits,
    Question,
    RubricQuestion,
    YesNoQuestion,
    parse_check,
)
from support import (
    SPEC_ASK,
    SPEC_CHOICE_ASK,
    SPEC_LEVELS,
    SPEC_ONE_OF,
    SPEC_RUBRIC_ASK,
    spec_full_form,
)

ASK = SPEC_ASK
SHORT = (
    "The cleared verdict matches what the attached report says, and the report covers both lists."
)
CHOICE_ASK = SPEC_CHOICE_ASK
RUBRIC_ASK = SPEC_RUBRIC_ASK
ONE_OF = SPEC_ONE_OF
LEVELS = SPEC_LEVELS
#: The profile's own full-form example (section 2), as a user writes it.
SPEC_FULL_FORM = spec_full_form()


def spec_check() -> Check:
    return parse_check(copy.deepcopy(SPEC_FULL_FORM))


# --- the normalized form -------------------------------------------------------------------------


def test_spec_example_to_json_is_the_full_form() -> None:
    assert spec_check().to_json() == [
        {"ask": ASK, "pass": 0.9, "fail": 0.5},
        {
            "ask": CHOICE_ASK,
            "one_of": ONE_OF,
            "pass": ["states"],
            "unsure": ["unclear"],
            "confidence": 0.8,
        },
        {"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 2, "confidence": 0.8},
    ]


def test_spec_example_questions() -> None:
    check = spec_check()
    assert check == Check(
        (
            YesNoQuestion(ask=ASK, pass_at=0.9, fail_below=0.5),
            ChoiceQuestion(
                ask=CHOICE_ASK,
                one_of=tuple(ONE_OF.items()),
                passing=("states",),
                unsure=("unclear",),
                confidence=0.8,
            ),
            RubricQuestion(ask=RUBRIC_ASK, levels=tuple(LEVELS), pass_level=2, confidence=0.8),
        )
    )
    assert [question.kind for question in check] == ["yes_no", "choice", "rubric"]


def test_to_json_keys_are_in_the_documented_order() -> None:
    keys = [list(question) for question in spec_check().to_json()]
    assert keys == [
        ["ask", "pass", "fail"],
        ["ask", "one_of", "pass", "unsure", "confidence"],
        ["ask", "levels", "pass", "confidence"],
    ]


def test_to_json_is_plain_json() -> None:
    full = spec_check().to_json()
    assert json.loads(json.dumps(full)) == full
    assert type(full[0]["pass"]) is float
    assert type(full[2]["pass"]) is int
    assert type(full[1]["one_of"]) is dict
    assert type(full[1]["pass"]) is list
    assert type(full[2]["levels"]) is list
    assert "kind" not in json.dumps(full)


def test_to_json_gives_fresh_values() -> None:
    check = spec_check()
    full = check.to_json()
    full[0]["pass"] = 0.1
    full[1]["one_of"]["new"] = "New."
    full[1]["pass"].append("hedges")
    full[2]["levels"].clear()
    assert check == spec_check()
    assert check.to_json() == spec_check().to_json()


def test_the_check_does_not_follow_later_changes_to_the_raw_value() -> None:
    raw = copy.deepcopy(SPEC_FULL_FORM)
    check = parse_check(raw)
    raw[1]["one_of"]["new"] = "New."
    raw[1]["pass"].append("hedges")
    raw[2]["levels"].append("Beyond.")
    raw[0]["pass"] = 0.1
    assert check == spec_check()


# --- defaults from Limits (design decision 2) ---------------------------------------------

DEFAULTS = [
    pytest.param(SHORT, Limits(), [{"ask": SHORT, "pass": 0.9}], id="short-form"),
    pytest.param(
        SHORT,
        Limits(check_pass=0.75, check_fail=0.25),
        [{"ask": SHORT, "pass": 0.75, "fail": 0.25}],
        id="short-form-with-limits",
    ),
    pytest.param([{"ask": ASK}], Limits(), [{"ask": ASK, "pass": 0.9}], id="yes-no-no-thresholds"),
    pytest.param(
        [{"ask": ASK}],
        Limits(check_pass=0.8, check_fail=0.3),
        [{"ask": ASK, "pass": 0.8, "fail": 0.3}],
        id="yes-no-both-from-limits",
    ),
    pytest.param(
        [{"ask": ASK, "pass": 0.7}],
        Limits(check_pass=0.95),
        [{"ask": ASK, "pass": 0.7}],
        id="yes-no-own-pass-no-fail",
    ),
    pytest.param(
        [{"ask": ASK, "pass": 0.7}],
        Limits(check_fail=0.2),
        [{"ask": ASK, "pass": 0.7, "fail": 0.2}],
        id="yes-no-own-pass-fail-from-limits",
    ),
    pytest.param(
        [{"ask": ASK, "fail": 0.4}],
        Limits(check_pass=0.6, check_fail=0.1),
        [{"ask": ASK, "pass": 0.6, "fail": 0.4}],
        id="yes-no-own-fail-pass-from-limits",
    ),
    pytest.param(
        [{"ask": ASK, "pass": 0.6, "fail": 0.6}],
        Limits(check_fail=0.5),
        [{"ask": ASK, "pass": 0.6, "fail": 0.6}],
        id="yes-no-both-own",
    ),
    pytest.param(
        [{"ask": ASK, "pass": 1, "fail": 0}],
        Limits(),
        [{"ask": ASK, "pass": 1.0, "fail": 0.0}],
        id="yes-no-integer-thresholds",
    ),
    pytest.param(
        [{"ask": CHOICE_ASK, "one_of": ONE_OF, "pass": ["states", "hedges"]}],
        Limits(check_confidence=0.65),
        [
            {
                "ask": CHOICE_ASK,
                "one_of": ONE_OF,
                "pass": ["states", "hedges"],
                "unsure": [],
                "confidence": 0.65,
            }
        ],
        id="choice-defaults",
    ),
    pytest.param(
        [{"ask": CHOICE_ASK, "one_of": ONE_OF, "pass": ["states"], "confidence": 1}],
        Limits(check_confidence=0.65),
        [
            {
                "ask": CHOICE_ASK,
                "one_of": ONE_OF,
                "pass": ["states"],
                "unsure": [],
                "confidence": 1.0,
            }
        ],
        id="choice-own-confidence",
    ),
    pytest.param(
        [{"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 1}],
        Limits(check_confidence=0.7),
        [{"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 1, "confidence": 0.7}],
        id="rubric-defaults",
    ),
    pytest.param(
        [{"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 2.0, "confidence": 0.5}],
        Limits(),
        [{"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 2, "confidence": 0.5}],
        id="rubric-pass-2.0",
    ),
]


@pytest.mark.parametrize(("raw", "limits", "expected"), DEFAULTS)
def test_defaults_come_from_limits(
    raw: object, limits: Limits, expected: list[dict[str, Any]]
) -> None:
    check = parse_check(raw, limits=limits)
    assert check.to_json() == expected
    assert parse_check(check.to_json(), limits=limits) == check


def test_no_fail_key_while_limits_have_no_fail() -> None:
    (question,) = parse_check(SHORT)
    assert isinstance(question, YesNoQuestion)
    assert question.pass_at == 0.9
    assert question.fail_below is None
    assert parse_check(SHORT).to_json() == [{"ask": SHORT, "pass": 0.9}]


def test_rubric_pass_level_is_an_int() -> None:
    (question,) = parse_check([{"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 2.0}])
    assert isinstance(question, RubricQuestion)
    assert question.pass_level == 2
    assert type(question.pass_level) is int
    (full,) = parse_check([{"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 2.0}]).to_json()
    assert type(full["pass"]) is int


def test_choice_unsure_defaults_to_empty() -> None:
    (question,) = parse_check([{"ask": CHOICE_ASK, "one_of": ONE_OF, "pass": ["states"]}])
    assert isinstance(question, ChoiceQuestion)
    assert question.unsure == ()
    assert question.confidence == 0.8


def test_ask_is_kept_as_written() -> None:
    # Whitespace matters only for telling asks apart, not for what the evaluator is asked.
    check = parse_check([{"ask": "  Is the report\tcomplete? "}])
    assert check.asks == ("  Is the report\tcomplete? ",)


# --- Check as a sequence -------------------------------------------------------------------------


def test_check_is_a_sequence_of_questions() -> None:
    check = spec_check()
    assert isinstance(check, Sequence)
    assert len(check) == 3
    assert isinstance(check[0], YesNoQuestion)
    assert isinstance(check[1], ChoiceQuestion)
    assert isinstance(check[2], RubricQuestion)
    assert check[-1] is check[2]
    assert list(check) == list(check.questions)
    assert [question.ask for question in check] == [ASK, CHOICE_ASK, RUBRIC_ASK]
    assert check[1] in check
    assert check.index(check[2]) == 2
    assert list(reversed(check)) == [check[2], check[1], check[0]]
    with pytest.raises(IndexError):
        check[3]


def test_slicing_gives_the_questions() -> None:
    check = spec_check()
    assert list(check[1:]) == [check[1], check[2]]
    assert list(check[::-1]) == [check[2], check[1], check[0]]
    assert list(check[5:]) == []


def test_asks_in_order() -> None:
    assert spec_check().asks == (ASK, CHOICE_ASK, RUBRIC_ASK)
    assert parse_check(SHORT).asks == (SHORT,)


def test_choice_names_in_the_order_given() -> None:
    one_of = {"zeta": "Last letter.", "alpha": "First letter.", "mu": "Middle."}
    (question,) = parse_check([{"ask": CHOICE_ASK, "one_of": one_of, "pass": ["mu"]}])
    assert isinstance(question, ChoiceQuestion)
    assert question.names == ("zeta", "alpha", "mu")
    assert question.one_of == (
        ("zeta", "Last letter."),
        ("alpha", "First letter."),
        ("mu", "Middle."),
    )


def test_select_takes_questions_in_the_order_given() -> None:
    check = spec_check()
    picked = check.select([2, 0])
    assert isinstance(picked, Check)
    assert list(picked) == [check[2], check[0]]
    assert picked.asks == (RUBRIC_ASK, ASK)
    assert picked.to_json() == [check.to_json()[2], check.to_json()[0]]
    assert check.select(range(3)) == check
    assert check.select((1,)) == Check((check[1],))
    assert len(check) == 3  # the original is unchanged


def test_select_out_of_range() -> None:
    with pytest.raises(IndexError):
        spec_check().select([3])


# --- values --------------------------------------------------------------------------------------


def test_equal_keys_give_equal_checks() -> None:
    first, second = spec_check(), spec_check()
    assert first == second
    assert hash(first) == hash(second)
    assert len({first, second}) == 1
    assert {first: "x"}[second] == "x"
    short = parse_check(SHORT)
    assert short == parse_check([{"ask": SHORT}])
    assert short == parse_check([{"ask": SHORT, "pass": 0.9}])


@pytest.mark.parametrize(
    "other",
    [
        pytest.param([{**SPEC_FULL_FORM[0], "pass": 0.95}, *SPEC_FULL_FORM[1:]], id="pass"),
        pytest.param([{"ask": ASK, "pass": 0.9}, *SPEC_FULL_FORM[1:]], id="no-fail"),
        pytest.param(
            [SPEC_FULL_FORM[0], {**SPEC_FULL_FORM[1], "unsure": []}, SPEC_FULL_FORM[2]],
            id="unsure",
        ),
        pytest.param(
            [
                SPEC_FULL_FORM[0],
                {**SPEC_FULL_FORM[1], "one_of": dict(reversed(ONE_OF.items()))},
                SPEC_FULL_FORM[2],
            ],
            id="answer-order",
        ),
        pytest.param([*SPEC_FULL_FORM[:2], {**SPEC_FULL_FORM[2], "pass": 1}], id="level"),
        pytest.param(
            [*SPEC_FULL_FORM[:2], {**SPEC_FULL_FORM[2], "confidence": 0.7}], id="confidence"
        ),
        pytest.param(SPEC_FULL_FORM[:2], id="fewer-questions"),
        pytest.param([SPEC_FULL_FORM[1], SPEC_FULL_FORM[0], SPEC_FULL_FORM[2]], id="order"),
    ],
)
def test_different_keys_give_different_checks(other: list[dict[str, Any]]) -> None:
    assert parse_check(copy.deepcopy(other)) != spec_check()


def test_checks_and_questions_are_frozen() -> None:
    check = spec_check()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        check.questions = ()  # type: ignore[misc]
    yes_no, choice, rubric = check
    assert isinstance(yes_no, YesNoQuestion)
    assert isinstance(choice, ChoiceQuestion)
    assert isinstance(rubric, RubricQuestion)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        yes_no.pass_at = 0.1  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        choice.passing = ("hedges",)  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        rubric.pass_level = 0  # type: ignore[misc]
    assert check == spec_check()


def test_collections_are_tuples() -> None:
    question = ChoiceQuestion(
        ask=CHOICE_ASK, one_of=[("a", "A."), ("b", "B.")], passing=["a"], unsure=["b"]
    )
    assert question.one_of == (("a", "A."), ("b", "B."))
    assert question.passing == ("a",)
    assert question.unsure == ("b",)
    rubric = RubricQuestion(ask=RUBRIC_ASK, levels=["Bad.", "Good."], pass_level=1)
    assert rubric.levels == ("Bad.", "Good.")
    questions: list[Question] = [question, rubric]
    check = Check(questions)
    assert check.questions == (question, rubric)
    questions.clear()
    assert len(check) == 2


def test_questions_built_by_hand_match_parsed_ones() -> None:
    built = Check(
        [
            YesNoQuestion(ask=ASK, pass_at=0.9),
            ChoiceQuestion(ask=CHOICE_ASK, one_of=list(ONE_OF.items()), passing=["states"]),
            RubricQuestion(ask=RUBRIC_ASK, levels=LEVELS, pass_level=2),
        ]
    )
    parsed = parse_check(
        [
            {"ask": ASK},
            {"ask": CHOICE_ASK, "one_of": ONE_OF, "pass": ["states"]},
            {"ask": RUBRIC_ASK, "levels": LEVELS, "pass": 2},
        ]
    )
    assert built == parsed
    assert built.to_json() == parsed.to_json()


def test_a_check_keeps_its_invariants_however_it_is_built() -> None:
    check = parse_check("Is the report attached?")
    with pytest.raises(ValueError, match="at least one question"):
        check.select([])
    with pytest.raises(ValueError, match="must differ"):
        check.select([0, 0])
    with pytest.raises(ValueError, match="must differ"):
        Check((YesNoQuestion("Done?", 0.9), YesNoQuestion(" Done? ", 0.5)))
