"""The built distribution holds the whole package: every module and every data file the source
tree has (the schemas, the conformance corpus and its JSON form, ``py.typed``), the console
script, and metadata that says what the package needs.

The test builds a wheel and an sdist from a copy of the sources, as a release would, without a
network, with ``build`` and the build backend from the dev extra: without them it is skipped,
and under CI (``CI`` set) it fails. ``.ci/run`` checks the distribution it
builds with the same rules (``python tests/test_distribution.py DIST...``), then installs the
wheel alone in a fresh virtual environment and runs the corpus and the README's main job from it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "checkprofile"


def package_files(root: Path = ROOT) -> set[str]:
    """Every file of the package in the source tree, relative to ``root``: what must ship."""
    return {
        path.relative_to(root).as_posix()
        for path in (root / PACKAGE).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


#: Where the repository's development tools live (the corpus generator, the docs generators):
#: outside the package, so no install ships them (the house rule in style.md).
TOOLS = ("tools", "docs/tools")
#: Where a tool once lived inside the package: no wheel may hold a file there again.
FORMER_TOOLS = frozenset({f"{PACKAGE}/conformance/_generate.py"})


def tool_names(root: Path = ROOT) -> set[str]:
    """The file names of the development tools, which no file in a wheel may have."""
    return {path.name for folder in TOOLS for path in (root / folder).glob("*.py")}


def _version(root: Path = ROOT) -> str:
    match = re.search(r'^version = "([^"]+)"$', (root / "pyproject.toml").read_text("utf-8"), re.M)
    assert match is not None
    return match.group(1)


def wheel_problems(wheel: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with ``wheel``: files of the package it lacks or has besides, and its
    metadata (name, version, Python, dependencies, extras, the console script)."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(info).decode("utf-8"))
        entry_points = archive.read(info.replace("METADATA", "entry_points.txt")).decode()
    shipped = {name for name in names if name.startswith(f"{PACKAGE}/")}
    problems = [f"missing from the wheel: {name}" for name in sorted(package_files(root) - shipped)]
    problems += [
        f"in the wheel, not in the sources: {n}" for n in sorted(shipped - package_files(root))
    ]
    tools = tool_names(root)
    problems += [
        f"a development tool in the wheel: {name}"
        for name in sorted(names)
        if name in FORMER_TOOLS or name.rsplit("/", 1)[-1] in tools
    ]
    problems += _metadata_problems(metadata, root)
    if "checkprofile = checkprofile.cli:main" not in entry_points:
        problems.append("no console script checkprofile = checkprofile.cli:main")
    return problems


def sdist_problems(sdist: Path, root: Path = ROOT) -> list[str]:
    """Files of the package the sdist lacks (it must build the same wheel anywhere)."""
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    needed = package_files(root) | {"pyproject.toml", "README.md"}
    return [f"missing from the sdist: {name}" for name in sorted(needed - names)]


def _metadata_problems(metadata: Message, root: Path) -> list[str]:
    get, get_all = metadata.get, metadata.get_all
    problems = []
    if (get("Name"), get("Version")) != (PACKAGE, _version(root)):
        problems.append(f"name and version are {get('Name')} {get('Version')}")
    if get("Requires-Python") != ">=3.10":
        problems.append(f"Requires-Python is {get('Requires-Python')}")
    requires = " ".join(get_all("Requires-Dist") or [])
    for needed in ("attrs", "cattrs", "jsonschema", "ruamel.yaml"):
        if needed not in requires:
            problems.append(f"{needed} is not a dependency")
    for extra in ("systemone", "openai", "test", "dev"):
        if extra not in (get_all("Provides-Extra") or []):
            problems.append(f"no extra {extra}")
    if "checkprofile" not in str(get("Description") or metadata.get_payload()):
        problems.append("no long description (the README)")
    return problems


def _build_tools() -> None:
    """Skip, or under CI fail, when ``build`` or the build backend is not installed (the dev
    extra installs both; the test extra does not)."""
    import importlib.util
    import os

    import pytest

    missing = [name for name in ("build", "setuptools") if importlib.util.find_spec(name) is None]
    if missing:
        why = f'{" and ".join(missing)} not installed: pip install -e ".[dev]"'
        pytest.fail(f"CI is set, but {why}") if os.environ.get("CI") else pytest.skip(why)


def build(outdir: Path, *kinds: str) -> list[Path]:
    """Build ``kinds`` (``--wheel``, ``--sdist``) from a copy of the sources into ``outdir``."""
    _build_tools()
    sources = outdir / "src"
    shutil.copytree(ROOT / PACKAGE, sources / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, sources / name)
    subprocess.run(
        [sys.executable, "-m", "build", *kinds, "--no-isolation", "--outdir", str(outdir), "."],
        cwd=sources,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return sorted(outdir.glob("checkprofile-*"))


def test_the_wheel_and_the_sdist_hold_the_whole_package(tmp_path: Path) -> None:
    built = build(tmp_path, "--wheel", "--sdist")
    wheels = [path for path in built if path.suffix == ".whl"]
    sdists = [path for path in built if path.name.endswith(".tar.gz")]
    assert len(wheels) == len(sdists) == 1
    assert wheel_problems(wheels[0]) == []
    assert sdist_problems(sdists[0]) == []


def test_a_data_file_left_out_of_the_wheel_is_found(tmp_path: Path) -> None:
    # The check must be able to fail: a wheel without the corpus's JSON form is refused.
    (wheel,) = build(tmp_path, "--wheel")
    broken = tmp_path / "broken" / wheel.name
    broken.parent.mkdir()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            if not item.filename.endswith("corpus.json"):
                target.writestr(item, source.read(item))
    assert wheel_problems(broken) == [f"missing from the wheel: {PACKAGE}/conformance/corpus.json"]


def test_a_development_tool_in_the_wheel_is_found(tmp_path: Path) -> None:
    # The corpus generator is a maintainer's tool: a wheel that holds it again is refused, under
    # its old place in the package or its own name anywhere.
    assert "gen_conformance.py" in tool_names()
    (wheel,) = build(tmp_path, "--wheel")
    broken = tmp_path / "broken" / wheel.name
    broken.parent.mkdir()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            target.writestr(item, source.read(item))
        for name in (f"{PACKAGE}/conformance/_generate.py", f"{PACKAGE}/gen_conformance.py"):
            target.writestr(name, "")
    assert {
        f"a development tool in the wheel: {PACKAGE}/conformance/_generate.py",
        f"a development tool in the wheel: {PACKAGE}/gen_conformance.py",
    } <= set(wheel_problems(broken))


def main(paths: list[str]) -> int:
    """Check the built files given (``.whl`` and ``.tar.gz``); print each problem."""
    problems = []
    for path in map(Path, paths):
        if path.suffix == ".whl":
            problems += wheel_problems(path)
        elif path.name.endswith(".tar.gz"):
            problems += sdist_problems(path)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
