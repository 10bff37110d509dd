"""The grading stage: answers graded and combined into a verdict, its JSON and its issue lines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._lines import issue_lines, js_number
from .._validate import parse_check
from .._verdict import Verdict, combine, error_verdict
from ._answers import fitting_answer
from ._shared import Mismatch, case_limits, expect_equal

__all__ = ["run"]


def run(case: Mapping[str, Any]) -> None:
    expect = case["expect"]
    if "number" in case:
        expect_equal("/expect/text", expect["text"], js_number(case["number"]))
        return
    check = parse_check(case["check"], limits=case_limits(case))
    raw_answers: list[Any] = case["answers"]
    if len(raw_answers) != len(check):
        raise Mismatch("/answers", f"{len(check)} answers", f"{len(raw_answers)}")
    answers = [
        fitting_answer(question, raw) for question, raw in zip(check, raw_answers, strict=True)
    ]
    if "unfit" in expect:
        unfit = [index for index, answer in enumerate(answers) if answer is None]
        expect_equal("/expect/unfit", expect["unfit"], unfit)
        return
    options = {
        "model": case["model"],
        "at": case["at"],
        "advisory": case.get("advisory", False),
        "truncated": case.get("truncated", False),
    }
    verdict: Verdict
    fitting = [answer for answer in answers if answer is not None]
    if len(fitting) < len(answers):
        # The answers after the re-ask: one that is null or does not fit is still unanswered
        # (decisions 8 and 9), so the whole check is an error.
        verdict = error_verdict(check, **options)
    else:
        verdict = combine(check, fitting, **options)
    expect_equal("/expect/results", expect["results"], [q.result for q in verdict.questions])
    expect_equal("/expect/verdict", expect["verdict"], verdict.verdict)
    expect_equal("/expect/verdict_json", expect["verdict_json"], verdict.to_json())
    expect_equal("/expect/issue_lines", expect["issue_lines"], list(issue_lines(verdict)))
