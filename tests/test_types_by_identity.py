"""A value's type is judged by identity (checkprofile._types), never by what it says of itself.

A host's value may carry a ``__class__`` property that names another class, or be of a
subclass whose methods run the host's own code: neither makes it the plain type it imitates.
"""

from __future__ import annotations

from typing import Any

import pytest

from checkprofile import Limits, Material, Submission, build_bundle, parse_check
from checkprofile._types import all_of_type, of_type


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
