"""The shapes stage: core-2's shapes where a host meets the profile (a process, run data, a
submission)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._process import PROFILE, process_problems
from .._shapes import run_data_problems, submission_problems
from ._shared import Mismatch, case_limits, expect_equal

__all__ = ["run"]


def run(case: Mapping[str, Any]) -> None:
    # core-2's shapes where a host meets the profile (design decisions 15 to 18). A process's
    # frontmatter is judged as a server offering check-1 with an evaluator judges it at
    # publication (what lint reports for a PROCESS.md file with this frontmatter), under the
    # limits the server publishes (its check keys are judged under them).
    value = case["value"]
    if case["shape"] == "process":
        problems = process_problems(value, profiles=[PROFILE], limits=case_limits(case))
        found = [problem.pointer for problem in problems]
    elif case["shape"] == "run_data":
        found = [problem.pointer for problem in run_data_problems(value)]
    else:
        agent = case.get("agent", False)
        found = [problem.pointer for problem in submission_problems(value, agent=agent)]
    expect = case["expect"]
    if not expect["valid"]:
        expect_equal("/expect/problems", sorted(expect["problems"]), sorted(found))
    elif found:
        raise Mismatch("/expect/valid", True, found)
