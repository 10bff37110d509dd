"""Learn then Test with Holm over a product grid, for a check of two questions: every
combination of the two questions' thresholds on a grid of :data:`STEP` hundredths is a
hypothesis "wrong passes exceed their rate, or wrong fails exceed theirs", tested on every
case with the exact binomial p-value (the larger of the two), the hypotheses rejected by
Holm's step-down (Angelopoulos, Bates, Candès, Jordan and Lei, 2021, as MAPIE's
``ltt_procedure`` does it). Of the combinations rejected, the one sending the fewest cases to
a person is this method's choice. Every rejected combination keeps both rates at once with
the probability asked, whatever the model or the people do, since the family is fixed before
any case is read.

A check of several questions otherwise needs a path built on some of its cases and tested
on the others (:mod:`._recommend`); on months of 1,000 cases and more that loses to trying
every combination on every case (``benchmarks/bench_ltt_many.py``). A check of two
questions is recommended by this method alone from 1,000 cases, and below by the better of
this and the path, each at half the level (see :func:`._recommend.recommend`).

A combination is counted for every case at once: each question's result under each of its
settings is a whole number holding, per case, one byte of the result's low bits (see
``_columns.worst``); the bitwise or of the two questions' numbers and of the person's
decisions (bit 2) is each case's verdict and decision, counted with ``bytes.count``.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Final

import attrs

from ..._check import Check, Question, YesNoQuestion
from ..._verdict import Result, grade
from ._binomial import binomial_cdf
from ._columns import RESULTS, Column, each
from ._figures import Person
from ._search import Setting, thresholds_of

__all__ = ["MAX_CASES", "STEP", "GridChoice", "grid_choice", "grid_settings"]

#: The grid's step in hundredths: 0.00, 0.05, ..., 1.00, as ``benchmarks/bench_ltt_many.py``
#: compares (231 settings of a yes/no question, 21 of a choice or rubric; 53,361
#: combinations of two yes/no questions).
STEP: Final = 5

#: The most cases this method is tried on: each combination costs a few passes over every
#: case (the 53,361 combinations of two yes/no questions: about 1 s at 3,000 cases, 7 s at
#: 20,000, on the project's two-core machine; a yes/no and a choice, 4,851: a tenth of that).
MAX_CASES: Final = 20_000

# The low bits of each result (see _columns.worst), and the person's bit.
_BITS: Final = {result: (1 << index) - 1 for index, result in enumerate(RESULTS)}
_REFUSED: Final = 4
_PERSON: Final = bytes.maketrans(b"\0\1", bytes((0, _REFUSED)))


def grid_settings(question: Question) -> list[Setting]:
    """Every setting of ``question`` on the grid, strictest first."""
    if isinstance(question, YesNoQuestion):
        return [(p, f) for p in range(100, -1, -STEP) for f in range(0, p + 1, STEP)]
    return [(c,) for c in range(100, -1, -STEP)]


@attrs.frozen(kw_only=True)
class GridChoice:
    """What Holm over the grid chose: each question's ``settings`` and the ``counts`` of the
    verdicts under them by person; the ``level`` they were rejected at (``None``: no
    combination was, and they are the closest, of the least p-value); how many combinations
    were ``tested`` and ``rejected``."""

    settings: tuple[Setting, ...]
    counts: Counter[tuple[Result, Person]]
    level: float | None
    tested: int
    rejected: int


def grid_choice(
    check: Check,
    columns: Sequence[Column],
    refused: bytes,
    *,
    max_wrong_pass: float,
    max_wrong_fail: float,
    level: float,
) -> GridChoice:
    """Holm over the product grid of the two questions of ``check`` at ``level``, on every
    case (``columns`` of their answers, whether the person ``refused`` each)."""
    assert len(check) == 2
    n = len(refused)
    person = int.from_bytes(refused.translate(_PERSON), "little")
    sides: list[list[tuple[Setting, int]]] = []
    for question, column in zip(check, columns, strict=True):
        cells = column.cells()
        distinct = set(cells)
        side = []
        for setting in grid_settings(question):
            graded = thresholds_of(question, setting).apply(question)
            table = {cell: _BITS[grade(graded, column.of_cell(cell))] for cell in distinct}
            side.append((setting, int.from_bytes(each(table, cells), "little")))
        sides.append(side)
    pass_tail = functools.cache(lambda k: binomial_cdf(k, n, max_wrong_pass))
    fail_tail = functools.cache(lambda k: binomial_cdf(k, n, max_wrong_fail))
    wrong_pass_at, wrong_fail_at = _REFUSED | _BITS["pass"], _BITS["fail"]
    unsure_at = (_BITS["unsure"], _REFUSED | _BITS["unsure"])
    tested = []
    for (one, bits_one), (two, bits_two) in itertools.product(*sides):
        verdicts = (bits_one | bits_two | person).to_bytes(n, "little")
        wrong_pass, wrong_fail = verdicts.count(wrong_pass_at), verdicts.count(wrong_fail_at)
        unsure = verdicts.count(unsure_at[0]) + verdicts.count(unsure_at[1])
        p_value = max(pass_tail(wrong_pass), fail_tail(wrong_fail))
        tested.append((p_value, unsure, one, two))
    # Holm's step-down: the k-th smallest p-value (from 0) is rejected at level / (m - k), as
    # long as every smaller one was. Ties in p-value are taken strictest first (the grid's
    # order), so the choice is a function of the cases alone.
    order = sorted(range(len(tested)), key=lambda i: tested[i][0])
    m = len(tested)
    best: tuple[tuple[int, int], int, float] | None = None
    rejected = 0
    for rank, i in enumerate(order):
        at = level / (m - rank)
        if tested[i][0] > at:
            break
        rejected += 1
        key = (tested[i][1], i)  # the fewest to a person; then the strictest
        if best is None or key < best[0]:
            best = (key, i, at)
    chosen = best[1] if best is not None else order[0]  # else the closest: the least p-value
    _, _, one, two = tested[chosen]
    bits = dict(sides[0])[one] | dict(sides[1])[two] | person
    return GridChoice(
        settings=(one, two),
        counts=_counts(bits.to_bytes(n, "little")),
        level=None if best is None else best[2],
        tested=m,
        rejected=rejected,
    )


def _counts(verdicts: bytes) -> Counter[tuple[Result, Person]]:
    counts: Counter[tuple[Result, Person]] = Counter()
    for result, bits in _BITS.items():
        counts[(result, "accepted")] = verdicts.count(bits)
        counts[(result, "refused")] = verdicts.count(bits | _REFUSED)
    return counts
