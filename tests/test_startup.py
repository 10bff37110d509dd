"""Quick to start: ``import checkprofile`` and each command load only what they use.

Timings are the benchmark's (``benchmarks/bench_startup.py``); these tests pin what makes them
possible, which does not depend on the machine: which modules a fresh interpreter has loaded
after each step. The public names stay what they were: every name of ``__all__`` resolves to
its module's object, and what type checkers see is what the package hands out.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import checkprofile

ROOT = Path(__file__).resolve().parent.parent
INIT = Path(checkprofile.__file__)
EXAMPLE = ROOT / "examples" / "expense-report"

#: What no short path should pay for unless it uses it.
HEAVY = ("jsonschema", "referencing", "ruamel", "asyncio", "cattrs", "attr", "openai")


def loaded_after(code: str) -> dict[str, list[str]]:
    """The checkprofile modules and the heavy packages a fresh interpreter holds after ``code``."""
    report = (
        "import sys, json;"
        "names = sorted(sys.modules);"
        "print(json.dumps({'ours': [m for m in names if m.startswith('checkprofile')],"
        f" 'heavy': sorted({{m.split('.')[0] for m in names}} & set({list(HEAVY)!r}))}}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    result: dict[str, list[str]] = json.loads(done.stdout.splitlines()[-1])
    return result


def cli_then(*args: str) -> str:
    """Code that runs the command line as ``checkprofile ARGS`` does, then goes on."""
    return (
        "import contextlib, io\n"
        "from checkprofile.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({list(args)!r})\n"
        "    except SystemExit:\n"
        "        pass"
    )


def test_import_checkprofile_loads_nothing_else() -> None:
    assert loaded_after("import checkprofile") == {"ours": ["checkprofile"], "heavy": []}


def test_a_name_loads_only_what_it_needs() -> None:
    loaded = loaded_after("from checkprofile import validate_check")
    assert "checkprofile._run" not in loaded["ours"]
    assert not {"jsonschema", "asyncio", "ruamel"} & set(loaded["heavy"])


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_help_and_version_load_no_command_and_no_heavy_package(option: str) -> None:
    loaded = loaded_after(cli_then(option))
    assert loaded == {
        "ours": ["checkprofile", "checkprofile._version", "checkprofile.cli"],
        "heavy": [],
    }


def test_a_commands_help_loads_its_module_only() -> None:
    loaded = loaded_after(cli_then("conformance", "--help"))
    commands = [m for m in loaded["ours"] if m.startswith("checkprofile.cli._")]
    assert commands == ["checkprofile.cli._common", "checkprofile.cli._conformance"]
    assert not {"jsonschema", "ruamel", "asyncio"} & set(loaded["heavy"])


def test_lint_of_a_valid_file_loads_no_jsonschema_no_cattrs_and_nothing_of_run() -> None:
    loaded = loaded_after(cli_then("lint", str(EXAMPLE / "PROCESS.md")))
    assert loaded["heavy"] == ["attr", "ruamel"]
    assert not {"checkprofile._run", "checkprofile.cli._evaluators"} & set(loaded["ours"])


def test_conformance_loads_no_yaml_reader_no_jsonschema_and_no_event_loop() -> None:
    loaded = loaded_after(cli_then("conformance"))
    assert not {"jsonschema", "referencing", "ruamel", "asyncio"} & set(loaded["heavy"])


# The public names -----------------------------------------------------------------------------


def _type_checking_imports() -> dict[str, str]:
    """What ``if TYPE_CHECKING:`` in checkprofile/__init__.py imports: name -> module."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.name: "." * node.level + (node.module or "")
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_what_type_checkers_see_is_what_the_package_hands_out() -> None:
    assert _type_checking_imports() == checkprofile._MODULES


def test_every_public_name_resolves_to_its_modules_object() -> None:
    assert checkprofile.__all__ == sorted(checkprofile.__all__)
    assert set(checkprofile.__all__) == {*checkprofile._MODULES, "__version__"}
    for name, module in checkprofile._MODULES.items():
        owner = importlib.import_module(module, "checkprofile")
        assert getattr(checkprofile, name) is getattr(owner, name), name
    assert set(checkprofile.__all__) <= set(dir(checkprofile))


def test_star_import_and_submodules_work_without_importing_them_first() -> None:
    code = (
        "import checkprofile\n"
        "assert checkprofile.errors.CheckError is checkprofile.CheckError\n"
        "from checkprofile import *\n"
        "assert parse_check('Is it done?').asks == ('Is it done?',)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=120, check=True)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'parse_chek'"):
        checkprofile.parse_chek  # type: ignore[attr-defined]  # noqa: B018


def test_the_version_is_the_one_in_pyproject() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^version = "([^"]+)"$', pyproject, re.M)
    assert match is not None
    assert checkprofile.__version__ == match.group(1)
