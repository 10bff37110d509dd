"""The gate: a blocking verdict counts only when its model has qualified for its check.

A host that turns the gate on passes each outcome through :func:`gate` before acting on it. A
verdict that would block (not advisory), whose answering ``model`` has no passing qualification
for the check (its check key) in :class:`Qualifications`, is made advisory: the verdict is kept
as the model gave it, the step completes as with ``advisory: true``, nothing is blocked, and a
warning says so. Once a passing qualification is recorded, the same verdict blocks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import attrs

from .._log import logger
from .._outcome import Outcome, held_check, outcome_for
from .._shown import show
from .._time import at_order
from ..human._audit._qualification import QualificationRecord
from ..human._audit._records import check_key
from ..human._audit._sources import Window, open_sources
from ._battery import BATTERY

__all__ = ["Qualifications", "gate"]

_log = logger("qualify")

#: What a gated verdict's model lacks, in the warning.
_NONE: Final = "no passing qualification"


class Qualifications:
    """The passing qualifications of an audit trail, by model and check key: the latest of
    each, of the battery ``battery`` (default: this library's :data:`BATTERY`; ``None``: any).
    A failed qualification qualifies nothing; a later failed one does not undo a pass."""

    def __init__(self, records: Iterable[object] = (), *, battery: str | None = BATTERY) -> None:
        self.battery = battery
        self._passed: dict[tuple[str, str], QualificationRecord] = {}
        for record in records:
            self.add(record)

    @classmethod
    def from_trail(cls, *sources: object, battery: str | None = BATTERY) -> Qualifications:
        """The qualifications recorded in ``sources``: audit files, directories of them,
        stores (:class:`~checkprofile.human.PostgresRecorder`) or records."""
        _, items = open_sources(sources, Window())
        return cls((item for item, _ in items), battery=battery)

    def add(self, record: object) -> None:
        """Take ``record`` if it is a passing qualification of the battery (anything else in
        a trail is passed over)."""
        if type(record) is not QualificationRecord or not record.qualified:
            return
        if self.battery is not None and record.battery != self.battery:
            return
        key = (record.model, record.check_key)
        kept = self._passed.get(key)
        if kept is None or at_order(kept.at) <= at_order(record.at):
            self._passed[key] = record

    def find(self, model: str, check_key_: str) -> QualificationRecord | None:
        """The passing qualification of ``model`` for the check whose key is ``check_key_``,
        or ``None``."""
        return self._passed.get((model, check_key_))

    def __len__(self) -> int:
        return len(self._passed)


def gate(outcome: Outcome, qualifications: Qualifications) -> Outcome:
    """``outcome`` as the gate lets it stand: unchanged when its verdict is advisory or its
    model has a passing qualification for its check; else made advisory (the verdict as it
    was, the step completing, nothing blocked) and logged as a warning naming the model and
    the check key."""
    if type(outcome) is not Outcome:
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    if type(qualifications) is not Qualifications:
        raise TypeError(f"qualifications must be Qualifications, got {show(qualifications)}")
    verdict = outcome.verdict
    if verdict.advisory:
        return outcome
    key = check_key(held_check(outcome))
    if qualifications.find(verdict.model, key) is not None:
        return outcome
    _log.warning(
        "the model %s has %s for the check %s (battery %s): its %s verdict is recorded as"
        " advisory and blocks nothing until one is recorded",
        show(verdict.model),
        _NONE,
        key,
        qualifications.battery or "any",
        verdict.verdict,
    )
    return outcome_for(
        attrs.evolve(verdict, advisory=True),
        attempts=outcome.attempts,
        failures=outcome.failures,
        answers=outcome.answers,
        bundle=outcome.bundle,
        calls=outcome.calls,
    )
