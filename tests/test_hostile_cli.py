"""The adversarial suite over the command line: hostile files given to every command.

Each run ends with a documented exit code (0/1/2/3/4; never 70, a defect) and each line on
stderr is one ``checkprofile: ...`` line: no traceback, no line broken by a character in the
input. The table runs the real command in a subprocess; the properties run ``cli.main`` in
this process (the same code, many more examples).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from checkprofile.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXPENSE = ROOT / "examples" / "expense-report"
PROCESS = EXPENSE / "PROCESS.md"
SUBMISSION = EXPENSE / "submission.json"
RUN_DATA = EXPENSE / "run-data.json"
ANSWERS = EXPENSE / "answers" / "pass.yaml"
NOW = "2026-11-30T10:00:00Z"

#: Exit codes each command documents (docs/cli.md).
CODES = {
    "lint": {0, 1, 2},
    "normalize": {0, 1, 2},
    "bundle": {0, 1, 2},
    "run": {0, 1, 2, 3, 4},
    "conformance": {0, 1, 2},
    "calibrate": {0, 2},
}


def cli(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    return subprocess.run(
        [sys.executable, "-m", "checkprofile", *map(str, args)],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        cwd=cwd,
        env=env,
        timeout=300,
    )


def assert_one_line_errors(command: str, code: int, stderr: str, stdout: str = "") -> None:
    assert "Traceback" not in stderr and "Traceback" not in stdout, stderr
    assert code in CODES[command], f"exit {code}: {stderr}"
    for line in stderr.splitlines():
        assert line.startswith("checkprofile: "), stderr
    # Python's str.splitlines() breaks at U+2028, NEL and more: none may be in a line.
    assert stderr.count("\n") == len(stderr.splitlines()), repr(stderr)


def step_args(command: str, **files: Path | str) -> list[str | Path]:
    args: list[str | Path] = [command, files.get("process", PROCESS), "--step", "assemble"]
    if command in ("bundle", "run"):
        args += ["--submission", files.get("submission", SUBMISSION)]
        args += ["--run-data", files.get("run_data", RUN_DATA)]
    if command == "run":
        args += ["--evaluator", f"replay:{files.get('answers', ANSWERS)}", "--now", NOW]
    if "limits" in files:
        args += ["--limits", files["limits"]]
    return args


# --- hostile files, by what reads them ---------------------------------------------------------

HUGE = "9" * 5000
JSON_FILES: dict[str, tuple[str, str]] = {
    # name: (text, what the one error line must say)
    "huge-int": ('{"output": {"n": ' + HUGE + "}}", "an integer of 5000 digits is too long"),
    "duplicate-key": ('{"output": {}, "output": {}}', 'duplicate key "output"'),
    "nan": ('{"output": {"n": NaN}}', "NaN is not a JSON number"),
    "infinity": ('{"output": {"n": -Infinity}}', "-Infinity is not a JSON number"),
    "deep": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "not-json": ('{"output": ', "is not valid JSON"),
    "empty": ("", "is not valid JSON"),
    "a-list": ("[1, 2]", ""),
    "lone-surrogate-key": ('{"output": {"\\ud800": 1}, "\\udfff": 2}', 'unknown key "\\udfff"'),
    "line-breaks-in-keys": (
        '{"output": {}, "a\\u2028b\\u0085": 1}',
        'unknown key "a\\u2028b\\x85"',
    ),
    "control-characters": ('{"output": {}, "\\u001b[31mred": 1}', 'unknown key "\\x1b[31mred"'),
}
YAML_FILES: dict[str, tuple[str, str]] = {
    "alias-bomb": (
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n"
            for i in range(8)
        ),
        "values once aliases are expanded",
    ),
    "text-alias-bomb": (
        "a: &a " + "x" * 200_000 + "\nb: [" + ", ".join(["*a"] * 100) + "]\n",
        "aliases repeat more than",
    ),
    "deep": ("[" * 3000 + "]" * 3000 + "\n", "nested more than 100 levels deep"),
    "python-tag": ("output: !!python/object:os.system {}\n", "is not allowed"),
    "two-documents": ("output: {}\n---\noutput: {}\n", "expected one YAML document"),
    "duplicate-key": ("output: {}\noutput: {}\n", 'duplicate key "output"'),
    "tab-and-nul": ("output: {\x00}\n", "not valid YAML"),
}


# Every file in the roles that read run data and submissions; the readers of answers and
# limits are the same function, so a few files there show it.
ROLES = [
    *((role, name) for role in ("submission", "run_data") for name in sorted(JSON_FILES)),
    *(
        (role, name)
        for role in ("answers", "limits")
        for name in ("huge-int", "duplicate-key", "nan", "deep")
    ),
]


@pytest.mark.parametrize(("role", "name"), ROLES)
def test_a_hostile_json_file_is_one_located_line_and_exit_2(
    tmp_path: Path, role: str, name: str
) -> None:
    text, message = JSON_FILES[name]
    path = tmp_path / f"{name}.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    result = cli(*step_args("run", **{role: path}))
    assert_one_line_errors("run", result.returncode, result.stderr, result.stdout)
    if name in ("lone-surrogate-key", "line-breaks-in-keys", "control-characters", "a-list"):
        assert result.returncode in (2, 0, 1, 3, 4)
        if role in ("submission", "run_data") and result.returncode == 2:
            assert message in result.stderr or name == "a-list", result.stderr
        return
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert message in result.stderr, result.stderr
    assert str(path) in result.stderr


@pytest.mark.parametrize(
    ("role", "name"),
    [
        *(("run_data", name) for name in sorted(YAML_FILES)),
        *((role, "alias-bomb") for role in ("submission", "answers", "limits")),
        ("answers", "text-alias-bomb"),
    ],
)
def test_a_hostile_yaml_file_is_one_located_line_and_exit_2(
    tmp_path: Path, role: str, name: str
) -> None:
    text, message = YAML_FILES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    result = cli(*step_args("run", **{role: path}))
    assert_one_line_errors("run", result.returncode, result.stderr, result.stdout)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert message in result.stderr, result.stderr


ABSURD_LIMITS = [
    '{"checkStateBytes": 1e308}',
    '{"checkStateBytes": 100000000000000000000000000000}',
    '{"checkStateBytes": "65536"}',
    '{"checkStateBytes": -1}',
    '{"checkStateBytes": true}',
    '{"checkPass": 1e-400, "checkFail": 0}',
    '{"checkPass": 1.0000000000000002}',
    '{"checkConfidence": [0.8]}',
    "[]",
    "null",
    '"limits"',
]


@pytest.mark.parametrize("text", ABSURD_LIMITS)
def test_absurd_limits_are_refused_or_taken_never_a_traceback(tmp_path: Path, text: str) -> None:
    path = tmp_path / "limits.json"
    path.write_text(text)
    result = cli(*step_args("run", limits=path))
    assert_one_line_errors("run", result.returncode, result.stderr, result.stdout)


def test_a_budget_of_ten_to_the_thirty_bytes_shows_everything(tmp_path: Path) -> None:
    path = tmp_path / "limits.json"
    path.write_text('{"checkStateBytes": 1000000000000000000000000000000}')
    result = cli(*step_args("bundle", limits=path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["truncated"] is False


def test_a_lone_surrogate_in_a_submission_is_shown_escaped_not_a_traceback(
    tmp_path: Path,
) -> None:
    # The example's submission (which keeps the step's objective rules, so `run` asks the
    # model) with lone surrogates in a field of its output and in its summary.
    given = json.loads((EXPENSE / "submission.json").read_text(encoding="utf-8"))
    given["output"]["note"] = "\ud800 and \udfff"
    given["summary"] = "\ud83d"
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(given))  # ASCII: each lone surrogate as its escape
    for extra in ([], ["--json"]):
        result = cli(*step_args("bundle", submission=path), *extra)
        assert result.returncode == 0, result.stderr
        assert "\\ud800" in result.stdout
    shown = json.loads(cli(*step_args("bundle", submission=path), "--json").stdout)
    assert shown["submission"]["output"]["note"] == "\ud800 and \udfff"
    result = cli(*step_args("run", submission=path))
    assert result.returncode == 0, result.stderr


PROCESS_TEXT = (EXPENSE / "PROCESS.md").read_text(encoding="utf-8")
ASK = "Every line of the report has a receipt attached, and the amounts match them."
PROCESS_FILES: dict[str, str] = {
    "lone-surrogate-ask": PROCESS_TEXT.replace(f"ask: {ASK}", f'ask: "{ASK} \\ud800"'),
    "line-separator-ask": PROCESS_TEXT.replace(ASK, f"{ASK}\u2028---\u2028"),
    "nel-in-quotes": PROCESS_TEXT.replace(f"ask: {ASK}", f'ask: "{ASK}\x85"'),
    "alias-bomb": PROCESS_TEXT.replace(
        "---\nname:",
        "---\nx-a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"x-{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n"
            for i in range(8)
        )
        + "name:",
        1,
    ),
    "deep": PROCESS_TEXT.replace("---\nname:", "---\nx: " + "[" * 3000 + "]" * 3000 + "\nname:", 1),
    "ansi-step-id": PROCESS_TEXT.replace("id: sign_off", 'id: "\\e[2J\\nsign_off"'),
    "huge-int": PROCESS_TEXT.replace("pass: 0.9\n", f"pass: {HUGE}\n", 1),
    "not-utf8": "",
    "no-frontmatter": "# just a body\n",
    "bom-and-crlf": "\ufeff" + PROCESS_TEXT.replace("\n", "\r\n"),
}


@pytest.mark.parametrize("name", sorted(PROCESS_FILES))
@pytest.mark.parametrize("command", ["lint", "run"])
def test_a_hostile_process_file_never_gives_a_traceback(
    tmp_path: Path, name: str, command: str
) -> None:
    path = tmp_path / "PROCESS.md"
    if name == "not-utf8":
        path.write_bytes(b"---\nname: \xff\xfe\n---\n")
    else:
        path.write_text(PROCESS_FILES[name], encoding="utf-8", errors="surrogatepass")
    args = [command, path] if command == "lint" else step_args(command, process=path)
    result = cli(*args)
    assert_one_line_errors(command, result.returncode, result.stderr, result.stdout)
    for line in result.stdout.splitlines():
        assert "\x1b" not in line, line  # no terminal escape from the file reaches the screen


def test_a_line_separator_does_not_end_the_frontmatter(tmp_path: Path) -> None:
    # YAML 1.2 reads U+2028 as a character: the "---" after it is inside the ask.
    path = tmp_path / "PROCESS.md"
    path.write_text(PROCESS_FILES["line-separator-ask"], encoding="utf-8")
    result = cli("normalize", path, "--step", "assemble", "--json")
    assert result.returncode == 0, result.stderr
    ask = json.loads(result.stdout)["check"][0]["ask"]
    assert ask == f"{ASK}\u2028---\u2028"


def test_lint_names_a_file_whose_name_has_a_newline_on_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "evil\nname.process.md").write_text("no frontmatter\n")
    result = cli("lint", folder)
    assert result.returncode == 2
    reported = [line for line in result.stdout.splitlines() if "evil" in line]
    assert len(reported) == 1 and "evil\\nname.process.md" in reported[0], result.stdout


def _bomb_case() -> str:
    return (
        "- id: check_keys/bomb\n  stage: check_keys\n  rule: A bomb.\n  decisions: [1]\n"
        "  a0: &a0 [x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
        + "  check: *a8\n  expect: {valid: true, full: []}\n"
    )


CORPORA: dict[str, str] = {
    "alias-bomb": _bomb_case(),
    "redos-rule": "- id: check_keys/x\n  stage: check_keys\n  rule: '"
    + "a" * 50_000
    + "\\n'\n  decisions: [1]\n  check: Done?\n  expect: {valid: true, full: []}\n",
    "redos-pointer": "- id: check_keys/x\n  stage: check_keys\n  rule: A case.\n  decisions: [1]\n"
    "  check: ' '\n  expect: {valid: false, problems: ['" + "/" * 40 + "~x']}\n",
    "terminal-escapes": '- id: check_keys/x\n  stage: check_keys\n  rule: "\\e[2J cleared"\n'
    "  decisions: [1]\n  check: Done?\n  expect: {valid: false, problems: ['']}\n",
    "not-json": "- id: check_keys/x\n  stage: check_keys\n  rule: A case.\n  decisions: [1]\n"
    "  check: 2026-10-06\n  expect: {valid: true, full: []}\n",
}


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_a_hostile_corpus_is_one_line_or_a_failing_case_never_a_runaway(
    tmp_path: Path, name: str
) -> None:
    (tmp_path / "check_keys").mkdir()
    (tmp_path / "check_keys" / "cases.yaml").write_text(CORPORA[name], encoding="utf-8")
    result = cli("conformance", tmp_path)
    assert_one_line_errors("conformance", result.returncode, result.stderr, result.stdout)
    assert "\x1b" not in result.stdout
    if name in ("alias-bomb", "redos-rule", "redos-pointer", "not-json"):
        assert result.returncode == 2, result.stdout
        assert len(result.stderr.splitlines()) == 1


# --- many more, in this process ----------------------------------------------------------------

SCALARS = [
    HUGE,
    "-" + HUGE,
    "NaN",
    "Infinity",
    "1e999",
    "-0.0",
    '"\\ud800"',
    '"\\u2028"',
    '"\\u0000"',
    '"2026-10-06T09:04:20Z\\n"',
    '"\\u0661\\u0662"',
    "true",
    "null",
    '"' + "x" * 10_000 + '"',
]
KEYS = [
    '"output"',
    '"summary"',
    '"evidence"',
    '"inputs"',
    '"steps"',
    '"history"',
    '"x"',
    '"\\ud800"',
]


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """JSON-like texts: JSON with the odd tokens json.loads takes or refuses in its own way
    (huge and non-finite numbers, duplicate keys, lone surrogates, deep nesting)."""

    def value(depth: int) -> str:
        kind = draw(st.integers(0, 3 if depth < 4 else 0))
        if kind == 0:
            return draw(st.sampled_from(SCALARS))
        if kind == 1:
            return "[" + ", ".join(value(depth + 1) for _ in range(draw(st.integers(0, 3)))) + "]"
        members = [
            f"{draw(st.sampled_from(KEYS))}: {value(depth + 1)}"
            for _ in range(draw(st.integers(0, 4)))
        ]
        return "{" + ", ".join(members) + "}"

    text = value(0)
    if draw(st.booleans()):
        deep = draw(st.integers(1, 2000))
        text = "[" * deep + text + "]" * deep
    return text


YAML_SNIPPETS = [
    "&a [x, x]",
    "*a",
    "!!binary aGVsbG8=",
    "!custom x",
    "'\\ud800'",
    '"\\ud800"',
    "2026-10-06",
    "0x1F",
    "1_000",
    ".nan",
    "yes",
    "? [a]\n  : b",
    "\u2028",
    "\x85",
    "a\tb",
    "|\n  x\n   y",
    "{a: 1, a: 2}",
    "[" * 200 + "]" * 200,
]


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    """YAML-like texts: maps of odd keys to odd snippets (anchors, aliases, tags, YAML 1.1
    forms, line breaks YAML 1.1 and 1.2 disagree on, deep flow nesting)."""
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        key = draw(st.sampled_from(["output", "summary", "inputs", "steps", "a", "'\\x00'", "x"]))
        lines.append(f"{key}: {draw(st.sampled_from(YAML_SNIPPETS))}")
    return "\n".join(lines) + "\n"


def run_main(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exit:  # argparse
            code = int(exit.code or 0)
    return code, out.getvalue(), err.getvalue()


cli_suite = settings(
    max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)


@pytest.mark.parametrize("role", ["submission", "run_data", "answers", "limits"])
@cli_suite
@given(text=json_texts() | yaml_texts(), json_file=st.booleans())
def test_any_hostile_file_in_any_role_is_a_documented_exit(
    tmp_path_factory: pytest.TempPathFactory, role: str, text: str, json_file: bool
) -> None:
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / ("file.json" if json_file else "file.yaml")
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    for command in ("bundle", "run"):
        if role == "answers" and command == "bundle":
            continue
        code, out, err = run_main([str(arg) for arg in step_args(command, **{role: path})])
        assert code != 70, err
        assert_one_line_errors(command, code, err, out)


# --- a hostile audit trail ---------------------------------------------------------------------

AUDIT = ROOT / "examples" / "advisory_records.jsonl"


def audit_lines() -> list[str]:
    return AUDIT.read_text(encoding="utf-8").splitlines()


#: Lines an audit file may hold that are not records, each put among real records.
AUDIT_LINES: dict[str, str] = {
    "huge-int": '{"record": "verdict", "format": ' + HUGE + "}",
    "duplicate-key": '{"record": "verdict", "record": "decision"}',
    "nan": '{"record": "verdict", "format": NaN}',
    "deep": "[" * 100_000 + "]" * 100_000,
    "torn": '{"record": ',
    "a-list": "[1, 2]",
    "empty": "",
    "lone-surrogate": '{"record": "\\ud800"}',
    "control-characters": '{"record": "\\u001b[31mred"}',
    "line-separator": '{"record": "verdict\u2028"}',
    "another-format": '{"record": "verdict", "format": 99}',
}


@pytest.mark.parametrize("name", sorted(AUDIT_LINES))
@pytest.mark.parametrize("place", ["first", "middle"])
def test_a_line_of_an_audit_file_that_is_not_a_record_is_one_located_line_and_exit_2(
    tmp_path: Path, name: str, place: str
) -> None:
    lines = audit_lines()
    at = 0 if place == "first" else len(lines) // 2
    lines.insert(at, AUDIT_LINES[name])
    path = tmp_path / "audit.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    result = cli("calibrate", path)
    assert_one_line_errors("calibrate", result.returncode, result.stderr, result.stdout)
    if name == "torn":
        # The start of a record cut short, then a fresh line: a write that did not finish.
        # Only the fragment is lost: the report is made, and the fragment named.
        assert result.returncode == 0
        assert result.stderr == (
            f"checkprofile: warning: {path}:{at + 1}: a torn line (a write"
            " that did not finish), skipped\n"
        )
    else:
        assert result.returncode == 2
        assert result.stderr.startswith(f"checkprofile: {path}:{at + 1}: "), result.stderr
    if name == "another-format":  # named as a format this version does not read
        assert result.stderr.endswith(": format 99 is not 1\n"), result.stderr


@pytest.mark.parametrize("name", sorted(name for name, line in AUDIT_LINES.items() if line))
def test_a_torn_last_line_of_any_shape_is_skipped_and_reported(tmp_path: Path, name: str) -> None:
    # A writer that died mid-line leaves a fragment with no newline: the report is made from
    # every record before it, and the fragment is named, whatever it holds.
    text = (
        "\n".join(audit_lines()) + "\n" + AUDIT_LINES[name][: max(1, len(AUDIT_LINES[name]) // 2)]
    )
    path = tmp_path / "audit.jsonl"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    result = cli("calibrate", path, "--json")
    assert_one_line_errors("calibrate", result.returncode, result.stderr, result.stdout)
    if result.returncode == 0:
        report = json.loads(result.stdout)
        assert report["torn_lines"] == 1
        assert result.stderr.startswith(f"checkprofile: warning: {path}:"), result.stderr
    else:  # a fragment that is a whole, wrong record (an empty line is no fragment at all)
        assert result.returncode == 2


@cli_suite
@given(line=json_texts())
def test_any_line_in_an_audit_file_is_a_report_or_one_line_and_exit_2(
    tmp_path_factory: pytest.TempPathFactory, line: str
) -> None:
    lines = audit_lines()
    lines.insert(len(lines) // 2, line.replace("\n", " ").replace("\r", " "))
    path = tmp_path_factory.mktemp("audit") / "audit.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    code, out, err = run_main(["calibrate", str(path)])
    assert code != 70, err
    assert_one_line_errors("calibrate", code, err, out)
