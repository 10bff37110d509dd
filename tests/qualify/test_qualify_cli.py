"""``checkprofile qualify``: the report, its exit codes, the record it appends, and the cost it
states before asking anything."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkprofile import Submission
from checkprofile.cli import main
from checkprofile.human import (
    Completed,
    JsonLinesRecorder,
    QualificationRecord,
    Returned,
    decision_record,
    read_records,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "expense-report"
PROCESS = str(EXAMPLE / "PROCESS.md")
REPLAY = f"replay:{EXAMPLE / 'answers' / 'pass.yaml'}"


def make_cases(folder: Path, count: int = 24) -> Path:
    folder.mkdir()
    submission = json.loads((EXAMPLE / "submission.json").read_text())
    run_data = json.loads((EXAMPLE / "run-data.json").read_text())
    for number in range(count):
        case = {
            "submission": {**submission, "summary": f"Report {number}."},
            "run_data": run_data,
            "accepted": number % 2 == 0,
        }
        (folder / f"case-{number:02d}.json").write_text(json.dumps(case))
    return folder


def qualify(*args: str) -> list[str]:
    return ["qualify", PROCESS, "--step", "assemble", *args]


def test_a_model_that_answers_the_same_whatever_it_is_shown_is_not_qualified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = make_cases(tmp_path / "cases")
    trail = tmp_path / "audit.jsonl"
    page = tmp_path / "report.html"
    code = main(
        qualify(
            "--evaluator", REPLAY, "--cases", str(cases), "--record", str(trail),
            "--html", str(page), "--now", "2026-12-01T10:00:00Z",
        )
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1
    # per case: 2 repeat, 2 order (three options), 1 form, 3 injection
    assert "192 requests to" in err and "on 24 cases (at most 1000)" in err
    assert out.startswith("NOT QUALIFIED: replay for step assemble")
    assert "knowledge    FAIL" in out
    assert "Not qualified because of:" in out
    (record,) = read_records(trail)
    assert type(record) is QualificationRecord and not record.qualified
    assert record.probe("knowledge").status == "failed"
    assert "<script" not in page.read_text().lower()


def test_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = make_cases(tmp_path / "cases")
    code = main(["--json", *qualify("--evaluator", REPLAY, "--cases", str(cases))])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["qualified"] is False
    assert document["planned_requests"] == 192
    assert document["record"]["model"] == "replay"


def test_a_trail_says_what_people_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_cases(tmp_path / "cases")
    recorder = JsonLinesRecorder(tmp_path / "audit.jsonl")
    for number, path in enumerate(sorted(folder.iterdir())):  # decisions from the trail instead
        case = json.loads(path.read_text())
        del case["accepted"]
        path.write_text(json.dumps({**case, "run": path.stem}))
        decision = (
            Completed(by="finance", at="2026-11-02T15:40:00Z")
            if number % 3
            else Returned(note="Receipts missing.", by="finance", at="2026-11-02T15:40:00Z")
        )
        submission = Submission.from_json(case["submission"])
        recorder.record(
            decision_record(decision, run_id=path.stem, step_id="assemble", submission=submission)
        )
    code = main(
        qualify("--evaluator", REPLAY, "--cases", str(folder), "--cases", str(recorder.path))
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "16 accepted, 8 refused" in out  # known from the trail, and still ranked at chance


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cases", "{trail}"], "no folder of cases given. An audit trail records hashes"),
        (["--cases", "{missing}"], "not found"),
        (["--cases", "{cases}", "--max-requests", "10"], "would make 192 requests"),
        (["--cases", "{cases}", "--min-auc", "2"], "must be a number from 0 to 1"),
        (["--cases", "{bad}"], "a case is a map with a submission"),
        (["--cases", "{nan}"], "not a case file: NaN is not JSON"),
    ],
)
def test_unreadable_input_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    cases = make_cases(tmp_path / "cases")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "one.json").write_text('{"output": {}}')
    trail = tmp_path / "audit.jsonl"
    trail.write_text("")
    nan = tmp_path / "nan"
    nan.mkdir()
    (nan / "one.json").write_text('{"submission": {"output": {"n": NaN}}}')
    places = {
        "trail": trail, "missing": tmp_path / "nope", "cases": cases, "bad": bad, "nan": nan
    }  # fmt: skip
    filled = [arg.format(**places) for arg in args]
    with pytest.raises(SystemExit) if "--min-auc" in args else contextlib.nullcontext():
        code = main(qualify("--evaluator", REPLAY, *filled))
        assert code == 2
    assert message in capsys.readouterr().err


def test_an_evaluator_that_cannot_be_reached_is_exit_4(tmp_path: Path) -> None:
    pytest.importorskip("typesafe_sdk")
    cases = make_cases(tmp_path / "cases", 2)
    env = {
        **os.environ,
        "TYPESAFE_API_KEY": "unused",
        "TYPESAFE_BASE_URL": "http://127.0.0.1:9/v1",  # the discard port: nothing listens
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-m", "checkprofile", *qualify("--evaluator", "systemone:m",
         "--cases", str(cases), "--timeout", "2")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    assert "answered none of the battery's 16 requests" in done.stderr
