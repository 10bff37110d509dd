"""Numbers and files from the command line have bounds (issue 21, findings 9 and 10).

An integer in a file the command line reads is one Python can write (at most 4,300 digits, as
JSON files already are), whatever YAML syntax spells it; and every file the command line reads
whole is read to at most ``MAX_FILE_BYTES``, be it a regular file, a device that never ends or
a pipe. Each is one ``checkprofile: ...`` line and exit 2, inside memory and CPU limits.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from checkprofile._files import MAX_FILE_BYTES, read_bounded

ROOT = Path(__file__).resolve().parent.parent
EXPENSE = ROOT / "examples" / "expense-report"
MB = 2**20

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource limits are POSIX")


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1200 * MB, 1200 * MB))
    resource.setrlimit(resource.RLIMIT_CPU, (30, 30))


def checkprofile(*args: str | Path, stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a subprocess with 1.2 GB of address space and 30 s of CPU."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "checkprofile", *map(str, args)],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        cwd=ROOT,
        stdin=stdin,
        env=env,
        preexec_fn=_limits,
        timeout=600,
    )
    assert result.returncode >= 0, f"killed: {result.stderr[-500:]}"
    return result


def one_line_exit_2(result: subprocess.CompletedProcess[str], *, lines: int = 1) -> str:
    assert result.returncode == 2, result.stderr[-2000:]
    errors = result.stderr.splitlines()
    assert len(errors) == lines, result.stderr[-2000:]
    assert all(line.startswith("checkprofile: ") and len(line) < 500 for line in errors)
    return errors[0]


def step_args(command: str, **files: Path | str) -> list[str | Path]:
    args: list[str | Path] = [command, files.get("process", EXPENSE / "PROCESS.md")]
    args += ["--step", "assemble"]
    if "limits" in files:
        args += ["--limits", files["limits"]]
    if command in ("bundle", "run"):
        args += ["--submission", files.get("submission", EXPENSE / "submission.json")]
        args += ["--run-data", files.get("run_data", EXPENSE / "run-data.json")]
    if command == "run":
        args += ["--evaluator", f"replay:{files.get('answers', EXPENSE / 'answers/pass.yaml')}"]
    return args


@pytest.mark.parametrize("command", ["normalize", "bundle", "run"])
@pytest.mark.parametrize("spelled", ["0x" + "f" * 20_000, "0o" + "7" * 20_000, "9" * 5000])
def test_an_integer_too_long_to_write_in_a_limits_file_is_one_line_and_exit_2(
    tmp_path: Path, command: str, spelled: str
) -> None:
    limits = tmp_path / "limits.yaml"
    limits.write_text(f"checkStateBytes: {spelled}\n", encoding="utf-8")
    line = one_line_exit_2(checkprofile(*step_args(command, limits=limits)))
    assert line.startswith(f"checkprofile: {limits}:1:18: ")
    if not spelled.startswith("9"):  # the YAML reader keeps a decimal one as its text
        assert "limits file is not valid YAML: an integer of over 4,300 digits" in line


@pytest.mark.parametrize("role", ["submission", "run_data", "answers"])
def test_an_integer_too_long_to_write_in_any_data_file_is_refused_at_its_place(
    tmp_path: Path, role: str
) -> None:
    path = tmp_path / "data.yaml"
    path.write_text(f"a:\n  - 1\n  - 0x{'f' * 20_000}\n", encoding="utf-8")
    line = one_line_exit_2(checkprofile(*step_args("run", **{role: path})))
    assert f"{path}:3:5: " in line and "too long to read" in line


def test_lint_of_a_device_that_never_ends_is_one_line_and_exit_2_quickly() -> None:
    result = checkprofile("lint", "/dev/zero")
    assert result.returncode == 2, result.stderr
    assert result.stdout.splitlines()[0] == (
        f"/dev/zero: cannot read: larger than {MAX_FILE_BYTES:,} bytes, the most checkprofile"
        " reads of a file"
    )


@pytest.mark.parametrize("command", ["lint", "normalize", "bundle", "run"])
def test_standard_input_that_never_ends_is_one_line_and_exit_2(command: str) -> None:
    with open("/dev/zero", "rb") as endless:
        args = step_args(command, process="-") if command != "lint" else ["lint", "-"]
        result = checkprofile(*args, stdin=endless.fileno())
    assert result.returncode == 2, result.stderr[-2000:]
    assert "larger than 268,435,456 bytes" in result.stdout + result.stderr


@pytest.mark.parametrize("role", ["submission", "run_data", "limits", "answers"])
def test_a_file_over_the_bound_is_refused_by_its_size_before_it_is_read(
    tmp_path: Path, role: str
) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as file:
        file.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written
    line = one_line_exit_2(checkprofile(*step_args("run", **{role: big})))
    assert line.startswith(f"checkprofile: {big}: cannot read ")
    assert line.endswith(
        f"larger than {MAX_FILE_BYTES:,} bytes, the most checkprofile reads of a file"
    )


def test_a_corpus_file_that_never_ends_is_one_line_and_exit_2(tmp_path: Path) -> None:
    folder = tmp_path / "corpus" / "check_keys"
    folder.mkdir(parents=True)
    (folder / "cases.yaml").symlink_to("/dev/zero")
    line = one_line_exit_2(checkprofile("conformance", tmp_path / "corpus"))
    assert "cases.yaml: cannot read: larger than" in line


def test_a_bounded_read_gives_the_whole_file_up_to_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 1000)
    assert read_bounded(path, limit=1000) == b"x" * 1000
    with pytest.raises(OSError, match="larger than 999 bytes"):
        read_bounded(path, limit=999)
    with pytest.raises(OSError, match="larger than 10 bytes"):
        read_bounded("/dev/zero", limit=10)
