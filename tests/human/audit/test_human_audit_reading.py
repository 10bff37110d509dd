"""Reading audit lines fast reads exactly what the full reading reads: each record the same
(type and value), each refusal the same words naming FILE:LINE, each torn line a torn line.

The reader takes the lines a writer writes by a fast path (its check parsed once, plain type
checks, a pinned layout) and leaves everything else to the full reading (:func:`record_from_json`
after a strict parse). These properties compare the two on records made by the library, broken
as JSON (a value replaced, removed or added anywhere) and as text (a character changed, a key
written twice, whitespace, a cut), with a reader that has already read the check, as a reader of
a long trail has."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import subprocess
import sys
import warnings
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_human_audit import SUBMISSION, json_leaves, nearby_values, paths_of, verdict_records
from test_human_records import CHECK, MODEL, RUN, SCRIPTS, STEP, make_outcome

from checkprofile import (
    Answer,
    ChoiceAnswer,
    Failure,
    ModelCall,
    RubricAnswer,
    Submission,
    Usage,
    Verdict,
    YesNoAnswer,
    canonical_json,
    combine,
    format_at,
    outcome_for,
    parse_check,
)
from checkprofile._shown import is_blank
from checkprofile.errors import VerdictError
from checkprofile.human import (
    MAX_LINE_BYTES,
    AuditError,
    AuditRecord,
    Completed,
    Decision,
    Failed,
    JsonLinesRecorder,
    Returned,
    TornLine,
    TornLineWarning,
    calibrate,
    decision_record,
    iter_records,
    record_from_json,
    verdict_record,
)
from checkprofile.human._audit._fast._reader import _Reader
from checkprofile.human._audit._fast._verdicts import _Checks
from checkprofile.human._audit._recorders import record_line
from support import AT, SPEC_RUBRIC_ASK, TRAIL_AT, stamp, verdict, write_decision, write_verdict

GOOD = verdict_record(make_outcome(SCRIPTS["pass"]), run_id=RUN, step_id=STEP)


def dump(data: Any) -> bytes:
    """A record as the writer lays out a line (without its newline)."""
    return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode()


@functools.cache
def _seasoning() -> _Checks:
    reader = _Reader()
    for number in range(1, _Checks.TAIL_AFTER + 1):
        reader.line("audit.jsonl", number, record_line(GOOD)[:-1])
    return reader._checks


def seasoned() -> _Reader:
    """A reader that has read verdicts of CHECK already (as one has, a few dozen lines into a
    trail): the fast path then knows the check by its text, and has made its tail reader.
    (What it learned is read once, and copied into each new reader.)"""
    reader, learned = _Reader(), _seasoning()
    reader._checks._known.update(learned._known)
    reader._checks._written.update(learned._written)
    assert all(known.tail is not None for known in learned._written.values())
    return reader


def reading(reader: _Reader, line: bytes) -> Any:
    """What ``reader`` makes of ``line`` as line 7 of a file: the record, the torn line, or
    the words of the AuditError."""
    try:
        return reader.line("audit.jsonl", 7, line)
    except AuditError as error:
        assert error.path == "audit.jsonl" and error.line == 7
        return str(error)


def assert_read_alike(line: bytes) -> Any:
    fast, full = reading(seasoned(), line), reading(_Reader(fast=False), line)
    assert fast == full
    assert repr(fast) == repr(full)  # the same types too: 1.0 is not read as 1
    return fast


# --- records to break ------------------------------------------------------------------------

# Texts a person or host may write: plain, blank, with a leading colon (a key's mark), quotes
# and backslashes (escaped in the line), whitespace the JSON reader knows and whitespace it
# does not, other scripts. Not a NUL: no store keeps one, so a decision holding it is refused
# (issue 34), by both readings alike (the broken-record properties below try it).
texts = st.text(max_size=8).filter(lambda text: "\x00" not in text) | st.sampled_from(
    ["pat", ":pat", '"', "\\", " pat", "pat ", "\t", "\u2028", "é", "a:b", "", " "]
)
# Ids are judged by str.strip, a person's texts by Unicode's White_Space: neither blank.
non_blank = texts.filter(lambda text: bool(text.strip()) and not is_blank(text))
times = st.datetimes(timezones=st.just(timezone.utc)).map(format_at)


@st.composite
def decisions(draw: st.DrawFn) -> Decision:
    kind = draw(st.sampled_from(["completed", "returned", "failed", "own", "noted"]))
    by, at = draw(non_blank), draw(times | st.just(AT))
    try:
        if kind == "completed":
            return Completed(by=by, at=at)
        if kind == "noted":
            return Completed(by=by, at=at, note=draw(non_blank))
        if kind == "own":
            return Completed(by=by, at=at, output={"fixed": draw(texts)}, summary=draw(texts))
        made = Returned if kind == "returned" else Failed
        return made(note=draw(non_blank), by=by, at=at)
    except ValueError:  # a text the decision refuses (e.g. blank by a rule of its own)
        return Completed(by="pat", at=AT)


@st.composite
def decision_records(draw: st.DrawFn) -> dict[str, Any]:
    record = decision_record(
        draw(decisions()),
        run_id=draw(non_blank | st.just(RUN)),
        step_id=draw(non_blank | st.just(STEP)),
        submission=SUBMISSION,
        escalated_at=draw(st.none() | times),
    )
    data: dict[str, Any] = json.loads(dump(record.to_json()))
    return data


records = verdict_records() | decision_records()


def broken(data: Any, draws: st.DataObject) -> Any:
    """``data`` with one part broken in one way, anywhere."""
    path = draws.draw(st.sampled_from(paths_of(data)[1:]), label="where")
    *parent_path, last = path
    parent: Any = data
    for step in parent_path:
        parent = parent[step]
    how = draws.draw(st.sampled_from(["replace", "remove", "add"]), label="how")
    if how == "replace":
        parent[last] = draws.draw(nearby_values | json_leaves | texts, label="value")
    elif how == "remove":
        del parent[last]
    elif isinstance(parent, dict):
        parent[draws.draw(st.sampled_from(["extra", "confidence", "truncated", "note"]))] = True
    else:
        parent.append(draws.draw(nearby_values))
    return data


# Characters that mean something to JSON or to the fast path's reading of a line.
MARKS = [*'"\\:,{}[] \t\r0123456789.eE-+ntfalsru', "\x00", "\x7f", "é"]


def cut_and_changed(line: str, draws: st.DataObject) -> str:
    """``line`` changed as text: a character changed, added or taken out, a key and its value
    written twice, whitespace before a colon, or the line cut short."""
    how = draws.draw(
        st.sampled_from(["insert", "delete", "replace", "twice", "space", "cut"]), label="how"
    )
    where = draws.draw(st.integers(0, len(line) - 1), label="at")
    if how == "insert":
        return line[:where] + str(draws.draw(st.sampled_from(MARKS))) + line[where:]
    if how == "delete":
        return line[:where] + line[where + 1 :]
    if how == "replace":
        return line[:where] + str(draws.draw(st.sampled_from(MARKS))) + line[where + 1 :]
    if how == "cut":
        return line[:where]
    pairs = list(re.finditer(r'"([^"\\]+)":("[^"\\]*"|-?[0-9.eE+-]+|true|false|null)', line))
    if not pairs:
        return line
    pair = draws.draw(st.sampled_from(pairs), label="pair")
    if how == "space":  # `"key" :` -- JSON takes it; a key written so is still a key
        at = pair.start() + len(pair.group(1)) + 2
        return line[:at] + draws.draw(st.sampled_from([" ", "\t", "\r", "  "])) + line[at:]
    value = draws.draw(st.sampled_from([pair.group(2), "null", "1", '"x"', "true"]))
    spacing = draws.draw(st.sampled_from(["", " "]))
    twice = f',"{pair.group(1)}"{spacing}:{value}'
    return line[: pair.end()] + twice + line[pair.end() :]


# --- the properties --------------------------------------------------------------------------


@given(records)
def test_good_records_are_read_as_the_full_reading_reads_them(data: dict[str, Any]) -> None:
    read = assert_read_alike(dump(data))
    assert not isinstance(read, (str, TornLine))
    assert read.to_json() == data


@settings(max_examples=400)
@given(records, st.data())
def test_records_broken_as_json_are_read_or_refused_alike(
    data: dict[str, Any], draws: st.DataObject
) -> None:
    assert_read_alike(dump(broken(data, draws)))


@settings(max_examples=400)
@given(records, st.data())
def test_lines_broken_as_text_are_read_or_refused_alike(
    data: dict[str, Any], draws: st.DataObject
) -> None:
    line = cut_and_changed(dump(data).decode(), draws)
    if line:
        assert_read_alike(line.encode("utf-8"))


def test_the_fast_path_takes_the_lines_a_writer_writes() -> None:
    # Not a test of speed: that the fast path is taken at all (the properties above would
    # pass with none). Its facts come back as what record_from_json makes of the line.
    from checkprofile.human._audit._fast._reader import DecisionFacts, VerdictFacts

    reader = seasoned()
    decision = decision_record(
        Returned(note="Attach the report.", by="pat", at=AT),
        run_id=RUN,
        step_id=STEP,
        submission=SUBMISSION,
    )
    read_verdict = reader.read("a", 2, record_line(GOOD)[:-1])
    read_decision = reader.read("a", 3, record_line(decision)[:-1])
    assert isinstance(read_verdict, VerdictFacts) and read_verdict.record() == GOOD
    assert isinstance(read_decision, DecisionFacts) and read_decision.record() == decision


_ROUTE_PROBE = """
import json, sys
from checkprofile import Submission, combine, outcome_for, parse_check, YesNoAnswer
from checkprofile.human import verdict_record
from checkprofile.human._audit._fast import _reader as _audit_fast
from checkprofile.human._audit._fast._reader import _Reader, VerdictFacts
from checkprofile.human._audit._recorders import record_line
check = parse_check("Is the report right?")
verdict = combine(check, [YesNoAnswer(0.95)], model="m-1", at="2026-11-02T09:00:00Z")
record = verdict_record(outcome_for(verdict), run_id="a", step_id="review",
                        submission=Submission({"report": 1}))
full = []  # the lines read the full way: by line_data, the strict parse
strict = _audit_fast.line_data
_audit_fast.line_data = lambda *args: full.append(args[1]) or strict(*args)
reader = _Reader()
reader.line("a", 1, record_line(record)[:-1])
read = reader.read("a", 2, record_line(record)[:-1])
got = read.record() if isinstance(read, VerdictFacts) else read
print(json.dumps([full == [], got == record]))
"""


@pytest.mark.parametrize(
    ("digits", "quick"), [(0, False), (640, True), (4300, True), (10_000, True), (10_001, False)]
)
def test_the_quick_reading_is_taken_only_where_python_bounds_an_ints_digits(
    digits: int, quick: bool
) -> None:
    # The quick reading lets the json module turn digits into ints: safe only where Python
    # bounds their length (at most 10,000 digits, so a long run costs little). With the bound
    # lifted (0) or set higher, every line goes the full way, and reads the same.
    done = subprocess.run(
        [sys.executable, "-X", f"int_max_str_digits={digits}", "-c", _ROUTE_PROBE],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == [quick, True]


def test_the_quick_reading_is_not_taken_on_a_python_that_bounds_no_ints_digits() -> None:
    # Before Python 3.10.7 there is no bound (and no sys.get_int_max_str_digits).
    probe = "import sys\ndel sys.get_int_max_str_digits\n" + _ROUTE_PROBE
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [False, True]


@pytest.mark.parametrize(
    ("question", "shares"),
    [
        (1, [["states", 1.0], ["hedges", 0.1], ["unclear", -0.1]]),
        (2, [[2, 1.0], [1, 0.05], [0, -0.05]]),
        (1, [["states", 1.1], ["hedges", -0.1]]),
        # A hair over 1 with the rest at 0: the sum is within the core's tolerance of 1.
        (1, [["states", 1.005], ["hedges", 0.0], ["unclear", 0.0]]),
        (2, [[2, 1.005], [1, 0.0]]),
    ],
    ids=["choice-negative", "rubric-negative", "choice-over-one", "choice-hair", "rubric-hair"],
)
def test_a_distribution_with_a_share_outside_0_and_1_is_refused_though_it_sums_to_1(
    question: int, shares: list[list[Any]]
) -> None:
    # One share below 0 (or above 1) and the others making the sum 1 again: no single changed
    # value of the properties above makes it. Both readings refuse it, by the same words.
    chosen: dict[str, Answer] = {
        CHECK[1].ask: ChoiceAnswer(
            "states", 0.91, source="native", distribution=(("states", 0.91), ("hedges", 0.09))
        ),
        CHECK[2].ask: RubricAnswer(2, 0.88, source="native", distribution=((2, 0.88), (1, 0.12))),
    }
    record = verdict_record(make_outcome({**SCRIPTS["pass"], **chosen}), run_id=RUN, step_id=STEP)
    data = record.to_json()
    assert assert_read_alike(dump(data)) == record
    data["provenance"][question]["distribution"] = shares
    said = assert_read_alike(dump(data))
    assert isinstance(said, str) and "audit.jsonl:7: " in said


def assert_read_by_layout(record: AuditRecord, *, first_quick: bool = False) -> None:
    """A verdict line the writer writes is read by its layout once its check is known: not
    parsed whole, not the full way; and it reads as the record. ``first_quick``: the first
    line of its check is not read the full way either."""
    from unittest import mock

    from checkprofile.human._audit._fast import _reader as _audit_fast
    from checkprofile.human._audit._fast._reader import VerdictFacts

    line = record_line(record)[:-1]
    reader = _Reader()
    full = AssertionError("read the full way")
    if first_quick:
        with mock.patch.object(_audit_fast, "line_data", side_effect=full):
            first = reader.read("audit.jsonl", 1, line)
    else:
        first = reader.read("audit.jsonl", 1, line)
    assert (first.record() if isinstance(first, VerdictFacts) else first) == record
    with (
        mock.patch.object(_audit_fast, "line_data", side_effect=full),
        mock.patch.object(_audit_fast, "verdict_facts", side_effect=full),
    ):
        read = reader.read("audit.jsonl", 2, line)
    assert isinstance(read, VerdictFacts)
    assert read.record() == record


def _distributed(name: str) -> dict[str, Answer | Failure]:
    """SCRIPTS[name] with a distribution beside the choice and rubric answers."""
    script = SCRIPTS[name]
    choice, rubric = script[CHECK[1].ask], script[CHECK[2].ask]
    assert isinstance(choice, ChoiceAnswer) and isinstance(rubric, RubricAnswer)
    rest = round(1 - choice.confidence, 6)
    return {
        **script,
        CHECK[1].ask: ChoiceAnswer(
            choice.name,
            choice.confidence,
            source="logprobs",
            distribution=((choice.name, choice.confidence), ("unclear", rest)),
        ),
        CHECK[2].ask: RubricAnswer(
            rubric.level,
            rubric.confidence,
            source="native",
            distribution=((rubric.level, rubric.confidence), (0, round(1 - rubric.confidence, 6))),
        ),
    }


@pytest.mark.parametrize("provenance", [False, True], ids=["plain", "distributions"])
@pytest.mark.parametrize("advisory", [False, True], ids=["enforcing", "advisory"])
@pytest.mark.parametrize("name", list(SCRIPTS))
def test_a_verdict_line_of_every_verdict_is_read_by_its_layout(
    name: str, advisory: bool, provenance: bool
) -> None:
    # Not a test of speed: that no verdict, answer kind, mode or provenance falls off the
    # quick reading, which the properties above cannot see (they pass when a line goes the
    # full way), the first line of its check included.
    script: dict[str, Answer | Failure]
    script = _distributed(name) if provenance and name != "error" else SCRIPTS[name]
    outcome = make_outcome(script, advisory=advisory)
    assert outcome.verdict.verdict == name
    record = verdict_record(outcome, run_id=RUN, step_id=STEP)
    assert_read_by_layout(record, first_quick=True)


@pytest.mark.parametrize("edge", [0.0, 1.0])
def test_a_verdict_line_with_answers_at_the_ends_of_their_range_is_read_by_its_layout(
    edge: float,
) -> None:
    # A probability or confidence of exactly 0 or 1 is in range: the quick reading takes the
    # line as it takes any other.
    script: dict[str, Answer | Failure] = {
        CHECK[0].ask: YesNoAnswer(edge),
        CHECK[1].ask: ChoiceAnswer("states", edge),
        CHECK[2].ask: RubricAnswer(2, edge),
    }
    record = verdict_record(make_outcome(script), run_id=RUN, step_id=STEP)
    assert b'"answer":%r,' % edge in record_line(record)
    assert_read_by_layout(record, first_quick=True)


def test_a_verdict_line_of_a_check_of_300_questions_is_read_by_its_layout() -> None:
    # Counts of 300 are two int objects: compared by identity, such a line went the full way.
    check = parse_check([{"ask": f"Is part {i} right?", "pass": 0.9} for i in range(300)])
    verdict = combine(check, [YesNoAnswer(0.95)] * 300, model=MODEL, at=AT)
    record = verdict_record(outcome_for(verdict), run_id=RUN, step_id=STEP, submission=SUBMISSION)
    assert_read_by_layout(record, first_quick=True)


def test_a_verdict_line_with_its_calls_is_read_without_parsing_its_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A line that keeps its calls is read by the writer's layout too, not by parsing what
    # follows the check as JSON (which cost it nearly twice the time of a line without).
    from checkprofile.human._audit._fast._reader import VerdictFacts

    reader = seasoned()

    def no_parse(decoder: json.JSONDecoder, text: str, *args: Any) -> Any:
        raise AssertionError(f"parsed as JSON: {text[:40]}")

    monkeypatch.setattr(json.JSONDecoder, "decode", no_parse)
    monkeypatch.setattr(json.JSONDecoder, "raw_decode", no_parse)
    read = reader.read("a", 2, record_line(COSTED)[:-1])
    assert isinstance(read, VerdictFacts) and read.record() == COSTED
    assert read.calls == COSTED.calls and read.calls[0].usage is not None


@pytest.mark.parametrize("space", [" ", "\t", "\r"])
@pytest.mark.parametrize("kind", ["verdict", "decision"])
def test_a_key_written_twice_is_refused_though_whitespace_hides_one(kind: str, space: str) -> None:
    # The fast path counts keys in the text (`":`); whitespace before a colon must not hide
    # the second of two equal keys.
    record: AuditRecord
    if kind == "verdict":
        record = verdict_record(
            make_outcome(
                {**SCRIPTS["unsure"], SPEC_RUBRIC_ASK: RubricAnswer(1, 0.9, source="native")}
            ),
            run_id=RUN,
            step_id=STEP,
        )
        name, value = "model", f'"{MODEL}"'
    else:
        record = decision_record(
            Completed(by="pat", at=AT), run_id=RUN, step_id=STEP, submission=SUBMISSION
        )
        name, value = "by", '"pat"'
    line = record_line(record)[:-1].decode()
    assert line.count(f'"{name}":{value}') == 1
    twice = line.replace(f'"{name}":{value}', f'"{name}"{space}:"other","{name}":{value}')
    for reader in (seasoned(), _Reader(fast=False)):
        with pytest.raises(AuditError, match=f'audit.jsonl:7: .*the key "{name}" appears twice'):
            reader.line("audit.jsonl", 7, twice.encode())


def test_a_time_with_a_line_break_after_it_is_no_time() -> None:
    # The schema's pattern ends with (?![\s\S]), not $ (which takes a "\n" before the end).
    data = GOOD.verdict.to_json()
    data["at"] += "\n"
    with pytest.raises(VerdictError, match=r"at /at: expected an RFC 3339 time"):
        Verdict.from_json(data, check=CHECK)
    record = GOOD.to_json()
    record["verdict"]["at"] += "\n"
    message = assert_read_alike(dump(record))
    assert isinstance(message, str) and "expected an RFC 3339 time" in message


# --- every field, every nearby value -----------------------------------------------------------

NEARBY: list[Any] = [
    0, 1, 2, 1.0, 2.0, 0.0, -0.0, True, False, None, "", " ", "x", "pass", "fail", "unsure",
    "error", "yes_no", "choice", "rubric", "native", [], {}, 0.5, 1e-9, [1, 2],
    1.5, -1, 0.95, 0.9, 0.85, 0.3, 1e-300, float("inf"), float("nan"), 10**30, "completed",
    "returned", "failed", "note", ":x", "\u2028", "\t", "states", "hedges", "2026-11-01T00:00:00Z",
    "2026-11-01T00:00:00.5Z", "2026-02-30T00:00:00Z", "2026-11-01T00:00:00z", [[0, 1]], {"a": 1},
    {"source": "native"}, [["states", 1]], [[2, 1.0]], [[2, 0.5], [1, 0.5]], "complete", 3,
    10**12, 10**12 + 1, 10**6 + 1, 1e9, -1.0, ["x"], [" "], [":x"], ["x", "x"], [""],
]  # fmt: skip

UNSURE = verdict_record(
    make_outcome({**SCRIPTS["unsure"], SPEC_RUBRIC_ASK: RubricAnswer(1, 0.9, source="native")}),
    run_id=RUN,
    step_id=STEP,
)
# A verdict that kept what its two attempts cost: every figure and an id, and nothing reported.
COSTED = verdict_record(
    outcome_for(
        UNSURE.verdict,
        attempts=2,
        answers=make_outcome(
            {**SCRIPTS["unsure"], SPEC_RUBRIC_ASK: RubricAnswer(1, 0.9, source="native")}
        ).answers,
        calls=(
            ModelCall(
                seconds=1.25,
                questions=3,
                usage=Usage(
                    input_tokens=1200, output_tokens=9, cached_tokens=1024, request_ids=("req-1",)
                ),
            ),
            ModelCall(seconds=0.5, questions=1),
        ),
    ),
    run_id=RUN,
    step_id=STEP,
    submission=SUBMISSION,
)
SAMPLES: dict[str, AuditRecord] = {
    "a verdict": UNSURE,
    "a verdict that passed": GOOD,
    "a verdict with its calls": COSTED,
    "a completed decision": decision_record(
        Completed(by="pat", at=AT), run_id=RUN, step_id=STEP, submission=SUBMISSION
    ),
    "a completed decision with a note": decision_record(
        Completed(by="pat", at=AT, note="Fine."),
        run_id=RUN,
        step_id=STEP,
        submission=SUBMISSION,
        escalated_at=AT,
    ),
    "a returned decision": decision_record(
        Returned(note="Attach the report.", by="pat", at=AT),
        run_id=RUN,
        step_id=STEP,
        submission=SUBMISSION,
    ),
    "a failed decision": decision_record(
        Failed(note="Not a report.", by="sam", at=AT),
        run_id=RUN,
        step_id=STEP,
        submission=SUBMISSION,
        escalated_at=AT,
    ),
}


def replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``data`` with the value at ``path`` replaced (``REMOVE``: taken out)."""
    copy = json.loads(json.dumps(data))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    if value is REMOVE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copy


REMOVE = object()


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_field_replaced_by_every_nearby_value_is_read_alike(sample: str) -> None:
    data = SAMPLES[sample].to_json()
    for path in paths_of(data)[1:]:
        for value in [*NEARBY, REMOVE]:
            line = json.dumps(replaced(data, path, value), separators=(",", ":")).encode()
            assert_read_alike(line)


def end_of_object(line: str, start: int) -> int:
    """Where the object holding the text at ``start`` closes (the samples' texts hold no
    brackets)."""
    depth = 0
    for at in range(start, len(line)):
        if line[at] in "{[":
            depth += 1
        elif line[at] in "]}":
            if not depth:
                return at
            depth -= 1
    raise AssertionError("no end")


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_key_written_again_at_the_end_of_its_object_is_refused(sample: str) -> None:
    line = record_line(SAMPLES[sample])[:-1].decode()
    for pair in re.finditer(r'"([^"\\]+)":("[^"\\]*"|-?[0-9.eE+-]+|true|false|null)', line):
        end = end_of_object(line, pair.end())
        for value in (pair.group(2), '"x"', "null"):
            twice = line[:end] + f',"{pair.group(1)}":{value}' + line[end:]
            message = assert_read_alike(twice.encode())
            assert isinstance(message, str) and "appears twice" in message


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("where", ["run", "step"])
@pytest.mark.parametrize("blank", ["", " ", "\t", "\u3000"])
def test_a_blank_run_or_step_is_refused_though_the_key_is_its_own(
    sample: str, where: str, blank: str
) -> None:
    # A key that matches a blank run or step: the key check alone would not refuse it.
    data = SAMPLES[sample].to_json()
    data[where] = blank
    parts = [data["run"], data["step"], data["submission_sha256"]]
    data["key"] = "sha256:" + hashlib.sha256(canonical_json(parts).encode()).hexdigest()
    message = assert_read_alike(dump(data))
    assert message == f"audit.jsonl:7: {where} must be a non-blank string, got {json.dumps(blank)}"


# Found by mutation runs, each under its draw's seed (docs/mutation-results.md) --------------------


LATER = "2026-11-02T15:30:00Z"


# found by a mutation draw (seed 27): torn lines, check_key, the line-length bound
@pytest.mark.parametrize("stray", [b"x", b"}", b",", b"{", b"0", b"\xc3", b"\xe2\x82"])
@pytest.mark.parametrize("last", [False, True], ids=["inside", "last"])
def test_a_complete_record_followed_by_a_stray_byte_is_an_error_not_a_torn_line(
    tmp_path: Path, stray: bytes, last: bool
) -> None:
    # Read as a torn line (skipped with a warning) survived: a writer that stops leaves a
    # prefix of a record, never a whole record with more after it (the first byte of a
    # character included: a cut inside a character after a complete record is no fragment).
    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    line = path.read_bytes()
    path.write_bytes(line[:-1] + stray + b"\n" + (b"" if last else line))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AuditError, match=":1: "):
            list(iter_records(path))


def test_a_record_cut_short_is_a_torn_line_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    line = path.read_bytes()
    path.write_bytes(line[: len(line) // 2] + b"\n" + line)
    with pytest.warns(UserWarning, match=":1: a torn line"):
        assert len(list(iter_records(path))) == 1


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_verdict_whose_check_key_was_changed_is_refused_by_calibration(
    tmp_path: Path, which: int
) -> None:
    # The fast reading (calibration's) not comparing check_key survived: a verdict whose
    # check_key is not its check's is not a record, however it is read.
    path = tmp_path / "trail.jsonl"
    for run in ("a", "b", "c"):
        write_verdict(path, run)
        write_decision(path, run, Completed(by="pat", at=LATER))
    lines = path.read_bytes().split(b"\n")
    data = json.loads(lines[2 * which])
    key = data["check_key"]
    lines[2 * which] = lines[2 * which].replace(key.encode(), b"sha256:" + b"0" * 64)
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(AuditError, match=f":{2 * which + 1}: .*check_key"):
        calibrate(path)
    with pytest.raises(AuditError, match=f":{2 * which + 1}: .*check_key"):
        list(iter_records(path))


def padded(path: Path, size: int, *, newline: bool) -> None:
    """A trail of one verdict line padded with JSON whitespace to ``size`` bytes."""
    write_verdict(path, "a")
    line = path.read_bytes()[:-1]
    path.write_bytes(line + b" " * (size - len(line)) + (b"\n" if newline else b""))


@pytest.mark.parametrize("newline", [True, False])
def test_a_line_of_exactly_max_line_bytes_is_read(tmp_path: Path, newline: bool) -> None:
    # The line-length bound off by one survived: MAX_LINE_BYTES is the longest line read.
    path = tmp_path / "trail.jsonl"
    padded(path, MAX_LINE_BYTES, newline=newline)
    assert len(list(iter_records(path))) == 1


@pytest.mark.parametrize("newline", [True, False])
def test_a_line_over_max_line_bytes_is_refused(tmp_path: Path, newline: bool) -> None:
    path = tmp_path / "trail.jsonl"
    padded(path, MAX_LINE_BYTES + 1, newline=newline)
    with pytest.raises(AuditError, match=f"a line of over {MAX_LINE_BYTES} bytes"):
        list(iter_records(path))


def test_a_fragment_ending_in_a_byte_no_character_starts_with_is_an_error(tmp_path: Path) -> None:
    # Only a cut inside a character is a fragment; 0xff starts none (a mutation-run survivor).
    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    line = path.read_bytes()
    path.write_bytes(line[: len(line) // 2] + b"\xff")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AuditError, match=":1: not JSON"):
            list(iter_records(path))


# found by a mutation draw (seed 27): a key written again; a distribution's pair
@pytest.mark.parametrize("again", [1, 2, 23], ids=["once", "twice", "23-times"])
def test_a_decision_that_repeats_its_note_any_number_of_times_is_refused(
    tmp_path: Path, again: int
) -> None:
    # Counting the keys as the product of the record's and the decision's (`+` -> `*`)
    # survived: 23 more notes make as many keys as that product, and the quick reading took
    # the line. A key written again is no record, however often.
    path = tmp_path / "trail.jsonl"
    write_decision(path, "a", Returned(note="fix", by="pat", at=TRAIL_AT))
    line = path.read_text(encoding="utf-8")
    assert line.count('"note":"fix",') == 1
    path.write_text(line.replace('"note":"fix",', '"note":"fix",' * (1 + again)), encoding="utf-8")
    with pytest.raises(AuditError, match=r":1: .*(twice|repeat|again)"):
        list(iter_records(path))


@pytest.mark.parametrize("pair", ["5", '"calm"', '{"calm":0.9}', "null"])
def test_a_distribution_whose_pair_is_no_list_is_an_audit_error(tmp_path: Path, pair: str) -> None:
    # `type(pair) is not list` negated in the quick reading survived: a pair that is a number
    # raised a TypeError of Python's own out of the reader.
    from checkprofile import ChoiceAnswer, Limits, run_check_sync
    from checkprofile.testing import ScriptedEvaluator
    from support import material

    check = parse_check(
        [{"ask": "Tone?", "one_of": {"calm": "Calm.", "angry": "Angry."}, "pass": ["calm"]}]
    )
    shares = (("calm", 0.9), ("angry", 0.1))
    answer = ChoiceAnswer("calm", 0.95, source="native", distribution=shares)
    outcome = run_check_sync(
        check, material(), ScriptedEvaluator({"Tone?": answer}, model="m-1"), limits=Limits()
    )
    path = tmp_path / "trail.jsonl"
    record = verdict_record(outcome, run_id="a", step_id="review", submission=Submission({}))
    JsonLinesRecorder(path).record(record)
    line = path.read_text(encoding="utf-8")
    assert line.count('["calm",0.9]') == 1
    path.write_text(line.replace('["calm",0.9]', pair), encoding="utf-8")
    with pytest.raises(AuditError, match=":1: "):
        list(iter_records(path))


# found by a mutation draw (seed 2029): a record's types by identity; the other kind's keys
def _verdict_json() -> dict[str, Any]:
    record = verdict_record(
        outcome_for(verdict()), run_id="a", step_id="review", submission=Submission({"r": 1})
    )
    data: dict[str, Any] = json.loads(json.dumps(record.to_json()))
    return data


@pytest.mark.parametrize("field", ["record", "format", "key", "submission_sha256", "calls"])
def test_a_record_holding_a_value_of_a_hostile_type_is_refused_running_none_of_its_code(
    field: str,
) -> None:
    # A record handed in by a host (not parsed from a line) is judged by its values' types,
    # by identity: a type's own == or != never runs, and the record is a plain ValueError.
    data = _verdict_json()
    assert record_from_json(data).to_json() == data
    data[field] = stamp()
    with pytest.raises(ValueError, match=field if field != "record" else '"record" must be'):
        record_from_json(data)


def _decision_json() -> dict[str, Any]:
    record = decision_record(
        Returned(note="n", by="pat", at=TRAIL_AT),
        run_id="a",
        step_id="review",
        submission=Submission({"r": 1}),
    )
    data: dict[str, Any] = json.loads(json.dumps(record.to_json()))
    return data


@pytest.mark.parametrize(
    ("kind", "keys_of", "needs"),
    [("verdict", _decision_json, "bundle_sha256"), ("decision", _verdict_json, "escalated_at")],
)
def test_a_record_with_the_keys_of_the_other_kind_is_refused_naming_the_first_key_it_needs(
    tmp_path: Path, kind: str, keys_of: Any, needs: str
) -> None:
    # A record that says one kind and holds exactly the other kind's keys: the quick check of
    # its keys must be against its own kind's, or what it lacks is read as a KeyError.
    data = keys_of()
    data["record"] = kind
    with pytest.raises(ValueError, match=f'^a {kind} record needs "{needs}"$') as raised:
        record_from_json(data)
    assert type(raised.value) is ValueError
    path = tmp_path / "trail.jsonl"
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(AuditError, match=f'^{re.escape(str(path))}:1: a {kind} record needs "'):
        list(iter_records(path))


# found by a mutation draw (seed 2032): a cut after `{}`; the torn line warning's stacklevel
@pytest.mark.parametrize(
    ("last", "torn"),
    [
        ('{"record":"verdict","seen":{},"next', True),
        ('{"record":"verdict","seen":{"a":[]},', True),
        ("{1", False),
        ('{"a":{}}x', False),
    ],
    ids=["cut-after-an-empty-object", "cut-after-a-nested-one", "a-number-as-key", "more-after"],
)
def test_a_last_line_cut_after_an_empty_object_is_a_torn_line(
    tmp_path: Path, last: str, torn: bool
) -> None:
    # `mark == "}"` -> `mark > "}"` survived in telling a torn line from one that is no JSON:
    # a cut after `{}` was an error, and a number where a key goes raised a TypeError.
    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    with path.open("a", encoding="utf-8") as file:
        file.write(last)
    if torn:
        with pytest.warns(TornLineWarning, match=":2"):
            assert [record.run for record in iter_records(path)] == ["a"]
    else:
        with pytest.raises(AuditError, match=":2: "):
            list(iter_records(path))


def test_a_torn_line_warning_points_at_the_code_reading_the_trail(tmp_path: Path) -> None:
    # `stacklevel=2` -> `3` survived: the warning named a line of the reader's caller's caller.
    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    with path.open("a", encoding="utf-8") as file:
        file.write('{"record":"verdict","run')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = []
        for record in iter_records(path):  # a loop here, not a comprehension (its own frame)
            runs.append(record.run)
    assert runs == ["a"]
    (warned,) = caught
    assert warned.category is TornLineWarning
    assert warned.filename == __file__
