"""Behaviour a mutation run found no test for on the human side (issue 27): decisions, the
audit trail's reading and writing, and calibration. Each test is written against the public
API, so it holds wherever the code lives."""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from checkprofile import Evidence, Submission, YesNoAnswer, combine, outcome_for, parse_check
from checkprofile._bundle import MAX_REASON
from checkprofile.human import (
    MAX_LINE_BYTES,
    AuditError,
    CheckCalibration,
    Completed,
    DecisionRequiredError,
    Failed,
    JsonLinesRecorder,
    Returned,
    TornLineWarning,
    calibrate,
    decision_from_json,
    decision_record,
    iter_records,
    read_records,
    record_from_json,
    verdict_record,
)
from checkprofile.human._decide._decisions import plain_decision, plain_decision_of

AT = "2026-11-02T09:00:00Z"
LATER = "2026-11-02T15:30:00Z"
LATEST = "2026-11-02T18:00:00Z"
CHECK = parse_check("Is the report right?")


# human/_decisions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "own",
    [
        {"summary": "Fixed."},
        {"next": "sign_off"},
        {"reason": "The amounts were wrong."},
    ],
)
def test_a_completed_decision_with_its_own_fields_needs_its_own_output(own: Any) -> None:
    # Dropping this check survived: a summary without an output would mix two submissions.
    (name,) = own
    with pytest.raises(DecisionRequiredError, match=f"with {name} needs its own output"):
        Completed(by="pat", at=AT, **own)
    with pytest.raises(DecisionRequiredError, match=f"with {name} needs its own output"):
        decision_from_json({"kind": "completed", "by": "pat", "at": AT, **own})
    assert Completed(by="pat", at=AT, output={"fixed": True}, **own).own_output() is not None


def test_a_completed_decision_with_evidence_but_no_output_is_refused() -> None:
    evidence = [{"kind": "file", "ref": "receipts.pdf"}]
    with pytest.raises(DecisionRequiredError, match="with evidence needs its own output"):
        decision_from_json({"kind": "completed", "by": "pat", "at": AT, "evidence": evidence})


@pytest.mark.parametrize(("length", "kept"), [(MAX_REASON - 1, True), (MAX_REASON, True)])
def test_a_reason_of_up_to_max_reason_characters_is_kept(length: int, kept: bool) -> None:
    # The bound off by one survived: a reason of exactly MAX_REASON characters is allowed.
    decision = Completed(by="pat", at=AT, output={"ok": True}, next="b", reason="r" * length)
    assert decision.reason == "r" * length


def test_a_reason_over_max_reason_characters_is_refused() -> None:
    with pytest.raises(DecisionRequiredError, match=f"at most {MAX_REASON} characters"):
        Completed(by="pat", at=AT, output={"ok": True}, next="b", reason="r" * (MAX_REASON + 1))


class Raises(dict[str, Any]):
    """A host's mapping whose own comparison raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("the host's __eq__ ran")

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("the host's __ne__ ran")

    __hash__ = None


@pytest.mark.parametrize("field", ["evidence", "summary", "next", "reason", "note"])
def test_a_decisions_fields_are_judged_without_the_hosts_own_comparison(field: str) -> None:
    # The defect issue 27 found: `value not in (None, ())` ran the value's __eq__, so the
    # host's exception came out. A field that is not what it must be is a DecisionRequiredError.
    with pytest.raises(DecisionRequiredError):
        Completed(by="pat", at=AT, **{field: Raises(a=1)})  # type: ignore[arg-type]


# the audit trail -----------------------------------------------------------------------------


def verdict(p: float = 0.95, *, at: str = AT, advisory: bool = True) -> Any:
    return combine(CHECK, [YesNoAnswer(p)], model="m", at=at, advisory=advisory)


def write_verdict(path: Path, run: str, p: float = 0.95, *, at: str = AT) -> None:
    record = verdict_record(
        outcome_for(verdict(p, at=at)),
        run_id=run,
        step_id="review",
        submission=Submission({"report": run}),
    )
    JsonLinesRecorder(path).record(record)


def write_decision(path: Path, run: str, decision: Any) -> None:
    record = decision_record(
        decision, run_id=run, step_id="review", submission=Submission({"report": run})
    )
    JsonLinesRecorder(path).record(record)


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


def decision_of_line_length(length: int) -> Any:
    """A decision record whose line (without its newline) is ``length`` bytes."""

    def record(note: str) -> Any:
        decision = Returned(note=note, by="pat", at=LATER)
        return decision_record(
            decision, run_id="a", step_id="review", submission=Submission({"x": 1})
        )

    def size(note: str) -> int:
        return len(json.dumps(record(note).to_json(), separators=(",", ":")))

    overhead = size("n") - 1
    found = record("n" * (length - overhead))
    assert size(found.to_json()["decision"]["note"]) == length
    return found


def test_the_writer_never_writes_a_line_longer_than_the_reader_reads(tmp_path: Path) -> None:
    # A line and its newline at most MAX_LINE_BYTES: what a recorder writes always reads back.
    path = tmp_path / "trail.jsonl"
    recorder = JsonLinesRecorder(path)
    recorder.record(decision_of_line_length(MAX_LINE_BYTES - 1))
    assert len(path.read_bytes()) == MAX_LINE_BYTES
    with pytest.raises(ValueError, match="over the"):
        recorder.record(decision_of_line_length(MAX_LINE_BYTES))
    assert len(path.read_bytes()) == MAX_LINE_BYTES
    assert len(list(iter_records(path))) == 1


# human/_calibrate ----------------------------------------------------------------------------


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


def test_the_first_own_field_given_is_the_one_named() -> None:
    with pytest.raises(DecisionRequiredError, match="with summary needs its own output"):
        Completed(by="pat", at=AT, summary="Fixed.", reason="Wrong amounts.")


class TextImpostor(type):
    def __eq__(cls, other: object) -> bool:
        return True

    def __ne__(cls, other: object) -> bool:
        return False

    __hash__ = type.__hash__


class Route(metaclass=TextImpostor):
    """A value whose type says it is no different from str."""


def test_a_next_whose_type_only_claims_to_be_str_is_refused() -> None:
    with pytest.raises(DecisionRequiredError, match="next must be a step id"):
        Completed(by="pat", at=AT, output={"ok": True}, next=Route())


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


@pytest.mark.parametrize(
    ("data", "read"),
    [
        (
            {"kind": "returned", "note": "fix", "by": "pat", "at": AT},
            ("returned", "pat", AT, "fix"),
        ),
        ({"kind": "failed", "note": "gone", "by": "pat", "at": AT}, ("failed", "pat", AT, "gone")),
        (
            {"kind": "completed", "note": "ok", "by": "pat", "at": AT},
            ("completed", "pat", AT, "ok"),
        ),
        ({"kind": "completed", "by": "pat", "at": AT}, ("completed", "pat", AT, None)),
    ],
    ids=["returned", "failed", "completed-with-note", "completed"],
)
def test_the_plain_decisions_people_make_most_take_the_quick_reading(
    data: dict[str, Any], read: tuple[str, ...]
) -> None:
    # `type(note) is not str` -> `== str` survived: every note sent its decision down the
    # slow reading. The quick reading gives what decision_from_json gives.
    assert plain_decision(data) == read
    assert plain_decision_of(*read) == decision_from_json(data)


@pytest.mark.parametrize("note", ["", " ", 7, None])
def test_a_return_without_a_note_takes_no_quick_reading(note: object) -> None:
    assert plain_decision({"kind": "returned", "note": note, "by": "pat", "at": AT}) is None


@pytest.mark.parametrize("again", [1, 2, 23], ids=["once", "twice", "23-times"])
def test_a_decision_that_repeats_its_note_any_number_of_times_is_refused(
    tmp_path: Path, again: int
) -> None:
    # Counting the keys as the product of the record's and the decision's (`+` -> `*`)
    # survived: 23 more notes make as many keys as that product, and the quick reading took
    # the line. A key written again is no record, however often.
    path = tmp_path / "trail.jsonl"
    write_decision(path, "a", Returned(note="fix", by="pat", at=AT))
    line = path.read_text(encoding="utf-8")
    assert line.count('"note":"fix",') == 1
    path.write_text(line.replace('"note":"fix",', '"note":"fix",' * (1 + again)), encoding="utf-8")
    with pytest.raises(AuditError, match=r":1: .*(twice|repeat|again)"):
        list(iter_records(path))


@pytest.mark.parametrize(
    ("since", "until", "cases"),
    [
        ("2026-11-02", None, 2),
        ("2026-11-02T12:00:00Z", None, 1),
        (None, "2026-11-02T12:00:00+00:00", 1),
        ("2026-11-01", "2026-11-03", 2),
        (None, LATER, 1),  # until is not inside: the verdict at it is not counted
        (None, "2026-11-02T16:00:00+02:00", 1),  # 14:00 UTC
        (None, "2026-11-03T00:00:00+10:00", 1),  # 14:00 UTC
        ("2026-11-02T19:00:00+10:00", None, 2),  # 09:00 UTC, and since is inside
    ],
)
def test_a_calibration_window_given_as_text_counts_the_verdicts_inside_it(
    tmp_path: Path, since: str | None, until: str | None, cases: int
) -> None:
    # `isinstance(value, str)` negated in the window's reading survived (audit sources).
    path = tmp_path / "trail.jsonl"
    for run, at in (("a", AT), ("b", LATER)):
        write_verdict(path, run, at=at)
        write_decision(path, run, Completed(by="pat", at=LATEST))
    (check,) = calibrate(path, since=since, until=until, min_cases=1).checks
    assert check.at_current.cases == cases


@pytest.mark.parametrize("end", [b"\t", b"\x00", b"\r", b'"'])
def test_a_record_after_a_fragment_ending_in_any_byte_starts_on_a_new_line(
    tmp_path: Path, end: bytes
) -> None:
    # `last byte != b"\n"` -> `> b"\n"` survived: a fragment ending in a byte below the
    # newline's had the next record glued to it.
    path = tmp_path / "trail.jsonl"
    path.write_bytes(b'{"record":' + end)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_verdict(path, "a")
    fragment, line, rest = path.read_bytes().split(b"\n")
    assert fragment == b'{"record":' + end
    assert rest == b""
    assert json.loads(line)["run"] == "a"


def test_a_trail_the_writer_may_only_append_to_takes_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writer reads the file's last byte when it may; a file it may only append to (no
    # read access) still takes each record, created as rw-r--r-- as ever. Survived: the
    # write-only branch marked readable, and its mode 0o644 made 0o645.
    path = tmp_path / "trail.jsonl"
    real_open = os.open

    def append_only(name: Any, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_RDWR:
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, flags, mode)

    monkeypatch.setattr(os, "open", append_only)
    previous = os.umask(0o022)
    try:
        write_verdict(path, "a")
        write_verdict(path, "b")
    finally:
        os.umask(previous)
    monkeypatch.undo()
    assert [record.run for record in iter_records(path)] == ["a", "b"]
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_new_trail_is_made_rw_r__r__(tmp_path: Path) -> None:
    path = tmp_path / "trail.jsonl"
    previous = os.umask(0o022)
    try:
        write_verdict(path, "a")
    finally:
        os.umask(previous)
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_window_holds_its_since_and_not_its_until() -> None:
    # What a record source is handed to filter by (`order < until` -> `<=` survived).
    from checkprofile.human._audit._sources import Window

    window = Window.of(since=AT, until=LATER)
    assert window.holds(AT)
    assert window.holds("2026-11-02T15:29:59.999Z")
    assert not window.holds(LATER)
    assert not window.holds("2026-11-02T08:59:59Z")


def test_a_calibration_of_records_in_hand_reads_them_as_from_their_file(tmp_path: Path) -> None:
    # The check of what is handed in, negated, survived: every record was refused.
    path = tmp_path / "trail.jsonl"
    for run in ("a", "b"):
        write_verdict(path, run)
        write_decision(path, run, Completed(by="pat", at=LATER))
    (check,) = calibrate(list(iter_records(path)), min_cases=1).checks
    assert check.at_current.cases == calibrate(path, min_cases=1).checks[0].at_current.cases == 2
    with pytest.raises(TypeError, match="an audit record is needed"):
        calibrate([*iter_records(path), {"record": "verdict"}], min_cases=1)


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


# found by a third mutation draw (seed 2027) ------------------------------------------------------


def test_a_completed_decision_with_own_fields_but_no_output_names_the_first_of_them() -> None:
    data = {"kind": "completed", "by": "ana", "at": AT, "summary": "Mine.", "evidence": []}
    with pytest.raises(DecisionRequiredError, match="a completed decision with summary needs"):
        decision_from_json(data)


def test_a_decision_whose_time_is_of_a_hostile_type_is_not_plain_and_runs_nothing() -> None:
    # The type of `at` is compared by identity: a metaclass's own == and != never run
    # (Hostile, below).
    assert plain_decision({"kind": "returned", "by": "ana", "at": stamp(), "note": "n"}) is None


def test_a_value_of_a_long_type_name_is_named_in_forty_characters() -> None:
    long_named = type("T" * 60, (), {})
    with pytest.raises(DecisionRequiredError) as error:
        decision_from_json({"kind": "returned", "by": "ana", "at": AT, "note": long_named()})
    # The shape received names the value's type in at most forty characters, the last a mark.
    assert error.value.received.endswith("note (" + "T" * 38 + "…)")


@pytest.mark.parametrize(
    "output", [{1, 2}, float("nan"), [1], "text"], ids=["set", "nan", "list", "text"]
)
def test_a_persons_output_that_is_no_map_is_refused_as_no_map(output: object) -> None:
    # Not a map is the first thing said of it, whether or not it is JSON data too.
    with pytest.raises(DecisionRequiredError, match="output must be a map"):
        Completed(by="ana", at=AT, output=output)


# found by a fourth mutation draw (seed 2028): human/_decisions, its checks and messages -----------


class Hostile(type):
    """A metaclass whose own comparison raises: a value of such a type runs a host's code as
    soon as its type is compared by == or !=."""

    def __eq__(cls, other: object) -> bool:
        raise RuntimeError("a hostile type's own code ran")

    def __ne__(cls, other: object) -> bool:
        raise RuntimeError("a hostile type's own code ran")

    __hash__ = type.__hash__


class Stamp(metaclass=Hostile):
    """A value of a hostile type."""


def stamp() -> Any:
    return Stamp()


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: Returned(note="n", by=stamp(), at=AT), "by must be a string"),
        (lambda: Returned(note="n", by="pat", at=stamp()), "at must be an RFC 3339 time"),
        (lambda: Returned(note=stamp(), by="pat", at=AT), "note must be a string"),
        (lambda: Failed(note="n", by="pat", at=stamp()), "at must be an RFC 3339 time"),
        (lambda: Completed(by="pat", at=stamp()), "at must be an RFC 3339 time"),
        (lambda: Completed(by="pat", at=AT, note=stamp()), "note must be a string"),
        (lambda: Completed(by="pat", at=AT, output=stamp()), "output must be a map"),
        (lambda: Completed(by="pat", at=AT, output={}, summary=stamp()), "summary must be a"),
        (lambda: Completed(by="pat", at=AT, output={}, next=stamp()), "next must be a step id"),
        (lambda: Completed(by="pat", at=AT, output={}, reason=stamp()), "reason must be a"),
        (lambda: Completed(by="pat", at=AT, output={}, evidence=stamp()), "evidence must be a"),
    ],
    ids=[
        "by",
        "at",
        "note",
        "failed-at",
        "completed-at",
        "completed-note",
        "output",
        "summary",
        "next",
        "reason",
        "evidence",
    ],
)
def test_a_decision_holding_a_value_of_a_hostile_type_is_refused_running_none_of_its_code(
    make: Any, said: str
) -> None:
    # `type(at) is not str` and `type(evidence) is not tuple` -> `!=` survived: the type's
    # own comparison ran, and its exception came out instead of the decision's error.
    with pytest.raises(DecisionRequiredError, match=said):
        make()


def test_a_decision_changed_to_hold_a_hostile_value_is_refused_where_it_is_acted_on() -> None:
    decision = Completed(by="pat", at=AT, output={"ok": True})
    for field in ("at", "evidence"):
        changed = Completed(by="pat", at=AT, output={"ok": True})
        object.__setattr__(changed, field, stamp())
        with pytest.raises(DecisionRequiredError, match=f"{field} must be"):
            decision_from_json(changed)
    assert decision_from_json(decision) is decision  # a sound typed decision is taken as it is


def test_a_decisions_error_says_the_problem_the_shape_received_and_what_is_allowed() -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json({})
    assert str(caught.value) == (
        "a decision needs a kind; received an empty map (a decision is returned (note, by, at),"
        " completed (by, at, and optionally note, output, summary, evidence, next, reason) or"
        " failed (note, by, at))"
    )
    assert (caught.value.problem, caught.value.received) == (
        "a decision needs a kind",
        "an empty map",
    )


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"kind": "completed"}, "a completed decision needs by, at"),
        ({"kind": "failed", "by": "pat"}, "a failed decision needs note, at"),
        (
            {"kind": "completed", "by": "pat", "at": AT, "extra": 1},
            "a completed decision has only the keys kind, by, at, note, output, summary,"
            " evidence, next, reason",
        ),
        (
            {"kind": "returned", "note": "n", "by": "pat", "at": AT, "extra": 1},
            "a returned decision has only the keys kind, note, by, at",
        ),
    ],
)
def test_a_decision_missing_a_key_or_with_one_too_many_names_them_all(
    data: dict[str, Any], problem: str
) -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(data)
    assert caught.value.problem == problem


def _keys(count: int) -> dict[str, int]:
    return {f"k{n:02d}": n for n in range(count)}


@pytest.mark.parametrize(
    ("count", "more"), [(11, None), (12, None), (13, "and 1 more"), (40, "and 28 more")]
)
def test_a_shape_names_twelve_keys_and_then_how_many_more(count: int, more: str | None) -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(_keys(count))
    named = [f"k{n:02d} (int)" for n in range(min(count, 12))]
    assert caught.value.received == "a map with keys " + ", ".join(named + ([more] if more else []))


class Many(Mapping[str, int]):
    """A map of one's own with more keys than a message reads."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __getitem__(self, key: str) -> int:
        return 0

    def __iter__(self) -> Iterator[str]:
        return (f"key{n:05d}" for n in range(self.size))

    def __len__(self) -> int:
        return self.size


class Unreadable(Many):
    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("cannot list itself")


def test_a_map_of_ones_own_is_read_only_so_far_for_its_shape() -> None:
    # Not a dict, so not JSON data; its shape is read from its first 10,000 items only.
    with pytest.raises(DecisionRequiredError, match="a decision is JSON data") as caught:
        decision_from_json(Many(25_000))
    assert caught.value.received.endswith("key00011 (int), and 9988 more")
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(Unreadable(3))
    assert caught.value.received == "a Unreadable that cannot be read"


class Disguised(str):
    def __str__(self) -> str:
        return "what the key says of itself"


@pytest.mark.parametrize(
    ("value", "received"),
    [
        (("returned", "n"), "a tuple of 2 items"),
        ([], "a list of 0 items"),
        ({Disguised("kind"): 1}, "a map with keys kind (int)"),
        ({"k" * 40: 1}, "a map with keys " + "k" * 31 + "… (int)"),
        ({"kind": "returned", "note": None}, "a map with keys kind (str), note (null)"),
    ],
    ids=["tuple", "list", "key-of-a-str-type", "long-key", "null"],
)
def test_a_shape_names_what_arrived_by_its_own_base_type(value: object, received: str) -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(value)
    assert caught.value.received == received


def test_a_tampered_typed_decision_is_named_as_such() -> None:
    decision = Returned(note="n", by="pat", at=AT)
    object.__setattr__(decision, "note", " ")
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(decision)
    assert caught.value.received == "a Returned decision"


def test_the_hosts_time_is_a_decisions_time_only_when_it_carries_none() -> None:
    data = {"kind": "failed", "note": "gone", "by": "pat"}
    assert decision_from_json(data, at=LATER).at == LATER
    aware = datetime(2026, 11, 2, 17, 30, tzinfo=timezone(timedelta(hours=2)))
    assert decision_from_json(data, at=aware).at == LATER
    assert decision_from_json({**data, "at": AT}, at=LATER).at == AT
    with pytest.raises(DecisionRequiredError, match="at must be an RFC 3339 time string"):
        decision_from_json(data, at=1_764_000_000)  # type: ignore[arg-type]
    with pytest.raises(DecisionRequiredError, match="needs at"):
        decision_from_json(data)


def test_a_decision_that_is_no_json_data_is_refused_as_such() -> None:
    with pytest.raises(DecisionRequiredError, match=r"a decision is JSON data \(") as caught:
        decision_from_json({"kind": "failed", "note": {1, 2}, "by": "pat", "at": AT})
    assert caught.value.received == "a map with keys at (str), by (str), kind (str), note (set)"


def test_a_persons_own_output_and_everything_with_it_is_kept() -> None:
    data = {
        "kind": "completed",
        "by": "pat",
        "at": AT,
        "note": "Redone by hand.",
        "output": {"total": 12},
        "summary": "Twelve.",
        "evidence": [{"kind": "link", "ref": "https://x/y"}],
        "next": "sign_off",
        "reason": "The sums were wrong.",
    }
    decision = decision_from_json(data)
    assert decision.to_json() == data
    own = Completed(
        by="pat",
        at=AT,
        note="Redone by hand.",
        output={"total": 12},
        summary="Twelve.",
        evidence=[Evidence("link", "https://x/y")],
        next="sign_off",
        reason="The sums were wrong.",
    )
    assert decision == own and own.evidence == (Evidence("link", "https://x/y"),)
    assert own.own_output() == Submission(
        {"total": 12},
        "Twelve.",
        (Evidence("link", "https://x/y"),),
        next="sign_off",
        reason="The sums were wrong.",
    )


PLAIN = {"kind": "returned", "note": "fix", "by": "pat", "at": AT}


@pytest.mark.parametrize(
    "data",
    [
        PLAIN,
        {**PLAIN, "kind": "failed"},
        {"kind": "completed", "by": "pat", "at": AT},
        {"kind": "completed", "by": "pat", "at": AT, "note": "ok"},
        {"kind": "completed", "by": "pat", "at": AT, "note": None},
        {"kind": "completed", "by": "pat", "at": AT, "note": " "},
        {"kind": "completed", "by": "pat", "at": AT, "note": 3},
        {"kind": "completed", "by": "pat", "at": AT, "output": {}},
        {"kind": "completed", "by": "pat"},
        {**PLAIN, "note": None},
        {**PLAIN, "by": ""},
        {**PLAIN, "by": " \t"},
        {**PLAIN, "by": 7},
        {**PLAIN, "at": "2026-11-02"},
        {**PLAIN, "at": "2026-11-02T09:00:00"},
        {**PLAIN, "at": 7},
        {**PLAIN, "kind": "approved"},
        {**PLAIN, "kind": ["returned"]},
        {**PLAIN, "extra": 1},
        {"note": "fix", "by": "pat", "at": AT},
        {"kind": "failed", "by": "pat", "at": AT},
    ],
)
def test_the_quick_reading_of_a_decision_agrees_with_the_full_one(data: dict[str, Any]) -> None:
    # plain_decision checks what decision_from_json checks: it reads a plain decision the
    # full reading takes, and nothing the full reading refuses.
    try:
        full: Any = decision_from_json(data)
    except DecisionRequiredError:
        full = None
    quick = plain_decision(data)
    if quick is not None:
        assert plain_decision_of(*quick) == full
    plain_shape = set(data) - {"note"} == {"kind", "by", "at"} and "output" not in data
    assert (quick is not None) == (full is not None and plain_shape)


# found by a fourth mutation draw (seed 2028): human/_audit_sources, a window's times -------------


@pytest.mark.parametrize(
    ("given", "utc"),
    [
        ("2026-11-02T04:00:00-05:00", "2026-11-02T09:00:00Z"),
        ("2026-11-01T23:30:00-09:30", "2026-11-02T09:00:00Z"),
        ("2026-11-02T08:59:59.25-00:01", "2026-11-02T09:00:59.25Z"),
        ("2026-11-02T18:00:00+09:00", "2026-11-02T09:00:00Z"),
    ],
)
def test_a_window_given_with_an_offset_is_read_as_the_same_moment_in_utc(
    given: str, utc: str
) -> None:
    # `moment + shift` -> `moment * shift` survived: no test gave an offset west of UTC.
    from checkprofile.human._audit._sources import Window

    window = Window.of(since=given, until="2026-11-03")
    assert window.since == utc
    assert window.holds(utc)


def test_a_window_tells_times_apart_to_the_last_digit_of_their_fraction() -> None:
    # `at[20:-1]` -> `at[20:~1]` survived: the last digit of a fraction was dropped, so a
    # verdict a fraction of a millisecond before `since` was counted inside the window.
    from checkprofile.human._audit._sources import Window

    window = Window.of(since="2026-11-02T09:00:00.123Z", until="2026-11-02T09:00:00.5Z")
    assert window.holds("2026-11-02T09:00:00.123Z")
    assert window.holds("2026-11-02T09:00:00.1231Z")
    assert not window.holds("2026-11-02T09:00:00.1229Z")
    assert not window.holds("2026-11-02T09:00:00.12Z")
    assert window.holds("2026-11-02T09:00:00.4999Z")
    assert not window.holds("2026-11-02T09:00:00.5Z")
    assert not window.holds("2026-11-02T09:00:00.51Z")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"since": "2026-12-01", "until": "2026-11-01"}, "since must be before until, got since"),
        ({"since": "2026-11-01T01:00:00+01:00", "until": "2026-11-01"}, "since must be before"),
        ({"since": "yesterday"}, "since must be an RFC 3339 time (2026-11-01T00:00:00Z, with Z"),
        ({"until": "2026-02-30"}, 'until names no real time: "2026-02-30"'),
        ({"until": "2026-11-01T24:00:00Z"}, "until names no real time"),
        ({"since": "2026-11-01T00:00:00+24:00"}, "since names no real time"),
        ({"since": "2026-11-01T00:00:00+00:60"}, "since names no real time"),
        ({"until": "9999-12-31T23:00:00-05:00"}, "until names no real time"),
        ({"since": datetime(2026, 11, 1)}, "since must be a timezone-aware datetime, got"),
        ({"until": 20261101}, "until must be an RFC 3339 time"),
        ({"until": "2026-11-01 00:00:00Z"}, "until must be an RFC 3339 time"),
    ],
    ids=[
        "reversed",
        "empty-by-an-offset",
        "words",
        "no-such-day",
        "no-such-hour",
        "no-such-offset",
        "no-such-offset-minute",
        "past-year-9999",
        "naive",
        "number",
        "space",
    ],
)
def test_a_window_that_is_no_window_is_refused_naming_what_is_wrong(
    options: dict[str, Any], message: str
) -> None:
    # The same checks calibrate makes (tests/human/calibration/test_human_calibrate.py), asked of
    # the window itself: those tests do not judge _audit_sources' mutants.
    from checkprofile.human._audit._sources import Window

    with pytest.raises(ValueError) as caught:
        Window.of(**options)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("given", "utc"),
    [
        ("2026-11-02", "2026-11-02T00:00:00Z"),
        ("2026-11-02t09:00:00z", "2026-11-02T09:00:00Z"),
        ("2026-11-02T09:00:00.500Z", "2026-11-02T09:00:00.5Z"),
        ("2026-11-02T09:00:00.000Z", "2026-11-02T09:00:00Z"),
        ("2026-11-02T11:00:00.250+02:00", "2026-11-02T09:00:00.25Z"),
        ("2026-11-02T23:59:60+01:00", "2026-11-02T22:59:60Z"),  # a leap second, as with Z
        (datetime(2026, 11, 2, 11, tzinfo=timezone(timedelta(hours=2))), "2026-11-02T09:00:00Z"),
        (None, None),
    ],
)
def test_a_windows_bound_is_one_text_for_one_moment(given: object, utc: str | None) -> None:
    from checkprofile.human._audit._sources import Window

    assert Window.of(until=given).until == utc
    assert Window.of(since=given).since == utc


def test_times_sort_by_their_order_texts_as_the_moments_do() -> None:
    from checkprofile._time import at_order

    times = [
        "2026-11-02T08:59:59.999Z",
        "2026-11-02T09:00:00Z",
        "2026-11-02T09:00:00.05Z",
        "2026-11-02T09:00:00.5Z",
        "2026-11-02T09:00:00.501Z",
        "2026-11-02T09:00:00.51Z",
        "2026-11-02T09:00:01Z",
        "2026-11-03T00:00:00Z",
    ]
    orders = [at_order(at) for at in times]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    assert at_order("2026-11-02T09:00:00.500Z") == at_order("2026-11-02T09:00:00.5Z")
    assert at_order("2026-11-02T09:00:00.000Z") == "2026-11-02T09:00:00"


def test_a_window_without_bounds_holds_every_time() -> None:
    from checkprofile.human._audit._sources import Window

    assert Window.of().holds("1970-01-01T00:00:00Z")
    assert Window.of(since=AT).holds("9999-12-31T23:59:59Z")
    assert Window.of(until=AT).holds("0001-01-01T00:00:00Z")


# found by a fifth mutation draw (seed 2029) -------------------------------------------------------


def test_a_writer_waits_for_the_lock_another_writer_holds(tmp_path: Path) -> None:
    # `fcntl is not None` -> `is None` survived: no record was written under the lock, so
    # two processes' records could interleave within a line.
    import fcntl
    import threading

    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    other = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        writer = threading.Thread(target=write_verdict, args=(path, "b"))
        writer.start()
        writer.join(0.3)
        assert writer.is_alive()  # waiting for the lock
        assert len(path.read_bytes().splitlines()) == 1
        fcntl.flock(other, fcntl.LOCK_UN)
        writer.join(10)
        assert not writer.is_alive()
    finally:
        os.close(other)
    assert [record.run for record in iter_records(path)] == ["a", "b"]


class HostileDict(dict[str, Any], metaclass=Hostile):
    """A decision read from JSON whose type's own comparison raises."""


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "returned", "note": "n", "by": stamp(), "at": AT},
        {"kind": "returned", "note": stamp(), "by": "pat", "at": AT},
        {"kind": "completed", "note": stamp(), "by": "pat", "at": AT},
        {"kind": stamp(), "note": "n", "by": "pat", "at": AT},
        HostileDict(kind="returned", note="n", by="pat", at=AT),
    ],
    ids=["by", "note", "completed-note", "kind", "the-map"],
)
def test_the_quick_reading_runs_none_of_a_hostile_values_code(data: Any) -> None:
    # Each of its type checks is by identity: a value of a hostile type is no plain decision.
    assert plain_decision(data) is None


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
        Returned(note="n", by="pat", at=AT),
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


# human/_audit_sources: where records are read from (open_sources; calibrate's tests, which
# use it, do not judge this module's mutants) -------------------------------------------------


def _sources(*sources: object, window: Any = None) -> tuple[list[str], list[Any]]:
    from checkprofile.human._audit._sources import Window, open_sources

    names, reads = open_sources(sources, window or Window())
    return names, list(reads)


def _runs(reads: list[Any]) -> list[str]:
    return [record.run for record, _ in reads]


def test_a_directory_is_read_as_its_jsonl_files_in_name_order(tmp_path: Path) -> None:
    for run in ("b", "a", "c"):
        write_verdict(tmp_path / f"{run}.jsonl", run)
    (tmp_path / "notes.txt").write_text("not a trail\n", encoding="utf-8")
    (tmp_path / "old.jsonl.bak").write_text("not a trail\n", encoding="utf-8")
    (tmp_path / "sub.jsonl").mkdir()
    names, reads = _sources(tmp_path)
    assert names == [str(tmp_path / f"{run}.jsonl") for run in ("a", "b", "c")]
    assert _runs(reads) == ["a", "b", "c"]


def test_a_directory_without_audit_files_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError) as caught:
        _sources(tmp_path)
    assert caught.value.filename == str(tmp_path)
    assert "no audit records (*.jsonl) in this directory" in str(caught.value)


def test_a_file_named_twice_in_any_form_is_read_once(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_verdict(path, "a")
    other = tmp_path / "b.jsonl"
    write_verdict(other, "b")
    # The directory's first file was read already; its second is still to read.
    names, reads = _sources(path, str(path), JsonLinesRecorder(path), tmp_path)
    assert names == [str(path), str(other)]
    assert _runs(reads) == ["a", "b"]


def test_every_file_is_listed_before_any_is_read(tmp_path: Path) -> None:
    from checkprofile.human._audit._sources import Window, open_sources

    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    with pytest.raises(FileNotFoundError):
        open_sources([path, tmp_path / "missing.jsonl"], Window())


def test_records_in_hand_are_read_with_the_fingerprint_of_their_line(tmp_path: Path) -> None:
    from checkprofile.human._audit._strict import TornLine

    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    write_verdict(path, "b")
    _, from_file = _sources(path)
    records = list(read_records(path))
    torn = TornLine(str(path), 3)
    for given in (records, tuple(records), iter(records)):
        names, reads = _sources(given)
        assert names == []
        assert [record for record, _ in reads] == records
        # The same lines as in the file, the same fingerprints: one record, counted once.
        assert [seen for _, seen in reads] == [seen for _, seen in from_file]
    _, reads = _sources([records[0], torn])
    assert reads[1] == (torn, 0)
    assert reads[0][1] != _sources([records[1]])[1][0][1]


class Named:
    """Has a name, as a record source does, but no stream."""

    name = "audit"


class Streams:
    """Has a stream, as a record source does, but no name."""

    def stream(self, window: object) -> Iterator[Any]:
        return iter(())


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (7, "a source is a path, a directory, a recorder, or a list, tuple or iterator of"),
        ({"run": "a"}, "a source is a path"),
        ([{"run": "a"}], "an audit record is needed (see read_records), got"),
        (Named(), "a source is a path"),
        (Streams(), "a source is a path"),
    ],
    ids=["a-number", "a-map", "a-list-of-maps", "a-name-only", "a-stream-only"],
)
def test_what_is_no_source_of_records_is_refused_naming_it(source: object, said: str) -> None:
    with pytest.raises(TypeError, match=re.escape(said)):
        _sources(source)


def test_a_record_source_is_asked_for_the_window_and_named_by_its_name(tmp_path: Path) -> None:
    from checkprofile.human._audit._sources import Window

    path = tmp_path / "trail.jsonl"
    write_verdict(path, "a")
    _, from_file = _sources(path)
    asked: list[Any] = []

    class Store:
        name = "postgresql://audit"

        def stream(self, window: Window) -> Any:
            asked.append(window)
            return iter(from_file)

    window = Window.of(since=AT)
    names, reads = _sources(Store(), window=window)
    assert names == ["postgresql://audit"]
    assert reads == from_file
    assert asked == [window]


# found by a sixth mutation draw (seed 2030) -------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda **kw: Returned(note="n", by="pat", at=AT, **kw), "returned"),
        (lambda **kw: Completed(by="pat", at=AT, **kw), "completed"),
        (lambda **kw: Failed(note="n", by="pat", at=AT, **kw), "failed"),
    ],
    ids=["returned", "completed", "failed"],
)
def test_a_decisions_kind_is_its_class_and_no_argument(make: Any, kind: str) -> None:
    # `init=False` -> `True` on Returned.kind survived: a Returned(kind="failed") could be
    # made, a return that says it is a failure.
    assert make().kind == kind
    assert make().to_json()["kind"] == kind
    with pytest.raises(TypeError):
        make(kind="failed" if kind != "failed" else "returned")


def test_decisions_and_resolutions_are_made_by_keyword_only() -> None:
    from checkprofile.human import Resolution

    for make in (
        lambda: Returned("n", "pat", AT),  # type: ignore[call-arg]
        lambda: Failed("n", "pat", AT),  # type: ignore[call-arg]
        lambda: Completed("pat", AT),  # type: ignore[call-arg]
        lambda: Resolution(None, Completed(by="pat", at=AT)),  # type: ignore[call-arg, arg-type]
    ):
        with pytest.raises(TypeError):
            make()


# found by a seventh mutation draw (seed 2031) -----------------------------------------------------


def test_the_hosts_time_for_a_decision_is_given_by_keyword_only() -> None:
    # `*` -> `/` survived: a time given by position was taken as the host's clock.
    data = {"kind": "failed", "note": "gone", "by": "pat"}
    assert decision_from_json(data=data, at=LATER).at == LATER
    with pytest.raises(TypeError):
        decision_from_json(data, LATER)  # type: ignore[call-arg]


# found by an eighth mutation draw (seed 2032) -----------------------------------------------------


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
