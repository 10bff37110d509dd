"""The outcomes stage: a check run against a scripted evaluator, its action, verdict and
re-asks."""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import Any

from .._bundle import Material, Submission
from .._outcome import Outcome
from .._run import run_check
from .._validate import parse_check
from ..testing import ScriptedEvaluator, Step
from ._answers import scripted_step
from ._shared import BODY, INSTRUCTIONS, RUN_DATA, case_limits, expect_equal

__all__ = ["run"]


def run(case: Mapping[str, Any]) -> None:
    expect = case["expect"]
    limits = case_limits(case)
    check = parse_check(case["check"], limits=limits)
    script: dict[str, Step | list[Step]] = {
        ask: [scripted_step(item) for item in value]
        if isinstance(value, list)
        else scripted_step(value)
        for ask, value in case["script"].items()
    }
    evaluator = ScriptedEvaluator(script, model=case["model"])
    material = Material(
        instructions=INSTRUCTIONS,
        body=BODY,
        run_data=case.get("run_data", RUN_DATA),
        submission=Submission({"done": True}),
    )
    outcome = _finished(
        run_check(
            check,
            material,
            evaluator,
            limits=limits,
            advisory=case.get("advisory", False),
            now=case["now"],
        )
    )
    expect_equal("/expect/action", expect["action"], outcome.action)
    expect_equal("/expect/verdict", expect["verdict"], outcome.verdict.verdict)
    expect_equal("/expect/attempts", expect["attempts"], outcome.attempts)
    expect_equal(
        "/expect/asked", expect["asked"], {ask: evaluator.asked(ask) for ask in check.asks}
    )
    expect_equal("/expect/issues", expect["issues"], list(outcome.issues))
    expect_equal("/expect/verdict_json", expect["verdict_json"], outcome.verdict.to_json())


def _finished(running: Coroutine[Any, Any, Outcome]) -> Outcome:
    """What ``running`` returns, run to its end without an event loop: a scripted evaluator
    never waits, and a re-ask with no Retry-After to honour only gives the loop a turn (a bare
    yield), so a case needs no loop, nor asyncio, which would cost a run a tenth of its start."""
    try:
        while True:
            if running.send(None) is not None:  # a real wait: no case of the corpus has one
                running.close()
                raise RuntimeError("the check waited on something; a scripted run never does")
    except StopIteration as done:
        outcome: Outcome = done.value
        return outcome
