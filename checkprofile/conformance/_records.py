"""The records stage: one event on a step's state, and the state after it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._bundle import Material, Submission, build_bundle
from .._outcome import outcome_for
from .._validate import parse_check
from .._verdict import Verdict
from ..errors import MaterialError, VerdictError
from ..human._decide._decisions import DecisionRequiredError
from ..human._decide._state import (
    StateError,
    StepState,
    after_check,
    after_decision,
    after_rework,
    escalate_error,
)
from ._shared import BODY, INSTRUCTIONS, RUN_DATA, Mismatch, case_limits, expect_equal, shown_json

__all__ = ["run"]


def run(case: Mapping[str, Any]) -> None:
    # One event on a step's state (decision 17): the state before, the event, the state after.
    # A refused event (a verdict that is not one of the case's check, a submission not in
    # core-2's shape, a decision missing what it needs), or a state before that is not one,
    # changes nothing.
    expect = case["expect"]
    limits = case_limits(case)
    check = parse_check(case["check"], limits=limits)
    event = case["event"]
    try:
        before = StepState.from_json(
            {"state": 1, "run": case["run"], "step": case["step"], **case["before"]}, check=check
        )
        if "check" in event:
            checked = event["check"]
            material = Material(
                instructions=INSTRUCTIONS,
                body=BODY,
                run_data=RUN_DATA,
                submission=Submission.from_json(checked["submission"]),
            )
            bundle = build_bundle(check, material, state_bytes=limits.check_state_bytes)
            outcome = outcome_for(Verdict.from_json(checked["verdict"], check=check), bundle=bundle)
            if checked.get("escalate_error", False):
                outcome = escalate_error(outcome)
            options = {key: checked[key] for key in ("by", "note") if key in checked}
            after = after_check(
                before,
                outcome,
                submitted_by=checked.get("submitted_by"),
                submitted_at=checked.get("submitted_at"),
                **options,
            )
        elif "decision" in event:
            after = after_decision(before, event["decision"], at=event.get("at"))
        else:
            after = after_rework(before)
    except (StateError, DecisionRequiredError, VerdictError, MaterialError) as error:
        if expect.get("refused"):
            return
        raise Mismatch("/expect/refused", False, f"refused: {error}") from None
    if expect.get("refused"):
        raise Mismatch("/expect/refused", True, f"taken, as {shown_json(_state_of(after))}")
    expect_equal("/expect/after", expect["after"], _state_of(after))


def _state_of(state: StepState) -> dict[str, Any]:
    """A step's state as a records case writes it: the state's JSON without its format, run
    and step (the case's own)."""
    data = state.to_json()
    return {key: value for key, value in data.items() if key not in ("state", "run", "step")}
