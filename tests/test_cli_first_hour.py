"""A new user's first hour with the command: every flag, hint and answer they reach for.

The command runs as a user runs it, in a subprocess; the model backends talk to a real HTTP
server on loopback; the waiting line is read from a real pseudo-terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackServer, Scripted
from test_cli import cli, on_a_terminal, one_error_line

import checkprofile
from checkprofile.adapters import evaluator_from_spec
from checkprofile.cli import COMMANDS, parser

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "expense-report"
PROCESS = EXAMPLE / "PROCESS.md"
NOW = "2026-11-30T10:00:00Z"
ASK = "Every line of the report has a receipt attached, and the amounts match them."


def run_args(answers: str = "pass", *extra: str | Path) -> list[str | Path]:
    return [
        "run",
        PROCESS,
        "--step",
        "assemble",
        "--submission",
        EXAMPLE / "submission.json",
        "--run-data",
        EXAMPLE / "run-data.json",
        "--evaluator",
        f"replay:{EXAMPLE / 'answers' / f'{answers}.yaml'}",
        "--now",
        NOW,
        *extra,
    ]


def piped(*args: str | Path, stdin: str, env: dict[str, str] | None = None) -> Any:
    """The command with ``stdin`` on its standard input."""
    done = subprocess.run(
        [sys.executable, "-m", "checkprofile", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


# --version, --help, --json anywhere -----------------------------------------------------------


def test_version_is_the_packages() -> None:
    done = cli("--version")
    assert (done.returncode, done.stdout) == (0, f"checkprofile {checkprofile.__version__}\n")


def test_help_lists_every_command_and_each_command_has_its_help() -> None:
    top = cli("--help")
    assert top.returncode == 0
    for name, (_, summary) in COMMANDS.items():
        assert re.search(rf"^\s+{name}\s+{re.escape(summary[:30])}", top.stdout, re.M), name
        own = cli(name, "--help")
        assert own.returncode == 0
        assert own.stdout.startswith(f"usage: checkprofile {name} ")
        assert "--json" in own.stdout


def test_the_listed_summaries_are_the_commands_own() -> None:
    # One place says what a command does: the summary listed before a command is loaded is
    # the one its module gives when it is.
    every = parser("*")
    commands = next(a for a in every._actions if isinstance(a, argparse._SubParsersAction))
    helps = {action.dest: action.help for action in commands._choices_actions}
    assert helps == {name: summary for name, (_, summary) in COMMANDS.items()}


@pytest.mark.parametrize(
    "args",
    [
        ["lint", str(PROCESS)],
        ["normalize", str(PROCESS), "--step", "assemble"],
        [str(arg) for arg in run_args("fail")],
    ],
    ids=["lint", "normalize", "run"],
)
def test_json_before_or_after_the_command_is_the_same(args: list[str]) -> None:
    after = cli(*args, "--json")
    before = cli("--json", *args)
    assert (before.returncode, before.stdout) == (after.returncode, after.stdout)
    json.loads(before.stdout)


def test_a_misspelt_command_is_one_line_with_the_command_meant() -> None:
    done = cli("lnit", str(PROCESS))
    assert done.returncode == 2
    assert one_error_line(done) == (
        'unknown command "lnit"; did you mean "lint"? '
        "(commands: lint, normalize, bundle, run, calibrate, qualify, monitor, conformance)"
    )


def test_a_misspelt_option_is_one_line_with_the_option_meant() -> None:
    done = cli(*run_args(), "--evalutor", "x")
    assert done.returncode == 2
    assert one_error_line(done) == (
        'run: unrecognized arguments: --evalutor x; did you mean "--evaluator"? '
        "(see checkprofile run --help)"
    )


def test_a_missing_option_names_the_command() -> None:
    done = cli("run", str(PROCESS), "--step", "assemble")
    assert done.returncode == 2
    assert one_error_line(done) == (
        "run: the following arguments are required: --submission, --evaluator"
        " (see checkprofile run --help)"
    )


# Standard input -------------------------------------------------------------------------------


def test_a_process_on_standard_input_is_linted_normalized_and_run() -> None:
    text = PROCESS.read_text(encoding="utf-8")
    linted = piped("lint", "-", stdin=text)
    assert (linted.returncode, linted.stdout) == (0, "1 file, no problems\n")
    assert piped("normalize", "-", "--step", "assemble", stdin=text).stdout == (
        cli("normalize", PROCESS, "--step", "assemble").stdout
    )
    args = [str(arg) for arg in run_args("fail")]
    args[1] = "-"
    assert piped(*args, stdin=text).stdout == cli(*run_args("fail")).stdout


def test_a_problem_on_standard_input_is_placed_in_it() -> None:
    text = PROCESS.read_text(encoding="utf-8").replace("    check:", "    chek:", 1)
    done = piped("lint", "-", stdin=text)
    assert done.returncode == 1
    assert re.match(r'<stdin>:\d+:5: /steps/0/chek: unknown key "chek"', done.stdout)


@pytest.mark.parametrize("option", ["--submission", "--run-data"])
def test_a_submission_or_run_data_on_standard_input(option: str) -> None:
    args = [str(arg) for arg in run_args("fail")]
    path = Path(args[args.index(option) + 1])
    args[args.index(option) + 1] = "-"
    done = piped(*args, stdin=path.read_text(encoding="utf-8"))
    assert (done.returncode, done.stdout) == (1, cli(*run_args("fail")).stdout)


def test_answers_on_standard_input_in_yaml() -> None:
    args = [str(arg) for arg in run_args("unsure")]
    answers = Path(args[args.index("--evaluator") + 1].removeprefix("replay:"))
    args[args.index("--evaluator") + 1] = "replay:-"
    done = piped(*args, stdin=answers.read_text(encoding="utf-8"))
    assert (done.returncode, done.stdout) == (3, cli(*run_args("unsure")).stdout)


def test_standard_input_is_read_once() -> None:
    args = [str(arg) for arg in run_args()]
    args[args.index("--submission") + 1] = "-"
    args[args.index("--run-data") + 1] = "-"
    done = piped(*args, stdin=(EXAMPLE / "submission.json").read_text(encoding="utf-8"))
    assert done.returncode == 2
    assert done.stdout == ""
    assert one_error_line(done) == (
        "-: standard input is already the submission; give the run data as a file"
    )


def test_bad_json_on_standard_input_is_a_yaml_error_with_its_place() -> None:
    args = [str(arg) for arg in run_args()]
    args[args.index("--submission") + 1] = "-"
    done = piped(*args, stdin='{"output": {"a": [1, 2}}')
    assert done.returncode == 2
    assert one_error_line(done).startswith("<stdin>:1:")


# Replayed answers -----------------------------------------------------------------------------


def test_an_ask_the_check_does_not_have_is_named_with_the_ask_meant(tmp_path: Path) -> None:
    answers = tmp_path / "answers.yaml"
    text = (EXAMPLE / "answers" / "pass.yaml").read_text(encoding="utf-8")
    answers.write_text(text.replace("receipt attached", "reciept attached"), encoding="utf-8")
    args = run_args()
    args[args.index("--evaluator") + 1] = f"replay:{answers}"
    done = cli(*args)
    assert done.returncode == 2
    line = one_error_line(done)
    assert line.startswith(f"{answers}:")
    assert line.endswith(f'is not a question of this check; did you mean "{ASK}"?')


# run --json -----------------------------------------------------------------------------------


def test_run_json_has_the_attempts_and_why_each_question_was_not_answered() -> None:
    text = cli(*run_args("error"))
    done = cli(*run_args("error"), "--json")
    assert done.returncode == 4
    out = json.loads(done.stdout)
    assert out["action"] == "retry"
    assert out["attempts"] == 2
    assert out["failures"] == [
        {
            "ask": "How well are lines above the per-diem limit handled?",
            "reason": "timeout",
            "detail": "recorded failure",
        }
    ]
    # What the text says is there too.
    for failure in out["failures"]:
        line = f"not answered: {failure['ask']}: {failure['reason']}: {failure['detail']}"
        assert line in text.stdout
    assert f"model: {out['verdict']['model']}" in text.stdout
    answered = json.loads(cli(*run_args("pass"), "--json").stdout)
    assert (answered["attempts"], answered["failures"]) == (1, [])


# A host that never answers --------------------------------------------------------------------


def hanging_run(host: LoopbackServer, *extra: str) -> list[str]:
    args = [str(arg) for arg in run_args()]
    args[args.index("--evaluator") + 1] = "systemone:jev-latest"
    return [*args, *extra]


def backend_env(host: LoopbackServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return {**env, "TYPESAFE_BASE_URL": host.url, "TYPESAFE_API_KEY": "test-key"}


def test_a_host_that_never_answers_is_a_timeout_within_the_timeout() -> None:
    pytest.importorskip("typesafe_sdk")
    with LoopbackServer(default=Scripted(delay=3600, json={})) as host:
        start = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "checkprofile", *hanging_run(host, "--timeout", "1")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=backend_env(host),
            timeout=120,
        )
        took = time.monotonic() - start
    assert done.returncode == 4, done.stderr
    assert done.stderr == ""  # not a terminal, no --progress: no waiting line
    for ask in (ASK, "How does the report state the business purpose?"):
        assert re.search(rf"^  not answered: {re.escape(ask)}: timeout", done.stdout, re.M)
    # Without --timeout this host holds a run for two minutes (60 s, twice). The time is
    # for the whole run, the re-ask included, so it ends well within a few seconds.
    assert took < 20, took


def test_with_progress_the_waiting_line_goes_to_a_log() -> None:
    pytest.importorskip("typesafe_sdk")
    with LoopbackServer(default=Scripted(delay=3600, json={})) as host:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "checkprofile",
                *hanging_run(host, "--timeout", "1", "--progress", "--json"),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=backend_env(host),
            timeout=120,
        )
        sent = host.count()
    assert done.returncode == 4
    assert done.stderr == "checkprofile: asking systemone:jev-latest: 3 questions\n"
    out = json.loads(done.stdout)
    assert {failure["reason"] for failure in out["failures"]} == {"timeout"}
    # The re-ask comes after the time is up: it is not sent, and says why.
    assert (out["attempts"], sent) == (2, 1)
    assert out["failures"][0]["detail"] == "no answer within --timeout 1 s"


def test_on_a_terminal_a_waiting_line_shows_while_the_model_is_asked() -> None:
    pytest.importorskip("typesafe_sdk")
    with LoopbackServer(default=Scripted(delay=3600, json={})) as host:
        code, text = on_a_terminal(*hanging_run(host, "--timeout", "1.5"), env=backend_env(host))
    assert code == 4
    waiting = "asking systemone:jev-latest: 3 questions, waiting 0 s (--timeout 1.5 s)"
    assert f"\r{waiting}" in text
    # Cleared before the outcome is printed, so the outcome reads as it does in a log.
    assert f"\r{' ' * len(waiting)}\r" in text
    assert text.index("\r" + " " * len(waiting)) < text.index(": retry")


# Model backends: refusals and install hints -------------------------------------------------


def test_the_chat_backend_without_a_key_or_a_host_is_refused() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    args = [str(arg) for arg in run_args()]
    args[args.index("--evaluator") + 1] = "openai-chat:llama3"
    done = subprocess.run(
        [sys.executable, "-m", "checkprofile", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert one_error_line(done) == (
        '--evaluator: evaluator "openai-chat:llama3" needs a host: set OPENAI_BASE_URL (a local'
        " OpenAI-compatible server, which may take no key) or OPENAI_API_KEY"
    )


@pytest.mark.parametrize(
    "environ",
    [{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, {"OPENAI_API_KEY": "k"}],
    ids=["a-local-host", "a-key"],
)
def test_the_chat_backend_takes_a_host_or_a_key(environ: dict[str, str]) -> None:
    pytest.importorskip("openai")
    evaluator = evaluator_from_spec("openai-chat:llama3", environ=environ)
    assert evaluator.model == "llama3"
