"""Write examples/advisory_records.jsonl: a month of advisory verdicts and sign-off decisions.

The expense-report process (examples/expense-report/PROCESS.md) ran for November 2026 with
``advisory: true`` on its ``assemble`` check while finance still signed every report off. Each
report's verdict and the sign-off decision on the same submission went to one audit trail,
through checkprofile's own recorder, as a host would write them. The answers are simulated
(seeded, so the file is the same on every run); docs/earning-trust.md calibrates this file.

Run it as ``python examples/make_advisory_records.py [OUT.jsonl]`` (default: the file beside it).
"""

from __future__ import annotations

import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from checkprofile import (
    Answer,
    ChoiceAnswer,
    RubricAnswer,
    Submission,
    YesNoAnswer,
    combine,
    error_verdict,
    outcome_for,
    parse_check,
)
from checkprofile.human import (
    Completed,
    Decision,
    JsonLinesRecorder,
    Returned,
    decision_record,
    verdict_record,
)

OUT = Path(__file__).resolve().parent / "advisory_records.jsonl"

# The check of the assemble step, as examples/expense-report/PROCESS.md states it.
CHECK = parse_check(
    [
        {
            "ask": "Every line of the report has a receipt attached, and the amounts match them.",
            "pass": 0.9,
            "fail": 0.4,
        },
        {
            "ask": "How does the report state the business purpose?",
            "one_of": {
                "specific": "Names the trip, the client or project, and the dates.",
                "vague": "Gives a purpose, but not one a reviewer could verify.",
                "missing": "States no purpose.",
            },
            "pass": ["specific"],
            "unsure": ["vague"],
        },
        {
            "ask": "How well are lines above the per-diem limit handled?",
            "levels": [
                "Lines above the limit are not flagged.",
                "Some are flagged, or flagged without a reason.",
                "Every line above the limit is flagged with its reason.",
            ],
            "pass": 2,
            "confidence": 0.75,
        },
    ]
)
TRAVELLERS = ("a.lindqvist", "b.mensah", "c.ortega", "d.nakamura", "e.haddad", "f.kowalski")
APPROVERS = ("finance.moreau", "finance.okafor")
MERCHANTS = ("Rail Europe", "Hotel Aurora", "Taxi Centrale", "Cafe Lumen", "AirNord", "Parkhaus")
RETURN_NOTES = (
    "A receipt is missing for one line.",
    "The hotel amount does not match its receipt.",
    "Purpose too vague: which client?",
    "The dinner above the per-diem is not flagged.",
)


def clip(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 3)


def answers_for(rng: random.Random, sound: bool) -> tuple[Answer, ...]:
    """What the evaluator might answer about a report that finance would (not) sign off."""
    # Receipts and amounts: sure and right most of the time, with a tail of doubt.
    p = rng.betavariate(12, 1.3) if sound else rng.betavariate(2, 4)
    if sound:
        purpose = rng.choices(("specific", "vague", "missing"), (88, 11, 1))[0]
        level = rng.choices((2, 1, 0), (85, 12, 3))[0]
    else:
        purpose = rng.choices(("specific", "vague", "missing"), (45, 35, 20))[0]
        level = rng.choices((2, 1, 0), (40, 35, 25))[0]
    return (
        YesNoAnswer(clip(p)),
        ChoiceAnswer(purpose, clip(rng.uniform(0.6, 1.0))),
        RubricAnswer(level, clip(rng.uniform(0.55, 1.0))),
    )


def submission_for(rng: random.Random, traveller: str, number: int) -> Submission:
    lines = [
        {
            "date": f"2026-10-{rng.randint(1, 31):02d}",
            "merchant": rng.choice(MERCHANTS),
            "amount_eur": round(rng.uniform(8, 420), 2),
        }
        for _ in range(rng.randint(2, 5))
    ]
    return Submission(
        output={
            "lines": lines,
            "total_eur": round(sum(line["amount_eur"] for line in lines), 2),  # type: ignore[misc]
            "purpose": f"Client visit, report {number}",
            "flagged": [],
        },
        summary=f"Expense report {number} for {traveller}.",
        evidence=[
            {"kind": "file", "ref": f"receipts/{traveller}/{number}-{i}.pdf"} for i in (1, 2)
        ],
    )


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    rng = random.Random(20261101)
    out.unlink(missing_ok=True)
    recorder = JsonLinesRecorder(out)
    start = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)
    number = 0
    pending = []
    for day in range(26):
        date = start + timedelta(days=day)
        if date.weekday() >= 5:
            continue
        for _ in range(rng.randint(4, 8)):
            number += 1
            traveller = rng.choice(TRAVELLERS)
            run_id = f"expense-2026-11-{number:04d}"
            submission = submission_for(rng, traveller, number)
            at = date + timedelta(minutes=rng.randint(0, 8 * 60))
            sound = rng.random() < 0.78
            if rng.random() < 0.015:  # the evaluator did not answer
                verdict = error_verdict(CHECK, model="example-evaluator-1", at=at, advisory=True)
            else:
                verdict = combine(
                    CHECK,
                    answers_for(rng, sound),
                    model="example-evaluator-1",
                    at=at,
                    advisory=True,
                )
            recorder.record(
                verdict_record(
                    outcome_for(verdict), run_id=run_id, step_id="assemble", submission=submission
                )
            )
            # Finance signs off hours later; a few reports are still waiting at month's end.
            decided = at + timedelta(hours=rng.randint(2, 30))
            pending.append((decided, run_id, submission, sound))
        due = [item for item in pending if item[0] <= date + timedelta(days=1)]
        for decided, run_id, submission, sound in due:
            pending.remove((decided, run_id, submission, sound))
            # People are not perfect either: a few sound reports go back, a few others pass.
            keeps = sound if rng.random() > 0.04 else not sound
            by = rng.choice(APPROVERS)
            when = decided.strftime("%Y-%m-%dT%H:%M:%SZ")
            decision: Decision = (
                Completed(by=by, at=when)
                if keeps
                else Returned(note=rng.choice(RETURN_NOTES), by=by, at=when)
            )
            recorder.record(
                decision_record(decision, run_id=run_id, step_id="assemble", submission=submission)
            )
    print(f"wrote {out}: {number} reports, {len(pending)} awaiting sign-off", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
