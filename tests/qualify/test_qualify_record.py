"""The qualification record in the audit trail, and the gate that reads it.

Written by the JSON Lines and PostgreSQL recorders, read back by the strict reader (the fast
reader hands the kind on), passed over by calibration, and refused when a line says anything
its probes do not: a missing or extra probe, ``qualified`` its probes do not give, a key that
is not its own.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import qualify_fakes as fakes
from test_human_postgres import rows, server, store, table  # noqa: F401  (fixtures)

from checkprofile import run_check
from checkprofile.human import (
    AuditError,
    Completed,
    JsonLinesRecorder,
    PostgresRecorder,
    QualificationRecord,
    calibrate,
    calibration_text,
    decision_record,
    iter_records,
    read_records,
    record_from_json,
    verdict_record,
)
from checkprofile.qualify import Qualification, Qualifications, gate, qualify

AT = "2026-12-01T10:00:00Z"


def qualified(make: Any = fakes.well_behaved) -> Qualification:
    return asyncio.run(qualify(fakes.CHECK, fakes.cases(), make(), step="assemble", now=AT))


def test_a_qualification_is_written_and_read_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    record = qualified().record
    JsonLinesRecorder(path).record(record)
    (read,) = read_records(path)
    assert read == record
    assert type(read) is QualificationRecord
    assert read.qualified and read.model == "well-behaved-2026"
    line = path.read_text().strip()
    assert line.startswith('{"record":"qualification","format":1,')
    assert record_from_json(json.loads(line)) == record


def line_of(record: QualificationRecord) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(record.to_json()))
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(qualified=True), "qualified is true, but its probes say false"),
        (lambda d: d["probes"].pop(), "probes must list the 7 probes"),
        (lambda d: d["probes"].reverse(), 'probe "knowledge" where the battery lists "repeat"'),
        (lambda d: d["probes"][0].update(status="skipped"), "status must be one of"),
        (lambda d: d["probes"][0].update(figure="0.5"), "finite number"),
        (lambda d: d.update(model="another-model"), "key is not the qualification key"),
        (lambda d: d.update(check_key="sha256:" + "0" * 64), "check_key is not the key"),
        (lambda d: d.update(extra=1), 'no key "extra"'),
        (lambda d: d.pop("battery"), 'needs "battery"'),
        (lambda d: d.update(requests=-1), "requests must be a whole number"),
    ],
)
def test_a_line_that_claims_what_its_probes_do_not_is_refused(
    tmp_path: Path, change: Any, message: str
) -> None:
    data = line_of(qualified(fakes.constant).record)
    change(data)
    path = tmp_path / "audit.jsonl"
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    with pytest.raises(AuditError, match=message.replace("(", r"\(")):
        read_records(path)


def test_calibration_reads_a_trail_holding_qualifications(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    recorder = JsonLinesRecorder(path)
    case = fakes.cases(1)[0]
    outcome = asyncio.run(
        run_check(fakes.CHECK, case.material, fakes.well_behaved(), now=AT, advisory=True)
    )
    recorder.record(verdict_record(outcome, run_id="r1", step_id="assemble"))
    recorder.record(qualified().record)
    decided = Completed(by="finance", at=AT)
    submission = case.material.submission
    recorder.record(
        decision_record(decided, run_id="r1", step_id="assemble", submission=submission)
    )
    kinds = [r.record for r in iter_records(path)]
    assert kinds == ["verdict", "qualification", "decision"]
    report = calibrate(path)
    (check,) = report.checks  # the qualification is not a case
    assert check.name == "assemble"
    assert check.at_current.confusion.pass_accepted == 1
    # The recommendation names the qualification it rests on: this model's, for this check.
    record = qualified().record
    assert check.qualification == {
        "key": record.key,
        "model": "well-behaved-2026",
        "battery": "checkprofile-qualify-1",
        "at": AT,
        "qualified": True,
    }
    sentence = (
        f"It rests on qualification {record.key[:15]}… of well-behaved-2026 for this check"
        f" (checkprofile-qualify-1, {AT}): qualified."
    )
    # The text wraps its sentences (at hyphens too).
    assert "".join(sentence.split()) in "".join(calibration_text(report).split())


def test_calibration_names_no_qualification_of_another_model(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    recorder = JsonLinesRecorder(path)
    case = fakes.cases(1)[0]
    outcome = asyncio.run(
        run_check(fakes.CHECK, case.material, fakes.Fake("other"), now=AT, advisory=True)
    )
    recorder.record(verdict_record(outcome, run_id="r1", step_id="assemble"))
    recorder.record(qualified().record)
    decided = Completed(by="finance", at=AT)
    submission = case.material.submission
    recorder.record(
        decision_record(decided, run_id="r1", step_id="assemble", submission=submission)
    )
    report = calibrate(path)
    assert report.checks[0].qualification is None
    assert "rests on qualification" not in calibration_text(report)


def test_the_postgres_store_keeps_a_qualification(store: PostgresRecorder) -> None:  # noqa: F811
    record = qualified().record
    store.record(record)
    store.record(record)  # kept once
    assert list(store.read()) == [record]
    assert store.count() == 1
    # The gate reads it from the store as from a file.
    found = Qualifications.from_trail(store).find(record.model, record.check_key)
    assert found == record


def test_a_table_made_before_qualifications_takes_them(server: str, table: str) -> None:  # noqa: F811
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(
            f"CREATE TABLE {table} (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            " sha256 text NOT NULL, record text NOT NULL CHECK (record IN ('verdict',"
            " 'decision')), key text NOT NULL, run text NOT NULL, step text NOT NULL,"
            ' at text NOT NULL, at_order text COLLATE "C" NOT NULL, line text NOT NULL,'
            f" CONSTRAINT {table}_sha256 UNIQUE (sha256))"
        )
    record = qualified().record
    with PostgresRecorder(server, table=table) as recorder:
        recorder.record(record)
        assert list(recorder.read()) == [record]
    (definition,) = rows(
        server,
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        f" WHERE conrelid = '{table}'::regclass AND contype = 'c'",
    )
    assert "'qualification'" in definition[0]
    with PostgresRecorder(server, table=table) as again:  # a second start changes nothing
        assert again.count() == 1


# --- the gate ---------------------------------------------------------------------------------


def blocking_outcome(model: str = "well-behaved") -> Any:
    case = fakes.cases(2)[1]  # a refused case: the check fails it
    return asyncio.run(run_check(fakes.CHECK, case.material, fakes.Fake(model), now=AT))


def test_the_gate_makes_a_blocking_verdict_advisory_until_its_model_qualifies(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outcome = blocking_outcome()
    assert outcome.verdict.verdict == "fail" and outcome.action == "not_accepted"
    with caplog.at_level(logging.WARNING, logger="checkprofile.qualify"):
        gated = gate(outcome, Qualifications())
    assert gated.verdict.advisory is True
    assert gated.verdict.verdict == "fail"  # recorded as the model gave it
    assert gated.action == "complete"  # nothing blocked
    (warning,) = [r for r in caplog.records if r.name == "checkprofile.qualify"]
    assert "well-behaved-2026" in warning.getMessage()
    assert "no passing qualification" in warning.getMessage()
    # Once a passing qualification for this model and check is recorded, it blocks.
    passing = Qualifications([qualified().record])
    assert gate(outcome, passing) is outcome


def test_a_failed_qualification_or_another_check_or_model_does_not_open_the_gate() -> None:
    outcome = blocking_outcome()
    failed = Qualifications([qualified(fakes.constant).record])
    assert len(failed) == 0
    assert gate(outcome, failed).verdict.advisory
    other_model = blocking_outcome("another")
    assert gate(other_model, Qualifications([qualified().record])).verdict.advisory


def test_the_gate_reads_qualifications_from_a_trail(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    JsonLinesRecorder(path).record(qualified().record)
    outcome = blocking_outcome()
    assert gate(outcome, Qualifications.from_trail(path)) is outcome


def test_an_advisory_verdict_passes_the_gate_unchanged() -> None:
    case = fakes.cases(2)[1]
    outcome = asyncio.run(
        run_check(fakes.CHECK, case.material, fakes.Fake("x"), now=AT, advisory=True)
    )
    assert gate(outcome, Qualifications()) is outcome


def test_the_gate_refuses_what_is_not_an_outcome() -> None:
    with pytest.raises(TypeError, match="an Outcome is needed"):
        gate("pass", Qualifications())  # type: ignore[arg-type]
