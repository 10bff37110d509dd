"""The JSON Schemas shipped in the package, for other tools and languages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from checkprofile import check_schema, verdict_schema


@pytest.mark.parametrize("schema", [check_schema, verdict_schema], ids=["check", "verdict"])
def test_each_schema_is_a_draft_2020_12_schema(schema: Callable[[], dict[str, Any]]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("schema", [check_schema, verdict_schema], ids=["check", "verdict"])
def test_each_call_gives_a_fresh_copy(schema: Callable[[], dict[str, Any]]) -> None:
    first = schema()
    original = schema()
    first["$defs"].clear()
    first["type"] = "null"
    assert schema() == original
    assert schema() is not schema()


def test_the_check_schema_takes_the_short_and_the_full_form() -> None:
    validator = jsonschema.Draft202012Validator(check_schema())
    assert validator.is_valid("Is the report attached?")
    assert validator.is_valid([{"ask": "Tone?", "one_of": {"a": "A", "b": "B"}, "pass": ["a"]}])
    assert not validator.is_valid([{"ask": "Tone?", "one_of": {"a": "A"}, "pass": ["a"]}])
    assert not validator.is_valid(7)


def test_the_verdict_schema_refuses_keys_the_record_does_not_have() -> None:
    validator = jsonschema.Draft202012Validator(verdict_schema())
    question: dict[str, Any] = {"ask": "Done?", "kind": "yes_no", "answer": 0.95, "result": "pass"}
    record: dict[str, Any] = {
        "verdict": "pass",
        "advisory": False,
        "model": "m",
        "questions": [question],
        "at": "2026-10-06T09:04:20Z",
    }
    assert validator.is_valid(record)
    assert not validator.is_valid({**record, "reason": "looks fine"})
    assert not validator.is_valid({**record, "truncated": False})  # only ever `true`
    assert not validator.is_valid({**record, "questions": [{**question, "confidence": 0.9}]})
