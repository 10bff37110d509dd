"""YAML 1.2, core schema only, into plain JSON-like data with a line and column for every node.

ruamel.yaml's own loaders go beyond the core schema (``2026-10-06`` becomes a date, ``1_000`` an
int, an anchored ``true`` an int subclass) and keep positions only on their own container types.
So this module reads ruamel.yaml's parse *events* and resolves every scalar itself, by the core
schema's table (YAML 1.2.2, section 10.3.2): ``yes``/``no``/``on``/``off`` stay strings, keys are
always strings, duplicate keys are refused, and each value and each key keeps where it starts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

from .errors import CheckprofileError

__all__ = ["MAX_ALIAS_TEXT", "MAX_DEPTH", "MAX_NODES", "Document", "Mark", "YamlError", "load_yaml"]

Path = tuple[str | int, ...]

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

# Nesting deeper than this is refused: no process or answers file needs it, and every stage
# after reading walks the data recursively.
MAX_DEPTH: Final = 100

# Aliases can make a small file stand for an enormous tree ("billion laughs"): the data is
# shared, not copied, but everything downstream walks it. Refuse past this many nodes in all.
MAX_NODES: Final = 1_000_000

# The text aliases repeat, in characters: an alias of a long scalar is one node, but every copy
# of it is written out where the data is shown or checked.
MAX_ALIAS_TEXT: Final = 10_000_000

# YAML 1.2 has three line breaks: CR LF, CR and LF (5.4). NEL (U+0085) and the line and
# paragraph separators (U+2028, U+2029) were breaks in YAML 1.1 and are ordinary characters in
# 1.2, but ruamel.yaml's scanner still breaks lines at them (folding them into a space inside
# a quoted scalar). So each is read as a private-use character the text does not contain, and
# the scalars and keys get them back: every value reads as YAML 1.2 says, and every line and
# column is a line and column of the file's own lines.
_OLD_BREAKS: Final = "\x85\u2028\u2029"
_PRIVATE: Final = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd]")


@attrs.frozen(order=True)
class Mark:
    """Where a node starts in the file: 1-based line and column (the file's own lines)."""

    line: int
    column: int


class YamlError(CheckprofileError, ValueError):
    """Text that is not YAML 1.2 this library reads: ``mark`` says where, when known."""

    def __init__(self, message: str, mark: Mark | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark


@attrs.frozen
class Document:
    """Plain data (dicts, lists, str, int, float, bool, None) and where each part of it is.

    ``values`` maps a path (keys and indices from the root) to where its value starts;
    ``keys`` maps the path of a mapping member to where its key starts.
    """

    data: Any
    values: Mapping[Path, Mark] = attrs.field(repr=False)
    keys: Mapping[Path, Mark] = attrs.field(repr=False)

    @classmethod
    def unplaced(cls, data: Any) -> Document:
        """``data`` that was not read from a file: every part of it is at line 1, column 1."""
        return cls(data, {(): Mark(1, 1)}, {})

    @property
    def placed(self) -> bool:
        """Whether the parts of the data have places of their own (it was read from a file)."""
        return len(self.values) > 1 or bool(self.keys)

    def locate(self, path: Path, *, key: bool = False) -> Mark:
        """Where ``path`` is: its key (with ``key``, for a mapping member) or its value. A path
        that is not in the document (a missing key) gives its nearest ancestor."""
        path = tuple(path)
        if key and path in self.keys:
            return self.keys[path]
        while path not in self.values:
            path = path[:-1]
        return self.values[path]


def load_yaml(text: str, *, line_offset: int = 0) -> Document:
    """Parse one YAML 1.2 document (core schema) into a :class:`Document`.

    ``line_offset`` lines come before ``text`` in its file, so every :class:`Mark` is a line of
    that file. Raises :class:`YamlError` for text that is not such a document: bad syntax, two
    documents, a duplicate key, a key that is a map or a list, an unknown tag.
    """
    # The parser (ruamel.yaml) is imported by the first file read, not by importing this module:
    # a host that only locates problems, or reads JSON, never pays for it.
    from ._yamlparse import parse

    return parse(text, line_offset=line_offset)
