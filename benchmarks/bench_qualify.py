"""Simulation: how often the battery refuses a model for a fault it does not have.

    python benchmarks/bench_qualify.py [--trials 400] [--cases 40]

Each trial runs the battery on ``--cases`` cases with a fresh seed of the noisy evaluator of
tests/qualify/qualify_fakes.py (``coin_flip``: half its answers from the work, half at random,
but nothing it is shown beyond the work moves it). The repeat probe should refuse it every
time; each invariance probe (order, form, injection, cut) is judged against its repeat noise at
95% confidence and should refuse it rarely. Printed: each probe's refusal rate over the trials
with its 95% Wilson interval, and how often the well-behaved evaluator qualifies (every trial).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "qualify")]

import qualify_fakes as fakes  # noqa: E402

from checkprofile.qualify import qualify  # noqa: E402
from checkprofile.qualify._stats import wilson  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--cases", type=int, default=40)
    args = parser.parse_args()
    refused: dict[str, int] = {}
    cases = fakes.cases(args.cases)
    for seed in range(args.trials):
        found = asyncio.run(qualify(fakes.CHECK, cases, fakes.coin_flip(seed), step="s"))
        for probe in found.record.probes:
            if probe.status == "failed":
                refused[probe.probe] = refused.get(probe.probe, 0) + 1
    print(f"noisy evaluator, {args.trials} trials of {args.cases} cases: refused by")
    for name in ("repeat", "order", "form", "injection", "cut", "reliability", "knowledge"):
        hits = refused.get(name, 0)
        low, high = wilson(hits, args.trials)
        print(
            f"  {name:<12} {hits:>4}/{args.trials}  {hits / args.trials:6.1%}"
            f"  (95% interval {low:.1%} to {high:.1%})"
        )
    good = asyncio.run(qualify(fakes.CHECK, cases, fakes.well_behaved(), step="s"))
    print(f"well-behaved evaluator qualified: {good.qualified}")


if __name__ == "__main__":
    main()
