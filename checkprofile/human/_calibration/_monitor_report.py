"""The monitor's report: as text, as JSON, and as one self-contained HTML page (inline CSS and
SVG, no script, nothing fetched) with each step's bounds drawn over time against its promise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ._monitor import MonitorReport, StepWatch, report_json
from ._report import _CSS, _e, _shown

if TYPE_CHECKING:
    pass

__all__ = ["monitor_html", "monitor_text", "report_json"]

_STATUS: Final = {
    "certified": "certified: the promise holds",
    "broken": "BROKEN: the evidence says the promise is not kept",
    "not_yet": "not certified yet: too few spot checks to say",
    "pooled": "too few spot checks of its own: rides on the step's certificate",
    "to_person": "too few spot checks of its own: every verdict to a person",
}

_KIND: Final = {"wrong_pass": "wrong passes", "wrong_fail": "wrong fails"}
_PLURAL: Final = {"pass": "passes", "fail": "fails"}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


def _summary(report: MonitorReport) -> list[str]:
    settings = report.settings
    promised = []
    for name, verdict, promise in settings.sides():
        rate = settings.plan.rate(verdict)
        promised.append(
            f"{_KIND[name]} at most {_pct(promise)} of enforced verdicts"
            f" ({_pct(rate)} of {_PLURAL[verdict]} spot-checked)"
        )
    return [
        f"Monitor: {_STATUS.get(report.status, report.status)}.",
        "Promise: " + "; ".join(promised) + ".",
        f"A kept promise is declared broken with probability at most {_pct(settings.false_alarm)}"
        f" (ever, however often this is read; per step and segment and kind), and certified"
        f" with confidence {_pct(settings.confidence)}.",
        f"Read: {report.records} records from {len(report.sources) or 'the given'} source(s);"
        f" {report.duplicates} read twice, counted once; {report.torn_lines} torn lines"
        f" skipped; {report.orphans} spot checks without their verdict, not counted.",
    ]


def _watch_lines(watch: StepWatch) -> list[str]:
    where = watch.step if watch.segment is None else f"{watch.step} [{watch.segment}]"
    epoch = watch.epoch
    lines = [
        f"{where}: {_STATUS.get(watch.status, watch.status)}",
        f"  since {epoch['since']} ({epoch['reason']}; model {epoch['model']}):"
        f" {watch.verdicts} enforced verdicts, {watch.spot_checks} spot checks,"
        f" {watch.pending} awaiting a person",
    ]
    for name, side in watch.sides.items():
        lines.append(
            f"  {_KIND[name]}: estimate {_pct(side.estimate)}, bounds {_pct(side.lower)} to"
            f" {_pct(side.upper)}, promise {_pct(side.promise)}: {side.status.replace('_', ' ')}"
        )
    return lines


def monitor_text(report: MonitorReport) -> str:
    """The report as plain text."""
    lines = _summary(report)
    if not report.watches:
        lines.append("No enforced verdict in the trail yet.")
    for watch in report.watches:
        lines += ["", *_watch_lines(watch)]
    for step, value in sorted(report.state["steps"].items()):
        problems = {k: v for k, v in value["problems"].items() if v}
        if problems:
            listed = ", ".join(f"{count} {kind}" for kind, count in sorted(problems.items()))
            lines.append(f"Problems on {step} (counted nowhere): {listed}.")
    for event in report.events:
        lines.append(
            f"Event: {event['step']}"
            + (f" [{event['segment']}]" if event["segment"] else "")
            + f": {_KIND[event['kind']]} above {_pct(event['promise'])} (lower bound"
            f" {_pct(event['lower'])}) at {event['at']}: "
            + ("back to advisory" if event["action"] == "advisory" else "every verdict to a person")
        )
    return "\n".join(lines) + "\n"


# --- HTML -----------------------------------------------------------------------------------

_W, _H, _L, _R, _T, _B = 640, 220, 56, 16, 12, 30


def _chart(report: MonitorReport, step: str, kind: str, promise: float) -> str:
    points = [
        (point["at"], point["steps"][step][kind])
        for point in report.history
        if step in point["steps"] and kind in point["steps"][step]
    ]
    if not points:
        return ""
    uppers: list[float] = [float(p["upper"]) for _, p in points if p["upper"] < 1]
    top: float = min(1.0, max([promise * 2.0, *uppers]))
    count = len(points)

    def x(index: int) -> float:
        return _L + (_W - _L - _R) * (index / max(1, count - 1))

    def y(value: float) -> float:
        return _T + (_H - _T - _B) * (1 - min(value, top) / top)

    def line(values: list[float], css: str) -> str:
        xy = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        return f'<polyline fill="none" stroke-width="2" {css} points="{xy}"/>'

    upper = [p["upper"] for _, p in points]
    lower = [p["lower"] for _, p in points]
    estimate = [p["estimate"] or 0.0 for _, p in points]
    parts = [
        f'<svg viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img"'
        f' aria-label="{_e(_KIND[kind])} of {_e(step)}: bounds over time">',
        f'<line x1="{_L}" x2="{_W - _R}" y1="{y(promise):.1f}" y2="{y(promise):.1f}"'
        ' stroke="#b3261e" stroke-dasharray="5 4"/>',
        line(upper, 'stroke="#1c5fb3"'),
        line(lower, 'stroke="#1c7a3a"'),
        line(estimate, 'stroke="#8a8f99" stroke-dasharray="2 3"'),
        f'<text x="4" y="{y(promise) + 4:.1f}" font-size="11">{_e(_pct(promise))}</text>',
        f'<text x="4" y="{_T + 8}" font-size="11">{_e(_pct(top))}</text>',
        f'<text x="4" y="{_H - _B + 4}" font-size="11">0%</text>',
        f'<text x="{_L}" y="{_H - 8}" font-size="11">{_e(points[0][0])}</text>',
        f'<text x="{_W - _R}" y="{_H - 8}" font-size="11" text-anchor="end">'
        f"{_e(points[-1][0])}</text>",
        "</svg>",
    ]
    return "".join(parts)


def monitor_html(report: MonitorReport, *, title: str = "Monitor report") -> str:
    """The report as one self-contained HTML page (inline CSS and SVG; nothing fetched)."""
    body = [f"<h1>{_e(title)}</h1>"]
    css = {"certified": "met", "broken": "not"}.get(report.status, "few")
    first, *rest = _summary(report)
    body.append(f'<p class="{css}"><strong>{_e(first)}</strong></p>')
    body += [f"<p>{_e(line)}</p>" for line in rest]
    for watch in report.watches:
        lines = _watch_lines(watch)
        body.append(f"<h2>{_e(_shown(lines[0]))}</h2>")
        body += [f"<p>{_e(line.strip())}</p>" for line in lines[1:]]
        if watch.segment is None:
            for name, side in watch.sides.items():
                body.append(f"<h3>{_e(_KIND[name])} over time</h3>")
                body.append(_chart(report, watch.step, name, side.promise))
    events = [line for line in monitor_text(report).splitlines() if line.startswith("Event:")]
    body += [f'<p class="not">{_e(line)}</p>' for line in events]
    body.append(
        '<p class="note">Blue: upper bound (certified while under the red dashed promise);'
        " green: lower bound (broken once above it); grey dots: the weighted estimate. Each"
        " bound holds at every point at once, not only at the last.</p>"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy"'
        " content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n"
        f"<body>\n{chr(10).join(body)}\n</body></html>\n"
    )
