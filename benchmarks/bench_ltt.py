"""The whole check's recommendation against Learn-then-Test with Holm on the same grid, on
simulated months of one yes/no question whose true rates are known exactly (``sim_world``).

    python benchmarks/bench_ltt.py [--months 100] [--sizes 300,1000,3000]
                                   [--max-wrong-pass 0.05] [--max-wrong-fail 0.10]
                                   [--confidence 0.9] [--step 1]

**LTT-Holm** (the reference, written here as MAPIE's ``ltt_procedure`` does it): every
(``pass``, ``fail``) pair of a fixed grid (``--step`` hundredths: 1 is the search's own grid,
5,151 pairs; 5 is 231) is a hypothesis "wrong passes exceed their rate, or wrong fails exceed
theirs", tested on every case of the month with the exact binomial p-value (the larger of
the two), rejected by Holm's step-down at ``1 - confidence``; of the rejected pairs, the one
that sends the fewest of the month's cases to a person.

**recommended**: ``calibrate_cases`` on the same month, its check's ``recommended``.

A month where a method promises nothing (or only thresholds that send everything to a
person) counts as sending everything. Printed per regime and size: the share of months whose
true rates broke the promise (each method, exact 95% interval; allowed: ``1 - confidence``),
the mean true share sent to a person by each, and the paired difference (recommended minus
LTT-Holm) with its 95% interval. Exit 1 when the recommendation breaks its promise beyond
its interval, or sends more to a person than LTT-Holm beyond the interval.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Sequence

from sim_world import REGIMES, World, cases, clopper_pearson

from checkprofile.human import calibrate_cases
from checkprofile.human._calibration._binomial import binomial_cdf
from checkprofile.human._calibration._calibrate import Thresholds
from checkprofile.human._calibration._columns import GRID


def ltt_holm(
    rows: Sequence[tuple[float, bool]],
    *,
    max_wrong_pass: float,
    max_wrong_fail: float,
    confidence: float,
    step: int,
) -> Thresholds | None:
    """LTT with Bonferroni-Holm over the fixed grid: the rejected pair sending the fewest of
    ``rows`` to a person (``None`` when none is rejected)."""
    n = len(rows)
    indexes = range(0, 101, step)
    # refused_at[k]: refused cases with p >= GRID[k]; accepted_below[k]: accepted with p < it.
    refused_at = [sum(1 for p, ok in rows if not ok and p >= GRID[k]) for k in range(101)]
    accepted_below = [sum(1 for p, ok in rows if ok and p < GRID[k]) for k in range(101)]
    below = [sum(1 for p, _ in rows if p < GRID[k]) for k in range(101)]
    tested = []
    for p in indexes:
        for f in indexes:
            if f > p:
                continue
            value = max(
                binomial_cdf(refused_at[p], n, max_wrong_pass),
                binomial_cdf(accepted_below[f], n, max_wrong_fail),
            )
            tested.append((value, below[p] - below[f], p, f))
    tested.sort()
    level = 1 - confidence
    best = None
    for rank, (value, unsure, p, f) in enumerate(tested):
        if value > level / (len(tested) - rank):
            break
        if best is None or unsure < best[0]:
            best = (unsure, p, f)
    if best is None:
        return None
    _, p, f = best
    return Thresholds(pass_at=GRID[p], fail_below=None if f == p else GRID[f])


def _mean_interval(values: Sequence[float]) -> str:
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{mean:+.1%} ({mean - half:+.1%} to {mean + half:+.1%})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--months", type=int, default=100)
    parser.add_argument("--sizes", default="300,1000,3000")
    parser.add_argument("--regimes", default=",".join(REGIMES))
    parser.add_argument("--max-wrong-pass", type=float, default=0.05)
    parser.add_argument("--max-wrong-fail", type=float, default=0.10)
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--step", type=int, default=1)
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args(argv)
    rates = {
        "max_wrong_pass": args.max_wrong_pass,
        "max_wrong_fail": args.max_wrong_fail,
        "confidence": args.confidence,
    }
    print(
        "| regime | n | months | violating: recommended (95% CI) | violating: LTT-Holm"
        " | to a person: recommended | to a person: LTT-Holm | difference (95% CI) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    ok = True
    for regime in args.regimes.split(","):
        world = World(regime)
        for n in (int(size) for size in args.sizes.split(",")):
            rng = random.Random(f"{args.seed}-{regime}-{n}")
            broke = [0, 0]
            sent: list[list[float]] = [[], []]
            for _ in range(args.months):
                rows = world.month(rng, n)
                report = calibrate_cases([cases(rows)], **rates)
                chosen = report.checks[0].recommended
                ours = chosen.thresholds[0] if chosen.promised else None
                theirs = ltt_holm(rows, step=args.step, **rates)
                for i, thresholds in enumerate((ours, theirs)):
                    if thresholds is None:
                        sent[i].append(1.0)
                        continue
                    truth = world.rates(thresholds)
                    broke[i] += (
                        truth["wrong_pass"] > args.max_wrong_pass
                        or truth["wrong_fail"] > args.max_wrong_fail
                    )
                    sent[i].append(truth["to_person"])
            low, high = clopper_pearson(broke[0], args.months)
            low2, high2 = clopper_pearson(broke[1], args.months)
            differences = [a - b for a, b in zip(*sent, strict=True)]
            print(
                f"| {regime} | {n} | {args.months}"
                f" | {broke[0] / args.months:.1%} ({low:.1%}-{high:.1%})"
                f" | {broke[1] / args.months:.1%} ({low2:.1%}-{high2:.1%})"
                f" | {statistics.fmean(sent[0]):.1%} | {statistics.fmean(sent[1]):.1%}"
                f" | {_mean_interval(differences)} |",
                flush=True,
            )
            mean = statistics.fmean(differences)
            half = 1.96 * statistics.stdev(differences) / math.sqrt(len(differences))
            ok &= low <= 1 - args.confidence and mean - half <= 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
