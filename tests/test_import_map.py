"""The house's import map: no circle, nothing that climbs, rooms that import one way.

Every import inside the package (at the top of a module or inside a function, which is still
a dependency) is read from the source with ``ast``. The rules, as CONTRIBUTING.md's "Where
things live" draws them:

* no circle among the package's modules;
* nothing imports a package face (``checkprofile``, ``checkprofile.human``) or the command
  line from below; only the command line and ``__main__`` may;
* the core (``checkprofile/_*.py``, ``errors``) imports no family of rooms;
* in ``human/``, calibration may import the audit trail and the person's room, the audit trail
  the person's room, and the person's room neither.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "checkprofile"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cases" in path.relative_to(PACKAGE).parts:
            continue
        parts = ["checkprofile", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not source.startswith("checkprofile"):
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                found.add(sub if sub in MODULES else source)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("checkprofile"))
    found.discard(name)
    return {module for module in found if module in MODULES}


EDGES = {name: _imports(name, path) for name, path in MODULES.items()}
FACES = {"checkprofile", "checkprofile.human"}


def test_the_import_map_has_no_circle() -> None:
    # Tarjan's strongly connected components: any of more than one module is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(EDGES[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(EDGES):
        if module not in index:
            visit(module)
    assert circles == []


def _may_climb(module: str) -> bool:
    return module in FACES or module in ENTRIES or module.startswith("checkprofile.cli")


def test_nothing_imports_a_face_or_the_command_line_from_below() -> None:
    climbs = sorted(
        (module, target)
        for module, targets in EDGES.items()
        for target in targets
        if not _may_climb(module) and (target in FACES or target.startswith("checkprofile.cli"))
    )
    assert climbs == []


# The entry points: run by Python or pytest, above everything (like the command line).
ENTRIES = {"checkprofile.__main__", "checkprofile._pytest_plugin"}


def _family(module: str) -> str:
    if module in ENTRIES:
        return "entry"
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "human" and parts[2].startswith("_"):
        return f"human.{parts[2]}"
    if len(parts) > 1 and not parts[1].startswith("_") and parts[1] != "errors":
        return parts[1]  # adapters, cli, conformance, human (its face), testing
    return "core"


# What each family may import besides itself and the core.
ALLOWED = {
    "core": set(),
    "human._decide": set(),
    "human._audit": {"human._decide"},
    "human._calibration": {"human._audit", "human._decide"},
}


@pytest.mark.parametrize("family", sorted(ALLOWED))
def test_each_room_imports_only_the_rooms_below_it(family: str) -> None:
    wrong = sorted(
        (module, target)
        for module, targets in EDGES.items()
        if _family(module) == family
        for target in targets
        if _family(target) not in {family, "core", *ALLOWED[family]}
    )
    assert wrong == []


def test_the_map_is_read_from_every_module() -> None:
    # The rules above judge what they read: each room has modules, and imports were found.
    families = {_family(module) for module in MODULES}
    assert {"core", "human._decide", "human._audit", "human._calibration"} <= families
    assert EDGES["checkprofile._run"] >= {"checkprofile._evaluator", "checkprofile._outcome"}
    assert "checkprofile.human._decide._receipts" in EDGES["checkprofile.human._audit._strict"]
