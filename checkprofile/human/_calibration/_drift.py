"""Drift: two windows of the same audit trail compared, for a scheduled job to raise the alarm
when a question's agreement or calibration moved further than chance explains.

A figure **moved** when its 95% Wilson intervals in the two windows do not overlap (a
cautious test: two intervals that only just overlap can still hide a real change, but
non-overlapping ones rarely come from chance), and each window rests on at least
``min_cases`` cases; a figure on fewer cases in either window is listed, not judged. The
figures compared, for each check found in both windows (by name) and each of its questions
(by what it asks):

- **agreement** at the thresholds in force in each window, for the whole check and for each
  question;
- **calibration**: for each bin of a question's reliability table against the decision, the
  share that came true.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..._convert import converter
from ..._shown import escaped_text, one_line
from ._calibrate import Calibration, CheckCalibration
from ._figures import Figure

__all__ = ["Comparison", "Drift", "drift", "drift_text"]


@attrs.frozen(kw_only=True)
class Comparison:
    """One figure in the two windows: ``check``, ``question`` (1-based; ``None`` for the whole
    check) and what it asks, which ``figure``, its value ``before`` (the baseline window) and
    ``after`` (the recent one), whether both rest on enough cases to be ``judged``, and
    whether it ``moved``."""

    check: str
    question: int | None
    ask: str
    figure: str
    before: Figure
    after: Figure
    judged: bool
    moved: bool


@attrs.frozen(kw_only=True)
class Drift:
    """The two windows' reports and every figure compared. ``moved`` when any did."""

    baseline: Calibration
    recent: Calibration
    comparisons: tuple[Comparison, ...]
    missing: tuple[str, ...] = ()

    @property
    def moved(self) -> bool:
        return any(c.moved for c in self.comparisons)

    def to_json(self) -> dict[str, Any]:
        return {
            "moved": self.moved,
            "baseline": {"since": self.baseline.since, "until": self.baseline.until},
            "recent": {"since": self.recent.since, "until": self.recent.until},
            "comparisons": [converter.unstructure(c) for c in self.comparisons],
            "missing": list(self.missing),
        }


def _compare(
    check: str, question: int | None, ask: str, figure: str, before: Figure, after: Figure
) -> Comparison:
    judged = not before.too_few and not after.too_few
    apart = (
        judged
        and None not in (before.low, before.high, after.low, after.high)
        and (before.high < after.low or after.high < before.low)  # type: ignore[operator]
    )
    return Comparison(
        check=check,
        question=question,
        ask=ask,
        figure=figure,
        before=before,
        after=after,
        judged=judged,
        moved=apart,
    )


def _check_comparisons(before: CheckCalibration, after: CheckCalibration) -> list[Comparison]:
    found = [
        _compare(
            before.name,
            None,
            "",
            "agreement",
            before.at_current.agreement,
            after.at_current.agreement,
        )
    ]
    recent = {question.ask: question for question in after.questions}
    for number, question in enumerate(before.questions, 1):
        other = recent.get(question.ask)
        if other is None:
            continue
        found.append(
            _compare(
                before.name,
                number,
                question.ask,
                "agreement",
                question.at_current.agreement,
                other.at_current.agreement,
            )
        )
        tables = [
            (mine, theirs)
            for mine in question.reliability
            for theirs in other.reliability
            if mine.against == theirs.against == "decision"
        ]
        for mine, theirs in tables:
            for cell, later in zip(mine.bins, theirs.bins, strict=True):
                found.append(
                    _compare(
                        before.name,
                        number,
                        question.ask,
                        f"came true, stated in {cell.span}",
                        cell.observed,
                        later.observed,
                    )
                )
    return found


def drift(baseline: Calibration, recent: Calibration) -> Drift:
    """Compare the ``recent`` window's calibration with the ``baseline`` one's."""
    later = {check.name: check for check in recent.checks}
    comparisons: list[Comparison] = []
    missing = []
    for check in baseline.checks:
        other = later.get(check.name)
        if other is None:
            missing.append(check.name)
            continue
        comparisons += _check_comparisons(check, other)
    return Drift(
        baseline=baseline,
        recent=recent,
        comparisons=tuple(comparisons),
        missing=tuple(missing),
    )


def _window(report: Calibration) -> str:
    since = report.since or "the first record"
    until = report.until or "the last"
    return f"{since} to {until}"


def _shown(figure: Figure) -> str:
    if figure.value is None or figure.low is None or figure.high is None:
        return f"n/a (n={figure.cases})"
    star = "*" if figure.too_few else ""
    return f"{figure.value:.3f} ({figure.low:.3f}-{figure.high:.3f}) n={figure.cases}{star}"


def drift_text(result: Drift) -> str:
    """The comparison as plain text, moved figures first, ending in a newline."""
    lines = [
        f"Drift: baseline {_window(result.baseline)}, against recent {_window(result.recent)}.",
    ]
    moved = [c for c in result.comparisons if c.moved]
    if moved:
        lines.append(f"Moved beyond their 95% intervals: {len(moved)}.")
    else:
        lines.append("Nothing moved beyond its 95% interval.")
    for comparison in sorted(result.comparisons, key=lambda c: not c.moved):
        if comparison.before.cases == 0 and comparison.after.cases == 0:
            continue
        where = f"Q{comparison.question}" if comparison.question is not None else "check"
        mark = "MOVED" if comparison.moved else "same " if comparison.judged else "few  "
        lines.append(
            f"  {mark} {escaped_text(one_line(comparison.check))} {where} {comparison.figure}:"
            f" {_shown(comparison.before)} -> {_shown(comparison.after)}"
        )
    for name in result.missing:
        lines.append(f"  No recent cases of {escaped_text(one_line(name))}.")
    lines.append(
        "MOVED: the two windows' intervals do not overlap. few: fewer than"
        f" {result.recent.min_cases} cases (*) in a window, not judged."
    )
    return "\n".join(lines) + "\n"
