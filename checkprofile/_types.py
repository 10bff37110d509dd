"""How a value's type is judged: by identity, never by its own code.

``type(value) in (str, int)``, ``==`` on a type and a set of types run the code of the value's
metaclass (``__eq__``, ``__hash__``), and an ABC's ``isinstance`` also reads the value's own
``__class__``: a hostile value's code, which may raise, never end, or say yes. Every judgment
of a host's, an agent's or a provider's value by its type goes through here. (Standard library
only: the schema interpreter uses it too.)
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import is_
from typing import Any, TypeGuard

__all__ = ["all_of_type", "is_mapping", "is_sequence", "of_type"]


def of_type(value: object, *kinds: type) -> bool:
    """Whether ``value``'s type is exactly one of ``kinds``, judged by identity.

    Never ``type(value) in (...)``: ``in`` and ``==`` on a type run its metaclass's ``__eq__``
    (and a set, its ``__hash__``), which is a hostile value's own code, and may say yes.
    """
    kind = type(value)
    for candidate in kinds:  # noqa: SIM110 (a plain loop: it runs on hot paths)
        if kind is candidate:
            return True
    return False


def is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(value, collections.abc.Mapping)``, asked without the value's own code.

    An ABC's check reads ``value.__class__`` (a property of the value's own) and hashes the
    value's type (its metaclass's ``__hash__``). So a dict is judged by type alone, and an ABC
    is asked only about a class whose metaclass is ``type`` or ``ABCMeta``: a class of a
    metaclass of its own is not read as a map.
    """
    return _abc_says(type(value), Mapping, dict)


def is_sequence(value: object) -> TypeGuard[Sequence[Any]]:
    """``isinstance(value, collections.abc.Sequence)``, asked as :func:`is_mapping` asks."""
    return _abc_says(type(value), Sequence, (list, tuple, str))


def _abc_says(kind: type, abc_class: type, plain: type | tuple[type, ...]) -> bool:
    if issubclass(kind, plain):  # plain types: a walk of the class's own bases, no code of it
        return True
    meta = type(kind)
    if meta is not type and meta is not abc.ABCMeta:
        return False
    return issubclass(kind, abc_class)


def all_of_type(kind: type, values: Iterable[object]) -> bool:
    """Whether every value's type is exactly ``kind``, judged by identity (see
    :func:`of_type`), in one C-level pass."""
    return all(map(is_, map(type, values), repeat(kind)))
