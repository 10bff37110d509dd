"""Strict reading of a model's numbers: what the profile accepts as an answer.

A provider's response is read as untrusted input. Every probability and confidence must be a
finite number in [0, 1]; a distribution must name each option exactly once and sum to 1 within
:data:`SUM_TOLERANCE`; a chosen answer must be a most probable option. Anything else raises
:class:`Malformed`, which an adapter turns into ``Failure("malformed", ...)`` for that question
only: a bad number never becomes a pass or a fail.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TypeVar

from .._shown import show
from .._verdict import DISTRIBUTION_TOLERANCE, ChoiceAnswer, RubricAnswer, Source, YesNoAnswer
from ._common import sendable

__all__ = [
    "SUM_TOLERANCE",
    "Malformed",
    "distribution",
    "most_probable",
    "probability",
    "read_choice",
    "read_rubric",
    "read_yes_no",
]

#: How far from 1 a distribution's sum may be. Providers send rounded numbers (System One
#: documents "values sum to approximately 1"); three-decimal rounding over the profile's
#: largest rubric (10 levels) is off by at most 0.005. Further off is not a distribution. The
#: core holds answers' distributions to the same tolerance.
SUM_TOLERANCE = DISTRIBUTION_TOLERANCE

# Two probabilities this close are a tie: the chosen answer may be any of the tied options,
# and a rubric level goes to the worse of them.
_TIE = 1e-9

K = TypeVar("K", str, int)


class Malformed(ValueError):
    """A response that cannot be read as an answer; the message names the bad value."""


def probability(value: object, what: str) -> float:
    """``value`` as a probability: a real number (not a bool), finite, in [0, 1]."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise Malformed(f"{what} must be a finite number in [0, 1], got {show(value)}")
    return float(value)


def distribution(
    pairs: Iterable[tuple[K, object]], options: Sequence[K], what: str
) -> tuple[tuple[K, float], ...]:
    """``pairs`` as a distribution over exactly ``options``, returned in ``options`` order.

    Each option must appear once, no other key may appear, each probability must pass
    :func:`probability`, and the sum must be 1 within :data:`SUM_TOLERANCE`.
    """
    seen: dict[K, float] = {}
    for key, value in pairs:
        # True == 1 in Python: a boolean key must not pass for level 1.
        if isinstance(key, bool) or key not in options:
            raise Malformed(f"{what} names {show(key)}, which was not asked")
        if key in seen:
            raise Malformed(f"{what} names {show(key)} twice")
        seen[key] = probability(value, f"{what}[{key!r}]")
    missing = [key for key in options if key not in seen]
    if missing:
        raise Malformed(f"{what} has no probability for {show(missing[0])}")
    total = math.fsum(seen.values())
    if abs(total - 1) > SUM_TOLERANCE:
        raise Malformed(f"{what} sums to {total:.6g}, not 1")
    return tuple((key, seen[key]) for key in options)


def most_probable(dist: Sequence[tuple[K, float]]) -> list[K]:
    """The options tied at the highest probability, in ``dist`` order."""
    top = max(p for _, p in dist)
    return [key for key, p in dist if top - p <= _TIE]


def read_yes_no(p: object, *, source: Source) -> YesNoAnswer:
    """A yes/no answer from the yes-probability ``p``."""
    return YesNoAnswer(probability(p, "the yes-probability"), source=source)


def read_choice(
    choice: object,
    confidence: object,
    probabilities: Iterable[tuple[str, object]],
    names: Sequence[str],
    *,
    source: Source,
) -> ChoiceAnswer:
    """A choice answer: ``choice`` must be one of ``names`` and a most probable one;
    ``confidence`` is the answer's own.

    The names were sent :func:`~checkprofile.adapters._common.sendable` (a lone surrogate
    escaped), so the provider names them so: each is read back as the name it stands for.
    """
    sent = {sendable(name): name for name in names}
    if len(sent) != len(names):
        raise Malformed("two answer names are the same text once sent: the answer is ambiguous")
    if isinstance(choice, str):
        choice = sent.get(choice, choice)
    probabilities = [
        (sent.get(key, key) if isinstance(key, str) else key, value) for key, value in probabilities
    ]
    dist = distribution(probabilities, names, "the choice probabilities")
    if not isinstance(choice, str) or choice not in names:
        raise Malformed(f"the chosen answer {show(choice)} is not one of {', '.join(names)}")
    best = most_probable(dist)
    if choice not in best:
        raise Malformed(
            f"the chosen answer {show(choice)} (p={dict(dist)[choice]:.6g}) is not the most"
            f" probable ({', '.join(best)}: p={dict(dist)[best[0]]:.6g})"
        )
    return ChoiceAnswer(
        choice,
        probability(confidence, "the confidence"),
        source=source,
        distribution=dist,
    )


def read_rubric(
    confidence: object,
    probabilities: Iterable[tuple[int, object]],
    count: int,
    *,
    source: Source,
) -> RubricAnswer:
    """A rubric answer over levels ``0 .. count-1`` (worst first): the most probable level,
    ties going to the worse (lower) level; ``confidence`` is the answer's own."""
    dist = distribution(probabilities, range(count), "the level probabilities")
    level = min(most_probable(dist))
    return RubricAnswer(
        level, probability(confidence, "the confidence"), source=source, distribution=dist
    )
