"""Exact binomial tails and bounds (Clopper–Pearson), for the promises that must hold rather
than be close: the recommendation's test (:mod:`._recommend`) and "met" after the threshold
search (:mod:`._search`). Pure Python: the regularized incomplete beta function by its
continued fraction (modified Lentz's method), equal to scipy's to 1e-12 or better."""

from __future__ import annotations

import math

__all__ = ["binomial_cdf", "binomial_tail", "upper_bound"]


def _continued_fraction(a: float, b: float, x: float) -> float:
    # The continued fraction of the incomplete beta function (modified Lentz's method).
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((a - 1 + m2) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def _beta_regularized(a: float, b: float, x: float) -> float:
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _continued_fraction(a, b, x) / a
    return 1 - front * _continued_fraction(b, a, 1 - x) / b


def binomial_cdf(k: int, n: int, rate: float) -> float:
    """P(X <= ``k``) for X binomial with ``n`` trials of probability ``rate``."""
    if k >= n:
        return 1.0
    if k < 0:
        return 0.0
    return min(1.0, max(0.0, _beta_regularized(n - k, k + 1, 1 - rate)))


def upper_bound(k: int, n: int, confidence: float) -> float:
    """The exact (Clopper–Pearson) one-sided upper bound, at ``confidence``, of a rate seen
    ``k`` times in ``n``: the rate at which seeing ``k`` or fewer has probability
    ``1 - confidence``."""
    if n <= 0 or k >= n:
        return 1.0
    low, high = k / n, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if binomial_cdf(k, n, middle) > 1 - confidence:
            low = middle
        else:
            high = middle
    return high


def binomial_tail(k: int, n: int, rate: float) -> float:
    """P(X >= ``k``) for X binomial with ``n`` trials of probability ``rate``."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    # P(X >= k) = I_rate(k, n - k + 1).
    return min(1.0, max(0.0, _beta_regularized(k, n - k + 1, rate)))
