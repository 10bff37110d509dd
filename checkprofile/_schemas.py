"""The JSON Schemas shipped with the package: the check key, the verdict record, the frontmatter
of a PROCESS.md file, and core-2's shapes where a host meets checkprofile (run data, the
submission, the records of a check)."""

from __future__ import annotations

import copy
import json
import pkgutil
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from ._shown import show
from ._types import is_mapping

if TYPE_CHECKING:
    from referencing import Registry

__all__ = [
    "RENDER_NOTHING",
    "SAFE_KEYWORDS",
    "CoreShape",
    "check_schema",
    "core_schema",
    "json_key",
    "process_schema",
    "registry_of",
    "safe_validator",
    "schema_file",
    "schema_message",
    "schema_registry",
    "verdict_schema",
]

#: core-2's shapes, each a schema of its own (``schemas/<name>.schema.json``).
CoreShape = Literal["run-data", "step-record", "submission", "candidate", "handoff", "escalation"]

SchemaName = Literal["check", "process", "verdict", CoreShape]


@cache
def schema_file(name: SchemaName) -> dict[str, Any]:
    """The schema as read from the package, once. Shared: never hand it to users."""
    # Read through the package's own loader, relative to this package (so a vendored copy
    # reads its own, from a folder or a zip), as importlib.resources.files(__package__) does;
    # pkgutil costs lint a fifteenth of what importing importlib.resources does.
    data = pkgutil.get_data(__package__, f"schemas/{name}.schema.json")
    if data is None:  # a loader that cannot read data: none that imports this package
        raise FileNotFoundError(f"schemas/{name}.schema.json is not in {__package__}")
    schema: dict[str, Any] = json.loads(data.decode("utf-8"))
    return schema


def check_schema() -> dict[str, Any]:
    """The JSON Schema of the check key (the structural pass), as a fresh dict."""
    return copy.deepcopy(schema_file("check"))


def verdict_schema() -> dict[str, Any]:
    """The JSON Schema of a check verdict record, as a fresh dict."""
    return copy.deepcopy(schema_file("verdict"))


def core_schema(name: CoreShape) -> dict[str, Any]:
    """The JSON Schema of one of core-2's shapes, as a fresh dict: ``"run-data"``,
    ``"step-record"``, ``"submission"``, ``"candidate"``, ``"handoff"`` or ``"escalation"``.

    Each refers to the others (and to the verdict's) by ``$ref``; validate with
    :func:`schema_registry`, e.g.
    ``jsonschema.Draft202012Validator(core_schema("run-data"), registry=schema_registry())``.
    """
    if type(name) is not str or name not in get_args(CoreShape):
        raise ValueError(
            f"no such shape: {show(name)}; the shapes are {', '.join(get_args(CoreShape))}"
        )
    return copy.deepcopy(schema_file(name))


def schema_registry() -> Registry[Any]:
    """A ``referencing.Registry`` holding every shipped schema under its ``$id`` (fresh
    copies), so that the ``$ref``s between them resolve without a network."""
    return registry_of(copy.deepcopy)


def registry_of(take: Callable[[dict[str, Any]], dict[str, Any]]) -> Registry[Any]:
    """A registry of what ``take`` makes of each shipped schema (all are Draft 2020-12)."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    names: tuple[SchemaName, ...] = ("check", "verdict", *get_args(CoreShape))
    return Registry().with_resources(
        (schema_file(name)["$id"], DRAFT202012.create_resource(take(schema_file(name))))
        for name in names
    )


def process_schema() -> dict[str, Any]:
    """The JSON Schema of a PROCESS.md file's frontmatter (core-2's shapes with check-1's step
    keys; the value of ``check`` is left to :func:`~checkprofile.validate_check`), as a fresh
    dict."""
    return copy.deepcopy(schema_file("process"))


# --- a validator that never renders a value ---------------------------------------------------
# jsonschema's own keywords write the value they reject into the error's message with repr():
# a value of many megabytes is copied into every message about it, a structure that shares its
# parts (YAML aliases) is written out whole, and an int of over 4,300 digits makes repr() raise.
# These stand in for every keyword the shipped schemas use that does so; each error's message is
# only its keyword, and a problem is written from the keyword, the schema and show() of the value
# (schema_message). uniqueItems also runs in linear time (the stock one compares every pair of
# items it cannot sort). tests/test_schemas.py checks that every keyword the shipped schemas use
# is either here or one that renders nothing.


def _error(keyword: str, **kwargs: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(keyword, **kwargs)


def _type(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[Any]:
    names = [types] if isinstance(types, str) else types
    if not any(validator.is_type(instance, name) for name in names):
        yield _error("type")


def _enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[Any]:
    key = json_key(instance)
    if not any(json_key(item) == key for item in enums):
        yield _error("enum")


def _const(validator: Any, const: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if json_key(instance) != json_key(const):
        yield _error("const")


def _min_length(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and len(instance) < limit:
        yield _error("minLength")


def _max_length(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and len(instance) > limit:
        yield _error("maxLength")


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and _compiled(pattern).search(instance) is None:
        yield _error("pattern")


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _minimum(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "number") and instance < limit:
        yield _error("minimum")


def _maximum(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "number") and instance > limit:
        yield _error("maximum")


def _min_items(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "array") and len(instance) < limit:
        yield _error("minItems")


def _max_items(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "array") and len(instance) > limit:
        yield _error("maxItems")


def _min_properties(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object") and len(instance) < limit:
        yield _error("minProperties")


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if unique and validator.is_type(instance, "array"):
        keys = [json_key(item) for item in instance]
        if len(set(keys)) != len(keys):
            yield _error("uniqueItems")


def _any_of(validator: Any, branches: Any, instance: Any, schema: Any) -> Iterator[Any]:
    errors = []
    for index, branch in enumerate(branches):
        found = list(validator.descend(instance, branch, schema_path=index))
        if not found:
            return
        errors.extend(found)
    yield _error("anyOf", context=errors)


def _one_of(validator: Any, branches: Any, instance: Any, schema: Any) -> Iterator[Any]:
    errors = []
    valid = 0
    for index, branch in enumerate(branches):
        found = list(validator.descend(instance, branch, schema_path=index))
        if found:
            errors.extend(found)
        else:
            valid += 1
    if valid != 1:
        yield _error("oneOf", context=errors if not valid else [])


def _not(validator: Any, branch: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.evolve(schema=branch).is_valid(instance):
        yield _error("not")


def _additional(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    extras = [key for key in instance if key not in known]
    if isinstance(allowed, dict):
        for key in extras:
            yield from validator.descend(instance[key], allowed, path=key)
    elif allowed is False and extras:
        yield _error("additionalProperties")


def _unevaluated(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema._utils import find_evaluated_property_keys_by_schema

    if not validator.is_type(instance, "object"):
        return
    # A set: the stock keyword looks each key up in a list, which is quadratic in the keys.
    evaluated = set(find_evaluated_property_keys_by_schema(validator, instance, schema))
    for key in instance:
        if key in evaluated:
            continue
        if allowed is False or not validator.evolve(schema=allowed).is_valid(instance[key]):
            yield _error("unevaluatedProperties")
            return


#: The keywords replaced, by name.
SAFE_KEYWORDS: Final[Mapping[str, Callable[..., Iterator[Any]]]] = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "minLength": _min_length,
    "maxLength": _max_length,
    "pattern": _pattern,
    "minimum": _minimum,
    "maximum": _maximum,
    "minItems": _min_items,
    "maxItems": _max_items,
    "minProperties": _min_properties,
    "uniqueItems": _unique_items,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "additionalProperties": _additional,
    "unevaluatedProperties": _unevaluated,
}

#: Keywords that never render a value (they only descend, or name keys), kept as jsonschema
#: has them.
RENDER_NOTHING: Final = frozenset(
    {
        "$schema", "$id", "$ref", "$defs", "$comment", "title", "description", "examples",
        "default", "properties", "required", "items", "allOf", "if", "then", "else",
        "propertyNames",
    }
)  # fmt: skip


def safe_validator(
    schema: Mapping[str, Any],
    *,
    keywords: Mapping[str, Callable[..., Iterator[Any]]] | None = None,
    type_checker: Any = None,
    registry: Any = None,
) -> Any:
    """A Draft 2020-12 validator for ``schema`` whose errors never render the value they are
    about (:data:`SAFE_KEYWORDS`, and ``keywords`` on top), with ``type_checker`` when given."""
    from jsonschema import Draft202012Validator, validators

    options: dict[str, Any] = {}
    if type_checker is not None:
        options["type_checker"] = type_checker
    kind = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {**SAFE_KEYWORDS, **(keywords or {})}, **options
    )
    if registry is not None:
        return kind(schema, registry=registry)
    return kind(schema)


def json_key(value: object) -> object:
    """A hashable stand-in for ``value`` that is equal exactly when the values are equal as
    JSON data: ``1`` is ``1.0``, ``true`` is not ``1``, key order does not matter."""
    kind = type(value)
    if kind is bool:
        return ("b", value)
    if kind is int:
        return ("n", value)
    if kind is float:
        number: float = value  # type: ignore[assignment]
        return ("n", int(number)) if number.is_integer() else ("n", number)
    if kind is str:
        return ("s", value)
    if value is None:
        return ("z",)
    if kind is list:
        return ("l", tuple(json_key(item) for item in value))  # type: ignore[attr-defined]
    if kind is dict:
        return ("m", frozenset((key, json_key(item)) for key, item in value.items()))  # type: ignore[attr-defined]
    return ("o", id(value))


def schema_message(error: Any) -> str:
    """What a schema error from :func:`safe_validator` says, in words, with the value shown by
    :func:`show` (bounded): ``expected <description>, got <value>``, ``missing "key"``,
    ``unknown key "key"``."""
    keyword = error.validator
    schema = error.schema if is_mapping(error.schema) else {}
    instance = error.instance
    value = error.validator_value
    got = show(instance)
    if keyword == "required":
        missing = [key for key in value if key not in instance]
        return f'missing "{missing[0]}"' if missing else "missing a key"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        known = schema.get("properties", {})
        extras = [key for key in instance if key not in known]
        return f"unknown key {show(extras[0])}" if extras else "an unknown key"
    description = schema.get("description")
    if description is not None:
        expected = str(description)
    elif keyword == "type":
        expected = " or ".join(_TYPE_WORDS.get(name, name) for name in _listed(value))
    elif keyword == "enum":
        expected = "one of " + ", ".join(show(item) for item in list(value)[:8])
    elif keyword == "const":
        expected = show(value)
    elif keyword in ("minimum", "maximum"):
        expected = f"a number of {'at least' if keyword == 'minimum' else 'at most'} {show(value)}"
    elif keyword in ("minLength", "maxLength"):
        side = "at least" if keyword == "minLength" else "at most"
        return f"expected text of {side} {value} characters, got {len(instance)}"
    elif keyword in ("minItems", "maxItems", "minProperties"):
        side = "at most" if keyword == "maxItems" else "at least"
        noun = "keys" if keyword == "minProperties" else "items"
        return f"expected {side} {value} {noun}, got {len(instance)}"
    elif keyword == "uniqueItems":
        return "expected items that all differ, got a repeated one"
    elif keyword == "not":
        return f"{got} is not allowed here"
    else:
        expected = f"a value allowed by {keyword}"
    return f"expected {expected}, got {got}"


_TYPE_WORDS: Final = {
    "string": "text",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "a map",
}


def _listed(value: object) -> list[str]:
    return [value] if isinstance(value, str) else [str(item) for item in value]  # type: ignore[attr-defined]
