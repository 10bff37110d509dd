"""A user's text as checkprofile reads it and shows it back.

What whitespace and invisible characters are (one definition each, named the same in every
language), which text is blank, and how a user's value appears in a message: on one line,
bounded, every character that does not print as itself escaped, so the bad value is named
exactly and a value of any size costs the same to show. Every message and every text shown to
a person goes through these rules.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final, cast

__all__ = [
    "IGNORABLE",
    "IGNORABLE_CLASS",
    "LISTED",
    "MEANT",
    "NON_BLANK_PATTERN",
    "WHITESPACE",
    "WHITESPACE_CLASS",
    "Opaque",
    "bare",
    "error_text",
    "escape_surrogates",
    "escaped_text",
    "is_blank",
    "meant",
    "names_text",
    "one_line",
    "show",
    "shown_pointer",
    "type_name",
]


#: What "whitespace" means everywhere in checkprofile: Unicode's ``White_Space`` property
#: (PropList.txt), 25 code points. It is the one definition every language can name
#: (``\p{White_Space}``; Rust's ``char::is_whitespace``, Go's ``unicode.IsSpace`` and .NET's
#: ``Char.IsWhiteSpace`` are exactly it), where Python's ``str.isspace`` adds U+001C-U+001F and
#: JavaScript's ``\s`` adds U+FEFF and leaves out U+0085. A blank text and the one-space
#: collapsing of issue lines and duplicate asks use it, so they read the same in every language.
WHITESPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
#: The same set as a regular-expression class that reads alike in Python and ECMA-262 (JSON
#: Schema's ``pattern``): the check and verdict schemas say "non-blank" with its complement.
WHITESPACE_CLASS: Final = r"\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: A JSON Schema ``pattern`` for "non-blank": one character that is not whitespace.
NON_BLANK_PATTERN: Final = f"[^{WHITESPACE_CLASS}]"
_RUNS = re.compile(f"[{WHITESPACE_CLASS}]+")

#: What "invisible" means everywhere in checkprofile: Unicode's ``Default_Ignorable_Code_Point``
#: property (DerivedCoreProperties.txt), the code points a renderer shows as nothing (zero-width
#: spaces and joiners, bidi controls, variation selectors, Hangul fillers, tags). A text shown
#: to a person has each of them escaped (:func:`escaped_text`), and two texts that differ only
#: by them read as the same (:mod:`._alike`). Some of them print by ``str.isprintable()``.
IGNORABLE_CLASS: Final = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
IGNORABLE: Final = re.compile(f"[{IGNORABLE_CLASS}]")


def is_blank(text: str) -> bool:
    """Whether ``text`` is empty or made only of whitespace (:data:`WHITESPACE`)."""
    return not text.strip(WHITESPACE)


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (:data:`WHITESPACE`) made one space, and none at
    the ends. Asks, level texts and answer names are compared and printed this way (issue
    lines are one line each)."""
    return _RUNS.sub(" ", text).strip(" ")


# What a message may hold of a user's text before it is cut: a message is one line, so only the
# head of a value is ever looked at (a value of any size costs the same to show).
_SHORT_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


@functools.lru_cache(maxsize=1 << 16)  # a text of megabytes is a few distinct characters
def _escaped(char: str) -> str:
    """One character of a user's text as a message shows it: itself when it prints as itself
    (a letter, a mark, a symbol, the space), else its escape (``\\n``, ``\\x85``, ``\\u2028``,
    ``\\ud800``, ``\\U0001f600`` for an unassigned one), so the bad value is named exactly."""
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    if char.isprintable() and not IGNORABLE.match(char):
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# A UTF-16 surrogate code point: never valid in UTF-8 text on its own (JSON parsers let a lone
# half of a pair through).
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its JSON escape (``\\ud800``, as
    JavaScript's ``JSON.stringify`` writes it): text that UTF-8 can always write."""
    if text.isascii():
        return text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def prints_as_itself(text: str) -> bool:
    """Whether every character of ``text`` prints as itself: printable by Python and not
    invisible (:data:`IGNORABLE_CLASS`). The one rule for what a person is shown raw; anything
    else is escaped (:func:`escaped_text`), or, where an escape would not read back as the same
    text, not shown at all."""
    return text.isprintable() and not IGNORABLE.search(text)


def escaped_text(text: str, *, keep: str = "") -> str:
    """``text`` with every character that does not print as itself escaped (as :func:`show`
    writes it, but not quoted, and of any length): for names and lines that must stay one line.
    Characters in ``keep`` stay as they are."""
    if prints_as_itself(text):
        return text
    return "".join(char if char in keep or char in '\\"' else _escaped(char) for char in text)


def shown_pointer(pointer: str, limit: int = 200) -> str:
    """A JSON Pointer for a message line: ``/`` for the root, characters that do not print as
    themselves escaped (a key may hold a newline), cut to ``limit`` characters (a key may be
    a megabyte long). The exact pointer is the problem's ``pointer``."""
    text = escaped_text(pointer[: limit * 2]) if pointer else "/"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_text(error: BaseException, limit: int = 300, *, named: bool = True) -> str:
    """``error`` for a message or a failure's detail: its type (unless not ``named``) and its
    own text, on one line and at most ``limit`` characters, whatever the exception's
    ``__str__`` does (raise, or return megabytes)."""
    try:
        text = str(error)
        if type(text) is not str:  # pragma: no cover - str() always gives a str
            raise TypeError
    except Exception:
        text = "(its message cannot be read)"
    shown = "".join(map(_escaped_line, text[: limit * 2]))
    name = "".join(map(_escaped, type_name(error)[:80]))
    line = (f"{name}: {shown}" if shown else name) if named else (shown or name)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _escaped_line(char: str) -> str:
    # As _escaped, but quotes and backslashes stay: the text is not quoted.
    return char if char in '\\"' else _escaped(char)


def type_name(value: object) -> str:
    """The name of ``value``'s type, read from the type itself: never the value's own code (a
    ``__class__`` property or a metaclass's ``__name__`` can say anything)."""
    name: str = _TYPE_NAME(type(value))
    return name


_TYPE_NAME: Final = type.__dict__["__name__"].__get__


#: How alike a misspelt key and the key it stands for are, at least (difflib's ratio): "chek",
#: "agnet", "advisry", "input" and "pas" are well above it; "title" and "files", "extra" and
#: "next" are not.
MEANT: Final = 0.75


def meant(text: str, choices: Sequence[str]) -> str | None:
    """The one of ``choices`` (keys, or a closed set of words) that ``text`` most likely
    misspells, if any: the one rule for every "did you mean" about a key or a value of a
    closed set. Case, ``-`` and spaces are forgiven (``Yes-No`` means ``yes_no``)."""
    import difflib

    folded = one_line(text).lower().replace("-", "_").replace(" ", "_")
    if folded in choices:
        return folded
    match = difflib.get_close_matches(folded, choices, n=1, cutoff=MEANT)
    return match[0] if match else None


def show(value: object, limit: int = 60) -> str:
    """A short, readable rendering of a user's value for an error message, on one line.

    Bounded in time and memory whatever ``value`` is: text is quoted with every character that
    does not print as itself escaped (a final newline shows as ``"vendor-check\\n"``), and only
    its head is looked at; numbers are written by their type's own ``repr`` (an integer too long
    for one is described by its size); maps, lists and any other object are named by their
    type, never by their contents or their own ``repr`` (which may raise, lie or never end).
    """
    limit = max(limit, 2)
    kind = type(value)
    if issubclass(kind, str):
        text = cast(str, value)
        return _quoted(str.__getitem__(text, slice(0, limit)), str.__len__(text), limit)
    if value is None:
        text = "null"
    elif kind is bool:
        text = "true" if value else "false"
    elif issubclass(kind, int):
        if int.bit_length(value) > 196:  # type: ignore[arg-type]
            # repr() refuses ints of over 4,300 digits (and long ones help nobody in a message).
            digits = int(int.bit_length(value) * 0.30103) + 1  # type: ignore[arg-type]
            text = f"an integer of about {digits} digits"
        else:
            text = int.__repr__(value)
    elif issubclass(kind, float):
        text = float.__repr__(value)
    elif issubclass(kind, dict):
        text = "a map" if dict.__len__(value) else "an empty map"  # type: ignore[arg-type]
    elif issubclass(kind, list):
        text = "a list" if list.__len__(value) else "an empty list"  # type: ignore[arg-type]
    elif kind is Opaque:
        text = value.kind  # type: ignore[attr-defined]
    else:
        text = f"a {''.join(map(_escaped, type_name(value)[:limit]))}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bare(text: str, limit: int = 40) -> str:
    """``text`` as :func:`show` writes it, without the quotes: for a name in a list of names."""
    shown = show(text, limit)[1:]
    return shown[:-1] if shown.endswith('"') else shown


#: How many names a message lists before it says how many more there are.
LISTED: Final = 10


def names_text(names: Sequence[str]) -> str:
    """``names`` for a message (``states, hedges, unclear``), each shown bounded and escaped,
    at most :data:`LISTED` of them and then how many more: a message stays one short line
    however many names there are."""
    shown = ", ".join(bare(name) for name in names[:LISTED])
    more = len(names) - LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def _quoted(head: str, length: int, limit: int) -> str:
    # `head` is the first `limit` characters of a text of `length`: enough for any cut, since
    # each shows as at least one character.
    pieces = ['"']
    size = 1
    for char in head:
        piece = _escaped(char)
        pieces.append(piece)
        size += len(piece)
        if size > limit:
            break
    else:
        if length <= len(head) and size + 1 <= limit:
            return "".join(pieces) + '"'
    # Cut on a whole character (or escape), leaving room for the ellipsis.
    while size > limit - 1:
        size -= len(pieces.pop())
    return "".join(pieces) + "…"


class Opaque:
    """Stands in for a user's value that cannot be described safely: nested deeper than a check
    key reaches, or not a JSON value at all (its own repr may raise or recurse forever)."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<{self.kind}>"
