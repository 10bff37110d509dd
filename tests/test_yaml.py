"""The YAML 1.2 core-schema reader: values, keys, positions, and what it refuses."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkprofile._yaml import MAX_DEPTH, MAX_NODES, Mark, YamlError, load_yaml


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # YAML 1.1 booleans are plain strings in the core schema: the reason this reader exists.
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("Y", "Y"),
        ("true", True),
        ("False", False),
        ("TRUE", True),
        ("~", None),
        ("null", None),
        ("", None),
        ("017", 17),  # no octal without 0o
        ("0o17", 15),
        ("0x1F", 31),
        ("-3", -3),
        ("1_000", "1_000"),  # underscores are YAML 1.1
        ("0.5", 0.5),
        ("1e3", 1000.0),
        (".5", 0.5),
        ("-.inf", -math.inf),
        ("2026-10-06", "2026-10-06"),  # no timestamps in the core schema
        ("12:30", "12:30"),  # no sexagesimal numbers either
        ("'true'", "true"),
        ('"0.9"', "0.9"),
        ("!!str 5", "5"),
        ("!!float 1", 1.0),
        ("!!int '7'", 7),
        ("!!bool true", True),
        ("!!null ~", None),
    ],
)
def test_scalars_resolve_by_the_core_schema(text: str, value: Any) -> None:
    data = load_yaml(f"key: {text}\n").data
    assert data == {"key": value}
    assert type(data["key"]) is type(value)


def test_nan_is_a_float() -> None:
    assert math.isnan(load_yaml("x: .nan").data["x"])


def test_keys_are_always_text() -> None:
    data = load_yaml("1: one\ntrue: t\nnull: n\nyes: y\n").data
    assert data == {"1": "one", "true": "t", "null": "n", "yes": "y"}


def test_aliases_share_their_anchor_value() -> None:
    data = load_yaml("a: &x [1, 2]\nb: *x\nc: &k name\n*k : 3\n").data
    assert data == {"a": [1, 2], "b": [1, 2], "c": "name", "name": 3}


def test_block_scalars_are_strings_as_written() -> None:
    assert load_yaml("a: |\n  one\n  two\nb: >-\n  x\n  y\n").data == {
        "a": "one\ntwo\n",
        "b": "x y",
    }


def test_an_empty_document_is_null() -> None:
    assert load_yaml("").data is None
    assert load_yaml("# only a comment\n").data is None


def test_every_key_and_value_keeps_where_it_starts() -> None:
    document = load_yaml(
        "steps:\n"  # line 1
        "  - id: one\n"  # line 2
        "    check:\n"  # line 3
        "      - ask: A?\n"  # line 4
        "        pass: 0.9\n"  # line 5
        "      - B?\n",  # line 6
    )
    assert document.locate(("steps",), key=True) == Mark(1, 1)
    assert document.locate(("steps", 0, "id")) == Mark(2, 9)
    assert document.locate(("steps", 0, "id"), key=True) == Mark(2, 5)
    assert document.locate(("steps", 0, "check", 0, "pass")) == Mark(5, 15)
    assert document.locate(("steps", 0, "check", 0, "pass"), key=True) == Mark(5, 9)
    assert document.locate(("steps", 0, "check", 1)) == Mark(6, 9)  # a list item


def test_a_missing_path_is_placed_at_its_nearest_ancestor() -> None:
    document = load_yaml("a:\n  b: 1\n")
    assert document.locate(("a", "nope", 3)) == document.locate(("a",))
    # A key position is asked for, but an index has none: its value is given.
    assert document.locate(("a", "b"), key=True) == Mark(2, 3)


def test_line_offset_gives_the_files_own_lines() -> None:
    document = load_yaml("a: 1\n", line_offset=4)
    assert document.locate(("a",)) == Mark(5, 4)
    with pytest.raises(YamlError) as caught:
        load_yaml("a: 1\na: 2\n", line_offset=4)
    assert caught.value.mark == Mark(6, 1)


@pytest.mark.parametrize(
    ("text", "mark", "message"),
    [
        pytest.param(
            "a: 1\nb: 2\na: 3\n",
            Mark(3, 1),
            'duplicate key "a" (first at line 1, column 1)',
            id="duplicate-key",
        ),
        pytest.param(
            "x:\n  - {k: 1, k: 2}\n", Mark(2, 12), 'duplicate key "k"', id="duplicate-in-list-item"
        ),
        pytest.param(
            "1: a\n'1': b\n", Mark(2, 1), 'duplicate key "1"', id="duplicate-after-text-keys"
        ),
        pytest.param("? [a]\n: b\n", Mark(1, 3), "a key must be plain text", id="list-as-key"),
        pytest.param(
            "a: !!timestamp 2020-01-01\n",
            Mark(1, 4),
            'the tag "!!timestamp" is not allowed',
            id="timestamp-tag",
        ),
        pytest.param(
            "a: !custom 3\n", Mark(1, 4), 'the tag "!custom" is not allowed', id="custom-tag"
        ),
        pytest.param(
            "a: !!set {x}\n", Mark(1, 4), 'the tag "!!set" is not allowed on a map', id="set-tag"
        ),
        pytest.param("a: !!int abc\n", Mark(1, 4), '"abc" is not a valid !!int', id="bad-int-tag"),
        pytest.param("a: *nowhere\n", Mark(1, 4), 'unknown alias "*nowhere"', id="unknown-alias"),
        pytest.param("a: [1, 2\n", None, "", id="unclosed-flow"),
        pytest.param(
            "a: 1\n---\nb: 2\n", Mark(2, 1), "expected one YAML document", id="two-documents"
        ),
        pytest.param(
            "a: b: c\n", Mark(1, 5), "mapping values are not allowed here", id="bad-syntax"
        ),
    ],
)
def test_what_it_refuses_is_named_with_where(text: str, mark: Mark | None, message: str) -> None:
    with pytest.raises(YamlError) as caught:
        load_yaml(text)
    assert message in caught.value.message
    assert "\n" not in caught.value.message
    if mark is not None:
        assert caught.value.mark == mark
    else:
        assert caught.value.mark is not None


def test_an_alias_bomb_is_refused_not_expanded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    with pytest.raises(YamlError, match=f"more than {MAX_NODES:,} values"):
        load_yaml("\n".join(lines))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: " + "[" * 3000 + "]" * 3000, id="flow"),
        pytest.param("".join("  " * i + "-\n" for i in range(3000)), id="block"),
    ],
)
def test_deep_nesting_is_refused_not_a_crash(text: str) -> None:
    with pytest.raises(YamlError, match=f"nested more than {MAX_DEPTH} levels deep"):
        load_yaml(text)


def test_nesting_up_to_the_limit_reads() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    data = load_yaml(text).data
    for _ in range(MAX_DEPTH - 1):
        data = data[0]
    assert data == []


def test_an_int_too_long_for_python_stays_text() -> None:
    digits = "9" * 5000
    assert load_yaml(f"a: {digits}").data == {"a": digits}


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(
        st.text(max_size=8), children, max_size=4
    )


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    _containers,
    max_leaves=20,
)


@given(json_values)
def test_json_reads_as_the_same_data(value: Any) -> None:
    # JSON is YAML 1.2: a submission or answers file may be either.
    import json

    assert load_yaml(json.dumps(value)).data == value


# --- YAML 1.2's line breaks: LF, CR LF and CR only ---------------------------------------------


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029"], ids=["NEL", "LS", "PS"])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('a: "x{c}y"\nb: 1\n', "x{c}y", id="double-quoted"),
        pytest.param("a: 'x{c}y'\nb: 1\n", "x{c}y", id="single-quoted"),
        pytest.param("a: x{c}y\nb: 1\n", "x{c}y", id="plain"),
        pytest.param("a: |\n  x{c}y\nb: 1\n", "x{c}y\n", id="literal"),
    ],
)
def test_nel_and_the_separators_are_characters_as_yaml_1_2_says(
    char: str, text: str, expected: str
) -> None:
    # YAML 1.1 broke lines at them (and folded the break into a space inside quotes); in 1.2
    # they are characters like any other, and no line of the file ends at them.
    document = load_yaml(text.format(c=char))
    assert document.data["a"] == expected.format(c=char)
    assert document.locate(("b",)) == Mark(2 if "|" not in text else 3, 4)


def test_a_key_keeps_its_separator_and_a_private_character_stays_itself() -> None:
    # The separators are read through private-use stand-ins the text does not contain.
    document = load_yaml("\ue000a\u2028: \ue001\n")
    assert document.data == {"\ue000a\u2028": "\ue001"}


def test_an_alias_of_a_long_text_repeated_is_refused() -> None:
    text = "a: &a " + "x" * 1000 + "\nb: [" + ", ".join(["*a"] * 20_000) + "]\n"
    with pytest.raises(YamlError, match="aliases repeat more than 10,000,000 characters"):
        load_yaml(text)
