"""Spot checks: a sampled share of *enforced* verdicts also goes to a person, and changes nothing.

After ``advisory`` is removed a check passes and fails on its own; a spot check asks a person,
for a share of those verdicts, "would you have accepted this?" The step has already completed
or been refused as the verdict said; the answer is recorded, and only the monitor
(:func:`~checkprofile.human.monitor`) reads it.

**Which verdicts.** A :class:`SpotPlan` gives a sampling rate per verdict (``pass``, ``fail``).
A verdict is sampled when ``u < rate``, where ``u`` is read from a keyed hash of its submission
key: ``HMAC-SHA256(secret, key)``, its first 13 hex digits as a fraction of ``16**13`` (exact in
a float). The secret stays on the server, so an agent can neither predict nor steer which of
its submissions a person sees; an auditor given the secret recomputes every choice, including
the verdicts that were sampled and have no spot check (see the monitor).

A **spot-check record** (``"record": "spot_check"``) joins its verdict by the submission key::

    {"record": "spot_check", "format": 1,
     "key": "sha256:…", "run": "…", "step": "…", "submission_sha256": "sha256:…",
     "verdict": "pass"|"fail",        the enforced verdict the person reviewed
     "verdict_at": "…",               that verdict's at
     "probability": 0.05,             the sampling rate it was drawn with (0 < p <= 1)
     "sample": "hmac-sha256:…",       the keyed hash (64 hex digits) that drew it
     "accepted": true|false,          the person would have let the submission stand
     "decision": {...}}               the person's decision, as in a decision record

The reader checks what it can without the secret (the sample's fraction is below the
probability, ``accepted`` agrees with the decision); the monitor, given the secret and the plan,
checks the rest, and counts nothing it cannot check.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from ..._shown import show
from ..._types import of_type
from ..._verdict import format_at
from .._decide._decisions import Completed, Decision, decision_from_json, read_back
from ._records import AUDIT_FORMAT, VerdictRecord, _id, _key_from

__all__ = [
    "SPOT_KEYS",
    "SpotCheckRecord",
    "SpotPlan",
    "sample_fraction",
    "sample_tag",
    "spot_check_record",
    "spot_from_json",
]

SPOT_KEYS: Final = (
    "record",
    "format",
    "key",
    "run",
    "step",
    "submission_sha256",
    "verdict",
    "verdict_at",
    "probability",
    "sample",
    "accepted",
    "decision",
)
_SPOT_FIELDS: Final = frozenset(SPOT_KEYS)

_TAG = re.compile(r"hmac-sha256:[0-9a-f]{64}")
_HASH = re.compile(r"sha256:[0-9a-f]{64}")
_SPAN: Final = 16**13  # 52 bits: every fraction is exact in a float

#: The shortest secret taken: 16 bytes (128 bits), so the draws cannot be guessed.
MIN_SECRET_BYTES: Final = 16


def _secret(secret: object) -> bytes:
    if not isinstance(secret, bytes) or len(secret) < MIN_SECRET_BYTES:
        raise ValueError(
            f"the spot-check secret must be bytes, at least {MIN_SECRET_BYTES} of them,"
            f" got {show(type(secret).__name__) if not isinstance(secret, bytes) else len(secret)}"
        )
    return secret


def sample_tag(secret: bytes, key: str) -> str:
    """``"hmac-sha256:"`` and the hex HMAC-SHA256 of ``key`` (a submission key) under
    ``secret``: what draws the submission for a spot check, and lets an auditor redraw it."""
    if not isinstance(key, str) or _HASH.fullmatch(key) is None:
        raise ValueError(f"a submission key (sha256: and 64 hex digits) is needed, got {show(key)}")
    digest = hmac.new(_secret(secret), key.encode("ascii"), hashlib.sha256).hexdigest()
    return "hmac-sha256:" + digest


def sample_fraction(tag: str) -> float:
    """The draw of ``tag``, a fraction in [0, 1): a verdict is sampled at rate ``p`` when it is
    below ``p``."""
    if not isinstance(tag, str) or _TAG.fullmatch(tag) is None:
        raise ValueError(
            f"sample must be hmac-sha256: and 64 lowercase hex digits, got {show(tag)}"
        )
    return int(tag[12:25], 16) / _SPAN


def _rate(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number from 0 to 1, got {show(value)}")
    if not 0 <= value <= 1:
        raise ValueError(f"{name} must be from 0 to 1, got {show(value)}")
    return float(value)


def _passes(value: object) -> float:
    return _rate("passes", value)


def _fails(value: object) -> float:
    return _rate("fails", value)


@attrs.frozen(kw_only=True)
class SpotPlan:
    """What share of enforced verdicts a person spot-checks: ``passes`` of the passes and
    ``fails`` of the fails (0 to 1 each; 0 samples none), drawn with ``secret`` (bytes, at
    least 16; keep it on the server, never in the trail)."""

    passes: float = attrs.field(converter=_passes)
    fails: float = attrs.field(converter=_fails)
    secret: bytes = attrs.field(converter=_secret, repr=False)

    def rate(self, verdict: str) -> float:
        """The sampling rate of a ``pass`` or ``fail`` verdict (0 for any other)."""
        return self.passes if verdict == "pass" else self.fails if verdict == "fail" else 0.0

    def draw(self, record: VerdictRecord) -> str | None:
        """The sample tag when ``record`` (an enforced pass or fail) goes to a person for a
        spot check, else ``None``: an advisory verdict, an escalation or an error never does
        (people see those anyway, or nobody can say what was enforced)."""
        if not isinstance(record, VerdictRecord):
            raise TypeError(f"a VerdictRecord is needed, got {show(record)}")
        if record.advisory:
            return None
        return self.draw_key(record.key, record.result)

    def draw_key(self, key: str, verdict: str) -> str | None:
        """As :meth:`draw`, for an enforced verdict ``verdict`` on submission key ``key``."""
        rate = self.rate(verdict)
        if not rate:
            return None
        tag = sample_tag(self.secret, key)
        return tag if sample_fraction(tag) < rate else None


@attrs.frozen(kw_only=True)
class SpotCheckRecord:
    """A person's spot check of an enforced verdict (the module docstring has the JSON)."""

    key: str
    run: str
    step: str
    submission_sha256: str
    verdict: Literal["pass", "fail"]
    verdict_at: str
    probability: float
    sample: str
    decision: Decision
    record: Literal["spot_check"] = attrs.field(default="spot_check", init=False)

    @property
    def accepted(self) -> bool:
        """Whether the person would have let the submission stand."""
        return isinstance(self.decision, Completed) and self.decision.with_candidate

    @property
    def at(self) -> str:
        return self.decision.at

    @property
    def wrong(self) -> bool:
        """A wrong pass (passed, the person would refuse) or a wrong fail (failed, the person
        would accept)."""
        return self.accepted is (self.verdict == "fail")

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "format": AUDIT_FORMAT,
            "key": self.key,
            "run": self.run,
            "step": self.step,
            "submission_sha256": self.submission_sha256,
            "verdict": self.verdict,
            "verdict_at": self.verdict_at,
            "probability": self.probability,
            "sample": self.sample,
            "accepted": self.accepted,
            "decision": self.decision.to_json(),
        }


def spot_check_record(
    verdict: VerdictRecord, decision: Decision, *, plan: SpotPlan
) -> SpotCheckRecord:
    """The record of a person's ``decision`` in a spot check of ``verdict`` (drawn by
    ``plan``): ``Completed`` with no output when they would have accepted the submission,
    ``Returned`` or ``Failed`` when not. Raises :class:`ValueError` for a verdict the plan did
    not draw (an advisory one, an escalation, or one its hash did not choose): a spot check
    the plan did not ask for would weigh wrongly."""
    if not isinstance(plan, SpotPlan):
        raise TypeError(f"a SpotPlan is needed, got {show(plan)}")
    tag = plan.draw(verdict)
    if tag is None:
        raise ValueError(
            f"the plan did not draw the verdict {show(verdict.key)} for a spot check"
            f" ({'advisory' if verdict.advisory else verdict.result}); nothing was recorded"
        )
    decision = decision_from_json(decision)
    result: Literal["pass", "fail"] = "pass" if verdict.result == "pass" else "fail"
    return SpotCheckRecord(
        key=verdict.key,
        run=verdict.run,
        step=verdict.step,
        submission_sha256=verdict.submission_sha256,
        verdict=result,
        verdict_at=format_at(verdict.at),
        probability=plan.rate(result),
        sample=tag,
        decision=decision,
    )


def spot_from_json(data: Mapping[str, Any]) -> SpotCheckRecord:
    """A spot-check record from its JSON object (``"record": "spot_check"``); raises
    :class:`ValueError` saying what is wrong. Called by the strict reader."""
    if data.keys() != _SPOT_FIELDS:
        missing = [key for key in SPOT_KEYS if key not in data]
        if missing:
            raise ValueError(f"a spot_check record needs {show(missing[0])}")
        unknown = sorted((key for key in data if key not in _SPOT_FIELDS), key=str)
        raise ValueError(f"a spot_check record has no key {show(unknown[0])}")
    if type(data["format"]) is not int or data["format"] != AUDIT_FORMAT:
        raise ValueError(f"format {show(data['format'])} is not {AUDIT_FORMAT}")
    run, step = _id("run", data["run"]), _id("step", data["step"])
    for name in ("key", "submission_sha256"):
        value = data[name]
        if type(value) is not str or _HASH.fullmatch(value) is None:
            raise ValueError(
                f"{name} must be sha256: and 64 lowercase hex digits, got {show(value)}"
            )
    if data["key"] != _key_from(run, step, data["submission_sha256"]):
        raise ValueError("key is not the submission key of its run, step and submission_sha256")
    verdict = data["verdict"]
    if verdict not in ("pass", "fail") or type(verdict) is not str:
        raise ValueError(f'verdict must be "pass" or "fail", got {show(verdict)}')
    if type(data["verdict_at"]) is not str:
        raise ValueError(f"verdict_at must be a time, got {show(data['verdict_at'])}")
    verdict_at = format_at(data["verdict_at"])
    probability = data["probability"]
    if not of_type(probability, int, float) or not 0 < probability <= 1:
        raise ValueError(
            f"probability must be a number above 0, at most 1, got {show(probability)}"
        )
    fraction = sample_fraction(data["sample"])
    if not fraction < probability:
        raise ValueError(
            f"sample draws {fraction:.6f}, not below the probability {probability}: it was not"
            " drawn at that rate"
        )
    record = SpotCheckRecord(
        key=data["key"],
        run=run,
        step=step,
        submission_sha256=data["submission_sha256"],
        verdict="pass" if verdict == "pass" else "fail",
        verdict_at=verdict_at,
        probability=float(probability),
        sample=data["sample"],
        decision=read_back(data["decision"]),
    )
    if data["accepted"] is not record.accepted:
        raise ValueError(
            f"accepted is {show(data['accepted'])}, but the decision says {show(record.accepted)}"
        )
    return record
