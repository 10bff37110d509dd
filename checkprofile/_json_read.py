"""The one strict reading of JSON text from outside, and finding where a part of it is, in
linear time: everything that reads JSON a person or another program wrote (the CLI's data
files, the decision form's fields, audit lines, calibration's labels, cassettes) reads it here.

``json.loads`` is fast but lenient and says nothing about places: it keeps the last of two
equal keys, reads ``NaN`` and ``Infinity``, and refuses an integer of over 4,300 digits with a
``ValueError`` that names no place. :func:`load_json` refuses each of these (and, when asked,
an integer of more digits than a caller takes) as a :class:`JsonFault` that says what and
where. A text without a fault costs one run of the json module's C scanner with two small
hooks (a fault is then placed by a second, marking, reading). :func:`locate` finds
where the values (or keys) at many paths start, in one pass over the text that descends only
into the parts on the way to them and skips every other value by a regular expression run in
C; a data file of 100 MB costs about one more reading, however many places are looked for.

A caller words a fault as its readers expect (:meth:`JsonFault.worded`) and keeps its own
rules over what is read (the audit trail refuses a lone surrogate); the reading is this one.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator
from json.decoder import scanstring  # type: ignore[attr-defined]  # not in the stubs
from typing import Any, Final, Literal

import attrs

from ._shown import show

__all__ = [
    "FaultKind",
    "JsonFault",
    "JsonFaultError",
    "Place",
    "line_column",
    "load_json",
    "locate",
    "members",
]

Path = tuple[str | int, ...]
#: A path and whether it is the key (``True``) of a map member or its value.
Place = tuple[Path, bool]

_SPACE: Final = re.compile(r"[ \t\n\r]*")
# Everything up to the next bracket, strings (with their escapes) included: one C call skips
# all of a value's text but its brackets.
_CHUNK: Final = re.compile(r'[^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)*')
_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_SCALAR: Final = re.compile(r"[^,\]}\s]*")


#: What a fault is: a key an object holds twice, ``NaN`` or an infinity, an integer of more
#: digits than the reader takes.
FaultKind = Literal["key", "constant", "integer"]


@attrs.frozen
class JsonFault:
    """What is wrong with a JSON text that parses: ``message`` (what), ``index`` (where it
    starts, a character offset), ``kind`` and ``subject`` (the key held twice, the constant's
    name, or the integer's number of digits)."""

    message: str
    index: int
    kind: FaultKind
    subject: str | int

    def worded(self, *, key: str, constant: str, integer: str) -> str:
        """The fault in a caller's own words: the template of its kind, ``{}`` standing for
        the subject (a key shown as :func:`show` shows text)."""
        template = {"key": key, "constant": constant, "integer": integer}[self.kind]
        subject = self.subject
        return template.format(show(subject, 200) if self.kind == "key" else subject)


class JsonFaultError(ValueError):
    """A JSON text that parses but that this library does not take: ``fault`` says what and
    where."""

    def __init__(self, fault: JsonFault) -> None:
        super().__init__(fault.message)
        self.fault = fault


class _Refused(ValueError):
    """Raised by the looking hooks at the first fault: the text is then read again, marking."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        raise _Refused
    return data


def _constant(name: str) -> Any:
    raise _Refused


# Built once: json.loads with hooks builds a decoder (and its scanner) on every call, which
# costs more than reading a short line.
_DECODER: Final = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant)
# Runs of digits longer than each bound asked for (a digit run in a string matches too: the
# marking reading then finds no integer that long, and the text is taken).
_DIGITS: dict[int, re.Pattern[str]] = {}


class _Duplicate:
    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key


class _Constant:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _LongInt:
    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


class _Marking:
    """json.loads' hooks, marking each place a text is refused at (the markers are found by a
    walk afterwards)."""

    def __init__(self, max_digits: int) -> None:
        self.max_digits = max_digits

    def object(self, pairs: list[tuple[str, Any]]) -> Any:
        result = dict(pairs)
        if len(result) == len(pairs):
            return result
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                return _Duplicate(key)
            seen.add(key)
        return result  # pragma: no cover - a shorter dict has a repeated key

    def constant(self, name: str) -> Any:
        return _Constant(name)

    def integer(self, text: str) -> Any:
        digits = len(text) - text.startswith("-")
        if digits > self.max_digits:
            return _LongInt(digits)
        return int(text)


_MARKERS: Final = (_Duplicate, _Constant, _LongInt)


def load_json(text: str, *, max_digits: int | None = None) -> Any:
    """``text`` read as JSON, strictly. Raises :class:`json.JSONDecodeError` for text that is
    not JSON, :class:`RecursionError` for text nested too deeply to read, and
    :class:`JsonFaultError` for a key an object holds twice, ``NaN`` or ``Infinity``, or an
    integer too long to read (of more than ``max_digits`` digits, when given, or than Python
    reads), its ``fault`` saying what and where (the first in the text's order)."""
    if text.startswith("\ufeff"):  # as json.loads says it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    if max_digits is not None and _longer(max_digits).search(text) is not None:
        # Read marking, so that a long run of digits is never made an int (its cost grows
        # with the square of its length where Python does not bound it).
        data, fault = _marked(text, max_digits)
        if fault is not None:
            raise JsonFaultError(fault)
        return data  # the run was in a string, or a fraction's
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # a hook refused, or an integer longer than Python reads
        fault = _marked(text, max_digits)[1]
        if fault is None:  # pragma: no cover - the marking reading finds what the hooks did
            raise
        raise JsonFaultError(fault) from None


def _longer(max_digits: int) -> re.Pattern[str]:
    """A run of more than ``max_digits`` digits."""
    found = _DIGITS.get(max_digits)
    if found is None:
        found = _DIGITS.setdefault(max_digits, re.compile(f"[0-9]{{{max_digits + 1}}}"))
    return found


def _marked(text: str, max_digits: int | None) -> tuple[Any, JsonFault | None]:
    """``text`` (JSON) read with marking hooks, and its first fault (``None``: it has none)."""
    python = getattr(sys, "get_int_max_str_digits", lambda: 0)()  # 0: Python bounds none
    bound = min(b for b in (python, max_digits, sys.maxsize) if b)
    marking = _Marking(bound)
    data = json.loads(
        text,
        object_pairs_hook=marking.object,
        parse_constant=marking.constant,
        parse_int=marking.integer,
    )
    found = _first_marker(data)
    if found is None:
        return data, None
    path, marker = found
    start = locate(text, [(path, False)])[(path, False)]
    if isinstance(marker, _Duplicate):
        places = [index for key, index in members(text, start) if key == marker.key]
        first = line_column(text, [places[0]])[places[0]]
        return data, JsonFault(
            f"duplicate key {show(marker.key, 200)} (first at line {first[0]}, column {first[1]})",
            places[1],
            "key",
            marker.key,
        )
    if isinstance(marker, _Constant):
        return data, JsonFault(
            f"{marker.name} is not a JSON number", start, "constant", marker.name
        )
    assert isinstance(marker, _LongInt)
    return data, JsonFault(
        f"an integer of {marker.digits} digits is too long to read (at most {bound})",
        start,
        "integer",
        marker.digits,
    )


def _first_marker(data: Any) -> tuple[Path, object] | None:
    """The path of the first marker in document order, without recursion (JSON may nest as
    deep as the parser goes)."""
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _MARKERS):
            return path, value
        if type(value) is dict:
            stack.extend((((*path, key), item) for key, item in reversed(value.items())))
        elif type(value) is list:
            stack.extend(((*path, index), item) for index, item in reversed(list(enumerate(value))))
    return None


def members(text: str, start: int) -> Iterator[tuple[str, int]]:
    """Each key of the map whose text starts at ``start``, with where the key starts."""
    index = _SPACE.match(text, start + 1).end()  # type: ignore[union-attr]
    if text[index] == "}":
        return
    while True:
        key, after = scanstring(text, index + 1)
        yield key, index
        index = _SPACE.match(text, after).end()  # type: ignore[union-attr]
        index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]  # past ":"
        index = _SPACE.match(text, _skip(text, index)).end()  # type: ignore[union-attr]
        if text[index] == "}":
            return
        index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]  # past ","


class _Node:
    __slots__ = ("children", "start")

    def __init__(self) -> None:
        self.children: dict[str | int, _Node] = {}
        self.start: dict[bool, int] = {}  # False: where the value starts; True: its key


def locate(text: str, places: Iterable[Place]) -> dict[Place, int]:
    """Where each of ``places`` starts in the JSON ``text`` (valid JSON): a character offset.

    A place that is not in the text (a key that is missing) is where its nearest ancestor's
    value starts. One pass over the text, whatever the number of places.
    """
    wanted = list(places)
    root = _Node()
    for path, _ in wanted:
        node = root
        for token in path:
            node = node.children.setdefault(token, _Node())
    _visit(text, _SPACE.match(text).end(), root)  # type: ignore[union-attr]
    result: dict[Place, int] = {}
    for path, key in wanted:
        node = root
        best = root.start.get(False, 0)
        for depth, token in enumerate(path):
            node = node.children[token]
            last = depth == len(path) - 1
            if last and key and True in node.start:
                best = node.start[True]
            elif False in node.start:
                best = node.start[False]
            else:
                break
        result[(path, key)] = best
    return result


def _visit(text: str, index: int, node: _Node) -> int:
    """Record where the value at ``index`` (and the wanted parts inside it) start; return
    where it ends."""
    node.start[False] = index
    if not node.children:
        return _skip(text, index)
    opening = text[index]
    if opening == "{":
        index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
        if text[index] == "}":
            return index + 1
        while True:
            key, after = scanstring(text, index + 1)
            key_start = index
            index = _SPACE.match(text, after).end()  # type: ignore[union-attr]
            index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
            child = node.children.get(key)
            if child is not None:
                child.start[True] = key_start
                index = _visit(text, index, child)
            else:
                index = _skip(text, index)
            index = _SPACE.match(text, index).end()  # type: ignore[union-attr]
            if text[index] == "}":
                return index + 1
            index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
    if opening == "[":
        index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
        if text[index] == "]":
            return index + 1
        position = 0
        while True:
            child = node.children.get(position)
            index = _visit(text, index, child) if child is not None else _skip(text, index)
            index = _SPACE.match(text, index).end()  # type: ignore[union-attr]
            if text[index] == "]":
                return index + 1
            index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
            position += 1
    return _skip(text, index)


def _skip(text: str, index: int) -> int:
    """Where the value starting at ``index`` ends: brackets are counted, everything between
    them is skipped by one regular expression."""
    opening = text[index]
    if opening == '"':
        return _STRING.match(text, index).end()  # type: ignore[union-attr]
    if opening not in "[{":
        return _SCALAR.match(text, index).end()  # type: ignore[union-attr]
    depth = 0
    while True:
        char = text[index]
        if char in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return index + 1
        index = _CHUNK.match(text, index + 1).end()  # type: ignore[union-attr]


def line_column(text: str, indexes: Iterable[int]) -> dict[int, tuple[int, int]]:
    """The 1-based line and column of each character offset, as ``json`` counts them (lines
    end at LF), in one pass over the text however many offsets there are."""
    wanted = sorted(set(indexes))
    result: dict[int, tuple[int, int]] = {}
    line, line_start, at = 1, 0, 0
    for index in wanted:
        breaks = text.count("\n", at, index)
        if breaks:
            line += breaks
            line_start = text.rindex("\n", at, index) + 1
        at = index
        result[index] = (line, index - line_start + 1)
    return result
