"""The ``checkprofile`` command, run as a user runs it: in a subprocess.

Every case checks the exit code and that nothing printed a traceback: bad input is one line
naming the file (and the line and column where there is one).
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checkprofile import Verdict, load_process
from checkprofile.cli._process import PROGRESS_FROM

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NOW = "2026-11-30T10:00:00Z"


def cli(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``python -m checkprofile ARGS`` with stdout and stderr captured (never a terminal)."""
    env = {**os.environ, "NO_COLOR": ""}
    env.pop("NO_COLOR")
    result = subprocess.run(
        [sys.executable, "-m", "checkprofile", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout
    return result


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("checkprofile: ")
    return lines[0].removeprefix("checkprofile: ")


# The examples: every process, every recorded case ---------------------------------------------

CASES = [
    # process, step, submission, answers, verdict, action
    ("expense-report", "assemble", "submission.json", "pass", "pass", "complete"),
    ("expense-report", "assemble", "submission-unflagged.json", "fail", "fail", "not_accepted"),
    ("expense-report", "assemble", "submission.json", "unsure", "unsure", "escalate"),
    ("expense-report", "assemble", "submission.json", "error", "error", "retry"),
    ("release-notes", "draft", "submission.json", "pass", "pass", "complete"),
    ("release-notes", "draft", "submission-hostile.json", "fail", "fail", "not_accepted"),
    ("release-notes", "draft", "submission.json", "unsure", "unsure", "escalate"),
    ("release-notes", "draft", "submission.json", "error", "error", "retry"),
    # Advisory: every verdict is recorded and the step completes.
    ("incident-review", "write_review", "submission.json", "pass", "pass", "complete"),
    ("incident-review", "write_review", "submission.json", "fail", "fail", "complete"),
    ("incident-review", "write_review", "submission.json", "unsure", "unsure", "complete"),
    ("incident-review", "write_review", "submission.json", "error", "error", "complete"),
]
EXIT = {"pass": 0, "fail": 1, "unsure": 3, "error": 4}


def run_args(process: str, step: str, submission: str, answers: str) -> list[str | Path]:
    folder = EXAMPLES / process
    return [
        "run",
        folder / "PROCESS.md",
        "--step",
        step,
        "--submission",
        folder / submission,
        "--run-data",
        folder / "run-data.json",
        "--evaluator",
        f"replay:{folder / 'answers' / f'{answers}.yaml'}",
        "--now",
        NOW,
    ]


@pytest.mark.parametrize(
    ("process", "step", "submission", "answers", "verdict", "action"),
    CASES,
    ids=[f"{case[0]}-{case[3]}" for case in CASES],
)
def test_run_on_every_example_gives_its_verdict_action_and_exit_code(
    process: str, step: str, submission: str, answers: str, verdict: str, action: str
) -> None:
    result = cli(*run_args(process, step, submission, answers), "--json")
    assert result.returncode == EXIT[verdict], result.stderr
    assert result.stderr == ""
    out = json.loads(result.stdout)
    assert set(out) == {"action", "verdict", "issues", "attempts", "failures"}
    assert out["action"] == action
    record = Verdict.from_json(out["verdict"])  # the record has the check-verdict shape
    assert record.verdict == verdict
    assert out["verdict"]["at"] == NOW
    assert out["verdict"]["advisory"] is (process == "incident-review")
    if action == "not_accepted":
        assert out["issues"] and all(line.startswith("check: ") for line in out["issues"])
        failed = [q["ask"] for q in out["verdict"]["questions"] if q["result"] != "pass"]
        assert [line.split(" → ")[0].removeprefix("check: ") for line in out["issues"]] == failed
    else:
        assert out["issues"] == []


def test_run_prints_a_readable_outcome() -> None:
    result = cli(*run_args("expense-report", "assemble", "submission-unflagged.json", "fail"))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "fail: not_accepted"
    assert lines[1] == f"model: replay  at: {NOW}"
    assert "\x1b[" not in result.stdout  # no colour when not a terminal
    assert (
        "issue: check: How well are lines above the per-diem limit handled? → "
        "level 0: Lines above the limit are not flagged. (0.91)"
    ) in lines


def test_run_says_which_questions_were_not_answered_and_why() -> None:
    result = cli(*run_args("expense-report", "assemble", "submission.json", "error"))
    assert result.returncode == 4
    assert "error: retry" in result.stdout
    assert (
        "not answered: How well are lines above the per-diem limit handled?: timeout"
        in result.stdout
    )


def test_advisory_flag_makes_any_verdict_complete_but_keeps_its_exit_code() -> None:
    args = run_args("expense-report", "assemble", "submission-unflagged.json", "fail")
    result = cli(*args, "--advisory", "--json")
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert (out["action"], out["verdict"]["advisory"], out["issues"]) == ("complete", True, [])


def test_a_recorded_verdict_replays_as_it_is(tmp_path: Path) -> None:
    first = cli(*run_args("expense-report", "assemble", "submission.json", "unsure"), "--json")
    recorded = tmp_path / "verdict.json"
    recorded.write_text(json.dumps(json.loads(first.stdout)["verdict"]))
    args = run_args("expense-report", "assemble", "submission.json", "unsure")
    args[args.index("--evaluator") + 1] = f"replay:{recorded}"
    again = cli(*args, "--json")
    assert again.returncode == first.returncode == 3
    assert (
        json.loads(again.stdout)["verdict"]["questions"]
        == json.loads(first.stdout)["verdict"]["questions"]
    )


def test_the_readme_main_job_is_a_passing_run() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = readme.split("```sh\n", 1)[1].splitlines()[0]
    install, _, job = command.partition(" && ")
    assert install == "pip install -e ."
    assert job.startswith("checkprofile run ")
    result = cli(*job.split()[1:])
    assert result.returncode == 0
    assert result.stdout.startswith("pass: complete")


def test_the_installed_command_is_the_same_program() -> None:
    exe = Path(sys.executable).parent / "checkprofile"
    if not exe.exists():
        pytest.skip(f"no checkprofile script beside {sys.executable} (not pip-installed here)")
    result = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for command in ("lint", "normalize", "bundle", "run"):
        assert command in result.stdout


# lint ------------------------------------------------------------------------------------------

# Problems of both tiers: core-2's shape (a string advisory, a misspelt check) and the profile's
# rules (a check on an approve step, a key of the check, advisory without check).
BAD = """\
---
name: bad
description: A process with problems.
steps:
  - id: one
    approve: Sign.
    advisory: yes
    check:
      - ask: Is it done?
        pas: 0.9
  - id: two
    agent: Do.
    advisory: true
    chek: Is it done?
---
Body.
"""

BAD_LINES = [
    ':7:15: /steps/0/advisory: expected true or false, got "yes"',
    ':8:5: /steps/0/check: check is allowed only on agent and task steps; step "one" is an '
    "approve step",
    ':10:9: /steps/0/check/0/pas: unknown key "pas"; did you mean "pass"? a yes/no question '
    "takes ask, pass, fail",
    ":13:5: /steps/1/advisory: advisory is allowed only beside check",
    ':14:5: /steps/1/chek: unknown key "chek"; did you mean "check"?',
]

# core-2 takes it; the profile refuses step "one" (a check on an approve step, a key of the
# check).
UNPUBLISHABLE = BAD.replace("    advisory: yes\n", "").replace("    chek: Is it done?\n", "")


def test_lint_passes_the_examples() -> None:
    result = cli("lint", *sorted(EXAMPLES.glob("*/PROCESS.md")))
    assert result.returncode == 0
    assert result.stdout == "3 files, no problems\n"


def test_lint_prints_every_problem_as_file_line_col_pointer_message(tmp_path: Path) -> None:
    path = tmp_path / "PROCESS.md"
    path.write_text(BAD)
    result = cli("lint", path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [f"{path}{line}" for line in BAD_LINES] + [
        "1 file, 5 problems"
    ]
    assert result.stderr == ""


def test_lint_refuses_a_misspelt_check_that_would_run_no_check(tmp_path: Path) -> None:
    # The case: with `chek:` the step would run with no check at all.
    text = (EXAMPLES / "expense-report" / "PROCESS.md").read_text()
    text = text.replace("    check:\n", "    chek:\n", 1)
    path = write(tmp_path, "PROCESS.md", text)
    result = cli("lint", path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f'{path}:13:5: /steps/0/chek: unknown key "chek"; did you mean "check"?',
        "1 file, 1 problem",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "---\nname: x\ndescription: y\nsteps: 3\n---\n",
            ":4:8: /steps: expected a non-empty list of steps, got 3",
            id="steps-not-a-list",
        ),
        pytest.param(
            "---\nname: x\nsteps:\n  - id: a\n---\n",
            ':2:1: /: missing "description": the frontmatter needs a non-empty description',
            id="no-description",
        ),
        pytest.param(
            "---\nname: x\ndescription: y\nsteps:\n  - id: a\n  - id: a\n---\n",
            ':6:9: /steps/1/id: step id "a" is already the id of the step on line 5: ids are '
            "unique within a process",
            id="repeated-id",
        ),
        pytest.param(
            "---\nname: x\ndescription: y\nsteps:\n  - id: a\n    agnet: Do.\n"
            "    check: Done?\n---\n",
            ':6:5: /steps/0/agnet: unknown key "agnet"; did you mean "agent"?',
            id="misspelt-kind",
        ),
    ],
)
def test_lint_of_a_file_core_2_refuses_is_its_problems_and_exit_1(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, "PROCESS.md", text)
    result = cli("lint", path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [f"{path}{expected}", "1 file, 1 problem"]


def test_lint_json_gives_the_same_problems(tmp_path: Path) -> None:
    path = tmp_path / "PROCESS.md"
    path.write_text(BAD)
    result = cli("lint", "--json", path)
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert out["problems"] == 5 and out["unreadable"] == 0
    (report,) = out["files"]
    assert report["error"] is None
    listed = [
        f"{path}:{p['line']}:{p['column']}: {p['pointer']}: {p['message']}"
        for p in report["problems"]
    ]
    assert listed == [f"{path}{line}" for line in BAD_LINES]
    assert report["problems"][0] == {
        "line": 7,
        "column": 15,
        "pointer": "/steps/0/advisory",
        "message": 'expected true or false, got "yes"',
    }


def test_lint_help_says_what_is_checked() -> None:
    result = cli("lint", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for checked in (
        "core-2's shape",
        "unknown or misspelt keys at any depth",
        "step ids used twice",
        "check only on agent and task steps",
        "advisory only beside check",
        "FILE:LINE:COL: POINTER: message",
    ):
        assert checked in text, checked


def test_lint_for_a_server_without_an_evaluator_refuses_checks() -> None:
    path = EXAMPLES / "release-notes" / "PROCESS.md"
    result = cli("lint", "--no-evaluator", path)
    assert result.returncode == 1
    pointers = [line.split(": ")[1] for line in result.stdout.splitlines()[:-1]]
    assert pointers == ["/steps/0/check", "/steps/1/check"]
    assert "has none configured" in result.stdout
    assert result.stdout.splitlines()[-1] == "1 file, 2 problems"
    other = cli("lint", "--profiles", "core-1", path)
    assert other.returncode == 1
    assert "which this server does not offer (profiles: core-1)" in other.stdout


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("no frontmatter\n", ":1:1: no frontmatter", id="no-frontmatter"),
        pytest.param("---\nsteps: [\n---\n", ":3:1: invalid YAML", id="bad-yaml"),
        pytest.param(
            "---\nsteps:\n  - id: a\n    id: b\n---\n",
            ':4:5: invalid YAML: duplicate key "id" (first at line 3, column 5)',
            id="duplicate-key",
        ),
        pytest.param(
            "---\nsteps: " + "[" * 3000 + "]" * 3000 + "\n---\n",
            ":2:108: invalid YAML: nested more than 100 levels deep",
            id="nested-too-deep",
        ),
    ],
)
def test_lint_of_an_unreadable_file_is_one_line_and_exit_2(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "PROCESS.md"
    path.write_text(text)
    result = cli("lint", path)
    assert result.returncode == 2
    first, summary = result.stdout.splitlines()
    assert first.startswith(f"{path}{expected}")
    assert summary == "1 file, no problems, 1 unreadable"


def test_lint_reads_a_folder_of_many_processes_and_reports_each(tmp_path: Path) -> None:
    good = (EXAMPLES / "release-notes" / "PROCESS.md").read_text()
    count = PROGRESS_FROM + 5
    for number in range(count):
        folder = tmp_path / f"p{number:02}"
        folder.mkdir()
        (folder / "PROCESS.md").write_text(BAD if number in (3, 17) else good)
    (tmp_path / "README.md").write_text("not a process, not read\n")
    result = cli("lint", "--progress", tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    files = {line.split(":")[0] for line in lines[:-1]}
    assert files == {str(tmp_path / "p03" / "PROCESS.md"), str(tmp_path / "p17" / "PROCESS.md")}
    assert len(lines) == 2 * len(BAD_LINES) + 1
    assert lines[-1] == f"{count} files, {2 * len(BAD_LINES)} problems"
    # The progress line goes to stderr, one line per file when stderr is not a terminal.
    progress = result.stderr.splitlines()
    assert progress[0] == f"[1/{count}] {tmp_path / 'p00' / 'PROCESS.md'}"
    assert progress[-1].startswith(f"[{count}/{count}] ")
    quiet = cli("lint", tmp_path)
    assert quiet.stderr == ""  # not a terminal, not asked for: no progress


def test_lint_of_a_folder_without_processes_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("lint", tmp_path)
    assert result.returncode == 2
    assert (
        one_error_line(result) == f"{tmp_path}: no PROCESS.md or *.process.md file in this folder"
    )


def on_a_terminal(*args: str | Path, env: dict[str, str]) -> tuple[int, str]:
    """Run the command with stdout and stderr on a pseudo-terminal: (exit code, all output)."""
    controller, terminal = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "checkprofile", *map(str, args)],
        stdout=terminal,
        stderr=terminal,
        env=env,
    ) as child:
        os.close(terminal)
        output = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed: the child is done
                break
            if not chunk:
                break
            output += chunk
        code = child.wait(timeout=60)
    os.close(controller)
    text = output.decode()
    assert "Traceback" not in text
    return code, text


def test_lint_colours_only_a_terminal_and_never_with_no_color(tmp_path: Path) -> None:
    path = tmp_path / "PROCESS.md"
    path.write_text(BAD)
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    code, text = on_a_terminal("lint", path, env=env)
    assert code == 1
    assert "\x1b[1m" in text and "\x1b[0m" in text
    code, text = on_a_terminal("lint", path, env={**env, "NO_COLOR": "1"})
    assert code == 1
    assert "\x1b[" not in text
    assert f"{path}:7:15: /steps/0/advisory" in text
    piped = cli("lint", path)  # not a terminal
    assert "\x1b[" not in piped.stdout


def test_the_progress_line_is_for_many_files_only(tmp_path: Path) -> None:
    good = (EXAMPLES / "release-notes" / "PROCESS.md").read_text()
    for number in range(PROGRESS_FROM - 1):
        write(tmp_path, f"p{number:02}.process.md", good)
    few = cli("lint", "--progress", tmp_path)
    assert few.returncode == 0
    assert few.stderr == ""
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    code, text = on_a_terminal("lint", tmp_path, env=env)
    assert code == 0
    assert "[1/" not in text


# normalize, bundle -----------------------------------------------------------------------------


def test_normalize_prints_the_full_form_with_every_threshold() -> None:
    path = EXAMPLES / "release-notes" / "PROCESS.md"
    result = cli("normalize", path, "--step", "publish")
    assert result.returncode == 0
    assert result.stdout == (
        "check:\n- ask: The published notes keep every breaking change of the draft.\n  pass: 0.9\n"
    )
    as_json = cli("normalize", path, "--step", "draft", "--json")
    out = json.loads(as_json.stdout)
    assert out["step"] == "draft" and out["advisory"] is False
    assert out["check"][1] == {
        "ask": "Who are the notes written for?",
        "one_of": {
            "users": "Users of the library, in terms of what they can now do or must change.",
            "contributors": "Contributors, in terms of internal refactors and file names.",
            "mixed": "Both, with no clear reader.",
        },
        "pass": ["users"],
        "unsure": ["mixed"],
        "confidence": 0.8,
    }


def test_normalize_applies_the_limits_file(tmp_path: Path) -> None:
    limits = tmp_path / "limits.json"
    limits.write_text(json.dumps({"checkPass": 0.95, "checkFail": 0.3, "runDataBytes": 1000}))
    path = EXAMPLES / "release-notes" / "PROCESS.md"
    out = json.loads(
        cli("normalize", path, "--step", "publish", "--limits", limits, "--json").stdout
    )
    assert out["check"] == [
        {
            "ask": "The published notes keep every breaking change of the draft.",
            "pass": 0.95,
            "fail": 0.3,
        }
    ]


def test_normalize_of_a_step_a_server_would_refuse_lists_its_problems(tmp_path: Path) -> None:
    path = tmp_path / "PROCESS.md"
    path.write_text(UNPUBLISHABLE)
    result = cli("normalize", path, "--step", "one")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"checkprofile: {path}:7:5: /steps/0/check: check is allowed only on agent and task "
        'steps; step "one" is an approve step',
        f'checkprofile: {path}:9:9: /steps/0/check/0/pas: unknown key "pas"; did you mean "pass"? '
        "a yes/no question takes ask, pass, fail",
    ]


@pytest.mark.parametrize("command", ["normalize", "bundle", "run"])
def test_a_file_core_2_refuses_is_not_normalized_bundled_or_run(
    tmp_path: Path, command: str
) -> None:
    # `advisory: yes` is the string "yes" in YAML 1.2 and `chek` is no key at all: running the
    # step as blocking, as advisory, or with no check would all be guesses. The whole file is
    # refused, every problem on its own line, whichever step is asked for.
    folder = EXAMPLES / "expense-report"
    text = (
        (folder / "PROCESS.md")
        .read_text()
        .replace("    evidence: [file]\n", "    evidence: [file]\n    advisory: yes\n", 1)
        .replace("    approve: Finance", "    chek: Done?\n    approve: Finance", 1)
    )
    path = write(tmp_path, "PROCESS.md", text)
    args = run_args("expense-report", "assemble", "submission.json", "pass")
    args[0], args[1] = command, path
    # normalize takes the file and the step; bundle the material too; run everything.
    result = cli(*args[: {"normalize": 4, "bundle": 8, "run": len(args)}[command]])
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f'checkprofile: {path}:13:15: /steps/0/advisory: expected true or false, got "yes"',
        f'checkprofile: {path}:33:5: /steps/1/chek: unknown key "chek"; did you mean "check"?',
    ]


def test_a_step_a_server_would_refuse_is_not_run(tmp_path: Path) -> None:
    # A pass that names no answer: the check key is not valid, so nothing runs.
    folder = EXAMPLES / "expense-report"
    text = (folder / "PROCESS.md").read_text().replace("pass: [specific]", "pass: [specifc]")
    path = write(tmp_path, "PROCESS.md", text)
    args = run_args("expense-report", "assemble", "submission.json", "pass")
    args[1] = path
    result = cli(*args)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f'checkprofile: {path}:22:16: /steps/0/check/1/pass/0: "specifc" is not an answer of '
        'one_of (specific, vague, missing); did you mean "specific"?',
    ]


def test_the_normalized_form_reads_back_as_the_same_check(tmp_path: Path) -> None:
    path = EXAMPLES / "expense-report" / "PROCESS.md"
    printed = cli("normalize", path, "--step", "assemble").stdout
    body = "".join("    " + line + "\n" for line in printed.splitlines())
    again = tmp_path / "PROCESS.md"
    again.write_text(
        f"---\nname: again\ndescription: Again.\nsteps:\n  - id: s\n    agent: Do.\n{body}---\n"
    )
    assert load_process(again).check_for("s") == load_process(path).check_for("assemble")


def test_bundle_shows_what_the_evaluator_sees_and_what_was_cut(tmp_path: Path) -> None:
    folder = EXAMPLES / "incident-review"
    args: list[str | Path] = [
        "bundle",
        folder / "PROCESS.md",
        "--step",
        "write_review",
        "--submission",
        folder / "submission.json",
        "--run-data",
        folder / "run-data.json",
    ]
    whole = json.loads(cli(*args, "--json").stdout)
    assert whole["truncated"] is False and whole["dropped_steps"] == []
    assert whole["run_data"] == json.loads((folder / "run-data.json").read_text())
    assert whole["body"] == load_process(folder / "PROCESS.md").body
    assert whole["questions"][0]["ask"] == "How clear is the root cause?"

    limits = tmp_path / "limits.yaml"
    limits.write_text("checkStateBytes: 300\n")
    cut = cli(*args, "--limits", limits)
    assert cut.returncode == 0
    assert "# Run data (" in cut.stdout and "of 300 bytes)" in cut.stdout
    assert cut.stdout.rstrip().endswith("steps (oldest first): page")
    cut_json = json.loads(cli(*args, "--limits", limits, "--json").stdout)
    assert cut_json["truncated"] is True
    assert cut_json["dropped_steps"] == ["page"]
    assert cut_json["bytes"]["run_data"] <= 300


# core-2's shapes at the edge: run data and submission files -----------------------------------

RUN_DATA_FAULTS = """{
  "input": {"traveller": "R. Okafor"},
  "steps": {
    "fetch_receipts": {
      "output": [],
      "evidence": [{"kind": "pdf", "ref": "r.pdf"}],
      "chek": {"verdict": "pass"}
    },
    "approve": {"decision": "ok", "history": [{"at": 5, "history": []}]}
  }
}
"""


@pytest.mark.parametrize("command", ["bundle", "run"])
def test_run_data_not_in_core_2_s_shape_is_refused_with_every_problem_and_its_place(
    tmp_path: Path, command: str
) -> None:
    path = write(tmp_path, "run-data.json", RUN_DATA_FAULTS)
    args = run_args("expense-report", "assemble", "submission.json", "pass")
    args[args.index("--run-data") + 1] = path
    if command == "bundle":
        args = ["bundle", *args[1 : args.index("--evaluator")]]
    result = cli(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    record = "output, evidence, summary, next, reason, decision, note, check, by, at and history"
    entry = "output, evidence, summary, next, reason, decision, note, check, by and at"
    assert result.stderr.splitlines() == [
        f'checkprofile: {path}:2:3: /input: unknown key "input"; did you mean "inputs"? run data'
        " has inputs and steps",
        f'checkprofile: {path}:4:23: /steps/fetch_receipts: missing "history": expected a list of'
        " the step's earlier records, each without history ([] when there are none)",
        f"checkprofile: {path}:5:17: /steps/fetch_receipts/output: expected a map (the step's"
        " output fields), got an empty list",
        f"checkprofile: {path}:6:29: /steps/fetch_receipts/evidence/0/kind: expected file or"
        ' link, got "pdf"',
        f'checkprofile: {path}:7:7: /steps/fetch_receipts/chek: unknown key "chek"; did you mean'
        f' "check"? a step record has {record}',
        f"checkprofile: {path}:9:29: /steps/approve/decision: expected approved, rejected or"
        ' failed, got "ok"',
        f"checkprofile: {path}:9:54: /steps/approve/history/0/at: expected a string, got 5",
        f'checkprofile: {path}:9:57: /steps/approve/history/0/history: unknown key "history"; a'
        f" step record without history has {entry}",
    ]


def test_run_data_in_yaml_is_checked_the_same_way(tmp_path: Path) -> None:
    path = write(tmp_path, "run.yaml", "inputs: {}\nsteps:\n  fetch:\n    sumary: Done.\n")
    result = run_with(tmp_path, run_data=str(path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f'checkprofile: {path}:4:5: /steps/fetch: missing "history": expected a list of the'
        " step's earlier records, each without history ([] when there are none)",
        f'checkprofile: {path}:4:5: /steps/fetch/sumary: unknown key "sumary"; did you mean'
        ' "summary"? a step record has output, evidence, summary, next, reason, decision, note,'
        " check, by, at and history",
    ]


def test_a_submission_not_in_core_2_s_shape_is_refused_with_every_problem(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "sub.json",
        '{\n  "output": "Three lines.",\n  "summary": "",\n  "next": "",\n  "evidence": [{"kind":'
        ' "file", "ref": ""}]\n}',
    )
    result = run_with(tmp_path, submission=str(path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"checkprofile: {path}:2:13: /output: expected a map (the step's output fields), got"
        ' "Three lines."',
        f"checkprofile: {path}:3:14: /summary: an agent's summary is 1 to 2000 characters, got 0",
        f'checkprofile: {path}:4:11: /next: expected a step id (a non-empty string), got ""',
        f'checkprofile: {path}:5:40: /evidence/0/ref: expected a non-empty string, got ""',
    ]


ROUTED_PROCESS = """---
name: vendor-check
description: Screen a vendor before onboarding.
steps:
  - id: screen
    agent: Screen the vendor against the OFAC and EU lists.
    check: The screening covers both lists.
    next:
      - {to: sign_off, when: a list has a match}
      - publish
  - id: sign_off
    approve: Finance signs the vendor off.
  - id: publish
    agent: Publish the vendor record.
    check: The record names the screening report.
---
# Vendor onboarding
"""


def routed_args(tmp_path: Path, submission: dict[str, Any], *extra: str) -> list[str | Path]:
    process = write(tmp_path, "PROCESS.md", ROUTED_PROCESS)
    sub = write(tmp_path, "sub.json", json.dumps(submission, indent=2))
    return ["bundle", process, "--step", "screen", "--submission", sub, "--json", *extra]


ROUTED_SUBMISSION = {
    "output": {"cleared": False},
    "summary": "EU list match on the parent company.",
    "next": "sign_off",
    "reason": "A list has a match, so Finance must sign off.",
}


def test_the_route_is_shown_to_the_evaluator_only_with_show_route(tmp_path: Path) -> None:
    hidden = cli(*routed_args(tmp_path, ROUTED_SUBMISSION))
    assert hidden.returncode == 0, hidden.stderr
    assert json.loads(hidden.stdout)["submission"] == {
        "output": {"cleared": False},
        "summary": "EU list match on the parent company.",
        "evidence": [],
    }
    shown = cli(*routed_args(tmp_path, ROUTED_SUBMISSION, "--show-route"))
    assert shown.returncode == 0, shown.stderr
    bundle = json.loads(shown.stdout)
    assert bundle["submission"] == {**ROUTED_SUBMISSION, "evidence": []}
    assert bundle["bytes"]["submission"] > json.loads(hidden.stdout)["bytes"]["submission"]
    text = cli(*routed_args(tmp_path, ROUTED_SUBMISSION, "--show-route")[:-2], "--show-route")
    assert '"next":"sign_off"' in text.stdout  # the text shows exactly what is sent


@pytest.mark.parametrize(
    ("step", "next_", "message"),
    [
        pytest.param(
            "screen",
            "sign-off",
            'next "sign-off" is not a route of step "screen"; did you mean "sign_off"? (routes:'
            " sign_off, publish)",
            id="not-a-route",
        ),
        pytest.param(
            "publish",
            "sign_off",
            'next "sign_off": step "publish" has no list of routes to choose from',
            id="no-routes",
        ),
    ],
)
def test_a_route_the_step_does_not_have_is_refused_at_its_line(
    tmp_path: Path, step: str, next_: str, message: str
) -> None:
    args = routed_args(tmp_path, {**ROUTED_SUBMISSION, "next": next_})
    args[args.index("--step") + 1] = step
    result = cli(*args)
    assert result.returncode == 2
    assert one_error_line(result) == f"{tmp_path / 'sub.json'}:6:11: /next: {message}"


def test_a_routed_submission_runs_and_its_route_is_not_a_problem(tmp_path: Path) -> None:
    answers = write(tmp_path, "answers.yaml", "The screening covers both lists.: {answer: 0.95}\n")
    args = routed_args(tmp_path, ROUTED_SUBMISSION)[:-1]
    args[0] = "run"
    result = cli(*args, "--evaluator", f"replay:{answers}", "--now", NOW, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["action"] == "complete"


# Bad input: one line, the file and the line, the documented exit code ---------------------------


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_with(tmp_path: Path, **replace: Any) -> subprocess.CompletedProcess[str]:
    args = run_args("expense-report", "assemble", "submission.json", "pass")
    for option, value in replace.items():
        flag = "--" + option.replace("_", "-")
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    return cli(*args)


ANSWERS = EXAMPLES / "expense-report" / "answers" / "pass.yaml"
ASK1 = "Every line of the report has a receipt attached, and the amounts match them."
ASK2 = "How does the report state the business purpose?"
ASK3 = "How well are lines above the per-diem limit handled?"


@pytest.mark.parametrize(
    ("option", "name", "text", "expected"),
    [
        pytest.param(
            "submission",
            "sub.json",
            '{"output": {}, "sumary": "x"}',
            ':1:16: /sumary: unknown key "sumary"; did you mean "summary"? a submission has'
            " output, evidence, summary, next and reason",
            id="submission-unknown-key",
        ),
        pytest.param(
            "submission",
            "sub.json",
            '{\n  "output": {},\n  "evidence": [{"kind": "file"}]\n}',
            ':3:16: /evidence/0: missing "ref": expected a non-empty string',
            id="submission-bad-evidence-item",
        ),
        pytest.param(
            "submission",
            "sub.json",
            '{"output": {}, "summary": 3}',
            ":1:27: /summary: expected a string, got 3",
            id="submission-summary-not-text",
        ),
        pytest.param(
            "submission",
            "sub.json",
            '{"output": {},\n "summary": }',
            ":2:13: submission is not valid JSON: Expecting value",
            id="submission-bad-json",
        ),
        pytest.param(
            "submission",
            "sub.yaml",
            "output: {score: .nan}\n",
            ":1:17: a submission's output cannot be shown as JSON: at /score: nan is not a JSON"
            " number",
            id="submission-nan",
        ),
        pytest.param(
            "run_data",
            "run.json",
            '{"inputs": {"score": 1e999}, "steps": {}}',
            ":1:22: run data inputs.score cannot be shown as JSON: it holds NaN or an infinity,"
            " which JSON cannot write",
            id="run-data-infinity",
        ),
        pytest.param(
            "run_data",
            "run.yaml",
            "- not\n- a map\n",
            ":1:1: /: expected run data (a map of inputs and steps), got a list",
            id="run-data-a-list",
        ),
        pytest.param(
            "limits",
            "limits.json",
            '{"checkPass": 0.9,\n "checkConfidence": 2}',
            ":2:21: checkConfidence must be a number in [0, 1], got 2",
            id="limits-out-of-range",
        ),
        pytest.param(
            "evaluator",
            "answers.yaml",
            f"{ASK1}: {{answer: 0.9}}\n{ASK2}: {{answer: specific, confidence: 0.9}}\n"
            f"{ASK3}: {{answer: 2, confidence: 0.9}}\nIs it on time?: {{answer: 0.9}}\n",
            ':4:1: "Is it on time?" is not a question of this check',
            id="answers-unknown-ask",
        ),
        pytest.param(
            "evaluator",
            "answers.yaml",
            f"{ASK1}: {{answer: 0.9}}\n{ASK2}: {{answer: specific, confidence: 0.9}}\n",
            f':1:1: no recorded answer for "{ASK3}"',
            id="answers-missing-ask",
        ),
        pytest.param(
            "evaluator",
            "answers.yaml",
            f"{ASK1}: {{error: timed_out}}\n{ASK2}: {{answer: specific, confidence: 0.9}}\n"
            f"{ASK3}: {{answer: 2, confidence: 0.9}}\n",
            ':1:87: "timed_out" is not a reason: timeout, rate_limited, refusal, malformed, '
            "tokens_exceeded, auth, server_error, unavailable, redirected, unsupported, unknown",
            id="answers-unknown-reason",
        ),
        pytest.param(
            "evaluator",
            "answers.yaml",
            f"{ASK1}: {{answer: 0.9}}\n{ASK2}: {{answer: specific}}\n"
            f"{ASK3}: {{answer: 2, confidence: 0.9}}\n",
            ':2:50: a choice answer needs "confidence"',
            id="answers-choice-without-confidence",
        ),
        pytest.param(
            "evaluator",
            "answers.yaml",
            f"{ASK1}: {{answer: 0.9}}\n{ASK2}: {{answer: specific, confidence: 0.9, why: x}}\n"
            f"{ASK3}: {{answer: 2, confidence: 0.9}}\n",
            ':2:86: unknown key "why"',
            id="answers-unknown-key",
        ),
        pytest.param(
            "evaluator",
            "answers.yaml",
            f"{ASK1}: {{answer: 0.9}}\n{ASK1}: {{answer: 0.1}}\n",
            f':2:1: answers file is not valid YAML: duplicate key "{ASK1}" '
            "(first at line 1, column 1)",
            id="answers-duplicate-ask",
        ),
    ],
)
def test_bad_input_files_are_one_line_with_file_line_and_exit_2(
    tmp_path: Path, option: str, name: str, text: str, expected: str
) -> None:
    path = write(tmp_path, name, text)
    value = f"replay:{path}" if option == "evaluator" else str(path)
    result = run_with(tmp_path, **{option: value})
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    assert one_error_line(result) == f"{path}{expected}"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            ["--step", "nope"],
            'PROCESS.md:5:1: no step has id "nope" (steps: assemble, sign_off)',
            id="unknown-step",
        ),
        pytest.param(
            ["--step", "sign_off"],
            'PROCESS.md:31:5: step "sign_off" has no check',
            id="step-without-check",
        ),
        pytest.param(
            ["--submission", "/no/such.json"],
            "/no/such.json: submission not found",
            id="missing-submission",
        ),
        pytest.param(
            ["--evaluator", "replay"],
            '--evaluator "replay": expected SCHEME:VALUE',
            id="spec-without-value",
        ),
        pytest.param(["--now", "yesterday"], "--now: ", id="bad-now"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    result = run_with(tmp_path, **{args[0].removeprefix("--").replace("-", "_"): args[1]})
    assert result.returncode == 2
    assert expected in one_error_line(result)


def test_usage_errors_are_one_line_and_exit_2() -> None:
    for args in (["run"], [], ["lint"], ["nope"], ["run", "x", "--step"]):
        result = cli(*args)
        assert result.returncode == 2, args
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert result.stderr.startswith("checkprofile")


def test_a_recorded_question_without_an_answer_is_not_answered_on_replay(tmp_path: Path) -> None:
    # A recorded error verdict: the yes/no question has no answer, the others do. Replayed,
    # it must be an error again (after the one re-ask), never a pass.
    recorded = {
        "verdict": "error",
        "advisory": False,
        "model": "example-evaluator-1",
        "at": NOW,
        "questions": [
            {"ask": ASK1, "kind": "yes_no", "answer": None, "result": "unsure"},
            {
                "ask": ASK2,
                "kind": "choice",
                "answer": "specific",
                "confidence": 0.9,
                "result": "pass",
            },
            {"ask": ASK3, "kind": "rubric", "answer": 2, "confidence": 0.9, "result": "pass"},
        ],
    }
    answers = write(tmp_path, "verdict.json", json.dumps(recorded))
    result = run_with(tmp_path, evaluator=f"replay:{answers}")
    assert result.returncode == 4
    assert f"not answered: {ASK1}: unknown" in result.stdout
    assert "model: example-evaluator-1" in result.stdout


def test_a_replayed_answer_that_does_not_fit_is_an_error_never_a_pass(tmp_path: Path) -> None:
    answers = write(
        tmp_path,
        "answers.yaml",
        f"{ASK1}: {{answer: 'yes'}}\n{ASK2}: {{answer: specific, confidence: 0.9}}\n"
        f"{ASK3}: {{answer: 7, confidence: 0.9}}\n",
    )
    result = run_with(tmp_path, evaluator=f"replay:{answers}")
    assert result.returncode == 4
    assert "error: retry" in result.stdout
    assert "malformed" in result.stdout


def readme_shell_commands() -> list[tuple[str, int]]:
    """The README's "From the shell" commands, each with the exit code its comment gives."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## From the shell", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.replace("\\\n", " ").splitlines():
        command, _, comment = line.partition("#")
        code = int(comment.split("exit ")[1].split(":")[0]) if "exit " in comment else 0
        commands.append((command.strip(), code))
    return commands


@pytest.mark.parametrize(
    ("command", "code"), readme_shell_commands(), ids=lambda value: str(value)[:40]
)
def test_the_readme_shell_examples_run_as_shown(command: str, code: int) -> None:
    program, *args = command.split()
    assert program == "checkprofile"
    assert cli(*args).returncode == code


# Model backends from the command line, against a real host on loopback ----------------------


def test_run_points_at_any_compatible_system_one_host_and_caches(tmp_path: Path) -> None:
    pytest.importorskip("typesafe_sdk")
    from loopback import LoopbackServer, systemone

    cache = tmp_path / "cache"
    args = [*run_args("expense-report", "assemble", "submission.json", "pass"), "--json"]
    args[args.index("--evaluator") + 1] = "systemone:jev-latest"
    with LoopbackServer(default=systemone(model="jev-2026-09-15")) as host:
        env = {**os.environ, "TYPESAFE_BASE_URL": host.url, "TYPESAFE_API_KEY": "test-key"}
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, "-m", "checkprofile", *map(str, args), "--cache", str(cache)],
                capture_output=True,
                text=True,
                cwd=ROOT,
                env=env,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            out = json.loads(done.stdout)
            assert out["action"] == "complete"
            # The resolved version that answered, not the alias asked for.
            assert out["verdict"]["model"] == "jev-2026-09-15"
        # The second run was answered from the cache: one request in all.
        assert host.count() == 1
        assert host.last().headers.get("authorization") == "Bearer test-key"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            "bogus:x",
            '--evaluator "bogus:x": unknown evaluator "bogus"; use replay:ANSWERS, '
            "systemone:MODEL, openai-decisions:MODEL, openai-chat:MODEL, sglang-decisions:MODEL",
            id="unknown-scheme",
        ),
        pytest.param(
            "systemone:jev-1",
            '--evaluator: evaluator "systemone:jev-1" needs an API key: set TYPESAFE_API_KEY',
            id="no-key",
        ),
    ],
)
def test_a_backend_that_cannot_be_made_is_one_line_and_exit_2(
    tmp_path: Path, spec: str, expected: str
) -> None:
    args = run_args("expense-report", "assemble", "submission.json", "pass")
    args[args.index("--evaluator") + 1] = spec
    env = {k: v for k, v in os.environ.items() if k not in ("TYPESAFE_API_KEY", "OPENAI_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-m", "checkprofile", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert one_error_line(done) == expected


def test_lint_reads_every_file_even_after_an_unreadable_one(tmp_path: Path) -> None:
    broken = write(tmp_path, "a.process.md", "no frontmatter here\n")
    bad = write(tmp_path, "b.process.md", BAD)
    result = cli("lint", tmp_path)
    # Problems were found, but a file could not be read at all: that is the code to act on.
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert lines[0] == f"{broken}:1:1: no frontmatter: a PROCESS.md file starts with a " + (
        '"---" line, then YAML, then "---"'
    )
    assert [line.split(":")[0] for line in lines[1:-1]] == [str(bad)] * len(BAD_LINES)
    assert lines[-1] == f"2 files, {len(BAD_LINES)} problems, 1 unreadable"
    out = json.loads(cli("lint", "--json", tmp_path).stdout)
    assert (out["unreadable"], out["problems"]) == (1, len(BAD_LINES))
    assert out["files"][0]["error"].startswith(f"{broken}:1:1: no frontmatter")
    assert out["files"][0]["problems"] == []
