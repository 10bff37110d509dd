"""The monitor: after enforcement, whether a check still keeps its promise, with a guarantee
that holds however often it is asked.

:func:`monitor_update` is the rule: a pure function of the monitor's state (one JSON value the
host keeps) and the new records (verdicts, spot checks), giving the new state and, when the
promise is broken, the events the host applies (back to advisory for the step, or every
verdict to a person). :func:`monitor` applies the same rule to a whole audit trail (files,
PostgreSQL, several replicas), in one order every replica computes alike, and reports it.

Per step: what is watched is a step's enforced verdicts (``advisory`` false; pass, fail or
unsure) since what answers last changed: a new ``model`` in the verdict records or a reworded
check (another ``check_key``) starts a new **epoch**, with its reason. Per segment: with
``by``, each value of a field the host names (``segments``: run id to its fields) is watched on
its own, beside the step as a whole. The statistics are in ``_sequence``.

What counts is only what the records support: a verdict is counted once by its submission key;
a spot check counts only when its verdict is in the trail, the plan's keyed hash drew that
verdict, and its probability and draw are the plan's (else it is a *problem*, and the verdict it
claims to review stays *pending*: not wrong for an alarm, wrong for a certificate).
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

import attrs

from ..._shown import show
from ..._telemetry import telemetry
from ..._time import at_order
from ..._types import is_mapping
from ..._verdict import format_at
from .._audit._fast._reader import VerdictFacts
from .._audit._records import VerdictRecord
from .._audit._sources import Window, open_sources
from .._audit._spot import SpotCheckRecord, SpotPlan, sample_tag
from .._audit._strict import TornLine
from ._recommend import CONFIDENCE, MAX_WRONG_FAIL, MAX_WRONG_PASS, Recommendation
from ._sequence import Counts, Side, e_up, side_of

__all__ = [
    "FALSE_ALARM",
    "MonitorReport",
    "MonitorSettings",
    "StepWatch",
    "monitor",
    "monitor_update",
]

_log = logging.getLogger("checkprofile.monitor")
_log.addHandler(logging.NullHandler())

#: The default chance of ever raising a false alarm, per step and segment.
FALSE_ALARM: Final = 0.05

#: The state's format.
STATE_FORMAT: Final = 1

_ALL: Final = "(all)"  # the segment that is the step as a whole


def _share(name: str, value: object, *, nullable: bool = False) -> float | None:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError(f"{name} must be a number between 0 and 1 (not either), got {show(value)}")
    return float(value)


def _positive(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"min_spot_checks must be a whole number of at least 1, got {show(value)}")
    return value


def _wrong_pass(value: object) -> float | None:
    return _share("max_wrong_pass", value, nullable=True)


def _wrong_fail(value: object) -> float | None:
    return _share("max_wrong_fail", value, nullable=True)


def _false_alarm(value: object) -> float:
    return float(_share("false_alarm", value) or 0)


def _confidence(value: object) -> float:
    return float(_share("confidence", value) or 0)


@attrs.frozen(kw_only=True)
class MonitorSettings:
    """What the monitor watches and promises.

    ``plan`` is the spot-check plan (rates and secret) the verdicts were drawn with: only its
    draws count. ``max_wrong_pass`` and ``max_wrong_fail`` are the promised rates (shares of
    all enforced verdicts, as the recommendation certifies them; ``None`` leaves that kind
    unwatched). ``false_alarm`` is the chance, at most, of ever declaring a kept promise broken
    (per step and segment, for each kind watched); ``confidence`` that of a certificate being
    right. ``on_broken`` is the event's action: ``"advisory"`` (the step goes back to
    advisory) or ``"to_person"`` (every verdict of the step goes to a person). ``by`` names a
    field of ``segments`` (run id to its fields, e.g. ``{"run-1": {"vendor": "acme"}}``) to
    watch each of its values on its own; a segment with fewer than ``min_spot_checks`` spot
    checks rides on the step's certificate (``small="pooled"``) or is sent to a person
    (``small="to_person"``).
    """

    plan: SpotPlan
    max_wrong_pass: float | None = attrs.field(default=MAX_WRONG_PASS, converter=_wrong_pass)
    max_wrong_fail: float | None = attrs.field(default=MAX_WRONG_FAIL, converter=_wrong_fail)
    false_alarm: float = attrs.field(default=FALSE_ALARM, converter=_false_alarm)
    confidence: float = attrs.field(default=CONFIDENCE, converter=_confidence)
    on_broken: Literal["advisory", "to_person"] = "advisory"
    by: str | None = None
    segments: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict, repr=False)
    min_spot_checks: int = attrs.field(default=30, converter=_positive)
    small: Literal["pooled", "to_person"] = "pooled"

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.plan, SpotPlan):
            raise TypeError(f"plan must be a SpotPlan, got {show(self.plan)}")
        if self.on_broken not in ("advisory", "to_person"):
            raise ValueError(
                f'on_broken must be "advisory" or "to_person", got {show(self.on_broken)}'
            )
        if self.small not in ("pooled", "to_person"):
            raise ValueError(f'small must be "pooled" or "to_person", got {show(self.small)}')
        if self.by is not None and (not isinstance(self.by, str) or not self.by.strip()):
            raise ValueError(f"by must name a field, got {show(self.by)}")
        if self.max_wrong_pass is None and self.max_wrong_fail is None:
            raise ValueError("nothing to watch: max_wrong_pass and max_wrong_fail are both None")

    @classmethod
    def promised_by(
        cls, recommendation: Recommendation, *, plan: SpotPlan, **options: Any
    ) -> MonitorSettings:
        """The settings that keep watching what ``recommendation`` promised (its
        ``max_wrong_pass``, ``max_wrong_fail`` and ``confidence``); ``options`` as for the
        class. Raises :class:`ValueError` when it promised nothing (too few cases)."""
        if not isinstance(recommendation, Recommendation):
            raise TypeError(f"a Recommendation is needed, got {show(recommendation)}")
        if not recommendation.promised:
            raise ValueError(
                "the recommendation promised nothing (too few cases, or rates not kept):"
                " there is no promise to keep watching; set the rates yourself"
            )
        return cls(
            plan=plan,
            max_wrong_pass=recommendation.max_wrong_pass,
            max_wrong_fail=recommendation.max_wrong_fail if plan.fails > 0 else None,
            confidence=recommendation.confidence,
            **options,
        )

    def sides(self) -> tuple[tuple[str, str, float], ...]:
        """Each kind watched: its name, the verdict it is wrong on, its promise."""
        found = []
        if self.max_wrong_pass is not None:
            found.append(("wrong_pass", "pass", self.max_wrong_pass))
        if self.max_wrong_fail is not None:
            found.append(("wrong_fail", "fail", self.max_wrong_fail))
        return tuple(found)

    def segment(self, run: str) -> str:
        if self.by is None:
            return _ALL
        fields = self.segments.get(run)
        value = fields.get(self.by) if is_mapping(fields) else None
        return value if isinstance(value, str) else "(unknown)"


# --- the rule: state in, records in, state and events out ---------------------------------

# A verdict as the rule reads it: key, run, step, at, check_key, model, advisory, verdict.
_Verdict = tuple[str, str, str, str, str, str, bool, str]


def _new_step(check_key: str, model: str, at: str, reason: str) -> dict[str, Any]:
    return {
        "epoch": {"check_key": check_key, "model": model, "since": at, "reason": reason},
        "segments": {},
        "pending": {},
        "problems": {"unmatched": 0, "forged": 0, "repeated": 0},
        "broken": [],
    }


def _counts(segment: Mapping[str, int], side: str, p: float) -> Counts:
    return Counts(segment["verdicts"], segment[side], segment[f"pending_{side}"], p)


def _empty_segment() -> dict[str, int]:
    return {
        "verdicts": 0,
        "spot_checks": 0,
        "wrong_pass": 0,
        "wrong_fail": 0,
        "pending_wrong_pass": 0,
        "pending_wrong_fail": 0,
    }


def _side_name(verdict: str) -> str:
    return "wrong_pass" if verdict == "pass" else "wrong_fail"


class _Rule:
    """The rule, applied to one state (a deep copy: the caller's is never changed)."""

    def __init__(self, state: dict[str, Any], settings: MonitorSettings) -> None:
        self.state = state
        self.settings = settings
        self.events: list[dict[str, Any]] = []

    def verdict(self, item: _Verdict) -> None:
        key, run, step_id, at, check_key, model, advisory, verdict = item
        if advisory or verdict not in ("pass", "fail", "unsure"):
            return
        steps = self.state["steps"]
        step = steps.get(step_id)
        if step is None:
            step = steps[step_id] = _new_step(check_key, model, at, "the first enforced verdicts")
        epoch = step["epoch"]
        if (epoch["check_key"], epoch["model"]) != (check_key, model):
            reason = (
                f"the model changed from {epoch['model']} to {model}"
                if epoch["check_key"] == check_key
                else "the check was reworded (another check_key)"
            )
            _log.info("monitor: step %s restarts at %s: %s", step_id, at, reason)
            step = steps[step_id] = _new_step(check_key, model, at, reason)
        if key in step["pending"]:
            step["problems"]["repeated"] += 1
            return
        segments = [_ALL] if self.settings.by is None else [_ALL, self.settings.segment(run)]
        for name in segments:
            step["segments"].setdefault(name, _empty_segment())["verdicts"] += 1
        if verdict in ("pass", "fail") and self.settings.plan.draw_key(key, verdict):
            side = _side_name(verdict)
            step["pending"][key] = [segments[-1], verdict]
            for name in segments:
                step["segments"][name][f"pending_{side}"] += 1

    def spot(self, record: SpotCheckRecord) -> None:
        step = self.state["steps"].get(record.step)
        waiting = step["pending"].get(record.key) if step is not None else None
        if waiting is None:  # no verdict, or one already reviewed: it counts nowhere
            if step is not None:
                step["problems"]["unmatched"] += 1
            else:
                self.state["orphans"] += 1
            return
        segment, verdict = waiting
        plan = self.settings.plan
        if (
            record.verdict != verdict
            or record.probability != plan.rate(verdict)
            or record.sample != sample_tag(plan.secret, record.key)
        ):
            step["problems"]["forged"] += 1
            return  # stays pending: it holds up neither an alarm nor a certificate
        del step["pending"][record.key]
        side = _side_name(verdict)
        names = [_ALL] if segment == _ALL else [_ALL, segment]
        for name in names:
            counts = step["segments"][name]
            counts[f"pending_{side}"] -= 1
            counts["spot_checks"] += 1
            if record.wrong:
                counts[side] += 1

    def close(self, at: str | None) -> None:
        """Judge every step after the records, and raise an event for each new break (the
        bounds are computed only for an event, or for telemetry when it is configured)."""
        settings = self.settings
        observing = telemetry() is not None
        need = math.log(1 / settings.false_alarm)
        for step_id, step in self.state["steps"].items():
            for name, segment in step["segments"].items():
                for side, verdict, promise in settings.sides():
                    counts = _counts(segment, side, settings.plan.rate(verdict))
                    new = [name, side] not in step["broken"]
                    if not observing and not (new and counts.p and e_up(counts, promise) >= need):
                        continue
                    judged = side_of(counts, promise, settings.false_alarm, 1 - settings.confidence)
                    _observe(step_id, name, side, judged)
                    if judged.broken and new:
                        step["broken"].append([name, side])
                        self.events.append(_event(step_id, name, side, judged, settings, at))


def _event(
    step: str, segment: str, side: str, judged: Side, settings: MonitorSettings, at: str | None
) -> dict[str, Any]:
    event = {
        "event": "promise_broken",
        "action": settings.on_broken,
        "step": step,
        "segment": None if segment == _ALL else segment,
        "kind": side,
        "promise": judged.promise,
        "estimate": judged.estimate,
        "lower": judged.lower,
        "false_alarm": settings.false_alarm,
        "at": at,
    }
    _log.warning(
        "monitor: step %s%s breaks its promise of %s at most %.4g (lower bound %.4g, false"
        " alarm at most %.4g): %s",
        step,
        "" if segment == _ALL else f" (segment {segment})",
        side.replace("_", " "),
        judged.promise,
        judged.lower,
        settings.false_alarm,
        "back to advisory" if settings.on_broken == "advisory" else "every verdict to a person",
    )
    return event


def _observe(step: str, segment: str, side: str, judged: Side) -> None:
    """The monitor's bound as a metric, and a span event on the current span (nothing is done
    while no OpenTelemetry SDK is configured; nothing observed changes the answer)."""
    found = telemetry()
    if found is None:
        return
    try:
        found.monitored(step, segment, side, judged.upper, judged.lower, judged.status)
    except Exception:  # an observer never changes an outcome
        _log.debug("monitor telemetry failed", exc_info=True)


def _state(state: object) -> dict[str, Any]:
    if state is None:
        return {"monitor": STATE_FORMAT, "steps": {}, "orphans": 0}
    if not isinstance(state, dict) or state.get("monitor") != STATE_FORMAT:
        raise ValueError(
            f"a monitor state is the JSON value monitor_update returned, got {show(state)}"
        )
    return copy.deepcopy(state)


def monitor_update(
    state: object, records: Iterable[object], *, settings: MonitorSettings
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The monitor's new state after ``records`` (verdict and spot-check records; others are
    passed over), and the events to apply: one ``{"event": "promise_broken", "action", "step",
    "segment", "kind", "promise", "estimate", "lower", "false_alarm", "at"}`` for each step
    (and segment) whose promise the evidence newly breaks. ``state`` is ``None`` at first, then
    what the last call returned (a JSON value: keep it as it is). Pure: the same state and
    records give the same answer, and ``state`` is not changed. Give each record once (the
    state keeps counts, not every key): :func:`monitor` reads a whole trail, records read twice
    counted once, and is the reference when the two differ."""
    if not isinstance(settings, MonitorSettings):
        raise TypeError(f"settings must be MonitorSettings, got {show(settings)}")
    rule = _Rule(_state(state), settings)
    last: str | None = None
    for record in records:
        if isinstance(record, VerdictRecord):
            rule.verdict(_of_record(record))
            last = format_at(record.at)
        elif isinstance(record, SpotCheckRecord):
            rule.spot(record)
            last = record.at
    rule.close(last)
    return rule.state, rule.events


def _of_record(record: VerdictRecord) -> _Verdict:
    return (
        record.key,
        record.run,
        record.step,
        format_at(record.at),
        record.check_key,
        record.model,
        record.advisory,
        record.result,
    )


def _of_facts(facts: VerdictFacts) -> _Verdict:
    return (
        facts.key,
        facts.run,
        facts.step,
        facts.at,
        facts.check_key,
        facts.model,
        facts.advisory,
        facts.verdict,
    )


# --- the trail ------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class StepWatch:
    """One step (and segment) against its promise: ``sides`` by kind (``wrong_pass``,
    ``wrong_fail``), each with estimate, bounds, status."""

    step: str
    segment: str | None
    epoch: Mapping[str, str]
    verdicts: int
    spot_checks: int
    pending: int
    sides: Mapping[str, Side]
    pooled: bool  # a small segment riding on the step's certificate
    to_person: bool  # a small segment sent to a person

    @property
    def status(self) -> str:
        statuses = [side.status for side in self.sides.values()]
        if "broken" in statuses:
            return "broken"
        if self.to_person:
            return "to_person"
        if self.pooled:
            return "pooled"
        return "certified" if statuses and all(s == "certified" for s in statuses) else "not_yet"


@attrs.frozen(kw_only=True)
class MonitorReport:
    """The monitor on a trail: each step (and segment), the state, the events, what was read
    and the problems found. :attr:`status` is ``broken`` (any step or segment), ``certified``
    (every step, and every segment that has the cases, certified) or ``not_yet``."""

    sources: tuple[str, ...]
    settings: MonitorSettings
    watches: tuple[StepWatch, ...]
    state: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...]
    history: tuple[Mapping[str, Any], ...]  # the bound over time, by step
    records: int
    duplicates: int
    torn_lines: int
    orphans: int

    @property
    def status(self) -> str:
        statuses = [watch.status for watch in self.watches]
        if "broken" in statuses:
            return "broken"
        if (
            statuses
            and all(s in ("certified", "pooled", "to_person") for s in statuses)
            and any(s == "certified" for s in statuses)
        ):
            return "certified"
        return "not_yet"

    def to_json(self) -> dict[str, Any]:
        return report_json(self)


def _watches(state: Mapping[str, Any], settings: MonitorSettings) -> tuple[StepWatch, ...]:
    found = []
    for step_id in sorted(state["steps"]):
        step = state["steps"][step_id]
        whole = step["segments"].get(_ALL)
        for name in sorted(step["segments"], key=lambda n: (n != _ALL, n)):
            segment = step["segments"][name]
            sides = {
                side: side_of(
                    _counts(segment, side, settings.plan.rate(verdict)),
                    promise,
                    settings.false_alarm,
                    1 - settings.confidence,
                )
                for side, verdict, promise in settings.sides()
            }
            small = name != _ALL and segment["spot_checks"] < settings.min_spot_checks
            certified = all(s.certified for s in sides.values())
            pooled = small and not certified and settings.small == "pooled" and whole is not None
            found.append(
                StepWatch(
                    step=step_id,
                    segment=None if name == _ALL else name,
                    epoch=step["epoch"],
                    verdicts=segment["verdicts"],
                    spot_checks=segment["spot_checks"],
                    pending=segment["pending_wrong_pass"] + segment["pending_wrong_fail"],
                    sides=sides,
                    pooled=pooled,
                    to_person=small and not certified and settings.small == "to_person",
                )
            )
    return tuple(found)


#: How many points of the bound over time the report keeps per step.
HISTORY_POINTS: Final = 60


def monitor(
    *sources: object,
    settings: MonitorSettings,
    since: str | None = None,
    until: str | None = None,
) -> MonitorReport:
    """The monitor on the audit trail in ``sources`` (as :func:`calibrate` takes them: files,
    directories, a :class:`PostgresRecorder`, records). Every replica computes the same: the
    records are taken once each (a verdict by its key, a spot check by its key and text),
    ordered by the verdict's time and key, and fed to :func:`monitor_update`."""
    if not isinstance(settings, MonitorSettings):
        raise TypeError(f"settings must be MonitorSettings, got {show(settings)}")
    window = Window.of(since, until)
    names, stream = open_sources(sources, window)
    verdicts: dict[str, tuple[str, _Verdict]] = {}
    spots: dict[str, list[SpotCheckRecord]] = {}
    records = duplicates = torn = 0
    for item, _ in stream:
        if isinstance(item, TornLine):
            torn += 1
            continue
        records += 1
        if isinstance(item, (VerdictFacts, VerdictRecord)):
            verdict = _of_facts(item) if isinstance(item, VerdictFacts) else _of_record(item)
            if not window.holds(verdict[3]):
                continue
            order = at_order(verdict[3])
            earlier = verdicts.get(verdict[0])
            if earlier is None or (order, verdict) < earlier:
                if earlier is not None:
                    duplicates += 1
                verdicts[verdict[0]] = (order, verdict)
            else:
                duplicates += 1
        elif isinstance(item, SpotCheckRecord) and window.holds(item.verdict_at):
            kept = spots.setdefault(item.key, [])
            if item in kept:
                duplicates += 1
            else:
                kept.append(item)
    ordered = sorted(verdicts.values())
    history: list[dict[str, Any]] = []
    stride = max(1, len(ordered) // HISTORY_POINTS)
    rule = _Rule(_state(None), settings)
    for index, (_, verdict) in enumerate(ordered):
        rule.verdict(verdict)
        found = spots.get(verdict[0])
        if found:
            if len(found) > 1:  # two different reviews of one verdict: neither counts
                step = rule.state["steps"].get(verdict[2])
                if step is not None:
                    step["problems"]["repeated"] += len(found) - 1
            else:
                rule.spot(found[0])
        if (index + 1) % stride == 0 or index + 1 == len(ordered):
            rule.close(verdict[3])
            history.append(_point(rule.state, settings, verdict[3]))
    state = rule.state
    events = rule.events
    orphans = sum(1 for key in spots if key not in verdicts)
    state["orphans"] = orphans
    return MonitorReport(
        sources=tuple(names),
        settings=settings,
        watches=_watches(state, settings),
        state=state,
        events=tuple(events),
        history=tuple(history),
        records=records,
        duplicates=duplicates,
        torn_lines=torn,
        orphans=orphans,
    )


def _point(state: Mapping[str, Any], settings: MonitorSettings, at: str) -> dict[str, Any]:
    point: dict[str, Any] = {"at": at, "steps": {}}
    for step_id, step in state["steps"].items():
        segment = step["segments"].get(_ALL)
        if segment is None:
            continue
        sides = {}
        for side, verdict, promise in settings.sides():
            judged = side_of(
                _counts(segment, side, settings.plan.rate(verdict)),
                promise,
                settings.false_alarm,
                1 - settings.confidence,
            )
            sides[side] = {
                "estimate": judged.estimate,
                "lower": judged.lower,
                "upper": judged.upper,
                "spot_checks": segment["spot_checks"],
            }
        point["steps"][step_id] = sides
    return point


# --- the report as JSON (checkprofile monitor --json) ---------------------------------------


def _side_json(side: Side) -> dict[str, Any]:
    return {
        "status": side.status,
        "promise": side.promise,
        "estimate": side.estimate,
        "lower": side.lower,
        "upper": side.upper,
        "wrong": side.counts.wrong,
        "pending": side.counts.pending,
        "sampling_rate": side.counts.p,
    }


def _watch_json(watch: StepWatch) -> dict[str, Any]:
    return {
        "step": watch.step,
        "segment": watch.segment,
        "status": watch.status,
        "epoch": dict(watch.epoch),
        "verdicts": watch.verdicts,
        "spot_checks": watch.spot_checks,
        "pending": watch.pending,
        "kinds": {name: _side_json(side) for name, side in watch.sides.items()},
    }


def report_json(report: MonitorReport) -> dict[str, Any]:
    """The report as one JSON value (``checkprofile monitor --json``)."""
    settings = report.settings
    return {
        "status": report.status,
        "sources": list(report.sources),
        "promise": {
            "max_wrong_pass": settings.max_wrong_pass,
            "max_wrong_fail": settings.max_wrong_fail,
            "false_alarm": settings.false_alarm,
            "confidence": settings.confidence,
            "sampling": {"pass": settings.plan.passes, "fail": settings.plan.fails},
            "by": settings.by,
        },
        "steps": [_watch_json(watch) for watch in report.watches],
        "events": [dict(event) for event in report.events],
        "read": {
            "records": report.records,
            "duplicates": report.duplicates,
            "torn_lines": report.torn_lines,
            "orphan_spot_checks": report.orphans,
        },
        "problems": {
            step: dict(value["problems"]) for step, value in report.state["steps"].items()
        },
        "history": [dict(point) for point in report.history],
    }
