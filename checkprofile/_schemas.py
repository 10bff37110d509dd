"""The JSON Schemas shipped with the package: the check key, the verdict record and the
frontmatter of a PROCESS.md file."""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any, Literal

__all__ = ["check_schema", "process_schema", "schema_file", "verdict_schema"]

SchemaName = Literal["check", "process", "verdict"]


@cache
def schema_file(name: SchemaName) -> dict[str, Any]:
    """The schema as read from the package, once. Shared: never hand it to users."""
    text = (resources.files(__package__) / "schemas" / f"{name}.schema.json").read_text(
        encoding="utf-8"
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


def check_schema() -> dict[str, Any]:
    """The JSON Schema of the check key (the structural pass), as a fresh dict."""
    return copy.deepcopy(schema_file("check"))


def verdict_schema() -> dict[str, Any]:
    """The JSON Schema of a check verdict record, as a fresh dict."""
    return copy.deepcopy(schema_file("verdict"))


def process_schema() -> dict[str, Any]:
    """The JSON Schema of a PROCESS.md file's frontmatter (core-2's shapes with check-1's step
    keys; the value of ``check`` is left to :func:`~checkprofile.validate_check`), as a fresh
    dict."""
    return copy.deepcopy(schema_file("process"))
