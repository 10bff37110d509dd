"""Reading audit records strictly: the reference for what a record is.

:func:`record_from_json` judges one record's JSON object, its fields against each other (keys
and hashes must match), its verdict against the verdict schema, its check parsed and its answers
graded again, and says what is wrong with one that is not right. Below it, the reading of one
line: UTF-8, then JSON read by the package's one strict reader (``_json_read``: a repeated key,
``NaN``, an integer of over 100 digits makes a line no record) and this trail's own rule over what
it reads (a lone surrogate makes none either), and the fragment a writer that died mid-line leaves
(:class:`TornLine`), told apart from a line that is wrong. ``_audit_fast`` reads the same
records faster and leaves to this module whatever it does not find plainly right.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

from ..._check import Check
from ..._json_read import JsonFaultError, load_json
from ..._keepable import KEPT_LINE_BYTES
from ..._shown import show
from ..._types import is_mapping
from ..._usage import ModelCall, call_from_json
from ..._validate import parse_check
from ..._verdict import Provenance, Verdict, format_at
from ...errors import CheckError, CheckprofileError
from .._decide._decisions import read_back
from .._decide._receipts import ReceiptError, provenance_from_json
from ._kinds import AuditRecord
from ._qualification import qualification_from_json
from ._records import (
    _ACTIONS,
    AUDIT_FORMAT,
    DecisionRecord,
    VerdictRecord,
    _id,
    _key_from,
    check_key,
)
from ._spot import spot_from_json

__all__ = [
    "MAX_LINE_BYTES",
    "AuditError",
    "TornLine",
    "TornLineWarning",
    "line_data",
    "line_text",
    "record_from_json",
]


class AuditError(CheckprofileError, ValueError):
    """An audit file line that is not a record: ``path``, ``line`` (1-based) and why, in one
    line: ``records.jsonl:12: not JSON: Expecting value``."""

    path: str
    line: int

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {' '.join(reason.split())}")


# Keys a verdict record may have besides _VERDICT_KEYS (format 1 readers that came before them
# refuse unknown keys, so each is written only when it says something).
_VERDICT_OPTIONAL = ("provenance", "calls")
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


_VERDICT_FIELDS = frozenset(_VERDICT_KEYS)
_VERDICT_FIELDS_PROVENANCE = _VERDICT_FIELDS | {"provenance"}
_DECISION_FIELDS = frozenset(_DECISION_KEYS)


def record_from_json(data: object) -> AuditRecord:
    """One audit record from its JSON object. Raises :class:`ValueError` saying what is wrong
    (the record's own fields are checked against each other: keys and hashes must match)."""
    if not is_mapping(data):
        raise ValueError(f"a record must be a JSON object, got {show(data)}")
    kind = data.get("record")
    if type(kind) is str and kind == "spot_check":
        return spot_from_json(data)
    if type(kind) is not str or kind not in ("verdict", "decision", "qualification"):
        raise ValueError(
            '"record" must be "verdict", "decision", "spot_check" or "qualification", got'
            f" {show(kind)}"
        )
    expected = _VERDICT_KEYS if kind == "verdict" else _DECISION_KEYS
    fields = (
        (_VERDICT_FIELDS, _VERDICT_FIELDS_PROVENANCE) if kind == "verdict" else (_DECISION_FIELDS,)
    )
    # Another format is named as such, before its keys are judged by this format's (a record
    # without one is then named as needing it).
    if "format" in data and (type(data["format"]) is not int or data["format"] != AUDIT_FORMAT):
        raise ValueError(f"format {show(data['format'])} is not {AUDIT_FORMAT}")
    if kind == "qualification":  # a record kind of its own module
        return qualification_from_json(data)
    keys = data.keys()
    if not (keys == fields[0] or keys == fields[-1]):  # then say which is missing or unknown
        missing = [key for key in expected if key not in data]
        if missing:
            raise ValueError(f"a {kind} record needs {show(missing[0])}")
        optional = _VERDICT_OPTIONAL if kind == "verdict" else ()
        unknown = sorted((key for key in data if key not in (*expected, *optional)), key=str)
        if unknown:
            raise ValueError(f"a {kind} record has no key {show(unknown[0])}")
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
    calls = _calls(data, int(attempts))
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
        calls=calls,
    )


def _calls(data: Mapping[str, Any], attempts: int) -> tuple[ModelCall, ...]:
    """The record's calls: absent, or one per attempt."""
    if "calls" not in data:
        return ()
    listed = data["calls"]
    if type(listed) is not list or len(listed) != attempts:
        raise ValueError(f"calls must list one call per attempt ({attempts}), got {show(listed)}")
    try:
        return tuple(call_from_json(call) for call in listed)
    except ValueError as error:
        raise ValueError(f"calls: {error}") from None


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
    decision = read_back(data["decision"])
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
#: (Defined with what every store can keep, where a decision is checked before it is applied.)
MAX_LINE_BYTES: Final = KEPT_LINE_BYTES

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


def line_text(name: str, number: int, line: bytes) -> str | TornLine:
    """The text of line ``number`` of ``name`` (its bytes, without the newline), or the
    fragment a writer left when it stops inside a character; raises :class:`AuditError` for an
    empty line or one that is not UTF-8."""
    if not line.strip():
        raise AuditError(name, number, "an empty line")
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as error:
        # A fragment may stop inside a character; anything else that is not UTF-8 is not JSON.
        if (
            error.reason == "unexpected end of data"
            and error.end == len(line)
            and _torn(line[: error.start].decode("utf-8", "replace"))
        ):
            return TornLine(name, number)
        raise AuditError(name, number, f"not JSON: {error}") from None


def line_data(name: str, number: int, text: str) -> object:
    """The JSON value of the line ``text``, read strictly (no key repeated, no ``NaN``, no
    integer of over 100 digits, no lone surrogate), or the :class:`TornLine` a writer left;
    raises :class:`AuditError` for anything else."""
    try:
        data = load_json(text, max_digits=_MAX_DIGITS)
    except JsonFaultError as error:
        refused = error.fault.worded(
            key="the key {} appears twice in one object",
            constant="{} is not JSON",
            integer="an integer of {} digits",
        )
        # A line holds no line break: its column is one past the offset.
        raise AuditError(
            name, number, f"not a record: {refused} (column {error.fault.index + 1})"
        ) from None
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
    return data
