"""When two texts are the same text: as a person reads them, not as Python compares them.

Where checkprofile refuses two texts for being the same (two asks of a check, two answer names
of a ``one_of``, two level texts of a rubric, two step ids of a process), it compares them by
one rule, :func:`as_read`: Unicode NFC (``é`` written as one code point or as ``e`` and a
combining accent is one letter), every default-ignorable code point removed (a zero-width space,
a word joiner, a bidi control: :data:`~._convert.IGNORABLE_CLASS`), and every run of whitespace
one space with none at the ends (:func:`~._shown.one_line`). Texts that differ only so would
be shown to a person, and to the model, as one text: a receipt could not say which was meant.

The texts themselves are kept as written; only the comparison reads them so. A problem names
both texts (:func:`both_shown`), each with its hidden characters escaped, and spelled out code
point by code point where they would still look alike.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from ._shown import IGNORABLE, one_line, show

__all__ = ["as_read", "both_shown"]


def as_read(text: str) -> str:
    """``text`` as a person reads it, for comparing: default-ignorable code points removed,
    Unicode NFC, whitespace runs one space and none at the ends. (Removing them first lets a
    combining mark that a hidden character kept apart compose.)"""
    return one_line(unicodedata.normalize("NFC", IGNORABLE.sub("", text)))


# A text spelled out is bounded as :func:`show` bounds it.
_SPELLED: Final = 60


def _spelled(text: str) -> str:
    """``text`` quoted with every character that is not printable ASCII escaped: two texts
    that show alike (``Café`` in NFC and in NFD) are spelled apart."""
    pieces = ['"']
    for char in text[:_SPELLED]:
        code = ord(char)
        if 0x20 <= code < 0x7F:
            pieces.append("\\" + char if char in '\\"' else char)
        elif code < 0x100:
            pieces.append(f"\\x{code:02x}")
        else:
            pieces.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    spelled = "".join(pieces)
    if len(text) > _SPELLED or len(spelled) > _SPELLED:
        return spelled[: _SPELLED - 1] + "…"
    return spelled + '"'


def both_shown(first: str, later: str) -> str:
    """The two texts of a "the same" problem for its message: ``later`` alone when the texts
    are written alike, else ``later`` and the ``first`` it reads as, each shown visibly
    (:func:`~._shown.show`), or spelled code point by code point when they would show alike.
    """
    if later == first:
        return show(later)
    shown_later, shown_first = show(later), show(first)
    if unicodedata.normalize("NFC", shown_later) == unicodedata.normalize("NFC", shown_first):
        shown_later, shown_first = _spelled(later), _spelled(first)
    return f"{shown_later}, which reads as {shown_first}"
