"""The YAML 1.2 reader behind :func:`checkprofile._yaml.load_yaml`: ruamel.yaml's parse events,
each scalar resolved by the core schema, each node placed. Imported by the first read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

from ._shown import one_line, show
from ._yamldoc import MAX_ALIAS_TEXT, MAX_DEPTH, MAX_NODES, Document, Mark, Path, YamlError

# The core schema's resolution of plain scalars (YAML 1.2.2, 10.3.2), in its order.
_NULL: Final = re.compile(r"(?:~|null|Null|NULL|)\Z")
_BOOL: Final = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
}
_INT10: Final = re.compile(r"[-+]?[0-9]+\Z")
_MAX_DIGITS: Final = 4000
_INT8: Final = re.compile(r"0o[0-7]+\Z")
_INT16: Final = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT: Final = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF: Final = re.compile(r"([-+]?)\.(?:inf|Inf|INF)\Z")
_NAN: Final = re.compile(r"\.(?:nan|NaN|NAN)\Z")

_TAG: Final = "tag:yaml.org,2002:"
# Explicit tags the core schema knows; anything else (``!custom``, ``!!timestamp``) is refused
# rather than guessed at.
_SCALAR_TAGS: Final = {f"{_TAG}{name}" for name in ("str", "int", "float", "bool", "null")}
_MAP_TAG: Final = f"{_TAG}map"
_SEQ_TAG: Final = f"{_TAG}seq"

# YAML 1.2 has three line breaks: CR LF, CR and LF (5.4). NEL (U+0085) and the line and
# paragraph separators (U+2028, U+2029) were breaks in YAML 1.1 and are ordinary characters in
# 1.2, but ruamel.yaml's scanner still breaks lines at them (folding them into a space inside
# a quoted scalar). So each is read as a private-use character the text does not contain, and
# the scalars and keys get them back: every value reads as YAML 1.2 says, and every line and
# column is a line and column of the file's own lines.
_OLD_BREAKS: Final = "\x85\u2028\u2029"
_PRIVATE: Final = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd]")


def parse(text: str, *, line_offset: int = 0) -> Document:
    """See :func:`checkprofile._yaml.load_yaml`."""
    builder = _Builder(line_offset)
    text, builder.restore = _yaml12_breaks(text)
    try:
        # Not typ="rt": its scanner marks folds in ">" scalars with BEL characters.
        events = YAML(typ="safe", pure=True).parse(text)
        return builder.document(iter(events))
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = one_line(str(error.problem or error.context or "invalid YAML"))
        raise YamlError(problem, builder.mark(mark) if mark is not None else None) from None
    except YAMLError as error:
        raise YamlError(one_line(str(error))) from None


def _yaml12_breaks(text: str) -> tuple[str, dict[int, str]]:
    """``text`` with each YAML 1.1 line break that YAML 1.2 reads as a character replaced by a
    private-use character it does not contain, and the table that gives them back."""
    present = [char for char in _OLD_BREAKS if char in text]
    if not present:
        return text, {}
    used = set(_PRIVATE.findall(text))
    free = (
        chr(code)
        for code in (*range(0xE000, 0xF900), *range(0xF0000, 0xFFFFE))
        if chr(code) not in used
    )
    stand_ins = dict(zip(present, free, strict=False))
    if len(stand_ins) < len(present):  # pragma: no cover - 71,000 private characters in use
        raise YamlError("the text uses every private-use character; it cannot be read")
    text = text.translate({ord(char): stand_in for char, stand_in in stand_ins.items()})
    return text, {ord(stand_in): char for char, stand_in in stand_ins.items()}


class _Builder:
    def __init__(self, line_offset: int) -> None:
        self.line_offset = line_offset
        self.values: dict[Path, Mark] = {}
        self.keys: dict[Path, Mark] = {}
        self.anchors: dict[str, tuple[Any, int, int]] = {}
        self.nodes = 0
        self.repeated = 0  # characters repeated by aliases
        self.restore: dict[int, str] = {}  # stand-ins of YAML 1.1 line breaks, see load_yaml

    def text(self, value: str) -> str:
        return value.translate(self.restore) if self.restore else value

    def mark(self, mark: Any) -> Mark:
        return Mark(mark.line + 1 + self.line_offset, mark.column + 1)

    def document(self, events: Iterator[Event]) -> Document:
        _expect(next(events), StreamStartEvent)
        first = next(events)
        if isinstance(first, StreamEndEvent):
            return Document(None, {(): Mark(1 + self.line_offset, 1)}, {})
        _expect(first, DocumentStartEvent)
        data, _, _ = self.node(next(events), events, ())
        _expect(next(events), DocumentEndEvent)
        extra = next(events)
        if not isinstance(extra, StreamEndEvent):
            raise YamlError(
                "expected one YAML document, found a second", self.mark(extra.start_mark)
            )
        return Document(data, self.values, self.keys)

    def count(self, nodes: int, event: Event) -> None:
        self.nodes += nodes
        if self.nodes > MAX_NODES:
            raise YamlError(
                f"more than {MAX_NODES:,} values once aliases are expanded",
                self.mark(event.start_mark),
            )

    def node(self, event: Event, events: Iterator[Event], path: Path) -> tuple[Any, int, int]:
        """The value starting at ``event``, how many nodes it holds and how many characters of
        text (keys and string scalars)."""
        self.values[path] = self.mark(event.start_mark)
        if len(path) > MAX_DEPTH:
            raise YamlError(f"nested more than {MAX_DEPTH} levels deep", self.values[path])
        if isinstance(event, AliasEvent):
            if event.anchor not in self.anchors:
                raise YamlError(f'unknown alias "*{event.anchor}"', self.values[path])
            shared, size, chars = self.anchors[event.anchor]
            self.count(size, event)
            self.repeated += chars
            if self.repeated > MAX_ALIAS_TEXT:
                raise YamlError(
                    f"aliases repeat more than {MAX_ALIAS_TEXT:,} characters of text",
                    self.values[path],
                )
            return shared, size, chars
        value: Any
        if isinstance(event, ScalarEvent):
            self.count(1, event)
            value = self.scalar(event)
            size, chars = 1, len(value) if type(value) is str else 0
        elif isinstance(event, SequenceStartEvent):
            self.tag(event, _SEQ_TAG, "a list")
            self.count(1, event)
            value, size, chars = self.sequence(events, path)
        elif isinstance(event, MappingStartEvent):
            self.tag(event, _MAP_TAG, "a map")
            self.count(1, event)
            value, size, chars = self.mapping(events, path)
        else:  # the parser gives nothing else here
            raise YamlError(f"unexpected {type(event).__name__}", self.values[path])
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, size, chars)
        return value, size, chars

    def tag(self, event: Event, allowed: str, what: str) -> None:
        tag: str | None = getattr(event, "tag", None)
        if tag is not None and tag not in ("!", allowed):
            raise YamlError(
                f'the tag "{_short(tag)}" is not allowed on {what}',
                self.mark(event.start_mark),
            )

    def sequence(self, events: Iterator[Event], path: Path) -> tuple[list[Any], int, int]:
        items: list[Any] = []
        size = 1
        chars = 0
        for event in events:
            if isinstance(event, SequenceEndEvent):
                return items, size, chars
            value, count, text = self.node(event, events, (*path, len(items)))
            items.append(value)
            size += count
            chars += text
        raise YamlError("the list never ends")  # pragma: no cover - the parser ends it first

    def mapping(self, events: Iterator[Event], path: Path) -> tuple[dict[str, Any], int, int]:
        members: dict[str, Any] = {}
        size = 1
        chars = 0
        for event in events:
            if isinstance(event, MappingEndEvent):
                return members, size, chars
            key = self.key(event)
            member = (*path, key)
            where = self.mark(event.start_mark)
            if key in members:
                first = self.keys[member]
                raise YamlError(
                    f"duplicate key {show(key, 200)}"
                    f" (first at line {first.line}, column {first.column})",
                    where,
                )
            self.keys[member] = where
            value, count, text = self.node(next(events), events, member)
            members[key] = value
            size += count
            chars += text + len(key)
        raise YamlError("the map never ends")  # pragma: no cover - the parser ends it first

    def key(self, event: Event) -> str:
        # Keys are JSON object keys: always text. `true:` and `1:` are the names "true" and
        # "1", as a process author means them; a key that is a map or a list has no JSON form.
        if isinstance(event, ScalarEvent):
            self.tag(event, f"{_TAG}str", "a key")
            self.count(1, event)
            text = self.text(str(event.value))
            return _join_surrogates(text) if event.style == '"' else text
        if isinstance(event, AliasEvent):
            value, _, _ = self.anchors.get(str(event.anchor), (None, 0, 0))
            if isinstance(value, str):
                return value
        raise YamlError(
            "a key must be plain text, not a map or a list", self.mark(event.start_mark)
        )

    def scalar(self, event: ScalarEvent) -> Any:
        text: str = self.text(event.value)
        tag = event.tag
        if tag is not None and tag != "!" and tag not in _SCALAR_TAGS:
            raise YamlError(
                f'the tag "{_short(tag)}" is not allowed (YAML 1.2 core schema: !!str, !!int, '
                "!!float, !!bool, !!null)",
                self.mark(event.start_mark),
            )
        if event.style == '"':
            text = _join_surrogates(text)
        if tag == "!" or (tag is None and event.style is not None):
            return text  # quoted and block scalars are strings
        if tag is None:
            return _resolve_plain(text)
        value = _resolve_plain(text)
        wanted = tag.removeprefix(_TAG)
        if wanted == "str":
            return text
        if wanted == "float" and type(value) is int:
            return float(value)
        kinds = {"int": int, "float": float, "bool": bool, "null": type(None)}
        if type(value) is not kinds[wanted]:
            raise YamlError(f"{show(text)} is not a valid !!{wanted}", self.mark(event.start_mark))
        return value


def _resolve_plain(text: str) -> Any:
    """A plain scalar's value by the core schema; anything it does not match is a string."""
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT10.match(text):
        # Python refuses to read ints of more than 4,300 digits; no check needs one.
        return int(text) if len(text) <= _MAX_DIGITS else text
    if _INT8.match(text):
        return int(text[2:], 8)
    if _INT16.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    inf = _INF.match(text)
    if inf:
        return float(f"{inf.group(1)}inf")
    if _NAN.match(text):
        return float("nan")
    return text


def _join_surrogates(text: str) -> str:
    """``"\\ud83d\\ude00"`` as JSON means one character; the YAML parser leaves two halves."""
    if not any("\ud800" <= char <= "\udfff" for char in text):
        return text
    try:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        return text  # a lone half stays as written


def _short(tag: str) -> str:
    return f"!!{tag.removeprefix(_TAG)}" if tag.startswith(_TAG) else tag


def _expect(event: Event, kind: type[Event]) -> None:
    if not isinstance(event, kind):  # pragma: no cover - the parser guarantees the order
        raise YamlError(f"expected {kind.__name__}, got {type(event).__name__}")
