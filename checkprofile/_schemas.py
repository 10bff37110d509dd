"""The JSON Schemas shipped with the package: the check key, the verdict record, the frontmatter
of a PROCESS.md file, and core-2's shapes where a host meets checkprofile (run data, the
submission, the records of a check)."""

from __future__ import annotations

import copy
import json
import pkgutil
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    from referencing import Registry

__all__ = [
    "CoreShape",
    "check_schema",
    "core_schema",
    "process_schema",
    "registry_of",
    "schema_file",
    "schema_registry",
    "verdict_schema",
]

#: core-2's shapes, each a schema of its own (``schemas/<name>.schema.json``).
CoreShape = Literal["run-data", "step-record", "submission", "candidate", "handoff", "escalation"]

SchemaName = Literal["check", "process", "verdict", CoreShape]


@cache
def schema_file(name: SchemaName) -> dict[str, Any]:
    """The schema as read from the package, once. Shared: never hand it to users."""
    # Read through the package's own loader, relative to this package (so a vendored copy
    # reads its own, from a folder or a zip), as importlib.resources.files(__package__) does;
    # pkgutil costs lint a fifteenth of what importing importlib.resources does.
    data = pkgutil.get_data(__package__, f"schemas/{name}.schema.json")
    if data is None:  # a loader that cannot read data: none that imports this package
        raise FileNotFoundError(f"schemas/{name}.schema.json is not in {__package__}")
    schema: dict[str, Any] = json.loads(data.decode("utf-8"))
    return schema


def check_schema() -> dict[str, Any]:
    """The JSON Schema of the check key (the structural pass), as a fresh dict."""
    return copy.deepcopy(schema_file("check"))


def verdict_schema() -> dict[str, Any]:
    """The JSON Schema of a check verdict record, as a fresh dict."""
    return copy.deepcopy(schema_file("verdict"))


def core_schema(name: CoreShape) -> dict[str, Any]:
    """The JSON Schema of one of core-2's shapes, as a fresh dict: ``"run-data"``,
    ``"step-record"``, ``"submission"``, ``"candidate"``, ``"handoff"`` or ``"escalation"``.

    Each refers to the others (and to the verdict's) by ``$ref``; validate with
    :func:`schema_registry`, e.g.
    ``jsonschema.Draft202012Validator(core_schema("run-data"), registry=schema_registry())``.
    """
    if name not in get_args(CoreShape):
        raise ValueError(
            f"no such shape: {name!r}; the shapes are {', '.join(get_args(CoreShape))}"
        )
    return copy.deepcopy(schema_file(name))


def schema_registry() -> Registry[Any]:
    """A ``referencing.Registry`` holding every shipped schema under its ``$id`` (fresh
    copies), so that the ``$ref``s between them resolve without a network."""
    return registry_of(copy.deepcopy)


def registry_of(take: Callable[[dict[str, Any]], dict[str, Any]]) -> Registry[Any]:
    """A registry of what ``take`` makes of each shipped schema (all are Draft 2020-12)."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    names: tuple[SchemaName, ...] = ("check", "verdict", *get_args(CoreShape))
    return Registry().with_resources(
        (schema_file(name)["$id"], DRAFT202012.create_resource(take(schema_file(name))))
        for name in names
    )


def process_schema() -> dict[str, Any]:
    """The JSON Schema of a PROCESS.md file's frontmatter (core-2's shapes with check-1's step
    keys; the value of ``check`` is left to :func:`~checkprofile.validate_check`), as a fresh
    dict."""
    return copy.deepcopy(schema_file("process"))
