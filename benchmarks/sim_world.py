"""The simulated worlds of the calibration benchmarks (``bench_met.py``, ``bench_ltt.py``,
``bench_drift.py``): one yes/no question whose stated probability ``p`` takes one of 200
values, each with a known weight and a known chance that the person accepts, so every true
rate of any thresholds is an exact sum, not an estimate.

Regimes: ``calibrated`` (the person accepts a submission stated at ``p`` with chance ``p``),
``over`` (overconfident: the truth is half as far from 0.5 in log-odds), ``under``
(underconfident: twice as far), ``useless`` (the person accepts 80% whatever ``p`` says),
``noisy`` (calibrated, but each submission is decided by one of three approvers, drawn
alike, who answer against what they would otherwise with chance 2%, 5% and 10%: the chance
of acceptance at ``p`` is then ``p (1 - e) + (1 - p) e``, ``e`` their mean). ``shift`` moves
every chance of acceptance by that much (a changed world: people accept less, or more).
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Sequence

from checkprofile import YesNoAnswer, parse_check
from checkprofile.human._calibration._calibrate import Case, CheckCases, Thresholds

CHECK = parse_check("Is the report complete and right?")
VALUES = tuple(round((j + 0.5) / 200, 4) for j in range(200))
REGIMES = ("calibrated", "over", "under", "useless", "noisy")
#: The three approvers' chances of answering against themselves, in the ``noisy`` regime.
APPROVER_NOISE = (0.02, 0.05, 0.10)


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x))


class World:
    """A regime's stated values' ``weights`` and each value's chance ``accept``."""

    def __init__(self, regime: str, *, shift: float = 0.0):
        # Stated values lean high, as a working agent's submissions mostly pass.
        raw = [v**3 * (1 - v) ** 0.6 + 0.02 for v in VALUES]
        total = sum(raw)
        self.weights = [w / total for w in raw]
        self.cumulative = list(itertools.accumulate(self.weights))
        self.regime = regime
        found = []
        for v in VALUES:
            if regime == "calibrated":
                c = v
            elif regime == "over":
                c = _logistic(0.5 * _logit(v))
            elif regime == "under":
                c = _logistic(2 * _logit(v))
            elif regime == "useless":
                c = 0.8
            elif regime == "noisy":
                e = sum(APPROVER_NOISE) / len(APPROVER_NOISE)
                c = v * (1 - e) + (1 - v) * e
            else:
                raise ValueError(regime)
            found.append(min(1.0, max(0.0, c + shift)))
        self.accept = found

    def month(self, rng: random.Random, n: int) -> list[tuple[float, bool]]:
        """``n`` submissions: each one's stated ``p`` and whether the person accepted it."""
        rows = []
        for _ in range(n):
            j = min(bisect.bisect_left(self.cumulative, rng.random()), len(VALUES) - 1)
            rows.append((VALUES[j], rng.random() < self.accept[j]))
        return rows

    def rates(self, thresholds: Thresholds) -> dict[str, float]:
        """The true rates of ``thresholds``: wrong passes, wrong fails and to a person (shares
        of all submissions), and agreement (of those decided; nan when none are)."""
        assert thresholds.pass_at is not None
        passing = thresholds.pass_at
        failing = passing if thresholds.fail_below is None else thresholds.fail_below
        wrong_pass = wrong_fail = unsure = right = 0.0
        for v, w, c in zip(VALUES, self.weights, self.accept, strict=True):
            if v >= passing:
                wrong_pass += w * (1 - c)
                right += w * c
            elif v < failing:
                wrong_fail += w * c
                right += w * (1 - c)
            else:
                unsure += w
        decided = 1 - unsure
        return {
            "wrong_pass": wrong_pass,
            "wrong_fail": wrong_fail,
            "to_person": unsure,
            "agreement": right / decided if decided > 1e-12 else math.nan,
        }


def cases(rows: Sequence[tuple[float, bool]], *, prefix: str = "run") -> CheckCases:
    """A month's rows as the cases of one check."""
    return CheckCases(
        name="sim",
        check=CHECK,
        cases=tuple(
            Case(
                key=f"{prefix}-{i}",
                answers=(YesNoAnswer(p),),
                person="accepted" if ok else "refused",
            )
            for i, (p, ok) in enumerate(rows)
        ),
    )


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The two-sided exact interval of ``k`` in ``n``."""
    from checkprofile.human._calibration._binomial import upper_bound

    tail = (1 + confidence) / 2
    high = upper_bound(k, n, tail)
    low = 1 - upper_bound(n - k, n, tail)
    return max(0.0, low), high
