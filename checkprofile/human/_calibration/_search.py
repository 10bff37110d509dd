"""Each question on its own: its figures at the thresholds in force, the thresholds that would
have matched the people best, its curve of agreement against its threshold, and the
calibration of its stated probabilities or confidences.

The **suggested thresholds** of a question are searched on a grid of 0.01 steps: ``pass``
and optional ``fail`` (``fail <= pass``) for yes/no, ``confidence`` for choice and rubric
(answer lists and pass levels stay as they are). Only thresholds that leave at least
``min_cases`` decided cases are candidates: none is suggested from fewer. First come the
thresholds that **meet** the target to trust; then, when there are none, those whose
agreement itself reaches it. Among them the suggestion sends the fewest cases to a person;
ties go to the higher agreement, then to the thresholds nearest the current ones, then to the
stricter (a ``fail`` equal to ``pass`` is never suggested: it changes nothing). When no
thresholds reach the target, the suggestion is the one with the highest agreement (then the
fewest unsure, nearest, stricter). ``meets_target`` is true only in the first case.

**Met is a bound, corrected for the search.** A suggestion is the best of many thresholds on
the same cases, so the interval of its own agreement says too little: the best of thousands
looks better than it is. Thresholds meet the target only when the exact binomial test
(Clopper–Pearson) of "their agreement is below the target" rejects at ``(1 -``
:data:`MET_CONFIDENCE` ``) / K``, K the number of thresholds the search tried (5,151 for a
yes/no question, 101 otherwise: Bonferroni over every candidate). So, with 95% confidence,
every thresholds marked met at once have a true agreement at the target or above, whichever
the search picks; :func:`agreement_bound` is the low end of that simultaneous bound.
``benchmarks/bench_met.py`` checks the level by simulation.

Every answer is graded with the core's own :func:`checkprofile.grade`, so the search can
never disagree with what the check would really do.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
from array import array
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs

from ..._check import Question, YesNoQuestion
from ..._convert import converter
from ..._verdict import Answer, Result, grade
from ._binomial import binomial_tail, upper_bound
from ._columns import GRID, RESULTS, Column, Label, confusion, differ, each, negated
from ._figures import Figures, Person, Reliability, figures_of, reliability

__all__ = [
    "GRID",
    "MET_CONFIDENCE",
    "CurvePoint",
    "Label",
    "QuestionCalibration",
    "Thresholds",
    "agreement_bound",
    "calibrate_question",
    "candidates_of",
    "grades",
    "meets",
    "values",
]

#: The confidence with which "met" holds for every thresholds the search tried at once.
MET_CONFIDENCE: Final = 0.95


@attrs.frozen(kw_only=True)
class Thresholds:
    """The thresholds of one question, named as in the check key: ``pass`` and ``fail`` for
    yes/no, ``confidence`` for choice and rubric."""

    pass_at: float | None = None
    fail_below: float | None = None
    confidence: float | None = None

    @classmethod
    def of(cls, question: Question) -> Thresholds:
        if isinstance(question, YesNoQuestion):
            return cls(pass_at=question.pass_at, fail_below=question.fail_below)
        return cls(confidence=question.confidence)

    def apply(self, question: Question) -> Question:
        """``question`` with these thresholds."""
        if isinstance(question, YesNoQuestion) and self.pass_at is not None:
            return attrs.evolve(question, pass_at=self.pass_at, fail_below=self.fail_below)
        if not isinstance(question, YesNoQuestion) and self.confidence is not None:
            return attrs.evolve(question, confidence=self.confidence)
        raise ValueError(f"{self} are not thresholds of a {question.kind} question")

    def to_json(self) -> dict[str, float]:
        data: dict[str, float] = converter.unstructure(self)
        return data


@attrs.frozen(kw_only=True)
class CurvePoint:
    """The figures of a question at one ``threshold`` of its sweep."""

    threshold: float
    agreement: float | None
    decided: int
    to_person: int


@attrs.frozen(kw_only=True)
class QuestionCalibration:
    """One question: its figures ``at_current`` thresholds, the ``suggested`` thresholds and
    the figures ``at_suggested`` (``None`` when no thresholds leave ``min_cases`` decided
    cases), and the ``curve`` of agreement against ``curve_of`` (``pass``, with ``fail`` at
    its suggested value, for yes/no; ``confidence`` otherwise). ``meets_target`` only when the
    suggestion's agreement meets the target to trust, corrected for the search (see the
    module docstring); ``agreement_bound`` is the low end of its agreement so corrected, at
    :data:`MET_CONFIDENCE` (``None`` without a suggestion).
    ``reliability`` says how well the stated probabilities or confidences matched what came
    true: against the person's decision, and against their own labels of this question where
    a host gave any."""

    ask: str
    kind: str
    current: Thresholds
    at_current: Figures
    suggested: Thresholds | None
    at_suggested: Figures | None
    meets_target: bool
    too_few: bool
    curve_of: Literal["pass", "confidence"]
    curve: tuple[CurvePoint, ...]
    reliability: tuple[Reliability, ...] = ()
    agreement_bound: float | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = converter.unstructure(self)
        return data


def _thresholds_json(value: Thresholds) -> dict[str, float]:
    data = {"pass": value.pass_at, "fail": value.fail_below, "confidence": value.confidence}
    if value.pass_at is not None:
        # A yes/no question without fail: say so, as null, rather than leave it out.
        return {key: data[key] for key in ("pass", "fail")}  # type: ignore[misc]
    return {"confidence": value.confidence}  # type: ignore[dict-item]


converter.register_unstructure_hook(Thresholds, _thresholds_json)


class _Sweep:
    """Grades one question's cases under many thresholds with :func:`grade`, but only as often
    as the results can differ.

    It relies on what :func:`grade` promises: a result depends on the answer's name or level
    and on which thresholds its probability or confidence reaches (``>=``), nothing else. So
    the answers of one name or level, by their grid bucket (:class:`Column`), fall into a few
    runs that reach the same grid thresholds; one answer of each run is graded and the run
    counted whole. Thresholds that split every run alike (a class) give the same figures,
    computed once.
    """

    def __init__(self, question: Question, column: Column, people: bytes):
        self.question = question
        # How many accepted and refused (``people``: 1) cases each bucket of each name or
        # level holds.
        cells = column.cells()
        refusing = Counter(itertools.compress(cells, people))
        parts: dict[int, dict[int, list[int]]] = {}
        for cell, count in Counter(cells).items():
            parts.setdefault(cell >> 7, {})[cell & 127] = [count - refusing[cell], refusing[cell]]
        # Per name or level: bucket indexes ascending, an answer of each, and running totals
        # of accepted and refused cases (totals[j] counts the buckets before j). The answer of
        # bucket b stands at GRID[b - 1]: as many grid values are at or below it as below any
        # answer of the bucket, so it grades as they do under every grid threshold (a fitting
        # answer is at least 0, so its bucket is at least 1).
        self.parts: list[tuple[list[int], list[Answer], list[tuple[int, int]]]] = []
        for code, buckets in parts.items():
            indexes = sorted(buckets)
            assert indexes[0] >= 1
            totals = [(0, 0)]
            for index in indexes:
                accepted, refused = totals[-1]
                totals.append((accepted + buckets[index][0], refused + buckets[index][1]))
            answers = [column.make(code, GRID[index - 1]) for index in indexes]
            self.parts.append((indexes, answers, totals))
        # Grid index k splits answers into those below GRID[k] (bucket index <= k) and those
        # at or above it; two indexes with no occupied bucket between them split alike.
        occupied = sorted({index for indexes, _, _ in self.parts for index in indexes})
        self._class = [len(occupied) - bisect.bisect_right(occupied, k) for k in range(101)]
        self._figures: dict[tuple[int, ...], Figures] = {}
        # The result of a part's answers by the thresholds they reach, whatever those are.
        self._results: dict[tuple[int, tuple[bool, ...]], Result] = {}

    def figures(self, thresholds: Thresholds, grid: tuple[int, ...], min_cases: int) -> Figures:
        """The figures under ``thresholds``, set by the ``grid`` indexes."""
        signature = (min_cases, *(self._class[k] for k in grid))
        cached = self._figures.get(signature)
        if cached is not None:
            return cached
        question = None
        counts: Counter[tuple[Result, Person]] = Counter()
        for part, (indexes, answers, totals) in enumerate(self.parts):
            cuts = sorted({0, len(indexes), *(bisect.bisect_right(indexes, k) for k in grid)})
            for lo, hi in itertools.pairwise(cuts):
                reached = tuple(indexes[lo] > k for k in grid)
                result = self._results.get((part, reached))
                if result is None:
                    if question is None:
                        question = thresholds.apply(self.question)
                    result = self._results[(part, reached)] = grade(question, answers[lo])
                counts[(result, "accepted")] += totals[hi][0] - totals[lo][0]
                counts[(result, "refused")] += totals[hi][1] - totals[lo][1]
        figures = self._figures[signature] = figures_of(counts, min_cases)
        return figures


@functools.cache
def _candidates(yes_no: bool) -> tuple[tuple[Thresholds, tuple[int, ...]], ...]:
    """Every thresholds tried for a question, with the grid indexes that set them."""
    if yes_no:
        found: list[tuple[Thresholds, tuple[int, ...]]] = []
        for p in range(101):
            # fail=None grades as a fail equal to pass: below pass fails. So a fail equal to
            # pass is no candidate of its own: it would change nothing.
            found.append((Thresholds(pass_at=GRID[p]), (p, p)))
            found.extend(
                (Thresholds(pass_at=GRID[p], fail_below=GRID[f]), (f, p)) for f in range(p)
            )
        return tuple(found)
    return tuple((Thresholds(confidence=GRID[c]), (c,)) for c in range(101))


#: A question's setting on the grid: indexes of GRID, (pass, fail) for yes/no (a fail equal
#: to pass stands for no fail of its own: below pass fails), (confidence,) otherwise.
Setting = tuple[int, ...]


def thresholds_of(question: Question, setting: Setting) -> Thresholds:
    """The thresholds a setting stands for."""
    if isinstance(question, YesNoQuestion):
        passing, failing = setting
        return Thresholds(
            pass_at=GRID[passing], fail_below=None if failing == passing else GRID[failing]
        )
    return Thresholds(confidence=GRID[setting[0]])


def values(thresholds: Thresholds) -> tuple[float, ...]:
    if thresholds.pass_at is not None:
        fail = thresholds.pass_at if thresholds.fail_below is None else thresholds.fail_below
        return (thresholds.pass_at, fail)
    assert thresholds.confidence is not None
    return (thresholds.confidence,)


def _distance(a: Thresholds, b: Thresholds) -> float:
    return sum(abs(x - y) for x, y in zip(values(a), values(b), strict=True))


def candidates_of(question: Question) -> int:
    """How many thresholds the search tries for ``question``."""
    return len(_candidates(isinstance(question, YesNoQuestion)))


def meets(figures: Figures, target: float, candidates: int) -> bool:
    """Whether ``figures`` meet the ``target`` agreement to trust after a search among
    ``candidates`` thresholds: on enough decided cases, the exact test of "agreement below
    the target" rejects at ``(1 - MET_CONFIDENCE) / candidates``."""
    agreement = figures.agreement
    if agreement.too_few or agreement.value is None or agreement.value < target:
        return False
    level = _level(candidates)
    tail = binomial_tail(figures.confusion.agreed, figures.decided, target)
    return level > 0 and tail <= level


def _level(candidates: int) -> float:
    """The level each of ``candidates`` thresholds is tested at; 0 (nothing meets) for a
    search too large for a float to say (a check of scores of questions)."""
    return (1 - MET_CONFIDENCE) / candidates if candidates < 10**300 else 0.0


def agreement_bound(figures: Figures, candidates: int) -> float | None:
    """The low end of the agreement of ``figures``, at :data:`MET_CONFIDENCE` for every one
    of ``candidates`` thresholds at once (exact; ``None`` on no decided case)."""
    decided = figures.decided
    if not decided:
        return None
    level = _level(candidates)
    if level <= 0:
        return 0.0
    return max(0.0, 1 - upper_bound(decided - figures.confusion.agreed, decided, 1 - level))


def _merit(figures: Figures, target: float, candidates: int) -> tuple[Any, ...]:
    """How good thresholds with these figures are (smaller is better); empty when they
    decide fewer than ``min_cases`` cases, and are no candidate."""
    agreement = figures.agreement.value
    if agreement is None or figures.agreement.too_few:
        return ()
    if meets(figures, target, candidates):
        return (0, figures.to_person, -agreement)
    if agreement >= target:
        return (1, figures.to_person, -agreement)
    return (2, -agreement, figures.to_person)


def _closeness(thresholds: Thresholds, current: Thresholds) -> tuple[Any, ...]:
    """Among thresholds with equal figures: the nearest to the current ones, then the
    stricter. (No two candidates have the same values: a ``fail`` equal to ``pass``, which
    changes nothing, is not one.)"""
    return (_distance(thresholds, current), tuple(-v for v in values(thresholds)))


def calibrate_question(
    question: Question,
    answers: Column,
    refused: bytes,
    *,
    graded: bytes,
    labels: Sequence[Label | None] = (),
    target: float,
    min_cases: int,
) -> QuestionCalibration:
    """One question's calibration over its ``answers`` (a column), whether the person
    ``refused`` each (1 or 0), the answers ``graded`` at the current thresholds (see
    :func:`grades`), and the people's ``labels`` of this question (one per answer, ``None``
    where there is none; empty for none at all)."""
    current = Thresholds.of(question)
    at_current = figures_of(confusion(graded, refused), min_cases)
    sweep = _Sweep(question, answers, refused)
    # Smaller is better, in the order the module docstring gives: first the figures (the
    # same for every thresholds of a class), then, among the tied, the nearest and stricter.
    merits: dict[int, tuple[Any, ...]] = {}
    candidates = candidates_of(question)
    scored: list[tuple[tuple[Any, ...], Thresholds, Figures]] = []
    for thresholds, indexes in _candidates(isinstance(question, YesNoQuestion)):
        figures = sweep.figures(thresholds, indexes, min_cases)
        # The sweep hands out one Figures object per class of alike thresholds and keeps it
        # alive, so its id names the class.
        merit = merits.get(id(figures))
        if merit is None:
            merit = merits[id(figures)] = _merit(figures, target, candidates)
        if merit:
            scored.append((merit, thresholds, figures))
    best = None
    if scored:
        first = min(merit for merit, _, _ in scored)
        best = min(
            ((m, t, f) for m, t, f in scored if m == first),
            key=lambda item: _closeness(item[1], current),
        )
    suggested = None if best is None else best[1]
    curve = _curve(question, sweep, suggested, min_cases)
    return QuestionCalibration(
        ask=question.ask,
        kind=question.kind,
        current=current,
        at_current=at_current,
        suggested=suggested,
        at_suggested=None if best is None else best[2],
        meets_target=best is not None and best[0][0] == 0,
        too_few=len(answers) < min_cases,
        curve_of="pass" if isinstance(question, YesNoQuestion) else "confidence",
        curve=tuple(curve),
        reliability=_reliability(question, answers, refused, labels, min_cases),
        agreement_bound=None if best is None else agreement_bound(best[2], candidates),
    )


def _reliability(
    question: Question,
    answers: Column,
    refused: bytes,
    labels: Sequence[Label | None],
    min_cases: int,
) -> tuple[Reliability, ...]:
    """Against the decision: for yes/no, ``p`` against the person accepting the submission;
    for choice and rubric, the confidence against the answer being right, which is its
    name's or level's result (graded as if it were sure) meeting the decision (a pass the
    person accepted, a fail they refused; an answer whose name sends it to a person claims
    neither, and is left out). Against labels: ``p`` against the label being yes; the
    confidence against the name or level being the label."""
    found = []
    accepted = negated(refused)
    if isinstance(question, YesNoQuestion):
        found.append(
            reliability(
                answers.values,
                accepted,
                against="decision",
                stated="p",
                outcome="whether the person accepted the submission",
                min_cases=min_cases,
            )
        )
        pairs = [
            (p, label is True)
            for p, label in zip(answers.values, labels, strict=False)  # no labels: empty
            if isinstance(label, bool)
        ]
        outcome = "whether the person's label is yes"
    else:
        # Sure, an answer's result is its name's or level's alone (every confidence reaches
        # 0): one grading per name or level.
        sure = Thresholds(confidence=0.0).apply(question)
        results = each(
            {
                code: RESULTS.index(grade(sure, answers.make(code, 1.0)))
                for code in set(answers.codes)
            },
            answers.codes,
        )
        decided = each({i: result != "unsure" for i, result in enumerate(RESULTS)}, results)
        # Right: a pass the person accepted or a fail they refused, where passing and
        # refusing differ.
        passing = each({i: result == "pass" for i, result in enumerate(RESULTS)}, results)
        right = differ(passing, refused)
        found.append(
            reliability(
                array("d", itertools.compress(answers.values, decided)),
                bytes(itertools.compress(right, decided)),
                against="decision",
                stated="confidence",
                outcome="whether its result met the person's decision",
                min_cases=min_cases,
            )
        )
        pairs = [
            (value, answers.named(code) == label)
            for value, code, label in zip(answers.values, answers.codes, labels, strict=False)
            if label is not None and not isinstance(label, bool)
        ]
        outcome = "whether the answer is the person's label"
    if pairs:
        found.append(
            reliability(
                array("d", (value for value, _ in pairs)),
                bytes(came_true for _, came_true in pairs),
                against="label",
                stated="p" if isinstance(question, YesNoQuestion) else "confidence",
                outcome=outcome,
                min_cases=min_cases,
            )
        )
    return tuple(found)


def _curve(
    question: Question, sweep: _Sweep, suggested: Thresholds | None, min_cases: int
) -> list[CurvePoint]:
    points: list[tuple[Thresholds, tuple[int, ...]]] = []
    if isinstance(question, YesNoQuestion):
        fail = None if suggested is None else suggested.fail_below
        for p in range(101):
            if fail is None:
                points.append((Thresholds(pass_at=GRID[p]), (p, p)))
            elif GRID[p] >= fail:
                f = GRID.index(fail)
                points.append((Thresholds(pass_at=GRID[p], fail_below=fail), (f, p)))
    else:
        points = list(_candidates(False))
    curve = []
    for thresholds, indexes in points:
        figures = sweep.figures(thresholds, indexes, min_cases)
        curve.append(
            CurvePoint(
                threshold=values(thresholds)[0],
                agreement=figures.agreement.value,
                decided=figures.decided,
                to_person=figures.to_person,
            )
        )
    return curve


def grades(question: Question, answers: Column) -> bytes:
    """Each answer's result (its index in :data:`RESULTS`) by :func:`grade`, but graded only
    once for all the answers that grade alike: the same name or level, on the same side of
    each of the question's thresholds (the promise :class:`_Sweep` relies on too)."""
    current = Thresholds.of(question)
    cuts = sorted(
        v for v in (current.pass_at, current.fail_below, current.confidence) if v is not None
    )
    if all(cut in GRID for cut in cuts):
        # Thresholds on the grid split no bucket: the answers of one cell grade alike.
        cells = answers.cells()
        known = {cell: RESULTS.index(grade(question, answers.of_cell(cell))) for cell in set(cells)}
        return each(known, cells)
    sides = map(bisect.bisect_right, itertools.repeat(cuts), answers.values)
    # A name or level and a side (below 4: there are at most three cuts), as one number.
    kinds = array(
        "i", map(operator.add, map(operator.mul, answers.codes, itertools.repeat(4)), sides)
    )
    known = {
        kind: RESULTS.index(grade(question, answers.answer(case)))
        for kind, case in dict(zip(kinds, range(len(kinds)), strict=True)).items()
    }
    return each(known, kinds)
