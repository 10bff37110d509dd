"""The intervals the probes are judged by: closed forms, no resampling, so a figure is the
same every time the same answers are judged.

* a share: the Wilson score interval (as calibration's shares);
* a difference of two shares (a probe's change rate less the repeat's): Newcombe's hybrid
  score interval (method 10 of Newcombe 1998), from the two Wilson intervals;
* a mean of paired differences: the normal interval of the mean;
* the area under the ROC curve (knowledge): the rank (Mann-Whitney) estimate, ties counted
  half, with the Hanley-McNeil (1982) standard error;
* latency: nearest-rank percentiles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["Z95", "auc_interval", "difference_interval", "mean_interval", "percentile", "wilson"]

#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson(hits: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``hits`` of ``total`` (``(0, 1)`` for none)."""
    if total <= 0:
        return 0.0, 1.0
    share = hits / total
    denominator = 1 + z * z / total
    centre = (share + z * z / (2 * total)) / denominator
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(
    hits_a: int, total_a: int, hits_b: int, total_b: int, z: float = Z95
) -> tuple[float, float, float]:
    """``a - b`` for the shares ``hits_a / total_a`` and ``hits_b / total_b``, with Newcombe's
    hybrid score interval: the difference, its low and its high end."""
    share_a = hits_a / total_a if total_a else 0.0
    share_b = hits_b / total_b if total_b else 0.0
    low_a, high_a = wilson(hits_a, total_a, z)
    low_b, high_b = wilson(hits_b, total_b, z)
    difference = share_a - share_b
    low = difference - math.sqrt((share_a - low_a) ** 2 + (high_b - share_b) ** 2)
    high = difference + math.sqrt((high_a - share_a) ** 2 + (share_b - low_b) ** 2)
    return difference, max(-1.0, low), min(1.0, high)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """The mean of ``values`` and its normal interval (the standard error from the sample's
    own spread, ``n - 1``); a single value is its own mean, unbounded either way."""
    count = len(values)
    if count == 0:
        return 0.0, -math.inf, math.inf
    mean = math.fsum(values) / count
    if count == 1:
        return mean, -math.inf, math.inf
    variance = math.fsum((value - mean) ** 2 for value in values) / (count - 1)
    half = z * math.sqrt(variance / count)
    return mean, mean - half, mean + half


def auc_interval(
    positives: Sequence[float], negatives: Sequence[float], z: float = Z95
) -> tuple[float, float, float]:
    """The chance that a positive case scores above a negative one (ties count half): the
    area under the ROC curve, with the Hanley-McNeil interval. Needs a case of each."""
    if not positives or not negatives:
        raise ValueError("the area under the curve needs a case of each kind")
    ranked = sorted([(value, 1) for value in positives] + [(value, 0) for value in negatives])
    # Mid-ranks, so ties count half.
    rank_sum = 0.0
    start = 0
    while start < len(ranked):
        end = start
        while end + 1 < len(ranked) and ranked[end + 1][0] == ranked[start][0]:
            end += 1
        mid = (start + end) / 2 + 1
        rank_sum += mid * sum(kind for _, kind in ranked[start : end + 1])
        start = end + 1
    n1, n2 = len(positives), len(negatives)
    area = (rank_sum - n1 * (n1 + 1) / 2) / (n1 * n2)
    q1 = area / (2 - area)
    q2 = 2 * area * area / (1 + area)
    variance = (
        area * (1 - area) + (n1 - 1) * (q1 - area * area) + (n2 - 1) * (q2 - area * area)
    ) / (n1 * n2)
    half = z * math.sqrt(max(variance, 0.0))
    return area, max(0.0, area - half), min(1.0, area + half)


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile ``share`` (0 to 1) of ``values`` (at least one)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]
