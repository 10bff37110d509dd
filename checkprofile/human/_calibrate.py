"""Calibration: how well advisory verdicts matched the people who decided the same submissions,
and which thresholds would have matched them best (profile section 4, "Earn trust first").

Everything here is a pure function over typed values: the audit trail is read elsewhere, and
every answer is re-graded with the core's own :func:`checkprofile.grade` under the thresholds
being tried, so calibration can never disagree with what the check would really do.

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
import itertools
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from fractions import Fraction
from typing import Any, Final, Literal

import attrs
from cattrs.gen import override

from .._bundle import canonical_json
from .._check import Check, Question, YesNoQuestion
from .._convert import converter, register_renamed, show
from .._verdict import _RANK, Answer, ChoiceAnswer, Result, YesNoAnswer, _answer_of, grade
from ._audit import AuditRecord, DecisionRecord, VerdictRecord

__all__ = [
    "GRID",
    "MIN_CASES",
    "SKIP_REASONS",
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
        return sum(self.count(r, p) for r in _RESULTS for p in _PEOPLE)

    @property
    def decided(self) -> int:
        """Cases the model would have passed or failed on its own."""
        return self.cases - self.unsure

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
    and why (a reason, such as ``not_advisory``, to a count)."""

    target: float
    min_cases: int
    checks: tuple[CheckCalibration, ...]
    skipped: tuple[tuple[str, int], ...] = ()

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
    confusion = Confusion(**{f"{r}_{p}": counts[(r, p)] for r in _RESULTS for p in _PEOPLE})
    decided, cases = confusion.decided, confusion.cases
    agreement: float | None = None
    kappa: float | None = None
    if decided:
        # Exact fractions, so a hand computation in the docs and tests gives the same digits.
        po = Fraction(confusion.agreed, decided)
        passed = confusion.pass_accepted + confusion.pass_refused
        accepted = confusion.pass_accepted + confusion.fail_accepted
        pe = Fraction(
            passed * accepted + (decided - passed) * (decided - accepted), decided * decided
        )
        agreement = float(po)
        kappa = float((po - pe) / (1 - pe)) if pe != 1 else None
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


def _worst(results: Iterable[Result]) -> Result:
    # The core's own worst-of order: unsure outranks fail, fail outranks pass.
    return max(results, key=_RANK.__getitem__)


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
        parts: dict[Hashable, dict[int, tuple[Answer, Counter[Person]]]] = {}
        for answer, person in zip(answers, people, strict=True):
            part, index = _bucket(answer)
            _, tally = parts.setdefault(part, {}).setdefault(index, (answer, Counter()))
            tally[person] += 1
        # Per name or level: bucket indexes ascending, an answer of each, and running totals
        # of accepted and refused cases (totals[j] counts the buckets before j).
        self.parts: list[tuple[list[int], list[Answer], list[tuple[int, int]]]] = []
        for buckets in parts.values():
            indexes = sorted(buckets)
            totals = [(0, 0)]
            for index in indexes:
                tally = buckets[index][1]
                accepted, refused = totals[-1]
                totals.append((accepted + tally["accepted"], refused + tally["refused"]))
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
    target: float,
    min_cases: int,
) -> QuestionCalibration:
    current = Thresholds.of(question)
    at_current = _figures(
        Counter((grade(question, a), p) for a, p in zip(answers, people, strict=True)),
        min_cases,
    )
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


def _calibrate_check(group: CheckCases, *, target: float, min_cases: int) -> CheckCalibration:
    people = [case.person for case in group.cases]
    questions = [
        _calibrate_question(
            question,
            [case.answers[i] for case in group.cases],
            people,
            target=target,
            min_cases=min_cases,
        )
        for i, question in enumerate(group.check)
    ]
    suggested = [
        q if c.suggested is None else c.suggested.apply(q)
        for q, c in zip(group.check, questions, strict=True)
    ]

    def figures(check: Sequence[Question]) -> Figures:
        counts: Counter[tuple[Result, Person]] = Counter()
        for case in group.cases:
            verdict = _worst(grade(q, a) for q, a in zip(check, case.answers, strict=True))
            counts[(verdict, case.person)] += 1
        return _figures(counts, min_cases)

    return CheckCalibration(
        name=group.name,
        at_current=figures(group.check),
        at_suggested=figures(suggested),
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
    every definition). ``skipped`` is carried into the report as it is."""
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target <= 1:
        raise ValueError(f"target must be a number above 0 and at most 1, got {show(target)}")
    if isinstance(min_cases, bool) or not isinstance(min_cases, int) or min_cases < 1:
        raise ValueError(f"min_cases must be a whole number of at least 1, got {show(min_cases)}")
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


def calibrate(
    records: Iterable[AuditRecord],
    *,
    target: float = 0.95,
    min_cases: int = MIN_CASES,
) -> Calibration:
    """The calibration report of an audit trail (:func:`~checkprofile.human.read_records`).

    Each advisory verdict that answered is joined, by its submission key, with the decision
    of the person who saw the same submission: the last record of each wins, in file order.
    Verdicts are grouped by step, by what their check asks (thresholds aside) and by the model
    that answered (thresholds that suit one model need not suit another); the thresholds in
    force are those of the group's last verdict. Records left out are counted
    in ``skipped``, by reason: ``not_advisory`` (a blocking verdict changed what people
    saw), ``error`` (the evaluator did not answer), ``no_decision`` (no person decided the
    submission yet), ``no_verdict`` (a decision on a submission with no verdict at all),
    ``superseded`` (an earlier record of a submission recorded again). A decision on a
    submission whose verdict was left out is left out with it, and not counted again.
    """
    skipped: Counter[str] = Counter()
    verdicts: dict[str, VerdictRecord] = {}
    decisions: dict[str, DecisionRecord] = {}
    order: dict[str, int] = {}  # where each kept verdict is in the file
    seen: set[str] = set()  # the key of every verdict, kept or not
    for position, record in enumerate(records):
        if isinstance(record, DecisionRecord):
            skipped["superseded"] += record.key in decisions
            decisions[record.key] = record
            continue
        if not isinstance(record, VerdictRecord):
            raise TypeError(f"an audit record is needed (see read_records), got {show(record)}")
        seen.add(record.key)
        if not record.advisory:
            skipped["not_advisory"] += 1
        elif record.result == "error":
            skipped["error"] += 1
        else:
            skipped["superseded"] += record.key in verdicts
            verdicts[record.key] = record
            order[record.key] = position
    groups: dict[tuple[str, str, str], list[tuple[VerdictRecord, DecisionRecord]]] = {}
    for key, verdict in verdicts.items():
        decision = decisions.get(key)
        if decision is None:
            skipped["no_decision"] += 1
        else:
            group = (verdict.step, _asked(verdict.check), verdict.model)
            groups.setdefault(group, []).append((verdict, decision))
    # A decision on a submission whose verdict was left out (not advisory, error) is left out
    # with it, and counted once, under the verdict's reason.
    skipped["no_verdict"] += sum(key not in seen for key in decisions)
    cases = []
    for (step, asked, model), pairs in groups.items():
        latest = max(pairs, key=lambda pair: order[pair[0].key])
        cases.append(
            CheckCases(
                name=_name(step, asked, model, list(groups)),
                check=latest[0].check,
                cases=tuple(
                    Case(
                        key=verdict.key,
                        answers=tuple(_answer_of(q) for q in verdict.verdict.questions),
                        person="accepted" if decision.accepted else "refused",
                    )
                    for verdict, decision in pairs
                ),
            )
        )
    return calibrate_cases(
        cases,
        target=target,
        min_cases=min_cases,
        skipped=tuple((reason, skipped[reason]) for reason in SKIP_REASONS),
    )
