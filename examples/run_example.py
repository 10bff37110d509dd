"""Run the check of a bundled example on its submission, with recorded model answers.

    python examples/run_example.py examples/vendor_screening.yaml [--case pass|fail|unsure|error]

For each recorded case (or the one named) prints what the host does next and the verdict
record. With --case it exits 0 pass, 1 fail, 3 unsure, 4 error (the exit codes the command
line will use); without, it runs every case and exits 0. The example file holds the step (its
instructions and check key), the process body, describe.limits, the run data, the submission,
and per case what the model answered to each question.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from checkprofile import (
    Answer,
    CheckError,
    ChoiceAnswer,
    EvaluatorError,
    Limits,
    Material,
    RubricAnswer,
    Submission,
    YesNoAnswer,
    parse_check,
    run_check_sync,
)
from checkprofile.testing import ScriptedEvaluator, Step

EXIT = {"pass": 0, "fail": 1, "unsure": 3, "error": 4}


def recorded(kind: str, data: dict[str, Any]) -> Step:
    """One recorded answer, in the fields of a verdict's question, as an answer or failure."""
    if "error" in data:
        return EvaluatorError(f"recorded failure: {data['error']}", reason=data["error"])
    value = data["answer"]
    answer: Answer
    if kind == "yes_no":
        answer = YesNoAnswer(value, source="replayed")
    elif kind == "choice":
        answer = ChoiceAnswer(value, data["confidence"], source="replayed")
    else:
        answer = RubricAnswer(value, data["confidence"], source="replayed")
    return answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example", type=Path)
    parser.add_argument("--case", choices=sorted(EXIT))
    args = parser.parse_args()

    # YAML 1.2, core schema: `yes`/`no` stay strings, as in PROCESS.md files.
    data = YAML(typ="safe", pure=True).load(args.example.read_text(encoding="utf-8"))
    limits = Limits.from_json(data.get("limits", {}))
    try:
        check = parse_check(data["step"]["check"], limits=limits)
    except CheckError as error:
        print(f"{args.example}: {error}", file=sys.stderr)
        return 1
    material = Material(
        instructions=data["step"]["instructions"],
        body=data["body"],
        run_data=data["run_data"],
        submission=Submission.from_json(data["submission"]),
    )
    kinds = {question.ask: question.kind for question in check}
    verdict = "pass"
    for case in [args.case] if args.case else list(data["cases"]):
        script: dict[str, Step | list[Step]] = {}
        for ask, value in data["cases"][case].items():
            steps = value if isinstance(value, list) else [value]
            replay = [recorded(kinds[ask], step) for step in steps]
            script[ask] = replay if isinstance(value, list) else replay[0]
        outcome = run_check_sync(
            check,
            material,
            ScriptedEvaluator(script, model="recorded-answers"),
            limits=limits,
            now="2026-10-06T09:04:20Z",
        )
        print(f"== case {case}: action {outcome.action}")
        for line in outcome.issues:
            print(f"  {line}")
        print(json.dumps(outcome.verdict.to_json(), indent=2, ensure_ascii=False))
        verdict = outcome.verdict.verdict
    return EXIT[verdict] if args.case else 0


if __name__ == "__main__":
    sys.exit(main())
