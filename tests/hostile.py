"""Hostile values for the adversarial suite (imported as ``hostile``).

Every kind of value a hostile agent, run data, process file or provider (or a careless host)
can hand the library: integers too long to print, lone surrogates, digits of other scripts,
line breaks YAML 1.1 and 1.2 disagree on, nesting deeper than any reader walks, structures
that share their parts (YAML aliases) or contain themselves, subclasses of str, int and float
whose comparisons, hashes and reprs lie or raise, objects that pretend to be another type
through ``__class__``, maps whose methods raise or never end, NaN and the infinities, texts of
a megabyte, and keys that are not text. Large values are built once and shared by every
example that draws them.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, NoReturn

from hypothesis import strategies as st
from ruamel.yaml.scalarbool import ScalarBoolean
from ruamel.yaml.scalarfloat import ScalarFloat


class Boom(RuntimeError):
    """What a hostile value's own code raises: never a documented error of the library."""


def _boom(*args: object, **kwargs: object) -> NoReturn:
    raise Boom("a hostile value's own code ran")


# --- values that lie ------------------------------------------------------------------------


class LyingFloat(float):
    """A float whose every comparison says yes, whose hash, repr and str raise, and whose
    ``__float__`` claims 0.99: only the value itself is the truth."""

    __eq__ = __ge__ = __le__ = __gt__ = __lt__ = lambda self, other: True  # type: ignore[assignment]
    __ne__ = lambda self, other: False  # noqa: E731
    __hash__ = __repr__ = __str__ = __format__ = __bool__ = _boom

    def __float__(self) -> float:
        return 0.99


class LyingInt(int):
    """An int whose comparisons all say yes and whose hash, repr and str raise."""

    __eq__ = __ge__ = __le__ = __gt__ = __lt__ = lambda self, other: True  # type: ignore[assignment]
    __ne__ = lambda self, other: False  # noqa: E731
    __hash__ = __repr__ = __str__ = __format__ = __index__ = _boom

    def __int__(self) -> int:
        return 2


class LyingStr(str):
    """A str equal to everything, whose hash is every string's and whose methods raise."""

    __eq__ = lambda self, other: True  # noqa: E731
    __ne__ = lambda self, other: False  # noqa: E731
    __repr__ = __str__ = __format__ = strip = split = lower = casefold = _boom
    isprintable = isascii = encode = replace = translate = _boom

    def __hash__(self) -> int:
        return 0


#: Every call of LyingMeta's code, kept: a library that swallows what it raises has still run it.
METACLASS_CALLS: list[str] = []


def _meta_boom(*args: object, **kwargs: object) -> NoReturn:
    METACLASS_CALLS.append("ran")
    raise Boom("a hostile value's metaclass's code ran")


class LyingMeta(type):
    """A metaclass whose classes' ``==``, hash and repr raise: ``type(value) in (str, int)``
    or a set of types runs it, where only ``is`` judges a type without its code."""

    __eq__ = __ne__ = __hash__ = __repr__ = _meta_boom


class OfLyingType(metaclass=LyingMeta):
    """An instance of a class of :class:`LyingMeta`. Not among the values drawn: hypothesis
    itself compares the types of what it draws (test_hostile_api calls it by hand)."""

    __eq__ = __ne__ = __lt__ = __hash__ = __repr__ = __str__ = __format__ = _boom
    __bool__ = __len__ = __iter__ = __float__ = __int__ = __index__ = _boom


class Pretender:
    """Says it is a float through ``__class__``, compares as yes, converts to 0.95."""

    __class__ = property(lambda self: float)
    __eq__ = __ge__ = __le__ = __gt__ = __lt__ = lambda self, other: True
    __hash__ = None  # type: ignore[assignment]

    def __float__(self) -> float:
        return 0.95

    def __repr__(self) -> str:
        return "0.95"


class PretendMap:
    """Says it is a dict through ``__class__``; every method raises."""

    __class__ = property(lambda self: dict)
    keys = items = values = get = __getitem__ = __iter__ = __len__ = __contains__ = _boom
    __repr__ = __str__ = _boom


class RaisingObject:
    """Every dunder a library might call raises."""

    __eq__ = __ne__ = __lt__ = __hash__ = __repr__ = __str__ = __format__ = _boom
    __bool__ = __len__ = __iter__ = __float__ = __int__ = __index__ = _boom

    def __getattr__(self, name: str) -> NoReturn:
        raise Boom(name)


class RaisingMapping(Mapping[str, Any]):
    """A Mapping whose methods raise."""

    __getitem__ = __iter__ = __len__ = __contains__ = _boom


class EndlessMapping(Mapping[str, Any]):
    """A Mapping that never stops listing keys."""

    def __getitem__(self, key: str) -> Any:
        return 1

    def __iter__(self) -> Iterator[str]:
        count = 0
        while True:
            count += 1
            yield f"k{count}"

    def __len__(self) -> int:
        return 2**62


class RaisingDict(dict[Any, Any]):
    """A dict subclass whose own methods raise (its contents are fine)."""

    items = keys = values = get = __getitem__ = __iter__ = __len__ = __contains__ = _boom
    __repr__ = __str__ = __eq__ = _boom


class RaisingList(list[Any]):
    """A list subclass whose own methods raise (its contents are fine)."""

    __iter__ = __len__ = __getitem__ = __contains__ = __repr__ = __eq__ = _boom


def _nested(depth: int, *, maps: bool = False) -> Any:
    root: Any = {} if maps else []
    node = root
    for _ in range(depth):
        child: Any = {} if maps else []
        if maps:
            node["a"] = child
        else:
            node.append(child)
        node = child
    return root


def _bomb(levels: int, width: int) -> list[Any]:
    """A structure of ``width ** levels`` leaves that shares its parts: a few hundred objects
    in memory, the billion laughs when walked (a YAML alias bomb, as a loader that shares
    aliases builds it)."""
    node: list[Any] = ["lol"] * width
    for _ in range(levels):
        node = [node] * width
    return node


def _text_bomb() -> list[Any]:
    long = "x" * 100_000
    return [long] * 100_000  # 10 GB of text when written out


def _cycle() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def _map_cycle() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


MEGABYTE = "x" * 1_000_000
DEEP = _nested(5000)
DEEP_MAPS = _nested(150, maps=True)
BOMB = _bomb(30, 10)
TEXT_BOMB = _text_bomb()
CYCLE = _cycle()
MAP_CYCLE = _map_cycle()


def _pick(values: list[Any]) -> st.SearchStrategy[Any]:
    # By index: hypothesis's own reports repr() what sampled_from holds, and these values'
    # reprs raise or never end.
    return st.integers(0, len(values) - 1).map(lambda index: values[index])


class Hostile:
    """A drawn hostile value, with a repr that is safe to print (hypothesis prints the
    arguments of a failing example; the value's own repr may raise or run away)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Hostile({describe(self.value)})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


def describe(value: Any, depth: int = 0) -> str:
    """A short description of ``value`` that runs none of its own code."""
    kind = type(value)
    name: str = type.__dict__["__name__"].__get__(kind)
    if depth > 3:
        return name
    if kind is int or kind is bool or value is None:
        return (
            str(value)
            if kind is not int or abs(value) < 10**50
            else f"<int of {value.bit_length()} bits>"
        )
    if kind is float:
        return float.__repr__(value)
    if kind is str:
        return ascii(value[:40]) + (f"...<{len(value)} chars>" if len(value) > 40 else "")
    if kind is list:
        items = list.__len__(value)
        head = ", ".join(describe(item, depth + 1) for item in list.__iter__(value) if items < 6)
        return f"[{head}]" if items < 6 else f"<list of {items}>"
    if kind is dict:
        items = dict.__len__(value)
        if items >= 6:
            return f"<dict of {items}>"
        pairs = (
            f"{describe(k, depth + 1)}: {describe(v, depth + 1)}" for k, v in dict.items(value)
        )
        return "{" + ", ".join(pairs) + "}"
    return f"<{name}>"


#: Texts: lone surrogates, other scripts' digits, line breaks of YAML 1.1, invisible and
#: control characters, a final newline, a megabyte.
odd_texts = _pick(
    [
        "\ud800",
        "x\udfffy",
        "١٢٣",
        "２０２６-10-06T09:04:20Z",
        "2026-10-06T09:04:20Z\n",
        "2026-10-06T09:04:20Z\x85",
        "a\x85b",
        "a\u2028b\u2029c",
        "\u202eevil",
        "\x00\x1b[31m",
        "\ufeff",
        " \t\n",
        "\u3000",
        "",
        "yes",
        "NaN",
        "/~0~1",
        "evidence",
        MEGABYTE,
    ]
) | st.text(max_size=20)

#: Numbers: too long to print, not finite, at the edges of a double, subclasses that lie.
odd_numbers = (
    _pick(
        [
            10**5000,
            -(10**4301),
            2**200,
            math.nan,
            math.inf,
            -math.inf,
            -0.0,
            5e-324,
            1e308,
            LyingFloat(0.5),
            LyingFloat(math.nan),
            LyingInt(7),
            ScalarBoolean(True),
            ScalarBoolean(False),
            ScalarFloat(0.95),
            True,
            Decimal("0.95"),
            Fraction(1, 2),
            complex(1, 0),
        ]
    )
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers()
)

#: Objects that are not what they claim, or whose own code raises or never ends.
odd_objects = _pick(
    [
        LyingStr("ask"),
        LyingStr("pass"),
        Pretender(),
        PretendMap(),
        RaisingObject(),
        RaisingMapping(),
        EndlessMapping(),
        RaisingDict(ask="Is it done?"),
        RaisingList([1, 2]),
        dt.datetime(2026, 10, 6, 9, 4, 20),
        dt.datetime(9999, 12, 31, 23, tzinfo=dt.timezone(dt.timedelta(hours=-2))),
        dt.date(2026, 10, 6),
        b"bytes",
        bytearray(b"x"),
        {1, 2},
        frozenset(),
        (1, 2),
        (),
        object(),
        len,
        type,
        Ellipsis,
        NotImplemented,
        iter([1, 2]),
    ]
)

#: Shapes no reader should walk to the end of.
odd_shapes = _pick([DEEP, DEEP_MAPS, BOMB, TEXT_BOMB, CYCLE, MAP_CYCLE])

#: Keys a map may have, hashable ones only (the map must be built).
odd_keys = _pick(
    [1, None, True, 1.5, (1, 2), "", "evidence", "a/b~c", "\ud800", "\n", LyingStr("check")]
) | st.text(max_size=8)

hostile_scalars = odd_texts | odd_numbers | odd_objects | st.none() | st.booleans()

#: Any hostile value: a scalar, a shape, or maps and lists of them (keys odd too).
raw_hostile = st.recursive(
    hostile_scalars | odd_shapes,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(odd_keys, children, max_size=4)
    ),
    max_leaves=12,
)
# Wrapped by a lambda, not by the class: hypothesis prints a value it saw built by a class as
# that call, with the raw value as its argument.
hostile = raw_hostile.map(lambda value: Hostile(value))


def replace_at(data: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """A copy of the plain JSON ``data`` with ``value`` at ``path`` (the copy is shallow
    along the path only)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        copy: Any = dict(data)
    else:
        copy = list(data)
    copy[head] = replace_at(data[head], rest, value)
    return copy


def paths(data: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every path into the plain JSON ``data``, the root included."""
    found = [prefix]
    if isinstance(data, dict):
        for key, item in data.items():
            found.extend(paths(item, (*prefix, key)))
    elif isinstance(data, list):
        for index, item in enumerate(data):
            found.extend(paths(item, (*prefix, index)))
    return found


def with_hostile_part(data: Any, place: int, value: Any) -> Any:
    """``data`` (plain JSON) with one part of it (or the whole: ``place`` picks which, modulo
    the number of parts) replaced by ``value``: valid everywhere but in one place, where a
    reader must notice."""
    where = paths(data)
    return replace_at(data, where[place % len(where)], value)
