"""checkprofile.objective_problems: the objective rules of core §6 rule 3, before the check.

"The profile runs the check after the objective rules of core §6 rule 3 pass (the output's
declared field types, the evidence the step requires) ... a host should not have to write them
by hand" (issue 40, item 8).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from checkprofile import Submission, objective_problems, read_process

ROOT = Path(__file__).resolve().parent.parent

PROCESS = """---
name: expenses
description: Expense reports.
steps:
  - id: assemble
    agent: Assemble the report. The per-diem limit is 45 EUR a day.
    output:
      total_eur: number
      approved: boolean
      days: { type: list, items: date }
      currency: { type: string, one_of: [EUR, USD] }
      submitted: datetime
      owner: person
      note: { type: string, optional: true }
      lines: { type: object, optional: true }
    evidence: [file, link]
    check: The total matches the receipts.
---
Body.
"""
STEP = read_process(PROCESS).step("assemble")
GOOD = {
    "total_eur": 120,
    "approved": True,
    "days": ["2026-10-01", "2026-10-02"],
    "currency": "EUR",
    "submitted": "2026-10-06T09:00:00+02:00",
    "owner": "ana@example.com",
}
EVIDENCE = [{"kind": "file", "ref": "receipts.pdf"}, {"kind": "link", "ref": "https://x.example"}]


def submission(output: dict[str, object], evidence: list[dict[str, str]] = EVIDENCE) -> Submission:
    return Submission.from_json({"output": output, "evidence": evidence, "summary": "Done."})


def test_a_submission_that_keeps_the_rules_has_no_problem() -> None:
    assert objective_problems(STEP, submission(GOOD)) == ()
    assert objective_problems(STEP, submission({**GOOD, "note": "n", "extra": 1})) == ()


@pytest.mark.parametrize(
    ("change", "pointer", "message"),
    [
        ({"total_eur": "120"}, "/output/total_eur", 'expected a number (number), got "120"'),
        ({"total_eur": True}, "/output/total_eur", "expected a number"),
        ({"approved": 1}, "/output/approved", "expected true or false (boolean), got 1"),
        ({"days": ["2026-02-30"]}, "/output/days/0", "expected a date (YYYY-MM-DD)"),
        ({"days": "2026-10-01"}, "/output/days", "expected a list"),
        ({"currency": "GBP"}, "/output/currency", 'expected one of "EUR", "USD", got "GBP"'),
        ({"submitted": "2026-10-06 09:00"}, "/output/submitted", "an RFC 3339 time"),
        ({"owner": "  "}, "/output/owner", "a person"),
        ({"note": 5}, "/output/note", "expected a string"),
        ({"lines": []}, "/output/lines", "expected a map"),
    ],
)
def test_each_declared_type_is_kept_or_named_at_its_place(
    change: dict[str, object], pointer: str, message: str
) -> None:
    (problem,) = objective_problems(STEP, submission({**GOOD, **change}))
    assert problem.pointer == pointer and message in problem.message


def test_a_missing_field_and_missing_evidence_are_each_a_problem() -> None:
    output = {k: v for k, v in GOOD.items() if k != "owner"}
    problems = objective_problems(STEP, submission(output, evidence=[EVIDENCE[0]]))
    assert [(p.pointer, p.message) for p in problems] == [
        ("/output/owner", 'missing: the step declares "owner" (person)'),
        ("/evidence", "the step requires evidence of kind link; none was given"),
    ]


def test_it_takes_a_step_and_a_submission() -> None:
    with pytest.raises(TypeError, match="ProcessStep"):
        objective_problems({"output": {}}, submission(GOOD))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Submission"):
        objective_problems(STEP, {"output": GOOD})  # type: ignore[arg-type]


def test_checkprofile_run_refuses_before_the_check_and_asks_no_model(tmp_path: Path) -> None:
    process = tmp_path / "PROCESS.md"
    process.write_text(PROCESS, encoding="utf-8")
    broken = tmp_path / "submission.json"
    output = {**GOOD, "total_eur": "120"}
    broken.write_text(json.dumps({"output": output, "evidence": EVIDENCE, "summary": "Done."}))
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"The total matches the receipts.": {"answer": 0.99}}))
    command = [sys.executable, "-m", "checkprofile", "run", str(process), "--step", "assemble"]
    command += ["--submission", str(broken), "--evaluator", f"replay:{answers}"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1, done.stderr
    assert (
        "submission.json:" in done.stderr and "/output/total_eur: expected a number" in done.stderr
    )
    assert "the check did not run" in done.stderr and done.stdout == ""
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"output": GOOD, "evidence": EVIDENCE, "summary": "Done."}))
    command[command.index(str(broken))] = str(good)
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
