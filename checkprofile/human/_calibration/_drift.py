"""Drift: two windows of the same audit trail compared, for a scheduled job to raise the alarm
when a question's agreement or calibration moved further than chance explains.

Each figure judged is a share in each window; the two are compared by Fisher's exact test
(two-sided, as scipy's ``fisher_exact``), and a figure **moved** when its test rejects under Holm's
correction over every figure judged at once at :data:`FALSE_ALARM` (5%): so two windows of
an unchanged world raise the alarm in at most about 5% of comparisons, however many figures
are judged (``benchmarks/bench_drift.py`` measures it). A figure on fewer than
``min_cases`` cases in either window is listed, not judged. The figures compared, for each
check found in both windows (by name) and each of its questions (by what it asks):

- **agreement** at the thresholds in force in each window, for the whole check and for each
  question;
- **calibration**: for each bin of a question's reliability table against the decision, the
  share that came true.
"""

from __future__ import annotations

import math
from typing import Any, Final

import attrs

from ..._convert import converter
from ..._shown import escaped_text, one_line
from ._calibrate import Calibration, CheckCalibration
from ._figures import Figure

__all__ = ["FALSE_ALARM", "Comparison", "Drift", "drift", "drift_text"]

#: The chance that two windows of an unchanged world show any figure moved.
FALSE_ALARM: Final = 0.05


@attrs.frozen(kw_only=True)
class Comparison:
    """One figure in the two windows: ``check``, ``question`` (1-based; ``None`` for the whole
    check) and what it asks, which ``figure``, its value ``before`` (the baseline window) and
    ``after`` (the recent one), whether both rest on enough cases to be ``judged``, the
    two-sided ``p_value`` of Fisher's exact test (``None`` when not judged), and whether it
    ``moved`` (rejected under Holm's correction over every figure judged)."""

    check: str
    question: int | None
    ask: str
    figure: str
    before: Figure
    after: Figure
    judged: bool
    moved: bool
    p_value: float | None = None


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


def _count(figure: Figure) -> int:
    """How many of a share's cases it counts."""
    return round((figure.value or 0.0) * figure.cases)


def _p_value(before: Figure, after: Figure) -> float:
    """The two-sided p-value of Fisher's exact test of the two shares (as scipy's
    ``fisher_exact``: the chance, given both windows' totals, of a split as likely as the one
    seen or less). Exact, so it never claims more than its level: the terms are walked from
    the likeliest split outwards, until they are too small to count."""
    n, m = before.cases, after.cases
    k, j = _count(before), _count(after)
    total, hits = n + m, k + j
    low, high = max(0, n - (total - hits)), min(n, hits)
    if low == high:
        return 1.0

    def log_pmf(x: int) -> float:
        return _log_choose(hits, x) + _log_choose(total - hits, n - x) - _log_choose(total, n)

    mode = min(high, max(low, (n + 1) * (hits + 1) // (total + 2)))
    seen = log_pmf(k) + 1e-7  # splits as likely as the one seen, rounding aside, count
    small = min(seen, log_pmf(mode)) - 50
    found = 0.0
    for step in (1, -1):
        x = mode if step == 1 else mode - 1
        while low <= x <= high:
            log_p = log_pmf(x)
            if log_p < small:
                break  # beyond here, every term is below e**-50 of any that counted
            if log_p <= seen:
                found += math.exp(log_p)
            x += step
    return min(1.0, found)


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _compare(
    check: str, question: int | None, ask: str, figure: str, before: Figure, after: Figure
) -> Comparison:
    judged = (
        not before.too_few
        and not after.too_few
        and before.value is not None
        and after.value is not None
        and before.cases > 0
        and after.cases > 0
    )
    return Comparison(
        check=check,
        question=question,
        ask=ask,
        figure=figure,
        before=before,
        after=after,
        judged=judged,
        moved=False,
        p_value=_p_value(before, after) if judged else None,
    )


def _holm(comparisons: list[Comparison]) -> list[Comparison]:
    """The comparisons, those that Holm's step-down rejects at :data:`FALSE_ALARM` over every
    judged figure marked ``moved``."""
    judged = sorted((c.p_value, i) for i, c in enumerate(comparisons) if c.p_value is not None)
    moved = set()
    for rank, (p_value, index) in enumerate(judged):
        if p_value > FALSE_ALARM / (len(judged) - rank):
            break
        moved.add(index)
    return [attrs.evolve(c, moved=True) if i in moved else c for i, c in enumerate(comparisons)]


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
        comparisons=tuple(_holm(comparisons)),
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


def _judged(result: Drift) -> int:
    return sum(c.judged for c in result.comparisons)


def drift_text(result: Drift) -> str:
    """The comparison as plain text, moved figures first, ending in a newline."""
    lines = [
        f"Drift: baseline {_window(result.baseline)}, against recent {_window(result.recent)}.",
    ]
    moved = [c for c in result.comparisons if c.moved]
    if moved:
        lines.append(f"Moved beyond chance: {len(moved)} of {_judged(result)} figures judged.")
    else:
        lines.append(f"Nothing moved beyond chance ({_judged(result)} figures judged).")
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
        "MOVED: the two windows' shares differ beyond chance (Fisher's exact test, Holm's"
        " correction over every figure judged: an unchanged world raises a false alarm in at"
        f" most {FALSE_ALARM:.0%} of comparisons). few: fewer than"
        f" {result.recent.min_cases} cases (*) in a window, not judged."
    )
    return "\n".join(lines) + "\n"
