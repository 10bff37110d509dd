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
never interleave. (A network file system that ignores both is the exception.) A writer that
dies mid-line leaves a fragment; the next record starts on a fresh line, and the reader skips
the fragment, reporting it by ``FILE:LINE`` (:class:`TornLine`), and reads on.

Reading is streamed (one line in memory, at most :data:`MAX_LINE_BYTES`) and costs little more
than parsing the JSON: each distinct check is parsed once, and a verdict whose shape plain type
checks recognize is rebuilt by the core without the schema; the schema is kept to explain a
record that is not right. The JSON is read strictly: a repeated key, ``NaN``, an integer of
over 100 digits or a lone surrogate makes a line no record.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import itertools
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import PurePath
from typing import (
    Any,
    Final,
    Literal,
    NamedTuple,
    Protocol,
    cast,
    get_args,
    runtime_checkable,
)

import attrs

from .._bundle import Submission, canonical_json
from .._check import Check, ChoiceQuestion, Question, YesNoQuestion
from .._convert import file_name, show
from .._run import Action, Outcome
from .._types import is_mapping, of_type
from .._validate import parse_check
from .._verdict import (
    DISTRIBUTION_TOLERANCE,
    Answer,
    ChoiceAnswer,
    QuestionResult,
    RubricAnswer,
    Source,
    Verdict,
    VerdictName,
    YesNoAnswer,
    format_at,
    grade_fitting,
    worst_of,
)
from ..errors import CheckError, CheckprofileError, MaterialError, VerdictError
from ._decisions import (
    Completed,
    Decision,
    DecisionKind,
    DecisionRequiredError,
    Resolution,
    decision_from_json,
    plain_decision,
    plain_decision_of,
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
    "MAX_LINE_BYTES",
    "AuditError",
    "AuditRecord",
    "DecisionRecord",
    "JsonLinesRecorder",
    "Recorder",
    "TornLine",
    "TornLineWarning",
    "VerdictRecord",
    "check_key",
    "decision_record",
    "iter_records",
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


# Printable ASCII but `"` and `\`: JSON writes such text as it is, between quotes.
_PLAIN = re.compile(r"[ !#-\[\]-~]*")


def _key_from(run_id: str, step_id: str, submission_hash: str) -> str:
    # (The class of _PLAIN is per character: the parts are plain when they are, joined.)
    if _PLAIN.fullmatch(run_id + step_id + submission_hash):
        # canonical_json of the list, written out (a reader computes this for every record)
        return _sha256(f'["{run_id}","{step_id}","{submission_hash}"]')
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
    if type(outcome) is not Outcome:
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

# ASCII only: [0-9a-f], never a class that takes other scripts' digits.
_HASH = re.compile(r"sha256:[0-9a-f]{64}")


def _is_hash(value: object) -> bool:
    return type(value) is str and len(value) == 71 and _HASH.fullmatch(value) is not None


def _hash_field(data: Mapping[str, Any], name: str, *, nullable: bool = False) -> None:
    value = data[name]
    if value is None and nullable:
        return
    if not _is_hash(value):
        raise ValueError(f"{name} must be sha256: and 64 lowercase hex digits, got {show(value)}")


def record_from_json(data: object) -> AuditRecord:
    """One audit record from its JSON object. Raises :class:`ValueError` saying what is wrong
    (the record's own fields are checked against each other: keys and hashes must match)."""
    if not is_mapping(data):
        raise ValueError(f"a record must be a JSON object, got {show(data)}")
    kind = data.get("record")
    if type(kind) is not str or kind not in ("verdict", "decision"):
        raise ValueError(f'"record" must be "verdict" or "decision", got {show(kind)}')
    expected = _VERDICT_KEYS if kind == "verdict" else _DECISION_KEYS
    fields = (
        (_VERDICT_FIELDS, _VERDICT_FIELDS_PROVENANCE) if kind == "verdict" else (_DECISION_FIELDS,)
    )
    # Another format is named as such, before its keys are judged by this format's.
    if "format" in data and (type(data["format"]) is not int or data["format"] != AUDIT_FORMAT):
        raise ValueError(f"format {show(data['format'])} is not {AUDIT_FORMAT}")
    keys = data.keys()
    if not (keys == fields[0] or keys == fields[-1]):  # then say which is missing or unknown
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
    provenance = _provenance(data, check, verdict)
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


def _provenance(data: Mapping[str, Any], check: Check, verdict: Verdict) -> tuple[Provenance, ...]:
    if "provenance" not in data:
        return ()
    try:
        provenance = provenance_from_json(data["provenance"], check, verdict)
    except ReceiptError as error:
        raise ValueError(f"provenance: {error}") from None
    if not provenance:
        raise ValueError("provenance is left out when no answer's source is known")
    return provenance


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


#: The longest line the reader takes (and so the largest record the recorders write): a
#: verdict with its check is a few KB, a decision with a person's own output can be more.
#: A longer line is refused as soon as it is seen, so reading never holds more than this.
MAX_LINE_BYTES: Final = 8 * 1024 * 1024

# The most digits an integer of a record may have: records hold small counts and levels, and
# converting a long run of digits to an int costs time quadratic in its length (Python 3.10).
_MAX_DIGITS = 100


@attrs.frozen
class TornLine:
    """A line that a writer left unfinished: it died in the middle of a record, or is still
    writing the last line. ``path`` and ``line`` (1-based) say where; the reader skips it and
    reads on, and says so (:class:`TornLineWarning`, and calibration reports)."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: a torn line (a write that did not finish), skipped"


class TornLineWarning(UserWarning):
    """Issued by :func:`read_records` and :func:`iter_records` for each :class:`TornLine`
    skipped. Make it an error with ``warnings.simplefilter("error", TornLineWarning)``."""

    torn: TornLine

    def __init__(self, torn: TornLine) -> None:
        self.torn = torn
        super().__init__(str(torn))


class _Refused(ValueError):
    """A JSON text this reader will not take, though the json module would."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys without a word; a record never repeats one,
    # and a repeated key would let one line say two things.
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"the key {show(key)} appears twice in one object")
            seen.add(key)
    return data


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > _MAX_DIGITS:
        raise _Refused(f"an integer of {len(digits.lstrip('-'))} digits")
    return int(digits)


def _constant(name: str) -> float:
    raise _Refused(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=_integer, parse_constant=_constant)
_PLAIN_DECODER = json.JSONDecoder()
# The plain decoder turns digits into ints itself: only where Python bounds their length
# (3.10.7 and later, unless a host lifted the bound), so a long run of digits costs little.
_PLAIN_ROUTE: Final = 0 < getattr(sys, "get_int_max_str_digits", lambda: 0)() <= 10_000
# A UTF-16 surrogate left alone: json.loads turns an escaped pair into one character, so any
# surrogate still in the text after decoding had no partner.
_SURROGATE = re.compile("[\ud800-\udfff]")

# What a writer that died mid-line leaves: a strict prefix of a JSON object. A string, number
# or literal may stop anywhere inside, so the end is checked against their open forms.
_WS = r"[ \t\r\n]*"
_STRING_BODY = r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*'
_TOKEN = re.compile(
    rf"{_WS}(?:(?P<string>{_STRING_BODY}\")"
    r"|(?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<word>true|false|null)"
    r"|(?P<mark>[{}\[\],:]))"
)
_OPEN_STRING = re.compile(rf"{_WS}{_STRING_BODY}(?:\\(?:u[0-9a-fA-F]{{0,3}})?)?\Z")
_OPEN_VALUE = re.compile(
    rf"{_WS}(?:-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?)?"
    r"|t|tr|tru|f|fa|fal|fals|n|nu|nul)\Z"
)
_END = re.compile(rf"{_WS}\Z")


def _torn(text: str) -> bool:
    """Whether ``text`` is a strict prefix of a JSON object: what is left of a line when the
    writer stops in the middle (a complete object, or anything a writer never writes, is not).
    """
    if not text.startswith("{"):
        return False
    stack: list[str] = []
    expect = "value"  # value | value_or_close | key | key_or_close | colon | next | done
    pos = 0
    while True:
        if _END.match(text, pos):
            return bool(stack)  # stopped inside the object; an empty stack: it was complete
        if stack and expect in ("value", "value_or_close"):
            if _OPEN_STRING.match(text, pos) or _OPEN_VALUE.match(text, pos):
                return True
        elif expect in ("key", "key_or_close") and _OPEN_STRING.match(text, pos):
            return True
        token = _TOKEN.match(text, pos)
        if token is None or expect == "done":
            return False
        pos = token.end()
        mark = token.group("mark")
        if expect in ("value", "value_or_close"):
            if mark in ("{", "["):
                stack.append(mark)
                expect = "key_or_close" if mark == "{" else "value_or_close"
                continue
            if mark is None:
                expect = "next"
                continue
            if not (mark == "]" and expect == "value_or_close"):
                return False
        elif expect in ("key", "key_or_close"):
            if token.group("string") is not None:
                expect = "colon"
                continue
            if not (mark == "}" and expect == "key_or_close"):
                return False
        elif expect == "colon":
            if mark != ":":
                return False
            expect = "value"
            continue
        elif mark == ",":  # next
            expect = "key" if stack[-1] == "{" else "value"
            continue
        elif mark not in ("}", "]") or "{[".index(stack[-1]) != "}]".index(mark):
            return False
        stack.pop()  # a closing mark that fits
        expect = "next" if stack else "done"


class _Known(NamedTuple):
    """A valid check in its full form, its key, each question with what reading its answers
    needs (:func:`_plan`), and, when it was seen as written in a line and read strictly, how
    many ``":`` that text holds (``None``: not known, or an ask or answer name starts with
    ``:``, so a count of keys in the line would not add up)."""

    check: Check
    key: str
    plan: tuple[_Step, ...]
    colons: int | None = None
    tail: _Tail | None = None


#: What a question's entry in a verdict and its provenance entry hold, plainly right: the
#: answer, its recorded result, the distribution kept beside it and its source.
_Read = tuple["Answer", str, "Distribution | None", "str | None"]
# Reads one question's entry and provenance entry (``None``: no provenance), or gives ``None``.
_Step = Callable[[object, object], "_Read | None"]
# Checks one question's values: answer, confidence, result, source and distribution as
# written (``None``: none), or gives ``None``.
_Values = Callable[[Any, Any, Any, Any, Any], "_Read | None"]


def _plan(check: Check) -> tuple[_Step, ...]:
    """A reader for each question of ``check`` (see :func:`_verdict_body`)."""
    return tuple(_step(question, _values(question)) for question in check)


def _step(question: Question, values: _Values) -> _Step:
    """The reader of ``question``'s entry in a verdict, and its provenance entry."""
    ask, kind = question.ask, question.kind
    fields = _QUESTION_FIELDS if kind == "yes_no" else _QUESTION_FIELDS_CONFIDENCE

    def read(entry: object, origin: object) -> _Read | None:
        if (
            type(entry) is not dict
            or entry.keys() != fields
            or entry["ask"] != ask
            or entry["kind"] != kind
        ):
            return None
        source = pairs = None
        if origin is not None:
            source, pairs = _origin(origin)
            if source is False:
                return None
        return values(entry["answer"], entry.get("confidence"), entry["result"], source, pairs)

    return read


def _values(question: Question) -> _Values:
    """The checker of ``question``'s values: plain type checks that take an answer only where
    :func:`~checkprofile.answer_problem` takes it (or more strictly), then its thresholds."""
    if isinstance(question, YesNoQuestion):

        def yes_no(p: Any, _: Any, result: Any, source: Any, pairs: Any) -> _Read | None:
            # A probability: a finite number in [0, 1] (a NaN or an infinity fails the test).
            # (The full reading keeps a yes/no distribution unchecked.)
            if (
                (type(p) is not float and type(p) is not int)
                or not 0 <= p <= 1
                or pairs is not None
            ):
                return None
            given = YesNoAnswer(p)
            if grade_fitting(question, given) != result:
                return None
            return given, result, None, source

        return yes_no
    options: Container[object]
    option: type
    if isinstance(question, ChoiceQuestion):
        options, option = frozenset(question.names), str
    else:
        options, option = range(len(question.levels)), int

    def chosen(answer: Any, confidence: Any, result: Any, source: Any, pairs: Any) -> _Read | None:
        if (
            (type(confidence) is not float and type(confidence) is not int)
            or not 0 <= confidence <= 1
            or type(answer) is not option
            or answer not in options
        ):
            return None
        shown = None
        if pairs is not None:
            shown = _distribution(pairs, options, option, answer)
            if shown is None:
                return None
        # The schema's reading makes a confidence a float (1 is read as 1.0).
        given: Answer
        if option is str:
            # One text per answer name, not one per line (calibration keeps answers).
            given = ChoiceAnswer(sys.intern(cast("str", answer)), float(confidence))
        else:
            given = RubricAnswer(answer, float(confidence))
        if grade_fitting(question, given) != result:
            return None
        return given, result, shown, source

    return chosen


# What follows a writer's verdict line's check, for one check: its results, texts and numbers
# as the writer writes them (a number as JSON writes it; an integer of up to 18 digits).
_RESULT = '"(pass|fail|unsure)"'
_NUMBER = r"(-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,3})?)"
_LEVEL = r"(-?(?:0|[1-9][0-9]{0,17}))"
_ORIGIN = (
    r'(null|\{\}|\{"source":"([a-z_]+)"'
    r'(?:,"distribution":(null|\[[^"{}]*(?:"[^"\x00-\x1f]*"[^"{}]*)*\]))?\})'
)
_PLAIN_TEXT = re.compile(r'[^"\\\x00-\x1f]*')

#: Reads the end of a verdict line from where its check ends (see :func:`_tail`): the
#: verdict's name, advisory, model, at, truncated, and what :func:`_finish` gives.
_Tail = Callable[[str, int], "tuple[str, bool, str, str, bool, _Body | None] | None"]


def _number(text: str) -> int | float:
    """A JSON number's text as the json module reads it."""
    return float(text) if "." in text or "e" in text or "E" in text else int(text)


def _tail(check: Check) -> _Tail | None:
    """A reader of what follows ``check`` in a verdict line the writer wrote, ``None`` when
    an ask is not plain text (then the line holds escapes, and is read the other way).

    Its pattern pins every key, once, in the writer's order, and every value as the writer
    writes it (no whitespace, no escapes): what it matches is the JSON text of exactly the
    values it captures. A distribution is captured as its text and parsed (lists hold no
    keys). Anything else is left to the other readings."""
    if not all(_PLAIN_TEXT.fullmatch(question.ask) for question in check):
        return None
    entries: list[str] = []
    layout: list[tuple[str, int]] = []
    group = 3
    for question in check:
        entry = f'\\{{"ask":"{re.escape(question.ask)}","kind":"{question.kind}","answer":'
        if question.kind == "yes_no":
            entries.append(entry + _NUMBER + ',"result":' + _RESULT + "\\}")
            layout.append((question.kind, group))
            group += 2
        else:
            answer = _TEXT if question.kind == "choice" else _LEVEL
            entries.append(
                entry + answer + ',"confidence":' + _NUMBER + ',"result":' + _RESULT + "\\}"
            )
            layout.append((question.kind, group))
            group += 3
    truncated, at, origins = group, group + 1, group + 2
    pattern = re.compile(
        ',"verdict":\\{"verdict":' + _RESULT + ',"advisory":(true|false),"model":' + _TEXT
        + ',"questions":\\[' + ",".join(entries) + '\\](,"truncated":true)?,"at":' + _TEXT
        + '\\}(?:,"provenance":\\[' + ",".join([_ORIGIN] * len(check)) + "\\])?\\}"
    )  # fmt: skip
    checkers = tuple(_values(question) for question in check)

    def tail(text: str, start: int) -> tuple[str, bool, str, str, bool, _Body | None] | None:
        match = pattern.fullmatch(text, start)
        if match is None:
            return None
        found = match.groups()
        absent = found[origins] is None
        reads = []
        for index, ((kind, at_group), values) in enumerate(zip(layout, checkers, strict=True)):
            answer: Any
            confidence: Any
            if kind == "yes_no":
                answer, confidence, result = _number(found[at_group]), None, found[at_group + 1]
            else:
                answer = found[at_group] if kind == "choice" else int(found[at_group])
                confidence, result = _number(found[at_group + 1]), found[at_group + 2]
            source = pairs = None
            origin = origins + 3 * index
            if not absent and found[origin] != "null" and found[origin] != "{}":
                source, written = found[origin + 1], found[origin + 2]
                if source not in _SOURCES:
                    return None
                if written is not None and written != "null":
                    try:
                        pairs = _PLAIN_DECODER.decode(written)
                    except (ValueError, RecursionError):
                        return None
            reads.append(values(answer, confidence, result, source, pairs))
        name, model, when = found[0], found[2], found[at]
        body = _finish(name, model, when, reads, absent)
        return name, found[1] == "true", model, when, found[truncated] is not None, body

    return tail


class _Checks:
    """Each distinct check of a trail parsed once: a month of one step's verdicts carries the
    same check on every line. Keyed by its canonical JSON text, and, for lines in the writer's
    own key order, by the check's text as it stands in the line (no re-encoding at all). Only
    checks that are valid and in their full form are kept, with their key; anything else is
    left to the full reading."""

    _LIMIT = 1024  # a trail has a handful of checks; a hostile one cannot grow this further

    def __init__(self) -> None:
        self._known: dict[str, _Known] = {}
        self._written: dict[str, _Known] = {}

    def get(self, value: object, written: str | None = None) -> _Known | None:
        """The check ``value`` and its key; ``written`` is its JSON text in the line, when
        the line is laid out as the writer lays it out (see :meth:`_Reader._verdict`)."""
        if written is not None:
            found = self._written.get(written)
            if found is not None:
                return found
        try:
            text = canonical_json(value)
        except (ValueError, TypeError, RecursionError):
            return None
        found = self._known.get(text)
        if found is None:
            try:
                check = parse_check(value)
                if check.to_json() != value:
                    return None
            except Exception:  # the full reading explains it
                return None
            found = self._keep(self._known, text, _Known(check, check_key(check), _plan(check)))
        if written is not None:
            # A cut that is one whole JSON value is the value's own text: JSON values are
            # prefix-free, and the cut starts where the value does. Read strictly, it holds no
            # repeated key, so the keys of a line can be counted around it.
            try:
                _DECODER.decode(written)
            except (ValueError, RecursionError):
                return found
            names = [q.ask for q in found.check] + [
                name for q in found.check if isinstance(q, ChoiceQuestion) for name in q.names
            ]
            colons = None if any(name.startswith(":") for name in names) else written.count('":')
            found = found._replace(colons=colons, tail=_tail(found.check))
            found = self._keep(self._written, written, found)
        return found

    def written(self, text: str) -> _Known | None:
        """The check whose JSON text, as a line of the writer's holds it, is ``text``: one
        seen before, read strictly (see :meth:`get`)."""
        return self._written.get(text)

    def _keep(self, table: dict[str, _Known], text: str, found: _Known) -> _Known:
        if len(table) >= self._LIMIT:
            table.clear()
        table[text] = found
        return found


_VERDICT_FIELDS = frozenset(_VERDICT_KEYS)
_VERDICT_FIELDS_PROVENANCE = _VERDICT_FIELDS | {"provenance"}
_VERDICT_ORDER = (_VERDICT_KEYS, (*_VERDICT_KEYS, "provenance"))
_DECISION_FIELDS = frozenset(_DECISION_KEYS)
_BODY_FIELDS = frozenset(("verdict", "advisory", "model", "questions", "at"))
_BODY_FIELDS_TRUNCATED = _BODY_FIELDS | {"truncated"}
_QUESTION_FIELDS = frozenset(("ask", "kind", "answer", "result"))
_QUESTION_FIELDS_CONFIDENCE = _QUESTION_FIELDS | {"confidence"}
_ORIGIN_FIELDS = (frozenset(("source",)), frozenset(("source", "distribution")))
_SOURCES = frozenset(get_args(Source))
# The cut of a writer's verdict line that holds its check: after the key, up to the next key.
_CHECK_AT, _CHECK_END = ',"check":[', '],"verdict":{'
# A writer's verdict line up to its check: each value as the writer writes it, every text
# plain (the line holds no backslash, so no text holds an escape).
_HASH_TEXT = r'"(sha256:[0-9a-f]{64})"'
_TEXT = r'"([^"\x00-\x1f]*)"'
_VERDICT_HEAD = re.compile(
    rf'\{{"record":"verdict","format":1,"key":{_HASH_TEXT},"run":{_TEXT},"step":{_TEXT},'
    rf'"submission_sha256":{_HASH_TEXT},"bundle_sha256":(?:{_HASH_TEXT}|null),'
    rf'"check_key":{_HASH_TEXT},"action":"(complete|not_accepted|escalate|retry)",'
    r'"attempts":([12]),"check":'
)
# A writer's line of a plain decision (plain_decision), whole: the kind, then the note of a
# return or failure, by, at, and the note of a completion (written last).
_DECISION_LINE = re.compile(
    rf'\{{"record":"decision","format":1,"key":{_HASH_TEXT},"run":{_TEXT},"step":{_TEXT},'
    rf'"submission_sha256":{_HASH_TEXT},"escalated_at":(?:{_TEXT}|null),"accepted":(true|false),'
    rf'"decision":\{{"kind":"(completed|returned|failed)",(?:"note":{_TEXT},)?"by":{_TEXT},'
    rf'"at":{_TEXT}(?:,"note":{_TEXT})?\}}\}}'
)
_REST_FIELDS = frozenset(("verdict",))
_REST_FIELDS_PROVENANCE = frozenset(("verdict", "provenance"))


class _Reader:
    """Audit lines into typed records, at close to the cost of parsing their JSON.

    :func:`record_from_json` is the authority on what a record is, and says what is wrong
    with one that is not: it validates each verdict against the verdict schema, parses its
    check, and grades its answers again. The fast path here takes a verdict record only when
    plain type checks find every field in the shape the schema asks for, its check is one
    already parsed (:class:`_Checks`), and the core's own thresholds give each recorded
    result; and a decision record only when it is one of the plain decisions people make
    most (:func:`~checkprofile.human._decisions.plain_decision`). It builds exactly the record
    :func:`record_from_json` would (the tests compare the two on generated and broken
    records). Anything else, right or wrong, goes the full way. ``fast=False`` reads every
    line the full way (the tests' reference).
    """

    def __init__(self, *, fast: bool = True) -> None:
        self._checks = _Checks()
        self._fast = fast

    def line(self, name: str, number: int, line: bytes) -> AuditRecord | TornLine:
        """The record on ``line`` (its bytes, without the newline), or the fragment a writer
        left; raises :class:`AuditError` for anything else."""
        read = self.read(name, number, line)
        return read.record() if isinstance(read, (VerdictFacts, DecisionFacts)) else read

    def read(self, name: str, number: int, line: bytes) -> AuditRecord | Facts | TornLine:
        """As :meth:`line`, but a record the fast path reads comes as its facts."""
        if not line.strip():
            raise AuditError(name, number, "an empty line")
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            # A fragment may stop inside a character; anything else that is not UTF-8 is not JSON.
            if (
                error.reason == "unexpected end of data"
                and error.end == len(line)
                and _torn(line[: error.start].decode("utf-8", "replace"))
            ):
                return TornLine(name, number)
            raise AuditError(name, number, f"not JSON: {error}") from None
        if self._fast and _PLAIN_ROUTE and text.startswith('{"record":"') and "\\" not in text:
            # A line as the writer writes it: parsed by the json module alone (its hooks cost a
            # third more), and taken when the fast path finds it right and its keys add up to
            # what the text holds (a repeated key would not). A verdict whose check was seen
            # before, in a line of the same layout, has only what follows its check parsed.
            facts: Facts | None = None
            if text.startswith('{"record":"verdict"'):
                facts = self._verdict_line(text)
            elif text.startswith('{"record":"decision"'):
                facts = self._decision_line(text)
            if facts is not None:
                return facts
            try:
                plain = _PLAIN_DECODER.decode(text)
            except (ValueError, RecursionError):
                plain = None
            if type(plain) is dict:
                kind = plain.get("record")
                found: Facts | None = None
                if kind == "verdict":
                    found = self._verdict(plain, text)
                elif kind == "decision":
                    found = self._decision(plain, text)
                if found is not None:
                    return found
        try:
            data = _DECODER.decode(text)
        except _Refused as error:
            raise AuditError(name, number, f"not a record: {error}") from None
        except json.JSONDecodeError as error:
            if _torn(text):
                return TornLine(name, number)
            problem = f"not JSON: {error.msg} (column {error.colno})"
            raise AuditError(name, number, problem) from None
        except RecursionError:
            raise AuditError(name, number, "not JSON: nested too deeply") from None
        if "\\ud" in text or "\\uD" in text:
            try:
                lone = _SURROGATE.search(json.dumps(data, ensure_ascii=False))
            except RecursionError:
                raise AuditError(name, number, "not JSON: nested too deeply") from None
            if lone is not None:
                raise AuditError(
                    name,
                    number,
                    f"not a record: a string holds a lone surrogate (\\u{ord(lone.group()):04x}),"
                    " which is not Unicode text",
                )
        try:
            return self.record(data)
        except DecisionRequiredError as error:
            raise AuditError(name, number, f"decision: {error}") from None
        except (VerdictError, MaterialError, ValueError, TypeError) as error:
            raise AuditError(name, number, str(error)) from None
        except RecursionError:
            raise AuditError(name, number, "not a record: nested too deeply") from None

    def record(self, data: object) -> AuditRecord | Facts:
        """The record ``data``, read strictly (no key repeated, no lone surrogate)."""
        if self._fast and type(data) is dict:
            kind = data.get("record")
            found: Facts | None = None
            if kind == "verdict":
                found = self._verdict(data)
            elif kind == "decision":
                found = self._decision(data)
            if found is not None:
                return found
        return record_from_json(data)

    def _verdict(self, data: dict[str, Any], text: str | None = None) -> VerdictFacts | None:
        """The facts of verdict record ``data``, or ``None`` to read it the full way.
        ``text``: ``data`` was parsed from this line without the check for repeated keys, so
        the keys must be counted against it (:func:`_keys_add_up`)."""
        keys = data.keys()
        if keys != _VERDICT_FIELDS and keys != _VERDICT_FIELDS_PROVENANCE:
            return None
        run, step, digest, key = data["run"], data["step"], data["submission_sha256"], data["key"]
        action, attempts, bundle = data["action"], data["attempts"], data["bundle_sha256"]
        if not (
            _subject(data, run, step, digest, key)
            and (bundle is None or _is_hash(bundle))
            and type(action) is str
            and action in _ACTIONS
            and type(attempts) is int
            and (attempts == 1 or attempts == 2)
        ):
            return None
        written = None
        if text is not None:
            if tuple(data) not in _VERDICT_ORDER:
                return None
            # Every value before "check" is a plain string, number or null, in which no
            # unescaped quote can stand: the first `,"check":[` is the key itself.
            start = text.find(_CHECK_AT)
            end = text.find(_CHECK_END, start)
            if not 0 <= start < end:
                return None
            written = text[start + len(_CHECK_AT) - 1 : end + 1]
        found = self._checks.get(data["check"], written)
        if found is None or found.key != data["check_key"]:
            return None
        if text is not None and found.colons is None:
            return None
        return _facts(data, found, text, found.colons or 0, key, run, step, digest, bundle)

    def _verdict_line(self, text: str) -> VerdictFacts | None:
        """The facts of the verdict line ``text`` (no backslash in it) when it is laid out as
        the writer lays it out and its check's text is one already read (:meth:`_Checks.get`):
        only what follows the check is parsed. ``None`` to read it another way.

        The line is then the head that :data:`_VERDICT_HEAD` matches (each key once, each
        value plain), the check's own text (one whole JSON value: what follows it is not part
        of it), and ``,"verdict":…}``: read as the object ``{"verdict":…}``, with no key of
        the head in it, it gives what the whole line would."""
        head = _VERDICT_HEAD.match(text)
        if head is None:
            return None
        start = head.end()
        end = text.find(_CHECK_END, start)
        found = self._checks.written(text[start : end + 1]) if end > 0 else None
        if found is None:
            return None
        key, run, step, digest, bundle, check, action, attempts = head.groups()
        if (
            not run.strip()
            or not step.strip()
            or check != found.key
            or key != _key_from(run, step, digest)
        ):
            return None
        tail = found.tail(text, end + 1) if found.tail is not None else None
        if tail is not None:
            name, advisory, model, at, truncated, body = tail
            if body is None:
                return None
            return VerdictFacts(
                key, run, step, digest, bundle, found.key, action, int(attempts), found.check,
                name, advisory, model, at, truncated, *body,
            )  # fmt: skip
        rest = "{" + text[end + 2 :]
        try:
            data = _PLAIN_DECODER.decode(rest)
        except (ValueError, RecursionError):
            return None
        if type(data) is not dict or (
            data.keys() != _REST_FIELDS and data.keys() != _REST_FIELDS_PROVENANCE
        ):
            return None
        return _facts(data, found, rest, 0, key, run, step, digest, bundle, action, int(attempts))

    def _decision_line(self, text: str) -> DecisionFacts | None:
        """The facts of the decision line ``text`` (no backslash in it) when it is a plain
        decision laid out as the writer lays it out (:data:`_DECISION_LINE`: each key once,
        each value plain, nothing else), without parsing it as JSON; ``None`` otherwise."""
        line = _DECISION_LINE.fullmatch(text)
        if line is None:
            return None
        key, run, step, digest, escalated, accepted, kind, before, by, at, after = line.groups()
        if before is not None and after is not None:
            return None  # a note twice
        note = after if before is None else before
        body = {"kind": kind, "by": by, "at": at}
        if note is not None:
            body["note"] = note
        data = {
            "format": AUDIT_FORMAT,
            "key": key,
            "run": run,
            "step": step,
            "submission_sha256": digest,
            "escalated_at": escalated,
            "accepted": accepted == "true",
            "decision": body,
        }
        return self._decision(data, checked=True)

    def _decision(
        self, data: dict[str, Any], text: str | None = None, *, checked: bool = False
    ) -> DecisionFacts | None:
        """The facts of decision record ``data``, or ``None`` to read it the full way
        (``text`` as for :meth:`_verdict`; ``checked``: its keys are known to be right)."""
        if not checked and data.keys() != _DECISION_FIELDS:
            return None
        run, step, digest, key = data["run"], data["step"], data["submission_sha256"], data["key"]
        escalated, body = data["escalated_at"], data["decision"]
        if not _subject(data, run, step, digest, key):
            return None
        if escalated is not None and (type(escalated) is not str or not _is_at(escalated)):
            return None
        made = plain_decision(body)
        # A plain decision lets the candidate stand exactly when it completes.
        if made is None or data["accepted"] is not (made[0] == "completed"):
            return None
        if text is not None and not _keys_add_up(text, len(data) + len(body)):
            return None
        return DecisionFacts(key, run, step, digest, escalated, *made)


def _facts(
    data: dict[str, Any],
    found: _Known,
    text: str | None,
    colons: int,
    key: str,
    run: str,
    step: str,
    digest: str,
    bundle: str | None,
    action: str | None = None,
    attempts: int | None = None,
) -> VerdictFacts | None:
    """The facts of a verdict record whose head (``key`` to ``bundle``; ``action`` and
    ``attempts`` when ``data`` does not hold them) and check (``found``) are right, from its
    ``"verdict"`` and ``"provenance"`` in ``data``; ``None`` when those are not plainly right.
    ``text``: ``data`` was parsed from this text without the check for repeated keys, so its
    keys must add up, with ``colons`` more for a check's text within it."""
    body = data["verdict"]
    origins = data.get("provenance", _ABSENT)
    made = _verdict_body(body, found.check, found.plan, origins)
    if made is None:
        return None
    if text is not None:
        keys_seen = len(data) + len(body) + sum(map(len, body["questions"]))
        if origins is not _ABSENT:
            keys_seen += sum(len(origin) for origin in origins if origin is not None)
        if not _keys_add_up(text, keys_seen + colons):
            return None
    answers, results, distributions, sources = made
    return VerdictFacts(
        key,
        run,
        step,
        digest,
        bundle,
        found.key,
        data["action"] if action is None else action,
        data["attempts"] if attempts is None else attempts,
        found.check,
        body["verdict"],
        body["advisory"],
        body["model"],
        body["at"],
        body.get("truncated", False),
        answers,
        results,
        distributions,
        sources,
    )


def _subject(data: dict[str, Any], run: object, step: object, digest: object, key: object) -> bool:
    """Whether a record's format, run, step, submission hash and key are plainly right (the
    key is the submission key of the others, so it is a hash too)."""
    return (
        type(data["format"]) is int
        and data["format"] == AUDIT_FORMAT
        and type(run) is str
        and type(step) is str
        and type(key) is str
        and bool(run.strip())
        and bool(step.strip())
        and _is_hash(digest)
        and key == _key_from(run, step, digest)  # type: ignore[arg-type]
    )


def _keys_add_up(text: str, keys: int) -> bool:
    """Whether the line ``text`` (no backslash in it), parsed without the check for repeated
    keys into objects with ``keys`` keys in all, holds no key twice.

    Each key in the text is a string followed by ``:``. When no ``"`` is followed by
    whitespace, every key shows as ``":``, and so does every other string that starts with
    ``:`` (a string holds no ``"``); nothing else does. So the text counts at least as many as
    the keys read, and exactly as many only when no key was written twice."""
    return '" ' not in text and '"\t' not in text and '"\r' not in text and text.count('":') == keys


def _is_at(text: str) -> bool:
    """Whether ``text`` is a time as records hold it (see :func:`format_at`)."""
    try:
        format_at(text)
    except ValueError:
        return False
    return True


class VerdictFacts(NamedTuple):
    """A verdict record as the fast path read it, every field checked, before it is built as
    a :class:`VerdictRecord` (:meth:`record`); calibration takes these as they are.
    ``answers`` hold each answer (none for an ``error`` verdict), ``distributions`` the
    distribution the provenance keeps beside it, ``sources`` each answer's source (``None``:
    the record has no provenance)."""

    key: str
    run: str
    step: str
    submission_sha256: str
    bundle_sha256: str | None
    check_key: str
    action: str
    attempts: int
    check: Check
    verdict: str
    advisory: bool
    model: str
    at: str
    truncated: bool
    answers: tuple[Answer, ...]
    results: tuple[str, ...]
    distributions: tuple[Distribution | None, ...]
    sources: tuple[str | None, ...] | None

    def record(self) -> VerdictRecord:
        """The typed record: what :func:`record_from_json` makes of the same line."""
        check = self.check
        if self.verdict == "error":
            questions = [
                QuestionResult(ask=q.ask, kind=q.kind, answer=None, result="unsure") for q in check
            ]
        else:
            questions = [
                QuestionResult(
                    ask=q.ask,
                    kind=q.kind,
                    answer=_value(answer),
                    confidence=getattr(answer, "confidence", None),
                    result=result,  # type: ignore[arg-type]
                )
                for q, answer, result in zip(check, self.answers, self.results, strict=True)
            ]
        verdict = Verdict(
            verdict=self.verdict,  # type: ignore[arg-type]
            advisory=self.advisory,
            model=self.model,
            questions=questions,
            truncated=self.truncated,
            at=self.at,
            check=check,
        )
        provenance: tuple[Provenance, ...] = ()
        if self.sources is not None:
            provenance = tuple(
                _NO_ORIGIN if source is None else Provenance(source, shown)
                for source, shown in zip(self.sources, self.distributions, strict=True)
            )
        return VerdictRecord(
            key=self.key,
            run=self.run,
            step=self.step,
            submission_sha256=self.submission_sha256,
            bundle_sha256=self.bundle_sha256,
            check_key=self.check_key,
            action=self.action,  # type: ignore[arg-type]
            attempts=self.attempts,
            check=check,
            verdict=verdict,
            provenance=provenance,
        )


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


#: A record as the fast path read it.
Facts = VerdictFacts | DecisionFacts


def _value(answer: Answer) -> float | str | int:
    """The recorded ``answer`` of a question: the probability, name or level."""
    if isinstance(answer, YesNoAnswer):
        return answer.p
    return answer.name if isinstance(answer, ChoiceAnswer) else answer.level


# The core's worst-of rule (decision 7), once for each combination of results.
_worst = functools.cache(worst_of)


def _verdict_body(
    data: object, check: Check, plan: tuple[_Step, ...], origins: object
) -> _Body | None:
    """The answers, results, distributions and sources of the verdict ``data`` of ``check``
    and the provenance ``origins`` (``_ABSENT``: there is none), when plain type checks find
    both in the shape the verdict schema and :func:`provenance_from_json` take, each answer
    fits its question as :func:`~checkprofile.answer_problem` asks (or more strictly), its
    thresholds give every recorded result, and each distribution is plainly one the core
    takes for its answer (:func:`_distribution`); ``None`` otherwise. ``plan`` reads each question
    (:func:`_plan`)."""
    if type(data) is not dict:
        return None
    keys = data.keys()
    truncated = data.get("truncated", False)
    if not (keys == _BODY_FIELDS or (keys == _BODY_FIELDS_TRUNCATED and truncated is True)):
        return None
    name, advisory, model, at = data["verdict"], data["advisory"], data["model"], data["at"]
    questions = data["questions"]
    if (
        type(name) is not str
        or type(advisory) is not bool
        or type(model) is not str
        or not model.strip()
        or type(at) is not str
        or type(questions) is not list
        or len(questions) != len(plan)
    ):
        return None
    absent = origins is _ABSENT
    if absent:
        origins = _NONE * len(plan)
    elif type(origins) is not list or len(origins) != len(plan) or name == "error":
        return None  # (an error verdict has no provenance to speak of)
    if name == "error":
        if not _is_at(at):
            return None
        for question, entry in zip(check, questions, strict=True):
            if (
                type(entry) is not dict
                or entry.keys() != _QUESTION_FIELDS
                or entry["ask"] != question.ask
                or entry["kind"] != question.kind
                or entry["answer"] is not None
                or entry["result"] != "unsure"
            ):
                return None
        return (), ("unsure",) * len(plan), (None,) * len(plan), None
    read = [
        step(entry, origin) for step, entry, origin in zip(plan, questions, origins, strict=True)
    ]
    return _finish(name, model, at, read, absent)


def _finish(name: str, model: str, at: str, read: list[_Read | None], absent: bool) -> _Body | None:
    """The body of a verdict named ``name`` whose questions read as ``read`` (``absent``: it
    has no provenance), when the model is named, the time is one, each question was plainly
    right and the name is the worst of their results; ``None`` otherwise."""
    if not model.strip() or not _is_at(at) or None in read:
        return None
    answers, results, distributions, sources = zip(*read, strict=True)
    if _worst(results) != name:
        return None
    if absent:
        return answers, results, distributions, None
    if sources.count(None) == len(sources):
        return None  # provenance that knows no source is left out, not written
    return answers, results, distributions, sources


#: One distribution: (option, probability) pairs.
Distribution = tuple[tuple[Any, Any], ...]
_Body = tuple[
    tuple[Answer, ...],
    tuple[str, ...],
    tuple[Distribution | None, ...],
    tuple[str | None, ...] | None,
]


def _distribution(
    pairs: object, options: Container[object], option: type, chosen: object
) -> Distribution | None:
    """The distribution ``pairs`` (a list of ``[option, probability]`` lists) as kept beside
    the answer ``chosen``, when it is plainly one the core takes (each of the question's
    ``options``, all of type ``option``, at most once; probabilities in [0, 1] summing to 1
    within the core's tolerance; ``chosen`` the most probable); ``None`` otherwise. Stricter
    than the core where that is simpler (the core also takes a level written ``2.0``, and a
    chosen answer a hair below the top): what this refuses, the full reading decides."""
    if type(pairs) is not list or not pairs:
        return None
    shown = []
    names: set[object] = set()
    top = mine = -1.0
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2:
            return None
        name, probability = pair
        if type(name) is not option or name not in options or name in names:
            return None
        if (type(probability) is not float and type(probability) is not int) or not (
            0 <= probability <= 1
        ):
            return None
        names.add(name)
        shown.append((name, probability))
        if probability > top:
            top = probability
        if name == chosen:
            mine = probability
    if mine < top or abs(math.fsum(p for _, p in shown) - 1) > DISTRIBUTION_TOLERANCE:
        return None
    return tuple(shown)


_NO_ORIGIN = Provenance()
_ABSENT = object()
_NONE = [None]


def _origin(origin: object) -> tuple[Any, Any]:
    """The source and distribution (as written: ``None`` for none) of a provenance entry that
    is not null: ``(None, None)`` for ``{}``, ``(False, None)`` for an entry the fast path
    leaves to the full reading."""
    if type(origin) is not dict:
        return False, None
    if not origin:
        return None, None
    source = origin.get("source")
    if type(source) is not str or source not in _SOURCES:
        return False, None
    if len(origin) == 1:
        return source, None
    if len(origin) != 2 or "distribution" not in origin:
        return False, None
    return source, origin["distribution"]


def _lines(path: str | os.PathLike[str]) -> Iterator[tuple[str, int, bytes]]:
    """Each line of an audit file with its number, without its newline (a last line without
    one is given as it is). Raises :class:`AuditError` for a line over :data:`MAX_LINE_BYTES`
    as soon as it is seen: memory never holds more than one line."""
    name = file_name(path)
    with open(name, "rb") as file:
        number = 0
        while True:
            line = file.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            number += 1
            if line.endswith(b"\n"):
                line = line[:-1]
            elif len(line) > MAX_LINE_BYTES:
                raise AuditError(
                    name, number, f"a line of over {MAX_LINE_BYTES} bytes is not an audit record"
                )
            yield name, number, line


#: What calibration reads: a record (one the fast path read comes as its facts), or a
#: fragment, each with a fingerprint of its text.
Read = tuple["AuditRecord | Facts | TornLine", int]


def _file_stream(path: str | os.PathLike[str], reader: _Reader) -> Iterator[Read]:
    """Each record of a file, or the fragment a writer left, with a fingerprint of its line
    (equal lines, equal fingerprints: the same record in two replicas' files)."""
    for name, number, line in _lines(path):
        yield reader.read(name, number, line), hash(line)


def iter_records(path: str | os.PathLike[str]) -> Iterator[AuditRecord]:
    """Every record of a JSON Lines audit file, in file order, typed, one at a time: memory
    holds one line, however long the file.

    A line that a writer left unfinished (it died mid-record, or is still writing the last
    line) is skipped with a :class:`TornLineWarning` naming ``FILE:LINE``; every record after
    it is read. Any other line that is not a record raises :class:`AuditError` naming
    ``FILE:LINE`` and what is wrong (an empty line, text that is not JSON or repeats a key,
    a record that does not hold together, a line over :data:`MAX_LINE_BYTES`).
    """
    reader = _Reader()
    for name, number, line in _lines(path):
        item = reader.line(name, number, line)
        if isinstance(item, TornLine):
            warnings.warn(TornLineWarning(item), stacklevel=2)
        else:
            yield item


def read_records(path: str | os.PathLike[str]) -> tuple[AuditRecord, ...]:
    """Every record of a JSON Lines audit file, in file order, typed (see
    :func:`iter_records`: a torn line is skipped with a :class:`TornLineWarning`; any other
    line that is not a record raises :class:`AuditError` naming ``FILE:LINE``)."""
    return tuple(iter_records(path))


# --- windows and sources ---------------------------------------------------------------------

# RFC 3339: a date-time in UTC (Z) or with an offset, or a date alone (midnight UTC).
_WHEN = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})"
    r"(?:[Tt]([0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2}))?"
)


def at_order(at: str) -> str:
    """A text that sorts as the times do: ``at`` (RFC 3339, UTC, ``Z``) without the ``Z`` and
    without trailing zeros in its fraction (``…:00.5Z`` is after ``…:00Z``, though ``.`` sorts
    before ``Z``). Compare these bytewise (in PostgreSQL, ``COLLATE "C"``)."""
    if len(at) == 20:
        return at[:19]
    fraction = at[20:-1].rstrip("0")
    return at[:19] + "." + fraction if fraction else at[:19]


def _bound(name: str, value: object) -> str | None:
    """``value`` (an RFC 3339 time, a date, or an aware datetime) as RFC 3339 in UTC, ``Z``,
    with no trailing zeros in its fraction: one text for one moment."""
    if value is None:
        return None
    if isinstance(value, datetime):
        try:
            value = format_at(value)
        except ValueError:
            problem = f"{name} must be a timezone-aware datetime, got {show(value)}"
            raise ValueError(problem) from None
    match = _WHEN.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(
            f"{name} must be an RFC 3339 time (2026-11-01T00:00:00Z, with Z or an offset) or a"
            f" date (2026-11-01, midnight UTC), got {show(value)}"
        )
    date, clock, fraction, offset = match.groups()
    fraction = (fraction or "").rstrip("0").rstrip(".")
    try:
        if offset is None or offset in "Zz":
            return format_at(f"{date}T{clock or '00:00:00'}{fraction}Z")
        moment = datetime.fromisoformat(f"{date}T{clock}")
        shift = timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
        moment = moment - shift if offset[0] == "+" else moment + shift
        return format_at(moment.isoformat(timespec="seconds") + fraction + "Z")
    except (ValueError, OverflowError):
        raise ValueError(f"{name} names no real time: {show(value)}") from None


@attrs.frozen
class Window:
    """Which records a calibration reads: verdicts whose ``at`` is at or after ``since`` and
    before ``until`` (either may be ``None``: no bound), each with the decisions on its
    submission whenever they were made. A decision on a submission with no verdict at all is
    in the window when its own ``at`` is. ``since`` and ``until`` are RFC 3339 in UTC (``Z``);
    :meth:`of` takes an offset, a date (midnight UTC) or an aware datetime too."""

    since: str | None = None
    until: str | None = None

    @classmethod
    def of(cls, since: object = None, until: object = None) -> Window:
        window = cls(_bound("since", since), _bound("until", until))
        since, until = window.bounds
        if since is not None and until is not None and since >= until:
            raise ValueError(
                f"since must be before until, got since {show(window.since)} and until"
                f" {show(window.until)}"
            )
        return window

    @property
    def bounds(self) -> tuple[str | None, str | None]:
        """``since`` and ``until`` as :func:`at_order` texts."""
        return (
            None if self.since is None else at_order(self.since),
            None if self.until is None else at_order(self.until),
        )

    def holds(self, at: str) -> bool:
        """Whether a record at ``at`` (RFC 3339, UTC) falls in the window."""
        since, until = self.bounds
        order = at_order(at)
        return (since is None or order >= since) and (until is None or order < until)


@runtime_checkable
class RecordSource(Protocol):
    """A store that :func:`~checkprofile.human.calibrate` can read: ``name`` for reports (no
    password), and ``stream(window)``: each record of the window (a superset is fine) with a
    fingerprint of its text, or a :class:`TornLine`, in the order they were recorded."""

    @property
    def name(self) -> str: ...

    def stream(self, window: Window) -> Iterator[Read]: ...


def _audit_files(path: str | bytes | os.PathLike[str]) -> list[str]:
    """``path`` if it is a file; the ``*.jsonl`` files of a directory, by name."""
    name = file_name(path)
    if not os.path.isdir(name):
        return [name]
    files = sorted(
        entry.path
        for entry in os.scandir(name)
        if entry.name.endswith(".jsonl") and entry.is_file()
    )
    if not files:
        raise FileNotFoundError(errno.ENOENT, "no audit records (*.jsonl) in this directory", name)
    return files


def open_sources(sources: Iterable[object], window: Window) -> tuple[list[str], Iterator[Read]]:
    """The names of ``sources`` and all their records, one after another, each with a
    fingerprint of its text. A source is a path (a JSON Lines file, or a directory of
    ``*.jsonl`` files), a :class:`RecordSource`, or an iterable of records. Files are listed
    (and a missing one refused) before anything is read; a file given twice is read once."""
    names: list[str] = []
    parts: list[Callable[[], Iterator[Read]]] = []
    seen: set[tuple[int, int]] = set()
    reader = _Reader()
    for source in sources:
        # Each source is judged by its type, never by what it says of itself (its __class__,
        # its own __getattr__), as every value that comes in is.
        kind = type(source)
        if issubclass(kind, JsonLinesRecorder):
            source = source.path  # type: ignore[attr-defined]
            kind = str
        if issubclass(kind, (str, bytes, PurePath)):
            for file in _audit_files(cast("str", source)):
                status = os.stat(file)
                if (status.st_dev, status.st_ino) in seen:
                    continue
                seen.add((status.st_dev, status.st_ino))
                names.append(file)
                parts.append(functools.partial(_file_stream, file, reader))
        elif callable(getattr(kind, "stream", None)) and hasattr(kind, "name"):
            store: RecordSource = source  # type: ignore[assignment]  # a RecordSource
            names.append(store.name)
            parts.append(functools.partial(store.stream, window))
        elif issubclass(kind, (list, tuple)):
            base = list if issubclass(kind, list) else tuple
            parts.append(functools.partial(_given, base.__iter__(source)))  # type: ignore[arg-type]
        elif issubclass(kind, Iterator):  # a generator, a database cursor: read as it goes
            parts.append(functools.partial(_given, source))  # type: ignore[arg-type]
        else:
            raise TypeError(
                "a source is a path, a directory, a recorder, or a list, tuple or iterator of"
                " audit records,"
                f" got {show(source)}"
            )
    return names, itertools.chain.from_iterable(part() for part in parts)


def _given(records: Iterable[object]) -> Iterator[Read]:
    for record in records:
        if type(record) is TornLine:
            yield record, 0
            continue
        if not of_type(record, VerdictRecord, DecisionRecord):
            raise TypeError(f"an audit record is needed (see read_records), got {show(record)}")
        known = cast("AuditRecord", record)
        yield known, hash(_line(known))


# --- writing ---------------------------------------------------------------------------------


@runtime_checkable
class Recorder(Protocol):
    """Where audit records go. ``record`` must keep each record whole, or raise."""

    def record(self, record: AuditRecord) -> None: ...


def _line(record: AuditRecord) -> bytes:
    text = json.dumps(record.to_json(), ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.encode("ascii")


# Reads back every line before it is written (thread-safe: its cache is a dict).
_WRITER_CHECK = _Reader()


def record_line(record: AuditRecord) -> bytes:
    """The bytes of one audit line: ASCII JSON of ``record.to_json()`` and a newline.

    Raises :class:`ValueError` for a record that would not read back (a lone surrogate in its
    text, a line over :data:`MAX_LINE_BYTES`): a recorder writes nothing the reader refuses.
    """
    if not of_type(record, VerdictRecord, DecisionRecord):
        raise TypeError(f"an audit record is a VerdictRecord or DecisionRecord, got {show(record)}")
    line = _line(record)
    if len(line) >= MAX_LINE_BYTES:
        raise ValueError(
            f"this record is {len(line)} bytes as a line, over the {MAX_LINE_BYTES} an audit"
            " line may have; nothing was written"
        )
    try:
        _WRITER_CHECK.line("record", 1, line)
    except AuditError as error:
        reason = str(error).removeprefix("record:1: ")
        raise ValueError(
            f"this record would not read back ({reason}); nothing was written"
        ) from None
    return line + b"\n"


@attrs.frozen
class JsonLinesRecorder:
    """Appends each record to the JSON Lines file ``path`` (created when missing).

    Safe when several processes (or threads) append to the same file: the file is opened with
    ``O_APPEND`` for each record, locked with ``flock`` where the platform has it, and the
    line is written with one ``write()`` (continued under the lock on a short write), so lines
    never interleave. Keeps no file open between records.

    When a writer died in the middle of a line, the next record starts on a fresh line, so
    only the fragment is lost: the reader skips it and reports it (:class:`TornLine`).
    """

    path: str = attrs.field(converter=file_name)

    def record(self, record: AuditRecord) -> None:
        line = record_line(record)
        cloexec = getattr(os, "O_CLOEXEC", 0)
        try:  # read access to see how the file ends
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | cloexec, 0o644)
            readable = True
        except PermissionError:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | cloexec, 0o644)
            readable = False
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            if readable and _ends_mid_line(fd):
                line = b"\n" + line  # a writer died mid-line: leave its fragment alone
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)  # closing releases the lock


def _ends_mid_line(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if not size:
        return False
    os.lseek(fd, size - 1, os.SEEK_SET)  # O_APPEND still writes at the end
    return os.read(fd, 1) != b"\n"
