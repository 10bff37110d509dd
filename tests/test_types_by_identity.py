"""A value's type is judged by identity (checkprofile._types), never by what it says of itself.

A host's value may carry a ``__class__`` property that names another class, or be of a
subclass whose methods run the host's own code: neither makes it the plain type it imitates.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pytest

from checkprofile import Limits, Material, Submission, build_bundle, parse_check
from checkprofile._types import all_of_type, is_mapping, is_sequence, of_type
from support import SaysItIsText


class ClaimsToBeText:
    """Says it is a str through ``__class__``; it is not one."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


class Key(str):
    """A str subclass that runs its own code when compared: sorting it raises."""

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("a host's key ran its own comparison")

    def __gt__(self, other: object) -> bool:
        raise RuntimeError("a host's key ran its own comparison")

    __hash__ = str.__hash__


def test_a_value_claiming_another_class_is_not_of_that_type() -> None:
    fake = ClaimsToBeText()
    assert isinstance(fake, str)  # what __class__ makes isinstance say
    assert not of_type(fake, str)
    assert of_type("plain", int, str)
    assert not of_type(True, int)  # bool is not int, judged by identity


def test_every_value_of_a_sequence_is_judged_by_its_exact_type() -> None:
    assert all_of_type(str, ["a", "b"])
    assert not all_of_type(int, [1, True])  # a bool is an int to isinstance, not here
    assert not all_of_type(str, ["a", Key("b")])
    assert not all_of_type(str, [ClaimsToBeText()])
    assert all_of_type(str, [])


def test_run_data_keys_of_a_str_subclass_are_shown_as_plain_text() -> None:
    # Only keys that are exactly str are taken as they are; a subclass's own comparison never
    # runs while the run data is sorted into the evaluator's view: it is shown as plain text.
    check = parse_check("Is it right?")
    inputs: dict[Any, Any] = {Key("b"): 1, "a": 2}

    def bundle(data: dict[Any, Any]) -> Any:
        material = Material(
            instructions="Check.",
            body="",
            run_data={"inputs": data, "steps": {}},
            submission=Submission({"ok": True}),
        )
        return build_bundle(check, material, state_bytes=Limits().check_state_bytes)

    assert bundle(inputs).run_data_json == bundle({"b": 1, "a": 2}).run_data_json


@pytest.mark.parametrize("kinds", [(), (object,), (type,)])
def test_no_type_is_exactly_one_it_is_not(kinds: tuple[type, ...]) -> None:
    assert not of_type("text", *kinds)


class Liar(metaclass=SaysItIsText):
    pass


class OwnMeta(abc.ABCMeta):
    """A metaclass of its own: its classes are never asked of an ABC."""


class FancyMap(Mapping[str, Any], metaclass=OwnMeta):
    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


class PlainMap(Mapping[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


class Deceiving(type, metaclass=SaysItIsText):
    """A metaclass whose own metaclass says it equals ``type``."""


class Registered(metaclass=Deceiving):
    pass


Mapping.register(Registered)
Sequence.register(Registered)


def test_a_type_whose_metaclass_says_it_equals_every_type_is_still_none_of_them() -> None:
    assert Liar == str  # noqa: E721 (what its own comparison says)
    assert not of_type(Liar(), str, int)
    assert not all_of_type(str, [Liar()])


def test_a_map_of_a_metaclass_of_its_own_is_not_read_as_a_map() -> None:
    assert isinstance(FancyMap(), Mapping)  # what the ABC would say
    assert not is_mapping(FancyMap())
    assert not is_mapping(Registered())
    assert not is_sequence(Registered())


def test_maps_and_sequences_of_the_usual_kinds_are_read_as_such() -> None:
    assert is_mapping({}) and is_mapping(PlainMap()) and is_mapping(MappingProxyType({}))
    assert is_sequence([]) and is_sequence(()) and is_sequence("") and is_sequence(range(2))
    for value in (object(), 3, None, {1}, b"", Liar()):
        assert not is_mapping(value)
    for value in (object(), {}, {1}, PlainMap(), None):
        assert not is_sequence(value)
