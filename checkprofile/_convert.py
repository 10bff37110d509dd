"""The one cattrs converter that turns checkprofile's values into plain JSON and back.

Each module registers the hooks for its own classes here, next to the class definitions, so
the JSON shape of a class is stated once. Nothing else in the package builds JSON by hand.

cattrs itself is imported when a value is first converted, not when a class registers its
hooks: a command that converts nothing (``lint``) starts without it. Registrations made before
are kept, in order, and made on the converter when it is made.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeGuard, TypeVar

import attrs

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "NON_BLANK_PATTERN",
    "WHITESPACE",
    "WHITESPACE_CLASS",
    "Opaque",
    "converter",
    "is_blank",
    "is_finite",
    "is_integral",
    "is_number",
    "is_probability",
    "one_line",
    "override",
    "register_renamed",
    "show",
]


T = TypeVar("T")


class _Converter:
    """The converter, made from cattrs on first use with every hook registered before."""

    def __init__(self) -> None:
        self._made: cattrs.Converter | None = None
        self._hooks: list[tuple[str, Any, Any]] = []
        self._lock = threading.Lock()

    def made(self) -> cattrs.Converter:
        """The cattrs converter itself."""
        if self._made is None:
            with self._lock:
                if self._made is None:
                    import cattrs

                    made = cattrs.Converter()
                    for method, kind, hook in self._hooks:
                        getattr(made, method)(kind, hook)
                    self._made = made
        return self._made

    def _register(self, method: str, kind: Any, hook: Any) -> None:
        with self._lock:
            if self._made is None:
                self._hooks.append((method, kind, hook))
                return
        getattr(self._made, method)(kind, hook)

    def register_unstructure_hook(self, kind: Any, hook: Callable[[Any], Any]) -> None:
        self._register("register_unstructure_hook", kind, hook)

    def register_structure_hook(self, kind: Any, hook: Callable[[Any, Any], Any]) -> None:
        self._register("register_structure_hook", kind, hook)

    def structure(self, data: Any, kind: type[T]) -> T:
        return self.made().structure(data, kind)

    def unstructure(self, value: Any, unstructure_as: Any = None) -> Any:
        return self.made().unstructure(value, unstructure_as=unstructure_as)


converter = _Converter()


class _Override:
    """What :func:`override` says of a field, made into cattrs' own when hooks are made."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.rename: str | None = options.get("rename")


def override(**options: Any) -> Any:
    """:func:`cattrs.gen.override`, without importing cattrs until a hook is made."""
    return _Override(**options)


def _made(overrides: dict[str, Any]) -> dict[str, Any]:
    from cattrs.gen import override as cattrs_override

    return {
        name: cattrs_override(**value.options) if isinstance(value, _Override) else value
        for name, value in overrides.items()
    }


def register_renamed(cls: type, *, omit_if_default: bool = False, **overrides: Any) -> None:
    """Register (un)structure hooks for ``cls`` with per-field ``override``s.

    ``overrides`` maps attribute names to :func:`override` (or :func:`cattrs.gen.override`)
    values (renames, omitted fields, custom hooks). Keys come out in field order, so records
    read as documented.

    The hooks are generated when first used, not here: generating one compiles code, and a
    command that never turns a class into JSON (``lint``) should not pay for it.
    """
    made: dict[str, Callable[..., Any]] = {}
    order = [
        getattr(overrides.get(field.name), "rename", None) or field.name
        for field in attrs.fields(cls)
    ]

    def ordered(value: Any) -> dict[str, Any]:
        if "unstructure" not in made:  # two threads may both make it: the same function
            from cattrs.gen import make_dict_unstructure_fn

            made["unstructure"] = make_dict_unstructure_fn(
                cls,
                converter.made(),
                _cattrs_omit_if_default=omit_if_default,
                **_made(overrides),
            )
        data = made["unstructure"](value)
        return {key: data[key] for key in order if key in data}

    def structure(data: Any, kind: Any) -> Any:
        if "structure" not in made:
            from cattrs.gen import make_dict_structure_fn

            made["structure"] = make_dict_structure_fn(cls, converter.made(), **_made(overrides))
        return made["structure"](data, kind)

    converter.register_unstructure_hook(cls, ordered)
    converter.register_structure_hook(cls, structure)


class Opaque:
    """Stands in for a user's value that cannot be described safely: nested deeper than a check
    key reaches, or not a JSON value at all (its own repr may raise or recurse forever)."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<{self.kind}>"


# Python will not repr() an int of over 4,300 digits (jsonschema does, to render an error).
_HUGE = 10**4000


def bounded(value: object, *, max_depth: int, depth: int = 0) -> object:
    """A copy of ``value`` that validation can describe safely, whatever ``value`` is.

    Maps and lists nested ``max_depth`` deep or deeper, and values that are not JSON, become
    :class:`Opaque`; a schema that reaches no deeper finds them wrong wherever they stand, so
    no problem is gained or lost, but the work to describe them is bounded (a schema error
    renders the value it rejects, and Python cannot render every value).
    """
    if isinstance(value, dict):
        if depth >= max_depth:
            return Opaque("a map")
        return {
            key: bounded(item, max_depth=max_depth, depth=depth + 1) for key, item in value.items()
        }
    if isinstance(value, list):
        if depth >= max_depth:
            return Opaque("a list")
        return [bounded(item, max_depth=max_depth, depth=depth + 1) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _HUGE:
        return Opaque(show(value))  # repr() refuses ints of over 4,300 digits
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return Opaque(f"a {type(value).__name__}")


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


def is_blank(text: str) -> bool:
    """Whether ``text`` is empty or made only of whitespace (:data:`WHITESPACE`)."""
    return not text.strip(WHITESPACE)


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (:data:`WHITESPACE`) made one space, and none at
    the ends. Asks, level texts and answer names are compared and printed this way (issue
    lines are one line each)."""
    return _RUNS.sub(" ", text).strip(" ")


def show(value: object, limit: int = 60) -> str:
    """A short, readable rendering of a user's value for an error message."""
    if isinstance(value, str):
        text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int) and abs(value) >= 10**60:
        # repr() refuses ints of over 4,300 digits (and long ones help nobody in a message).
        text = f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    elif isinstance(value, (int, float)):
        text = repr(value)
    elif isinstance(value, dict):
        text = "a map" if value else "an empty map"
    elif isinstance(value, list):
        text = "a list" if value else "an empty list"
    elif isinstance(value, Opaque):
        text = value.kind
    else:
        text = f"a {type(value).__name__}"
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_number(value: object) -> TypeGuard[int | float]:
    """A JSON number: int or float, not bool (``True`` is not a threshold)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_finite(value: object) -> TypeGuard[int | float]:
    """A finite JSON number. Any int is finite: ``math.isfinite(10**400)`` would raise, and
    ``json.loads`` gives such ints."""
    return is_number(value) and (isinstance(value, int) or math.isfinite(value))


def is_integral(value: object) -> TypeGuard[int | float]:
    """A JSON number with no fractional part (``2`` or ``2.0``), bools excluded."""
    return is_finite(value) and (isinstance(value, int) or float(value).is_integer())


def is_probability(value: object) -> TypeGuard[int | float]:
    """A finite number in [0, 1]."""
    return is_finite(value) and 0 <= value <= 1
