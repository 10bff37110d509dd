"""A step's state, and the next state after each event of a check (profile section 3).

A host keeps, for each step of a run, its entry in run data (``steps.<id>``), the work item's
``handoff`` and ``escalation``, all in core-2's shapes. :class:`StepState` holds the three,
and one pure function per event gives the next state:

=====================================  ===================================================
event                                  the next state
=====================================  ===================================================
:func:`after_check` pass, or advisory  the step completes: its record is the submission
                                       with ``check``, ``by``, ``at``; the handoff is cleared
:func:`after_check` blocking fail      run data unchanged; ``handoff.check`` and
                                       ``handoff.issues`` the verdict and its lines
:func:`after_check` unsure             the candidate is held in ``escalation``; the verdict
                                       shows as ``steps.<id>.check`` while it waits
:func:`after_check` error              nothing changes: the agent gets ``retry``
:func:`after_decision` returned        the step's record as it was before the unsure verdict
                                       (its earlier ``check`` entry back, or no record);
                                       the escalation and its candidate gone; the handoff
                                       carries the note, the verdict and its lines
:func:`after_decision` completed       the step completes with the candidate (``by``/``at``
                                       the candidate's) or the person's own output
                                       (``by``/``at`` the person's), not checked again
:func:`after_decision` failed          the step's record says ``decision: failed`` with the
                                       note, who and when, and keeps the verdict
:func:`after_rework`                   rework through ``on_reject``: a fresh attempt, the
                                       handoff empty and the earlier record (its verdict
                                       with it) in the step's ``history``
=====================================  ===================================================

Nothing is mutated: every function returns a new state and leaves its arguments as they were.
A state read from JSON (:meth:`StepState.from_json`) is checked whole, each piece against its
core-2 shape; a piece that is not one raises :class:`StateError` naming where, and nothing
is made.

Choices the profile leaves open, each pinned by ``tests/human/decide/test_human_state.py``:

* When a step completes again (after rework, or a later pass of the same step), its earlier
  record, without ``history``, is appended to ``history``: core-2's history is the step's
  earlier records.
* A blocking fail, and a decision on an escalation, carry the handoff's ``progress`` (the
  agent's own). A fail also carries a person's earlier ``returned`` note: the same attempt
  goes on, and the note still says what the person asked for.
* While the escalation waits, the state also keeps ``previous``: the step's record as it was
  before the unsure verdict was shown as its ``check`` (``null`` when it had none), so that a
  ``returned`` decision can put it back. It is the library's, not core-2's: run data shows
  ``record``.
* Rework leaves the step a record of ``history`` alone (``{"history": [...]}``), the smallest
  step record core-2 allows, when the step had one to keep.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

import attrs

from ..._bundle import Submission
from ..._check import Check
from ..._convert import NotJson, plain, plain_text
from ..._json_text import same_json
from ..._outcome import Outcome
from ..._shapes import step_record_problems
from ..._shown import is_blank, one_line, show
from ..._types import is_mapping
from ..._verdict import Verdict, format_at
from ...errors import CheckprofileError, VerdictError
from ._decisions import Completed, Decision, Failed, Returned, apply_decision, decision_from_json
from ._records import _CANDIDATE_KEYS, DEFAULT_BY, Escalation, Handoff, records_for

__all__ = [
    "STATE_FORMAT",
    "StateError",
    "StepState",
    "after_check",
    "after_decision",
    "after_rework",
    "escalate_error",
    "replayable",
]

#: The format of :meth:`StepState.to_json`; :meth:`StepState.from_json` refuses any other.
STATE_FORMAT = 1

# A step record's keys, in core-2's order (a record is written in it): a candidate's and its
# history.
_RECORD_KEYS = (*_CANDIDATE_KEYS, "history")


class StateError(CheckprofileError, ValueError):
    """A step state that is not one (a piece not in its core-2 shape, named with where), or
    an event the state cannot take (a submission checked while a person's decision waits).
    Nothing was changed."""


# --- the state --------------------------------------------------------------------------------


def _record_at(where: str, value: object) -> dict[str, Any] | None:
    """A step record given to a state, read as core-2's: a copy, so that the caller's changes
    never reach the state; ``None`` for none; else a :class:`StateError` naming where."""
    if value is None:
        return None
    try:
        data = plain(value)
    except NotJson as error:
        raise StateError(
            f"a step state must be JSON data: at {where}{error.pointer if error.path else ''}:"
            f" {error.reason}"
        ) from None
    return _step_record(where, data)


def _record_in(value: object) -> dict[str, Any] | None:
    return _record_at("/record", value)


def _previous_in(value: object) -> dict[str, Any] | None:
    return _record_at("/previous", value)


@attrs.frozen(kw_only=True)
class StepState:
    """Step ``step_id`` of run ``run_id``, as a check sees it.

    ``record``: the step's entry in run data (``steps.<id>``, a core-2 step record), ``None``
    while the step has none. ``handoff``: the work item's handoff, ``None`` for none.
    ``escalation``: the work item's escalation while a person's decision waits, else
    ``None``. ``previous``: while an escalation waits, the step's record as it was before the
    unsure verdict was shown as its ``check`` (``None``: it had no record).

    Build the first state of a step with ``StepState(run_id=..., step_id=...)``, or read one
    with :meth:`from_json`. Records are plain JSON, copied in and out: changing what
    :meth:`to_json` gave changes no state.
    """

    run_id: str
    step_id: str
    _record: dict[str, Any] | None = attrs.field(default=None, alias="record", converter=_record_in)
    handoff: Handoff | None = None
    escalation: Escalation | None = None
    _previous: dict[str, Any] | None = attrs.field(
        default=None, alias="previous", converter=_previous_in
    )

    def __attrs_post_init__(self) -> None:
        for name in ("run_id", "step_id"):
            value = getattr(self, name)
            if type(value) is not str or is_blank(value):
                raise TypeError(f"StepState.{name} must be a non-blank string, got {show(value)}")
        if self.handoff is not None and type(self.handoff) is not Handoff:
            raise TypeError(f"StepState.handoff must be a Handoff, got {show(self.handoff)}")
        if self.escalation is not None:
            if type(self.escalation) is not Escalation:
                raise TypeError(
                    f"StepState.escalation must be an Escalation, got {show(self.escalation)}"
                )
            if self.escalation.check.check is None:
                raise StateError(
                    "the escalation's verdict does not know its check: read it with"
                    " Escalation.from_json(data, check=...), so that the agent's lines name"
                    " rubric levels"
                )
            if (self.escalation.run_id, self.escalation.step_id) != (self.run_id, self.step_id):
                raise StateError(
                    f"the escalation is for step {show(self.escalation.step_id)} of run"
                    f" {show(self.escalation.run_id)}, not step {show(self.step_id)} of run"
                    f" {show(self.run_id)}"
                )
            # While the escalation waits, run data shows its verdict as the step's check: the
            # record is `previous` with that check, and nothing else. A record that is not
            # would be put back wrong by `returned`, or kept in history wrong by the others.
            if not same_json(self._record, _showing(self._previous, self.escalation.check)):
                raise StateError(
                    "a step state whose escalation waits has as its record the previous record"
                    " with the escalation's verdict as its check ({history: [], check} when"
                    " previous is null), and nothing else"
                )
        elif self._previous is not None:
            raise StateError("a state keeps a previous record only while an escalation waits")

    @property
    def record(self) -> dict[str, Any] | None:
        """The step's entry in run data (a copy), or ``None``."""
        return copy.deepcopy(self._record)

    @property
    def previous(self) -> dict[str, Any] | None:
        """While an escalation waits, the step's record before it (a copy), or ``None``."""
        return copy.deepcopy(self._previous)

    @property
    def waiting(self) -> bool:
        """Whether a person's decision waits (the step is escalated)."""
        return self.escalation is not None

    @property
    def check(self) -> dict[str, Any] | None:
        """The step's ``steps.<id>.check`` entry (a verdict record), or ``None``."""
        if self._record is None or "check" not in self._record:
            return None
        return cast(dict[str, Any], copy.deepcopy(self._record["check"]))

    def to_json(self) -> dict[str, Any]:
        """``{"state": 1, "run", "step", "record", "handoff", "escalation"}``, each core-2
        piece ``null`` when there is none, and ``"previous"`` while an escalation waits."""
        data: dict[str, Any] = {
            "state": STATE_FORMAT,
            "run": self.run_id,
            "step": self.step_id,
            "record": self.record,
            "handoff": None if self.handoff is None else self.handoff.to_json(),
            "escalation": None if self.escalation is None else self.escalation.to_json(),
        }
        if self.escalation is not None:
            data["previous"] = self.previous
        return data

    @classmethod
    def from_json(cls, data: object, *, check: Check | None = None) -> StepState:
        """Read what :meth:`to_json` wrote. ``check``, the step's check, is needed when an
        escalation waits: the lines a ``returned`` decision hands the agent name rubric
        levels from it (read without it, ``level 1: Some. (0.9)`` would become
        ``level 1 (0.9)``). Raises :class:`StateError` naming the piece that is wrong."""
        if check is not None and type(check) is not Check:
            raise TypeError(f"check must be a Check (see parse_check), got {show(check)}")
        try:
            record = plain(data)
        except NotJson as error:
            raise StateError(f"a step state must be JSON data: {error}") from None
        return _state_from_json(record, check)


def _state_from_json(data: Any, check: Check | None) -> StepState:
    if type(data) is not dict:
        raise StateError(f"a step state must be a JSON object, got {show(data)}")
    keys = ("state", "run", "step", "record", "handoff", "escalation", "previous")
    unknown = sorted(key for key in data if key not in keys)
    if unknown:
        raise StateError(f"a step state has no key {show(unknown[0])} (it has {', '.join(keys)})")
    missing = [key for key in keys[:-1] if key not in data]
    if missing:
        raise StateError(f"a step state needs {', '.join(missing)}")
    if data["state"] != STATE_FORMAT or type(data["state"]) is not int:
        got = show(data["state"])
        raise StateError(f'a step state\'s "state" must be {STATE_FORMAT}, got {got}')
    for key in ("run", "step"):
        if type(data[key]) is not str or is_blank(data[key]):
            got = show(data[key])
            raise StateError(f"a step state's {key} must be a non-blank string, got {got}")
    run_id, step_id = data["run"], data["step"]
    handoff = None
    if data["handoff"] is not None:
        try:
            handoff = Handoff.from_json(data["handoff"])
        except VerdictError as error:
            raise StateError(f"a step state at /handoff: {one_line(str(error))}") from None
    escalation = None
    if data["escalation"] is not None:
        if check is None:
            raise StateError(
                "this step state waits on a decision: read it with check= (the step's check),"
                " or resume from its Checkpoint, so the agent's lines name rubric levels"
            )
        try:
            escalation = Escalation.from_json(
                data["escalation"], run_id=run_id, step_id=step_id, check=check
            )
        except VerdictError as error:
            raise StateError(f"a step state at /escalation: {one_line(str(error))}") from None
        if "previous" not in data:
            raise StateError("a step state whose escalation waits needs previous (null for none)")
    elif "previous" in data:
        raise StateError("a step state has previous only while its escalation waits")
    return StepState(
        run_id=run_id,
        step_id=step_id,
        record=data["record"],
        handoff=handoff,
        escalation=escalation,
        previous=data.get("previous"),
    )


def _step_record(where: str, data: object) -> dict[str, Any] | None:
    """``data`` as a core-2 step record (a copy), ``None`` for ``null``; else a StateError
    naming the first problem, its path from ``where``."""
    if data is None:
        return None
    problems = step_record_problems(data)
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise StateError(
            f"a step state at {where}{first.pointer}: {first.message} (a core-2 step record){more}"
        )
    return cast(dict[str, Any], copy.deepcopy(data))


def _state_arg(state: object, check: Check | None = None) -> StepState:
    if type(state) is StepState:
        return state
    if is_mapping(state):
        return StepState.from_json(state, check=check)
    raise TypeError(f"a StepState (or its JSON) is needed, got {show(state)}")


# --- records ----------------------------------------------------------------------------------


def _entry(record: dict[str, Any]) -> dict[str, Any] | None:
    """``record`` as a history entry (without ``history``), or ``None`` when it holds nothing
    but its history (the step has not completed since)."""
    entry = {key: value for key, value in record.items() if key != "history"}
    return copy.deepcopy(entry) if entry else None


def _history(record: dict[str, Any] | None) -> list[Any]:
    """The history a new record of the step starts from: the earlier record's, and the
    earlier record itself when it held more than its history."""
    if record is None:
        return []
    history = copy.deepcopy(list(record["history"]))
    entry = _entry(record)
    if entry is not None:
        history.append(entry)
    return history


def _ordered(record: dict[str, Any]) -> dict[str, Any]:
    return {key: record[key] for key in _RECORD_KEYS if key in record}


def _completed(
    before: dict[str, Any] | None,
    submission: Submission,
    *,
    check: Verdict,
    by: str | None,
    at: str,
    note: str | None = None,
) -> dict[str, Any]:
    record = submission.to_json()
    if note is not None:
        record["note"] = note
    record["check"] = check.to_json()
    if by is not None:
        record["by"] = by
    record["at"] = at
    record["history"] = _history(before)
    return _ordered(record)


def _showing(record: dict[str, Any] | None, check: Verdict) -> dict[str, Any]:
    """``record`` with ``check`` shown as its ``steps.<id>.check`` (a record of its own when
    the step has none)."""
    shown = copy.deepcopy(record) if record is not None else {"history": []}
    shown["check"] = check.to_json()
    return _ordered(shown)


def _carried(handoff: Handoff | None, **changes: Any) -> Handoff:
    """A handoff for the same attempt: the agent's ``progress`` carried, ``changes`` set."""
    progress = handoff.progress if handoff is not None else None
    return Handoff(progress=progress, **changes)


# --- the events -------------------------------------------------------------------------------


def replayable(outcome: Outcome) -> bool:
    """Whether the answer to a submit may be kept for its ``requestId`` and given again when
    the same ``requestId`` arrives: every action but ``retry``. A ``retry`` asks the agent to
    resubmit with the same ``requestId``; kept, it would answer that resubmit with ``retry``
    for ever, and the check would never run again."""
    if type(outcome) is not Outcome:
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    return outcome.action != "retry"


def escalate_error(outcome: Outcome) -> Outcome:
    """``outcome`` escalated to a person when it is a blocking ``error`` ("a server MAY
    instead escalate after repeated errors"), else ``outcome`` itself.

    The host counts the errors (the same ``requestId`` resubmitted) and decides when they are
    repeated; give the escalated outcome to :func:`after_check`,
    :func:`~checkprofile.human.records_for`, :func:`~checkprofile.human.receipt_for` or
    :func:`~checkprofile.human.checkpoint_for` as any unsure one: the candidate is held, the
    error verdict shows as ``steps.<id>.check`` and in ``escalation.check``, and the note says
    which questions went unanswered. An advisory error already completes the step.
    """
    if type(outcome) is not Outcome:
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    if outcome.action != "retry":
        return outcome
    return attrs.evolve(outcome, action="escalate")


def after_check(
    state: StepState | Mapping[str, Any],
    outcome: Outcome,
    *,
    submitted_by: str | None = None,
    submitted_at: str | datetime | None = None,
    by: str = DEFAULT_BY,
    note: str | None = None,
) -> StepState:
    """The step's state after a check of a submission ended in ``outcome``.

    ``submitted_by`` and ``submitted_at`` say who submitted and when (the completed record's
    and the held candidate's ``by`` and ``at``; ``at`` defaults to the verdict's); ``by`` and
    ``note`` are the escalation's (see :func:`~checkprofile.human.records_for`). The outcome
    must carry its bundle (every outcome :func:`~checkprofile.run_check` makes does): the
    submission is in it. Raises :class:`StateError` when a decision waits on the step (a
    held step takes no submission), and the errors of ``records_for`` for bad arguments.
    """
    state = _state_arg(state)
    if type(outcome) is not Outcome:
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    if state.escalation is not None:
        raise StateError(
            f"step {show(state.step_id)} of run {show(state.run_id)} waits on a person's"
            " decision: it takes no submission until then"
        )
    records = records_for(
        outcome,
        run_id=state.run_id,
        step_id=state.step_id,
        by=by,
        note=note,
        submitted_by=submitted_by,
        submitted_at=submitted_at,
    )
    if records.action == "retry":
        return state
    if records.action == "not_accepted":
        assert records.handoff is not None
        earlier = state.handoff
        returned = earlier.returned if earlier is not None else None
        handoff = _carried(
            earlier, returned=returned, issues=records.handoff.issues, check=records.handoff.check
        )
        return attrs.evolve(state, handoff=handoff)
    assert records.check is not None
    if records.action == "escalate":
        assert records.escalation is not None
        return attrs.evolve(
            state,
            record=_showing(state._record, records.check),
            escalation=records.escalation,
            previous=state._record,
        )
    if outcome.bundle is None:  # records_for needs none for a pass: the record does
        raise ValueError(
            "an outcome without its bundle has no submission to complete the step with: make"
            " it with run_check, or give outcome_for(..., bundle=)"
        )
    # records_for has checked submitted_at; it is written as the candidate's would be.
    at = records.check.at if submitted_at is None else format_at(submitted_at)
    record = _completed(
        state._record,
        outcome.bundle.submission,
        check=records.check,
        by=cast("str | None", plain_text(submitted_by)),
        at=at,
    )
    return StepState(run_id=state.run_id, step_id=state.step_id, record=record)


def after_decision(
    state: StepState | Mapping[str, Any],
    decision: Decision | Mapping[str, Any],
    *,
    check: Check | None = None,
    at: str | datetime | None = None,
) -> StepState:
    """The step's state after a person's ``decision`` on its escalation.

    ``decision`` is a :class:`~checkprofile.human.Returned`, :class:`~checkprofile.human.Completed`
    or :class:`~checkprofile.human.Failed`, or its JSON (read by
    :func:`~checkprofile.human.decision_from_json`, with ``at`` the time to record when the
    person's screen sent none). ``check`` is needed only to read a state given as JSON (see
    :meth:`StepState.from_json`). Raises :class:`StateError` when no decision waits, and
    :class:`~checkprofile.human.DecisionRequiredError` for anything that is not a decision.
    """
    state = _state_arg(state, check)
    decision = decision_from_json(decision, at=at)  # a typed one is checked and kept
    escalation = state.escalation
    if escalation is None:
        raise StateError(
            f"no decision waits on step {show(state.step_id)} of run {show(state.run_id)}"
        )
    resolution = apply_decision(escalation, decision)
    base = StepState(run_id=state.run_id, step_id=state.step_id)
    if type(decision) is Returned:
        assert resolution.handoff is not None
        handoff = _carried(
            state.handoff,
            returned=resolution.handoff.returned,
            issues=resolution.handoff.issues,
            check=resolution.handoff.check,
        )
        return attrs.evolve(base, record=state._previous, handoff=handoff)
    if type(decision) is Completed:
        assert resolution.output is not None
        own = not decision.with_candidate
        record = _completed(
            state._previous,
            resolution.output,
            check=escalation.check,
            by=decision.by if own else escalation.submitted_by,
            at=decision.at if own else escalation.submitted_at or escalation.at,
            note=decision.note,
        )
        return attrs.evolve(base, record=record)
    failed = cast(Failed, decision)
    record = {
        "decision": "failed",
        "note": failed.note,
        "check": escalation.check.to_json(),
        "by": failed.by,
        "at": failed.at,
        "history": _history(state._previous),
    }
    return attrs.evolve(base, record=record)


def after_rework(state: StepState | Mapping[str, Any]) -> StepState:
    """The step's state when a later step sends the work back through ``on_reject``: a fresh
    attempt. The handoff starts empty, and the step's record so far (its verdict with it)
    goes to its ``history``. Raises :class:`StateError` while a decision waits on the step."""
    state = _state_arg(state)
    if state.escalation is not None:
        raise StateError(
            f"step {show(state.step_id)} of run {show(state.run_id)} waits on a person's"
            " decision: decide it before the work is sent back"
        )
    record = None if state._record is None else {"history": _history(state._record)}
    return StepState(run_id=state.run_id, step_id=state.step_id, record=record)
