"""The pre-commit hook (.pre-commit-hooks.yaml): what pre-commit would run, run as it would.

pre-commit lists the files being committed (``git ls-files`` for ``--all-files``), keeps those
whose path ``files`` matches (``re.search``) and ``exclude`` does not, and runs ``entry`` with
them as arguments from the repository's root, in the environment it built for the hook. Here
the environment is this one (the ``checkprofile`` command installed with the package), and the
repository a temporary one. With pre-commit installed, and the package index reachable (it
builds the hook's environment with pip), ``pre-commit try-repo`` runs the same in earnest.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checkprofile._yaml import load_yaml

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / ".pre-commit-hooks.yaml"
CLEAN = (ROOT / "examples" / "expense-report" / "PROCESS.md").read_text(encoding="utf-8")
BROKEN = """\
---
name: vendor-check
description: Screen a vendor.
steps:
  - id: screen
    agent: Check the vendor against the lists.
    check:
      - ask: Is the report attached?
        pas: 0.9
---
# Vendor check
"""


def hook() -> dict[str, Any]:
    hooks = load_yaml(HOOKS.read_text(encoding="utf-8")).data
    assert isinstance(hooks, list)
    [found] = [entry for entry in hooks if entry["id"] == "checkprofile-lint"]
    assert isinstance(found, dict)
    return found


def test_the_hook_is_declared_as_pre_commit_reads_it() -> None:
    found = hook()
    assert found["language"] == "python"  # pre-commit installs this repository with pip
    assert found["entry"] == "checkprofile lint"
    assert found.get("pass_filenames", True) is True
    # Keys pre-commit knows (an unknown one is an error there).
    known = {
        "id", "name", "entry", "language", "files", "exclude", "types", "types_or",
        "exclude_types", "additional_dependencies", "args", "always_run", "fail_fast",
        "pass_filenames", "description", "language_version", "log_file", "require_serial",
        "stages", "verbose", "minimum_pre_commit_version",
    }  # fmt: skip
    assert set(found) <= known


@pytest.mark.parametrize(
    ("path", "matched"),
    [
        ("PROCESS.md", True),
        ("processes/vendor/PROCESS.md", True),
        ("vendor.process.md", True),
        ("a/b/expense-report.process.md", True),
        ("README.md", False),
        ("PROCESS.md.bak", False),
        ("notPROCESS.md", False),
        ("process.md", False),
        ("docs/PROCESS.mdx", False),
        ("a.process.md/notes.txt", False),
    ],
)
def test_the_hook_picks_process_files(path: str, matched: bool) -> None:
    assert bool(re.search(hook()["files"], path)) is matched


def make_repository(tmp_path: Path, files: dict[str, str]) -> Path:
    repository = tmp_path / "processes"
    repository.mkdir()
    git(repository, "init", "-q")
    for name, text in files.items():
        path = repository / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repository, "add", "-A")
    return repository


def git(repository: Path, *args: str) -> str:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    environment |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(
        ["git", *args], cwd=repository, capture_output=True, text=True, env=environment, check=True
    )
    return done.stdout


def run_hook(repository: Path) -> tuple[list[str], subprocess.CompletedProcess[str] | None]:
    """What pre-commit does with the hook on ``--all-files``: the matching files, and the
    result of running the entry on them (``None`` when no file matched: nothing runs)."""
    found = hook()
    include, exclude = found["files"], found.get("exclude", "^$")
    tracked = git(repository, "ls-files").splitlines()
    chosen = [name for name in tracked if re.search(include, name) and not re.search(exclude, name)]
    if not chosen:
        return chosen, None
    command = shlex.split(found["entry"])
    # The console script that installing the package made, as in the hook's environment.
    script = shutil.which(command[0], path=str(Path(sys.executable).parent))
    assert script is not None, f"no {command[0]} beside {sys.executable}"
    done = subprocess.run(
        [script, *command[1:], *chosen],
        cwd=repository,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return chosen, done


def test_clean_process_files_pass(tmp_path: Path) -> None:
    repository = make_repository(
        tmp_path,
        {"PROCESS.md": CLEAN, "vendor/screen.process.md": CLEAN, "README.md": "# Not a process\n"},
    )
    chosen, done = run_hook(repository)
    assert chosen == ["PROCESS.md", "vendor/screen.process.md"]
    assert done is not None
    assert (done.returncode, done.stderr) == (0, "")
    assert not [line for line in done.stdout.splitlines() if line.startswith(tuple(chosen))]


def test_a_broken_process_file_stops_the_commit_and_says_where(tmp_path: Path) -> None:
    repository = make_repository(
        tmp_path, {"PROCESS.md": CLEAN, "vendor/PROCESS.md": BROKEN, "notes.md": BROKEN}
    )
    chosen, done = run_hook(repository)
    assert chosen == ["PROCESS.md", "vendor/PROCESS.md"]
    assert done is not None
    assert done.returncode == 1
    problems = [line for line in done.stdout.splitlines() if line.startswith(tuple(chosen))]
    assert problems == [
        'vendor/PROCESS.md:9:9: /steps/0/check/0/pas: unknown key "pas"; did you mean "pass"?'
        " a yes/no question takes ask, pass, fail"
    ]


def test_a_repository_without_process_files_runs_nothing(tmp_path: Path) -> None:
    repository = make_repository(tmp_path, {"README.md": "# Docs\n", "PROCESS.md.orig": BROKEN})
    assert run_hook(repository) == ([], None)


def _index_reachable(directory: Path) -> bool:
    """Whether pip can reach a package index: pre-commit builds the hook's environment with it."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(directory)]
    done = subprocess.run(
        [*command, "attrs"], capture_output=True, text=True, timeout=120, check=False
    )
    return done.returncode == 0


def test_pre_commit_try_repo_runs_the_hook(tmp_path: Path) -> None:
    # .ci/run sets CHECKPROFILE_TRY_REPO=1 and the test extra installs pre-commit, so CI runs it.
    if shutil.which("pre-commit") is None:
        if os.environ.get("CHECKPROFILE_TRY_REPO") == "1":
            pytest.fail("CHECKPROFILE_TRY_REPO=1, but pre-commit is not installed")
        pytest.skip("pre-commit is not installed")
    if os.environ.get("CHECKPROFILE_TRY_REPO") != "1":
        pytest.skip(
            "pre-commit try-repo builds the hook's environment with pip from the package index;"
            " set CHECKPROFILE_TRY_REPO=1 where the index is reachable to run it"
        )
    if not _index_reachable(tmp_path / "probe"):
        pytest.fail("CHECKPROFILE_TRY_REPO=1, but pip cannot reach a package index")
    repository = make_repository(tmp_path, {"PROCESS.md": CLEAN, "vendor/PROCESS.md": BROKEN})
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}

    def try_repo() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["pre-commit", "try-repo", str(ROOT), "checkprofile-lint", "--all-files"],
            cwd=repository,
            capture_output=True,
            text=True,
            env=environment,
            timeout=900,
            check=False,
        )

    done = try_repo()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "checkprofile lint" in done.stdout
    assert "Failed" in done.stdout
    assert 'vendor/PROCESS.md:9:9: /steps/0/check/0/pas: unknown key "pas"' in done.stdout
    (repository / "vendor" / "PROCESS.md").write_text(CLEAN, encoding="utf-8")
    git(repository, "add", "-A")
    again = try_repo()
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout
