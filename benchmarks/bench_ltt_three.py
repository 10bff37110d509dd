"""The recommendation for a check of three yes/no questions against Learn-then-Test with Holm
over the product of their grids, on simulated months whose true rates are known exactly.

    python benchmarks/bench_ltt_three.py [--months 20] [--sizes 300,1000,3000]
                                         [--triples calibrated+calibrated+calibrated,...]
                                         [--step 10]

**The world**, as ``bench_ltt_many.py``'s for two: each question's stated ``p`` is drawn,
apart from the others', as one question of ``sim_world`` is in its regime; the person
accepts a submission when all three aspects are fine (with the product of the three
chances). Every true rate of any thresholds is exact: the verdict is the worst of the three
results (decision 7), so each rate factors into sums over one question's 200 values.

**LTT-Holm** (the reference, as MAPIE's ``ltt_procedure`` does it): every combination of
the three questions' (``pass``, ``fail``) pairs on a grid of ``--step`` hundredths (10: 66
pairs each, 287,496 combinations; the grid of 0.05 has 12 million, out of reach for it as
for the library) is a hypothesis "wrong passes exceed their rate, or wrong fails exceed
theirs", tested on every case of the month with the exact binomial p-value (the larger of the
two), rejected by Holm's step-down at ``1 - confidence``; of the rejected, the one sending
the fewest of the month's cases to a person. Counted for all combinations at once: the cases
binned by each question's tenth, contracted with each setting's pass and decided indicators.

**recommended**: ``calibrate_cases`` on the same month (for three questions: its path, fitted
on a third of the cases and tested on the rest).

Printed as ``bench_ltt.py`` prints; exit 1 when the recommendation breaks its promise beyond
its interval, or sends more to a person than LTT-Holm beyond the interval.
"""

from __future__ import annotations

import bisect
import math
import random
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from bench_ltt import arguments, options, recommended, table
from sim_world import VALUES, World

from checkprofile import YesNoAnswer, parse_check
from checkprofile.human._calibration._binomial import binomial_cdf
from checkprofile.human._calibration._calibrate import Case, CheckCases, Thresholds
from checkprofile.human._calibration._columns import GRID

CHECK = parse_check(
    [
        {"ask": "Is every amount right?"},
        {"ask": "Is every receipt attached?"},
        {"ask": "Is the purpose stated?"},
    ]
)
TRIPLES = (
    "calibrated+calibrated+calibrated",
    "under+under+under",
    "over+under+calibrated",
    "calibrated+calibrated+useless",
)

Row = tuple[int, int, int, bool]  # each question's value index, and whether accepted


class ThreeWorld:
    """Three questions' worlds, the person accepting when every aspect is fine."""

    def __init__(self, regimes: Sequence[str]) -> None:
        self.worlds = tuple(World(regime) for regime in regimes)

    def month(self, rng: random.Random, n: int) -> list[Row]:
        rows: list[Row] = []
        for _ in range(n):
            j = [
                min(bisect.bisect_left(w.cumulative, rng.random()), len(VALUES) - 1)
                for w in self.worlds
            ]
            accept = math.prod(w.accept[i] for w, i in zip(self.worlds, j, strict=True))
            rows.append((j[0], j[1], j[2], rng.random() < accept))
        return rows

    def rates(self, thresholds: Sequence[Thresholds]) -> dict[str, float]:
        """The true wrong-pass, wrong-fail and to-a-person shares of ``thresholds``: with
        ``A`` a question's passing weight, ``B`` the same times the chance of acceptance,
        ``C`` and ``D`` the same for its decided (not unsure) values, wrong passes are
        ``ΠA - ΠB``, wrong fails ``ΠD - ΠB`` and to a person ``1 - ΠC``."""
        sums = []
        for world, t in zip(self.worlds, thresholds, strict=True):
            assert t.pass_at is not None
            failing = t.pass_at if t.fail_below is None else t.fail_below
            a = b = c = d = 0.0
            for v, w, ok in zip(VALUES, world.weights, world.accept, strict=True):
                if v >= t.pass_at:
                    a, b = a + w, b + w * ok
                if v >= t.pass_at or v < failing:
                    c, d = c + w, d + w * ok
            sums.append((a, b, c, d))
        a, b, c, d = (math.prod(column) for column in zip(*sums, strict=True))
        return {"wrong_pass": a - b, "wrong_fail": d - b, "to_person": 1 - c}


def cases(rows: Sequence[Row]) -> CheckCases:
    return CheckCases(
        name="sim",
        check=CHECK,
        cases=tuple(
            Case(
                key=f"run-{i}",
                answers=tuple(YesNoAnswer(VALUES[j]) for j in row[:3]),
                person="accepted" if row[3] else "refused",
            )
            for i, row in enumerate(rows)
        ),
    )


def ltt_holm(
    rows: Sequence[Row],
    *,
    max_wrong_pass: float,
    max_wrong_fail: float,
    confidence: float,
    step: int,
) -> tuple[Thresholds, ...] | None:
    """LTT with Bonferroni-Holm over the product grid (see the module's docstring)."""
    if 10 % step and step % 10:
        raise ValueError("the grid's step must divide or be a multiple of 10 hundredths")
    n = len(rows)
    tenths = min(step, 10)  # cases binned by the finer of the grid and a tenth
    bins = 100 // tenths
    counts = np.zeros((2, bins, bins, bins))
    for *j, ok in rows:
        counts[int(ok)][tuple(int(VALUES[i] * 100) // tenths for i in j)] += 1
    refused, accepted = counts
    pairs = [(p, f) for p in range(0, 101, step) for f in range(0, p + 1, step)]
    edges = np.arange(bins) * tenths  # each bin's lowest value, in hundredths
    passing = np.array([edges >= p for p, _ in pairs], float)
    decided = np.array([(edges >= p) | (edges + tenths <= f) for p, f in pairs], float)

    def each(by: np.ndarray, table: np.ndarray) -> np.ndarray:
        found: np.ndarray = np.einsum("ia,jb,kc,abc->ijk", by, by, by, table, optimize=True)
        counted: np.ndarray = np.rint(found).astype(np.int64).ravel()
        return counted

    wrong_pass = each(passing, refused)
    passed_accepted = each(passing, accepted)
    decided_accepted = each(decided, accepted)
    wrong_fail = decided_accepted - passed_accepted
    unsure = n - decided_accepted - each(decided, refused)
    _agree(rows, pairs, wrong_pass, wrong_fail, unsure)
    cdf_pass = np.array([binomial_cdf(k, n, max_wrong_pass) for k in range(n + 1)])
    cdf_fail = np.array([binomial_cdf(k, n, max_wrong_fail) for k in range(n + 1)])
    values = np.maximum(cdf_pass[wrong_pass], cdf_fail[wrong_fail])
    order = np.argsort(values, kind="stable")
    hypotheses = len(values)
    level = (1 - confidence) / (hypotheses - np.arange(hypotheses))
    failing = np.flatnonzero(values[order] > level)
    rejected = order[: failing[0] if len(failing) else hypotheses]
    if not len(rejected):
        return None
    best = int(rejected[np.argmin(unsure[rejected])])  # the first of the fewest
    chosen = np.unravel_index(best, (len(pairs),) * 3)
    return tuple(
        Thresholds(pass_at=GRID[p], fail_below=None if f == p else GRID[f])
        for p, f in (pairs[int(i)] for i in chosen)
    )


def _agree(
    rows: Sequence[Row],
    pairs: Sequence[tuple[int, int]],
    *counted: np.ndarray,
) -> None:
    """The contracted counts of a few combinations equal a plain count of the month's cases."""
    rng = random.Random(len(rows))
    for _ in range(5):
        chosen = [rng.randrange(len(pairs)) for _ in range(3)]
        found = [0, 0, 0]  # wrong passes, wrong fails, unsure
        for *j, ok in rows:
            results = []
            for i, index in zip(j, chosen, strict=True):
                p, f = pairs[index]
                v = VALUES[i]
                results.append("pass" if v >= p / 100 else "fail" if v < f / 100 else "unsure")
            if "unsure" in results:
                found[2] += 1
            elif "fail" in results:
                found[1] += ok
            else:
                found[0] += not ok
        flat = (chosen[0] * len(pairs) + chosen[1]) * len(pairs) + chosen[2]
        assert found == [int(column[flat]) for column in counted], (chosen, found)


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments(__doc__.splitlines()[0], "300,1000,3000", 20, 10)
    parser.add_argument("--triples", default=",".join(TRIPLES))
    args = parser.parse_args(argv)

    def month(world: ThreeWorld, rng: random.Random, n: int) -> tuple[Any, Any]:
        rows = world.month(rng, n)
        return recommended(cases(rows), args), ltt_holm(rows, step=args.step, **options(args))

    worlds = [(triple, ThreeWorld(triple.split("+"))) for triple in args.triples.split(",")]
    return 0 if table("questions", [(name, w, w) for name, w in worlds], month, args) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
