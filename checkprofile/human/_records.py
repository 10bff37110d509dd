"""What the profile records, built from an :class:`~checkprofile.Outcome` (profile section 3).

Pure functions: no clock, no I/O. The host gives the run and step ids and, for an escalation,
who escalated; every time comes from the verdict.

Choices the profile leaves open, each pinned by ``tests/test_human_records.py``:

* The ``escalation`` of an unsure verdict: ``at`` is the verdict's ``at``; ``by`` is the host's
  (default ``"check"``: the check, not the agent, asked for a person); ``note`` is the host's,
  by default the issue lines of every question that did not pass, one per line, so the note
  says why a person is asked even where only ``note`` is shown.
* A non-advisory ``error`` verdict records nothing in run data: the agent gets ``retry`` and
  resubmits (the verdict still belongs in the audit trail).
* An unsure verdict is written to ``steps.<id>.check`` at once ("while an unsure verdict waits
  on a person, run data shows it as ``steps.<id>.check``"); what happens to it after the
  decision is :func:`checkprofile.human.apply_decision`'s to say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from cattrs.gen import override

from .._bundle import Submission
from .._check import Check
from .._convert import converter, register_renamed, show
from .._lines import issue_lines
from .._run import Action, Outcome
from .._verdict import Verdict, format_at
from ..errors import VerdictError

__all__ = ["Escalation", "Handoff", "Records", "held_check", "records_for"]

#: Who escalates an unsure verdict unless the host says otherwise.
DEFAULT_BY = "check"


def _lines(items: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(items)


def _name(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-blank string, got {show(value)}")
    return value


def _run_id(value: object) -> str:
    return _name("run_id", value)


def _step_id(value: object) -> str:
    return _name("step_id", value)


def held_check(outcome: Outcome) -> Check:
    """The check an outcome's verdict answers: the verdict's own, else the bundle's.

    Raises :class:`ValueError` when the outcome knows neither (a verdict read with
    ``Verdict.from_json`` without ``check=``), because thresholds and level texts come from it.
    """
    if not isinstance(outcome, Outcome):
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    if outcome.verdict.check is not None:
        return outcome.verdict.check
    if outcome.bundle is not None:
        return outcome.bundle.check
    raise ValueError(
        "the outcome's verdict does not know its check: read it with"
        " Verdict.from_json(data, check=...) or make the outcome with run_check"
    )


@attrs.frozen(kw_only=True)
class Handoff:
    """What the next attempt is handed (profile section 3): ``check`` is the verdict,
    ``issues`` its issue lines, and ``note`` a person's note when the step was ``returned``.

    ``to_json()`` is ``{"check": <verdict>, "issues": [...]}`` with ``"note"`` when set.
    """

    check: Verdict
    issues: tuple[str, ...] = attrs.field(converter=_lines)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = converter.unstructure(self)
        return data


@attrs.frozen(kw_only=True)
class Escalation:
    """The work item's ``escalation`` for an unsure verdict (profile section 3).

    ``note``, ``by``, ``at`` as ``escalate`` records them, ``check`` the verdict (its questions
    and answers) and ``candidate`` the held submission. ``run_id`` and ``step_id`` say where it
    belongs; they are the host's, not part of the record, so ``to_json()`` leaves them out and
    :meth:`from_json` takes them as arguments.
    """

    run_id: str = attrs.field(converter=_run_id)
    step_id: str = attrs.field(converter=_step_id)
    note: str
    by: str
    at: str
    check: Verdict
    candidate: Submission

    def to_json(self) -> dict[str, Any]:
        """``{"note", "by", "at", "check", "candidate"}``: the profile's record."""
        data: dict[str, Any] = converter.unstructure(self)
        return data

    @classmethod
    def from_json(
        cls, data: object, *, run_id: str, step_id: str, check: Check | None = None
    ) -> Escalation:
        """Read an escalation record back. ``check`` (the step's check) lets the verdict name
        rubric levels in issue lines, and is checked against the recorded answers."""
        if not isinstance(data, Mapping):
            raise VerdictError(f"an escalation must be a JSON object, got {show(data)}")
        keys = {"note", "by", "at", "check", "candidate"}
        missing = sorted(keys - set(data))
        if missing:
            raise VerdictError(f"an escalation needs {', '.join(missing)}")
        unknown = sorted(set(data) - keys, key=str)
        if unknown:
            raise VerdictError(f"an escalation has no key {show(unknown[0])}")
        for key in ("note", "by"):
            if not isinstance(data[key], str) or not data[key].strip():
                raise VerdictError(
                    f"escalation {key} must be a non-blank string, got {show(data[key])}"
                )
        verdict = Verdict.from_json(data["check"], check=check)
        try:
            at = format_at(data["at"])
        except ValueError as error:
            raise VerdictError(f"escalation {error}") from None
        return cls(
            run_id=run_id,
            step_id=step_id,
            note=data["note"],
            by=data["by"],
            at=at,
            check=verdict,
            candidate=Submission.from_json(data["candidate"]),
        )


# The profile's shapes: a handoff's `note` only when a person gave one; an escalation without
# the host's ids, which are not part of the record.
register_renamed(Handoff, omit_if_default=True)
register_renamed(Escalation, run_id=override(omit=True), step_id=override(omit=True))


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
    ``"check"``. The candidate is the submission the evaluator was shown, so the outcome
    must carry its bundle (every outcome :func:`~checkprofile.run_check` makes does).
    """
    check = held_check(outcome)
    verdict = outcome.verdict if outcome.verdict.check is not None else _with_check(outcome, check)
    _name("run_id", run_id)
    _name("step_id", step_id)
    if outcome.action == "not_accepted":
        return Records(
            step_id=step_id,
            action=outcome.action,
            handoff=Handoff(check=verdict, issues=issue_lines(verdict)),
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
    )
    return Records(step_id=step_id, action=outcome.action, escalation=escalation, check=verdict)


def _with_check(outcome: Outcome, check: Check) -> Verdict:
    return attrs.evolve(outcome.verdict, check=check)
