"""The fast reading's ceilings and its one code generator (checkprofile/human/_audit/_fast).

The fast reader never costs more than the strict one, on any input (issue 34, findings 7 and
8): no pattern whose depth grows with a check (a choice of thousands of names is recorded and
read back), a line past a size or a check past the count a reader learns goes the strict way,
and what a reader keeps stays bounded. These tests assert the route a line takes and what it
reads, never a time (benchmarks/bench_audit_hostile.py compares the times).

The tail reader's code is made from a check's shape alone: its source can be printed
(:func:`tail_source`), shows in a traceback, and no text of a record changes it."""

from __future__ import annotations

import ast
import linecache
import random
import traceback
from pathlib import Path
from typing import Any

import pytest
from bench_audit_hostile import choice_check, one_answer, verdict_of
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from checkprofile import (
    Check,
    parse_check,
)
from checkprofile.errors import CheckError
from checkprofile.human import JsonLinesRecorder, VerdictRecord, read_records
from checkprofile.human._audit._fast import _tail
from checkprofile.human._audit._fast._reader import FAST_LINE, _Reader
from checkprofile.human._audit._fast._tail import tail_reader, tail_source
from checkprofile.human._audit._fast._verdicts import VerdictFacts, _Checks
from checkprofile.human._audit._recorders import record_line
from checkprofile.human._audit._records import check_key


def yes_no_check(ask: str) -> Check:
    return parse_check([{"ask": ask, "fail": 0.5}])


def record_of(check: Check, rng: random.Random) -> VerdictRecord:
    """A verdict record of ``check`` (one question) as the library makes it: a choice answered
    with a distribution over every name, a yes/no with its probability."""
    return verdict_of(check, (one_answer(check, rng),))


def read_both(lines: list[bytes]) -> list[Any]:
    """What a fast reader reads of ``lines`` (facts or records, by route), after checking
    that each is the record the strict reader reads."""
    fast, strict = _Reader(), _Reader(fast=False)
    read = []
    for number, line in enumerate(lines, 1):
        got = fast.read("audit.jsonl", number, line.rstrip(b"\n"))
        record = got.record() if isinstance(got, VerdictFacts) else got
        assert record == strict.line("audit.jsonl", number, line.rstrip(b"\n"))
        read.append(got)
    return read


# --- finding 7: no pattern whose depth grows with a check --------------------------------------


@pytest.mark.parametrize("names", [500, 2000])
def test_a_verdict_of_a_choice_of_many_names_is_recorded_and_read_back_fast(
    tmp_path: Path, names: int
) -> None:
    check, rng = choice_check(names), random.Random(names)
    records = [record_of(check, rng) for _ in range(_Checks.TAIL_AFTER + 2)]
    path = tmp_path / "audit.jsonl"
    recorder = JsonLinesRecorder(path)
    for record in records:
        recorder.record(record)  # read back before written: no RecursionError
    assert read_records(path) == tuple(records)
    lines = path.read_bytes().splitlines()
    for line, got in zip(lines, read_both(lines), strict=True):
        # Within the bound, every line fast (the last ones by the check's tail reader).
        assert isinstance(got, VerdictFacts) == (len(line) <= FAST_LINE)
    assert len(lines[0]) <= FAST_LINE or names > 500


def test_the_tail_patterns_depth_is_the_same_for_a_check_of_any_size() -> None:
    """The pattern's groups and nesting do not grow with a question's names past the few
    whose pairs it catches one by one: the source of a choice of 9 names and of 3,000 differ
    only in constants."""
    small = tail_source(choice_check(_tail._PAIRS_CAUGHT + 1))
    large = tail_source(choice_check(3000))
    assert small is not None and large is not None
    assert shape(small[0]) == shape(large[0])
    reader = tail_reader(choice_check(3000), "sha256:" + "0" * 64)
    assert reader is not None


# --- finding 8: a size and a count past which lines go the strict way ----------------------------


def test_a_line_past_the_fast_bound_goes_the_strict_way_and_nothing_is_kept() -> None:
    check = choice_check(40, width=FAST_LINE // 40)
    line = record_line(record_of(check, random.Random(1)))
    assert len(line) > FAST_LINE
    reader = _Reader()
    for number in (1, 2):
        got = reader.read("audit.jsonl", number, line[:-1])
        assert type(got) is VerdictRecord  # the strict reading's record, not fast facts
        assert got == _Reader(fast=False).line("audit.jsonl", number, line[:-1])
    assert not reader._checks._known and not reader._checks._written


def test_past_the_checks_a_reader_learns_a_new_check_goes_the_strict_way() -> None:
    rng = random.Random(2)
    checks = [yes_no_check(f"Check {n}: is it so?") for n in range(_Checks.LIMIT + 8)]
    lines = [record_line(record_of(check, rng)) for check in checks for _ in range(2)]
    first = record_line(record_of(checks[0], rng))
    read = read_both([*lines, first])
    learned = 2 * _Checks.LIMIT
    assert all(isinstance(got, VerdictFacts) for got in read[:learned])
    assert all(type(got) is VerdictRecord for got in read[learned:-1])  # checks 65 to 72
    assert isinstance(read[-1], VerdictFacts)  # a check it learned stays fast


def test_what_a_reader_keeps_stays_bounded_however_many_checks_a_trail_holds() -> None:
    rng = random.Random(3)
    reader = _Reader()
    for n in range(3 * _Checks.LIMIT):
        for _ in range(2):
            line = record_line(record_of(yes_no_check(f"Check {n}?"), rng))
            reader.read("audit.jsonl", 1, line[:-1])
    checks = reader._checks
    assert len(checks._known) <= _Checks.LIMIT and len(checks._written) <= _Checks.LIMIT
    assert len(checks._lines) <= _Checks.LIMIT


def test_a_checks_tail_reader_is_made_at_its_32nd_line() -> None:
    check, rng = yes_no_check("Is it so?"), random.Random(4)
    reader = _Reader()
    written: list[Any] = []
    for number in range(1, _Checks.TAIL_AFTER + 2):
        line = record_line(record_of(check, rng))[:-1]
        assert isinstance(reader.read("audit.jsonl", number, line), VerdictFacts)
        written = list(reader._checks._written.values())
        assert len(written) == 1
        assert (written[0].tail is not None) == (number >= _Checks.TAIL_AFTER)


def test_the_sources_registered_for_tracebacks_stay_bounded() -> None:
    keys = [f"sha256:{n:064x}" for n in range(_tail._REGISTERED + 10)]
    for key in keys:
        assert tail_reader(yes_no_check("Is it so?"), key) is not None
    assert len(_tail._registered) <= _tail._REGISTERED
    assert linecache.getline(name_of(keys[-1]), 1).startswith("_fullmatch = _compile(")
    assert name_of(keys[0]) not in linecache.cache


# --- the generator: printable, seen in a traceback, shaped by the check's shape alone --------


def name_of(key: str) -> str:
    return f"<checkprofile tail reader for check {key}>"


def test_a_tail_readers_source_can_be_printed_and_shows_in_a_traceback() -> None:
    check = parse_check(
        [
            {"ask": "Is it so?", "fail": 0.5},
            {"ask": "Which?", "one_of": {"a": "A.", "b": "B."}, "pass": ["a"]},
            {"ask": "How good?", "levels": ["Bad.", "Good."], "pass": 1},
        ]
    )
    made = tail_source(check)
    assert made is not None
    source, _ = made
    assert source.splitlines()[0] == "_fullmatch = _compile("
    assert "def tail(text, start):" in source
    reader = tail_reader(check, check_key(check))
    assert reader is not None
    assert reader.__code__.co_filename == name_of(check_key(check))
    with pytest.raises(TypeError) as caught:
        reader(None, 0)  # type: ignore[arg-type]  # fails inside the generated code
    shown = "".join(traceback.format_exception(caught.value))
    assert name_of(check_key(check)) in shown
    assert "found = _fullmatch(text, start)" in shown  # the generated line, from linecache


def shape(source: str) -> str:
    """The source's syntax tree with every constant blanked: what the code does, whatever
    texts it holds."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            node.value = None
    return ast.dump(tree)


# Texts an audit record may carry in a check: quotes of Python's, braces, comment marks,
# escapes of regular expressions and of Python, other scripts and invisible characters (a
# JSON quote, a backslash or a control character makes the line hold escapes: no tail then).
hostile = st.text(
    alphabet=st.sampled_from(list("ab '\"\\{}#()[]*+?|^$.,:;=%\u2028\u00a0\u200b\ufeffé😀\x7f")),
    min_size=1,
    max_size=12,
)


def make(kinds: list[str], counts: list[int], draw: Any, plain: bool) -> tuple[Check, list[str]]:
    texts: list[str] = []

    def text(place: str) -> str:
        found = place if plain else draw(hostile)
        texts.append(found)
        return found

    questions: list[dict[str, Any]] = []
    for index, (kind, count) in enumerate(zip(kinds, counts, strict=True)):
        ask = text(f"ask{index}")
        if kind == "yes_no":
            questions.append({"ask": ask, "fail": 0.5})
        elif kind == "choice":
            names = [text(f"name{index}_{n}") for n in range(count)]
            assume(len(set(names)) == count)  # (one name twice would make fewer options)
            one_of = dict.fromkeys(names, "An option.")
            questions.append({"ask": ask, "one_of": one_of, "pass": [names[0]]})
        else:
            questions.append({"ask": ask, "levels": ["A level."] * count, "pass": 1})
    try:
        return parse_check(questions), texts
    except CheckError:
        assume(False)
        raise  # pragma: no cover - assume stops the example


KINDS = ["yes_no", "choice", "rubric"]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_no_text_of_a_record_changes_the_shape_of_the_generated_code(data: st.DataObject) -> None:
    kinds = data.draw(
        st.lists(st.sampled_from(["yes_no", "choice", "rubric"]), min_size=1, max_size=3)
    )
    counts = [data.draw(st.integers(2, 4)) for _ in kinds]
    hostile_check, texts = make(kinds, counts, data.draw, plain=False)
    plain_check, _ = make(kinds, counts, data.draw, plain=True)
    made, reference = tail_source(hostile_check), tail_source(plain_check)
    assert reference is not None
    if made is None:  # a text the writer escapes in a line: read the other way
        assert any(char in '"\\' or ord(char) < 0x20 for text in texts for char in text)
        return
    assert shape(made[0]) == shape(reference[0])
    compile(made[0], "<test>", "exec")  # and it is Python
