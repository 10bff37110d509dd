"""Write the checkpoints the review queue example serves: two checks a model was unsure of.

Run from the repository root (it rewrites ``examples/review-queue/checkpoints``)::

    python examples/review-queue/make_checkpoints.py

Each file is ``Checkpoint.to_json()``: what a host stores when a check escalates, until a
person decides (see docs/human-side.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from checkprofile import (
    ChoiceAnswer,
    Limits,
    Material,
    RubricAnswer,
    Submission,
    YesNoAnswer,
    parse_check,
    run_check_sync,
)
from checkprofile.human import Checkpoint, StepState, checkpoint_for
from checkprofile.testing import ScriptedEvaluator

FOLDER = Path(__file__).resolve().parent / "checkpoints"


def vendor_screening() -> Checkpoint:
    check = parse_check(
        [
            {"ask": "The cleared verdict matches what the attached report says.", "fail": 0.5},
            {
                "ask": "What does the summary do?",
                "one_of": {
                    "states": "States the verdict and the lists checked.",
                    "hedges": "Avoids a verdict or qualifies it heavily.",
                    "unclear": "Cannot tell.",
                },
                "pass": ["states"],
                "unsure": ["unclear"],
            },
            {
                "ask": "How complete is the screening?",
                "levels": [
                    "Neither list is clearly covered.",
                    "One list is covered.",
                    "Both lists are covered with the search terms stated.",
                ],
                "pass": 1,
            },
        ]
    )
    material = Material(
        instructions="Check the vendor against the OFAC and EU lists. Attach the report.",
        body="# Vendor onboarding\n",
        run_data={
            "inputs": {"vendor": "ACME GmbH"},
            "steps": {
                "intake": {"at": "2026-10-06T08:02:11Z", "output": {"notes": "n" * 900}},
                "contract": {"at": "2026-10-06T08:40:53Z", "output": {"value": 120000}},
            },
        },
        submission=Submission(
            {"cleared": True, "lists": ["OFAC", "EU"]},
            "Cleared: no match on OFAC or the EU list.",
            [{"kind": "file", "ref": "screening-report.pdf"}],
        ),
    )
    evaluator = ScriptedEvaluator(
        {
            "The cleared verdict matches what the attached report says.": YesNoAnswer(0.62),
            "What does the summary do?": ChoiceAnswer("states", 0.91),
            "How complete is the screening?": RubricAnswer(1, 0.85),
        },
        model="example-evaluator-1",
    )
    outcome = run_check_sync(
        check,
        material,
        evaluator,
        limits=Limits(check_state_bytes=200),
        now="2026-10-06T09:04:20Z",
    )
    state = StepState(run_id="run-4711", step_id="check_vendor")
    return checkpoint_for(
        outcome, state=state, submitted_by="agent:screener", submitted_at="2026-10-06T09:04:12Z"
    )


def expense_claim() -> Checkpoint:
    check = parse_check(
        [
            {
                "ask": "Does every line of the claim have a receipt attached?",
                "one_of": {
                    "all": "Every line has its receipt.",
                    "some": "Some lines have none.",
                    "unclear": "The attachments cannot be matched to lines.",
                },
                "pass": ["all"],
                "unsure": ["unclear"],
            },
            {"ask": "The total matches the sum of the lines.", "pass": 0.8, "fail": 0.3},
        ]
    )
    material = Material(
        instructions="Assemble the expense claim; attach a receipt for every line.",
        body="# Expense report\n",
        run_data={"inputs": {"employee": "R. Osei"}, "steps": {}},
        submission=Submission(
            {
                "lines": [{"what": "Train", "eur": 89.5}, {"what": "Hotel", "eur": 240}],
                "total": 329.5,
            },
            "Two lines, EUR 329.50; receipts attached.",
            [{"kind": "file", "ref": "train.pdf"}, {"kind": "file", "ref": "hotel.pdf"}],
            next="approve",
            reason="Over the EUR 250 limit for self-approval.",
        ),
        show_route=True,
    )
    evaluator = ScriptedEvaluator(
        {
            "Does every line of the claim have a receipt attached?": ChoiceAnswer("unclear", 0.7),
            "The total matches the sum of the lines.": YesNoAnswer(0.97),
        },
        model="example-evaluator-1",
    )
    outcome = run_check_sync(
        check, material, evaluator, limits=Limits(), now="2026-10-07T14:31:02Z"
    )
    state = StepState(run_id="run-4802", step_id="assemble")
    return checkpoint_for(outcome, state=state, submitted_by="agent:clerk")


def main() -> int:
    FOLDER.mkdir(exist_ok=True)
    for name, checkpoint in (("vendor", vendor_screening()), ("expense", expense_claim())):
        text = json.dumps(checkpoint.to_json(), indent=1, ensure_ascii=False) + "\n"
        (FOLDER / f"{name}.json").write_text(text, encoding="utf-8")
        print(f"{name}.json: step {checkpoint.step_id} of run {checkpoint.run_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
