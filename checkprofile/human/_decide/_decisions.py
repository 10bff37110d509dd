"""A person's decision on an escalated step, and what it does (profile section 3).

"The person decides ``returned`` with a note, ``completed`` with the candidate or their own
output, or ``failed``." Each is a typed, frozen record saying who decided and when. A decision
is taken only as one of these: a bare string, a map of one's own shape, or a decision missing
what it needs raises :class:`DecisionRequiredError`, and nothing changes. The error names the
*shape* it received (types and keys), never the contents: a decision is caller data, and an
error message ends up in logs.

Choices the profile leaves open, each pinned by ``tests/human/decide/test_human_decisions.py``:

* ``returned`` and ``failed`` need a non-blank ``note``; ``completed`` may have one (core-2's
  completed decision carries a note).
* ``completed`` without ``output`` completes with the candidate, its route (``next``,
  ``reason``) included; with ``output`` (a map, as core-2's output is) it completes with the
  person's own output, ``summary``, ``evidence`` and route. ``summary``, ``evidence``,
  ``next`` or ``reason`` without ``output`` is refused: it would mix two submissions.
* After ``returned`` the attempt continues: the verdict travels in ``handoff.check`` with the
  issue lines, and the person's note, with who returned the work and when, in
  ``handoff.returned`` (core-2's ``{note, by, at}``); the verdict leaves ``steps.<id>.check``
  (it no longer waits on a person; :func:`~checkprofile.human.after_decision` restores the
  step's previous entry, if it had one). After ``completed`` or ``failed`` the step has
  ended and the verdict stays as ``steps.<id>.check``.
* A decision dated before its escalation is refused where it is applied
  (:func:`apply_decision`, so :func:`~checkprofile.human.after_decision` and
  :meth:`~checkprofile.human.Checkpoint.decide`): a person decides what is waiting. Give the
  host's clock as the decision arrives (``at=``), not the person's screen's.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import datetime
from typing import Any, Literal, cast

import attrs

from ..._bundle import MAX_REASON, Evidence, Submission, evidence_items
from ..._convert import NotJson, converter, plain, plain_text, register_renamed
from ..._keepable import recordable_problem
from ..._lines import issue_lines
from ..._shown import bare, is_blank, type_name
from ..._types import is_mapping, of_type
from ..._verdict import Verdict, format_at, is_at_text
from ...errors import CheckprofileError, MaterialError
from ._records import Escalation, Handoff, ReturnNote

__all__ = [
    "Completed",
    "Decision",
    "DecisionKind",
    "DecisionRequiredError",
    "Failed",
    "Resolution",
    "Returned",
    "apply_decision",
    "decision_from_json",
]

DecisionKind = Literal["returned", "completed", "failed"]

_KINDS: tuple[DecisionKind, ...] = ("returned", "completed", "failed")
_ALLOWED = (
    "a decision is returned (note, by, at), completed (by, at, and optionally note, output,"
    " summary, evidence, next, reason) or failed (note, by, at)"
)
# What a completed decision takes besides the person's own output, which they need it for.
_OWN = ("summary", "evidence", "next", "reason")

# At most this many keys are named in a message: a map of a million keys is still one line.
_MAX_KEYS = 12
_MAX_KEY_CHARS = 32


class DecisionRequiredError(CheckprofileError, TypeError, ValueError):
    """Something that is not a decision of the allowed kinds, or a decision missing what it
    needs, was given where a person's decision is required. Nothing was changed.

    ``received`` describes the shape that arrived (types and keys, never values). It is both a
    :class:`TypeError` (the wrong kind of thing) and a :class:`ValueError` (a decision missing a
    value), so either ``except`` catches it.
    """

    received: str
    problem: str

    def __init__(self, problem: str, received: object) -> None:
        self.problem = problem
        self.received = shape(received)
        super().__init__(f"{problem}; received {self.received} ({_ALLOWED})")


def _type(value: object) -> str:
    return "null" if value is None else bare(type_name(value), 40)


def _key(key: object) -> str:
    if not issubclass(type(key), str):
        return f"<a {_type(key)} key>"
    return bare(str.__str__(key), _MAX_KEY_CHARS + 1)


# A map of one's own type is read this far for its shape: the error is about its shape, and
# its own code may go on forever.
_MAX_READ = 10_000


def shape(value: object) -> str:
    """The shape of ``value`` for an error message: its type, and for a map its keys with the
    type of each value. Never a value: ``a map with keys by (str), kind (str), note (int)``.
    Bounded whatever ``value`` is (its own methods are not trusted to end, or to tell the
    truth): a dict is read by dict's own methods, another map only so far."""
    kind = type(value)
    if is_mapping(value):
        try:
            if issubclass(kind, dict):
                items: list[tuple[Any, Any]] = list(dict.items(cast(dict[Any, Any], value)))
            else:
                items = list(itertools.islice(value.items(), _MAX_READ))
        except Exception:  # a Mapping of one's own may fail to list itself
            return f"a {_type(value)} that cannot be read"
        if not items:
            return "an empty map"
        named = sorted((_key(key), _type(item)) for key, item in items)
        parts = [f"{key} ({kind})" for key, kind in named[:_MAX_KEYS]]
        if len(named) > _MAX_KEYS:
            parts.append(f"and {len(named) - _MAX_KEYS} more")
        return f"a map with keys {', '.join(parts)}"
    if of_type(value, Returned, Completed, Failed):
        return f"a {kind.__name__} decision"
    if issubclass(kind, (list, tuple)):
        count = list.__len__(value) if issubclass(kind, list) else tuple.__len__(value)  # type: ignore[arg-type]
        return f"a {_type(value)} of {count} items"
    return "null" if value is None else f"a {_type(value)}"


def _at(value: object, received: object) -> str:
    if not issubclass(type(value), (str, datetime)):
        raise DecisionRequiredError("a decision's at must be an RFC 3339 time string", received)
    try:
        return format_at(cast("str | datetime", value))
    except ValueError:
        raise DecisionRequiredError(
            "a decision's at must be RFC 3339 in UTC ending in Z (or an aware datetime)",
            received,
        ) from None


def _at_field(value: str | datetime) -> str:
    # A typed decision takes a timezone-aware datetime too, stored as its RFC 3339 text.
    if issubclass(type(value), datetime):
        return _at(value, value)
    return plain_text(value)  # type: ignore[return-value]  # checked with the rest, by _checked


def _evidence_field(value: Iterable[Evidence]) -> tuple[Evidence, ...]:
    # A list of Evidence is taken as a tuple; anything else is refused by _checked, by shape.
    kind = type(value)
    if issubclass(kind, list):
        return tuple(list.__iter__(value))  # type: ignore[arg-type]
    return tuple(tuple.__iter__(value)) if issubclass(kind, tuple) else value  # type: ignore[arg-type, return-value]


def _text(what: str, value: object, received: object) -> str:
    if type(value) is not str:
        raise DecisionRequiredError(f"a decision's {what} must be a string", received)
    if is_blank(value):
        raise DecisionRequiredError(f"a decision's {what} must not be blank", received)
    return value


def _output_field(value: object) -> object:
    # A person's own output is made plain JSON data as it is given (NaN, an infinity or a
    # value that is not JSON is refused, by shape); anything but a map is refused by _checked.
    if value is None or not issubclass(type(value), dict):
        return value
    try:
        return plain(value)
    except NotJson as error:
        raise DecisionRequiredError(
            f"a completed decision's output must be JSON data ({error})", value
        ) from None


def _fields(kind: DecisionKind) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (required, optional) keys of a decision's JSON, ``kind`` aside."""
    if kind == "completed":
        return ("by", "at"), ("note", "output", *_OWN)
    return ("note", "by", "at"), ()


@attrs.frozen(kw_only=True)
class Returned:
    """The person sends the step back to the same attempt, with a ``note`` for the agent."""

    kind: Literal["returned"] = attrs.field(default="returned", init=False)
    note: str = attrs.field(converter=plain_text)
    by: str = attrs.field(converter=plain_text)
    at: str = attrs.field(converter=_at_field)

    def __attrs_post_init__(self) -> None:
        _checked(self)

    def to_json(self) -> dict[str, Any]:
        """``{"kind": "returned", "note", "by", "at"}``."""
        return _unstructure(self)


@attrs.frozen(kw_only=True)
class Completed:
    """The person completes the step: with the candidate (``output`` is ``None``), or with
    their own ``output`` (a map), ``summary``, ``evidence`` and, on a step whose ``next`` is a
    list of routes, ``next`` and ``reason``. ``note`` is the person's remark, either way."""

    kind: Literal["completed"] = attrs.field(default="completed", init=False)
    by: str = attrs.field(converter=plain_text)
    at: str = attrs.field(converter=_at_field)
    output: Any = attrs.field(default=None, converter=_output_field)
    summary: str | None = attrs.field(default=None, converter=plain_text)
    evidence: tuple[Evidence, ...] = attrs.field(default=(), converter=_evidence_field)
    next: str | None = attrs.field(default=None, converter=plain_text)
    reason: str | None = attrs.field(default=None, converter=plain_text)
    note: str | None = attrs.field(default=None, converter=plain_text)

    def __attrs_post_init__(self) -> None:
        _checked(self)

    @property
    def with_candidate(self) -> bool:
        """Whether the step completes with the candidate, as the model's evaluator saw it."""
        return self.output is None

    def own_output(self) -> Submission | None:
        """The person's own submission, or ``None`` when they completed with the candidate."""
        if self.output is None:
            return None
        return Submission(
            self.output, self.summary, self.evidence, next=self.next, reason=self.reason
        )

    def to_json(self) -> dict[str, Any]:
        """``{"kind": "completed", "by", "at"}``, the person's ``note`` when they gave one, and
        their own ``output``, with ``summary``, ``evidence`` (references ``{"kind", "ref"}``),
        ``next`` and ``reason`` when they gave them."""
        return _unstructure(self)


@attrs.frozen(kw_only=True)
class Failed:
    """The person fails the step, with a ``note`` saying why."""

    kind: Literal["failed"] = attrs.field(default="failed", init=False)
    note: str = attrs.field(converter=plain_text)
    by: str = attrs.field(converter=plain_text)
    at: str = attrs.field(converter=_at_field)

    def __attrs_post_init__(self) -> None:
        _checked(self)

    def to_json(self) -> dict[str, Any]:
        """``{"kind": "failed", "note", "by", "at"}``."""
        return _unstructure(self)


Decision = Returned | Completed | Failed


def _unstructure(decision: Decision) -> dict[str, Any]:
    # `kind` is not an __init__ argument, so the converter leaves it out: it leads the record.
    return {"kind": decision.kind, **converter.unstructure(decision)}


# Keys in field order. Returned and Failed always have every key; Completed leaves out what the
# person did not give (their own output, summary, evidence).
register_renamed(Returned)
register_renamed(Failed)
register_renamed(Completed, omit_if_default=True)


def _checked(decision: Decision) -> None:
    """Refuse a decision built with values it cannot hold (the constructors call this).

    The checks are the same as :func:`decision_from_json`'s, so a typed decision and one read
    from JSON are held to one standard. (An aware datetime ``at`` is text by now: the field's
    converter made it so.)
    """
    received = decision
    _text("by", decision.by, received)
    if type(decision.at) is not str or _format_at_or_none(decision.at) is None:
        raise DecisionRequiredError(
            "a decision's at must be an RFC 3339 time string in UTC ending in Z", received
        )
    if type(decision) is Completed:
        if decision.note is not None:
            _text("note", decision.note, received)
        given = [name for name in _OWN if _given(getattr(decision, name))]
        if decision.output is None and given:
            raise DecisionRequiredError(
                f"a completed decision with {given[0]} needs its own output", received
            )
        if decision.output is not None and type(decision.output) is not dict:
            raise DecisionRequiredError(
                "a completed decision's output must be a map (a JSON object)", received
            )
        if decision.summary is not None and type(decision.summary) is not str:
            raise DecisionRequiredError("a decision's summary must be a string", received)
        if decision.next is not None and (type(decision.next) is not str or not decision.next):
            raise DecisionRequiredError(
                "a decision's next must be a step id (a non-empty string)", received
            )
        if decision.reason is not None and (
            type(decision.reason) is not str or len(decision.reason) > MAX_REASON
        ):
            raise DecisionRequiredError(
                f"a decision's reason must be a string of at most {MAX_REASON} characters",
                received,
            )
        if type(decision.evidence) is not tuple or not all(
            type(item) is Evidence for item in decision.evidence
        ):
            raise DecisionRequiredError(
                "a decision's evidence must be a sequence of Evidence", received
            )
    else:
        _text("note", decision.note, received)


def _given(value: object) -> bool:
    """Whether a field of a decision holds something: not ``None`` and not the empty tuple,
    judged by identity and type. Never ``value in (None, ())``: ``in`` runs the value's own
    ``__eq__``, a host's code, which may raise or say yes."""
    return value is not None and not (type(value) is tuple and len(value) == 0)


def _format_at_or_none(at: str) -> str | None:
    try:
        return format_at(at)
    except ValueError:
        return None


def _instant(at: str) -> tuple[str, str]:
    """An RFC 3339 time in UTC ending in Z (as :func:`~checkprofile.format_at` writes it) as
    a key that sorts in time: the date and second, then the fraction's digits (``.5`` is
    after ``.25``, and ``00Z`` before ``00.5Z``)."""
    text = format_at(at)
    second, _, fraction = text[:-1].partition(".")
    return second, fraction.rstrip("0")  # .50 is .5


def _recordable(
    data: dict[str, Any], received: object, *, beside: int = 0, sized: bool = True
) -> None:
    """Refuse a decision its audit record could not hold (what every store can keep:
    :func:`~checkprofile._keepable.recordable_problem`), before it changes anything."""
    problem = recordable_problem(data, beside=beside, sized=sized)
    if problem is not None:
        raise DecisionRequiredError(
            f"a decision must be recordable before it is applied: {problem}", received
        )


# Whether decision_from_json judges a decision's size (not while a record is read back).
_SIZED: ContextVar[bool] = ContextVar("checkprofile_decision_sized", default=True)


def read_back(data: object) -> Decision:
    """:func:`decision_from_json` of a decision read from an audit record: its line already
    fit, so its size is not judged again (an estimate, which could refuse a line that fits)."""
    token = _SIZED.set(False)
    try:
        return decision_from_json(data)
    finally:
        _SIZED.reset(token)


def decision_from_json(data: object, *, at: str | datetime | None = None) -> Decision:
    """Read a decision: ``{"kind": "returned"|"completed"|"failed", ...}``.

    ``returned`` and ``failed`` need ``note``, ``by`` and ``at``; ``completed`` needs ``by``
    and ``at``, takes a ``note``, and takes ``output`` (a map), ``summary``, ``evidence`` (a
    list of ``{"kind": "file"|"link", "ref"}``), ``next`` and ``reason`` for the person's own
    output. ``at`` is RFC 3339 in UTC ending in ``Z``. No other keys. Anything else raises
    :class:`DecisionRequiredError`, as does a decision its audit record could not hold (a NUL
    or a lone surrogate in any text, a record over the audit line's size), before anything
    changes.

    ``at`` (keyword) is the time the host records when the decision carries none (a person's
    screen rarely sends one): the host's clock as the decision arrived, an RFC 3339 string in
    UTC or an aware datetime. A decision's own ``at`` is kept.
    """
    if of_type(data, Returned, Completed, Failed):
        decision = cast(Decision, data)
        _checked(decision)  # frozen, but object.__setattr__ can still change it
        return decision
    if not is_mapping(data):
        raise DecisionRequiredError("not a decision", data)
    received = data
    try:
        data = plain(data)
    except NotJson as error:
        raise DecisionRequiredError(f"a decision is JSON data ({error})", received) from None
    if type(data) is not dict:
        raise DecisionRequiredError("not a decision", received)
    # What no store can keep is refused before anything is applied. A decision read back
    # from a record (read_back) is not sized again: its line already fit.
    _recordable(data, data, sized=_SIZED.get())
    if at is not None and "at" not in data:
        data = {**data, "at": _at(at, at)}
    keys = set(data)
    if "kind" not in keys:
        raise DecisionRequiredError("a decision needs a kind", data)
    kind = data["kind"]
    if type(kind) is not str or kind not in _KINDS:
        raise DecisionRequiredError(
            "a decision's kind must be returned, completed or failed (an approval is completed,"
            " with no output to let the work stand; a rejection is returned, to rework it, or"
            " failed)",
            data,
        )
    required, optional = _fields(kind)
    missing = [key for key in required if key not in keys]
    if missing:
        raise DecisionRequiredError(f"a {kind} decision needs {', '.join(missing)}", data)
    if keys - {"kind", *required, *optional}:
        raise DecisionRequiredError(
            f"a {kind} decision has only the keys kind, {', '.join(required + optional)}", data
        )
    by = _text("by", data["by"], data)
    when = _at(data["at"], data)
    if kind == "completed":
        if "output" in keys and data["output"] is None:
            raise DecisionRequiredError(
                "a completed decision's output must not be null (leave it out to complete"
                " with the candidate)",
                data,
            )
        given = [key for key in _OWN if key in keys]
        if given and "output" not in keys:
            raise DecisionRequiredError(
                f"a completed decision with {given[0]} needs its own output", data
            )
        evidence = data.get("evidence", [])
        if type(evidence) is not list:
            raise DecisionRequiredError("a decision's evidence must be a list", data)
        try:
            items = evidence_items(evidence)
        except MaterialError:
            raise DecisionRequiredError(
                "a decision's evidence items need a kind (file or link) and a non-empty ref",
                data,
            ) from None
        # The typed decision checks the rest, as it does a caller's own; the error names the
        # shape that arrived.
        try:
            return Completed(
                by=by,
                at=when,
                output=data.get("output"),
                summary=data.get("summary"),
                evidence=items,
                next=data.get("next"),
                reason=data.get("reason"),
                note=data.get("note"),
            )
        except DecisionRequiredError as error:
            raise DecisionRequiredError(error.problem, data) from None
    note = _text("note", data["note"], data)
    if kind == "returned":
        return Returned(note=note, by=by, at=when)
    return Failed(note=note, by=by, at=when)


# The keys of the decisions people make most, with nothing of their own: a completed
# decision that lets the candidate stand (with or without a note), a return or a failure.
_PLAIN_KEYS = {
    "completed": (frozenset(("kind", "by", "at")), frozenset(("kind", "by", "at", "note"))),
    "returned": (frozenset(("kind", "note", "by", "at")),) * 2,
    "failed": (frozenset(("kind", "note", "by", "at")),) * 2,
}


def plain_decision(data: object) -> tuple[DecisionKind, str, str, str | None] | None:
    """The kind, ``by``, ``at`` and ``note`` of a decision read from JSON, when it is one of
    the plain shapes (``completed`` without the person's own output, ``returned``,
    ``failed``) and :func:`decision_from_json` takes it as it is; ``None`` for anything else,
    right or wrong, which :func:`decision_from_json` reads (and explains). For readers of
    many records: it checks what :func:`decision_from_json` checks, and builds nothing."""
    if type(data) is not dict:
        return None
    kind = data.get("kind")
    shapes = _PLAIN_KEYS.get(kind) if type(kind) is str else None
    keys = data.keys()
    if shapes is None or (keys != shapes[0] and keys != shapes[1]):
        return None
    return plain_fields(kind, data["by"], data["at"], data.get("note"))  # type: ignore[arg-type]


def plain_fields(
    kind: DecisionKind, by: object, at: object, note: object
) -> tuple[DecisionKind, str, str, str | None] | None:
    """:func:`plain_decision` of a decision of ``kind`` whose keys are known to be one of
    its plain shapes, from its values."""
    if type(by) is not str or is_blank(by) or type(at) is not str:
        return None
    # A completed decision's note may be null (none given); the others need one.
    if (note is not None or kind != "completed") and (type(note) is not str or is_blank(note)):
        return None
    if not is_at_text(at):
        return None
    return kind, by, at, note


def plain_decision_of(kind: DecisionKind, by: str, at: str, note: str | None) -> Decision:
    """The decision :func:`plain_decision` read: what :func:`decision_from_json` makes of it."""
    if kind == "completed":
        return Completed(by=by, at=at, note=note)
    if kind == "returned":
        return Returned(note=note, by=by, at=at)
    return Failed(note=note, by=by, at=at)


@attrs.frozen(kw_only=True)
class Resolution:
    """The records a decision on an escalation gives, for step ``step_id``.

    ``returned``: ``handoff`` (``returned`` the person's note, who and when; ``issues`` the
    verdict's lines; ``check`` the verdict), and ``check`` is ``None``: the verdict no longer
    waits as ``steps.<id>.check``. ``completed``: ``output``, the submission the step
    completes with (the candidate, its route included, or the person's own), and ``check``,
    the verdict that stays as ``steps.<id>.check``; the step is not checked again.
    ``failed``: the step fails with the decision's note; ``check`` stays.
    """

    escalation: Escalation
    decision: Decision
    handoff: Handoff | None = None
    output: Submission | None = None
    check: Verdict | None = None

    @property
    def step_id(self) -> str:
        return self.escalation.step_id

    def to_json(self) -> dict[str, Any]:
        """``{"decision": ...}`` with ``"handoff"``, ``"output"`` (a submission) and
        ``"steps": {<id>: {"check": ...}}`` where set."""
        data: dict[str, Any] = {"decision": self.decision.to_json()}
        if self.handoff is not None:
            data["handoff"] = self.handoff.to_json()
        if self.output is not None:
            data["output"] = self.output.to_json()
        if self.check is not None:
            data["steps"] = {self.step_id: {"check": self.check.to_json()}}
        return data


def apply_decision(escalation: Escalation, decision: Decision) -> Resolution:
    """What ``decision`` on ``escalation`` records. Pure: both are left as they are.

    Raises :class:`DecisionRequiredError` for anything that is not a :class:`Returned`,
    :class:`Completed` or :class:`Failed` holding what it needs (read JSON with
    :func:`decision_from_json` first), or one its audit record could not hold, and
    :class:`TypeError` when ``escalation`` is not an :class:`~checkprofile.human.Escalation`.
    """
    if not of_type(decision, Returned, Completed, Failed):
        raise DecisionRequiredError(
            "apply_decision takes a Returned, Completed or Failed (see decision_from_json)",
            decision,
        )
    # A decision is frozen, but a determined caller can still set an attribute with
    # object.__setattr__: check it again here, where it is acted on.
    _checked(decision)
    if type(escalation) is not Escalation:
        raise TypeError(f"apply_decision takes an Escalation, got a {type(escalation).__name__}")
    if _instant(decision.at) < _instant(escalation.at):
        raise DecisionRequiredError(
            f"a decision's at ({decision.at}) is before its escalation's ({escalation.at}): a"
            " person decides what is waiting; give the host's clock as the decision arrives",
            decision,
        )
    # Recordable before applied: a decision its record cannot hold changes nothing.
    ids = len(json.dumps([escalation.run_id, escalation.step_id]))
    _recordable(decision.to_json(), decision, beside=ids)
    verdict = escalation.check
    if isinstance(decision, Returned):
        handoff = Handoff(
            returned=ReturnNote(note=decision.note, by=decision.by, at=decision.at),
            issues=issue_lines(verdict),
            check=verdict,
        )
        return Resolution(escalation=escalation, decision=decision, handoff=handoff)
    if isinstance(decision, Completed):
        own = decision.own_output()
        output = escalation.candidate if own is None else own
        return Resolution(escalation=escalation, decision=decision, output=output, check=verdict)
    return Resolution(escalation=escalation, decision=decision, check=verdict)
