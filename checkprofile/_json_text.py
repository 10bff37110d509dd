"""The one JSON text form the evaluator is shown: compact, keys sorted, UTF-8.

:func:`canonical_json` writes any JSON data so (the submission, a receipt's bundle); the run
data cut writes its pieces with :func:`canonical_plain`, for data already plain, and measures
them with :func:`utf8_size` (the budget is counted in UTF-8 bytes, design decision 13).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ._convert import NotJson, plain_floats
from ._shown import escape_surrogates

__all__ = ["canonical_json", "canonical_plain", "json_problem", "same_json", "utf8_size"]


def _encoder(ensure_ascii: bool) -> Callable[[Any], str]:
    """The canonical writer, ASCII-escaped or not, for plain data (which holds no cycle: it
    is written without the cycle check's bookkeeping, a tenth of the cost of a text of long
    strings). A cycle that slipped through would be a RecursionError, as deep nesting is."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        encode = json.JSONEncoder(
            ensure_ascii=ensure_ascii, sort_keys=True, separators=(",", ":"), allow_nan=False
        ).encode
        return encode
    strings = (
        json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    )

    def refuse(value: object) -> Any:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    write = make(None, refuse, strings, None, ":", ",", True, False, False)
    join = "".join
    return lambda value: join(write(value, 0))


_ascii_encode = _encoder(ensure_ascii=True)
_utf8_encode = _encoder(ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """The one JSON text form the evaluator is shown: compact, keys sorted, not ASCII-escaped.

    Equal to ``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))``,
    except that a lone surrogate (half of a UTF-16 pair, which JSON parsers let through) stays
    escaped as ``\\udXXX``, as JavaScript's ``JSON.stringify`` writes it: the text is always
    valid UTF-8. Raises :class:`ValueError` for a value that is not JSON data (see
    :func:`~checkprofile._convert.plain`; NaN and the infinities included).
    """
    try:
        value, floats = plain_floats(value, finite=False)
    except NotJson as error:
        raise ValueError(f"not JSON data: {error}") from None
    return canonical_plain(value, floats=floats)


# orjson's dumps when the `fast` extra is installed, else None; looked up at first use (a heavy
# import only where it is needed). Tests set it to None to check the pure path's bytes.
_UNSET: Any = object()
_fast_dumps: Any = _UNSET


def _fast() -> Any:
    global _fast_dumps
    if _fast_dumps is _UNSET:
        try:
            import orjson
        except ImportError:
            _fast_dumps = None
        else:
            option = orjson.OPT_SORT_KEYS
            _fast_dumps = lambda value: orjson.dumps(value, option=option)  # noqa: E731
    return _fast_dumps


def canonical_plain(value: Any, *, floats: bool = True) -> str:
    """:func:`canonical_json` of a value already plain (the bundle's pieces are). ``floats``
    says whether it may hold a float (see :func:`~checkprofile._convert.plain_floats`)."""
    # The `fast` extra (orjson) writes exactly these bytes for plain data without floats (it
    # formats them its own way, and writes NaN as null): keys sorted by code point (UTF-8 byte
    # order is code point order), the same escapes, text not ASCII-escaped. What it cannot
    # write as Python does it refuses (an integer beyond 64 bits, a lone surrogate, a value
    # nested too deeply), and the pure path below writes it.
    if not floats:
        dumps = _fast_dumps if _fast_dumps is not _UNSET else _fast()
        if dumps is not None:
            try:
                return dumps(value).decode()  # type: ignore[no-any-return]
            except TypeError:  # orjson.JSONEncodeError is a TypeError
                pass
    # The ASCII encoder is the C fast path (ensure_ascii=False costs about 1.6 times as much).
    # Its output differs from the UTF-8 form only where it wrote a \u escape, so only then is
    # the value encoded again. (A one-character search is a memchr; most text has no "\\".)
    ascii_text = _ascii_encode(value)
    if "\\" not in ascii_text or "\\u" not in ascii_text:
        return ascii_text
    text = _utf8_encode(value)
    # Only a \ud8xx-\udfxx escape (a pair for a character beyond U+FFFF, or a lone half) can
    # have left a surrogate in the UTF-8 form; pairs came through as one character.
    return escape_surrogates(text) if "\\ud" in ascii_text else text


def json_problem(error: Exception) -> str:
    """Why a value could not be written as JSON, in the same words on every Python."""
    if isinstance(error, RecursionError):
        return "it is nested too deeply"
    if isinstance(error, ValueError) and str(error).startswith("Out of range float"):
        return "it holds NaN or an infinity, which JSON cannot write"
    if isinstance(error, TypeError):
        return f"it holds a value that is not JSON data ({error})"
    return str(error)


def utf8_size(text: str) -> int:
    # UTF-8 byte length; most run data is ASCII, where the length is the byte count.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def same_json(one: Any, other: Any) -> bool:
    """Whether two JSON values are the same JSON, by type: ``true`` is not ``1``, ``100`` is
    not ``100.0`` (a page shows each as it is written), a map's order does not count. The one
    comparison wherever what a person saw is compared with what is applied: Python's ``==``
    says ``True == 1 == 1.0``. A value that cannot be written as JSON is the same as nothing."""
    try:
        return canonical_json(one) == canonical_json(other)
    except (ValueError, RecursionError):
        return False
