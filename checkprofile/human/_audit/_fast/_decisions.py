"""Reading decision records fast: the plain decisions people make most.

A line that is one of the plain decisions (:func:`~..._decide._decisions.plain_decision`:
``completed`` with the candidate, ``returned``, ``failed``) laid out as the writer lays it out is
read by one pattern, without parsing its JSON (:data:`_DECISION_LINE`); a parsed one by plain
type checks. What it reads comes as :class:`DecisionFacts`, exactly the record the strict
reading would build; anything else goes the strict way.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ...._verdict import is_at_text
from ..._decide._decisions import DecisionKind, plain_decision, plain_decision_of, plain_fields
from .._records import DecisionRecord, _key_from
from .._strict import _DECISION_FIELDS
from ._plain import _HASH_TEXT, _TEXT, _keys_add_up, _subject

__all__ = ["DecisionFacts", "decision_facts", "decision_line"]

# A writer's line of a plain decision (plain_decision), whole: the kind, then the note of a
# return or failure, by, at, and the note of a completion (written last).
_DECISION_LINE = re.compile(
    rf'\{{"record":"decision","format":1,"key":{_HASH_TEXT},"run":{_TEXT},"step":{_TEXT},'
    rf'"submission_sha256":{_HASH_TEXT},"escalated_at":(?:{_TEXT}|null),"accepted":(true|false),'
    rf'"decision":\{{"kind":"(completed|returned|failed)",(?:"note":{_TEXT},)?"by":{_TEXT},'
    rf'"at":{_TEXT}(?:,"note":{_TEXT})?\}}\}}'
)


def decision_line(text: str) -> DecisionFacts | None:
    """The facts of the decision line ``text`` (no backslash in it) when it is a plain
    decision laid out as the writer lays it out (:data:`_DECISION_LINE`: each key once,
    each value plain, nothing else), without parsing it as JSON; ``None`` otherwise."""
    line = _DECISION_LINE.fullmatch(text)
    if line is None:
        return None
    key, run, step, digest, escalated, accepted, kind, before, by, at, after = line.groups()
    if before is not None and after is not None:
        return None  # a note twice
    # The pattern pinned the format, the hash and every type; the rest is judged here as
    # decision_facts judges it.
    made = plain_fields(kind, by, at, after if before is None else before)  # type: ignore[arg-type]
    if (
        made is None
        or (accepted == "true") is not (kind == "completed")
        or not run.strip()
        or not step.strip()
        or (escalated is not None and not is_at_text(escalated))
        or key != _key_from(run, step, digest)
    ):
        return None
    return DecisionFacts(key, run, step, digest, escalated, *made)


def decision_facts(data: dict[str, Any], text: str | None = None) -> DecisionFacts | None:
    """The facts of decision record ``data``, or ``None`` to read it the full way.
    ``text``: ``data`` was parsed from this line without the check for repeated keys, so the
    keys must be counted against it (:func:`_keys_add_up`)."""
    if data.keys() != _DECISION_FIELDS:
        return None
    run, step, digest, key = data["run"], data["step"], data["submission_sha256"], data["key"]
    escalated, body = data["escalated_at"], data["decision"]
    if not _subject(data, run, step, digest, key):
        return None
    if escalated is not None and (type(escalated) is not str or not is_at_text(escalated)):
        return None
    made = plain_decision(body)
    # A plain decision lets the candidate stand exactly when it completes.
    if made is None or data["accepted"] is not (made[0] == "completed"):
        return None
    if text is not None and not _keys_add_up(text, len(data) + len(body)):
        return None
    return DecisionFacts(key, run, step, digest, escalated, *made)


class DecisionFacts(NamedTuple):
    """A decision record as the fast path read it (one of the plain decisions: ``completed``
    with the candidate, ``returned``, ``failed``), every field checked, before it is built as
    a :class:`DecisionRecord` (:meth:`record`); calibration takes these as they are."""

    key: str
    run: str
    step: str
    submission_sha256: str
    escalated_at: str | None
    kind: DecisionKind
    by: str
    at: str
    note: str | None

    @property
    def accepted(self) -> bool:
        """Whether the person let the candidate stand (a plain ``completed`` does)."""
        return self.kind == "completed"

    def record(self) -> DecisionRecord:
        """The typed record: what :func:`record_from_json` makes of the same line."""
        return DecisionRecord(
            key=self.key,
            run=self.run,
            step=self.step,
            submission_sha256=self.submission_sha256,
            escalated_at=self.escalated_at,
            decision=plain_decision_of(self.kind, self.by, self.at, self.note),
        )
