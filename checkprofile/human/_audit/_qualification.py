"""The audit trail's qualification record: which probes a model passed, for one check.

A model qualifies for a check before it may block (``checkprofile.qualify``): a battery of
probes asks the check again in other forms and compares the answers. What came of it is kept in
the trail as one record, bound to the exact ``model`` that answered, the check (its check key)
and the battery's version, so a gate can ask "has this model qualified for this check?"::

    {"record": "qualification", "format": 1,
     "key": "sha256:…",        SHA-256 of the canonical JSON of
                                ["qualification", model, check_key, battery]
     "step": "…",              the step whose check was probed, as the host named it
     "check_key": "sha256:…",  the check's key (as a verdict record has it)
     "check": [...],           the check's full form
     "model": "…",             every model version that answered the battery's requests, joined
     "battery": "…",           the battery's version (checkprofile-qualify-1)
     "at": "…",                when the battery finished
     "qualified": true|false,  every probe the battery needs passed (see qualified_by)
     "cases": N, "requests": N,
     "probes": [{"probe", "status", "figure", "low", "high", "threshold", "compared",
                 "why"}, ...]} one entry per probe of PROBES, in that order

A probe's ``status`` is ``passed``, ``failed``, ``too_few`` (fewer comparisons than it needs to
judge) or ``not_applicable`` (the check or the cases give it nothing to ask: no choice question
to reorder, no case marked for the cut probe, an evaluator that answers no choices for the form
probe). The record is read strictly (:func:`qualification_from_json`): every probe named once,
in order, and ``qualified`` what its probes say, so no line can claim a probe that did not run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, get_args

import attrs

from ..._bundle import canonical_json
from ..._check import Check
from ..._convert import is_finite
from ..._shown import is_blank, show
from ..._validate import parse_check
from ..._verdict import format_at
from ...errors import CheckError
from ._records import AUDIT_FORMAT, _id, check_key

__all__ = [
    "PROBES",
    "REQUIRED_PROBES",
    "ProbeName",
    "ProbeResult",
    "ProbeStatus",
    "QualificationRecord",
    "qualification_from_json",
    "qualification_key",
    "qualification_summary",
    "qualified_by",
]

#: The probes of the battery, in the order a report and a record list them.
ProbeName = Literal["repeat", "order", "form", "injection", "cut", "reliability", "knowledge"]
PROBES: Final[tuple[ProbeName, ...]] = get_args(ProbeName)
#: The probes that must pass for a model to qualify (the others must pass where they apply):
#: without them a model that answers the same whatever it is shown would pass every other.
REQUIRED_PROBES: Final[frozenset[str]] = frozenset(
    ("repeat", "injection", "reliability", "knowledge")
)

ProbeStatus = Literal["passed", "failed", "too_few", "not_applicable"]
_STATUSES: Final = frozenset(get_args(ProbeStatus))

_PROBE_KEYS = ("probe", "status", "figure", "low", "high", "threshold", "compared", "why")
_KEYS = (
    "record",
    "format",
    "key",
    "step",
    "check_key",
    "check",
    "model",
    "battery",
    "at",
    "qualified",
    "cases",
    "requests",
    "probes",
)
# A probe's reason is a sentence: longer text is not one the battery wrote.
_MAX_WHY = 2000


@attrs.frozen(kw_only=True)
class ProbeResult:
    """What one probe found: its ``status``, its ``figure`` with the interval ``low``-``high``
    (``None`` where it had nothing to measure), the ``threshold`` it was judged against, how
    many comparisons it ``compared``, and ``why`` in one sentence."""

    probe: ProbeName
    status: ProbeStatus
    figure: float | None
    low: float | None
    high: float | None
    threshold: float | None
    compared: int
    why: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _PROBE_KEYS}


def qualified_by(probes: Sequence[ProbeResult]) -> bool:
    """Whether ``probes`` qualify a model: each of :data:`REQUIRED_PROBES` passed, and every
    other probe passed or did not apply."""
    for result in probes:
        if result.probe in REQUIRED_PROBES:
            if result.status != "passed":
                return False
        elif result.status not in ("passed", "not_applicable"):
            return False
    return {result.probe for result in probes} >= REQUIRED_PROBES


def qualification_key(model: str, check_key_: str, battery: str) -> str:
    """The key of a qualification: SHA-256 of ``["qualification", model, check_key,
    battery]`` as canonical JSON."""
    text = canonical_json(["qualification", model, check_key_, battery])
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@attrs.frozen(kw_only=True)
class QualificationRecord:
    """A qualification in the audit trail (the module docstring has the JSON). ``run`` is
    ``""``: a qualification belongs to no run."""

    key: str
    step: str
    check_key: str
    check: Check
    model: str
    battery: str
    at: str
    qualified: bool
    cases: int
    requests: int
    probes: tuple[ProbeResult, ...]
    record: Literal["qualification"] = attrs.field(default="qualification", init=False)

    @property
    def run(self) -> str:
        return ""

    def probe(self, name: str) -> ProbeResult:
        """The result of the probe ``name``."""
        for result in self.probes:
            if result.probe == name:
                return result
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "format": AUDIT_FORMAT,
            "key": self.key,
            "step": self.step,
            "check_key": self.check_key,
            "check": self.check.to_json(),
            "model": self.model,
            "battery": self.battery,
            "at": self.at,
            "qualified": self.qualified,
            "cases": self.cases,
            "requests": self.requests,
            "probes": [result.to_json() for result in self.probes],
        }


def _count(data: Mapping[str, Any], name: str) -> int:
    value = data[name]
    if type(value) is not int or value < 0:
        raise ValueError(f"{name} must be a whole number >= 0, got {show(value)}")
    return value


def _text(data: Mapping[str, Any], name: str) -> str:
    value = data[name]
    if type(value) is not str or is_blank(value) or len(value) > _MAX_WHY:
        raise ValueError(f"{name} must be non-blank text, got {show(value)}")
    return value


def _number(entry: Mapping[str, Any], name: str) -> float | None:
    value = entry[name]
    if value is None:
        return None
    if not is_finite(value):
        raise ValueError(f"a probe's {name} must be a finite number or null, got {show(value)}")
    return float(value)


def _probe_from_json(entry: object, expected: str) -> ProbeResult:
    if type(entry) is not dict or tuple(entry) != _PROBE_KEYS:
        raise ValueError(
            f"each probe is an object with the keys {', '.join(_PROBE_KEYS)} in that order,"
            f" got {show(entry)}"
        )
    if entry["probe"] != expected:
        raise ValueError(f"probe {show(entry['probe'])} where the battery lists {show(expected)}")
    if entry["status"] not in _STATUSES:
        raise ValueError(
            f"probe {expected}: status must be one of {', '.join(sorted(_STATUSES))},"
            f" got {show(entry['status'])}"
        )
    return ProbeResult(
        probe=expected,  # type: ignore[arg-type]  # one of PROBES
        status=entry["status"],
        figure=_number(entry, "figure"),
        low=_number(entry, "low"),
        high=_number(entry, "high"),
        threshold=_number(entry, "threshold"),
        compared=_count(entry, "compared"),
        why=_text(entry, "why"),
    )


def qualification_from_json(data: Mapping[str, Any]) -> QualificationRecord:
    """A qualification record from its JSON object (``"record": "qualification"``, the
    format already checked). Raises :class:`ValueError` saying what is wrong: a key missing or
    unknown, a key or check key that is not its own, a probe missing, repeated, unknown or out
    of order, or ``qualified`` that is not what the probes say."""
    missing = [key for key in _KEYS if key not in data]
    if missing:
        raise ValueError(f"a qualification record needs {show(missing[0])}")
    unknown = sorted((key for key in data if key not in _KEYS), key=str)
    if unknown:
        raise ValueError(f"a qualification record has no key {show(unknown[0])}")
    step = _id("step", data["step"])
    model, battery = _text(data, "model"), _text(data, "battery")
    try:
        check = parse_check(data["check"])
    except CheckError as error:
        raise ValueError(f"check: {error.problems[0]}") from None
    if check.to_json() != data["check"]:
        raise ValueError("check is not in its full form (Check.to_json)")
    if check_key(check) != data["check_key"]:
        raise ValueError("check_key is not the key of its check")
    if data["key"] != qualification_key(model, data["check_key"], battery):
        raise ValueError("key is not the qualification key of its model, check_key and battery")
    at = data["at"]
    if type(at) is not str:
        raise ValueError(f"at must be a time, got {show(at)}")
    format_at(at)
    listed = data["probes"]
    if type(listed) is not list or len(listed) != len(PROBES):
        raise ValueError(f"probes must list the {len(PROBES)} probes {', '.join(PROBES)}")
    probes = tuple(
        _probe_from_json(entry, name) for entry, name in zip(listed, PROBES, strict=True)
    )
    qualified = qualified_by(probes)
    if data["qualified"] is not qualified:
        raise ValueError(
            f"qualified is {show(data['qualified'])}, but its probes say {show(qualified)}"
        )
    return QualificationRecord(
        key=data["key"],
        step=step,
        check_key=data["check_key"],
        check=check,
        model=model,
        battery=battery,
        at=at,
        qualified=qualified,
        cases=_count(data, "cases"),
        requests=_count(data, "requests"),
        probes=probes,
    )


def qualification_summary(record: QualificationRecord) -> dict[str, Any]:
    """What names a qualification where another report rests on it: its ``key``, ``model``,
    ``battery``, ``at`` and whether it ``qualified``."""
    return {
        "key": record.key,
        "model": record.model,
        "battery": record.battery,
        "at": record.at,
        "qualified": record.qualified,
    }
