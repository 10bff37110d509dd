"""What the profile records, built from an :class:`~checkprofile.Outcome` (profile section 3).

Pure functions: no clock, no I/O. The host gives the run and step ids and, for an escalation,
who escalated and who submitted; every time comes from the verdict unless the host gives it.
Every record is in core-2's shape (``schemas/handoff.schema.json``,
``escalation.schema.json``, ``candidate.schema.json``), and is read back by ``from_json``
only in that shape.

Choices the profile leaves open, each pinned by ``tests/human/decide/test_human_records.py``:

* The ``escalation`` of an unsure verdict: ``at`` is the verdict's ``at``; ``by`` is the host's
  (default ``"check"``: the check, not the agent, asked for a person); ``note`` is the host's,
  by default the issue lines of every question that did not pass, one per line, so the note
  says why a person is asked even where only ``note`` is shown.
* Its ``candidate`` is the held submission as a step record without history: ``output``,
  ``summary``, ``evidence``, the route (``next``, ``reason``) when the submission had one,
  and who submitted it and when: ``by`` is the host's ``submitted_by`` (left out when not
  given: the library cannot know the agent), ``at`` the host's ``submitted_at``, by default
  the verdict's ``at`` (the check runs on the submission as it arrives).
* A non-advisory ``error`` verdict records nothing in run data: the agent gets ``retry`` and
  resubmits (the verdict still belongs in the audit trail).
* An unsure verdict is written to ``steps.<id>.check`` at once ("while an unsure verdict waits
  on a person, run data shows it as ``steps.<id>.check``"); what happens to it after the
  decision is :func:`checkprofile.human.apply_decision`'s to say.
"""

from __future__ import annotations

import warnings
from datetime import datetime
from typing import Any

import attrs

from ..._bundle import Submission
from ..._check import Check
from ..._convert import NotJson, converter, plain, plain_text, register_renamed
from ..._lines import issue_lines
from ..._outcome import Action, Outcome, held_check
from ..._shown import is_blank, one_line, show
from ..._verdict import Verdict, format_at
from ...errors import MaterialError, VerdictError

__all__ = ["Escalation", "Handoff", "Records", "ReturnNote", "records_for"]

#: Who escalates an unsure verdict unless the host says otherwise.
DEFAULT_BY = "check"


def _lines(items: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(items)


def _name(what: str, value: object) -> str:
    text = plain_text(value)
    if type(text) is not str or is_blank(text):
        raise ValueError(f"{what} must be a non-blank string, got {show(value)}")
    return text


def _run_id(value: object) -> str:
    return _name("run_id", value)


def _step_id(value: object) -> str:
    return _name("step_id", value)


def _issues(items: tuple[str, ...] | list[str] | None) -> tuple[str, ...] | None:
    kind = type(items)
    if issubclass(kind, list):
        return tuple(map(plain_text, list.__iter__(items)))  # type: ignore[arg-type]
    if issubclass(kind, tuple):
        return tuple(map(plain_text, tuple.__iter__(items)))  # type: ignore[arg-type]
    return items  # type: ignore[return-value]  # None, or refused by _lines_field


def _text(what: str, value: object) -> str:
    if type(value) is not str:
        raise VerdictError(f"{what} must be a string, got {show(value)}")
    return value


def _plain_record(what: str, data: object) -> Any:
    """A record read back as plain JSON data (see :func:`~checkprofile._convert.plain`)."""
    try:
        return plain(data)
    except NotJson as error:
        raise VerdictError(f"{what} must be JSON data: {error}") from None


def _closed(what: str, data: object, keys: tuple[str, ...], required: tuple[str, ...]) -> None:
    """``data`` is a map of ``keys`` only, with every key of ``required``."""
    if type(data) is not dict:
        raise VerdictError(f"{what} must be a JSON object, got {show(data)}")
    missing = [key for key in required if key not in data]
    if missing:
        raise VerdictError(f"{what} needs {', '.join(missing)}")
    unknown = sorted((key for key in data if key not in keys), key=str)
    if unknown:
        raise VerdictError(f"{what} has no key {show(unknown[0])} (it has {', '.join(keys)})")


def _of(kind: type, what: str, *, optional: bool = True) -> Any:
    """An attrs validator: the value is a ``kind`` (or ``None``); the error names the field and
    shows the value bounded. A record is checked as it is built: a host must never write one
    core-2 would refuse."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if (value is None and optional) or type(value) is kind:
            return
        name = f"{type(instance).__name__}.{attribute.name}"
        raise TypeError(f"{name} must be {what}, got {show(value)}")

    return check


_text_field = _of(str, "a string", optional=False)


def _lines_field(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (
        type(value) is not tuple or not all(type(line) is str for line in value)
    ):
        raise TypeError(f"{type(instance).__name__}.issues must be strings, got {show(value)}")


@attrs.frozen(kw_only=True)
class ReturnNote:
    """A person's ``returned`` decision as core-2's handoff keeps it: ``note`` (why), ``by``
    (who) and ``at`` (when)."""

    note: str = attrs.field(converter=plain_text, validator=_text_field)
    by: str = attrs.field(converter=plain_text, validator=_text_field)
    at: str = attrs.field(converter=plain_text, validator=_text_field)


@attrs.frozen(kw_only=True)
class Handoff:
    """What the next attempt is handed, in core-2's shape: every field optional.

    ``returned`` is a person's returned decision (:class:`ReturnNote`: note, by, at);
    ``issues`` the verdict's issue lines and ``check`` the verdict (profile section 3);
    ``progress`` the host's own text. ``to_json()`` is ``{"progress"?, "returned"?: {"note",
    "by", "at"}, "issues"?, "check"?}``, each key only when set.
    """

    progress: str | None = attrs.field(
        default=None, converter=plain_text, validator=_of(str, "a string")
    )
    returned: ReturnNote | None = attrs.field(
        default=None, validator=_of(ReturnNote, "a ReturnNote")
    )
    issues: tuple[str, ...] | None = attrs.field(
        default=None, converter=_issues, validator=_lines_field
    )
    check: Verdict | None = attrs.field(default=None, validator=_of(Verdict, "a Verdict"))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = converter.unstructure(self)
        return data

    @classmethod
    def from_json(cls, data: object, *, check: Check | None = None) -> Handoff:
        """Read core-2's handoff (a map: ``null`` is no handoff, and is the caller's to skip).
        ``check`` (the step's check) lets the verdict name rubric levels in issue lines, and
        is checked against the recorded answers. Raises :class:`~checkprofile.VerdictError`.
        """
        record: dict[str, Any] = _plain_record("a handoff", data)
        _closed("a handoff", record, ("progress", "returned", "issues", "check"), ())
        progress = record.get("progress")
        if progress is not None:
            _text("handoff progress", progress)
        returned = None
        if "returned" in record:
            note = record["returned"]
            _closed("handoff returned", note, ("note", "by", "at"), ("note", "by", "at"))
            returned = ReturnNote(
                note=_text("handoff returned note", note["note"]),
                by=_text("handoff returned by", note["by"]),
                at=_text("handoff returned at", note["at"]),
            )
        issues = record.get("issues")
        if issues is not None and (
            not isinstance(issues, list) or not all(isinstance(line, str) for line in issues)
        ):
            raise VerdictError(f"handoff issues must be a list of strings, got {show(issues)}")
        verdict = Verdict.from_json(record["check"], check=check) if "check" in record else None
        return cls(progress=progress, returned=returned, issues=issues, check=verdict)


def _submitted_at(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, (str, datetime)):
        raise ValueError(f"submitted_at must be an RFC 3339 time, got {show(value)}")
    try:
        return format_at(value)
    except ValueError as error:
        raise ValueError(f"submitted_{error}") from None  # "submitted_at must be ..."


@attrs.frozen(kw_only=True)
class Escalation:
    """The work item's ``escalation`` for an unsure verdict (profile section 3), in core-2's
    shape.

    ``note``, ``by``, ``at`` as ``escalate`` records them, ``check`` the verdict (its questions
    and answers) and ``candidate`` the held submission (its route included), with who
    submitted it and when (``submitted_by``, ``submitted_at``: the candidate's ``by`` and
    ``at``). ``run_id`` and ``step_id`` say where it belongs; they are the host's, not part of
    the record, so ``to_json()`` leaves them out and :meth:`from_json` takes them as arguments.
    """

    run_id: str = attrs.field(converter=_run_id)
    step_id: str = attrs.field(converter=_step_id)
    note: str
    by: str
    at: str
    check: Verdict
    candidate: Submission
    submitted_by: str | None = attrs.field(default=None, validator=_of(str, "a string"))
    submitted_at: str | None = attrs.field(default=None, validator=_of(str, "a string"))

    @property
    def candidate_record(self) -> dict[str, Any]:
        """The candidate as core-2 records it: a step record without history,
        ``{"output", "summary"?, "evidence", "next"?, "reason"?, "by"?, "at"?}`` (a new dict
        each time)."""
        data = self.candidate.to_json()
        if self.submitted_by is not None:
            data["by"] = self.submitted_by
        if self.submitted_at is not None:
            data["at"] = self.submitted_at
        return data

    def candidate_json(self) -> dict[str, Any]:
        """Deprecated: :attr:`candidate_record`, an attribute like its neighbours."""
        warnings.warn(
            "Escalation.candidate_json() is deprecated: read Escalation.candidate_record",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.candidate_record

    def to_json(self) -> dict[str, Any]:
        """``{"note", "by", "at", "check", "candidate"}``: the profile's record."""
        return {
            "note": self.note,
            "by": self.by,
            "at": self.at,
            "check": self.check.to_json(),
            "candidate": self.candidate_record,
        }

    @classmethod
    def from_json(
        cls, data: object, *, run_id: str, step_id: str, check: Check | None = None
    ) -> Escalation:
        """Read an escalation record back. ``check`` (the step's check) lets the verdict name
        rubric levels in issue lines, and is checked against the recorded answers.

        core-2's escalation needs ``note``, ``by`` and ``at``; one of a check also has
        ``check`` and ``candidate``, which this reads, so both are needed here. The candidate
        is a step record without history, and one held for a decision has none yet: a
        ``decision``, ``note`` or ``check`` in it is refused. Raises
        :class:`~checkprofile.VerdictError`.
        """
        keys = ("note", "by", "at", "check", "candidate")
        record: dict[str, Any] = _plain_record("an escalation", data)
        _closed("an escalation", record, keys, keys)
        for key in ("note", "by"):
            if type(record[key]) is not str or is_blank(record[key]):
                raise VerdictError(
                    f"escalation {key} must be a non-blank string, got {show(record[key])}"
                )
        verdict = Verdict.from_json(record["check"], check=check)
        try:
            at = format_at(record["at"])
        except ValueError as error:
            raise VerdictError(f"escalation {error}") from None
        candidate, submitted_by, submitted_at = _candidate_from_json(record["candidate"])
        return cls(
            run_id=run_id,
            step_id=step_id,
            note=record["note"],
            by=record["by"],
            at=at,
            check=verdict,
            candidate=candidate,
            submitted_by=submitted_by,
            submitted_at=submitted_at,
        )


_CANDIDATE_KEYS = (
    "output",
    "evidence",
    "summary",
    "next",
    "reason",
    "decision",
    "note",
    "check",
    "by",
    "at",
)


def _candidate_from_json(data: object) -> tuple[Submission, str | None, str | None]:
    _closed("an escalation's candidate", data, _CANDIDATE_KEYS, ())
    assert type(data) is dict
    waiting = [key for key in ("decision", "note", "check") if key in data]
    if waiting:
        raise VerdictError(
            f"an escalation's candidate waits for a decision, so it has no {waiting[0]}"
        )
    by = data.get("by")
    at = data.get("at")
    if by is not None:
        _text("the candidate's by", by)
    if at is not None:
        _text("the candidate's at", at)
    submission = {key: value for key, value in data.items() if key not in ("by", "at")}
    try:
        return Submission.from_json(submission), by, at
    except MaterialError as error:
        raise VerdictError(f"an escalation's candidate: {one_line(str(error))}") from None


# core-2's handoff: every key only when set.
register_renamed(ReturnNote)
register_renamed(Handoff, omit_if_default=True)


@attrs.frozen(kw_only=True)
class Records:
    """Every record the profile asks for after one check, for step ``step_id``.

    ``handoff`` after a blocking fail; ``escalation`` for a (non-advisory) unsure verdict;
    ``check``, the ``steps.<id>.check`` entry, for pass, unsure and every advisory verdict.
    A field is ``None`` when the profile records nothing there.
    """

    step_id: str
    action: Action
    handoff: Handoff | None = None
    escalation: Escalation | None = None
    check: Verdict | None = None

    def to_json(self) -> dict[str, Any]:
        """The records as a patch a host can merge: ``{"handoff": ...}``,
        ``{"escalation": ...}`` and ``{"steps": {<id>: {"check": ...}}}``, each only when set."""
        data: dict[str, Any] = {}
        if self.handoff is not None:
            data["handoff"] = self.handoff.to_json()
        if self.escalation is not None:
            data["escalation"] = self.escalation.to_json()
        if self.check is not None:
            data["steps"] = {self.step_id: {"check": self.check.to_json()}}
        return data


def records_for(
    outcome: Outcome,
    *,
    run_id: str,
    step_id: str,
    by: str = DEFAULT_BY,
    note: str | None = None,
    submitted_by: str | None = None,
    submitted_at: str | datetime | None = None,
) -> Records:
    """The profile's records for ``outcome`` on step ``step_id`` of run ``run_id``.

    ============================  =======================================================
    outcome                       records
    ============================  =======================================================
    advisory (any verdict)        ``steps.<id>.check``
    pass                          ``steps.<id>.check``
    fail (blocking)               ``handoff``: ``check`` the verdict, ``issues`` the lines
    unsure (blocking)             ``escalation`` and ``steps.<id>.check``
    error (blocking)              nothing: the agent retries
    ============================  =======================================================

    The escalation's ``note`` defaults to the issue lines, one per line; ``by`` to
    ``"check"``. The candidate is the submission the evaluator was shown (route included), so
    the outcome must carry its bundle (every outcome :func:`~checkprofile.run_check` makes
    does); its ``by`` is ``submitted_by`` (who submitted: left out when not given), its
    ``at`` is ``submitted_at`` (an RFC 3339 string in UTC, or an aware datetime), by default
    the verdict's ``at``.
    """
    check = held_check(outcome)
    verdict = outcome.verdict if outcome.verdict.check is not None else _with_check(outcome, check)
    _name("run_id", run_id)
    _name("step_id", step_id)
    if submitted_by is not None:
        submitted_by = _name("submitted_by", submitted_by)  # its plain text, kept
    submitted = _submitted_at(submitted_at)
    if outcome.action == "not_accepted":
        return Records(
            step_id=step_id,
            action=outcome.action,
            handoff=Handoff(issues=issue_lines(verdict), check=verdict),
        )
    if outcome.action == "retry":
        return Records(step_id=step_id, action=outcome.action)
    if outcome.action == "complete":
        return Records(step_id=step_id, action=outcome.action, check=verdict)
    if outcome.bundle is None:
        raise ValueError(
            "an unsure outcome without its bundle has no candidate to hold: make it with"
            " run_check, or give outcome_for(..., bundle=)"
        )
    escalation = Escalation(
        run_id=run_id,
        step_id=step_id,
        note=_name("note", note) if note is not None else "\n".join(issue_lines(verdict)),
        by=_name("by", by),
        at=verdict.at,
        check=verdict,
        candidate=outcome.bundle.submission,
        submitted_by=submitted_by,
        submitted_at=submitted if submitted is not None else verdict.at,
    )
    return Records(step_id=step_id, action=outcome.action, escalation=escalation, check=verdict)


def _with_check(outcome: Outcome, check: Check) -> Verdict:
    return attrs.evolve(outcome.verdict, check=check)
