"""The recommendation for a check of two yes/no questions against Learn-then-Test with Holm
over the product of their grids, on simulated months whose true rates are known exactly.

    python benchmarks/bench_ltt_many.py [--months 20] [--sizes 300,1000,3000]
                                        [--pairs calibrated+calibrated,...] [--step 5]

**The world**: each question's stated ``p`` is drawn, apart from the other's, as one
question of ``sim_world`` is in its regime; the person accepts a submission when both of
its aspects are fine, each with the chance its regime gives (so with the product of the
two). Every true rate of any thresholds is an exact sum over the 200 × 200 pairs of values,
each verdict the worst of the two results (decision 7: unsure outranks fail).

**LTT-Holm** (the reference, as MAPIE's ``ltt_procedure`` does it): every combination of
the two questions' (``pass``, ``fail``) pairs on a grid of ``--step`` hundredths (5: 231
pairs each, 53,361 combinations) is a hypothesis "wrong passes exceed their rate, or wrong
fails exceed theirs" under the worst-of rule, tested on every case of the month with the
exact binomial p-value (the larger of the two), rejected by Holm's step-down at
``1 - confidence``; of the rejected, the one sending the fewest of the month's cases to a
person. (A grid of hundredths, 26 million combinations, is out of reach for it; the coarser
grid only helps it: fewer hypotheses share the level.)

**recommended**: ``calibrate_cases`` on the same month, its check's ``recommended`` (for two
questions: from 1,000 cases the same grid, at the whole level; below, the better of it and a
path fitted on a third of the cases and tested on the rest, each at half the level).

Printed as ``bench_ltt.py`` prints: the share of months whose true rates broke each
method's promise, the mean true share sent to a person by each, and their paired
difference. Exit 1 when the recommendation breaks its promise beyond its interval, or sends
more to a person than LTT-Holm beyond the interval.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import sys
from collections.abc import Sequence
from typing import Any

from bench_ltt import arguments, options, recommended, table
from sim_world import VALUES, World

from checkprofile import YesNoAnswer, parse_check
from checkprofile.human._calibration._binomial import binomial_cdf
from checkprofile.human._calibration._calibrate import Case, CheckCases, Thresholds
from checkprofile.human._calibration._columns import GRID

CHECK = parse_check([{"ask": "Is every amount right?"}, {"ask": "Is every receipt attached?"}])
PAIRS = ("calibrated+calibrated", "over+under", "under+under", "calibrated+useless")

Row = tuple[int, int, bool]  # each question's value index, and whether the person accepted


class TwoWorld:
    """Two questions' worlds, the person accepting when both aspects are fine."""

    def __init__(self, first: str, second: str) -> None:
        self.worlds = (World(first), World(second))

    def month(self, rng: random.Random, n: int) -> list[Row]:
        rows = []
        for _ in range(n):
            j = [
                min(bisect.bisect_left(w.cumulative, rng.random()), len(VALUES) - 1)
                for w in self.worlds
            ]
            accept = self.worlds[0].accept[j[0]] * self.worlds[1].accept[j[1]]
            rows.append((j[0], j[1], rng.random() < accept))
        return rows

    def rates(self, thresholds: Sequence[Thresholds]) -> dict[str, float]:
        """The true wrong-pass, wrong-fail and to-a-person shares of ``thresholds``."""
        sides = []
        for world, t in zip(self.worlds, thresholds, strict=True):
            assert t.pass_at is not None
            failing = t.pass_at if t.fail_below is None else t.fail_below
            sides.append(
                [
                    ("pass" if v >= t.pass_at else "fail" if v < failing else "unsure", w, c)
                    for v, w, c in zip(VALUES, world.weights, world.accept, strict=True)
                ]
            )
        wrong_pass = wrong_fail = unsure = 0.0
        for (r1, w1, c1), (r2, w2, c2) in itertools.product(*sides):
            weight, accept = w1 * w2, c1 * c2
            # The worst of the two (decision 7): unsure outranks fail, fail outranks pass.
            if r1 == "unsure" or r2 == "unsure":
                unsure += weight
            elif r1 == "fail" or r2 == "fail":
                wrong_fail += weight * accept
            else:
                wrong_pass += weight * (1 - accept)
        return {"wrong_pass": wrong_pass, "wrong_fail": wrong_fail, "to_person": unsure}


def cases(rows: Sequence[Row]) -> CheckCases:
    return CheckCases(
        name="sim",
        check=CHECK,
        cases=tuple(
            Case(
                key=f"run-{i}",
                answers=(YesNoAnswer(VALUES[a]), YesNoAnswer(VALUES[b])),
                person="accepted" if ok else "refused",
            )
            for i, (a, b, ok) in enumerate(rows)
        ),
    )


def _prefix(table: list[list[int]]) -> list[list[int]]:
    """``out[i][j]``: the sum of ``table[a][b]`` over ``a < i`` and ``b < j`` (101 × 101)."""
    out = [[0] * 102 for _ in range(102)]
    for a in range(101):
        for b in range(101):
            out[a + 1][b + 1] = table[a][b] + out[a][b + 1] + out[a + 1][b] - out[a][b]
    return out


def _within(sums: list[list[int]], first: tuple[int, int], second: tuple[int, int]) -> int:
    """How many of the table's cases have the first index in ``[first[0], first[1])`` and the
    second in ``[second[0], second[1])``."""
    (a, b), (c, d) = first, second
    return sums[b][d] - sums[a][d] - sums[b][c] + sums[a][c]


def ltt_holm(
    rows: Sequence[Row],
    *,
    max_wrong_pass: float,
    max_wrong_fail: float,
    confidence: float,
    step: int,
) -> tuple[Thresholds, Thresholds] | None:
    """LTT with Bonferroni-Holm over the product grid (see the module's docstring)."""
    n = len(rows)
    # A value passes pass_at GRID[a] when a <= floor(100 p), and fails fail_below GRID[f]
    # when floor(100 p) < f (p < 1 and never on the grid).
    accepted = [[0] * 101 for _ in range(101)]
    refused = [[0] * 101 for _ in range(101)]
    for a, b, ok in rows:
        table = accepted if ok else refused
        table[math.floor(VALUES[a] * 100)][math.floor(VALUES[b] * 100)] += 1
    yes, no = _prefix(accepted), _prefix(refused)
    pairs = [(p, f) for p in range(0, 101, step) for f in range(0, p + 1, step)]
    tested = []
    for (p1, f1), (p2, f2) in itertools.product(pairs, pairs):
        passing = ((p1, 101), (p2, 101))
        wrong_pass = _within(no, *passing)
        passed = wrong_pass + _within(yes, *passing)
        # Failed: no question unsure, and not both passing.
        wrong_fail = failed = 0
        for one, two in (((0, f1), (0, f2)), ((0, f1), (p2, 101)), ((p1, 101), (0, f2))):
            accepted_here = _within(yes, one, two)
            wrong_fail += accepted_here
            failed += accepted_here + _within(no, one, two)
        value = max(
            binomial_cdf(wrong_pass, n, max_wrong_pass),
            binomial_cdf(wrong_fail, n, max_wrong_fail),
        )
        tested.append((value, n - passed - failed, p1, f1, p2, f2))
    tested.sort()
    level = 1 - confidence
    best = None
    for rank, (value, unsure, *grid) in enumerate(tested):
        if value > level / (len(tested) - rank):
            break
        if best is None or unsure < best[0]:
            best = (unsure, grid)
    if best is None:
        return None
    p1, f1, p2, f2 = best[1]
    return (
        Thresholds(pass_at=GRID[p1], fail_below=None if f1 == p1 else GRID[f1]),
        Thresholds(pass_at=GRID[p2], fail_below=None if f2 == p2 else GRID[f2]),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments(__doc__.splitlines()[0], "300,1000,3000", 20, 5)
    parser.add_argument("--pairs", default=",".join(PAIRS))
    args = parser.parse_args(argv)

    def month(world: TwoWorld, rng: random.Random, n: int) -> tuple[Any, Any]:
        rows = world.month(rng, n)
        return recommended(cases(rows), args), ltt_holm(rows, step=args.step, **options(args))

    worlds = [(pair, TwoWorld(*pair.split("+"))) for pair in args.pairs.split(",")]
    return 0 if table("questions", [(name, w, w) for name, w in worlds], month, args) else 1


if __name__ == "__main__":
    sys.exit(main())
