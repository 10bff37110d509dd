"""The shapes stage: core-2's shapes where a host meets the profile (a process, run data, a
submission)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._process import PROFILE, process_problems
from .._shapes import run_data_problems, submission_problems
from ..errors import LimitsError
from ._shared import Mismatch, case_limits, expect_equal

__all__ = ["run"]


def run(case: Mapping[str, Any]) -> None:
    # core-2's shapes where a host meets the profile (design decisions 15 to 18). A process's
    # frontmatter is judged as a server offering check-1 with an evaluator judges it at
    # publication (what lint reports for a PROCESS.md file with this frontmatter), under the
    # limits the server publishes (its check keys are judged under them).
    value = case["value"]
    expect = case["expect"]
    if case["shape"] == "process":
        try:
            limits = case_limits(case)
        except LimitsError as error:
            # Limits a server may not publish (checkFail above checkPass): it publishes no
            # process under them, so nothing is judged, as in the check_keys stage.
            if expect.get("limits_refused"):
                return
            raise Mismatch("/limits", "limits that are valid", f"refused: {error}") from None
        if expect.get("limits_refused"):
            raise Mismatch("/expect/limits_refused", True, f"accepted as {limits.to_json()}")
        problems = process_problems(value, profiles=[PROFILE], limits=limits)
        found = [problem.pointer for problem in problems]
    elif case["shape"] == "run_data":
        found = [problem.pointer for problem in run_data_problems(value)]
    else:
        agent = case.get("agent", False)
        found = [problem.pointer for problem in submission_problems(value, agent=agent)]
    if expect.get("limits_refused"):
        raise Mismatch("/expect/limits_refused", True, "no limits: only a process case has them")
    if not expect["valid"]:
        expect_equal("/expect/problems", sorted(expect["problems"]), sorted(found))
    elif found:
        raise Mismatch("/expect/valid", True, found)
