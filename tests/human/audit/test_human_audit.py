"""The audit trail: verdict and decision records, JSON Lines appends from many processes, and
reading the records back typed."""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_human_receipts import answers_for_the_example
from test_human_records import (
    CHECK,
    MODEL,
    PASSING,
    RUN,
    SCRIPTS,
    STEP,
    make_outcome,
    outcome_of,
    round_trip,
)

from checkprofile import (
    Answer,
    ChoiceAnswer,
    Evidence,
    Failure,
    ModelCall,
    Reply,
    RubricAnswer,
    Submission,
    Usage,
    YesNoAnswer,
    build_bundle,
    canonical_json,
    combine,
    error_verdict,
    format_at,
    outcome_for,
    parse_check,
    run_check_sync,
)
from checkprofile._shown import is_blank
from checkprofile._time import at_order
from checkprofile.errors import MaterialError, VerdictError
from checkprofile.human import (
    AUDIT_FORMAT,
    MAX_LINE_BYTES,
    AuditError,
    AuditRecord,
    Completed,
    Decision,
    DecisionRecord,
    DecisionRequiredError,
    Failed,
    JsonLinesRecorder,
    Recorder,
    Returned,
    TornLine,
    TornLineWarning,
    VerdictRecord,
    apply_decision,
    bundle_bytes,
    bundle_sha256,
    calibrate,
    check_key,
    decision_record,
    iter_records,
    read_records,
    record_from_json,
    records_for,
    resolution_record,
    submission_key,
    submission_sha256,
    verdict_record,
)
from checkprofile.human._audit._fast._reader import _Reader
from checkprofile.human._audit._recorders import record_line
from support import (
    AT,
    SPEC_ONE_OF,
    SPEC_RUBRIC_ASK,
    TRAIL_AT,
    material,
    write_decision,
    write_verdict,
)

WHEN = "2026-10-06T10:15:00Z"
SUBMISSION = Submission({"cleared": True}, "done")


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# --- verdict records ---------------------------------------------------------------------------


def test_a_verdict_record_keeps_the_answers_distributions_and_reads_them_back(
    tmp_path: Path,
) -> None:
    script: dict[str, Answer | Failure] = {
        **SCRIPTS["unsure"],
        SPEC_RUBRIC_ASK: RubricAnswer(
            1, 0.9, source="native", distribution=((0, 0.05), (1, 0.9), (2, 0.05))
        ),
    }
    record = verdict_record(make_outcome(script), run_id=RUN, step_id=STEP)
    data = record.to_json()
    assert data["provenance"][2] == {
        "source": "native",
        "distribution": [[1, 0.9], [0, 0.05], [2, 0.05]],
    }
    JsonLinesRecorder(tmp_path / "audit.jsonl").record(record)
    (again,) = read_records(tmp_path / "audit.jsonl")
    assert again == record
    assert again.provenance == record.provenance
    # A distribution that contradicts the recorded answer is refused.
    data["provenance"][2]["distribution"] = [[2, 0.9], [1, 0.1]]
    with pytest.raises(ValueError, match=r"provenance: .*not the most probable"):
        record_from_json(data)


def test_an_error_verdict_record_has_no_provenance() -> None:
    record = verdict_record(outcome_of("error"), run_id=RUN, step_id=STEP)
    assert "provenance" not in record.to_json()
    assert record_from_json(record.to_json()) == record


def test_a_verdict_record_carries_what_calibration_needs() -> None:
    outcome = outcome_of("unsure", advisory=True)
    assert outcome.bundle is not None
    record = verdict_record(outcome, run_id=RUN, step_id=STEP)
    data = record.to_json()
    assert list(data) == [
        "record",
        "format",
        "key",
        "run",
        "step",
        "submission_sha256",
        "bundle_sha256",
        "check_key",
        "action",
        "attempts",
        "check",
        "verdict",
        "provenance",
        "calls",
    ]
    # The one attempt: its wall time (measured) and the questions it asked; no usage, as
    # the scripted evaluator reported none.
    (call,) = data["calls"]
    assert set(call) == {"seconds", "questions"} and 0 <= call["seconds"] < 5
    submission_hash = sha256(canonical_json(SUBMISSION.to_json()).encode())
    assert data == {
        "record": "verdict",
        "format": AUDIT_FORMAT,
        "key": sha256(canonical_json([RUN, STEP, submission_hash]).encode()),
        "run": RUN,
        "step": STEP,
        "submission_sha256": submission_hash,
        "bundle_sha256": sha256(bundle_bytes(outcome.bundle)),
        "check_key": sha256(canonical_json(CHECK.to_json()).encode()),
        "action": "complete",
        "attempts": 1,
        "check": CHECK.to_json(),
        "verdict": outcome.verdict.to_json(),
        # Where each answer came from (the scripted evaluator gave no distributions).
        "provenance": [{"source": "scripted"}] * 3,
        "calls": [{"seconds": call["seconds"], "questions": 3}],
    }
    assert (record.advisory, record.model, record.at, record.result) == (
        True,
        MODEL,
        AT,
        "unsure",
    )
    # Each question with its thresholds, its answer and its result.
    question, result = record.questions[0]
    assert (question.pass_at, question.fail_below, result.answer, result.result) == (  # type: ignore[union-attr]
        0.9,
        0.5,
        0.62,
        "unsure",
    )


def test_a_verdict_record_reads_back_equal() -> None:
    record = verdict_record(outcome_of("fail"), run_id=RUN, step_id=STEP)
    assert record_from_json(round_trip(record.to_json())) == record


@given(answers_for_the_example)
def test_every_verdict_record_reads_back_equal(answers: tuple[Answer, Answer, Answer]) -> None:
    verdict = combine(CHECK, answers, model=MODEL, at=AT)
    bundle = build_bundle(CHECK, material(), state_bytes=65536)
    record = verdict_record(outcome_for(verdict, bundle=bundle), run_id=RUN, step_id=STEP)
    assert record_from_json(json.loads(record_line(record))) == record


def test_a_retried_question_is_recorded_with_its_attempts() -> None:
    script: dict[str, Any] = {
        **PASSING,
        SPEC_RUBRIC_ASK: [Failure("timeout"), RubricAnswer(2, 0.9)],
    }
    record = verdict_record(make_outcome(script), run_id=RUN, step_id=STEP)
    assert record.attempts == 2 and record.result == "pass"


def test_an_outcome_without_its_bundle_needs_the_submission() -> None:
    bare = outcome_for(outcome_of("pass").verdict)
    with pytest.raises(ValueError, match="give submission="):
        verdict_record(bare, run_id=RUN, step_id=STEP)
    record = verdict_record(bare, run_id=RUN, step_id=STEP, submission=SUBMISSION)
    assert record.bundle_sha256 is None
    assert record.key == verdict_record(outcome_of("pass"), run_id=RUN, step_id=STEP).key
    assert record_from_json(round_trip(record.to_json())) == record


def test_the_check_key_is_the_normalized_check() -> None:
    # The short form and its full form grade alike: one key.
    assert check_key(parse_check("Is it done?")) == check_key(
        parse_check([{"ask": "Is it done?", "pass": 0.9}])
    )
    assert check_key(parse_check("Is it done?")) != check_key(
        parse_check([{"ask": "Is it done?", "pass": 0.8}])
    )


def test_the_submission_key_is_the_run_the_step_and_the_submission() -> None:
    key = submission_key(RUN, STEP, SUBMISSION)
    # Evidence urls are short-lived and not part of a submission.
    with_url = Submission({"cleared": True}, "done", [{"kind": "file", "ref": "r", "url": "u"}])
    without = Submission({"cleared": True}, "done", [Evidence("file", "r")])
    assert submission_key(RUN, STEP, with_url) == submission_key(RUN, STEP, without)
    assert key != submission_key("run-8", STEP, SUBMISSION)
    assert key != submission_key(RUN, "approve", SUBMISSION)
    assert key != submission_key(RUN, STEP, Submission({"cleared": False}, "done"))
    # Unambiguous: the parts are a JSON list, not a joined string.
    assert submission_key("a:b", "c", SUBMISSION) != submission_key("a", "b:c", SUBMISSION)
    assert submission_sha256(SUBMISSION) == sha256(
        b'{"evidence":[],"output":{"cleared":true},"summary":"done"}'
    )


# --- decision records --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "accepted"),
    [
        pytest.param(Completed(by="al", at=WHEN), True, id="completed-with-the-candidate"),
        pytest.param(Completed(by="al", at=WHEN, output={"x": 1}), False, id="completed-own"),
        pytest.param(Returned(note="n", by="al", at=WHEN), False, id="returned"),
        pytest.param(Failed(note="n", by="al", at=WHEN), False, id="failed"),
    ],
)
def test_a_decision_on_an_escalation_joins_its_verdict(decision: Decision, accepted: bool) -> None:
    outcome = outcome_of("unsure")
    escalation = records_for(outcome, run_id=RUN, step_id=STEP).escalation
    assert escalation is not None
    record = resolution_record(apply_decision(escalation, decision))
    assert record.key == verdict_record(outcome, run_id=RUN, step_id=STEP).key
    assert record.accepted is accepted
    assert record.to_json() == {
        "record": "decision",
        "format": AUDIT_FORMAT,
        "key": record.key,
        "run": RUN,
        "step": STEP,
        "submission_sha256": submission_sha256(escalation.candidate),
        "escalated_at": AT,
        "accepted": accepted,
        "decision": decision.to_json(),
    }
    assert record_from_json(round_trip(record.to_json())) == record


def test_an_approvers_decision_after_an_advisory_check_joins_its_verdict() -> None:
    outcome = outcome_of("fail", advisory=True)
    verdict = verdict_record(outcome, run_id=RUN, step_id=STEP)
    approval = decision_record(
        Completed(by="approver@ops", at=WHEN), run_id=RUN, step_id=STEP, submission=SUBMISSION
    )
    assert approval.key == verdict.key
    assert approval.escalated_at is None and approval.accepted


def test_a_decision_record_takes_decisions_only() -> None:
    with pytest.raises(DecisionRequiredError, match="received a str"):
        decision_record("approved", run_id=RUN, step_id=STEP, submission=SUBMISSION)  # type: ignore[arg-type]


# --- reading records: every refusal names what is wrong ----------------------------------------


def verdict_json() -> dict[str, Any]:
    data: dict[str, Any] = verdict_record(outcome_of("unsure"), run_id=RUN, step_id=STEP).to_json()
    return round_trip(data)  # type: ignore[no-any-return]


def decision_json() -> dict[str, Any]:
    record = decision_record(
        Returned(note="n", by="al", at=WHEN), run_id=RUN, step_id=STEP, submission=SUBMISSION
    )
    return round_trip(record.to_json())  # type: ignore[no-any-return]


def changed(make: Any, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = make()
    data.update(changes)
    return data


BAD_RECORDS = [
    pytest.param([], "a record must be a JSON object, got an empty list", id="not-a-map"),
    pytest.param(changed(verdict_json, record="ask"), '"record" must be', id="kind"),
    pytest.param(changed(verdict_json, format=2), "format 2 is not 1", id="format"),
    pytest.param(changed(verdict_json, format=True), "format true is not 1", id="format-bool"),
    pytest.param(changed(verdict_json, format=1.0), "format 1.0 is not 1", id="format-float"),
    pytest.param(
        {key: value for key, value in verdict_json().items() if key != "format"},
        'a verdict record needs "format"',
        id="no-format",
    ),
    pytest.param(changed(verdict_json, extra=1), 'no key "extra"', id="unknown-key"),
    pytest.param(changed(verdict_json, run="run-8"), "key is not the submission key", id="key"),
    pytest.param(changed(verdict_json, key="sha256:00"), "key must be sha256:", id="key-form"),
    pytest.param(changed(verdict_json, check_key="sha256:" + "0" * 64), "check_key", id="ck"),
    pytest.param(changed(verdict_json, action="approve"), 'got "approve"', id="action"),
    pytest.param(changed(verdict_json, attempts=3), "attempts must be 1 or 2, got 3", id="att"),
    pytest.param(changed(verdict_json, check="Q"), "full form", id="check-short-form"),
    pytest.param(changed(verdict_json, check=[]), "check: ", id="check-invalid"),
    pytest.param(changed(verdict_json, bundle_sha256="md5:1"), "bundle_sha256", id="bundle"),
    pytest.param(changed(decision_json, accepted=True), "accepted is true", id="accepted"),
    pytest.param(changed(decision_json, escalated_at=5), "escalated_at", id="escalated-at"),
    pytest.param(changed(decision_json, decision="ok"), "received a str", id="decision"),
]


@pytest.mark.parametrize(("data", "message"), BAD_RECORDS)
def test_a_record_that_does_not_hold_together_is_refused(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        record_from_json(data)


def test_a_verdict_that_its_check_does_not_grade_so_is_refused() -> None:
    data = verdict_json()
    data["check"][0]["pass"] = 0.5  # the recorded 0.62 would now pass
    data["check_key"] = sha256(canonical_json(data["check"]).encode())
    with pytest.raises(ValueError, match="grades"):
        record_from_json(data)


# --- the JSON Lines file -----------------------------------------------------------------------


def test_records_written_read_back_equal_and_typed(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    recorder = JsonLinesRecorder(path)
    assert isinstance(recorder, Recorder)
    written: list[AuditRecord] = []
    for verdict in ("pass", "fail", "unsure", "error"):
        for advisory in (False, True):
            outcome = outcome_of(verdict, advisory=advisory)
            written.append(verdict_record(outcome, run_id=RUN, step_id=STEP))
    escalation = records_for(outcome_of("unsure"), run_id=RUN, step_id=STEP).escalation
    assert escalation is not None
    own = Completed(by="zoë", at=WHEN, output={"name": "Zoë\u2028"}, summary="ok")
    written.append(resolution_record(apply_decision(escalation, own)))
    for record in written:
        recorder.record(record)
    records = read_records(path)
    assert records == tuple(written)
    assert [type(r) for r in records] == [VerdictRecord] * 8 + [DecisionRecord]
    raw = path.read_bytes()
    assert raw.isascii()  # non-ASCII text is escaped: a line is one line in any reader
    assert raw.count(b"\n") == len(written) and raw.endswith(b"\n")


def test_only_audit_records_are_written(tmp_path: Path) -> None:
    with pytest.raises(
        TypeError, match="VerdictRecord, DecisionRecord, SpotCheckRecord or QualificationRecord"
    ):
        JsonLinesRecorder(tmp_path / "a.jsonl").record({"record": "verdict"})  # type: ignore[arg-type]
    assert not (tmp_path / "a.jsonl").exists()


def test_an_empty_or_new_file_has_no_records(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert read_records(tmp_path / "empty.jsonl") == ()


@pytest.mark.parametrize(
    ("tail", "line", "message"),
    [
        pytest.param(b"{not json}\n", 2, "not JSON: Expecting property name", id="not-json"),
        pytest.param(b"\n", 2, "an empty line", id="empty-line"),
        pytest.param(b"\xff\xfe\n", 2, "not JSON", id="not-utf8"),
        pytest.param(b"[1]\n", 2, "a record must be a JSON object", id="not-a-record"),
        pytest.param(b"[" * 100000 + b"\n", 2, "not JSON", id="deep"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line(
    tmp_path: Path, tail: bytes, line: int, message: str
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(
        record_line(verdict_record(outcome_of("pass"), run_id=RUN, step_id=STEP)) + tail
    )
    with pytest.raises(AuditError) as caught:
        read_records(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}: ")
    assert message in text
    assert "\n" not in text
    assert (caught.value.path, caught.value.line) == (str(path), line)


def test_a_bad_decision_line_names_its_shape_only(tmp_path: Path) -> None:
    data = decision_json()
    data["decision"] = {"kind": "returned", "note": 42, "by": "s3cr3t", "at": WHEN}
    path = tmp_path / "audit.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(AuditError) as caught:
        read_records(path)
    assert "note (int)" in str(caught.value) and "s3cr3t" not in str(caught.value)


# --- several processes at once -----------------------------------------------------------------

PROCESSES = 4
PER_PROCESS = 200


def append_records(path: str, process: int) -> None:
    """One writer: PER_PROCESS decision records, each line larger than a pipe's atomic write."""
    recorder = JsonLinesRecorder(path)
    for n in range(PER_PROCESS):
        decision = Completed(by=f"p{process}", at=WHEN, output={"n": n, "pad": "x" * (5000 + n)})
        recorder.record(
            decision_record(
                decision, run_id=f"run-{process}", step_id=f"step-{n}", submission=SUBMISSION
            )
        )


def test_concurrent_appends_from_several_processes_lose_and_interleave_no_line(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "audit.jsonl")
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context: Any = multiprocessing.get_context(method)
    workers = [
        context.Process(target=append_records, args=(path, process)) for process in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    records = read_records(path)  # every line whole, or this raises naming the line
    assert len(records) == PROCESSES * PER_PROCESS
    seen: dict[str, list[int]] = {}
    for record in records:
        assert isinstance(record, DecisionRecord)
        assert isinstance(record.decision, Completed)
        seen.setdefault(record.run, []).append(record.decision.output["n"])
    # Nothing lost, and each writer's records in the order it wrote them.
    assert seen == {f"run-{p}": list(range(PER_PROCESS)) for p in range(PROCESSES)}


def test_the_bundle_hash_is_the_hash_of_its_canonical_bytes() -> None:
    outcome = outcome_of("pass")
    assert outcome.bundle is not None
    record = verdict_record(outcome, run_id=RUN, step_id=STEP)
    assert record.bundle_sha256 == bundle_sha256(outcome.bundle)
    assert record.bundle_sha256 == sha256(bundle_bytes(outcome.bundle))


# --- torn lines: a writer that died mid-line poisons nothing ----------------------------------


def record_lines(count: int) -> list[bytes]:
    """Lines of ``count`` distinct decision records, as the recorder writes them."""
    return [
        record_line(
            decision_record(
                Returned(note=f"Fix line {n}.", by="al", at=WHEN),
                run_id=f"run-{n}",
                step_id=STEP,
                submission=SUBMISSION,
            )
        )
        for n in range(count)
    ]


@functools.cache
def unsure_verdict_line() -> bytes:
    # Made once: its calls' measured wall time would give each example a line of its own.
    return record_line(verdict_record(outcome_of("unsure"), run_id=RUN, step_id=STEP))


@given(st.data())
def test_every_cut_of_a_line_is_a_torn_line_and_the_rest_is_read(data: st.DataObject) -> None:
    # A writer may die after any byte of its line. What it leaves is reported by FILE:LINE,
    # never read as a record, and every record around it is read.
    first, torn_source, last = record_lines(3)
    verdict_source = unsure_verdict_line()
    source = data.draw(st.sampled_from([torn_source, verdict_source]), label="line")
    cut = data.draw(st.integers(1, len(source) - 2), label="cut")
    at_the_end = data.draw(st.booleans(), label="last line")
    # The recorder starts a fresh line after a fragment, so it is followed by a newline.
    content = first + source[:cut] + (b"" if at_the_end else b"\n" + last)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "audit.jsonl"
        path.write_bytes(content)
        with pytest.warns(TornLineWarning) as warned:
            records = read_records(path)
    assert [record_line(r) for r in records] == [first] + ([] if at_the_end else [last])
    (warning,) = warned
    assert isinstance(warning.message, TornLineWarning)
    assert warning.message.torn == TornLine(str(path), 2)
    assert str(warning.message) == f"{path}:2: a torn line (a write that did not finish), skipped"


def test_a_writer_that_dies_mid_line_costs_its_record_only(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    first, second, third = record_lines(3)
    path.write_bytes(first)
    # Another process dies half way through its line (a single write() cut short).
    code = (
        "import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND);"
        " os.write(fd, sys.argv[2].encode()); os._exit(9)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), second[: len(second) // 2].decode()],
        check=False,
    )
    assert done.returncode == 9
    # The next record starts on a line of its own instead of being glued to the fragment.
    recorder = JsonLinesRecorder(path)
    recorder.record(record_from_json(json.loads(third)))
    assert path.read_bytes() == first + second[: len(second) // 2] + b"\n" + third
    with pytest.warns(TornLineWarning, match=r"audit\.jsonl:2: a torn line"):
        records = read_records(path)
    assert [record_line(r) for r in records] == [first, third]
    # Calibration reads on too, and says what it skipped.
    report = calibrate(path)
    assert (report.torn, report.torn_lines) == ((TornLine(str(path), 2),), 1)


def test_a_complete_last_line_without_its_newline_is_read(tmp_path: Path) -> None:
    first, second = record_lines(2)
    path = tmp_path / "audit.jsonl"
    path.write_bytes(first + second[:-1])  # an editor dropped the final newline
    assert [record_line(r) for r in read_records(path)] == [first, second]
    JsonLinesRecorder(path).record(record_from_json(json.loads(first)))
    assert path.read_bytes() == first + second + first  # the newline is put back first


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b'{"record":"decision"}}', id="extra-close"),
        pytest.param(b'{"record" "decision"', id="missing-colon"),
        pytest.param(b"[1, 2", id="not-an-object"),
        pytest.param(b'{"a":1} {"b"', id="two-values"),
        pytest.param(b'{"a":tru e', id="broken-word"),
        pytest.param(b'{"a":01', id="leading-zero"),
        pytest.param(b'{"rec\x01', id="control-character"),
    ],
)
def test_a_broken_line_that_no_writer_leaves_is_not_taken_for_a_torn_one(
    tmp_path: Path, line: bytes
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(record_lines(1)[0] + line + b"\n")
    with pytest.raises(AuditError, match=rf"^{re.escape(str(path))}:2: not JSON: "):
        read_records(path)


def test_reading_is_lazy_and_holds_one_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    first, second = record_lines(2)
    path.write_bytes(first + second + b"not a record\n")
    records = iter_records(path)
    assert record_line(next(records)) == first  # read before the bad line is reached
    assert record_line(next(records)) == second
    with pytest.raises(AuditError, match=":3: not JSON"):
        next(records)


# --- hostile files: a clear problem with the line, never a traceback or a runaway -------------

HOSTILE = [
    pytest.param(
        b'{"record":"decision","record":"verdict"}',
        'not a record: the key "record" appears twice in one object',
        id="repeated-key",
    ),
    pytest.param(
        b'{"record":"decision","n":{"a":1,"a":2}}',
        'not a record: the key "a" appears twice in one object',
        id="repeated-nested-key",
    ),
    pytest.param(b'{"record":NaN}', "not a record: NaN is not JSON", id="nan"),
    pytest.param(b'{"a":-Infinity}', "not a record: -Infinity is not JSON", id="infinity"),
    pytest.param(
        b'{"a":' + b"9" * 5000 + b"}", "not a record: an integer of 5000 digits", id="huge-int"
    ),
    pytest.param(
        b'{"a":"\\ud800"}',
        "not a record: a string holds a lone surrogate (\\ud800), which is not Unicode text",
        id="lone-surrogate",
    ),
    pytest.param(b'{"a":' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nested too deeply", id="deep"),
    pytest.param(b'{"a":"\xff"}', "not JSON: 'utf-8' codec can't decode", id="not-utf-8"),
]


@pytest.mark.parametrize(("line", "message"), HOSTILE)
def test_a_hostile_line_is_refused_by_file_and_line(
    tmp_path: Path, line: bytes, message: str
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(record_lines(1)[0] + line + b"\n")
    with pytest.raises(AuditError) as caught:
        read_records(path)
    assert str(caught.value).startswith(f"{path}:2: ")
    assert message in str(caught.value)
    assert len(str(caught.value)) < 300 and "\n" not in str(caught.value)


def test_a_surrogate_pair_is_text_not_a_problem(tmp_path: Path) -> None:
    decision = Returned(note="Receipt photo 📎 missing.", by="al", at=WHEN)
    record = decision_record(decision, run_id=RUN, step_id=STEP, submission=SUBMISSION)
    path = tmp_path / "audit.jsonl"
    JsonLinesRecorder(path).record(record)
    assert b"\\ud83d\\udcce" in path.read_bytes()  # written as an escaped pair
    assert read_records(path) == (record,)


def test_a_line_over_the_limit_is_refused_before_it_is_held(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with path.open("wb") as file:
        file.write(record_lines(1)[0])
        file.write(b'{"pad":"' + b"x" * MAX_LINE_BYTES)  # no newline: one endless line
    with pytest.raises(AuditError, match=rf":2: a line of over {MAX_LINE_BYTES} bytes"):
        read_records(path)


def test_the_recorder_writes_nothing_the_reader_would_refuse(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    record = decision_record(
        Completed(by="al", at=WHEN), run_id=RUN, step_id="step-\ud800", submission=SUBMISSION
    )
    with pytest.raises(ValueError, match=r"would not read back \(not a record: a string holds"):
        JsonLinesRecorder(path).record(record)
    assert not path.exists()
    big = Completed(by="al", at=WHEN, output={"pad": "x" * MAX_LINE_BYTES})
    with pytest.raises(ValueError, match="over the 8388608 an audit line may have"):
        record_line(decision_record(big, run_id=RUN, step_id=STEP, submission=SUBMISSION))


# --- the fast path reads exactly what the full reading reads -----------------------------------


def full_reading(data: Any) -> AuditRecord | str:
    """What record_from_json makes of ``data``: the record, or the problem as the reader
    words it."""
    try:
        return record_from_json(data)
    except DecisionRequiredError as error:
        return " ".join(f"decision: {error}".split())  # an AuditError is one line
    except (VerdictError, MaterialError, ValueError, TypeError) as error:
        return " ".join(str(error).split())


def fast_reading(data: Any) -> AuditRecord | str:
    """What the reader makes of ``data`` as a line of a file."""
    line = json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode()
    try:
        read = _Reader().line("audit.jsonl", 1, line)
    except AuditError as error:
        return str(error).removeprefix("audit.jsonl:1: ")
    assert not isinstance(read, TornLine)
    return read


def spread(chosen: Any, p: float, options: list[Any]) -> tuple[tuple[Any, float], ...]:
    """A distribution with ``chosen`` on top at ``p`` and the rest shared by the others."""
    others = [option for option in options if option != chosen]
    return ((chosen, p), *((option, (1 - p) / len(others)) for option in others))


distributed_answers = st.tuples(
    st.floats(0, 1).map(lambda p: YesNoAnswer(p, source="native")),
    st.tuples(st.sampled_from(list(SPEC_ONE_OF)), st.floats(0.5, 1)).map(
        lambda pair: ChoiceAnswer(
            pair[0], pair[1], source="native", distribution=spread(*pair, list(SPEC_ONE_OF))
        )
    ),
    st.tuples(st.integers(0, 2), st.floats(0.5, 1), st.booleans()).map(
        lambda drawn: RubricAnswer(
            drawn[0],
            drawn[1],
            source="logprobs",
            distribution=spread(drawn[0], drawn[1], [0, 1, 2]) if drawn[2] else None,
        )
    ),
)

nearby_values: st.SearchStrategy[Any] = st.sampled_from(
    [0, 1, 2, 1.0, 2.0, 0.0, -0.0, True, False, None, "", " ", "x", "pass", "fail", "unsure",
     "error", "yes_no", "choice", "rubric", "states", "native", [], {}, 0.5, 1e-9, 10, [1, 2]]
)  # fmt: skip
json_leaves = (
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=4)
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths_of(item, (*prefix, index))
    return found


# Request ids as hosts write them, and as a hostile one may: a leading colon (a key's mark in
# a line), quotes and backslashes (escaped in the line), braces and brackets, other scripts,
# whitespace inside, the longest an id may be.
request_ids = st.sampled_from(
    ["req_1", ":x", 'a"b', "a\\b", '{"seconds":1}', "]", "é", "a b", "\u2028x", "x" * 256]
) | st.text(min_size=1, max_size=6).filter(lambda text: bool(text.strip()) and not is_blank(text))
figures = st.none() | st.sampled_from([0, 1, 10**12]) | st.integers(0, 10**6)
usages = st.builds(
    Usage,
    input_tokens=figures,
    output_tokens=figures,
    cached_tokens=figures,
    request_ids=st.lists(request_ids, max_size=3).map(tuple),
)
#: Each attempt's call as the audit trail keeps it: its wall time (to the microsecond), the
#: questions asked, what it cost (or nothing reported).
model_calls = st.builds(
    ModelCall,
    seconds=st.sampled_from([0.0, 1e-06, 2.5, 1e8]) | st.floats(0, 100).map(lambda s: round(s, 6)),
    questions=st.integers(1, 3),
    usage=st.none() | usages,
)


@st.composite
def verdict_records(draw: st.DrawFn) -> dict[str, Any]:
    answers = draw(distributed_answers)
    advisory = draw(st.booleans())
    # No calls (a record written before they were kept), or one per attempt.
    made = tuple(draw(model_calls) for _ in range(draw(st.integers(0, 2))))
    attempts = max(len(made), 1)
    if draw(st.integers(0, 9)) == 0:
        verdict = error_verdict(CHECK, model=MODEL, at=AT, advisory=advisory)
        outcome = outcome_for(verdict, attempts=attempts, calls=made)
    else:
        verdict = combine(CHECK, answers, model=MODEL, at=AT, advisory=advisory)
        outcome = outcome_for(verdict, answers=answers, attempts=attempts, calls=made)
    record = verdict_record(outcome, run_id=RUN, step_id=STEP, submission=SUBMISSION)
    return round_trip(record.to_json())  # type: ignore[no-any-return]


@settings(max_examples=600)
@given(verdict_records(), st.data())
def test_the_fast_path_reads_what_the_full_reading_reads(
    data: dict[str, Any], draws: st.DataObject
) -> None:
    # Break one part of a good record in one way, anywhere: both readings agree, on the record
    # or on the words of the problem.
    path = draws.draw(st.sampled_from(paths_of(data)[1:]), label="where")
    *parent_path, last = path
    parent: Any = data
    for step in parent_path:
        parent = parent[step]
    how = draws.draw(st.sampled_from(["replace", "remove", "add"]), label="how")
    if how == "replace":
        parent[last] = draws.draw(nearby_values | json_leaves, label="value")
    elif how == "remove":
        del parent[last]
    elif isinstance(parent, dict):
        parent[draws.draw(st.sampled_from(["extra", "confidence", "truncated"]))] = True
    else:
        parent.append(draws.draw(nearby_values))
    fast, full = fast_reading(data), full_reading(data)
    assert fast == full
    assert repr(fast) == repr(full)  # the same types too: 1.0 is not read as 1


@given(verdict_records())
def test_the_fast_path_reads_good_records_as_the_full_reading_does(data: dict[str, Any]) -> None:
    fast = fast_reading(data)
    assert fast == full_reading(data) and repr(fast) == repr(full_reading(data))
    assert isinstance(fast, VerdictRecord)
    assert fast.to_json() == data


@given(st.text(), st.text())
def test_the_submission_key_is_the_canonical_json_of_its_parts(run: str, step: str) -> None:
    assume(run.strip() and step.strip())
    digest = submission_sha256(SUBMISSION)
    expected = sha256(canonical_json([run, step, digest]).encode("utf-8", "surrogatepass"))
    assert submission_key(run, step, SUBMISSION) == expected


@given(st.datetimes(timezones=st.just(timezone.utc)), st.datetimes(timezones=st.just(timezone.utc)))
def test_times_sort_as_they_fall(a: datetime, b: datetime) -> None:
    first, second = format_at(a), format_at(b)
    assert (at_order(first) < at_order(second)) == (a < b)
    assert (at_order(first) == at_order(second)) == (a == b)


def choice_record(distribution: list[list[Any]], *, answer: str = "states") -> dict[str, Any]:
    """A verdict record whose choice answer (``answer``, 0.9) comes with ``distribution``."""
    answers = (
        YesNoAnswer(0.95, source="native"),
        ChoiceAnswer(answer, 0.9, source="native"),
        RubricAnswer(2, 0.9, source="native"),
    )
    verdict = combine(CHECK, answers, model=MODEL, at=AT)
    data = verdict_record(
        outcome_for(verdict, answers=answers), run_id=RUN, step_id=STEP, submission=SUBMISSION
    ).to_json()
    data = round_trip(data)
    data["provenance"][1]["distribution"] = distribution
    return data  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("distribution", "problem"),
    [
        ([["states", 0.4], ["hedges", 0.6]], "is not the most probable"),
        ([["states", 0.5], ["states", 0.5]], 'names "states", twice'),
        ([["states", 0.9], ["maybe", 0.1]], 'names "maybe", not an option'),
        ([["states", 0.9], ["hedges", 0.05]], "sums to 0.95"),
        ([["states", 1.5], ["hedges", -0.5]], "must be in [0, 1], got 1.5"),
        ([["states", 0.9], [True, 0.1]], "names true, not an option"),
        ([["states", 0.9], ["hedges", 0.1, 0]], "[option, p] pairs"),
        ([["states", 0.5], ["hedges", 0.5]], None),  # a tie on top is the answer's
        ([["states", 0.5], ["hedges", 0.5 + 1e-12]], None),  # within the core's tie
        ([["states", 0.9], ["hedges", 0.095]], None),  # within the core's tolerance
        ([["states", 1]], None),
    ],
)
def test_a_distribution_is_read_as_the_core_reads_it(
    distribution: list[list[Any]], problem: str | None
) -> None:
    data = choice_record(distribution)
    fast, full = fast_reading(data), full_reading(data)
    assert fast == full and repr(fast) == repr(full)
    if problem is None:
        assert isinstance(fast, VerdictRecord)
        assert fast.provenance[1].distribution == tuple(map(tuple, distribution))
    else:
        assert isinstance(fast, str) and problem in fast


def test_a_repeated_key_anywhere_in_a_writers_verdict_line_is_refused() -> None:
    # A writer's verdict line is parsed without the json module's hooks, and its keys are
    # counted instead: a key written twice, anywhere, must still be caught.
    record = verdict_record(
        make_outcome({**SCRIPTS["unsure"], SPEC_RUBRIC_ASK: RubricAnswer(1, 0.9, source="native")}),
        run_id=RUN,
        step_id=STEP,
    )
    line = record_line(record)[:-1].decode()
    assert _Reader().line("a", 1, line.encode()) == record  # as written, read
    pairs = list(re.finditer(r'"([a-z_]+)":("[^"]*"|[0-9.]+|true|false|null)', line))
    assert len(pairs) > 30
    for pair in pairs:
        # The pair again, with another value where one would pass for it.
        value = {"true": "false", "false": "true"}.get(pair.group(2), pair.group(2))
        twice = line[: pair.end()] + f',"{pair.group(1)}":{value}' + line[pair.end() :]
        with pytest.raises(AuditError, match=f'the key "{pair.group(1)}" appears twice'):
            _Reader().line("a", 1, twice.encode())


# Found by mutation runs, each under its draw's seed (docs/mutation-results.md) --------------------


LATER = "2026-11-02T15:30:00Z"


LATEST = "2026-11-02T18:00:00Z"


# found by a mutation draw (seed 27): the writer's line-length bound
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


# found by a mutation draw (seed 27): the writer after a fragment, its modes; windows
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
    for run, at in (("a", TRAIL_AT), ("b", LATER)):
        write_verdict(path, run, at=at)
        write_decision(path, run, Completed(by="pat", at=LATEST))
    (check,) = calibrate(path, since=since, until=until, min_cases=1).checks
    assert check.at_current.cases == cases


def test_a_window_holds_its_since_and_not_its_until() -> None:
    # What a record source is handed to filter by (`order < until` -> `<=` survived).
    from checkprofile.human._audit._sources import Window

    window = Window.of(since=TRAIL_AT, until=LATER)
    assert window.holds(TRAIL_AT)
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


# found by a mutation draw (seed 2028): human/_audit_sources, a window's times
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
    assert Window.of(since=TRAIL_AT).holds("9999-12-31T23:59:59Z")
    assert Window.of(until=TRAIL_AT).holds("0001-01-01T00:00:00Z")


# found by a mutation draw (seed 2029): `fcntl is not None` -> `is None` (no lock)
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


# found by a mutation draw (seed 2029): human/_audit_sources, where records are read from
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
    for given in (records, tuple(records), iter(records)):  # noqa: F402 (not hypothesis's given)
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

    window = Window.of(since=TRAIL_AT)
    names, reads = _sources(Store(), window=window)
    assert names == ["postgresql://audit"]
    assert reads == from_file
    assert asked == [window]


class _NoSourceEvaluator:
    """A host's own evaluator: its answers say nothing of where they came from."""

    model = "host-own-1"

    async def answer(self, bundle: Any) -> Reply:
        return Reply(self.model, tuple(YesNoAnswer(0.5) for _ in bundle.check))


def test_a_verdict_whose_answers_name_no_source_is_recorded_and_reads_back(
    tmp_path: Path,
) -> None:
    check = parse_check([{"ask": "The report is attached.", "pass": 0.8, "fail": 0.3}])
    outcome = run_check_sync(check, material(), _NoSourceEvaluator(), now=AT)
    record = verdict_record(outcome, run_id="run-1", step_id="review")
    assert record.provenance == ()
    trail = tmp_path / "audit.jsonl"
    JsonLinesRecorder(trail).record(record)
    assert list(read_records(trail)) == [record]
