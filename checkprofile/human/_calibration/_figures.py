"""The figures of calibration and their uncertainty: the confusion matrix of a model's results
against people's decisions, agreement, Cohen's kappa, the shares sent to a person and passed
wrongly, each with a Wilson score interval, and the calibration of the probabilities and
confidences themselves (expected calibration error, Brier score, a reliability table).

Intervals. Every share is given with its 95% **Wilson score interval** (``low``, ``high``):
unlike the normal approximation it stays inside [0, 1] and keeps close to its level on few
cases. The guarantee of :mod:`._calibrate_recommend` uses exact (Clopper–Pearson) binomial
bounds instead, since it must hold, not just be close.

Calibration. The expected calibration error is computed on **10 equal-width bins** of
[0, 1], each closed on the left, [0, 0.1), [0.1, 0.2), ..., [0.9, 1] (the last takes 1 too),
as netcal (``ECE(bins=10)``, numpy's histogram over ``linspace(0, 1, 11)``) and jev-eval bin
them: ECE = the sum over bins of (cases in the bin / all cases) * |observed share - mean
stated probability|. A stated value is compared with an edge exactly: the number a model
writes as 0.3 is stored as 0.29999999999999998889..., just below 3/10, so it falls in
[0.2, 0.3), as it does in netcal (whose edge is the float just above 3/10); 0.1, 0.2, 0.4,
0.5, 0.8 and 0.9 are stored at or above their tenth and fall in the bin they open.
The Brier score is the mean of (probability -
outcome)², as scikit-learn's ``brier_score_loss``.
"""

from __future__ import annotations

import bisect
import collections
import fractions
import itertools
import math
import operator
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs

from ..._convert import converter
from ..._verdict import Result

__all__ = [
    "BINS",
    "MIN_CASES",
    "Confusion",
    "Figure",
    "Figures",
    "Person",
    "Reliability",
    "ReliabilityBin",
    "Z",
    "figures_of",
    "reliability",
    "share",
    "wilson",
]

#: The person's side of a case: the submission was kept as it was, or it was not.
Person = Literal["accepted", "refused"]

#: Below this many cases a figure is marked ``too_few`` (a rule of thumb: with 30 cases one
#: disagreement moves agreement by more than three points).
MIN_CASES: Final = 30

#: The normal quantile of a two-sided 95% interval.
Z: Final = 1.959963984540054

#: The bins of a reliability table: equal width, 10 of them.
BINS: Final = 10

_RESULTS: Final[tuple[Result, ...]] = ("pass", "fail", "unsure")
_PEOPLE: Final[tuple[Person, ...]] = ("accepted", "refused")


def wilson(successes: int, n: int, z: float = Z) -> tuple[float, float] | None:
    """The Wilson score interval of ``successes`` of ``n`` (``None`` when ``n`` is 0)."""
    if n <= 0:
        return None
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # At 0 or n successes the bound is exactly 0 or 1; rounding must not move it off.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


@attrs.frozen(kw_only=True)
class Figure:
    """One figure, the number of ``cases`` behind it, and whether they are ``too_few`` to
    trust it. ``value`` is ``None`` when the figure is undefined (no cases, or a kappa where
    both sides never varied). ``low`` and ``high`` bound a share's 95% Wilson interval
    (``None`` for kappa, and for a figure on no cases)."""

    value: float | None
    cases: int
    too_few: bool
    low: float | None = None
    high: float | None = None

    def at_least(self, target: float) -> bool:
        """Whether this share is at least ``target`` to trust: its interval's low bound
        reaches it, on enough cases. For one share that no search chose: of thresholds picked
        as the best of many, the report's ``meets_target`` and ``met`` are corrected for the
        search."""
        return not self.too_few and self.low is not None and self.low >= target

    def at_most(self, limit: float) -> bool:
        """Whether this share is at most ``limit`` to trust: its interval's high bound stays
        within it, on enough cases."""
        return not self.too_few and self.high is not None and self.high <= limit


def share(part: int, whole: int, min_cases: int) -> Figure:
    """``part`` of ``whole`` as a :class:`Figure` with its Wilson interval."""
    bounds = wilson(part, whole)
    return Figure(
        value=part / whole if whole else None,
        cases=whole,
        too_few=whole < min_cases,
        low=None if bounds is None else bounds[0],
        high=None if bounds is None else bounds[1],
    )


@attrs.frozen(kw_only=True)
class Confusion:
    """How many cases had each model result (rows) and each person's decision (columns)."""

    pass_accepted: int = 0
    pass_refused: int = 0
    fail_accepted: int = 0
    fail_refused: int = 0
    unsure_accepted: int = 0
    unsure_refused: int = 0

    def count(self, result: Result, person: Person) -> int:
        value: int = getattr(self, f"{result}_{person}")
        return value

    @property
    def cases(self) -> int:
        return self.decided + self.unsure

    @property
    def decided(self) -> int:
        """Cases the model would have passed or failed on its own."""
        return self.pass_accepted + self.pass_refused + self.fail_accepted + self.fail_refused

    @property
    def unsure(self) -> int:
        """Cases that would have reached a person."""
        return self.unsure_accepted + self.unsure_refused

    @property
    def agreed(self) -> int:
        return self.pass_accepted + self.fail_refused

    def to_json(self) -> dict[str, dict[str, int]]:
        """``{"pass": {"accepted": n, "refused": n}, "fail": {...}, "unsure": {...}}``."""
        return {r: {p: self.count(r, p) for p in _PEOPLE} for r in _RESULTS}


@attrs.frozen(kw_only=True)
class Figures:
    """Model against people over some cases: the ``confusion`` matrix, ``agreement`` and
    ``kappa`` over the decided cases, how many cases went ``to_person`` (unsure) and what share
    of all cases that is, and ``wrong_pass``: the share of all cases the model passed though
    the person refused them."""

    confusion: Confusion
    agreement: Figure
    kappa: Figure
    to_person: int
    to_person_share: Figure
    wrong_pass: Figure

    @property
    def cases(self) -> int:
        return self.confusion.cases

    @property
    def decided(self) -> int:
        return self.confusion.decided

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = converter.unstructure(self)
        return data


converter.register_unstructure_hook(Confusion, Confusion.to_json)


def figures_of(counts: Counter[tuple[Result, Person]], min_cases: int) -> Figures:
    """The figures of a confusion matrix given as counts by (result, person)."""
    confusion = Confusion(
        pass_accepted=counts[("pass", "accepted")],
        pass_refused=counts[("pass", "refused")],
        fail_accepted=counts[("fail", "accepted")],
        fail_refused=counts[("fail", "refused")],
        unsure_accepted=counts[("unsure", "accepted")],
        unsure_refused=counts[("unsure", "refused")],
    )
    decided, cases = confusion.decided, confusion.cases
    kappa: float | None = None
    if decided:
        # Exact, so a hand computation in the docs and tests gives the same digits: with
        # po = agreed / decided and pe = chance / decided**2, kappa = (po - pe) / (1 - pe) is
        # (agreed * decided - chance) / (decided**2 - chance), and Python divides integers
        # exactly, rounding once (as float(Fraction(...)) does).
        passed = confusion.pass_accepted + confusion.pass_refused
        accepted = confusion.pass_accepted + confusion.fail_accepted
        chance = passed * accepted + (decided - passed) * (decided - accepted)
        square = decided * decided
        kappa = (
            (confusion.agreed * decided - chance) / (square - chance) if chance != square else None
        )
    return Figures(
        confusion=confusion,
        agreement=share(confusion.agreed, decided, min_cases),
        kappa=Figure(value=kappa, cases=decided, too_few=decided < min_cases),
        to_person=confusion.unsure,
        to_person_share=share(confusion.unsure, cases, min_cases),
        wrong_pass=share(confusion.pass_refused, cases, min_cases),
    )


# --- calibration of the stated probabilities -------------------------------------------------


def _edge(k: int) -> float:
    """The smallest float at or above ``k / BINS`` exactly: a value is in bin ``k`` or above
    when it reaches it."""
    edge = k / BINS
    return (
        edge
        if fractions.Fraction(edge) >= fractions.Fraction(k, BINS)
        else math.nextafter(edge, 1.0)
    )


#: The lower edges of the bins but the first: a value at an edge falls in the bin it opens.
_EDGES: Final = tuple(_edge(k) for k in range(1, BINS))


@attrs.frozen(kw_only=True)
class ReliabilityBin:
    """One bin of a reliability table: stated values in [``low``, ``high``) (the last bin
    takes 1 too), how many ``cases`` fell in it, their ``mean_stated`` probability or
    confidence, and the ``observed`` share that came true, with its Wilson interval."""

    low: float
    high: float
    cases: int
    mean_stated: float | None
    observed: Figure

    @property
    def span(self) -> str:
        """The bin as a person reads it: ``[0.2, 0.3)``, the last ``[0.9, 1]``."""
        close = "]" if self.high >= 1 else ")"
        return f"[{self.low:g}, {self.high:g}{close}"


@attrs.frozen(kw_only=True)
class Reliability:
    """How well one question's stated probabilities (yes/no) or confidences (choice, rubric)
    match what came true, ``against`` the person's decision or their per-question ``label``:
    ``cases`` counted, ``ece`` (expected calibration error, 10 equal-width bins), ``brier``
    (Brier score), and the ``bins`` of the reliability table. ``stated`` says what the stated
    value is (``p`` of yes, or the ``confidence``) and ``outcome`` what counts as true."""

    against: Literal["decision", "label"]
    stated: Literal["p", "confidence"]
    outcome: str
    cases: int
    too_few: bool
    ece: float | None
    brier: float | None
    bins: tuple[ReliabilityBin, ...]


def reliability(
    values: Sequence[float],
    came_true: bytes,
    *,
    against: Literal["decision", "label"],
    stated: Literal["p", "confidence"],
    outcome: str,
    min_cases: int,
) -> Reliability:
    """The reliability of stated probabilities ``values`` and whether each ``came_true``
    (1 or 0). Sums are exact (:func:`math.fsum`), so the figures do not depend on the order
    of the cases."""
    where = bytes(map(bisect.bisect_right, itertools.repeat(_EDGES), values))
    n = len(where)
    stated_values: list[list[float]] = [[] for _ in range(BINS)]
    collections.deque(map(list.append, map(stated_values.__getitem__, where), values), 0)
    # The bin of each case that came true.
    hits = bytes(itertools.compress(where, came_true))
    bins = []
    gaps = []
    for index in range(BINS):
        cases = len(stated_values[index])
        mean, true = None, 0
        if cases:
            mean = math.fsum(stated_values[index]) / cases
            true = hits.count(index)
            gaps.append(cases * abs(true / cases - mean))
        bins.append(
            ReliabilityBin(
                low=index / BINS,
                high=(index + 1) / BINS,
                cases=cases,
                mean_stated=mean,
                observed=share(true, cases, min_cases),
            )
        )
    ece = math.fsum(gaps) / n if n else None
    squares = map(pow, map(operator.sub, values, came_true), itertools.repeat(2))
    return Reliability(
        against=against,
        stated=stated,
        outcome=outcome,
        cases=n,
        too_few=n < min_cases,
        ece=ece,
        brier=math.fsum(squares) / n if n else None,
        bins=tuple(bins),
    )
