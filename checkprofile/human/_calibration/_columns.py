"""What calibration keeps of each case, compactly: for each question, its answers over a
check's cases as arrays (the probability or confidence as a float, the name or level as a
small whole-number code, the grid bucket as a byte), never an answer object per case, and
the people's decisions beside them.

Every figure needs no more of an answer than that: :func:`checkprofile.grade` looks only at
the probability or confidence and at the name or level, and so do the reliability tables.
An answer is built again (:meth:`Column.answer`) only to be graded once for all the cases
that grade alike. A question costs 13 bytes per case (8 for the float, 4 for the code, 1 for
the bucket; its cells, once asked for, 1 or 4 more), a case's decision and half 9 more.

The figures keep results the same way, one byte per case (an index of :data:`RESULTS`), and
the functions here work on such bytes whole, at the speed of ``bytes`` and ``int`` methods
rather than a Python step per case: the worst of several questions' results, a confusion
matrix, a selection, a table applied to each case.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from ..._check import Check, ChoiceQuestion, Question, YesNoQuestion
from ..._verdict import Answer, ChoiceAnswer, Result, RubricAnswer, YesNoAnswer, worst_of
from ._cost import CallCost
from ._figures import Person

__all__ = [
    "GRID",
    "RESULTS",
    "CheckColumns",
    "Column",
    "Label",
    "Names",
    "column_of",
    "confusion",
    "differ",
    "each",
    "negated",
    "selected",
    "worst",
]

#: The thresholds tried: 0.00, 0.01, ..., 1.00. Written as the profile's users write them.
GRID: Final[tuple[float, ...]] = tuple(round(k / 100, 2) for k in range(101))

_ALL: Final[tuple[Result, ...]] = ("pass", "fail", "unsure")

#: The results as small whole numbers (their index here), ordered by the core's worst-of
#: rule: each outranks those before it, so a case's verdict is the largest of its questions'.
RESULTS: Final[tuple[Result, ...]] = tuple(
    sorted(_ALL, key=lambda result: sum(worst_of((result, other)) == result for other in _ALL))
)

#: A person's answer to one question, where a host has it: yes (``True``) or no for a yes/no
#: question, the name of an option for a choice, the level (0, 1, ...) for a rubric.
Label = bool | str | int


class Names:
    """Choice answers' names as small codes, one code per distinct name (a trail repeats a
    few names millions of times)."""

    __slots__ = ("codes", "names")

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.names: list[str] = []

    def code(self, name: str) -> int:
        found = self.codes.get(name)
        if found is None:
            found = self.codes[name] = len(self.names)
            self.names.append(name)
        return found


class Column:
    """One question's answers over a check's cases: ``values`` (each probability or
    confidence), ``codes`` (0 for yes/no, the level of a rubric answer, the code of a choice
    answer's name in ``names``) and ``buckets``: how many values of :data:`GRID` are at or
    below each value (grading with a grid threshold compares with ``>=``, so answers of one
    code and one bucket grade alike under every grid threshold)."""

    __slots__ = ("_cells", "buckets", "codes", "kind", "names", "values")
    _cells: Sequence[int]  # made by cells(), when first asked for

    def __init__(self, kind: str, values: array[float], codes: array[int], names: Names):
        self.kind = kind
        self.values = values
        self.codes = codes
        self.names = names
        grid, right = GRID, bisect.bisect_right
        self.buckets = bytes([right(grid, value) for value in values])

    def __len__(self) -> int:
        return len(self.values)

    def answer(self, case: int) -> Answer:
        """The answer of ``case``, as grading takes it."""
        return self.make(self.codes[case], self.values[case])

    def make(self, code: int, value: float) -> Answer:
        """An answer of this question with ``code`` and ``value``."""
        if self.kind == "yes_no":
            return YesNoAnswer(value)
        if self.kind == "choice":
            return ChoiceAnswer(self.names.names[code], value)
        return RubricAnswer(code, value)

    def cells(self) -> Sequence[int]:
        """Each case's cell, ``code << 7 | bucket`` (a bucket is at most 101): the answers of
        one cell grade alike under every grid threshold (see :meth:`of_cell`). Where every
        code is 0 (yes/no), the cells are the buckets, as they are. Made once, when first
        asked for."""
        try:
            return self._cells
        except AttributeError:
            pass
        cells: Sequence[int] = self.buckets
        if any(self.codes):
            cells = array(
                "i",
                map(
                    operator.or_,
                    map(operator.lshift, self.codes, itertools.repeat(7)),
                    self.buckets,
                ),
            )
        self._cells = cells
        return cells

    def of_cell(self, cell: int) -> Answer:
        """An answer of ``cell``: its code at ``GRID[bucket - 1]``, as many grid values are at
        or below it as below any answer of the bucket, so it grades as they all do under
        every grid threshold (a fitting answer is at least 0, so its bucket is at least 1)."""
        return self.make(cell >> 7, GRID[(cell & 127) - 1])

    def named(self, code: int) -> Label:
        """What an answer with ``code`` says, as a label would (a choice's name, a level)."""
        return self.names.names[code] if self.kind == "choice" else code


def worst(results: Sequence[bytes]) -> bytes:
    """Each case's verdict: the worst of its questions' ``results`` (indexes in
    :data:`RESULTS`, one ``bytes`` per question). Written with index ``i`` as its ``i`` low
    bits set, the largest of several indexes is their bitwise or, done here for every case at
    once on each question's results read as one whole number."""
    found = 0
    for mine in results:
        found |= int.from_bytes(mine.translate(_LOW_BITS), "little")
    return found.to_bytes(len(results[0]), "little").translate(_INDEXES)


# An index of RESULTS to its low bits (0, 0b1, 0b11), and back.
_LOW_BITS: Final = bytes.maketrans(
    bytes(range(len(RESULTS))), bytes((1 << i) - 1 for i in range(len(RESULTS)))
)
_INDEXES: Final = bytes.maketrans(
    bytes((1 << i) - 1 for i in range(len(RESULTS))), bytes(range(len(RESULTS)))
)


def negated(flags: bytes) -> bytes:
    """``flags`` (each 0 or 1) the other way round."""
    return flags.translate(_NEGATED)


_NEGATED: Final = bytes.maketrans(b"\0\1", b"\1\0")


def selected(values: Sequence[int], where: bytes) -> Sequence[int]:
    """The ``values`` (bytes, or whole numbers of an array) where ``where`` is 1."""
    if isinstance(values, bytes):
        return bytes(itertools.compress(values, where))
    return array("i", itertools.compress(values, where))


def differ(mine: bytes, theirs: bytes) -> bytes:
    """1 where ``mine`` and ``theirs`` (each 0 or 1) differ, else 0."""
    found = int.from_bytes(mine, "little") ^ int.from_bytes(theirs, "little")
    return found.to_bytes(len(mine), "little")


def each(table: Mapping[int, int], keys: Sequence[int]) -> bytes:
    """``table[key]`` (below 256) for each of ``keys``."""
    if isinstance(keys, bytes):
        return keys.translate(bytes(table.get(key, 0) for key in range(256)))
    return bytes(map(table.__getitem__, keys))


def confusion(results: bytes, refused: bytes) -> Counter[tuple[Result, Person]]:
    """How many cases had each result (an index in :data:`RESULTS`) and each person's
    decision (``refused``: 1 where the person refused the submission)."""
    theirs = bytes(itertools.compress(results, refused))
    counts: Counter[tuple[Result, Person]] = Counter()
    for index, result in enumerate(RESULTS):
        counts[(result, "refused")] = theirs.count(index)
        counts[(result, "accepted")] = results.count(index) - counts[(result, "refused")]
    return counts


def column_of(question: Question, answers: Sequence[Answer], names: Names) -> Column:
    """The column of ``answers`` to ``question`` (each one that fits it)."""
    values: array[float] = array("d")
    codes: array[int] = array("i")
    for answer in answers:
        if isinstance(answer, YesNoAnswer):
            values.append(answer.p)
            codes.append(0)
        elif isinstance(answer, ChoiceAnswer):
            values.append(answer.confidence)
            codes.append(names.code(answer.name))
        else:
            assert isinstance(answer, RubricAnswer)
            values.append(answer.confidence)
            codes.append(answer.level)
    kind = (
        "yes_no"
        if isinstance(question, YesNoQuestion)
        else "choice"
        if isinstance(question, ChoiceQuestion)
        else "rubric"
    )
    return Column(kind, values, codes, names)


@attrs.frozen(kw_only=True)
class CheckColumns:
    """The cases of one check, compactly: ``name`` says which check, ``check`` holds the
    thresholds in force, ``columns`` one :class:`Column` per question, ``refused`` whether the
    person refused each case (1) or accepted it (0), and ``labels`` the people's labels of
    each case (one per question, ``None`` where there is none; ``()`` for a case without any;
    empty when no case has any), and ``cost`` the model calls of the check's verdict records
    (``None``: not known); ``qualification`` the trail's latest qualification of the group's
    model for ``check`` (see ``qualification_summary``), if any."""

    name: str
    check: Check
    columns: tuple[Column, ...]
    refused: bytes
    labels: Sequence[tuple[Label | None, ...]] = ()
    cost: CallCost | None = None
    qualification: dict[str, Any] | None = None  # the one its model holds for this check

    def __len__(self) -> int:
        return len(self.refused)
