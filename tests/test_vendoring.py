"""The package works copied under another package, with no top-level ``checkprofile`` at all.

A server may vendor checkprofile as pip vendors its dependencies: the ``checkprofile/`` folder
copied to ``host/_vendor/checkprofile``. Each test copies the package that is installed now
under a temporary ``host/_vendor/``, and runs Python in a subprocess where importing the
top-level name ``checkprofile`` (or anything under it) fails, as it does on a server that never
installed it. Whatever the copy needs must then come from the copy itself.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import checkprofile

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# Put in front of every import: the top-level name does not exist on the vendoring server.
BLOCK = textwrap.dedent(
    """
    import importlib.abc
    import sys


    class _NoTopLevelCheckprofile(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "checkprofile" or name.startswith("checkprofile."):
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
            return None


    sys.meta_path.insert(0, _NoTopLevelCheckprofile())
    sys.path.insert(0, sys.argv.pop(1))
    """
)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``host/_vendor/checkprofile``, copied from the installed package."""
    top = tmp_path_factory.mktemp("server")
    vendor = top / "host" / "_vendor"
    vendor.mkdir(parents=True)
    (top / "host" / "__init__.py").write_text("", encoding="utf-8")
    (vendor / "__init__.py").write_text("", encoding="utf-8")
    shutil.copytree(
        Path(checkprofile.__file__).parent,
        vendor / "checkprofile",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return top


def run_vendored(host: Path, body: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``body`` with the top-level name blocked and ``host`` on the path."""
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(body), str(host), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


def test_the_block_works(host: Path) -> None:
    # Without this, every other test here could pass by importing the real package.
    done = run_vendored(host, "import checkprofile\n")
    assert done.returncode != 0
    assert "No module named 'checkprofile' (blocked)" in done.stderr


def test_every_module_of_the_copy_imports(host: Path) -> None:
    done = run_vendored(
        host,
        """
        import importlib
        import pkgutil

        import host._vendor.checkprofile as package

        names = sorted(
            info.name
            for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
            if not info.name.endswith(".__main__")  # it runs the command line
        )
        for name in names:
            importlib.import_module(name)
        print(len(names))
        """,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 30  # every module, not an empty walk


def test_the_api_from_the_copy(host: Path) -> None:
    done = run_vendored(
        host,
        """
        import json

        from host._vendor.checkprofile import (
            Limits, Material, Submission, YesNoAnswer, parse_check, run_check_sync,
            validate_check, check_schema, verdict_schema, load_process,
        )
        from host._vendor.checkprofile.testing import ScriptedEvaluator
        from host._vendor.checkprofile.human import receipt_for, records_for
        from host._vendor.checkprofile.adapters import evaluator_from_spec

        problems = validate_check([{"ask": "Is it right?", "pas": 0.9}])
        check = parse_check("Is it right?")
        material = Material("Do it.", "# Body", {"inputs": {}, "steps": {}}, Submission({"x": 1}))
        model = ScriptedEvaluator({"Is it right?": YesNoAnswer(0.5)}, model="m-1")
        now = "2026-10-06T09:04:20Z"
        outcome = run_check_sync(check, material, model, limits=Limits(), now=now)
        process = load_process("examples/expense-report/PROCESS.md")
        evaluator = evaluator_from_spec(
            "systemone:jev-1",
            environ={"TYPESAFE_API_KEY": "k", "TYPESAFE_BASE_URL": "http://127.0.0.1:9"},
        )
        print(json.dumps({
            "problems": [str(p) for p in problems],
            "action": outcome.action,
            "lines": list(outcome.issues),
            "records": sorted(records_for(outcome, run_id="r", step_id="s").to_json()),
            "receipt": type(receipt_for(outcome, run_id="r", step_id="s")).__name__,
            "schemas": [check_schema()["$schema"], verdict_schema()["$schema"]],
            "steps": [step.id for step in process.steps],
            "evaluator": type(evaluator).__module__,
        }))
        """,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["problems"] == [
        '/0/pas: unknown key "pas"; did you mean "pass"? a yes/no question takes ask, pass, fail'
    ]
    assert result["action"] == "not_accepted"
    assert result["lines"] == ["check: Is it right? → no (0.5)"]
    assert result["records"] == ["handoff"]
    assert result["receipt"] == "Receipt"
    assert all("2020-12" in uri for uri in result["schemas"])
    assert "assemble" in result["steps"]
    assert result["evaluator"] == "host._vendor.checkprofile.adapters.systemone"


def test_the_whole_corpus_passes_from_the_copy(host: Path) -> None:
    done = run_vendored(
        host,
        """
        from host._vendor.checkprofile.conformance import run_corpus

        results = run_corpus()
        failed = [f"{r.id}: {r.diff}" for r in results if not r.passed]
        print(len(results), len(failed))
        print("\\n".join(failed[:5]))
        """,
    )
    assert done.returncode == 0, done.stderr
    total, failed = map(int, done.stdout.split("\n")[0].split())
    assert total >= 300 and failed == 0, done.stdout


# The command line of the copy, run as `python -m host._vendor.checkprofile ...` would run it.
CLI = """
import runpy

sys.argv = ["checkprofile", *sys.argv[1:]]
runpy.run_module("host._vendor.checkprofile", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (["conformance"], 0, "total"),
        (["lint", str(EXAMPLES)], 0, "no problems"),
        (
            ["normalize", str(EXAMPLES / "release-notes" / "PROCESS.md"), "--step", "draft"],
            0,
            "ask",
        ),
        (
            [
                "run",
                str(EXAMPLES / "expense-report" / "PROCESS.md"),
                "--step",
                "assemble",
                "--submission",
                str(EXAMPLES / "expense-report" / "submission.json"),
                "--run-data",
                str(EXAMPLES / "expense-report" / "run-data.json"),
                "--evaluator",
                "replay:" + str(EXAMPLES / "expense-report" / "answers" / "fail.yaml"),
            ],
            1,
            "fail",
        ),
    ],
    ids=["conformance", "lint", "normalize", "run"],
)
def test_the_command_line_of_the_copy(
    host: Path, args: list[str], code: int, expected: str
) -> None:
    done = run_vendored(host, CLI, *args)
    assert done.returncode == code, done.stderr
    assert expected in done.stdout.lower()
    assert "Traceback" not in done.stderr
