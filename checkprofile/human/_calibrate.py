"""Calibration: how well advisory verdicts matched the people who decided the same submissions,
and which thresholds would have matched them best (profile section 4, "Earn trust first").

Everything here but :func:`calibrate`'s reading of its sources (done by ``_audit_sources``) is
a pure function over typed values, and every answer is re-graded with the core's own
:func:`checkprofile.grade` under the thresholds being tried, so calibration can never disagree
with what the check would really do.

The definitions (docs/earning-trust.md says the same for users):

- A **case** is one submission with an advisory verdict that answered (not ``error``) and the
  decision of a person who saw it. ``completed`` with the candidate as submitted is
  **accepted**; ``returned``, ``failed``, and ``completed`` with the person's own output are
  **refused** (the submission itself was not good enough to keep).
- **Decided** cases are those the model would pass or fail; the others are **unsure** and would
  have gone to a person. **Agreement** is the share of decided cases where pass met accepted
  or fail met refused. **Cohen's kappa** is agreement corrected for chance over the same
  decided cases (undefined when both sides always said the same thing).
- A figure resting on fewer than ``min_cases`` cases (default :data:`MIN_CASES`) is marked
  ``too_few``: report it, but do not act on it.
- The **suggested thresholds** of a question are searched on a grid of 0.01 steps: ``pass``
  and optional ``fail`` (``fail <= pass``) for yes/no, ``confidence`` for choice and rubric
  (answer lists and pass levels stay as they are). Among the thresholds whose agreement is at
  least the target on at least ``min_cases`` decided cases, the suggestion sends the fewest
  cases to a person; ties go to the higher agreement, then to the thresholds nearest the
  current ones, then to the stricter (and to no ``fail`` over a ``fail`` that changes
  nothing). When no thresholds reach the target, the suggestion is the one with the highest
  agreement, on enough decided cases where any thresholds have enough (then the fewest
  unsure, nearest, stricter), marked ``meets_target: false``.
"""

from __future__ import annotations

import bisect
import functools
import gc
import itertools
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from datetime import datetime
from typing import Any, Final, Literal

import attrs
from cattrs.gen import override

from .._bundle import canonical_json
from .._check import Check, Question, YesNoQuestion
from .._convert import converter, register_renamed, show
from .._verdict import (
    Answer,
    ChoiceAnswer,
    Result,
    YesNoAnswer,
    answer_problem,
    grade,
    recorded_answer,
    worst_of,
)
from ._audit_fast import DecisionFacts, Facts, VerdictFacts
from ._audit_records import AuditRecord, DecisionRecord, VerdictRecord
from ._audit_sources import Window, at_order, open_sources
from ._audit_strict import TornLine

__all__ = [
    "GRID",
    "MIN_CASES",
    "SKIP_REASONS",
    "TORN_SHOWN",
    "Calibration",
    "Case",
    "CheckCalibration",
    "CheckCases",
    "Confusion",
    "CurvePoint",
    "Figure",
    "Figures",
    "Person",
    "QuestionCalibration",
    "Thresholds",
    "calibrate",
    "calibrate_cases",
]

#: The person's side of a case: the submission was kept as it was, or it was not.
Person = Literal["accepted", "refused"]

#: Below this many cases a figure is marked ``too_few`` (a rule of thumb: with 30 cases one
#: disagreement moves agreement by more than three points).
MIN_CASES: Final = 30

#: The thresholds tried: 0.00, 0.01, ..., 1.00. Written as the profile's users write them.
GRID: Final[tuple[float, ...]] = tuple(round(k / 100, 2) for k in range(101))

_RESULTS: Final[tuple[Result, ...]] = ("pass", "fail", "unsure")
_PEOPLE: Final[tuple[Person, ...]] = ("accepted", "refused")


@attrs.frozen(kw_only=True)
class Case:
    """One submission: the evaluator's ``answers`` (one per question, in the check's order)
    and the ``person``'s decision on it. ``key`` joins the two in the audit trail."""

    key: str
    answers: tuple[Answer, ...]
    person: Person


@attrs.frozen(kw_only=True)
class CheckCases:
    """The cases of one check: ``name`` says which (a process's step), ``check`` holds the
    thresholds in force now, and every case answers its questions."""

    name: str
    check: Check
    cases: tuple[Case, ...] = attrs.field()

    @cases.validator
    def _answers_fit(self, _: attrs.Attribute[Any], cases: tuple[Case, ...]) -> None:
        for case in cases:
            if len(case.answers) != len(self.check):
                raise ValueError(
                    f"case {show(case.key)} has {len(case.answers)} answers for the"
                    f" {len(self.check)} questions of {show(self.name)}"
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
class Figure:
    """One figure, the number of ``cases`` behind it, and whether they are ``too_few`` to
    trust it. ``value`` is ``None`` when the figure is undefined (no cases, or a kappa where
    both sides never varied)."""

    value: float | None
    cases: int
    too_few: bool


@attrs.frozen(kw_only=True)
class Figures:
    """Model against people over some cases: the ``confusion`` matrix, ``agreement`` and
    ``kappa`` over the decided cases, and how many cases went ``to_person`` (unsure) and
    what share of all cases that is."""

    confusion: Confusion
    agreement: Figure
    kappa: Figure
    to_person: int
    to_person_share: Figure

    @property
    def cases(self) -> int:
        return self.confusion.cases

    @property
    def decided(self) -> int:
        return self.confusion.decided

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = converter.unstructure(self)
        return data


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
    the figures ``at_suggested`` (``None`` when no thresholds leave a decided case), and the
    ``curve`` of agreement against ``curve_of`` (``pass``, with ``fail`` at its suggested
    value, for yes/no; ``confidence`` otherwise)."""

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

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = converter.unstructure(self)
        return data


@attrs.frozen(kw_only=True)
class CheckCalibration:
    """One check: the whole verdict's figures ``at_current`` thresholds and ``at_suggested``
    ones (every question at its suggestion), and each question's calibration."""

    name: str
    at_current: Figures
    at_suggested: Figures
    questions: tuple[QuestionCalibration, ...]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = converter.unstructure(self)
        return data


@attrs.frozen(kw_only=True)
class Calibration:
    """A calibration report: the ``target`` agreement, the ``min_cases`` below which a figure
    is ``too_few``, each check's calibration, and ``skipped``: how many records were left out
    and why (a reason, such as ``not_advisory``, to a count).

    What it covers: the ``sources`` read (each file, and each database by a name without its
    password), the window (``since``, ``until``; ``None`` for no bound), how many records were
    read more than once and counted once (``duplicates``), and the lines writers left
    unfinished, skipped: ``torn_lines`` in all, the first :data:`TORN_SHOWN` in ``torn``."""

    target: float
    min_cases: int
    checks: tuple[CheckCalibration, ...]
    skipped: tuple[tuple[str, int], ...] = ()
    sources: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    duplicates: int = 0
    torn: tuple[TornLine, ...] = ()
    torn_lines: int = 0

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON (``--json``)."""
        data: dict[str, Any] = converter.unstructure(self)
        return data


def _thresholds_json(value: Thresholds) -> dict[str, float]:
    data = {"pass": value.pass_at, "fail": value.fail_below, "confidence": value.confidence}
    if value.pass_at is not None:
        # A yes/no question without fail: say so, as null, rather than leave it out.
        return {key: data[key] for key in ("pass", "fail")}  # type: ignore[misc]
    return {"confidence": value.confidence}  # type: ignore[dict-item]


converter.register_unstructure_hook(Thresholds, _thresholds_json)
converter.register_unstructure_hook(Confusion, Confusion.to_json)
register_renamed(
    Calibration,
    skipped=override(unstruct_hook=dict),
)


def _figures(counts: Counter[tuple[Result, Person]], min_cases: int) -> Figures:
    confusion = Confusion(
        pass_accepted=counts[("pass", "accepted")],
        pass_refused=counts[("pass", "refused")],
        fail_accepted=counts[("fail", "accepted")],
        fail_refused=counts[("fail", "refused")],
        unsure_accepted=counts[("unsure", "accepted")],
        unsure_refused=counts[("unsure", "refused")],
    )
    decided, cases = confusion.decided, confusion.cases
    agreement: float | None = None
    kappa: float | None = None
    if decided:
        # Exact, so a hand computation in the docs and tests gives the same digits: with
        # po = agreed / decided and pe = chance / decided**2, kappa = (po - pe) / (1 - pe) is
        # (agreed * decided - chance) / (decided**2 - chance), and Python divides integers
        # exactly, rounding once (as float(Fraction(...)) does).
        passed = confusion.pass_accepted + confusion.pass_refused
        accepted = confusion.pass_accepted + confusion.fail_accepted
        chance = passed * accepted + (decided - passed) * (decided - accepted)
        agreement = confusion.agreed / decided
        square = decided * decided
        kappa = (
            (confusion.agreed * decided - chance) / (square - chance) if chance != square else None
        )
    return Figures(
        confusion=confusion,
        agreement=Figure(value=agreement, cases=decided, too_few=decided < min_cases),
        kappa=Figure(value=kappa, cases=decided, too_few=decided < min_cases),
        to_person=confusion.unsure,
        to_person_share=Figure(
            value=confusion.unsure / cases if cases else None,
            cases=cases,
            too_few=cases < min_cases,
        ),
    )


def _bucket(answer: Answer) -> tuple[Hashable, int]:
    """Answers in one bucket grade alike under every threshold of :data:`GRID`: the same name or
    level, and the same number of grid values at or below the probability or confidence
    (grading compares with ``>=``)."""
    if isinstance(answer, YesNoAnswer):
        return None, bisect.bisect_right(GRID, answer.p)
    if isinstance(answer, ChoiceAnswer):
        return answer.name, bisect.bisect_right(GRID, answer.confidence)
    return answer.level, bisect.bisect_right(GRID, answer.confidence)


class _Sweep:
    """Grades one question's cases under many thresholds with :func:`grade`, but only as often
    as the results can differ.

    It relies on what :func:`grade` promises: a result depends on the answer's name or level
    and on which thresholds its probability or confidence reaches (``>=``), nothing else. So
    the answers of one name or level, sorted by :func:`_bucket`, fall into a few runs that
    reach the same thresholds; one answer of each run is graded and the run counted whole.
    Thresholds that split every run alike (a class) give the same figures, computed once.
    """

    def __init__(self, question: Question, answers: Sequence[Answer], people: Sequence[Person]):
        self.question = question
        # Per bucket: its first answer, and how many accepted and refused cases it holds.
        parts: dict[Hashable, dict[int, tuple[Answer, list[int]]]] = {}
        for answer, person in zip(answers, people, strict=True):
            part, index = _bucket(answer)
            buckets = parts.get(part)
            if buckets is None:
                buckets = parts[part] = {}
            bucket = buckets.get(index)
            if bucket is None:
                bucket = buckets[index] = (answer, [0, 0])
            bucket[1][person != "accepted"] += 1
        # Per name or level: bucket indexes ascending, an answer of each, and running totals
        # of accepted and refused cases (totals[j] counts the buckets before j).
        self.parts: list[tuple[list[int], list[Answer], list[tuple[int, int]]]] = []
        for buckets in parts.values():
            indexes = sorted(buckets)
            totals = [(0, 0)]
            for index in indexes:
                tally = buckets[index][1]
                accepted, refused = totals[-1]
                totals.append((accepted + tally[0], refused + tally[1]))
            self.parts.append((indexes, [buckets[i][0] for i in indexes], totals))
        # Grid index k splits answers into those below GRID[k] (bucket index <= k) and those
        # at or above it; two indexes with no occupied bucket between them split alike.
        occupied = sorted({index for indexes, _, _ in self.parts for index in indexes})
        self._class = [len(occupied) - bisect.bisect_right(occupied, k) for k in range(101)]
        self._figures: dict[tuple[int, ...], Figures] = {}

    def figures(self, thresholds: Thresholds, grid: tuple[int, ...], min_cases: int) -> Figures:
        """The figures under ``thresholds``, set by the ``grid`` indexes."""
        signature = (min_cases, *(self._class[k] for k in grid))
        cached = self._figures.get(signature)
        if cached is not None:
            return cached
        question = thresholds.apply(self.question)
        counts: Counter[tuple[Result, Person]] = Counter()
        for indexes, answers, totals in self.parts:
            cuts = sorted({0, len(indexes), *(bisect.bisect_right(indexes, k) for k in grid)})
            for lo, hi in itertools.pairwise(cuts):
                result = grade(question, answers[lo])
                counts[(result, "accepted")] += totals[hi][0] - totals[lo][0]
                counts[(result, "refused")] += totals[hi][1] - totals[lo][1]
        figures = self._figures[signature] = _figures(counts, min_cases)
        return figures


@functools.cache
def _candidates(yes_no: bool) -> tuple[tuple[Thresholds, tuple[int, ...]], ...]:
    """Every thresholds tried for a question, with the grid indexes that set them."""
    if yes_no:
        found: list[tuple[Thresholds, tuple[int, ...]]] = []
        for p in range(101):
            # fail=None grades as a fail equal to pass: below pass fails.
            found.append((Thresholds(pass_at=GRID[p]), (p, p)))
            found.extend(
                (Thresholds(pass_at=GRID[p], fail_below=GRID[f]), (f, p)) for f in range(p + 1)
            )
        return tuple(found)
    return tuple((Thresholds(confidence=GRID[c]), (c,)) for c in range(101))


def _values(thresholds: Thresholds) -> tuple[float, ...]:
    if thresholds.pass_at is not None:
        fail = thresholds.pass_at if thresholds.fail_below is None else thresholds.fail_below
        return (thresholds.pass_at, fail)
    assert thresholds.confidence is not None
    return (thresholds.confidence,)


def _distance(a: Thresholds, b: Thresholds) -> float:
    return sum(abs(x - y) for x, y in zip(_values(a), _values(b), strict=True))


def _merit(figures: Figures, target: float) -> tuple[Any, ...]:
    """How good thresholds with these figures are (smaller is better); empty when they
    decide no case, so there is no agreement to speak of."""
    agreement = figures.agreement.value
    if agreement is None:
        return ()
    if agreement >= target and not figures.agreement.too_few:
        return (0, figures.to_person, -agreement)
    return (1, figures.agreement.too_few, -agreement, figures.to_person)


def _closeness(thresholds: Thresholds, current: Thresholds) -> tuple[Any, ...]:
    """Among thresholds with equal figures: the nearest to the current ones, then the
    stricter, then no ``fail`` over a ``fail`` that changes nothing."""
    return (
        _distance(thresholds, current),
        tuple(-v for v in _values(thresholds)),
        thresholds.fail_below is not None,
    )


def _calibrate_question(
    question: Question,
    answers: Sequence[Answer],
    people: Sequence[Person],
    *,
    graded: Sequence[Result],
    target: float,
    min_cases: int,
) -> QuestionCalibration:
    current = Thresholds.of(question)
    at_current = _figures(Counter(zip(graded, people, strict=True)), min_cases)
    sweep = _Sweep(question, answers, people)
    # Smaller is better, in the order the module docstring gives: first the figures (the
    # same for every thresholds of a class), then, among the tied, the nearest and stricter.
    merits: dict[int, tuple[Any, ...]] = {}
    scored: list[tuple[tuple[Any, ...], Thresholds, Figures]] = []
    for thresholds, indexes in _candidates(isinstance(question, YesNoQuestion)):
        figures = sweep.figures(thresholds, indexes, min_cases)
        # The sweep hands out one Figures object per class of alike thresholds and keeps it
        # alive, so its id names the class.
        merit = merits.get(id(figures))
        if merit is None:
            merit = merits[id(figures)] = _merit(figures, target)
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
    )


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
                threshold=_values(thresholds)[0],
                agreement=figures.agreement.value,
                decided=figures.decided,
                to_person=figures.to_person,
            )
        )
    return curve


def _grades(question: Question, answers: Sequence[Answer]) -> list[Result]:
    """Each answer graded with :func:`grade`, but only once for all the answers that grade
    alike: the same name or level, on the same side of each of the question's thresholds
    (the promise :class:`_Sweep` relies on too)."""
    current = Thresholds.of(question)
    cuts = sorted(
        v for v in (current.pass_at, current.fail_below, current.confidence) if v is not None
    )
    known: dict[tuple[Hashable, int], Result] = {}
    results = []
    for answer in answers:
        side: tuple[Hashable, int]
        if isinstance(answer, YesNoAnswer):
            side = (None, bisect.bisect_right(cuts, answer.p))
        elif isinstance(answer, ChoiceAnswer):
            side = (answer.name, bisect.bisect_right(cuts, answer.confidence))
        else:
            side = (answer.level, bisect.bisect_right(cuts, answer.confidence))
        result = known.get(side)
        if result is None:
            result = known[side] = grade(question, answer)
        results.append(result)
    return results


# The core's own worst-of rule, once for each combination of results.
_worst_of = functools.cache(worst_of)


def _calibrate_check(group: CheckCases, *, target: float, min_cases: int) -> CheckCalibration:
    people = [case.person for case in group.cases]
    columns = [[case.answers[i] for case in group.cases] for i in range(len(group.check))]
    graded = [_grades(q, column) for q, column in zip(group.check, columns, strict=True)]
    questions = [
        _calibrate_question(
            question, column, people, graded=results, target=target, min_cases=min_cases
        )
        for question, column, results in zip(group.check, columns, graded, strict=True)
    ]
    regraded = [
        results if c.suggested is None else _grades(c.suggested.apply(q), column)
        for q, c, column, results in zip(group.check, questions, columns, graded, strict=True)
    ]

    def figures(grades: Sequence[Sequence[Result]]) -> Figures:
        # The verdict of each case is the worst of its questions' results.
        verdicts = map(_worst_of, zip(*grades, strict=True))
        return _figures(Counter(zip(verdicts, people, strict=True)), min_cases)

    return CheckCalibration(
        name=group.name,
        at_current=figures(graded),
        at_suggested=figures(regraded),
        questions=tuple(questions),
    )


def calibrate_cases(
    groups: Iterable[CheckCases],
    *,
    target: float = 0.95,
    min_cases: int = MIN_CASES,
    skipped: Iterable[tuple[str, int]] = (),
) -> Calibration:
    """Calibrate each check of ``groups`` at ``target`` agreement (see the module docs for
    every definition). ``skipped`` is carried into the report as it is. Raises
    :class:`ValueError` naming the case and the question for an answer that does not fit its
    question: no answer is counted that grading would refuse."""
    _options(target, min_cases)
    groups = tuple(groups)
    for group in groups:
        for case in group.cases:
            for question, answer in zip(group.check, case.answers, strict=True):
                problem = answer_problem(question, answer)
                if problem is not None:
                    raise ValueError(
                        f"case {show(case.key)} of {show(group.name)}, question"
                        f" {show(question.ask)}: {problem}"
                    )
    return _calibrated(groups, target=target, min_cases=min_cases, skipped=skipped)


def _calibrated(
    groups: Iterable[CheckCases],
    *,
    target: float,
    min_cases: int,
    skipped: Iterable[tuple[str, int]] = (),
) -> Calibration:
    # calibrate_cases for cases whose every answer the audit reader has checked already.
    checks = [
        _calibrate_check(group, target=float(target), min_cases=min_cases)
        for group in groups
        if group.cases
    ]
    return Calibration(
        target=float(target),
        min_cases=min_cases,
        checks=tuple(checks),
        skipped=tuple(skipped),
    )


#: Why a record was left out of calibration, in the order reports list them.
SKIP_REASONS: Final = ("not_advisory", "error", "no_decision", "no_verdict", "superseded")

#: At most this many torn lines are listed in a report (all are counted).
TORN_SHOWN: Final = 100

# The thresholds calibration sweeps, by kind; the rest of a question names what it asks.
_SWEPT: Final[dict[str, tuple[str, ...]]] = {
    "yes_no": ("pass", "fail"),
    "choice": ("confidence",),
    "rubric": ("confidence",),
}


def _asked(check: Check) -> str:
    """What a check asks, its swept thresholds left out: verdicts on one step whose checks
    differ only in those thresholds are calibrated together."""
    return canonical_json(
        [
            {key: value for key, value in data.items() if key not in _SWEPT[question.kind]}
            for question, data in zip(check, check.to_json(), strict=True)
        ]
    )


def _name(step: str, asked: str, model: str, groups: Sequence[tuple[str, str, str]]) -> str:
    """The step's id, and what tells its group from the step's other groups: the check's
    number (in order of appearance) when the step's checks differ, the model when it does."""
    same_step = [group for group in groups if group[0] == step]
    asks = list(dict.fromkeys(group[1] for group in same_step))
    parts = []
    if len(asks) > 1:
        parts.append(f"check {asks.index(asked) + 1}")
    if len({group[2] for group in same_step}) > 1:
        parts.append(f"model {model}")
    return f"{step} ({', '.join(parts)})" if parts else step


def _options(target: object, min_cases: object) -> None:
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target <= 1:
        raise ValueError(f"target must be a number above 0 and at most 1, got {show(target)}")
    if isinstance(min_cases, bool) or not isinstance(min_cases, int) or min_cases < 1:
        raise ValueError(f"min_cases must be a whole number of at least 1, got {show(min_cases)}")


class _Submission:
    """What calibration keeps of one submission while it reads: a fingerprint of each distinct
    record of it (an int for one, a set for more), the verdict that counts (the latest advisory
    verdict that answered: its time, read order, group, check and answers) and the decision
    that counts (the latest), never the records themselves."""

    __slots__ = (
        "accepted",
        "answers",
        "check",
        "checked",
        "decided_at",
        "decided_in_window",
        "decided_position",
        "decisions",
        "group",
        "verdict_at",
        "verdict_position",
        "verdicts",
    )

    def __init__(self) -> None:
        self.checked = False  # a verdict was read, in the window or not
        self.verdicts: int | set[int] | None = None  # fingerprints of those in the window
        self.decisions: int | set[int] | None = None
        self.verdict_at = ""  # at_order of the verdict that counts ("": none)
        self.verdict_position = 0
        self.group = 0
        self.check: Check | None = None
        self.answers: tuple[Answer, ...] = ()
        self.decided_at = ""  # at_order of the decision that counts ("": none)
        self.decided_position = 0
        self.accepted = False
        self.decided_in_window = False


def _new(known: int | set[int] | None, fingerprint: int) -> int | set[int] | None:
    """``known`` with ``fingerprint`` added, or ``None`` when it was there already."""
    if known is None:
        return fingerprint
    if isinstance(known, int):
        return None if known == fingerprint else {known, fingerprint}
    if fingerprint in known:
        return None
    known.add(fingerprint)
    return known


def _count(known: int | set[int] | None) -> int:
    return 0 if known is None else 1 if isinstance(known, int) else len(known)


class _Join:
    """Joins verdicts and decisions by submission key as they stream in (:class:`_Submission`
    holds what is kept of each)."""

    def __init__(self, window: Window) -> None:
        self.since, self.until = window.bounds
        self.position = 0
        self.skipped: Counter[str] = Counter()
        self.duplicates = 0
        self.torn: list[TornLine] = []
        self.torn_lines = 0
        self.submissions: dict[str, _Submission] = {}
        self.groups: dict[tuple[str, str, str], int] = {}
        self.asked: dict[str, str] = {}  # check key -> what it asks

    def add(self, item: AuditRecord | Facts | TornLine, fingerprint: int) -> None:
        self.position += 1
        if isinstance(item, VerdictFacts):
            self._verdict(
                item.key,
                fingerprint,
                item.at,
                item.advisory,
                item.verdict,
                item.step,
                item.model,
                item.check,
                item.check_key,
                item.answers,
            )
        elif isinstance(item, VerdictRecord):
            verdict = item.verdict
            self._verdict(
                item.key,
                fingerprint,
                verdict.at,
                verdict.advisory,
                verdict.verdict,
                item.step,
                verdict.model,
                item.check,
                item.check_key,
                ()
                if verdict.verdict == "error"
                else tuple(map(recorded_answer, verdict.questions)),
            )
        elif isinstance(item, DecisionFacts):
            self._decision(item.key, fingerprint, item.at, item.accepted)
        elif isinstance(item, DecisionRecord):
            self._decision(item.key, fingerprint, item.decision.at, item.accepted)
        elif isinstance(item, TornLine):
            self.torn_lines += 1
            if len(self.torn) < TORN_SHOWN:
                self.torn.append(item)
        else:
            raise TypeError(f"an audit record is needed (see read_records), got {show(item)}")

    def _in_window(self, order: str) -> bool:
        return (self.since is None or order >= self.since) and (
            self.until is None or order < self.until
        )

    def _submission(self, key: str) -> _Submission:
        found = self.submissions.get(key)
        if found is None:
            found = self.submissions[key] = _Submission()
        return found

    def _verdict(
        self,
        key: str,
        fingerprint: int,
        at_text: str,
        advisory: bool,
        name: str,
        step: str,
        model: str,
        check: Check,
        check_key: str,
        answers: tuple[Answer, ...],
    ) -> None:
        submission = self._submission(key)
        submission.checked = True
        at = at_order(at_text)
        if not self._in_window(at):
            return
        known = _new(submission.verdicts, fingerprint)
        if known is None:  # the same record again (two replicas wrote it)
            self.duplicates += 1
            return
        submission.verdicts = known
        if not advisory:
            self.skipped["not_advisory"] += 1
            return
        if name == "error":
            self.skipped["error"] += 1
            return
        if submission.verdict_at:
            self.skipped["superseded"] += 1
            if (at, self.position) < (submission.verdict_at, submission.verdict_position):
                return
        asked = self.asked.get(check_key)
        if asked is None:
            asked = self.asked[check_key] = _asked(check)
        submission.group = self.groups.setdefault((step, asked, model), len(self.groups))
        submission.verdict_at, submission.verdict_position = at, self.position
        submission.check, submission.answers = check, answers

    def _decision(self, key: str, fingerprint: int, at_text: str, accepted: bool) -> None:
        submission = self._submission(key)
        known = _new(submission.decisions, fingerprint)
        if known is None:
            self.duplicates += 1
            return
        submission.decisions = known
        at = at_order(at_text)
        if (at, self.position) >= (submission.decided_at, submission.decided_position):
            submission.decided_at, submission.decided_position = at, self.position
            submission.accepted = accepted
            submission.decided_in_window = self._in_window(at)

    def cases(self) -> list[CheckCases]:
        """The cases of each check; what was kept per submission is let go on the way."""
        by_group: dict[int, list[Case]] = {}
        first: dict[int, tuple[str, int]] = {}  # each group's first verdict, and its latest
        latest: dict[int, tuple[str, int, Check]] = {}
        while self.submissions:
            key, submission = self.submissions.popitem()
            decisions = _count(submission.decisions)
            if submission.verdicts is not None:  # a verdict in the window
                self.skipped["superseded"] += max(decisions - 1, 0)
                if not submission.verdict_at:
                    continue
                if not decisions:
                    self.skipped["no_decision"] += 1
                    continue
                group = submission.group
                when = (submission.verdict_at, submission.verdict_position)
                person: Person = "accepted" if submission.accepted else "refused"
                by_group.setdefault(group, []).append(
                    Case(key=key, answers=submission.answers, person=person)
                )
                first[group] = min(first.get(group, when), when)
                if group not in latest or when > latest[group][:2]:
                    assert submission.check is not None
                    latest[group] = (*when, submission.check)
            elif decisions and not submission.checked and submission.decided_in_window:
                self.skipped["no_verdict"] += 1
                self.skipped["superseded"] += decisions - 1
        # Checks in the order of their first verdict (its time, then the order read), so the
        # report is the same whichever replica's file comes first; cases in the order read.
        names = list(self.groups)
        order = sorted(by_group, key=first.__getitem__)
        shown = [names[group] for group in order]
        return [
            CheckCases(
                name=_name(*names[group], shown),
                check=latest[group][2],
                cases=tuple(reversed(by_group[group])),
            )
            for group in order
        ]


def calibrate(
    *sources: object,
    target: float = 0.95,
    min_cases: int = MIN_CASES,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
) -> Calibration:
    """The calibration report of an audit trail kept in one or more ``sources``.

    A source is a JSON Lines file, a directory (its ``*.jsonl`` files, by name), a
    :class:`~checkprofile.human.PostgresRecorder`, or an iterable of records (such as
    :func:`~checkprofile.human.read_records` gives). Several replicas' trails are read as one:
    a verdict and a decision join by their submission key whichever source holds them, and a
    record found in two sources (or twice in one) counts once (``duplicates``). Files are
    read one line at a time; memory grows with the submissions read, not with the lines.

    ``since`` and ``until`` choose a window (RFC 3339, UTC ``Z`` or an offset, or a date for
    midnight UTC; or aware datetimes): a verdict is in it when its ``at`` is at or after
    ``since`` and before ``until``, and it takes the decisions on its submission whenever they
    were made. Verdicts outside the window, and the decisions on them, are not counted at all;
    a decision on a submission with no verdict anywhere is counted (``no_verdict``) when its
    own ``at`` is in the window.

    Each advisory verdict that answered is joined with the decision of the person who saw the
    same submission: of several records of either, the latest by ``at`` wins (at the same
    time, the one read last). Verdicts are grouped by step, by what their check asks
    (thresholds aside) and by the model that answered (thresholds that suit one model need not
    suit another); the thresholds in force are those of the group's latest verdict. Records
    left out are counted in ``skipped``, by reason: ``not_advisory`` (a blocking verdict
    changed what people saw), ``error`` (the evaluator did not answer), ``no_decision`` (no
    person decided the submission yet), ``no_verdict`` (a decision on a submission with no
    verdict at all), ``superseded`` (an earlier record of a submission recorded again). A
    decision on a submission whose verdict was left out is left out with it, and not counted
    again. A line a writer left unfinished is skipped and listed in ``torn``.

    Raises :class:`~checkprofile.human.AuditError` (naming ``FILE:LINE``) for a line that is
    not a record, and :class:`OSError` for a file that cannot be read.
    """
    _options(target, min_cases)
    if not sources:
        raise TypeError("calibrate needs at least one source (a file, a directory, records)")
    window = Window.of(since, until)
    join = _Join(window)
    names, stream = open_sources(sources, window)
    # Calibration makes millions of small objects, none of them in a cycle; the cyclic
    # collector would walk all that stay alive again and again (a third of the time,
    # measured). It is paused meanwhile, and left as it was.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for item, fingerprint in stream:
            join.add(item, fingerprint)
        report = _calibrated(
            join.cases(),
            target=target,
            min_cases=min_cases,
            skipped=tuple((reason, join.skipped[reason]) for reason in SKIP_REASONS),
        )
    finally:
        if collecting:
            gc.enable()
    return attrs.evolve(
        report,
        sources=tuple(names),
        since=window.since,
        until=window.until,
        duplicates=join.duplicates,
        torn=tuple(join.torn),
        torn_lines=join.torn_lines,
    )
