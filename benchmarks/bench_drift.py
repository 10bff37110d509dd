"""How often does drift raise a false alarm between two windows of an unchanged world, and
how often does it see a real change? Simulated with ``sim_world``.

    python benchmarks/bench_drift.py [--trials 200] [--sizes 300,1000]

Each trial draws two months of the same regime (for the power rows, the second month's
people accept 10 points less often whatever the model says), calibrates both, and compares
them as ``checkprofile calibrate --baseline-...`` does. Printed per row: the figures judged
(mean), the share of trials with any figure ``moved`` and its exact 95% interval; the
promise for an unchanged world: at most 5% (Fisher's exact test, Holm over every figure
judged). Exit 1 when an unchanged world's false alarms exceed 5% beyond their interval.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Sequence

from sim_world import REGIMES, World, cases, clopper_pearson

from checkprofile.human import calibrate_cases
from checkprofile.human._calibration._drift import drift


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--sizes", default="300,1000")
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args(argv)
    print("| regime | change | n per month | trials | figures judged | any moved (95% CI) |")
    print("|---|---|---|---|---|---|")
    ok = True
    rows = [(regime, 0.0) for regime in REGIMES] + [("calibrated", -0.1), ("under", -0.1)]
    for regime, shift in rows:
        before, after = World(regime), World(regime, shift=shift)
        for n in (int(size) for size in args.sizes.split(",")):
            rng = random.Random(f"{args.seed}-{regime}-{shift}-{n}")
            alarms = 0
            judged = []
            for _ in range(args.trials):
                first = calibrate_cases([cases(before.month(rng, n))])
                second = calibrate_cases([cases(after.month(rng, n), prefix="later")])
                result = drift(first, second)
                alarms += result.moved
                judged.append(sum(c.judged for c in result.comparisons))
            low, high = clopper_pearson(alarms, args.trials)
            change = "none" if not shift else f"people accept {-shift:.0%} less"
            print(
                f"| {regime} | {change} | {n} | {args.trials} | {statistics.fmean(judged):.1f}"
                f" | {alarms / args.trials:.1%} ({low:.1%}-{high:.1%}) |",
                flush=True,
            )
            if not shift:
                ok &= low <= 0.05
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
