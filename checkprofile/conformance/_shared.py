"""What every stage runner shares: how it compares the library's answer with a case, and the
material a case does not pin.

A runner raises :class:`Mismatch` where the library's answer first differs from the case
(:func:`expect_equal` compares them as JSON data).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from .._limits import Limits
from .._shown import show
from ..errors import pointer_token

__all__ = [
    "BODY",
    "INSTRUCTIONS",
    "RUN_DATA",
    "Mismatch",
    "case_limits",
    "expect_equal",
    "shown_json",
]

# What a runner shows the evaluator besides the run data: the corpus pins neither, because the
# verdict may not depend on them (only the run data view is measured against a budget).
INSTRUCTIONS = "Check the submission."
BODY = "# Conformance\n"
RUN_DATA: Final[Mapping[str, Any]] = {"inputs": {}, "steps": {}}


class Mismatch(Exception):
    """The library's answer differs from the case: ``where`` (a pointer into the case) and
    what was expected and got."""

    def __init__(self, where: str, expected: object, got: object) -> None:
        super().__init__(where)
        self.where, self.expected, self.got = where, expected, got


def shown_json(value: object, limit: int = 80) -> str:
    """``value`` as JSON text, cut to ``limit`` characters. Written lazily and only as far as
    the limit: a value of any size (a case's run data, a library's answer) costs the same."""
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=True)
    text = ""
    try:
        for chunk in encoder.iterencode(value):
            text += chunk
            if len(text) > limit:
                break
    except (TypeError, ValueError, RecursionError):
        return show(value, limit)
    text = "".join(char if char.isprintable() else show(char)[1:-1] for char in text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_difference(
    expected: object, got: object, path: tuple[str | int, ...] = ()
) -> tuple[tuple[str | int, ...], object, object] | None:
    """The first place ``got`` differs from ``expected`` as JSON data: numbers equal by value
    (``1`` is ``1.0``), booleans are not numbers, key order does not matter, a missing key
    differs from any value."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in expected:
            if key not in got:
                return (*path, key), expected[key], "(no such key)"
            found = _json_difference(expected[key], got[key], (*path, key))
            if found is not None:
                return found
        for key in got:
            if key not in expected:
                return (*path, key), "(no such key)", got[key]
        return None
    if isinstance(expected, list) and isinstance(got, list):
        for index, (want, have) in enumerate(zip(expected, got, strict=False)):
            found = _json_difference(want, have, (*path, index))
            if found is not None:
                return found
        if len(expected) != len(got):
            return path, expected, got
        return None
    if _json_type(expected) != _json_type(got) or expected != got:
        return path, expected, got
    return None


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def expect_equal(where: str, expected: object, got: object) -> None:
    found = _json_difference(expected, got)
    if found is not None:
        path, want, have = found
        raise Mismatch(where + "".join("/" + pointer_token(p) for p in path), want, have)


def case_limits(case: Mapping[str, Any]) -> Limits:
    return Limits.from_json(case.get("limits", {}))
