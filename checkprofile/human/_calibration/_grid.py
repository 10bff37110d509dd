"""Learn then Test with Holm over a product grid, for a check of several questions: every
combination of the questions' thresholds on a grid of :func:`grid_step` hundredths is a
hypothesis "wrong passes exceed their rate, or wrong fails exceed theirs", tested on every
case with the exact binomial p-value (the larger of the two), the hypotheses rejected by
Holm's step-down (Angelopoulos, Bates, Candès, Jordan and Lei, 2021, as MAPIE's
``ltt_procedure`` does it). Of the combinations rejected, the one sending the fewest cases to
a person is this method's choice. Every rejected combination keeps both rates at once with
the probability asked, whatever the model or the people do, since the family is fixed before
any case is read.

A check of several questions otherwise needs a path built on some of its cases and tested
on the others (:mod:`._recommend`); on months of 1,000 cases and more that loses to trying
every combination on every case (``benchmarks/bench_ltt_many.py`` for two questions,
``bench_ltt_three.py`` for three). The grid is the finest of :data:`STEPS` whose
combinations number at most :data:`MAX_COMBINATIONS` (two yes/no questions: 0.05, 53,361;
three: 0.10, 287,496); a check with more (four yes/no questions and up) has no grid, and a
month of more than :data:`MAX_WORK` cases times combinations is not tried on one (see
:func:`._recommend.recommend` for how the grid and the path are taken).

A combination is counted for every case at once: each question's result under each of its
settings is a whole number holding, per case, one byte of the result's low bits (see
``_columns.worst``); the bitwise or of the questions' numbers and of the person's decisions
(bit 2) is each case's verdict and decision, counted with ``bytes.count``. The or of the
questions before the last is made once for all the last one's settings.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Final

import attrs

from ..._check import Check, Question, YesNoQuestion
from ..._verdict import Result, grade
from ._binomial import binomial_cdf
from ._columns import RESULTS, Column, each
from ._figures import Person
from ._search import Setting, thresholds_of

__all__ = [
    "MAX_COMBINATIONS",
    "MAX_WORK",
    "STEPS",
    "GridChoice",
    "grid_choice",
    "grid_settings",
    "grid_step",
]

#: The grid steps tried, in hundredths, finest first: 0.00, 0.05, ..., 1.00 (231 settings of
#: a yes/no question, 21 of a choice or rubric), then 0.00, 0.10, ..., 1.00 (66 and 11).
#: Coarser grids were not measured against the path, so a check needing one has no grid.
STEPS: Final = (5, 10)

#: The most combinations a grid may have: two yes/no questions at 0.05 (53,361), three at
#: 0.10 (287,496), a yes/no and a choice at 0.05 (4,851), two yes/no and a choice at 0.10.
MAX_COMBINATIONS: Final = 300_000

#: The most cases times combinations tried: each combination costs a few passes over every
#: case (two yes/no questions on 20,000 cases, about 7 s on the project's two-core machine;
#: three on up to 3,700 cases, about as long).
MAX_WORK: Final = 53_361 * 20_000

# The low bits of each result (see _columns.worst), and the person's bit.
_BITS: Final = {result: (1 << index) - 1 for index, result in enumerate(RESULTS)}
_REFUSED: Final = 4
_PERSON: Final = bytes.maketrans(b"\0\1", bytes((0, _REFUSED)))


def grid_settings(question: Question, step: int = STEPS[0]) -> list[Setting]:
    """Every setting of ``question`` on the grid of ``step`` hundredths, strictest first."""
    if isinstance(question, YesNoQuestion):
        return [(p, f) for p in range(100, -1, -step) for f in range(0, p + 1, step)]
    return [(c,) for c in range(100, -1, -step)]


def grid_step(check: Check, cases: int) -> int | None:
    """The step of ``check``'s grid on ``cases`` cases: the finest of :data:`STEPS` with at
    most :data:`MAX_COMBINATIONS` combinations; ``None`` when none has, when the check has
    one question (its sequences do better: :mod:`._recommend`) or when trying them on every
    case would pass :data:`MAX_WORK`."""
    if len(check) < 2:
        return None
    for step in STEPS:
        combinations = math.prod(len(grid_settings(question, step)) for question in check)
        if combinations <= MAX_COMBINATIONS:
            return step if combinations * cases <= MAX_WORK else None
    return None


@attrs.frozen(kw_only=True)
class GridChoice:
    """What Holm over the grid chose: each question's ``settings`` and the ``counts`` of the
    verdicts under them by person; the ``level`` they were rejected at (``None``: no
    combination was, and they are the closest, of the least p-value); the grid's ``step``;
    how many combinations were ``tested`` and ``rejected``."""

    settings: tuple[Setting, ...]
    counts: Counter[tuple[Result, Person]]
    level: float | None
    step: int
    tested: int
    rejected: int


def grid_choice(
    check: Check,
    columns: Sequence[Column],
    refused: bytes,
    *,
    step: int,
    max_wrong_pass: float,
    max_wrong_fail: float,
    level: float,
) -> GridChoice:
    """Holm over the product grid of ``step`` hundredths of the questions of ``check`` at
    ``level``, on every case (``columns`` of their answers, whether the person ``refused``
    each)."""
    n = len(refused)
    person = int.from_bytes(refused.translate(_PERSON), "little")
    sides: list[list[tuple[Setting, int]]] = []
    for question, column in zip(check, columns, strict=True):
        cells = column.cells()
        distinct = set(cells)
        side = []
        for setting in grid_settings(question, step):
            graded = thresholds_of(question, setting).apply(question)
            table = {cell: _BITS[grade(graded, column.of_cell(cell))] for cell in distinct}
            side.append((setting, int.from_bytes(each(table, cells), "little")))
        sides.append(side)
    pass_tail = functools.cache(lambda k: binomial_cdf(k, n, max_wrong_pass))
    fail_tail = functools.cache(lambda k: binomial_cdf(k, n, max_wrong_fail))
    wrong_pass_at, wrong_fail_at = _REFUSED | _BITS["pass"], _BITS["fail"]
    unsure_at = (_BITS["unsure"], _REFUSED | _BITS["unsure"])
    tested = []
    for chosen, bits in _combinations(sides, person):
        verdicts = bits.to_bytes(n, "little")
        wrong_pass, wrong_fail = verdicts.count(wrong_pass_at), verdicts.count(wrong_fail_at)
        unsure = verdicts.count(unsure_at[0]) + verdicts.count(unsure_at[1])
        p_value = max(pass_tail(wrong_pass), fail_tail(wrong_fail))
        tested.append((p_value, unsure, chosen))
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
    found = best[1] if best is not None else order[0]  # else the closest: the least p-value
    indexes = tested[found][2]
    bits = person
    for side, index in zip(sides, indexes, strict=True):
        bits |= side[index][1]
    return GridChoice(
        settings=tuple(side[index][0] for side, index in zip(sides, indexes, strict=True)),
        counts=_counts(bits.to_bytes(n, "little")),
        level=None if best is None else best[2],
        step=step,
        tested=m,
        rejected=rejected,
    )


def _combinations(
    sides: Sequence[Sequence[tuple[Setting, int]]], person: int
) -> Iterator[tuple[tuple[int, ...], int]]:
    """Every combination of one setting per question, as the index of each question's
    setting and the or of their bits with the person's; the last question's setting varies
    fastest (the grid's order). The or of the questions before the last is made once for all
    of the last one's settings."""
    *before, last = sides
    for chosen in itertools.product(*(range(len(side)) for side in before)):
        bits = person
        for side, index in zip(before, chosen, strict=True):
            bits |= side[index][1]
        for index, (_, column) in enumerate(last):
            yield (*chosen, index), bits | column


def _counts(verdicts: bytes) -> Counter[tuple[Result, Person]]:
    counts: Counter[tuple[Result, Person]] = Counter()
    for result, bits in _BITS.items():
        counts[(result, "accepted")] = verdicts.count(bits)
        counts[(result, "refused")] = verdicts.count(bits | _REFUSED)
    return counts
