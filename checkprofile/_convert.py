"""The one cattrs converter that turns checkprofile's values into plain JSON and back.

Each module registers the hooks for its own classes here, next to the class definitions, so
the JSON shape of a class is stated once. Nothing else in the package builds JSON by hand.

cattrs itself is imported when a value is first converted, not when a class registers its
hooks: a command that converts nothing (``lint``) starts without it. Registrations made before
are kept, in order, and made on the converter when it is made.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final, TypeGuard, TypeVar

import attrs

from ._shown import Opaque, show

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "converter",
    "is_finite",
    "is_integral",
    "is_number",
    "is_probability",
    "override",
    "register_renamed",
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


def is_number(value: object) -> TypeGuard[int | float]:
    """A JSON number: an int or a float, not a bool (``True`` is not a threshold).

    The exact types only: a subclass's comparisons are its own code, which may say anything
    (values crossing the API are made plain first: :func:`plain`, :func:`plain_scalar`)."""
    kind = type(value)
    return kind is int or kind is float


def is_finite(value: object) -> TypeGuard[int | float]:
    """A finite JSON number. Any int is finite: ``math.isfinite(10**400)`` would raise, and
    ``json.loads`` gives such ints."""
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))  # type: ignore[arg-type]


def is_integral(value: object) -> TypeGuard[int | float]:
    """A JSON number with no fractional part (``2`` or ``2.0``), bools excluded."""
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value) and value.is_integer())  # type: ignore[arg-type, attr-defined]


def is_probability(value: object) -> TypeGuard[int | float]:
    """A finite number in [0, 1]."""
    return is_finite(value) and 0 <= value <= 1


# --- plain values at the boundary ------------------------------------------------------------

#: How deep a value crossing the API may nest (the YAML reader's limit too): no check key,
#: record or run data needs more, and every stage after it walks values recursively.
MAX_DEPTH: Final = 100

#: How much a value that shares parts (the same map or list, or a long text, in several places:
#: YAML aliases, or a host's own objects) may grow when each place is counted: what is shown,
#: validated or written walks every place. Counted in values and characters.
MAX_EXPANSION: Final = 10_000_000

# A text at least this long counts as a shared part when it is met again.
_LONG_TEXT = 1024


class NotJson(Exception):
    """A value that is not plain JSON data: ``reason`` (never the value itself) and ``path``
    (map keys and list indexes from the root of what was given). Each boundary turns it into
    its own documented error."""

    def __init__(self, reason: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path

    @property
    def pointer(self) -> str:
        """``path`` as an RFC 6901 JSON Pointer (``/`` for the root), cut to 80 characters (a
        value nested 100 deep has a long way to it)."""
        pointer = "".join("/" + _token(part) for part in self.path) or "/"
        return pointer if len(pointer) <= 80 else pointer[:79] + "…"

    def __str__(self) -> str:
        return f"at {self.pointer}: {self.reason}" if self.path else self.reason


def _token(part: str | int) -> str:
    return (part if type(part) is str else str(part)).replace("~", "~0").replace("/", "~1")


def plain(value: object, *, finite: bool = True) -> Any:
    """``value`` as plain JSON data: ``dict`` (keys ``str``), ``list``, ``str``, ``int``,
    ``float``, ``bool`` and ``None``, of exactly these types. Raises :class:`NotJson`, naming
    where, for anything else.

    What every value crossing the public API goes through, so that nothing after it runs a
    user's code or meets a value that is not what it claims:

    * a subclass of ``str``, ``int``, ``float``, ``dict`` or ``list`` becomes its plain value,
      read by the base type (its own ``__eq__``, ``__hash__``, ``__repr__`` or ``__float__``
      are never called); ruamel.yaml's
      ``ScalarBoolean`` (an int subclass standing for ``true``/``false``) is a bool;
    * any other type is refused (a ``tuple``, a ``Decimal``, a set, a ``datetime``, a
      ``Mapping`` that is not a dict), and so is a map key that is not text, two keys that
      are the same text, a value nested more than :data:`MAX_DEPTH` deep, a value that
      contains itself, and shared parts repeated to more than :data:`MAX_EXPANSION` values
      and characters in all;
    * with ``finite`` (the default), NaN and the infinities, which JSON cannot hold.

    Plain data comes back as the same object (nothing is copied unless something changed), so
    the cost is one walk over the value, and a shared part is walked once.
    """
    if _as_is(value, finite) >= 0:
        return value
    try:
        return _Plain(finite).walk(value, 0)
    except RecursionError:  # a host calling from deep in its own stack
        raise NotJson("nested too deeply") from None


def plain_floats(value: object, *, finite: bool = True) -> tuple[Any, bool]:
    """:func:`plain`, and whether the value holds a float anywhere (NaN and the infinities
    included). A JSON writer that formats numbers its own way (the ``fast`` extra's) may write
    a value only when it holds none: floats are written as Python writes them, by Python."""
    seen = _as_is(value, finite)
    if seen >= 0:
        return value, bool(seen)
    walker = _Plain(finite)
    try:
        return walker.walk(value, 0), walker.floats
    except RecursionError:  # a host calling from deep in its own stack
        raise NotJson("nested too deeply") from None


def plain_scalar(value: object) -> object:
    """A subclass of ``str``, ``int`` or ``float`` as its plain value (ruamel.yaml's
    ``ScalarBoolean`` as a bool); anything else as it is. For fields a later check judges (an
    answer's ``p``): the check then sees the value, never a subclass's own comparisons."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    try:
        return _Plain(False).scalar(value, kind)
    except NotJson:
        return value


def plain_text(value: object) -> object:
    """A subclass of ``str`` as a plain ``str``; anything else as it is."""
    kind = type(value)
    if kind is not str and issubclass(kind, str):
        return str.__str__(value)
    return value


def _scalar_boolean(kind: type) -> bool:
    # ruamel.yaml's round-trip loader gives an anchored `true` as ScalarBoolean, an int
    # subclass: it stands for a bool, never for the number 1.
    return kind.__name__ == "ScalarBoolean" and kind.__module__.startswith("ruamel.")


# How much the quick look at a value (see look) walks, in values and characters, before it
# leaves the value to the full walk: a bound on what a hostile value can cost it.
_AS_IS_LIMIT = 1_000_000


def _as_is(value: object, finite: bool) -> int:
    """Whether :func:`plain` would give ``value`` back as it is, by a quick look: ``-1`` when it
    cannot tell (the full walk then judges), else ``1`` if it holds a float, ``0`` if not.

    Run data is nearly always plain already, and the full walk (which reads subclasses, names
    where a value is not JSON, and walks a shared part once) costs several times the encoding
    of it. This look (:func:`look`) only says yes for exact types.
    """
    seen = look(value, finite=finite)
    return -1 if seen is None else seen[0]


def look(
    value: object, *, finite: bool = True, limit: int = _AS_IS_LIMIT, counting: str = ""
) -> tuple[int, int, int] | None:
    """A quick look at a map or list: ``(floats, maps, weight)`` when it is plain JSON data
    made of exact types only (maps of text keys, lists, text, integers, booleans, null, and
    floats, finite ones with ``finite``) at most ``MAX_DEPTH - 1`` deep, else ``None``.
    ``floats`` is 1 if it holds a float, else 0; ``maps`` is how many of its maps hold the
    key ``counting``; ``weight`` is how many values and characters were walked.

    It walks at most ``limit`` values and characters (never more than ``_AS_IS_LIMIT``),
    every shared part counted each time it is met, so a value made of parts shared over and
    over is given up on, never expanded; a cycle is too deep. No value's own code is run.
    Depth first, on a stack of iterators rather than a call per container: it runs on every
    bundle and every boundary, and gives up on a big value soon after it starts.
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        return None
    limit = min(limit, _AS_IS_LIMIT)
    left = limit - 1 - len(value)  # type: ignore[arg-type]
    if left < 0:
        return None
    floats = maps = 0
    if kind is dict:
        for key in value:  # type: ignore[attr-defined]
            if type(key) is not str:
                return None
        maps = 1 if counting in value else 0  # type: ignore[operator]
        stack: list[Iterator[Any]] = [iter(value.values())]  # type: ignore[attr-defined]
    else:
        stack = [iter(value)]  # type: ignore[call-overload]
    push = stack.append
    isfinite = math.isfinite
    deepest = MAX_DEPTH - 1
    while stack:
        # Each pass resumes the innermost container's iterator where it left off, and leaves
        # it for a container found inside (which is walked first).
        for item in stack[-1]:
            kind = type(item)
            if kind is str:
                left -= len(item)
            elif kind is dict:
                left -= 1 + len(item)
                if left < 0 or len(stack) >= deepest:
                    return None
                for key in item:
                    if type(key) is not str:
                        return None
                if counting in item:
                    maps += 1
                push(iter(item.values()))
                break
            elif kind is list:
                left -= 1 + len(item)
                if left < 0 or len(stack) >= deepest:
                    return None
                push(iter(item))
                break
            elif kind is int or kind is bool or item is None:
                pass
            elif kind is float:
                floats = 1
                if finite and not isfinite(item):
                    return None
            else:
                return None
        else:
            stack.pop()
    return (floats, maps, limit - left) if left >= 0 else None


# Marks a container whose walk has begun and not ended: met again, it contains itself.
_WALKING: Final = object()


class _Plain:
    __slots__ = ("big", "finite", "floats", "seen", "shared", "weight")

    def __init__(self, finite: bool) -> None:
        self.finite = finite
        self.floats = False  # whether a float was met (see plain_floats)
        self.weight = 0  # values and characters walked, each shared part counted every time
        self.shared = 0  # the part of it that is shared parts met again
        # id of a container -> (plain, weight), or _WALKING while it is walked (a cycle)
        self.seen: dict[int, Any] = {}
        self.big: set[int] = set()  # ids of the long texts met

    def walk(self, value: object, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            self.weight += 1 + len(value)  # type: ignore[arg-type]
            if len(value) >= _LONG_TEXT:  # type: ignore[arg-type]
                self.repeat_text(value)  # type: ignore[arg-type]
            return value
        if kind is dict or kind is list:
            return self.container(value, kind, depth)
        if kind is int or kind is bool or value is None:
            self.weight += 1
            return value
        if kind is float:
            self.weight += 1
            self.floats = True
            if self.finite and not math.isfinite(value):  # type: ignore[arg-type]
                raise NotJson(f"{float.__repr__(value)} is not a JSON number")
            return value
        if issubclass(kind, (dict, list)):
            return self.container(value, kind, depth)
        self.weight += 1
        return self.scalar(value, kind)

    def scalar(self, value: object, kind: type) -> Any:
        if issubclass(kind, str):
            return str.__str__(value)
        if issubclass(kind, bool):  # pragma: no cover - bool cannot be subclassed
            return bool(value)
        if issubclass(kind, int):
            number = int.__int__(value)  # type: ignore[arg-type]
            return bool(number) if _scalar_boolean(kind) else number
        if issubclass(kind, float):
            self.floats = True
            result = float.__float__(value)  # type: ignore[arg-type]
            if self.finite and not math.isfinite(result):
                raise NotJson(f"{float.__repr__(result)} is not a JSON number")
            return result
        raise NotJson(
            f"{show(value)} is not JSON data (text, a number, true, false, null, a list or a map)"
        )

    def repeat_text(self, text: str) -> None:
        key = id(text)
        if key in self.big:
            self.grow(len(text))
        else:
            self.big.add(key)

    def grow(self, weight: int) -> None:
        self.shared += weight
        if self.shared > MAX_EXPANSION:
            raise NotJson(
                f"its shared parts (aliases) repeat it to more than {MAX_EXPANSION:,} values"
                " and characters"
            )

    def container(self, value: Any, kind: type, depth: int) -> Any:
        key = id(value)
        seen = self.seen
        known = seen.get(key)
        if known is not None:
            if known is _WALKING:
                raise NotJson("it contains itself")
            result, weight = known
            self.weight += weight
            self.grow(weight)
            return result
        if depth > MAX_DEPTH:
            raise NotJson(f"nested more than {MAX_DEPTH} levels deep")
        seen[key] = _WALKING
        start = self.weight
        if issubclass(kind, dict):
            result = self.mapping(value, kind is dict, depth)
        else:
            result = self.sequence(value, kind is list, depth)
        self.weight += 1
        seen[key] = (result, self.weight - start)
        return result

    def member(self, item: Any, depth: int) -> Any:
        """One member of a map or a list: the usual plain scalars are judged here, without a
        call (this is the hot loop over run data); anything else is walked."""
        kind = type(item)
        if kind is str:
            size = len(item)
            self.weight += 1 + size
            if size >= _LONG_TEXT:
                self.repeat_text(item)
            return item
        if kind is int or kind is bool or item is None:
            self.weight += 1
            return item
        if kind is dict or kind is list:
            return self.container(item, kind, depth)
        if kind is float:
            self.weight += 1
            self.floats = True
            if self.finite and not math.isfinite(item):
                raise NotJson(f"{float.__repr__(item)} is not a JSON number")
            return item
        return self.walk(item, depth)

    def mapping(self, value: dict[Any, Any], exact: bool, depth: int) -> dict[str, Any]:
        copy: dict[str, Any] | None = None if exact else {}
        member = self.member
        depth += 1
        for index, (key, item) in enumerate(dict.items(value)):
            name = key if type(key) is str else self.key(key)
            try:
                new = member(item, depth)
            except NotJson as error:
                error.path = (name, *error.path)
                raise
            if copy is None:
                if new is item and name is key:
                    continue
                # The members before this one are plain as they are.
                copy = dict(itertools.islice(dict.items(value), index))
            if name in copy:
                raise NotJson(f"the key {show(name)} appears twice", (name,))
            copy[name] = new
        return value if copy is None else copy

    def key(self, key: object) -> str:
        if issubclass(type(key), str):
            return str.__str__(key)
        raise NotJson(f"the key {show(key)} is not text (JSON keys are strings)", (show(key),))

    def sequence(self, value: Any, exact: bool, depth: int) -> list[Any]:
        items = list.__iter__(value)
        copy: list[Any] | None = None if exact else []
        member = self.member
        depth += 1
        for index, item in enumerate(items):
            try:
                new = member(item, depth)
            except NotJson as error:
                error.path = (index, *error.path)
                raise
            if copy is None:
                if new is item:
                    continue
                copy = list(itertools.islice(list.__iter__(value), index))
            copy.append(new)
        return value if copy is None else copy
