"""The whole check's recommendation against Learn-then-Test with Holm on the same grid, on
simulated months of one yes/no question whose true rates are known exactly (``sim_world``).

    python benchmarks/bench_ltt.py [--months 100] [--sizes 30,100,300,1000,3000]
                                   [--max-wrong-pass 0.05] [--max-wrong-fail 0.10]
                                   [--confidence 0.9] [--step 1]

**LTT-Holm** (the reference, written here as MAPIE's ``ltt_procedure`` does it): every
(``pass``, ``fail``) pair of a fixed grid (``--step`` hundredths: 1 is the search's own grid,
5,151 pairs; 5 is 231) is a hypothesis "wrong passes exceed their rate, or wrong fails exceed
theirs", tested on every case of the month with the exact binomial p-value (the larger of
the two), rejected by Holm's step-down at ``1 - confidence``; of the rejected pairs, the one
that sends the fewest of the month's cases to a person.

**recommended**: ``calibrate_cases`` on the same month, its check's ``recommended``.

``--shift S`` draws each month from the regime's world but judges the promised thresholds
in that world with every chance of acceptance moved by ``S`` (people accept less after the
month, say): not like for like, so the promise is not expected to hold there and the exit
status does not judge it; the comparison of the two methods still stands.

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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sim_world import REGIMES, World, cases, clopper_pearson

from checkprofile.human import calibrate_cases
from checkprofile.human._calibration._binomial import binomial_cdf
from checkprofile.human._calibration._calibrate import CheckCases, Thresholds
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


HEAD = (
    "| violating: recommended (95% CI) | violating: LTT-Holm"
    " | to a person: recommended | to a person: LTT-Holm | difference (95% CI) |"
)


def compare(
    label: str,
    months: Iterable[tuple[Any, Any]],
    rates_of: Callable[[Any], dict[str, float]],
    args: argparse.Namespace,
    *,
    like_for_like: bool = True,
) -> bool:
    """Print a table's row for ``months``, each the thresholds the recommendation and
    LTT-Holm promised (``None``: nothing promised, which counts as sending everything to a
    person), judged by their true rates (``rates_of``). Whether the row is as it should be:
    the recommendation's share of months violating within ``1 - confidence`` by its interval
    (unless not ``like_for_like``), and no more sent to a person than by LTT-Holm by the
    interval of the paired difference."""
    broke = [0, 0]
    sent: list[list[float]] = [[], []]
    for pair in months:
        for i, thresholds in enumerate(pair):
            if thresholds is None:
                sent[i].append(1.0)
                continue
            truth = rates_of(thresholds)
            broke[i] += (
                truth["wrong_pass"] > args.max_wrong_pass
                or truth["wrong_fail"] > args.max_wrong_fail
            )
            sent[i].append(truth["to_person"])
    count = len(sent[0])
    low, high = clopper_pearson(broke[0], count)
    low2, high2 = clopper_pearson(broke[1], count)
    differences = [a - b for a, b in zip(*sent, strict=True)]
    print(
        f"| {label} | {count}"
        f" | {broke[0] / count:.1%} ({low:.1%}-{high:.1%})"
        f" | {broke[1] / count:.1%} ({low2:.1%}-{high2:.1%})"
        f" | {statistics.fmean(sent[0]):.1%} | {statistics.fmean(sent[1]):.1%}"
        f" | {_mean_interval(differences)} |",
        flush=True,
    )
    mean = statistics.fmean(differences)
    half = 1.96 * statistics.stdev(differences) / math.sqrt(count) if count > 1 else 0.0
    return (not like_for_like or low <= 1 - args.confidence) and mean - half <= 0


def table(
    head: str,
    worlds: Sequence[tuple[str, Any, Any]],
    month: Callable[[Any, random.Random, int], tuple[Any, Any]],
    args: argparse.Namespace,
    *,
    like_for_like: bool = True,
) -> bool:
    """Print the table: for each ``(name, world, truth)`` and each size, ``args.months``
    months drawn from ``world`` (``month`` gives both methods' thresholds) judged by
    ``truth``'s rates, seeded by the name and size; whether every row is as it should be."""
    print(f"| {head} | n | months {HEAD}")
    print("|---|---|---|---|---|---|---|---|")
    ok = True
    for name, world, truth in worlds:
        for n in (int(size) for size in args.sizes.split(",")):
            rng = random.Random(f"{args.seed}-{name}-{n}")
            months = (month(world, rng, n) for _ in range(args.months))
            ok &= compare(f"{name} | {n}", months, truth.rates, args, like_for_like=like_for_like)
    return ok


def options(args: argparse.Namespace) -> dict[str, float]:
    """The rates and confidence both methods are asked to keep."""
    return {
        "max_wrong_pass": args.max_wrong_pass,
        "max_wrong_fail": args.max_wrong_fail,
        "confidence": args.confidence,
    }


def recommended(group: CheckCases, args: argparse.Namespace) -> tuple[Thresholds, ...] | None:
    """The recommendation's thresholds for the check of ``group``, if it promises."""
    report = calibrate_cases(
        [group],
        max_wrong_pass=args.max_wrong_pass,
        max_wrong_fail=args.max_wrong_fail,
        confidence=args.confidence,
    )
    chosen = report.checks[0].recommended
    return chosen.thresholds if chosen.promised else None


def arguments(description: str, sizes: str, months: int, step: int) -> argparse.ArgumentParser:
    """The options both comparisons take."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--months", type=int, default=months)
    parser.add_argument("--sizes", default=sizes)
    parser.add_argument("--max-wrong-pass", type=float, default=0.05)
    parser.add_argument("--max-wrong-fail", type=float, default=0.10)
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--step", type=int, default=step)
    parser.add_argument("--seed", type=int, default=35)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments(__doc__.splitlines()[0], "30,100,300,1000,3000", 100, 1)
    parser.add_argument("--regimes", default=",".join(REGIMES))
    parser.add_argument("--shift", type=float, default=0.0)
    args = parser.parse_args(argv)

    def month(world: World, rng: random.Random, n: int) -> tuple[Any, Any]:
        rows = world.month(rng, n)
        ours = recommended(cases(rows), args)
        return ours and ours[0], ltt_holm(rows, step=args.step, **options(args))

    worlds = [
        (regime, World(regime), World(regime, shift=args.shift))
        for regime in args.regimes.split(",")
    ]
    return 0 if table("regime", worlds, month, args, like_for_like=args.shift == 0) else 1


if __name__ == "__main__":
    sys.exit(main())
