"""The statistics of the monitor: a confidence sequence for a rate of wrong verdicts, valid at
any time, from spot checks weighted by the inverse of their sampling probability.

**The stream.** Enforced verdicts ``i = 1, 2, …`` of one check; each is sampled for a spot check
with a known probability ``p`` (fixed by the plan for the kind of wrong watched: passes for
wrong passes, fails for wrong fails). ``W_i`` is 1 when verdict ``i`` is wrong (a pass the
person would refuse); ``S_i`` is 1 when it was sampled, independently of everything else given
the plan (a keyed hash). The inverse-probability weighted term ``X_i = S_i·W_i / p`` lies in
``[0, 1/p]`` and ``E[X_i | past] = E[W_i | past] = μ_i``: the wrong verdicts as a share of all
enforced verdicts, as the recommendation promises them.

**The tests.** For a rate ``m``, betting on ``Y_i = S_i·W_i = p·X_i`` (a 0/1 value of mean
``q = p·m`` under ``m``) with a fixed set of bets, one per alternative ``q₁``::

    E⁺(m) = mean over r in UP   of  Π (1 + λ_r (Y_i − q))   with λ_r = (q₁ − q) / (q (1 − q)),
                                                             q₁ = min(r·q, (1 + q)/2)
    E⁻(m) = mean over r in DOWN of  Π (1 − λ_r (Y_i − q))   with λ_r = (q − q₁) / (q (1 − q)),
                                                             q₁ = q / r

Each factor is ``q₁/q`` or ``(1 − q₁)/(1 − q)``: positive, linear in ``Y_i``. Under
"``μ_i ≤ m`` for every ``i``" each ``E⁺`` factor has conditional mean at most 1, so ``E⁺(m)`` is
a nonnegative supermartingale from 1 and, by Ville's inequality, ``P(ever E⁺(m) ≥ 1/α) ≤ α``:
the chance of *ever* raising a false alarm, however often it is looked at, is at most ``α``.
Likewise ``E⁻(m)`` under "``μ_i ≥ m`` for every ``i``": the chance of ever certifying a rate
that is not kept is at most ``δ``. The bets are fixed (a mixture of bets is an e-process, and
fixed bets make the product depend only on the counts), so the state is four integers: O(1) to
update and the same in any order, which is what lets replicas agree.

The bounds are ``lower = sup {m : E⁺(m) ≥ 1/α}`` and ``upper = inf {m : E⁻(m) ≥ 1/δ}``
(``E⁺`` falls and ``E⁻`` rises with ``m``), found by bisection. A sampled verdict whose spot
check is missing or does not hold up counts as *not wrong* for ``E⁺`` and as *wrong* for
``E⁻``: neither an alarm nor a certificate rests on a review that is not there.
"""

from __future__ import annotations

import math
from typing import Final

import attrs

__all__ = ["Counts", "Side", "bounds", "e_down", "e_up", "side_of"]

#: The alternatives bet on: a rate ``r`` times the promise (raising an alarm) and one ``r``
#: times under it (certifying).
UP: Final = (1.25, 1.5, 2.0, 3.0, 5.0)
DOWN: Final = (1.25, 1.5, 2.0, 3.0, 5.0)


@attrs.frozen
class Counts:
    """One stream: ``n`` enforced verdicts, ``wrong`` sampled and found wrong, ``pending``
    sampled without a spot check that holds up, at sampling probability ``p``."""

    n: int
    wrong: int
    pending: int
    p: float


def _log_mean(logs: list[float]) -> float:
    top = max(logs)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(value - top) for value in logs) / len(logs))


def e_up(counts: Counts, m: float) -> float:
    """``log E⁺(m)``: the evidence that the rate is above ``m`` (pending counted not wrong)."""
    q = counts.p * m
    if q <= 0:
        return math.inf if counts.wrong else 0.0
    if q >= 1:
        return -math.inf if counts.n > counts.wrong else 0.0
    hits, misses = counts.wrong, counts.n - counts.wrong
    logs = []
    for r in UP:
        q1 = min(r * q, (1 + q) / 2)
        logs.append(hits * math.log(q1 / q) + misses * math.log1p(-q1) - misses * math.log1p(-q))
    return _log_mean(logs)


def e_down(counts: Counts, m: float) -> float:
    """``log E⁻(m)``: the evidence that the rate is below ``m`` (pending counted wrong)."""
    q = counts.p * m
    if q <= 0:
        return -math.inf if counts.n else 0.0
    if q >= 1:
        return math.inf if counts.n > counts.wrong + counts.pending else 0.0
    hits = counts.wrong + counts.pending
    misses = counts.n - hits
    logs = []
    for r in DOWN:
        q1 = q / r
        logs.append(hits * math.log(q1 / q) + misses * (math.log1p(-q1) - math.log1p(-q)))
    return _log_mean(logs)


def bounds(counts: Counts, alpha: float, delta: float) -> tuple[float, float]:
    """The lower bound (at ``alpha``) and the upper bound (at ``delta``) on the rate, each valid
    at any time; the upper bound is at most ``1/p`` capped at 1."""
    top = min(1.0, 1.0 / counts.p) if counts.p > 0 else 1.0
    need_up, need_down = math.log(1 / alpha), math.log(1 / delta)
    low, high = 0.0, top
    if e_up(counts, 1e-12) >= need_up:
        for _ in range(50):
            mid = (low + high) / 2
            low, high = (mid, high) if e_up(counts, mid) >= need_up else (low, mid)
        lower = low
    else:
        lower = 0.0
    low, high = 0.0, top
    if e_down(counts, top * (1 - 1e-12)) >= need_down:
        for _ in range(50):
            mid = (low + high) / 2
            low, high = (low, mid) if e_down(counts, mid) >= need_down else (mid, high)
        upper = high
    else:
        upper = 1.0
    return lower, upper


@attrs.frozen(kw_only=True)
class Side:
    """Where one kind of wrong verdict stands against its promise."""

    promise: float
    estimate: float | None  # None: nothing sampled yet
    lower: float
    upper: float
    certified: bool
    broken: bool
    counts: Counts

    @property
    def status(self) -> str:
        return "broken" if self.broken else "certified" if self.certified else "not_yet"


def side_of(counts: Counts, promise: float, alpha: float, delta: float) -> Side:
    """The side's estimate, bounds and tests against ``promise``: broken when ``E⁺`` at the
    promise reaches ``1/alpha``, certified when ``E⁻`` there reaches ``1/delta``."""
    lower, upper = bounds(counts, alpha, delta)
    estimate = counts.wrong / (counts.p * counts.n) if counts.n and counts.p > 0 else None
    return Side(
        promise=promise,
        estimate=estimate,
        lower=lower,
        upper=upper,
        certified=counts.p > 0 and e_down(counts, promise) >= math.log(1 / delta),
        broken=counts.p > 0 and e_up(counts, promise) >= math.log(1 / alpha),
        counts=counts,
    )
