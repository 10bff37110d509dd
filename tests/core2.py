"""Validation of records against core-2's shapes, for the tests (imported as ``core2``).

Each shape is the shipped schema (``checkprofile/schemas/<name>.schema.json``) validated by
jsonschema's own, stock Draft 2020-12 validator with the package's registry: an oracle
independent of the library's readers and of ``run_data_problems``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema

from checkprofile import core_schema, schema_registry
from checkprofile._schemas import CoreShape


@cache
def validator(name: CoreShape) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(core_schema(name), registry=schema_registry())


def errors(name: CoreShape, data: Any) -> list[str]:
    """What jsonschema finds wrong with ``data`` as core-2's ``name``, as ``/pointer: why``."""
    found = validator(name).iter_errors(data)
    return [f"/{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in found]


def assert_shape(name: CoreShape, data: Any) -> None:
    """``data`` is core-2's ``name`` (a handoff, an escalation, a candidate, ...)."""
    problems = errors(name, data)
    assert not problems, (name, problems)
