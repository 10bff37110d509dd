"""Benchmarks for the pure path, printed as ratios against one ``json.dumps`` in the same run.

    python benchmarks/bench_core.py [--repeat N]

Each figure is the median of N timed runs (default 15) after one warm-up, so the ratios
compare like with like on whatever machine runs it. Targets (issue 2):

* a 9 MB run with 2,000 steps cut to 64 KB: a small fraction of one json.dumps of the run;
* run data that already fits: close to one json.dumps of it;
* the whole pure path for one submission (bundle, combine, lines) against one json.dumps of
  64 KB of run data.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import checkprofile
from checkprofile import (
    Limits,
    Material,
    Submission,
    build_bundle,
    combine,
    issue_lines,
    parse_check,
)

CHECK = parse_check(
    [
        {"ask": "The cleared verdict matches what the attached report says.", "fail": 0.5},
        {
            "ask": "What does the summary do?",
            "one_of": {"states": "States the verdict.", "hedges": "Avoids a verdict."},
            "pass": ["states"],
        },
        {
            "ask": "How complete is the screening?",
            "levels": ["Neither list.", "One list.", "Both lists, with search terms."],
            "pass": 2,
        },
    ]
)
ANSWERS: list[checkprofile.Answer] = [
    checkprofile.YesNoAnswer(0.42),
    checkprofile.ChoiceAnswer("hedges", 0.93),
    checkprofile.RubricAnswer(1, 0.88),
]


def make_run(steps: int, step_bytes: int) -> dict[str, Any]:
    """Run data shaped like agentprocess's: inputs, and steps with output, evidence, history."""
    filler = "Screened against the consolidated list; no match on name, alias or address. "
    run_steps = {}
    for i in range(steps):
        text = (filler * (step_bytes // len(filler) + 1))[: step_bytes - 400]
        run_steps[f"step_{i:05d}"] = {
            "output": {"cleared": i % 3 != 0, "summary": text, "n": i},
            "summary": f"step {i} done",
            "evidence": [{"kind": "file", "ref": f"r/{i}.pdf", "url": f"https://x/{i}?sig=abc"}],
            "by": "agent-7",
            "at": f"2026-10-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
            "history": [{"at": f"2026-09-{1 + i % 28:02d}T08:00:00Z", "verdict": "returned"}],
        }
    return {"inputs": {"vendor": "ACME GmbH", "country": "DE"}, "steps": run_steps}


def timed(fn: Callable[[], object], repeat: int) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def dumps(value: object) -> str:
    # The baseline: one plain json.dumps, the cheapest way to even look at the run data.
    return json.dumps(value)


def main() -> None:
    parser = argparse.ArgumentParser(description="checkprofile core benchmarks")
    parser.add_argument("--repeat", type=int, default=15)
    repeat = parser.parse_args().repeat
    submission = Submission({"cleared": True}, "No match on either list.")

    big = make_run(2000, 4600)
    big_bytes = len(dumps(big).encode())
    big_material = Material("Check the vendor.", "# Vendor\n", big, submission)
    base_big = timed(lambda: dumps(big), repeat)
    cut = timed(lambda: build_bundle(CHECK, big_material, state_bytes=65536), repeat)
    bundle = build_bundle(CHECK, big_material, state_bytes=65536)

    fits = make_run(14, 4650)  # about 64 KB, within the default budget
    fits_bytes = len(dumps(fits).encode())
    fits_material = Material("Check the vendor.", "# Vendor\n", fits, submission)
    assert not build_bundle(CHECK, fits_material, state_bytes=65536).truncated
    base_fits = timed(lambda: dumps(fits), repeat)
    whole = timed(lambda: build_bundle(CHECK, fits_material, state_bytes=65536), repeat)
    # The least any implementation spends to produce the text shown (sorted, compact, UTF-8).
    canonical = timed(
        lambda: json.dumps(fits, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
        repeat,
    )

    def pure_path() -> tuple[str, ...]:
        shown = build_bundle(CHECK, fits_material, state_bytes=Limits().check_state_bytes)
        verdict = combine(
            CHECK, ANSWERS, model="m", at="2026-10-06T09:04:20Z", truncated=shown.truncated
        )
        return issue_lines(verdict)

    path = timed(pure_path, repeat)

    print(
        f"run data: {big_bytes / 1e6:.1f} MB in {len(big['steps'])} steps;"
        f" shown {bundle.run_data_bytes} bytes, {len(bundle.dropped_steps)} steps cut"
    )
    print(f"{'benchmark':58} {'ratio':>8}  {'ms':>8}  {'baseline ms':>11}")
    rows = [
        ("build_bundle, 9 MB / 2,000 steps cut to 64 KB vs json.dumps", cut, base_big),
        (f"build_bundle, {fits_bytes // 1000} KB that fits vs json.dumps", whole, base_fits),
        (
            f"(for scale) canonical json.dumps, {fits_bytes // 1000} KB vs json.dumps",
            canonical,
            base_fits,
        ),
        (
            f"pure path (bundle+combine+lines), {fits_bytes // 1000} KB vs json.dumps",
            path,
            base_fits,
        ),
    ]
    for name, spent, base in rows:
        print(f"{name:58} {spent / base:8.3f}  {spent * 1e3:8.3f}  {base * 1e3:11.3f}")


if __name__ == "__main__":
    main()
