"""The check_keys stage: a check key judged and normalized under a server's limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._validate import parse_check, validate_check
from ..errors import LimitsError
from ._shared import Mismatch, case_limits, expect_equal

__all__ = ["run"]


def run(case: Mapping[str, Any]) -> None:
    expect = case["expect"]
    try:
        limits = case_limits(case)
    except LimitsError as error:
        # Limits a server may not publish (checkFail above checkPass): no check is judged.
        if expect.get("limits_refused"):
            return
        raise Mismatch("/limits", "limits that are valid", f"refused: {error}") from None
    if expect.get("limits_refused"):
        raise Mismatch("/expect/limits_refused", True, f"accepted as {limits.to_json()}")
    problems = validate_check(case["check"], limits=limits)
    if not expect["valid"]:
        # A multiset: implementations may order problems differently, but one fault is one
        # problem, so a repeated pointer means two faults at one place.
        expect_equal(
            "/expect/problems", sorted(expect["problems"]), sorted(p.pointer for p in problems)
        )
        return
    if problems:
        raise Mismatch("/expect/valid", True, [str(problem) for problem in problems])
    full = parse_check(case["check"], limits=limits).to_json()
    expect_equal("/expect/full", expect["full"], full)
    # The full form is a fixed point: normalizing it again changes nothing.
    expect_equal("/expect/full", expect["full"], parse_check(full, limits=limits).to_json())
