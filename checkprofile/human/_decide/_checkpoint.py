"""A checkpoint: everything needed to decide an escalation later, in another process.

When a check is unsure the step waits on a person, who may decide in a minute or in a week,
on another machine. :func:`checkpoint_for` makes, from what the host has after the unsure
outcome, one JSON value (:meth:`Checkpoint.to_json`) holding the step's state with the held
candidate and the escalation, and the receipt the person reads (the check and its verdict with
it). :meth:`Checkpoint.from_json` reads it back with no other argument, and
:meth:`Checkpoint.decide` gives the step's next state for the person's decision. Reading a
checkpoint never changes what a decision produces: the check travels inside it, so the lines
a ``returned`` decision hands the agent are the lines the verdict gave (``level 1: Some.
(0.9)``, never ``level 1 (0.9)``).

``reference`` is an opaque, stable name for the checkpoint (for a URL or a form field): the
first 32 hex digits of the SHA-256 of its canonical JSON. It says nothing of what is inside,
and the same checkpoint has the same reference in every process.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from ..._bundle import Submission, canonical_json
from ..._check import Check
from ..._convert import NotJson, plain
from ..._json_text import same_json
from ..._outcome import Outcome
from ..._shown import one_line, show
from ..._verdict import Verdict
from ._decisions import Decision, Resolution, apply_decision, decision_from_json
from ._receipts import Receipt, ReceiptError, receipt_for
from ._records import DEFAULT_BY, Escalation
from ._shown_texts import DEFAULT_SHOWN_CHARS
from ._state import StateError, StepState, after_check, after_decision

__all__ = ["CHECKPOINT_FORMAT", "Checkpoint", "CheckpointError", "checkpoint_for"]

#: The version of the checkpoint JSON; :meth:`Checkpoint.from_json` refuses any other.
CHECKPOINT_FORMAT = 1

_KEYS = ("checkpoint", "state", "receipt")


class CheckpointError(StateError):
    """A checkpoint JSON that is not one, or whose parts do not agree (named with where)."""


@attrs.frozen(kw_only=True)
class Checkpoint:
    """An escalated step waiting on a person's decision, whole.

    ``state``: the step's state while it waits (:class:`~checkprofile.human.StepState`, its
    escalation and held candidate included); ``receipt``: what the person reads
    (:class:`~checkprofile.human.Receipt`). Build it with :func:`checkpoint_for`; read it
    with :meth:`from_json`.
    """

    state: StepState
    receipt: Receipt

    def __attrs_post_init__(self) -> None:
        if type(self.state) is not StepState or type(self.receipt) is not Receipt:
            raise TypeError(
                f"a Checkpoint holds a StepState and a Receipt, got {show(self.state)} and"
                f" {show(self.receipt)}"
            )
        _agree(self.state, self.receipt)

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def step_id(self) -> str:
        return self.state.step_id

    @property
    def escalation(self) -> Escalation:
        """The work item's escalation: note, who escalated and when, verdict, candidate."""
        assert self.state.escalation is not None  # _agree says so
        return self.state.escalation

    @property
    def check(self) -> Check:
        """The step's check, as the verdict was graded under it."""
        return self.receipt.check

    @property
    def verdict(self) -> Verdict:
        return self.receipt.verdict

    @property
    def candidate(self) -> Submission:
        """The held submission."""
        return self.escalation.candidate

    @property
    def check_key(self) -> str:
        """The check's key, as the audit trail writes it (the verdict record's ``check_key``:
        ``sha256:`` and the SHA-256 of the check's canonical JSON): what binds this checkpoint
        to the verdict it holds in the trail."""
        text = canonical_json(self.check.to_json())
        return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def reference(self) -> str:
        """An opaque, stable name for this checkpoint: 32 hex digits of the SHA-256 of its
        canonical JSON."""
        return reference_of(self.to_json())

    def to_json(self) -> dict[str, Any]:
        """``{"checkpoint": 1, "state": <StepState JSON>, "receipt": <Receipt JSON>}``."""
        return {
            "checkpoint": CHECKPOINT_FORMAT,
            "state": self.state.to_json(),
            "receipt": self.receipt.to_json(),
        }

    @classmethod
    def from_json(cls, data: object) -> Checkpoint:
        """Read what :meth:`to_json` wrote; equal to the checkpoint that wrote it. Raises
        :class:`CheckpointError` naming the part that is wrong, or that does not agree."""
        try:
            record = plain(data)
        except NotJson as error:
            raise CheckpointError(f"a checkpoint must be JSON data: {error}") from None
        if type(record) is not dict:
            raise CheckpointError(f"a checkpoint must be a JSON object, got {show(record)}")
        unknown = sorted(key for key in record if key not in _KEYS)
        if unknown:
            raise CheckpointError(
                f"a checkpoint has no key {show(unknown[0])} (it has {', '.join(_KEYS)})"
            )
        missing = [key for key in _KEYS if key not in record]
        if missing:
            raise CheckpointError(f"a checkpoint needs {', '.join(missing)}")
        version = record["checkpoint"]
        if type(version) is not int or version != CHECKPOINT_FORMAT:
            raise CheckpointError(
                f'a checkpoint\'s "checkpoint" must be {CHECKPOINT_FORMAT}, got {show(version)}'
            )
        try:
            receipt = Receipt.from_json(record["receipt"])
        except ReceiptError as error:
            raise CheckpointError(f"a checkpoint's receipt: {one_line(str(error))}") from None
        try:
            state = StepState.from_json(record["state"], check=receipt.check)
        except CheckpointError:
            raise
        except StateError as error:
            raise CheckpointError(f"a checkpoint's state: {one_line(str(error))}") from None
        return cls(state=state, receipt=receipt)

    def decide(
        self, decision: Decision | Mapping[str, Any], *, at: str | datetime | None = None
    ) -> StepState:
        """The step's next state for the person's ``decision`` (see
        :func:`~checkprofile.human.after_decision`): a typed decision, or its JSON from the
        person's screen, with ``at`` the host's time when the decision carries none."""
        return after_decision(self.state, decision, at=at)

    def resolve(
        self, decision: Decision | Mapping[str, Any], *, at: str | datetime | None = None
    ) -> Resolution:
        """What ``decision`` on the escalation records (see
        :func:`~checkprofile.human.apply_decision`): for the audit trail,
        ``resolution_record(checkpoint.resolve(decision))``, whose key joins the verdict's."""
        return apply_decision(self.escalation, decision_from_json(decision, at=at))


def reference_of(data: dict[str, Any]) -> str:
    """:attr:`Checkpoint.reference` from the checkpoint's :meth:`~Checkpoint.to_json` (for a
    caller that has it already)."""
    text = canonical_json(data)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _agree(state: StepState, receipt: Receipt) -> None:
    """The state waits on the escalation the receipt shows."""
    escalation = state.escalation
    if escalation is None:
        raise CheckpointError("a checkpoint's state must wait on a decision (its escalation)")
    if (receipt.run_id, receipt.step_id) != (state.run_id, state.step_id):
        raise CheckpointError(
            f"a checkpoint's receipt is for step {show(receipt.step_id)} of run"
            f" {show(receipt.run_id)}, its state for step {show(state.step_id)} of run"
            f" {show(state.run_id)}"
        )
    if receipt.action != "escalate":
        raise CheckpointError(
            "a checkpoint's receipt must be of an escalated check, got action"
            f" {show(receipt.action)}"
        )
    # Compared as JSON, by type: the page shows `true` and `100`; a held `1` and `100.0` would
    # be what completing writes.
    if not same_json(escalation.check.to_json(), receipt.verdict.to_json()):
        raise CheckpointError("a checkpoint's escalation holds another verdict than its receipt")
    held = escalation.check.check
    if held is not None and not same_json(held.to_json(), receipt.check.to_json()):
        raise CheckpointError(
            "a checkpoint's escalation was graded under another check than its receipt shows"
            " (another check key)"
        )
    if not same_json(escalation.candidate.to_json(), receipt.candidate.to_json()):
        raise CheckpointError("a checkpoint's escalation holds another candidate than its receipt")


def checkpoint_for(
    outcome: Outcome,
    *,
    state: StepState | Mapping[str, Any],
    submitted_by: str | None = None,
    submitted_at: str | datetime | None = None,
    by: str = DEFAULT_BY,
    note: str | None = None,
    shown_chars: int = DEFAULT_SHOWN_CHARS,
) -> Checkpoint:
    """The checkpoint of an escalated ``outcome`` (an unsure verdict, or an error passed
    through :func:`~checkprofile.human.escalate_error`) on the step whose state before the
    check was ``state``.

    Its ``state`` is what :func:`~checkprofile.human.after_check` gives for the same
    arguments: keep it as the step's state, and the checkpoint's JSON until a person decides.
    ``shown_chars`` is how much of each text the evaluator was shown the receipt keeps, as
    :func:`~checkprofile.human.receipt_for` takes it. Raises :class:`ValueError` for an
    outcome that does not escalate (nothing waits), and what ``after_check`` and
    ``receipt_for`` raise.
    """
    if type(outcome) is not Outcome:
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    if outcome.action != "escalate":
        raise ValueError(
            f"a checkpoint is made for an escalated check; this outcome's action is"
            f" {show(outcome.action)}, so nothing waits on a person"
        )
    waiting = after_check(
        state,
        outcome,
        submitted_by=submitted_by,
        submitted_at=submitted_at,
        by=by,
        note=note,
    )
    receipt = receipt_for(
        outcome, run_id=waiting.run_id, step_id=waiting.step_id, shown_chars=shown_chars
    )
    return Checkpoint(state=waiting, receipt=receipt)
