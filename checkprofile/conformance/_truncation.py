"""The truncation stage: the run data view a budget leaves, and what it dropped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._bundle import Material, Submission, build_bundle
from .._validate import parse_check
from ..errors import MaterialError
from ._shared import BODY, INSTRUCTIONS, Mismatch, expect_equal, shown_json

__all__ = ["run"]


# The check a truncation case is shown with: the run data view does not depend on it.
_TRUNCATION_CHECK = "Is the submission complete?"


def run(case: Mapping[str, Any]) -> None:
    expect = case["expect"]
    raw_submission = case.get("submission", {"output": {}})
    material = Material(
        instructions=INSTRUCTIONS,
        body=BODY,
        run_data=case["run_data"],
        submission=Submission.from_json(raw_submission),
    )
    try:
        bundle = build_bundle(parse_check(_TRUNCATION_CHECK), material, state_bytes=case["budget"])
    except MaterialError as error:
        # Run data the evaluator cannot be shown at all (steps or inputs not a map): the host
        # gets an error, and no evaluator is asked.
        if expect.get("refused"):
            return
        raise Mismatch("/expect/refused", False, f"refused: {error}") from None
    if expect.get("refused"):
        raise Mismatch("/expect/refused", True, f"shown as {shown_json(bundle.run_data_json)}")
    expect_equal("/expect/view", expect["view"], bundle.run_data_json)
    expect_equal("/expect/bytes", expect["bytes"], bundle.run_data_bytes)
    expect_equal("/expect/truncated", expect["truncated"], bundle.truncated)
    expect_equal("/expect/dropped_steps", expect["dropped_steps"], list(bundle.dropped_steps))
    expect_equal("/expect/dropped_fields", expect["dropped_fields"], list(bundle.dropped_fields))
    if "submission_view" in expect:
        expect_equal("/expect/submission_view", expect["submission_view"], bundle.submission_json)
