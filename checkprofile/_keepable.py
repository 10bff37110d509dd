"""What every store can keep: one check of a record, before any store sees it.

The JSON Lines trail keeps any text (its lines are ASCII JSON, every other character escaped);
PostgreSQL cannot: a ``text`` column refuses U+0000 (NUL), and so does ``jsonb`` (the
documented ``line::jsonb``), as it does a lone surrogate. So a store took or refused a record
by the store's own rules: a NUL in a run id was kept in a file and was a ``StoreError`` in
PostgreSQL. Now :func:`~._recorders.record_line`, which every recorder writes through, refuses
what any store could not keep, with one error naming where, and every store takes or refuses
the same records alike. (A lone surrogate is already refused there: the line would not read
back.)

A person's decision is held to the same rule before it is applied
(:func:`recordable_problem`): a decision the trail would refuse was applied, then its record
raised, and the step went on with no record of who decided.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ._shown import show, shown_pointer
from .errors import pointer_token

__all__ = ["KEPT_LINE_BYTES", "recordable_problem", "unkeepable"]

#: The characters some store cannot keep in a text, with their names.
NOT_KEPT: Final = {"\x00": "U+0000 (NUL)"}

#: The longest audit line the reader takes, and so the largest record a store keeps
#: (``checkprofile.human.MAX_LINE_BYTES``).
KEPT_LINE_BYTES: Final = 8 * 1024 * 1024

# What a decision's record holds besides the decision and the run and step ids: its kind, key,
# submission hash, time of escalation and the keys' names (a few hundred bytes), with room.
RECORD_OVERHEAD: Final = 1024

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")

# In an ASCII JSON line, a NUL of a text is the escape \u0000 after an even run of backslashes
# (an odd one makes it a backslash and the letters "u0000"): a line without one has no NUL.
_ESCAPED_NUL: Final = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def unkeepable(data: Any, line: bytes) -> str | None:
    """Why a record whose JSON is ``data`` and whose audit line is ``line`` cannot be kept by
    every store, naming the first text (a value or a key) that holds what one cannot keep;
    ``None`` when every store can keep it."""
    # A plain search first (a line without the six letters holds no NUL, and it is nearly
    # every line); the pattern, which tells an escape from an escaped backslash, only after.
    if b"\\u0000" not in line or not _ESCAPED_NUL.search(line.decode("ascii")):
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


def recordable_problem(data: Any, *, beside: int = 0, sized: bool = True) -> str | None:
    """Why a value (a decision's JSON) could not be kept in an audit record by every store,
    naming where and never what the text holds; ``None`` when it can. ``beside`` is what the
    record holds besides it, in bytes of its line (the run and step ids).

    The rule :func:`~checkprofile.human._audit._recorders.record_line` applies to a whole
    record, applied before a decision changes anything: no U+0000 (PostgreSQL cannot keep it),
    no lone surrogate (no line can carry it, so the reader refuses it), and a line within
    :data:`KEPT_LINE_BYTES` (``sized``: whether to judge the size too).
    """
    for pointer, text in _texts(data):
        for char, name in NOT_KEPT.items():
            if char in text:
                where = shown_pointer(pointer)
                return f"the text at {where} holds {name}, which PostgreSQL cannot keep"
        if _LONE_SURROGATE.search(text):
            return (
                f"the text at {shown_pointer(pointer)} holds a lone surrogate (half of a UTF-16"
                " pair), which no audit line can carry"
            )
    try:
        size = len(json.dumps(data, ensure_ascii=True, separators=(",", ":"))) + beside
    except ValueError:  # an integer past Python's digit limit cannot be written as text
        return "it holds an integer too long to write as text"
    if not sized:
        return None
    if size + RECORD_OVERHEAD >= KEPT_LINE_BYTES:
        return (
            f"its record would be about {size + RECORD_OVERHEAD:,} bytes, over the"
            f" {KEPT_LINE_BYTES:,} an audit line may have"
        )
    return None
