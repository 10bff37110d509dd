"""What reading YAML gives: plain data with a place for every node (:class:`Document`), the
error for text that is not YAML this library reads, and the limits on what a file may make.

Shared by :func:`checkprofile._yaml.load_yaml`, which callers import, and the parser behind it
(``_yamlparse``), which it imports on the first read: both import this, neither the other at
import time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from .errors import CheckprofileError

__all__ = ["MAX_ALIAS_TEXT", "MAX_DEPTH", "MAX_NODES", "Document", "Mark", "Path", "YamlError"]

Path = tuple[str | int, ...]

# Nesting deeper than this is refused: no process or answers file needs it, and every stage
# after reading walks the data recursively.
MAX_DEPTH: Final = 100

# Aliases can make a small file stand for an enormous tree ("billion laughs"): the data is
# shared, not copied, but everything downstream walks it. Refuse past this many nodes in all.
MAX_NODES: Final = 1_000_000

# The text aliases repeat, in characters: an alias of a long scalar is one node, but every copy
# of it is written out where the data is shown or checked.
MAX_ALIAS_TEXT: Final = 10_000_000


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
