"""The audit trail: every verdict and every human decision, one JSON object per line.

The format (``"format": 1``) is stable; calibration and other tools read it. Each line is one
record, written with ``json.dumps(record.to_json(), ensure_ascii=True, separators=(",", ":"))``
-- ASCII only, so a line never holds a raw newline or an unencodable character -- followed by
``"\\n"``. Keys appear in the order below.

A **verdict record**, made by :func:`verdict_record` from an :class:`~checkprofile.Outcome`::

    {"record": "verdict", "format": 1,
     "key": "sha256:…",                the submission key (below): joins verdicts and decisions
     "run": "…", "step": "…",          the run and step ids, as the host gave them
     "submission_sha256": "sha256:…",  hash of the submission's canonical JSON
     "bundle_sha256": "sha256:…"|null, hash of exactly what the evaluator was shown on the
                                        first attempt (checkprofile.human.bundle_bytes; a re-ask
                                        shows the same material with only the unanswered
                                        questions); null when unknown
     "check_key": "sha256:…",          hash of the check's normalized full form
     "action": "complete"|"not_accepted"|"escalate"|"retry",
     "attempts": 1|2,
     "check": [...],                   the check's full form (Check.to_json): every threshold
     "verdict": {...},                 the verdict record itself (Verdict.to_json): verdict,
                                        advisory, model, questions (answer, confidence, result),
                                        truncated, at
     "provenance": [...]}              optional, one entry per question: where its answer came
                                        from, {"source", "distribution"?: [[option, p], ...]}
                                        ({} for a question not answered); absent when unknown
                                        (an error verdict, an outcome without answers)

The verdict's ``questions[i]`` answers ``check[i]``: the thresholds of question ``i`` are
``check[i]`` (yes/no ``pass``, ``fail``; choice ``pass``, ``unsure``, ``confidence``; rubric
``pass``, ``confidence``).

A **decision record**, made by :func:`resolution_record` from what
:func:`~checkprofile.human.apply_decision` gave, or by :func:`decision_record` for a person who
decided on the same submission elsewhere (an approver after an advisory check)::

    {"record": "decision", "format": 1,
     "key": "sha256:…", "run": "…", "step": "…", "submission_sha256": "sha256:…",
     "escalated_at": "…"|null,         the escalation's at; null when not from an escalation
     "accepted": true|false,           the person let the candidate stand: completed with it
     "decision": {"kind": "returned"|"completed"|"failed", "by", "at", "note"?,
                  "output"?, "summary"?, "evidence"?, "next"?, "reason"?}}

The **submission key** is ``"sha256:"`` and the hex SHA-256 of the UTF-8 canonical JSON
(compact, keys sorted) of ``[run_id, step_id, submission_sha256]``, where
``submission_sha256`` is ``"sha256:"`` and the hex SHA-256 of the submission's canonical JSON
(``{"output", "summary"?, "evidence": [{"kind", "ref"}], "next"?, "reason"?}``, evidence urls
left out): the same submission on the same step of the same run has the same key, and a
verdict and a later decision join on it. The **check key** is ``"sha256:"`` and the hex
SHA-256 of the canonical JSON of the check's full form: two checks grade alike exactly when
their keys are equal.

Appending is safe from several processes at once: each record is one ``write()`` to a file
opened with ``O_APPEND``, under an exclusive ``flock`` where the platform has one, so lines
never interleave. (A network file system that ignores both is the exception.)
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from .._bundle import Submission, canonical_json
from .._check import Check, Question
from .._convert import show
from .._run import Action, Outcome
from .._validate import parse_check
from .._verdict import QuestionResult, Verdict, VerdictName, format_at
from ..errors import CheckError, CheckprofileError, MaterialError, VerdictError
from ._decisions import (
    Completed,
    Decision,
    DecisionRequiredError,
    Resolution,
    decision_from_json,
)
from ._receipts import (
    Provenance,
    ReceiptError,
    bundle_sha256,
    provenance_from_json,
    provenance_json,
    provenance_of,
)
from ._records import held_check

try:  # POSIX; elsewhere O_APPEND alone keeps a single write() whole on local files
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "AUDIT_FORMAT",
    "AuditError",
    "AuditRecord",
    "DecisionRecord",
    "JsonLinesRecorder",
    "Recorder",
    "VerdictRecord",
    "check_key",
    "decision_record",
    "read_records",
    "record_from_json",
    "resolution_record",
    "submission_key",
    "submission_sha256",
    "verdict_record",
]

#: The version of the record format; a reader refuses any other.
AUDIT_FORMAT = 1

_ACTIONS = ("complete", "not_accepted", "escalate", "retry")


class AuditError(CheckprofileError, ValueError):
    """An audit file line that is not a record: ``path``, ``line`` (1-based) and why, in one
    line: ``records.jsonl:12: not JSON: Expecting value``."""

    path: str
    line: int

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {' '.join(reason.split())}")


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def submission_sha256(submission: Submission) -> str:
    """``"sha256:"`` and the hex SHA-256 of the submission's canonical JSON (the text the
    evaluator was shown as the submission)."""
    if not isinstance(submission, Submission):
        raise TypeError(f"a Submission is needed, got {show(submission)}")
    return _sha256(canonical_json(submission.to_json()))


def _key_from(run_id: str, step_id: str, submission_hash: str) -> str:
    return _sha256(canonical_json([run_id, step_id, submission_hash]))


def submission_key(run_id: str, step_id: str, submission: Submission) -> str:
    """The key that joins a verdict and a person's decision on the same submission: the same
    submission on the same step of the same run always has the same key."""
    return _key_from(_id("run_id", run_id), _id("step_id", step_id), submission_sha256(submission))


def check_key(check: Check) -> str:
    """``"sha256:"`` and the hex SHA-256 of the canonical JSON of ``check.to_json()``."""
    if not isinstance(check, Check):
        raise TypeError(f"a Check is needed (see parse_check), got {show(check)}")
    return _sha256(canonical_json(check.to_json()))


def _id(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-blank string, got {show(value)}")
    return value


@attrs.frozen(kw_only=True)
class VerdictRecord:
    """One verdict in the audit trail (the module docstring has the JSON)."""

    key: str
    run: str
    step: str
    submission_sha256: str
    bundle_sha256: str | None
    check_key: str
    action: Action
    attempts: int
    check: Check
    verdict: Verdict
    provenance: tuple[Provenance, ...] = ()
    record: Literal["verdict"] = attrs.field(default="verdict", init=False)

    @property
    def advisory(self) -> bool:
        return self.verdict.advisory

    @property
    def model(self) -> str:
        return self.verdict.model

    @property
    def at(self) -> str:
        return self.verdict.at

    @property
    def result(self) -> VerdictName:
        """The verdict: ``pass``, ``fail``, ``unsure`` or ``error``."""
        return self.verdict.verdict

    @property
    def questions(self) -> tuple[tuple[Question, QuestionResult], ...]:
        """Each question (with its thresholds) and its recorded answer and result."""
        return tuple(zip(self.check, self.verdict.questions, strict=True))

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "format": AUDIT_FORMAT,
            "key": self.key,
            "run": self.run,
            "step": self.step,
            "submission_sha256": self.submission_sha256,
            "bundle_sha256": self.bundle_sha256,
            "check_key": self.check_key,
            "action": self.action,
            "attempts": self.attempts,
            "check": self.check.to_json(),
            "verdict": self.verdict.to_json(),
            **(
                {"provenance": [provenance_json(origin) for origin in self.provenance]}
                if self.provenance
                else {}
            ),
        }


@attrs.frozen(kw_only=True)
class DecisionRecord:
    """One person's decision in the audit trail (the module docstring has the JSON)."""

    key: str
    run: str
    step: str
    submission_sha256: str
    escalated_at: str | None
    decision: Decision
    record: Literal["decision"] = attrs.field(default="decision", init=False)

    @property
    def accepted(self) -> bool:
        """Whether the person let the candidate stand: ``completed`` with the candidate."""
        return isinstance(self.decision, Completed) and self.decision.with_candidate

    @property
    def at(self) -> str:
        return self.decision.at

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "format": AUDIT_FORMAT,
            "key": self.key,
            "run": self.run,
            "step": self.step,
            "submission_sha256": self.submission_sha256,
            "escalated_at": self.escalated_at,
            "accepted": self.accepted,
            "decision": self.decision.to_json(),
        }


AuditRecord = VerdictRecord | DecisionRecord


def verdict_record(
    outcome: Outcome,
    *,
    run_id: str,
    step_id: str,
    submission: Submission | None = None,
) -> VerdictRecord:
    """The audit record of ``outcome`` on step ``step_id`` of run ``run_id``.

    The submission and the hash of what the evaluator was shown come from the outcome's
    bundle. For an outcome without one (not made by ``run_check``), give ``submission``;
    ``bundle_sha256`` is then ``null``.
    """
    if not isinstance(outcome, Outcome):
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    check = held_check(outcome)
    bundle = outcome.bundle
    if submission is None:
        if bundle is None:
            raise ValueError(
                "the outcome has no bundle, so its submission is unknown: give submission="
            )
        submission = bundle.submission
    digest = submission_sha256(submission)
    return VerdictRecord(
        key=_key_from(_id("run_id", run_id), _id("step_id", step_id), digest),
        run=run_id,
        step=step_id,
        submission_sha256=digest,
        bundle_sha256=bundle_sha256(bundle) if bundle is not None else None,
        check_key=check_key(check),
        action=outcome.action,
        attempts=outcome.attempts,
        check=check,
        verdict=outcome.verdict,
        provenance=provenance_of(outcome),
    )


def decision_record(
    decision: Decision,
    *,
    run_id: str,
    step_id: str,
    submission: Submission,
    escalated_at: str | None = None,
) -> DecisionRecord:
    """The audit record of a person's ``decision`` on ``submission`` (step ``step_id`` of run
    ``run_id``), e.g. an approver's, after an advisory check on that step. An approval that
    lets the submission stand is ``Completed`` with no output; a rejection ``Returned`` or
    ``Failed``. Raises :class:`~checkprofile.human.DecisionRequiredError` for anything that is
    not a decision."""
    decision = decision_from_json(decision)  # a typed decision passes; anything else raises
    if escalated_at is not None:
        escalated_at = format_at(escalated_at)
    digest = submission_sha256(submission)
    return DecisionRecord(
        key=_key_from(_id("run_id", run_id), _id("step_id", step_id), digest),
        run=run_id,
        step=step_id,
        submission_sha256=digest,
        escalated_at=escalated_at,
        decision=decision,
    )


def resolution_record(resolution: Resolution) -> DecisionRecord:
    """The audit record of a decision on an escalation, from :func:`apply_decision`'s result.
    Its key is the key of the verdict that escalated (the candidate is that submission)."""
    if not isinstance(resolution, Resolution):
        raise TypeError(f"a Resolution is needed (see apply_decision), got {show(resolution)}")
    escalation = resolution.escalation
    return decision_record(
        resolution.decision,
        run_id=escalation.run_id,
        step_id=escalation.step_id,
        submission=escalation.candidate,
        escalated_at=escalation.at,
    )


# --- reading ---------------------------------------------------------------------------------

# Keys a verdict record may have besides _VERDICT_KEYS (format 1 readers that came before them
# refuse unknown keys, so each is written only when it says something).
_VERDICT_OPTIONAL = ("provenance",)
_VERDICT_KEYS = (
    "record",
    "format",
    "key",
    "run",
    "step",
    "submission_sha256",
    "bundle_sha256",
    "check_key",
    "action",
    "attempts",
    "check",
    "verdict",
)
_DECISION_KEYS = (
    "record",
    "format",
    "key",
    "run",
    "step",
    "submission_sha256",
    "escalated_at",
    "accepted",
    "decision",
)


def _hash_field(data: Mapping[str, Any], name: str, *, nullable: bool = False) -> None:
    value = data[name]
    if value is None and nullable:
        return
    if (
        not isinstance(value, str)
        or not value.startswith("sha256:")
        or len(value) != 71
        or any(c not in "0123456789abcdef" for c in value[7:])
    ):
        raise ValueError(f"{name} must be sha256: and 64 lowercase hex digits, got {show(value)}")


def record_from_json(data: object) -> AuditRecord:
    """One audit record from its JSON object. Raises :class:`ValueError` saying what is wrong
    (the record's own fields are checked against each other: keys and hashes must match)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a record must be a JSON object, got {show(data)}")
    kind = data.get("record")
    if kind not in ("verdict", "decision"):
        raise ValueError(f'"record" must be "verdict" or "decision", got {show(kind)}')
    expected = _VERDICT_KEYS if kind == "verdict" else _DECISION_KEYS
    missing = [key for key in expected if key not in data]
    if missing:
        raise ValueError(f"a {kind} record needs {show(missing[0])}")
    optional = _VERDICT_OPTIONAL if kind == "verdict" else ()
    unknown = sorted((key for key in data if key not in (*expected, *optional)), key=str)
    if unknown:
        raise ValueError(f"a {kind} record has no key {show(unknown[0])}")
    if type(data["format"]) is not int or data["format"] != AUDIT_FORMAT:
        raise ValueError(f"format {show(data['format'])} is not {AUDIT_FORMAT}")
    run, step = _id("run", data["run"]), _id("step", data["step"])
    _hash_field(data, "key")
    _hash_field(data, "submission_sha256")
    if data["key"] != _key_from(run, step, data["submission_sha256"]):
        raise ValueError("key is not the submission key of its run, step and submission_sha256")
    if kind == "verdict":
        return _verdict_from_json(data, run, step)
    return _decision_from_json(data, run, step)


def _verdict_from_json(data: Mapping[str, Any], run: str, step: str) -> VerdictRecord:
    _hash_field(data, "bundle_sha256", nullable=True)
    _hash_field(data, "check_key")
    if data["action"] not in _ACTIONS:
        raise ValueError(f"action must be one of {', '.join(_ACTIONS)}, got {show(data['action'])}")
    attempts = data["attempts"]
    if isinstance(attempts, bool) or attempts not in (1, 2):
        raise ValueError(f"attempts must be 1 or 2, got {show(attempts)}")
    try:
        check = parse_check(data["check"])
    except CheckError as error:
        raise ValueError(f"check: {error.problems[0]}") from None
    if check.to_json() != data["check"]:
        raise ValueError("check is not in its full form (Check.to_json)")
    if check_key(check) != data["check_key"]:
        raise ValueError("check_key is not the key of its check")
    verdict = Verdict.from_json(data["verdict"], check=check)
    provenance: tuple[Provenance, ...] = ()
    if "provenance" in data:
        try:
            provenance = provenance_from_json(data["provenance"], check, verdict)
        except ReceiptError as error:
            raise ValueError(f"provenance: {error}") from None
        if not provenance:
            raise ValueError("provenance is left out when no answer's source is known")
    return VerdictRecord(
        key=data["key"],
        run=run,
        step=step,
        submission_sha256=data["submission_sha256"],
        bundle_sha256=data["bundle_sha256"],
        check_key=data["check_key"],
        action=data["action"],
        attempts=int(attempts),
        check=check,
        verdict=verdict,
        provenance=provenance,
    )


def _decision_from_json(data: Mapping[str, Any], run: str, step: str) -> DecisionRecord:
    escalated_at = data["escalated_at"]
    if escalated_at is not None:
        if not isinstance(escalated_at, str):
            raise ValueError(f"escalated_at must be a time or null, got {show(escalated_at)}")
        format_at(escalated_at)
    decision = decision_from_json(data["decision"])
    record = DecisionRecord(
        key=data["key"],
        run=run,
        step=step,
        submission_sha256=data["submission_sha256"],
        escalated_at=escalated_at,
        decision=decision,
    )
    if data["accepted"] is not record.accepted:
        raise ValueError(
            f"accepted is {show(data['accepted'])}, but the decision says {show(record.accepted)}"
        )
    return record


def read_records(path: str | os.PathLike[str]) -> tuple[AuditRecord, ...]:
    """Every record of a JSON Lines audit file, in file order, typed.

    Raises :class:`AuditError` naming ``file:line`` for the first line that is not a record
    (including an empty line, and a last line with no newline: a write that did not finish).
    The file is read line by line, so a month of records is never held as text all at once.
    """
    name = os.fsdecode(path)
    records: list[AuditRecord] = []
    with open(path, "rb") as file:
        for number, line in enumerate(file, start=1):  # binary lines end at b"\n" only
            if not line.endswith(b"\n"):
                raise AuditError(name, number, "the last line has no newline (an unfinished write)")
            records.append(_read_line(name, number, line[:-1]))
    return tuple(records)


def _read_line(name: str, number: int, line: bytes) -> AuditRecord:
    if not line.strip():
        raise AuditError(name, number, "an empty line")
    try:
        data = json.loads(line)
    except (UnicodeDecodeError, ValueError) as error:  # JSONDecodeError is a ValueError
        raise AuditError(name, number, f"not JSON: {error}") from None
    except RecursionError:
        raise AuditError(name, number, "not JSON: nested too deeply") from None
    try:
        return record_from_json(data)
    except DecisionRequiredError as error:
        raise AuditError(name, number, f"decision: {error}") from None
    except (VerdictError, MaterialError, ValueError, TypeError) as error:
        raise AuditError(name, number, str(error)) from None


# --- writing ---------------------------------------------------------------------------------


@runtime_checkable
class Recorder(Protocol):
    """Where audit records go. ``record`` must keep each record whole, or raise."""

    def record(self, record: AuditRecord) -> None: ...


def record_line(record: AuditRecord) -> bytes:
    """The bytes of one audit line: ASCII JSON of ``record.to_json()`` and a newline."""
    if not isinstance(record, (VerdictRecord, DecisionRecord)):
        raise TypeError(f"an audit record is a VerdictRecord or DecisionRecord, got {show(record)}")
    text = json.dumps(record.to_json(), ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.encode("ascii") + b"\n"


@attrs.frozen
class JsonLinesRecorder:
    """Appends each record to the JSON Lines file ``path`` (created when missing).

    Safe when several processes (or threads) append to the same file: the file is opened with
    ``O_APPEND`` for each record, locked with ``flock`` where the platform has it, and the
    line is written with one ``write()`` (continued under the lock on a short write), so lines
    never interleave. Keeps no file open between records.
    """

    path: str = attrs.field(converter=os.fsdecode)

    def record(self, record: AuditRecord) -> None:
        line = record_line(record)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)  # closing releases the lock
