"""A calibration report for people: a plain-text table for a terminal, and one self-contained
HTML page with an SVG chart per question (inline CSS and SVG only: no script, font, image or
link from anywhere, so the page can be mailed or archived as it is).

Every piece of user text (check names, asks, reasons) is escaped before it enters the page.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Iterable, Sequence
from typing import Final

from ..._lines import js_number
from ..._shown import escaped_text, one_line
from ._calibrate import (
    Calibration,
    CheckCalibration,
    CurvePoint,
    Figure,
    Figures,
    QuestionCalibration,
    Recommendation,
    Thresholds,
)
from ._cost import cost_text
from ._figures import Reliability, ReliabilityBin

__all__ = ["calibration_html", "calibration_text", "qualification_text", "recommendation_text"]

_KIND: Final = {"yes_no": "yes/no", "choice": "choice", "rubric": "rubric"}
_SKIPPED: Final = {
    "not_advisory": "blocking verdicts, which changed what people saw",
    "error": "error verdicts, where the evaluator did not answer",
    "no_decision": "verdicts no person has decided yet",
    "no_verdict": "decisions on submissions with no verdict",
    "superseded": "earlier records of a submission recorded again",
}


def _shown(text: str) -> str:
    """A text of the records (a check's name, an ask, a file name) as a person is shown it:
    on one line, every character that does not print as itself escaped (the one rule receipts
    follow), so no text can rewrite the table it sits in."""
    return escaped_text(one_line(text))


def _number(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{share * 100:.1f}%"


def _thresholds(value: Thresholds | None) -> str:
    if value is None:
        return "none"
    if value.pass_at is not None:
        fail = "" if value.fail_below is None else f" fail {js_number(value.fail_below)}"
        return f"pass {js_number(value.pass_at)}{fail}"
    assert value.confidence is not None
    return f"confidence {js_number(value.confidence)}"


def _interval(figure: Figure, *, percent: bool = False, searched: bool = False) -> str:
    """A share's 95% Wilson interval, as ``(0.487-0.974)``, or nothing when undefined or when
    a search chose the thresholds (the interval, blind to the search, is not a bound then)."""
    if searched or figure.low is None or figure.high is None:
        return ""
    if percent:
        return f" ({figure.low * 100:.1f}-{figure.high * 100:.1f}%)"
    return f" ({figure.low:.3f}-{figure.high:.3f})"


def _agreement_range(figures: Figures, searched: bool, bound: float | None) -> str:
    """The agreement's 95% Wilson interval, or, for thresholds a search chose, the ``bound``
    on its agreement corrected for that search (``(>=0.874)``), which ``met`` is judged by."""
    if not searched:
        return _interval(figures.agreement)
    return "" if bound is None else f" (>={bound:.3f})"


def _cells(
    figures: Figures | None, *, searched: bool = False, bound: float | None = None
) -> list[str]:
    if figures is None:
        return ["n/a"] * 7
    # A star, or a space where there is none, keeps the right-aligned numbers in line.
    star = "*" if figures.agreement.too_few else " "
    share = figures.to_person_share
    person_star = "*" if share.too_few else " "
    c = figures.confusion
    wrong = figures.wrong_pass
    return [
        f"{_number(figures.agreement.value)}{_agreement_range(figures, searched, bound)}"
        f" n={figures.decided}{star}",
        f"{_number(figures.kappa.value, 2)}{star}",
        f"{figures.to_person}/{figures.cases} {_percent(share.value)}"
        f"{_interval(share, percent=True, searched=searched)}{person_star}",
        f"{c.pass_refused}/{figures.cases} {_percent(wrong.value)}"
        f"{_interval(wrong, percent=True, searched=searched)}{person_star}",
        f"{c.pass_accepted}/{c.pass_refused}",
        f"{c.fail_accepted}/{c.fail_refused}",
        f"{c.unsure_accepted}/{c.unsure_refused}",
    ]


_HEAD: Final = (
    "",
    "",
    "thresholds",
    "agreement",
    "kappa",
    "to a person",
    "wrong pass",
    "pass a/r",
    "fail a/r",
    "unsure a/r",
    "target",
)


def _rows(check: CheckCalibration, target: float) -> list[list[str]]:
    rows = [
        ["check", "current", "as now", *_cells(check.at_current), ""],
        [
            "",
            "suggested",
            "each question's",
            *_cells(check.at_suggested, searched=True, bound=check.agreement_bound),
            _met(check.met),
        ],
    ]
    for number, question in enumerate(check.questions, 1):
        label = f"Q{number} {_KIND.get(question.kind, question.kind)}"
        rows.append([label, "current", _thresholds(question.current), *_cells(question.at_current)])
        rows[-1].append("")
        rows.append(
            [
                "",
                "suggested",
                _thresholds(question.suggested),
                *_cells(question.at_suggested, searched=True, bound=question.agreement_bound),
                _met(question.meets_target),
            ]
        )
    return rows


def _met(met: bool) -> str:
    return "met" if met else "not met"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(width) if i < 3 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


# A report names this many sources or torn lines in its text, and counts the rest.
_NAMED: Final = 5


def _listed(items: Sequence[str], total: int) -> str:
    """The first of ``total`` items (``items`` may hold fewer), and how many more there are."""
    more = total - min(len(items), _NAMED)
    return ", ".join(items[:_NAMED]) + (f" and {more} more" if more > 0 else "")


def _coverage(calibration: Calibration) -> list[str]:
    """Which sources and which window the report covers, and what was read twice or torn."""
    lines = []
    sources = calibration.sources
    if sources:
        lines.append(f"Sources: {_listed([_shown(s) for s in sources], len(sources))}.")
    since, until = calibration.since, calibration.until
    if since is None and until is None:
        lines.append("Window: every record.")
    else:
        bounds = [f"at or after {since}"] if since is not None else []
        bounds += [f"before {until}"] if until is not None else []
        lines.append(
            f"Window: verdicts {' and '.join(bounds)}, with the decisions on them whenever made."
        )
    if calibration.duplicates:
        lines.append(
            f"Read twice, counted once: {calibration.duplicates}"
            f" record{'s' if calibration.duplicates != 1 else ''}."
        )
    if calibration.torn_lines:
        count = calibration.torn_lines
        where = [f"{_shown(torn.path)}:{torn.line}" for torn in calibration.torn]
        lines.append(
            f"Skipped: {count} torn line{'s' if count != 1 else ''} (a write that did not"
            f" finish): {_listed(where, count)}."
        )
    return lines


def _summary(calibration: Calibration) -> list[str]:
    cases = sum(check.at_current.cases for check in calibration.checks)
    lines = [
        f"Calibration: {cases} cases in {len(calibration.checks)}"
        f" check{'s' if len(calibration.checks) != 1 else ''},"
        f" target agreement {js_number(calibration.target)}.",
        *_coverage(calibration),
    ]
    for reason, count in calibration.skipped:
        if count:
            lines.append(f"Left out: {_SKIPPED.get(reason, reason)}: {count}.")
    if calibration.cost is not None and calibration.cost.calls:
        lines.append(f"Model calls, every verdict read: {cost_text(calibration.cost)}")
    return lines


def _cost_line(check: CheckCalibration) -> list[str]:
    """What the check's model calls cost, when it was read from a trail whose verdict records
    keep their calls (a trail written before they were kept says nothing of them)."""
    if check.cost is None or not check.cost.calls:
        return []
    return [f"Model calls: {cost_text(check.cost)}"]


_LEGEND: Final = (
    "agreement: share of the cases the model decided (pass or fail) where pass met accepted"
    " or fail met refused; n = those cases.",
    "to a person: unsure cases, of all cases. a/r: accepted/refused by the person"
    " (completed with the candidate is accepted; returned, failed, or completed with the"
    " person's own output is refused).",
    "wrong pass: cases the model passed though the person refused them, of all cases."
    " (low-high): the 95% Wilson interval of each share at thresholds no search chose.",
    "suggested: the thresholds that keep agreement at or above the target while sending the"
    " fewest cases to a person (or, when none reach it, the highest agreement), among those"
    " that decide enough cases. (>=low): the low end of their agreement at 95% confidence"
    " corrected for the search (every thresholds tried at once, exact binomial test); met:"
    " it reaches the target, on enough cases. A suggestion's own Wilson interval, blind to"
    " the search, is not shown: it would not be a bound.",
    "ECE: expected calibration error over 10 equal-width bins of the stated probability or"
    " confidence; Brier: mean squared gap between it and what came true.",
)


def _rate(share: float) -> str:
    """A rate the user set, as they would write it: 5%, 2.5%."""
    return f"{share * 100:.10g}%"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _all_thresholds(check: CheckCalibration, chosen: Recommendation) -> str:
    return ", ".join(
        f"Q{number} {_thresholds(thresholds)}"
        for number, thresholds in enumerate(chosen.thresholds, 1)
    )


def _spread(chosen: Recommendation) -> str:
    """How much the recommendation depends on its split of the cases, when it was made on
    others too."""
    others = chosen.other_splits
    if not others:
        return ""
    shares = [share for share in others if share is not None]
    none = len(others) - len(shares)
    nothing = f"nothing promised under {none}" if none else ""
    if not shares:
        return f"Under {len(others)} other splits of the same cases: {nothing}."
    seen = f"a person would see {_percent(min(shares))} to {_percent(max(shares))}"
    return f"Under {len(others)} other splits of the same cases, {seen}" + (
        f" ({nothing})." if nothing else "."
    )


def qualification_text(check: CheckCalibration) -> list[str]:
    """The qualification the recommendation rests on, as a sentence; none when the trail
    holds no qualification of the check's model for it."""
    held = check.qualification
    if held is None:
        return []
    word = "qualified" if held["qualified"] else "NOT qualified: it may not block"
    return [
        f"It rests on qualification {held['key'][:15]}… of {escaped_text(held['model'])} for"
        " this check"
        f" ({escaped_text(held['battery'])}, {held['at']}): {word}."
    ]


def recommendation_text(check: CheckCalibration) -> list[str]:
    """What the whole check's recommendation promises, and what it costs, in sentences."""
    chosen = check.recommended
    figures = chosen.at_recommended
    now = check.at_current
    rates = (
        f"at most {_rate(chosen.max_wrong_pass)} of submissions pass that a person would"
        f" have refused, and at most {_rate(chosen.max_wrong_fail)} fail that a person"
        " would have accepted"
    )
    cases = _plural(chosen.test_cases, "case")
    tested = {
        "path": f"on {cases} the search did not see",
        "sequences": f"on all {cases}, in an order no case chose",
        "grid": f"on all {cases} with all {chosen.path:,} combinations of thresholds on a grid"
        f" of {(chosen.grid_step or 0) / 100:g} at once, by Holm's step-down",
    }[chosen.method]
    bounds = (
        f"{_percent(chosen.wrong_pass_bound)} and {_percent(chosen.wrong_fail_bound)}, tested"
        f" {tested}"
    )
    cost = (
        f"A person would still see {figures.to_person} of {figures.cases} submissions"
        f" ({_percent(figures.to_person_share.value)},"
        " 95% interval "
        f"{_interval(figures.to_person_share, percent=True)[2:-1]}), against {now.to_person}"
        f" ({_percent(now.to_person_share.value)}) at the thresholds in force."
    )
    spread = _spread(chosen)
    if spread:
        cost = f"{cost} {spread}"
    if chosen.promised and figures.to_person >= figures.cases:
        # A promise kept only by sending everything to a person is no recommendation.
        return [
            f"Nothing to recommend: the only thresholds that promise, with"
            f" {_rate(chosen.confidence)} confidence, that {rates}"
            f" ({_all_thresholds(check, chosen)}) send every submission to a person, as no"
            f" check at all would (bounds {bounds}).",
            cost,
        ]
    if chosen.promised:
        return [
            f"Recommended for the whole check: {_all_thresholds(check, chosen)}.",
            f"With {_rate(chosen.confidence)} confidence, {rates} (bounds {bounds}).",
            cost,
        ]
    return [
        f"No thresholds can promise that {rates}, with {_rate(chosen.confidence)}"
        f" confidence, on these cases ({_plural(chosen.test_cases, 'case')} to test them on).",
        f"The closest, {_all_thresholds(check, chosen)}, promise at most"
        f" {_percent(chosen.wrong_pass_bound)} wrong passes and"
        f" {_percent(chosen.wrong_fail_bound)} wrong fails. {cost}",
    ]


def _reliability_lines(number: int, question: QuestionCalibration) -> list[str]:
    lines = []
    for table in question.reliability:
        what = "p of yes" if table.stated == "p" else "confidence"
        lines.append(
            f"  Q{number} reliability, {what} against {table.outcome}: ECE {_number(table.ece)},"
            f" Brier {_number(table.brier)}, on {_plural(table.cases, 'case')}"
            f"{'*' if table.too_few else ''}."
        )
        rows = [["    bin", "cases", "stated", "observed"]]
        for cell in table.bins:
            if cell.cases:
                rows.append(
                    [
                        f"    {cell.span}",
                        str(cell.cases),
                        _number(cell.mean_stated),
                        f"{_number(cell.observed.value)}{_interval(cell.observed)}",
                    ]
                )
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines += [
            "  ".join(
                cell.ljust(width) if i == 0 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
            for row in rows
        ]
    return lines


def calibration_text(calibration: Calibration) -> str:
    """The report as a plain-text table, one block per check, ending in a newline."""
    lines = _summary(calibration)
    for check in calibration.checks:
        lines += ["", f"{_shown(check.name)} ({check.at_current.cases} cases)"]
        lines += _table([list(_HEAD), *_rows(check, calibration.target)])
        for number, question in enumerate(check.questions, 1):
            lines.append(f"  Q{number}: {_shown(question.ask)}")
        for line in _cost_line(check):
            lines += ["  " + wrapped for wrapped in textwrap.wrap(line, 94)]
        lines.append("")
        lines += [
            "  " + wrapped
            for sentence in [*recommendation_text(check), *qualification_text(check)]
            for wrapped in textwrap.wrap(sentence, 94)
        ]
        for number, question in enumerate(check.questions, 1):
            lines += _reliability_lines(number, question)
    if not calibration.checks:
        lines += ["", "No case joins an advisory verdict to a person's decision yet."]
    lines.append("")
    lines += [wrapped for line in _LEGEND for wrapped in textwrap.wrap(line, 96)]
    if _any_too_few(calibration):
        lines.append(
            f"*: fewer than {calibration.min_cases} cases behind the figure: too few to trust."
        )
    return "\n".join(lines) + "\n"


def _any_too_few(calibration: Calibration) -> bool:
    for check in calibration.checks:
        figures: list[Figures | None] = [check.at_current, check.at_suggested]
        for question in check.questions:
            figures += [question.at_current, question.at_suggested]
        for f in figures:
            if f is not None and (f.agreement.too_few or f.to_person_share.too_few):
                return True
    return False


# --- HTML -------------------------------------------------------------------------------------

_CSS: Final = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
  max-width: 70rem; padding: 0 1rem; color: #1d2330; background: #fff; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2.5rem; }
h3 { font-size: 1rem; font-weight: 600; margin: 1.5rem 0 .25rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #d8dce4; text-align: right;
  white-space: nowrap; }
th { background: #f1f3f7; font-weight: 600; }
td.l, th.l { text-align: left; }
.few { color: #9a5b00; } .met { color: #1c7a3a; } .not { color: #b3261e; }
.note { color: #4a5263; font-size: .9rem; }
svg { display: block; margin: .25rem 0 1.5rem; max-width: 100%; height: auto; }
"""


def _e(text: str) -> str:
    # Escaped for HTML, and first as a person is shown any text (a bidi control would
    # reorder the page around it).
    return html.escape(escaped_text(text), quote=True)


def _figure_cells(
    figures: Figures | None, *, searched: bool = False, bound: float | None = None
) -> str:
    if figures is None:
        return '<td colspan="7">no thresholds leave a case decided</td>'
    few = ' class="few" title="too few cases to trust"'
    agreement, share, c = figures.agreement, figures.to_person_share, figures.confusion
    wrong = figures.wrong_pass
    mark = "*" if agreement.too_few else ""
    person_mark = "*" if share.too_few else ""
    return (
        f"<td{few if agreement.too_few else ''}>{_number(agreement.value)}{mark}"
        f" <small>{_e(_agreement_range(figures, searched, bound))} n={figures.decided}</small></td>"
        f"<td{few if agreement.too_few else ''}>{_number(figures.kappa.value, 2)}{mark}</td>"
        f"<td{few if share.too_few else ''}>{figures.to_person} of {figures.cases}"
        f" ({_percent(share.value)}){person_mark}"
        f" <small>{_e(_interval(share, percent=True, searched=searched))}</small></td>"
        f"<td{few if wrong.too_few else ''}>{c.pass_refused} of {figures.cases}"
        f" ({_percent(wrong.value)}){person_mark}"
        f" <small>{_e(_interval(wrong, percent=True, searched=searched))}</small></td>"
        f"<td>{c.pass_accepted} / {c.pass_refused}</td>"
        f"<td>{c.fail_accepted} / {c.fail_refused}</td>"
        f"<td>{c.unsure_accepted} / {c.unsure_refused}</td>"
    )


def _met_cell(met: bool | None) -> str:
    if met is None:
        return "<td></td>"
    return '<td class="met">met</td>' if met else '<td class="not">not met</td>'


def _html_table(check: CheckCalibration) -> str:
    head = (
        '<tr><th class="l"></th><th class="l"></th><th class="l">thresholds</th>'
        "<th>agreement</th><th>kappa</th><th>to a person</th><th>wrong pass</th>"
        "<th>pass acc. / ref.</th>"
        "<th>fail acc. / ref.</th><th>unsure acc. / ref.</th><th>target</th></tr>"
    )
    rows = [
        '<tr><td class="l">check</td><td class="l">current</td><td class="l">as now</td>'
        f"{_figure_cells(check.at_current)}{_met_cell(None)}</tr>",
        '<tr><td class="l"></td><td class="l">suggested</td>'
        '<td class="l">each question\'s</td>'
        f"{_figure_cells(check.at_suggested, searched=True, bound=check.agreement_bound)}"
        f"{_met_cell(check.met)}</tr>",
    ]
    for number, q in enumerate(check.questions, 1):
        kind = _e(_KIND.get(q.kind, q.kind))
        rows.append(
            f'<tr><td class="l">Q{number} {kind}</td><td class="l">current</td>'
            f'<td class="l">{_e(_thresholds(q.current))}</td>'
            f"{_figure_cells(q.at_current)}{_met_cell(None)}</tr>"
        )
        rows.append(
            '<tr><td class="l"></td><td class="l">suggested</td>'
            f'<td class="l">{_e(_thresholds(q.suggested))}</td>'
            f"{_figure_cells(q.at_suggested, searched=True, bound=q.agreement_bound)}"
            f"{_met_cell(q.meets_target)}</tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


# The chart's frame, in SVG user units.
_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 640, 300, 56, 150, 16, 44


def _x(t: float) -> float:
    return _LEFT + t * (_W - _LEFT - _RIGHT)


def _y(v: float) -> float:
    return _TOP + (1 - v) * (_H - _TOP - _BOTTOM)


def _polylines(points: Iterable[tuple[float, float | None]]) -> list[str]:
    """Runs of defined points as polyline point lists (a gap where a value is undefined)."""
    runs: list[list[str]] = [[]]
    for t, v in points:
        if v is None:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(f"{_x(t):.1f},{_y(v):.1f}")
    return [" ".join(run) for run in runs if run]


def _chart(
    question: QuestionCalibration, target: float, min_cases: int, number: int, anchor: str
) -> str:
    curve: Sequence[CurvePoint] = question.curve
    what = "pass threshold" if question.curve_of == "pass" else "confidence threshold"
    if question.curve_of == "pass" and question.suggested and question.suggested.fail_below:
        what += f" (fail at {js_number(question.suggested.fail_below)})"
    parts = [
        f'<svg viewBox="0 0 {_W} {_H}" width="{_W}"'
        f' height="{_H}" role="img" aria-labelledby="{anchor}">'
        f'<title id="{anchor}">Q{number}: agreement and share sent to a person'
        f" against the {_e(what)}</title>",
        f'<rect x="{_LEFT}" y="{_TOP}" width="{_W - _LEFT - _RIGHT}"'
        f' height="{_H - _TOP - _BOTTOM}" fill="#fbfcfe" stroke="#c4cad6"/>',
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(
            f'<line x1="{_x(0):.1f}" x2="{_x(1):.1f}" y1="{_y(tick):.1f}" y2="{_y(tick):.1f}"'
            ' stroke="#e3e7ee"/>'
            f'<text x="{_LEFT - 6}" y="{_y(tick) + 4:.1f}" text-anchor="end" font-size="11"'
            f' fill="#4a5263">{tick:g}</text>'
            f'<text x="{_x(tick):.1f}" y="{_H - _BOTTOM + 16}" text-anchor="middle"'
            f' font-size="11" fill="#4a5263">{tick:g}</text>'
        )
    parts.append(
        f'<text x="{_x(0.5):.1f}" y="{_H - 6}" text-anchor="middle" font-size="12"'
        f' fill="#1d2330">{_e(what)}</text>'
    )
    parts.append(
        f'<line x1="{_x(0):.1f}" x2="{_x(1):.1f}" y1="{_y(target):.1f}" y2="{_y(target):.1f}"'
        ' stroke="#1c7a3a" stroke-dasharray="6 4"/>'
    )
    markers = [(question.current, "#6b7385", "current")]
    if question.suggested is not None:
        markers.append((question.suggested, "#1f5fbf", "suggested"))
    for thresholds, colour, _ in markers:
        t = thresholds.pass_at if thresholds.pass_at is not None else thresholds.confidence
        if t is not None:
            parts.append(
                f'<line x1="{_x(t):.1f}" x2="{_x(t):.1f}" y1="{_TOP}" y2="{_H - _BOTTOM}"'
                f' stroke="{colour}" stroke-width="1.5" stroke-dasharray="2 3"/>'
            )
    # Agreement on too few decided cases is drawn faint: it is there, but not to be trusted.
    for points in _polylines((p.threshold, p.agreement) for p in curve):
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="#1f5fbf" stroke-width="2"'
            ' stroke-opacity="0.3"/>'
        )
    for points in _polylines(
        (p.threshold, p.agreement if p.decided >= min_cases else None) for p in curve
    ):
        parts.append(f'<polyline points="{points}" fill="none" stroke="#1f5fbf" stroke-width="2"/>')
    for points in _polylines(
        (p.threshold, p.to_person / (p.decided + p.to_person) if p.decided + p.to_person else None)
        for p in curve
    ):
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="#c26a00" stroke-width="2"'
            ' stroke-dasharray="5 3"/>'
        )
    legend = [
        ("#1f5fbf", "", "agreement"),
        ("#a5bfe5", "", f"on < {min_cases} cases"),
        ("#c26a00", "5 3", "to a person"),
        ("#1c7a3a", "6 4", f"target {js_number(target)}"),
        ("#6b7385", "2 3", "current"),
        ("#1f5fbf", "2 3", "suggested"),
    ]
    for row, (colour, dash, label) in enumerate(legend):
        y = _TOP + 12 + row * 20
        x = _W - _RIGHT + 14
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<line x1="{x}" x2="{x + 22}" y1="{y}" y2="{y}" stroke="{colour}"'
            f' stroke-width="2"{dash_attr}/>'
            f'<text x="{x + 28}" y="{y + 4}" font-size="12" fill="#1d2330">{_e(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


# The reliability diagram's frame, in SVG user units.
_RW, _RH, _RL, _RR, _RT, _RB = 640, 320, 56, 230, 16, 44


def _rx(t: float) -> float:
    return _RL + t * (_RW - _RL - _RR)


def _ry(v: float) -> float:
    return _RT + (1 - v) * (_RH - _RT - _RB)


def _reliability_chart(table: Reliability, number: int, anchor: str) -> str:
    """A reliability diagram: per bin, what came true (a bar, its 95% interval a whisker)
    against the mean stated value (a dot), with the diagonal of perfect calibration."""
    what = "p of yes" if table.stated == "p" else "confidence"
    title = (
        f"Q{number}: {what} against {table.outcome} (ECE {_number(table.ece)},"
        f" Brier {_number(table.brier)}, {table.cases} cases)"
    )
    parts = [
        f'<svg viewBox="0 0 {_RW} {_RH}" width="{_RW}" height="{_RH}" role="img"'
        f' aria-labelledby="{anchor}"><title id="{anchor}">{_e(title)}</title>',
        f'<rect x="{_RL}" y="{_RT}" width="{_RW - _RL - _RR}" height="{_RH - _RT - _RB}"'
        ' fill="#fbfcfe" stroke="#c4cad6"/>',
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(
            f'<text x="{_RL - 6}" y="{_ry(tick) + 4:.1f}" text-anchor="end" font-size="11"'
            f' fill="#4a5263">{tick:g}</text>'
            f'<text x="{_rx(tick):.1f}" y="{_RH - _RB + 16}" text-anchor="middle"'
            f' font-size="11" fill="#4a5263">{tick:g}</text>'
        )
    parts.append(
        f'<line x1="{_rx(0):.1f}" y1="{_ry(0):.1f}" x2="{_rx(1):.1f}" y2="{_ry(1):.1f}"'
        ' stroke="#6b7385" stroke-dasharray="4 3"/>'
        f'<text x="{_rx(0.5):.1f}" y="{_RH - 6}" text-anchor="middle" font-size="12"'
        f' fill="#1d2330">{_e(what)} (10 equal-width bins)</text>'
    )
    width = (_RW - _RL - _RR) / len(table.bins)
    for cell in table.bins:
        if not cell.cases or cell.observed.value is None:
            continue
        x = _rx(cell.low) + 2
        opacity = "0.35" if cell.observed.too_few else "0.8"
        parts.append(
            f'<rect x="{x:.1f}" y="{_ry(cell.observed.value):.1f}" width="{width - 4:.1f}"'
            f' height="{_ry(0) - _ry(cell.observed.value):.1f}" fill="#1f5fbf"'
            f' fill-opacity="{opacity}"><title>{_e(_bin_title(cell))}</title></rect>'
        )
        if cell.observed.low is not None and cell.observed.high is not None:
            centre = x + (width - 4) / 2
            parts.append(
                f'<line x1="{centre:.1f}" x2="{centre:.1f}" y1="{_ry(cell.observed.low):.1f}"'
                f' y2="{_ry(cell.observed.high):.1f}" stroke="#1d2330" stroke-width="1.2"/>'
            )
        if cell.mean_stated is not None:
            parts.append(
                f'<circle cx="{_rx(cell.mean_stated):.1f}" cy="{_ry(cell.mean_stated):.1f}"'
                ' r="3.5" fill="#c26a00"/>'
            )
    legend = [
        ("#1f5fbf", "observed share (bar)"),
        ("#1d2330", "its 95% interval"),
        ("#c26a00", "mean stated (dot)"),
        ("#6b7385", "perfect calibration"),
    ]
    for row, (colour, label) in enumerate(legend):
        y = _RT + 12 + row * 20
        x = _RW - _RR + 14
        parts.append(
            f'<line x1="{x}" x2="{x + 22}" y1="{y}" y2="{y}" stroke="{colour}"'
            ' stroke-width="3"/>'
            f'<text x="{x + 28}" y="{y + 4}" font-size="12" fill="#1d2330">{_e(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _bin_title(cell: ReliabilityBin) -> str:
    return (
        f"{cell.span}: {cell.cases} cases, stated"
        f" {_number(cell.mean_stated)}, observed {_number(cell.observed.value)}"
        f"{_interval(cell.observed)}"
    )


def calibration_html(calibration: Calibration, *, title: str = "Calibration report") -> str:
    """The report as one self-contained HTML page (inline CSS and SVG; nothing fetched)."""
    body = [f"<h1>{_e(title)}</h1>"]
    body += [f"<p>{_e(line)}</p>" for line in _summary(calibration)]
    if not calibration.checks:
        body.append("<p>No case joins an advisory verdict to a person's decision yet.</p>")
    for index, check in enumerate(calibration.checks, 1):
        body.append(f"<h2>{_e(_shown(check.name))} ({check.at_current.cases} cases)</h2>")
        body.append(_html_table(check))
        body += [f"<p>{_e(line)}</p>" for line in _cost_line(check)]
        body += [
            f"<p>{_e(sentence)}</p>"
            for sentence in [*recommendation_text(check), *qualification_text(check)]
        ]
        for number, question in enumerate(check.questions, 1):
            few = ' <span class="few">(too few cases to trust)</span>' if question.too_few else ""
            body.append(f"<h3>Q{number} ({_e(_KIND.get(question.kind, question.kind))}):")
            body.append(f" {_e(_shown(question.ask))}{few}</h3>")
            body.append(
                _chart(
                    question,
                    calibration.target,
                    calibration.min_cases,
                    number,
                    f"c{index}q{number}",
                )
            )
            for kind, table in enumerate(question.reliability):
                body.append(_reliability_chart(table, number, f"c{index}q{number}r{kind}"))
    body += [f'<p class="note">{_e(line)}</p>' for line in _LEGEND]
    body.append(
        f'<p class="note">* or <span class="few">amber</span>: fewer than'
        f" {calibration.min_cases} cases behind this figure: too few to trust.</p>"
    )
    # The policy makes "nothing fetched" checkable: a browser refuses, and reports, any load.
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy"'
        " content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n"
        f"<body>\n{chr(10).join(body)}\n</body></html>\n"
    )
