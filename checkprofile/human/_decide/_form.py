"""A person's decision posted from the receipt page's form, read back strictly.

The page (:func:`~checkprofile.human.receipt_html`) posts, with no script, one of four forms:
``returned`` (a note), ``completed`` with the candidate (a note, optional), ``own``: completed
with the person's own output (each field of the candidate's output edited as JSON text, and a
summary, evidence and route), or ``failed`` (a note). Each carries the checkpoint's reference
and the host's token against cross-site posts. :func:`decision_from_form` checks both (in
constant time) and gives exactly one typed decision, read by :func:`decision_from_json`'s
rules, so a post and a JSON decision are held to one standard. The person never sets the
decision's ``by`` or ``at``: the host does.

Errors name the shape of the post (its field names), never what a field holds: a post carries
a person's notes, and an error message ends up in logs.
"""

from __future__ import annotations

import hmac
import itertools
import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final, Literal, cast

from ..._json_read import JsonFaultError, line_column, load_json
from ..._shown import is_blank, show
from ...errors import CheckprofileError
from ._decisions import Decision, DecisionRequiredError, decision_from_json

__all__ = ["FORM_CHOICES", "FormRefusedError", "decision_from_form", "form_post"]

#: The form's field names.
CHECKPOINT: Final = "checkpoint"
TOKEN: Final = "token"
DECISION: Final = "decision"
NOTE: Final = "note"
SUMMARY: Final = "summary"
EVIDENCE: Final = "evidence"
NEXT: Final = "next"
REASON: Final = "reason"
OUTPUT: Final = "output."

#: What the ``decision`` field of a post may say: returned, completed with the candidate,
#: completed with the person's own output, failed.
FORM_CHOICES: Final = ("returned", "completed", "own", "failed")

# The fields each choice posts besides the checkpoint, the token and the choice (an output
# field, ``output.<key>``, only with ``own``).
_FIELDS: Final = {
    "returned": (NOTE,),
    "completed": (NOTE,),
    "own": (NOTE, SUMMARY, EVIDENCE, NEXT, REASON),
    "failed": (NOTE,),
}
# A form of the page has a few fields and one per output field; a post of more is not one.
_MAX_FIELDS: Final = 10_000


class FormRefusedError(CheckprofileError, PermissionError):
    """A post refused before it is read: its token is not the host's (a cross-site post), or
    it is for another checkpoint than the one being decided (a stale or another page).
    ``why`` is ``"token"`` or ``"checkpoint"``. Nothing was changed."""

    why: Literal["token", "checkpoint"]

    def __init__(self, why: Literal["token", "checkpoint"], message: str) -> None:
        self.why = why
        super().__init__(message)


def output_field(key: str) -> str:
    """The form field for output field ``key``: ``output.`` and the key as a JSON string in
    ASCII (a key may hold any character; a browser rewrites a line break in a field name)."""
    return OUTPUT + json.dumps(key, ensure_ascii=True)


def _posted(fields: object) -> dict[str, str]:
    """The post's fields as names to values: from a dict (a value a string, or a list of one,
    as ``urllib.parse.parse_qs`` gives) or a list of pairs (``parse_qsl``). A name posted
    twice, or a value that is not text, is refused. Read by the built-in types' own methods:
    a post's own code is never run."""
    kind = type(fields)
    if issubclass(kind, dict):
        pairs: list[Any] = list(
            itertools.islice(dict.items(cast(dict[Any, Any], fields)), _MAX_FIELDS + 1)
        )
    elif issubclass(kind, list):
        pairs = list(itertools.islice(list.__iter__(cast(list[Any], fields)), _MAX_FIELDS + 1))
    elif issubclass(kind, tuple):
        pairs = list(
            itertools.islice(tuple.__iter__(cast(tuple[Any, ...], fields)), _MAX_FIELDS + 1)
        )
    else:
        raise DecisionRequiredError("a form post is a dict or a list of pairs", fields)
    if len(pairs) > _MAX_FIELDS:
        raise DecisionRequiredError(f"a form post has at most {_MAX_FIELDS} fields", fields)
    posted: dict[str, str] = {}
    for pair in pairs:
        if not (type(pair) is list or type(pair) is tuple) or len(pair) != 2:
            raise DecisionRequiredError("a form post is a list of (name, value) pairs", fields)
        name, value = pair
        if type(value) is list:  # parse_qs: every value a list, of more than one when repeated
            if len(value) != 1:
                raise DecisionRequiredError(f"a form post names {show(name, 40)} twice", fields)
            value = value[0]
        if type(name) is not str or type(value) is not str:
            raise DecisionRequiredError("a form post's names and values are text", fields)
        if name in posted:
            raise DecisionRequiredError(f"a form post names {show(name, 40)} twice", fields)
        posted[name] = value
    return posted


def _same(posted: object, expected: str) -> bool:
    # compare_digest takes ASCII text only: bytes compare any text, in constant time.
    if type(posted) is not str:
        return False
    return hmac.compare_digest(
        posted.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


def _lines(text: str) -> str:
    # A browser posts every line break as CRLF; the person typed lines.
    return text.replace("\r\n", "\n")


def _json_field(name: str, text: str, received: object) -> Any:
    """A field that holds JSON text, read strictly: a key twice, NaN, an infinity or an
    integer too long is refused, naming where (never the text)."""
    try:
        return load_json(text)
    except json.JSONDecodeError as error:
        where = f"{error.msg} at line {error.lineno}, column {error.colno}"
    except JsonFaultError as error:
        line, column = line_column(text, [error.fault.index])[error.fault.index]
        what = error.fault.worded(  # what is wrong, never the key's text
            key="a key twice", constant="{}, not a JSON number", integer="too long an integer"
        )
        where = f"{what} at line {line}, column {column}"
    except RecursionError:
        where = "nested too deeply"
    raise DecisionRequiredError(f"the field {show(name, 40)} is not JSON ({where})", received)


def decision_from_form(
    fields: Mapping[str, str | list[str]] | Iterable[tuple[str, str]],
    *,
    by: str,
    at: str | datetime,
    reference: str,
    token: str,
) -> Decision:
    """The decision a person posted from the receipt page's form, decided ``by`` them at
    ``at`` (the host's: who is logged in, and its clock as the post arrived).

    ``fields`` is the post's fields, a map or a list of ``(name, value)`` pairs as
    ``urllib.parse`` reads a form body. ``reference`` is the checkpoint the host is deciding
    (:attr:`~checkprofile.human.Checkpoint.reference`) and ``token`` the host's token against
    cross-site posts, both as given to :func:`~checkprofile.human.receipt_html`.

    Raises :class:`FormRefusedError` when the post's token is not ``token`` or it is for
    another checkpoint, and :class:`DecisionRequiredError` for a post that is not exactly one
    decision of the form (an unknown choice, a field of another choice, a name posted twice,
    a blank note on a return or a failure, an output field that is not JSON), naming the
    post's field names and never what they hold.
    """
    for what, value in (("reference", reference), ("token", token)):
        if type(value) is not str or is_blank(value):
            raise ValueError(f"decision_from_form needs the host's {what}, got {show(value)}")
    posted = _posted(fields)
    if not _same(posted.get(TOKEN), token):
        raise FormRefusedError("token", "the post's token is not this host's: refused")
    if not _same(posted.get(CHECKPOINT), reference):
        raise FormRefusedError("checkpoint", "the post is for another checkpoint: refused")
    received = {name: value for name, value in posted.items() if name not in (TOKEN, CHECKPOINT)}
    choice = received.pop(DECISION, None)
    if choice not in FORM_CHOICES:
        raise DecisionRequiredError(
            f"a form post's {DECISION} is one of {', '.join(FORM_CHOICES)}", posted
        )
    allowed = _FIELDS[choice]
    unknown = [
        name
        for name in received
        if name not in allowed and not (choice == "own" and name.startswith(OUTPUT))
    ]
    if unknown:
        raise DecisionRequiredError(
            f"a form post for {choice} has no field {show(sorted(unknown)[0], 40)}", posted
        )
    note = _lines(received.get(NOTE, ""))
    data: dict[str, Any] = {"kind": "completed" if choice == "own" else choice, "by": by}
    if choice in ("returned", "failed") or not is_blank(note):
        data["note"] = note  # a blank note is refused where one is needed, by the reader
    if choice == "own":
        output: dict[str, Any] = {}
        named: dict[str, str] = {}  # each output key, and the field name that gave it
        for name, text in received.items():
            if name.startswith(OUTPUT):
                key = _json_field(name, name[len(OUTPUT) :], posted)
                if type(key) is not str:
                    raise DecisionRequiredError(
                        f"an output field is named {OUTPUT}<a JSON string>", posted
                    )
                if key in named:  # output."a" and output."\u0061" are one field posted twice
                    raise DecisionRequiredError(
                        f"a form post names the output field {show(named[key], 40)} twice (also"
                        f" as {show(name, 40)})",
                        posted,
                    )
                named[key] = name
                output[key] = _json_field(name, text, posted)
        data["output"] = output
        for name in (SUMMARY, NEXT, REASON):
            text = _lines(received.get(name, ""))
            if not is_blank(text):
                data[name] = text
        evidence = received.get(EVIDENCE, "")
        if not is_blank(evidence):
            data["evidence"] = _json_field(EVIDENCE, evidence, posted)
    try:
        return decision_from_json(data, at=at)
    except DecisionRequiredError as error:
        raise DecisionRequiredError(error.problem, posted) from None


def form_post(
    choice: str,
    *,
    reference: str,
    token: str,
    note: str = "",
    output: Mapping[str, Any] | None = None,
    summary: str = "",
    evidence: Iterable[Mapping[str, Any]] | None = None,
    next: str = "",
    reason: str = "",
) -> list[tuple[str, str]]:
    """The fields the reviewer's page posts for ``choice`` (one of :data:`FORM_CHOICES`), as
    ``(name, value)`` pairs in the page's order: for a host's tests, to post what a person
    would (``urllib.parse.urlencode(form_post(...))`` is the body), and read back with
    :func:`decision_from_form`.

    Every choice posts ``checkpoint`` (``reference``), ``token`` and ``decision``, and
    ``note``. ``own`` also posts each field of ``output`` as ``output."<key>"`` (the key as a
    JSON string in ASCII) holding its value as JSON text, and ``summary``, ``evidence`` (a JSON
    list of ``{"kind", "ref"}``, empty for none), ``next`` and ``reason``. Raises
    :class:`ValueError` for another choice, or fields of ``own`` given with another.
    """
    if type(choice) is not str or choice not in FORM_CHOICES:
        raise ValueError(f"choice must be one of {', '.join(FORM_CHOICES)}, got {show(choice)}")
    own = output is not None or evidence is not None or any((summary, next, reason))
    if own and choice != "own":
        raise ValueError(
            f"output, summary, evidence, next and reason are posted by own, not {choice}"
        )
    fields = [(CHECKPOINT, reference), (TOKEN, token), (DECISION, choice)]
    if choice == "own":
        for key, value in (output or {}).items():
            fields.append((output_field(key), json.dumps(value, ensure_ascii=False)))
        items = list(evidence) if evidence is not None else []
        fields += [
            (SUMMARY, summary),
            (EVIDENCE, json.dumps(items, ensure_ascii=False) if items else ""),
        ]
        fields += [(NEXT, next), (REASON, reason)]
    fields.append((NOTE, note))
    return fields
