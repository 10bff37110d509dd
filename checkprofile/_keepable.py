"""What every store can keep: one check of a record, before any store sees it.

The JSON Lines trail keeps any text (its lines are ASCII JSON, every other character escaped);
PostgreSQL cannot: a ``text`` column refuses U+0000 (NUL), and so does ``jsonb`` (the
documented ``line::jsonb``), as it does a lone surrogate. So a store took or refused a record
by the store's own rules: a NUL in a run id was kept in a file and was a ``StoreError`` in
PostgreSQL. Now :func:`~._recorders.record_line`, which every recorder writes through, refuses
what any store could not keep, with one error naming where, and every store takes or refuses
the same records alike. (A lone surrogate is already refused there: the line would not read
back.)
"""

from __future__ import annotations

import re
from typing import Any, Final

from ._shown import show, shown_pointer
from .errors import pointer_token

__all__ = ["unkeepable"]

#: The characters some store cannot keep in a text, with their names.
NOT_KEPT: Final = {"\x00": "U+0000 (NUL)"}

# In an ASCII JSON line, a NUL of a text is the escape \u0000 after an even run of backslashes
# (an odd one makes it a backslash and the letters "u0000"): a line without one has no NUL.
_ESCAPED_NUL: Final = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def unkeepable(data: Any, line: bytes) -> str | None:
    """Why a record whose JSON is ``data`` and whose audit line is ``line`` cannot be kept by
    every store, naming the first text (a value or a key) that holds what one cannot keep;
    ``None`` when every store can keep it."""
    if not _ESCAPED_NUL.search(line.decode("ascii")):
        return None
    for pointer, text in _texts(data):
        for char, name in NOT_KEPT.items():
            if char in text:
                return (
                    f"the text at {shown_pointer(pointer)} ({show(text)}) holds {name}, which"
                    " PostgreSQL cannot keep"
                )
    return None  # pragma: no cover - the line holds one, so a text does


def _texts(data: Any) -> list[tuple[str, str]]:
    """Every text of ``data`` (keys and values) with its JSON Pointer, in document order."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        pointer, value = stack.pop()
        if isinstance(value, str):
            found.append((pointer, value))
        elif isinstance(value, dict):
            items = []
            for key, item in value.items():
                at = f"{pointer}/{pointer_token(key)}"
                found.append((at, key))
                items.append((at, item))
            stack.extend(reversed(items))
        elif isinstance(value, list):
            stack.extend(reversed([(f"{pointer}/{i}", item) for i, item in enumerate(value)]))
    return found
