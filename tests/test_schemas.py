"""The JSON Schemas shipped in the package, for other tools and languages."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import checkprofile
from checkprofile import check_schema, verdict_schema
from checkprofile._schemas import RENDER_NOTHING, SAFE_KEYWORDS, safe_validator


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


# --- a validator that never renders a value ---------------------------------------------------

SHIPPED = sorted(
    [
        *(Path(checkprofile.__file__).parent / "schemas").glob("*.json"),
        Path(checkprofile.__file__).parent / "conformance" / "case.schema.json",
    ]
)


def _keywords(schema: object, found: set[str]) -> set[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key in ("properties", "$defs", "patternProperties", "dependentSchemas"):
                for member in value.values():
                    _keywords(member, found)
            elif key not in ("enum", "const", "required", "examples", "default"):
                _keywords(value, found)
    elif isinstance(schema, list):
        for item in schema:
            _keywords(item, found)
    return found


@pytest.mark.parametrize("path", SHIPPED, ids=[path.name for path in SHIPPED])
def test_every_keyword_of_the_shipped_schemas_renders_no_value(path: Path) -> None:
    # jsonschema's own keywords repr() the value they reject; each keyword a shipped schema
    # uses is replaced by one that does not, or renders nothing to begin with.
    used = _keywords(json.loads(path.read_text(encoding="utf-8")), set())
    unknown = used - set(SAFE_KEYWORDS) - RENDER_NOTHING
    assert not unknown, f"{path.name} uses keywords that may render a value: {sorted(unknown)}"


def test_a_schema_error_holds_its_keyword_not_the_value() -> None:
    huge = {"ask": "x" * 5_000_000, "deep": [[[["y" * 1_000_000]]]], "n": 10**5000}
    validator = safe_validator(check_schema())
    errors = list(validator.iter_errors(huge))
    assert errors
    for error in errors:
        assert len(error.message) < 100, error.message[:200]
        for context in error.context or ():
            assert len(context.message) < 100


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([1, 1.0], False),
        ([True, 1], True),
        ([{"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}], False),
        ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),
        ([[1, 2], [2, 1]], True),
        (["a", "b", None, False, 0], True),
    ],
)
def test_unique_items_is_json_equality(items: list[Any], unique: bool) -> None:
    validator = safe_validator({"uniqueItems": True})
    assert validator.is_valid(items) is unique


def test_unique_items_of_many_maps_is_not_a_pair_by_pair_comparison() -> None:
    # jsonschema's own compares every pair of items it cannot sort: 20,000 maps, 2 * 10^8 pairs.
    items = [{"n": i} for i in range(20_000)]
    assert safe_validator({"uniqueItems": True}).is_valid(items)
