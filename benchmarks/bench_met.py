"""Is "met" a bound after the threshold search? Simulated months of one yes/no question, each
calibrated as a user would, its suggestion's true agreement computed exactly.

    python benchmarks/bench_met.py [--months 100] [--sizes 300,1000,3000]

For each regime of ``sim_world`` (and ``null``: a useless model judged at a target just above
what any thresholds can reach, so that every "met" is false) and each month size, ``--months``
months are drawn and calibrated at the regime's target. Printed per row: how many months were
marked met, how many of those had a true agreement below the target (**false met**), that
share of all months with its exact 95% interval (the promise: at most 5%, for every
thresholds the search tried at once), and the share of met months that were false. Beside
it, for contrast, how often the suggestion's own 95% Wilson interval (the rule before issue
35, blind to the search) reached the target while its truth was below. Exit 1 when a row's
false-met share is above 5% beyond its interval.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence

from sim_world import World, cases, clopper_pearson

from checkprofile.human import calibrate_cases

#: (regime, the world's regime, target agreement)
ROWS = (
    ("calibrated", "calibrated", 0.9),
    ("over", "over", 0.85),
    ("under", "under", 0.9),
    ("noisy", "noisy", 0.85),
    ("null", "useless", 0.81),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--months", type=int, default=100)
    parser.add_argument("--sizes", default="300,1000,3000")
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    print(
        "| regime | target | n | months | met | false met | share false (95% CI)"
        " | false among met | Wilson alone: false |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    total = falses = 0
    for name, regime, target in ROWS:
        world = World(regime)
        for n in sizes:
            rng = random.Random(f"{args.seed}-{name}-{n}")
            met = false = naive_false = 0
            for _ in range(args.months):
                report = calibrate_cases([cases(world.month(rng, n))], target=target)
                question = report.checks[0].questions[0]
                if question.suggested is None or question.at_suggested is None:
                    continue
                truth = world.rates(question.suggested)["agreement"]
                below = not truth >= target  # nan (nothing decided) counts as below
                met += question.meets_target
                false += question.meets_target and below
                low = question.at_suggested.agreement.low
                naive = not question.at_suggested.agreement.too_few and low is not None
                naive_false += naive and low >= target and below  # type: ignore[operator]
            low, high = clopper_pearson(false, args.months)
            among = f"{false / met:.1%}" if met else "n/a"
            print(
                f"| {name} | {target} | {n} | {args.months} | {met} | {false}"
                f" | {false / args.months:.1%} ({low:.1%}-{high:.1%}) | {among}"
                f" | {naive_false / args.months:.1%} |",
                flush=True,
            )
            ok &= low <= 0.05
            total += args.months
            falses += false
    low, high = clopper_pearson(falses, total)
    print(
        f"all rows: {falses} false met in {total} months, {falses / total:.2%}"
        f" ({low:.2%}-{high:.2%}); promised: at most 5% in each month."
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
