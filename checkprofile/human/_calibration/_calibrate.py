"""Calibration: how well advisory verdicts matched the people who decided the same submissions,
which thresholds would have matched them best, and which thresholds for the whole check keep
its mistakes within set rates with a set confidence (profile section 4, "Earn trust first").

The pieces, each in its own module: the cases (``_calibrate_join``: verdicts joined with
decisions as the records stream in, and people's labels from ``_calibrate_labels``; kept as
columns of values and codes, ``_calibrate_columns``), the
figures and their intervals (``_calibrate_figures``), each question's suggested thresholds and
reliability (``_calibrate_search``), the whole check's recommendation with its guarantee
(``_calibrate_recommend``), and two windows compared (``_calibrate_drift``). This module puts
them together into a :class:`Calibration` report.

- **Decided** cases are those the model would pass or fail; the others are **unsure** and would
  have gone to a person. **Agreement** is the share of decided cases where pass met accepted
  or fail met refused. **Cohen's kappa** is agreement corrected for chance over the same
  decided cases (undefined when both sides always said the same thing). A **wrong pass** is a
  pass the person refused, counted as a share of all cases.
- A figure resting on fewer than ``min_cases`` cases (default :data:`MIN_CASES`) is marked
  ``too_few``: report it, but do not act on it. Nothing is **met** unless its agreement
  reaches the target with 95% confidence corrected for the threshold search (Bonferroni over
  every thresholds tried, exact binomial test; see ``_search``), on at least ``min_cases``
  decided cases.
"""

from __future__ import annotations

import gc
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs
from cattrs.gen import override

from ..._convert import converter, register_renamed
from ..._shown import show
from ..._types import is_mapping, of_type
from .._audit._sources import Window, open_sources
from .._audit._strict import TornLine
from ._columns import CheckColumns, Names, column_of, confusion, worst
from ._cost import CallCost, TokenTotal
from ._figures import MIN_CASES, Confusion, Figure, Figures, Person, figures_of
from ._join import SKIP_REASONS, TORN_SHOWN, Case, CheckCases, Join, fitting
from ._labels import check_labels, read_labels
from ._recommend import (
    CONFIDENCE,
    MAX_WRONG_FAIL,
    MAX_WRONG_PASS,
    Recommendation,
    recommend,
)
from ._search import (
    GRID,
    CurvePoint,
    Label,
    QuestionCalibration,
    Thresholds,
    agreement_bound,
    calibrate_question,
    candidates_of,
    grades,
    meets,
)

__all__ = [
    "GRID",
    "MIN_CASES",
    "SKIP_REASONS",
    "TORN_SHOWN",
    "Calibration",
    "CallCost",
    "Case",
    "CheckCalibration",
    "CheckCases",
    "Confusion",
    "CurvePoint",
    "Figure",
    "Figures",
    "Person",
    "QuestionCalibration",
    "Recommendation",
    "Thresholds",
    "TokenTotal",
    "calibrate",
    "calibrate_cases",
]


@attrs.frozen(kw_only=True)
class CheckCalibration:
    """One check: the whole verdict's figures ``at_current`` thresholds and ``at_suggested``
    ones (every question at its suggestion), whether those are ``met`` (agreement meets the
    target to trust, corrected for the searches: see ``_search``) and ``agreement_bound``,
    the low end of their agreement so corrected (``None`` on no decided case), the ``recommended``
    thresholds for the whole check with what they promise, and each question's calibration.
    ``cost``: the model calls of the check's verdict records, summed from the trail
    (:class:`CallCost`; ``None`` for cases not read from one). ``qualification``: the latest
    qualification the trail holds of the check's model for the check in force, which the
    recommendation rests on (``key``, ``model``, ``battery``, ``at``, ``qualified``; ``None``:
    none recorded)."""

    name: str
    at_current: Figures
    at_suggested: Figures
    met: bool
    recommended: Recommendation
    questions: tuple[QuestionCalibration, ...]
    cost: CallCost | None = None
    agreement_bound: float | None = None
    qualification: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = converter.unstructure(self)
        return data


@attrs.frozen(kw_only=True)
class Calibration:
    """A calibration report: the ``target`` agreement, the ``min_cases`` below which a figure
    is ``too_few``, the rates the recommendation keeps (``max_wrong_pass``,
    ``max_wrong_fail``) and its ``confidence``, each check's calibration, and ``skipped``: how
    many records were left out and why (a reason, such as ``not_advisory``, to a count).

    What it covers: the ``sources`` read (each file, and each database by a name without its
    password), the ``labels`` file if any, the window (``since``, ``until``; ``None`` for no
    bound), how many records were read more than once and counted once (``duplicates``), and
    the lines writers left unfinished, skipped: ``torn_lines`` in all, the first
    :data:`TORN_SHOWN` in ``torn``; and ``cost``, the model calls of every verdict record read
    in the window (:class:`CallCost`; ``None`` for a report made from cases)."""

    target: float
    min_cases: int
    checks: tuple[CheckCalibration, ...]
    max_wrong_pass: float = MAX_WRONG_PASS
    max_wrong_fail: float = MAX_WRONG_FAIL
    confidence: float = CONFIDENCE
    skipped: tuple[tuple[str, int], ...] = ()
    sources: tuple[str, ...] = ()
    labels: str | None = None
    since: str | None = None
    until: str | None = None
    duplicates: int = 0
    torn: tuple[TornLine, ...] = ()
    torn_lines: int = 0
    cost: CallCost | None = None

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON (``--json``)."""
        data: dict[str, Any] = converter.unstructure(self)
        return data


register_renamed(
    Calibration,
    skipped=override(unstruct_hook=dict),
)


@attrs.frozen(kw_only=True)
class _Options:
    target: float
    min_cases: int
    max_wrong_pass: float
    max_wrong_fail: float
    confidence: float


def _calibrate_check(group: CheckColumns, options: _Options) -> CheckCalibration:
    min_cases = options.min_cases
    refused = group.refused
    columns = group.columns
    graded = [grades(q, column) for q, column in zip(group.check, columns, strict=True)]
    labelled = bool(group.labels)
    questions = [
        calibrate_question(
            question,
            column,
            refused,
            graded=results,
            labels=[labels[i] if labels else None for labels in group.labels] if labelled else (),
            target=options.target,
            min_cases=min_cases,
        )
        for i, (question, column, results) in enumerate(
            zip(group.check, columns, graded, strict=True)
        )
    ]
    regraded = [
        results if c.suggested is None else grades(c.suggested.apply(q), column)
        for q, c, column, results in zip(group.check, questions, columns, graded, strict=True)
    ]

    def figures(graded: Sequence[bytes]) -> Figures:
        return figures_of(confusion(worst(graded), refused), min_cases)

    at_suggested = figures(regraded)
    # Every question's thresholds were searched (its own, or one of its candidates): the
    # check's "met" is corrected for every combination the searches could have made.
    searched = math.prod(candidates_of(question) + 1 for question in group.check)
    at_current = figures(graded)
    del graded, regraded
    return CheckCalibration(
        name=group.name,
        at_current=at_current,
        at_suggested=at_suggested,
        met=meets(at_suggested, options.target, searched),
        agreement_bound=agreement_bound(at_suggested, searched),
        recommended=recommend(
            group.check,
            columns,
            refused,
            labels=group.labels,
            max_wrong_pass=options.max_wrong_pass,
            max_wrong_fail=options.max_wrong_fail,
            confidence=options.confidence,
            min_cases=min_cases,
        ),
        questions=tuple(questions),
        cost=group.cost,
        qualification=group.qualification,
    )


def _columns(group: CheckCases) -> CheckColumns:
    """The cases of ``group``, compactly."""
    names = Names()
    labelled = any(case.labels for case in group.cases)
    return CheckColumns(
        name=group.name,
        check=group.check,
        columns=tuple(
            column_of(question, [case.answers[i] for case in group.cases], names)
            for i, question in enumerate(group.check)
        ),
        refused=bytes(case.person == "refused" for case in group.cases),
        labels=[case.labels for case in group.cases] if labelled else (),
        cost=group.cost,
    )


def calibrate_cases(
    groups: Iterable[CheckCases],
    *,
    target: float = 0.95,
    min_cases: int = MIN_CASES,
    max_wrong_pass: float = MAX_WRONG_PASS,
    max_wrong_fail: float = MAX_WRONG_FAIL,
    confidence: float = CONFIDENCE,
    skipped: Iterable[tuple[str, int]] = (),
) -> Calibration:
    """Calibrate each check of ``groups`` at ``target`` agreement, and recommend thresholds
    for it that keep wrong passes within ``max_wrong_pass`` and wrong fails within
    ``max_wrong_fail`` (shares of all submissions) with ``confidence`` (see the modules' docs
    for every definition). ``skipped`` is carried into the report as it is. Raises
    :class:`ValueError` naming the case and the question for an answer or a label that does
    not fit its question: no answer is counted that grading would refuse."""
    options = _options(target, min_cases, max_wrong_pass, max_wrong_fail, confidence)
    groups = tuple(groups)
    for group in groups:
        for case in group.cases:
            fitting(group.check, case.answers, f"case {show(case.key)} of {show(group.name)}")
            if case.labels:
                check_labels(
                    group.check,
                    case.key,
                    {
                        q.ask: label
                        for q, label in zip(group.check, case.labels, strict=True)
                        if label is not None
                    },
                )
    return _calibrated(map(_columns, groups), options, skipped=skipped)


def _calibrated(
    groups: Iterable[CheckColumns], options: _Options, *, skipped: Iterable[tuple[str, int]] = ()
) -> Calibration:
    # calibrate_cases for cases whose every answer the audit reader has checked already.
    checks = [_calibrate_check(group, options) for group in groups if len(group)]
    return Calibration(
        target=options.target,
        min_cases=options.min_cases,
        max_wrong_pass=options.max_wrong_pass,
        max_wrong_fail=options.max_wrong_fail,
        confidence=options.confidence,
        checks=tuple(checks),
        skipped=tuple(skipped),
    )


def _share(name: str, value: object, *, top: bool) -> float:
    """A share above 0 and below 1 (or at most 1 when ``top``), or a clear refusal."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (0 < value <= 1 if top else 0 < value < 1)
    ):
        bound = "at most 1" if top else "below 1"
        raise ValueError(f"{name} must be a number above 0 and {bound}, got {show(value)}")
    return float(value)


def _options(
    target: object,
    min_cases: object,
    max_wrong_pass: object,
    max_wrong_fail: object,
    confidence: object,
) -> _Options:
    if isinstance(min_cases, bool) or not isinstance(min_cases, int) or min_cases < 1:
        raise ValueError(f"min_cases must be a whole number of at least 1, got {show(min_cases)}")
    return _Options(
        target=_share("target", target, top=True),
        min_cases=min_cases,
        max_wrong_pass=_share("max_wrong_pass", max_wrong_pass, top=False),
        max_wrong_fail=_share("max_wrong_fail", max_wrong_fail, top=False),
        confidence=_share("confidence", confidence, top=False),
    )


def calibrate(
    *sources: object,
    target: float = 0.95,
    min_cases: int = MIN_CASES,
    max_wrong_pass: float = MAX_WRONG_PASS,
    max_wrong_fail: float = MAX_WRONG_FAIL,
    confidence: float = CONFIDENCE,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    labels: str | os.PathLike[str] | Mapping[str, Mapping[str, Label]] | None = None,
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

    ``labels`` (a labels file, see ``_calibrate_labels``, or a mapping from submission key to
    what each question asks to the person's label) adds each question's reliability against
    the people's own answers to it.

    ``max_wrong_pass``, ``max_wrong_fail`` and ``confidence`` set what the recommendation for
    each whole check must promise (see ``_calibrate_recommend``).

    Raises :class:`~checkprofile.human.AuditError` (naming ``FILE:LINE``) for a line that is
    not a record, and :class:`OSError` for a file that cannot be read.
    """
    options = _options(target, min_cases, max_wrong_pass, max_wrong_fail, confidence)
    if not sources:
        raise TypeError("calibrate needs at least one source (a file, a directory, records)")
    window = Window.of(since, until)
    labels_name = None
    if is_mapping(labels):
        for key, given in labels.items():
            if not of_type(key, str) or not is_mapping(given):
                raise TypeError(
                    "labels map a submission key to what each question asks to its label,"
                    f" got {show(key)}: {show(given)}"
                )
    elif labels is not None:
        labels_name = os.fspath(labels)  # type: ignore[arg-type]  # a path, not a map
        labels = read_labels(labels_name)
    join = Join(window)
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
            join.cases(labels),
            options,
            skipped=tuple((reason, join.skipped[reason]) for reason in SKIP_REASONS),
        )
    finally:
        if collecting:
            gc.enable()
    return attrs.evolve(
        report,
        sources=tuple(names),
        labels=labels_name,
        since=window.since,
        until=window.until,
        duplicates=join.duplicates,
        torn=tuple(join.torn),
        torn_lines=join.torn_lines,
        cost=join.cost(),
    )
