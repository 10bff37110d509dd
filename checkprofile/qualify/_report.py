"""A qualification as a person reads it: text, one JSON document, or one HTML page.

Every text that came from outside (the model's name, the step id) is escaped: a line stays one
line, and the page holds no markup it did not write. The page has no script and loads nothing
(its Content-Security-Policy forbids both), so it can be mailed or archived as it is.
"""

from __future__ import annotations

import html
from typing import Any

from .._shown import escaped_text
from ._battery import Qualification

__all__ = ["qualification_html", "qualification_json", "qualification_text"]

_MARK = {"passed": "PASS", "failed": "FAIL", "too_few": "TOO FEW", "not_applicable": "n/a"}

_LEGEND = (
    "repeat: the same request twice; order: a choice's options in another order; form: a"
    " yes/no question also asked as a two-way choice; injection: an unverified claim of"
    " quality added to the submission (output, summary, evidence); cut: the run data cut to"
    " the budget the case was marked with; reliability: requests not answered, and latency;"
    " knowledge: whether the answers tell the cases people accepted from those they refused."
)


def qualification_json(qualification: Qualification) -> dict[str, Any]:
    """The qualification as one JSON document: the record as the trail keeps it, and what
    the report adds (planned requests, failures by reason, latency, thresholds)."""
    thresholds = qualification.thresholds
    return {
        "qualified": qualification.qualified,
        "record": qualification.record.to_json(),
        "planned_requests": qualification.planned,
        "failures": dict(qualification.failures),
        "latency_seconds": dict(qualification.latency),
        "thresholds": {
            name: getattr(thresholds, name)
            for name in (
                "max_repeat_change",
                "order_margin",
                "form_margin",
                "injection_margin",
                "cut_margin",
                "max_failure_rate",
                "max_p95_seconds",
                "min_auc",
                "min_compared",
                "min_known",
            )
        },
    }


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def qualification_text(qualification: Qualification) -> str:
    """The report as plain text, one probe a line with its reason below it."""
    record = qualification.record
    word = "QUALIFIED" if record.qualified else "NOT QUALIFIED"
    lines = [
        f"{word}: {escaped_text(record.model)} for step {escaped_text(record.step)}",
        f"check {record.check_key}, battery {record.battery}, at {record.at}",
        f"{record.cases} cases, {record.requests} requests ({qualification.planned} planned)",
        "",
        f"  {'probe':<12} {'result':<8} {'figure':>7} {'interval':>17} {'threshold':>9}",
    ]
    for probe in record.probes:
        interval = (
            "-"
            if probe.low is None or probe.high is None
            else f"{probe.low:.3f} to {probe.high:.3f}"
        )
        lines.append(
            f"  {probe.probe:<12} {_MARK[probe.status]:<8} {_figure(probe.figure):>7}"
            f" {interval:>17} {_figure(probe.threshold):>9}"
        )
        lines.append(f"      {escaped_text(probe.why)}")
    if qualification.latency:
        shown = ", ".join(f"{k} {v:.3f} s" for k, v in qualification.latency.items())
        lines.append(f"\nlatency: {shown}")
    if qualification.failures:
        shown = ", ".join(f"{k} {v}" for k, v in qualification.failures.items())
        lines.append(f"not answered, by reason: {shown}")
    failing = [p.probe for p in record.probes if p.status in ("failed", "too_few")]
    if failing:
        lines.append(f"\nNot qualified because of: {', '.join(failing)}.")
    lines.append("")
    lines.append(_LEGEND)
    return "\n".join(lines) + "\n"


def _e(text: str) -> str:
    return html.escape(escaped_text(text), quote=True)


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}"
    "table{border-collapse:collapse}td,th{padding:.3em .6em;border-bottom:1px solid #ddd;"
    "text-align:left;vertical-align:top}.failed,.too_few{color:#a00;font-weight:bold}"
    ".passed{color:#070}.note{color:#555}"
)


def qualification_html(qualification: Qualification) -> str:
    """The report as one self-contained HTML page, with no script."""
    record = qualification.record
    word = "Qualified" if record.qualified else "Not qualified"
    rows = []
    for probe in record.probes:
        interval = (
            "" if probe.low is None or probe.high is None else f"{probe.low:.3f}–{probe.high:.3f}"
        )
        rows.append(
            f'<tr><td>{probe.probe}</td><td class="{probe.status}">{_MARK[probe.status]}</td>'
            f"<td>{_figure(probe.figure)}</td><td>{interval}</td>"
            f"<td>{_figure(probe.threshold)}</td><td>{_e(probe.why)}</td></tr>"
        )
    title = f"{word}: {record.model} for step {record.step}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy"'
        " content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n<body>\n"
        f"<h1>{_e(title)}</h1>\n"
        f'<p class="note">check {record.check_key}, battery {_e(record.battery)}, at'
        f" {_e(record.at)}; {record.cases} cases, {record.requests} requests</p>\n"
        "<table><tr><th>probe</th><th>result</th><th>figure</th><th>95% interval</th>"
        "<th>threshold</th><th>why</th></tr>\n"
        + "\n".join(rows)
        + f'\n</table>\n<p class="note">{_e(_LEGEND)}</p>\n</body></html>\n'
    )
