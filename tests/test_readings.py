"""Readings the profile and the design leave open, as docs/conformance.md decides them.

Each is a rule an implementation in another language must be able to follow from the page
alone, so each is tested here against an oracle that does not use the code under test:

* whitespace is Unicode's ``White_Space`` property, derived here from the Unicode database
  (``Zs``, ``Zl``, ``Zp``, U+0009-U+000D and U+0085, as PropList.txt defines it);
* a step's age reads RFC 3339 ``date-time`` exactly (``t``/``z``, ``:60``, ``-00:00``, ASCII
  digits only), checked against :mod:`datetime` where it can represent the instant;
* a valid check key's full form is a fixed point under every valid ``Limits``, near the
  limits too, and ``Limits`` refuses a default fail above the default pass.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from datetime import datetime, timedelta
from fractions import Fraction
from functools import cache
from typing import Any

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from checkprofile import (
    Limits,
    LimitsError,
    Material,
    Submission,
    Verdict,
    YesNoAnswer,
    build_bundle,
    check_schema,
    combine,
    issue_lines,
    parse_check,
    submission_problems,
    validate_check,
    verdict_schema,
)
from checkprofile._shown import NON_BLANK_PATTERN, WHITESPACE, WHITESPACE_CLASS, is_blank, one_line
from checkprofile._time import instant as _instant
from checkprofile.testing.strategies import check_keys, limits, probabilities

# -- whitespace ---------------------------------------------------------------------------------


@cache
def white_space() -> frozenset[str]:
    """Unicode's White_Space property, from the database Python ships (PropList.txt's rule)."""
    return frozenset(
        char
        for char in map(chr, range(sys.maxunicode + 1))
        if unicodedata.category(char) in ("Zs", "Zl", "Zp") or char in "\t\n\v\f\r\x85"
    )


#: Characters other definitions call whitespace, or that look like it, but White_Space does not:
#: Python's str.isspace takes U+001C-U+001F, JavaScript's \s takes U+FEFF; U+200B, U+180E and
#: U+2060 are format characters.
NOT_WHITESPACE = "\x1c\x1d\x1e\x1f\ufeff\u200b\u180e\u2060"


def oracle_one_line(text: str) -> str:
    words, word = [], ""
    for char in text:
        if char in white_space():
            if word:
                words.append(word)
            word = ""
        else:
            word += char
    if word:
        words.append(word)
    return " ".join(words)


def test_whitespace_is_exactly_unicodes_white_space_property() -> None:
    assert frozenset(WHITESPACE) == white_space()
    assert len(WHITESPACE) == len(white_space()) == 25
    # The regular-expression class names the same 25 code points, in Python's re and in the
    # ECMA-262 subset it is written in (ranges and \uXXXX escapes only).
    pattern = re.compile(f"[{WHITESPACE_CLASS}]")
    matched = {char for char in map(chr, range(sys.maxunicode + 1)) if pattern.fullmatch(char)}
    assert matched == white_space()
    assert re.fullmatch(r"(\\[tr]|\\u[0-9a-f]{4}|[ -])+", WHITESPACE_CLASS)


@pytest.mark.parametrize("char", NOT_WHITESPACE, ids=lambda c: f"U+{ord(c):04X}")
def test_look_alikes_are_not_whitespace(char: str) -> None:
    assert not is_blank(char)
    assert one_line(f"a{char}b") == f"a{char}b"
    assert validate_check(char) == ()
    assert validate_check([{"ask": char}]) == ()


@pytest.mark.parametrize("char", sorted(white_space()), ids=lambda c: f"U+{ord(c):04X}")
def test_every_white_space_code_point_is_blank_and_collapses(char: str) -> None:
    assert is_blank(char * 3)
    assert one_line(f"{char}a{char}{char}b{char}") == "a b"
    assert [p.pointer for p in validate_check(char)] == [""]
    assert [p.pointer for p in validate_check([{"ask": char}])] == ["/0/ask"]
    same = validate_check([{"ask": "Is it done?"}, {"ask": f"Is it{char}done?"}])
    assert [p.pointer for p in same] == ["/1/ask"]


@given(st.text(alphabet=st.sampled_from([*WHITESPACE, *NOT_WHITESPACE, "a", "é", "\U0001f600"])))
def test_blank_and_one_line_agree_with_the_oracle(text: str) -> None:
    assert is_blank(text) == (oracle_one_line(text) == "")
    assert one_line(text) == oracle_one_line(text)
    assert one_line(one_line(text)) == one_line(text)


@given(st.text(alphabet=st.sampled_from([*WHITESPACE, *NOT_WHITESPACE, "a", "\x00"]), max_size=6))
def test_the_shipped_schemas_say_non_blank_as_the_validator_does(text: str) -> None:
    # check.schema.json's "text" and verdict.schema.json's "model" use the same definition, so
    # an outside validator of the schema and validate_check agree on every text.
    checks = jsonschema.Draft202012Validator(check_schema())
    assert checks.is_valid(text) == (not is_blank(text)) == (validate_check(text) == ())
    assert checks.is_valid([{"ask": text}]) == (not is_blank(text))
    record = {
        "verdict": "pass",
        "advisory": False,
        "model": text,
        "questions": [{"ask": "Q?", "kind": "yes_no", "answer": 1, "result": "pass"}],
        "at": "2026-10-06T09:04:20Z",
    }
    verdicts = jsonschema.Draft202012Validator(verdict_schema())
    assert verdicts.is_valid(record) == (not is_blank(text))


def patterns(schema: object) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
        return own + [p for value in schema.values() for p in patterns(value)]
    if isinstance(schema, list):
        return [p for value in schema for p in patterns(value)]
    return []


def test_the_schema_patterns_are_the_one_definition() -> None:
    nonblank = NON_BLANK_PATTERN
    assert nonblank == f"[^{WHITESPACE_CLASS}]"
    # No pattern says \s or \S, which mean different sets in Python and ECMA-262; [\s\S],
    # any character, means the same in both (it ends a pattern at the end of the text, where
    # Python's $ would also match before a final newline).
    assert [
        p
        for p in patterns(check_schema()) + patterns(verdict_schema())
        if "\\s" in p.replace("[\\s\\S]", "").lower()
    ] == []
    assert check_schema()["$defs"]["text"]["pattern"] == nonblank
    assert check_schema()["$defs"]["short"]["pattern"] == nonblank
    assert verdict_schema()["properties"]["model"]["pattern"] == nonblank


@pytest.mark.parametrize("char", ["\x1c", "\ufeff"], ids=["U+001C", "U+FEFF"])
def test_a_model_named_by_a_look_alike_is_a_model(char: str) -> None:
    check = parse_check("Is it done?")
    verdict = combine(check, [YesNoAnswer(0.9)], model=char, at="2026-10-06T09:04:20Z")
    assert Verdict.from_json(verdict.to_json()).model == char


def test_a_model_of_white_space_only_is_refused() -> None:
    check = parse_check("Is it done?")
    with pytest.raises(ValueError, match="model must name what answered"):
        combine(check, [YesNoAnswer(0.9)], model="\x85\u3000", at="2026-10-06T09:04:20Z")


@pytest.mark.parametrize(("first", "second"), [("\u200b", "\u2060"), ("\ufeff", "\u180e\u200b")])
def test_texts_of_invisible_characters_alone_repeat_alike_everywhere(
    first: str, second: str
) -> None:
    # Not blank, and both read as nothing: two such asks, answer names or level texts are one
    # text read twice, in every place the rule applies (levels once let them through).
    one_of = {first: "Hidden.", second: "Also hidden.", "fine": "Fine."}
    check = [
        {"ask": first},
        {"ask": second},
        {"ask": "Tone?", "one_of": one_of, "pass": ["fine"]},
        {"ask": "How far?", "levels": [first, second, "All."], "pass": 2},
    ]
    pointers = [problem.pointer for problem in validate_check(check)]
    assert pointers == ["/1/ask", f"/2/one_of/{second}", "/3/levels/1"]


def test_blank_texts_take_no_part_in_repeats() -> None:
    # A blank name or level is one problem, its own: never also a repeat of another blank.
    one_of = {" ": "Blank.", "\u3000": "Blank too.", "fine": "Fine."}
    check = [
        {"ask": "Tone?", "one_of": one_of, "pass": ["fine"]},
        {"ask": "How far?", "levels": [" ", "\t", "All."], "pass": 2},
    ]
    pointers = [problem.pointer for problem in validate_check(check)]
    assert pointers == ["/0/one_of/ ", "/0/one_of/\u3000", "/1/levels/0", "/1/levels/1"]


def test_issue_lines_collapse_exactly_white_space() -> None:
    ask = "\u3000Is\x85the\xa0report\ufeffattached?\x1c "
    check = parse_check([{"ask": ask}])
    verdict = combine(check, [YesNoAnswer(0.1)], model="m", at="2026-10-06T09:04:20Z")
    assert verdict.to_json()["questions"][0]["ask"] == ask  # the record keeps it as written
    assert issue_lines(verdict) == ("check: Is the report\ufeffattached?\x1c → no (0.1)",)


@pytest.mark.parametrize(
    "text",
    [" ", "\u3000\n", "\u200b", "\ufeff\u2060", "\u180e \u200b"],
    ids=["space", "ideographic-space", "zwsp", "bom-word-joiner", "invisible-and-space"],
)
def test_a_submissions_blank_or_invisible_texts_are_kept_and_shown_as_submitted(
    text: str,
) -> None:
    # "A blank or invisible text in a submission": a submission has no blank rule. core-2
    # bounds its texts by length only, so an agent's whitespace-only or zero-width summary is
    # a submission, and the evaluator is shown exactly what was sent.
    raw = {
        "output": {"done": True},
        "summary": text,
        "evidence": [{"kind": "file", "ref": text}],
        "reason": text,
    }
    assert submission_problems(raw, agent=True) == ()
    submission = Submission.from_json(raw, agent=True)
    assert (submission.summary, submission.reason, submission.evidence[0].ref) == (text,) * 3
    material = Material("Check it.", "# Body\n", {"inputs": {}, "steps": {}}, submission)
    bundle = build_bundle(parse_check("Is it done?"), material, state_bytes=1000)
    shown = json.loads(bundle.submission_json)
    assert (shown["summary"], shown["evidence"][0]["ref"]) == (text, text)
    # Only an empty one is refused, by its length (shapes/submission-agent-summary).
    empty = submission_problems({**raw, "summary": ""}, agent=True)
    assert [problem.pointer for problem in empty] == ["/summary"]


# -- step ages ----------------------------------------------------------------------------------


def oracle_instant(text: str) -> tuple[datetime, Fraction]:
    """The instant of an RFC 3339 date-time that datetime can represent (years 1-9999, no leap
    second), as the UTC moment to the second and the exact fraction of a second after it."""
    found = re.fullmatch(r"(.{10}).(.{8})(\.[0-9]+)?(.+)", text)
    assert found is not None
    day, time, fraction, zone = found.groups()
    moment = datetime.fromisoformat(f"{day}T{time}")
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return moment, Fraction("0" + fraction) if fraction else Fraction(0)


moments = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))
zones = st.sampled_from(["Z", "z", "+00:00", "-00:00", "+01:00", "-05:30", "+14:00", "-23:59"])


@st.composite
def stamps(draw: st.DrawFn) -> str:
    moment = draw(moments)
    text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}" + draw(st.sampled_from("Tt"))
    text += f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    if draw(st.booleans()):
        text += "." + str(draw(st.integers(0, 999999))).rjust(draw(st.integers(1, 9)), "0")
    return text + draw(zones)


@given(stamps(), stamps())
def test_ages_order_as_the_instants_do(a: str, b: str) -> None:
    key_a, key_b = _instant(a), _instant(b)
    when_a, when_b = oracle_instant(a), oracle_instant(b)
    assert key_a is not None and key_b is not None
    assert (key_a < key_b) == (when_a < when_b)
    assert (key_a == key_b) == (when_a == when_b)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        pytest.param("2026-12-31T23:59:59Z", "2026-12-31T23:59:60Z", id="leap-after-59"),
        pytest.param("2026-12-31T23:59:60Z", "2027-01-01T00:00:00Z", id="leap-before-next-minute"),
        pytest.param("2026-12-31T23:59:60.5Z", "2027-01-01T00:00:00Z", id="leap-fraction"),
        pytest.param("2026-10-06T09:00:00Z", "2026-10-06t10:00:00z", id="lower-case-t-z"),
        pytest.param("0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00Z", id="into-year-0"),
        pytest.param("0000-01-01T00:30:00+01:00", "0000-01-01T00:00:00Z", id="into-year-minus-1"),
        pytest.param("9999-12-31T23:59:59Z", "9999-12-31T23:00:00-02:00", id="into-year-10000"),
        pytest.param("0000-02-29T00:00:00Z", "0000-03-01T00:00:00Z", id="year-0-is-leap"),
    ],
)
def test_edges_of_rfc_3339_order_in_time(older: str, newer: str) -> None:
    key_older, key_newer = _instant(older), _instant(newer)
    assert key_older is not None and key_newer is not None
    assert key_older < key_newer


@pytest.mark.parametrize(
    ("one", "other"),
    [
        pytest.param("2026-10-06T09:00:00-00:00", "2026-10-06T09:00:00Z", id="minus-zero-is-z"),
        pytest.param("2026-10-06T09:00:00+00:00", "2026-10-06t09:00:00z", id="plus-zero-is-z"),
        pytest.param("2026-10-06T09:00:00.500Z", "2026-10-06T09:00:00.5Z", id="fraction-zeros"),
        pytest.param("2026-10-06T09:00:00.000Z", "2026-10-06T09:00:00Z", id="zero-fraction"),
        pytest.param("2026-10-07T00:59:60+01:00", "2026-10-06T23:59:60Z", id="leap-offset"),
    ],
)
def test_the_same_instant_is_the_same_age(one: str, other: str) -> None:
    assert _instant(one) == _instant(other) is not None


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("2026-10-06 09:00:00Z", id="space-separator"),
        pytest.param("2026-10-06T09:00:00", id="no-zone"),
        pytest.param("2026-10-06T09:00Z", id="no-seconds"),
        pytest.param("2026-10-06T09:00:00+0100", id="offset-without-colon"),
        pytest.param("2026-10-06T09:00:00+24:00", id="offset-hour-24"),
        pytest.param("2026-10-06T09:00:61Z", id="second-61"),
        pytest.param("2026-10-06T24:00:00Z", id="hour-24"),
        pytest.param("2026-02-29T09:00:00Z", id="29-february-common-year"),
        pytest.param("1900-02-29T09:00:00Z", id="29-february-1900"),
        pytest.param("2026-04-31T09:00:00+02:00", id="31-april-with-offset"),
        pytest.param("2026-10-06T09:00:00.Z", id="empty-fraction"),
        pytest.param("2026-10-06T09:00:00Z\n", id="trailing-newline"),
        pytest.param(" 2026-10-06T09:00:00Z", id="leading-space"),
        pytest.param("+2026-10-06T09:00:00Z", id="signed-year"),
        pytest.param("20261-10-06T09:00:00Z", id="five-digit-year"),
    ],
)
def test_what_is_not_rfc_3339_has_no_age(text: str) -> None:
    assert _instant(text) is None


#: Every script's decimal digits except ASCII's: none of them makes a timestamp.
OTHER_DIGITS = [
    char for char in map(chr, range(0x80, sys.maxunicode + 1)) if unicodedata.category(char) == "Nd"
]


@given(stamps(), st.data())
def test_digits_of_other_scripts_never_count(text: str, data: st.DataObject) -> None:
    places = [i for i, char in enumerate(text) if char.isdigit()]
    place = data.draw(st.sampled_from(places))
    digit = data.draw(
        st.sampled_from([c for c in OTHER_DIGITS if unicodedata.digit(c) == int(text[place])])
    )
    assert _instant(text[:place] + digit + text[place + 1 :]) is None


@given(st.text(alphabet="0123456789-:.+TtZz \u0660\uff10", max_size=40))
@example("0000-01-01T00:00:00+23:59")
@example("9999-12-31T23:59:60.9-23:59")
def test_no_at_ever_raises(text: str) -> None:
    # Hostile run data: whatever `at` says, the bundle is built (an unreadable one is oldest).
    run = {"steps": {"a": {"at": text, "output": 1}, "b": {"at": "2026-10-06T09:00:00Z"}}}
    material = Material("Check.", "# Body\n", run, Submission({}))
    bundle = build_bundle(parse_check("Is it done?"), material, state_bytes=40)
    assert bundle.run_data_bytes <= 40


# -- the full form is a fixed point under every valid Limits ------------------------------------


def valid_keys() -> st.SearchStrategy[tuple[Any, Limits]]:
    """A check key valid under the limits drawn with it: short or full form, every kind, the
    thresholds at the edges of [0, 1], texts with whitespace of every kind."""
    return limits().flatmap(lambda chosen: st.tuples(check_keys(limits=chosen), st.just(chosen)))


@given(valid_keys())
def test_the_full_form_is_a_fixed_point_under_its_limits(case: tuple[Any, Limits]) -> None:
    raw, limits = case
    snapshot = json.dumps(raw)
    assert validate_check(raw, limits=limits) == ()
    check = parse_check(raw, limits=limits)
    full = check.to_json()
    assert jsonschema.Draft202012Validator(check_schema()).is_valid(full)
    again = parse_check(full, limits=limits)
    assert again == check
    assert again.to_json() == full
    # Through JSON text too, as another implementation would read it.
    assert parse_check(json.loads(json.dumps(full)), limits=limits).to_json() == full
    assert json.dumps(raw) == snapshot  # normalizing changes nothing the host holds


@given(probabilities(), probabilities())
def test_limits_refuse_a_default_fail_above_the_default_pass(
    check_pass: float, check_fail: float
) -> None:
    data = {"checkPass": check_pass, "checkFail": check_fail}
    if check_fail > check_pass:
        with pytest.raises(LimitsError) as caught:
            Limits.from_json(data)
        assert "checkFail" in str(caught.value) and "checkPass" in str(caught.value)
    else:
        limits = Limits.from_json(data)
        # Every question that sets neither threshold normalizes to a fixed point.
        full = parse_check("Is it done?", limits=limits).to_json()
        assert full == [{"ask": "Is it done?", "pass": check_pass, "fail": check_fail}]
        assert parse_check(full, limits=limits).to_json() == full
