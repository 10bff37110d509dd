"""The small helpers every message and threshold check relies on: ``show``, ``is_number``,
``is_probability``."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkprofile._convert import MAX_DEPTH, NotJson, is_number, is_probability, plain, plain_scalar
from checkprofile._shown import show
from support import json_like

# --- show -------------------------------------------------------------------------------------


class Widget:
    pass


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("abc", '"abc"', id="string-quoted"),
        pytest.param("", '""', id="empty-string"),
        pytest.param('say "hi"', '"say \\"hi\\""', id="quotes-escaped"),
        pytest.param("a\\b", '"a\\\\b"', id="backslash-escaped"),
        pytest.param("a\n\t  b", '"a\\n\\t  b"', id="line-breaks-and-tabs-escaped"),
        pytest.param("vendor-check\n", '"vendor-check\\n"', id="final-newline-named"),
        pytest.param("a\x85b\u2028c", '"a\\x85b\\u2028c"', id="unicode-line-breaks-escaped"),
        pytest.param("\u00a0x\u202e", '"\\xa0x\\u202e"', id="invisible-characters-escaped"),
        pytest.param("x\ud800", '"x\\ud800"', id="lone-surrogate-escaped"),
        pytest.param("Müller 😀", '"Müller 😀"', id="printable-text-as-it-is"),
        pytest.param("yes", '"yes"', id="yaml-word-stays-a-string"),
        pytest.param("0.9", '"0.9"', id="numeric-string-quoted"),
        pytest.param(None, "null", id="none-is-null"),
        pytest.param(True, "true", id="true"),
        pytest.param(False, "false", id="false"),
        pytest.param(0, "0", id="zero"),
        pytest.param(2, "2", id="integer"),
        pytest.param(0.5, "0.5", id="float"),
        pytest.param(2.0, "2.0", id="integral-float"),
        pytest.param(-0.1, "-0.1", id="negative"),
        pytest.param(math.nan, "nan", id="nan"),
        pytest.param(math.inf, "inf", id="inf"),
        pytest.param({}, "an empty map", id="empty-map"),
        pytest.param({"secret": "x" * 500}, "a map", id="map-contents-not-shown"),
        pytest.param([], "an empty list", id="empty-list"),
        pytest.param([1, 2, 3], "a list", id="list-contents-not-shown"),
        pytest.param((1,), "a tuple", id="tuple"),
        pytest.param(Widget(), "a Widget", id="other-object-by-type"),
    ],
)
def test_show(value: object, expected: str) -> None:
    assert show(value) == expected


def test_show_cuts_long_text_to_the_limit() -> None:
    text = show("x" * 500)
    assert len(text) == 60
    assert text == '"' + "x" * 58 + "…"
    assert show("x" * 500, limit=10) == '"xxxxxxxx…'


def test_show_keeps_text_that_just_fits() -> None:
    exactly = "x" * 58  # 58 characters plus two quotes: exactly 60
    assert show(exactly) == f'"{exactly}"'
    assert show("x" * 59).endswith("…")


def test_show_describes_a_huge_integer_by_its_size() -> None:
    # repr() refuses ints of over 4,300 digits; a size says more than a cut-off digit string.
    assert show(10**400) == "an integer of about 401 digits"
    assert show(-(10**5000)) == "an integer of about 5001 digits"
    assert show(10**59) == repr(10**59)


@given(json_like, st.integers(min_value=2, max_value=80))
def test_show_is_short_and_on_one_line(value: object, limit: int) -> None:
    text = show(value, limit)
    assert 0 < len(text) <= limit
    assert "\n" not in text
    assert "\r" not in text
    assert "  " not in text


@given(st.text(max_size=40))
def test_show_quotes_every_short_string(text: str) -> None:
    shown = show(text, limit=1000)
    assert shown.startswith('"')
    assert shown.endswith('"')


# --- is_number, is_probability ----------------------------------------------------------------

NOT_NUMBERS = [
    pytest.param(True, id="true"),
    pytest.param(False, id="false"),
    pytest.param("1", id="string"),
    pytest.param(None, id="none"),
    pytest.param([0.5], id="list"),
    pytest.param(Decimal("0.5"), id="decimal"),
    pytest.param(Fraction(1, 2), id="fraction"),
    pytest.param(complex(0.5, 0), id="complex"),
]


@pytest.mark.parametrize(
    "value",
    [0, 1, -3, 10**400, 0.5, -0.0, math.nan, math.inf, -math.inf],
    ids=["0", "1", "-3", "huge-int", "0.5", "-0.0", "nan", "inf", "-inf"],
)
def test_is_number_accepts_ints_and_floats(value: object) -> None:
    assert is_number(value)


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_is_number_rejects_bools_and_non_numbers(value: object) -> None:
    assert not is_number(value)


@pytest.mark.parametrize(
    "value",
    [0, 1, 0.0, 1.0, -0.0, 0.5, 5e-324, math.nextafter(1.0, 0.0)],
    ids=["0", "1", "0.0", "1.0", "-0.0", "0.5", "smallest", "just-below-1"],
)
def test_is_probability_accepts_finite_numbers_in_0_1(value: object) -> None:
    assert is_probability(value)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(math.nan, id="nan"),
        pytest.param(math.inf, id="inf"),
        pytest.param(-math.inf, id="-inf"),
        pytest.param(-0.1, id="negative"),
        pytest.param(-5e-324, id="just-below-0"),
        pytest.param(math.nextafter(1.0, 2.0), id="just-above-1"),
        pytest.param(2, id="integer-2"),
        pytest.param(-1, id="integer-minus-1"),
        pytest.param(10**400, id="huge-integer"),
        pytest.param(-(10**400), id="huge-negative-integer"),
        *NOT_NUMBERS,
    ],
)
def test_is_probability_rejects_everything_else(value: object) -> None:
    assert not is_probability(value)


@given(json_like)
def test_is_probability_means_a_finite_number_in_0_1(value: object) -> None:
    expected = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and (isinstance(value, int) or math.isfinite(value))
        and 0 <= value <= 1
    )
    assert is_probability(value) == expected


# --- plain: what every value crossing the API goes through -----------------------------------


class Liar(float):
    def __ge__(self, other: object) -> bool:
        return True

    def __float__(self) -> float:
        return 0.99


def test_plain_data_comes_back_as_the_same_object() -> None:
    value = {"a": [1, 2.5, "x", None, True, {"b": []}]}
    assert plain(value) is value


def test_a_subclass_is_read_as_its_plain_value_by_its_base_type() -> None:
    class Text(str):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = str.__hash__

    class Map(dict[str, object]):
        def items(self) -> Any:  # never called: the dict's own items are read
            raise RuntimeError("lied")

    got = plain(Map({Text("k"): [Liar(0.2), Text("v")]}))
    assert got == {"k": [0.2, "v"]}
    assert type(got) is dict and type(next(iter(got))) is str
    assert type(got["k"][0]) is float and type(got["k"][1]) is str


def test_ruamel_scalar_boolean_is_the_bool_it_stands_for() -> None:
    from ruamel.yaml.scalarbool import ScalarBoolean

    assert plain([ScalarBoolean(True), ScalarBoolean(False)]) == [True, False]
    assert [type(item) for item in plain([ScalarBoolean(True)])] == [bool]


@pytest.mark.parametrize(
    ("value", "pointer", "words"),
    [
        pytest.param({"a": (1, 2)}, "/a", "a tuple is not JSON data", id="tuple"),
        pytest.param([Decimal("1")], "/0", "a Decimal is not JSON data", id="decimal"),
        pytest.param({"a": {1: "x"}}, "/a/1", "the key 1 is not text", id="int-key"),
        pytest.param({"a": [math.nan]}, "/a/0", "nan is not a JSON number", id="nan"),
        pytest.param({"x": [[[]]]}, "/x", "", id="fine"),
    ],
)
def test_plain_refuses_what_is_not_json_naming_where(value: Any, pointer: str, words: str) -> None:
    if not words:
        assert plain(value) == value
        return
    with pytest.raises(NotJson) as caught:
        plain(value)
    assert caught.value.pointer == pointer and words in caught.value.reason


def test_plain_refuses_a_value_that_contains_itself() -> None:
    loop: list[Any] = [1]
    loop.append({"again": loop})
    with pytest.raises(NotJson, match="contains itself") as caught:
        plain(loop)
    assert caught.value.pointer == "/1/again"


def test_plain_refuses_nesting_deeper_than_its_limit() -> None:
    deep: Any = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(NotJson, match=f"nested more than {MAX_DEPTH} levels deep"):
        plain(deep)
    shallow: Any = []
    for _ in range(MAX_DEPTH):
        shallow = [shallow]
    assert plain(shallow) is shallow


def test_plain_walks_a_shared_part_once_and_refuses_a_bomb() -> None:
    shared = {"text": "x" * 100}
    assert plain([shared] * 1000)[999] is shared  # 100 KB repeated: fine, walked once
    bomb: Any = ["lol"] * 10
    for _ in range(30):  # 10 ** 31 values, in 31 objects
        bomb = [bomb] * 10
    with pytest.raises(NotJson, match="repeat it to more than 10,000,000"):
        plain(bomb)


def test_two_keys_that_are_the_same_text_are_refused() -> None:
    class Key(str):
        def __hash__(self) -> int:
            return id(self)

        def __eq__(self, other: object) -> bool:
            return self is other

    with pytest.raises(NotJson, match='the key "a" appears twice'):
        plain({Key("a"): 1, Key("a"): 2})


def test_plain_scalar_keeps_what_it_cannot_read_for_the_check_after_it() -> None:
    assert plain_scalar(Liar(0.2)) == 0.2 and type(plain_scalar(Liar(0.2))) is float
    odd = object()
    assert plain_scalar(odd) is odd
