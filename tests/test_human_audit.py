"""The audit trail: verdict and decision records, JSON Lines appends from many processes, and
reading the records back typed."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
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
    Evidence,
    Failure,
    RubricAnswer,
    Submission,
    build_bundle,
    canonical_json,
    combine,
    outcome_for,
    parse_check,
)
from checkprofile.human import (
    AUDIT_FORMAT,
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
    VerdictRecord,
    apply_decision,
    bundle_bytes,
    bundle_sha256,
    check_key,
    decision_record,
    read_records,
    record_from_json,
    records_for,
    resolution_record,
    submission_key,
    submission_sha256,
    verdict_record,
)
from checkprofile.human._audit import record_line
from support import AT, SPEC_RUBRIC_ASK, material

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
    ]
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
    with pytest.raises(TypeError, match="VerdictRecord or DecisionRecord"):
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
