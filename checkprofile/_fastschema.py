"""A small interpreter of the part of JSON Schema (draft 2020-12) that checkprofile's own schemas
use, so that the common case -- a value that is valid -- needs neither jsonschema (whose import
alone costs more than the rest of a ``lint``) nor its per-keyword machinery.

It answers the question jsonschema answers, never another one:

* :meth:`Validator.is_valid` is exactly jsonschema's ``is_valid`` on plain JSON data (``dict``
  with ``str`` keys, ``list``, ``str``, ``int``, finite ``float``, ``bool``, ``None``, of exactly
  those types). On anything else it says ``False`` -- "not known here" -- and the caller asks
  jsonschema, which also explains what is wrong. So a caller's validators may redefine what
  they like for other values (checkprofile's run data check never renders a value; the
  process check takes only finite numbers), and a valid value costs no jsonschema at all.
* :meth:`Validator.iter_errors` gives jsonschema's own errors, in jsonschema's order (but an
  object's unknown keys in the object's order, where jsonschema uses a set's), for any value,
  as :class:`SchemaError` records carrying what messages are written from (``anyOf`` and
  ``oneOf`` with the errors of each branch, as jsonschema's ``context``). It interprets every
  keyword of the schemas of values checkprofile reads but ``unevaluatedProperties``
  (:data:`EXPLAINED`), so that explaining a bad process file, run data or submission needs no
  jsonschema either.

``tests/test_fastschema.py`` proves both against jsonschema over generated values, for every
shipped schema. A schema with a keyword outside what a mode interprets is refused when the
validator is made, never mis-read.
"""

from __future__ import annotations

import itertools
import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, NamedTuple
from urllib.parse import urldefrag, urljoin

from ._types import is_mapping, is_sequence, of_type

__all__ = ["EXPLAINED", "VALIDATED", "SchemaError", "Validator"]

#: Keywords that say nothing about validity.
ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples"}
)
#: The keywords :meth:`Validator.is_valid` interprets (``then`` and ``else`` go with ``if``).
VALIDATED: Final = frozenset(
    {
        "$ref",
        "type",
        "enum",
        "const",
        "properties",
        "additionalProperties",
        "unevaluatedProperties",
        "required",
        "propertyNames",
        "minProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
    }
)
#: The keywords :meth:`Validator.iter_errors` interprets: all but ``unevaluatedProperties``.
EXPLAINED: Final = VALIDATED - {"unevaluatedProperties"}

Path = tuple[Any, ...]
_Check = Callable[[Any], bool]


class SchemaError(NamedTuple):
    """One error, with the fields of jsonschema's ``ValidationError`` that messages are written
    from: the keyword (``validator``) and its value, the ``instance`` and the ``schema`` it
    failed in, where the instance is (``absolute_path``) and the way through the schema
    (``schema_path``, jsonschema's relative schema path)."""

    validator: str
    validator_value: Any
    instance: Any
    schema: Mapping[str, Any]
    absolute_path: Path
    schema_path: Path
    #: For ``anyOf`` and ``oneOf``: the errors of every branch, each ``schema_path`` starting
    #: at its branch's index (jsonschema's ``context``, its ``relative_schema_path``).
    context: tuple[SchemaError, ...] = ()


def _under(error: SchemaError, step: Any) -> SchemaError:
    """``error`` one step further from the root: its path and its context's paths."""
    return error._replace(
        absolute_path=(step, *error.absolute_path),
        context=tuple(_under(each, step) for each in error.context),
    )


class _NotPlain(Exception):
    """A value that is not plain JSON data: is_valid does not know, jsonschema will say."""


# The exact types of plain JSON data (a subclass may behave otherwise, so it is not plain).
_PLAIN: Final = frozenset({dict, list, str, int, float, bool, type(None)})


def _plain(value: object) -> None:
    # A map's keys need no look: every keyword here treats a key alike in every dialect, and
    # propertyNames visits each key as a value, so a key that is not text is judged there.
    kind = type(value)
    if kind not in _PLAIN or (kind is float and not math.isfinite(value)):  # type: ignore[arg-type]
        raise _NotPlain


# jsonschema's equality and uniqueness (jsonschema._utils.equal, unbool and uniq), to the
# letter: booleans are not numbers, 1 equals 1.0, containers compare item by item.
def _equal(one: Any, two: Any) -> bool:
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if is_sequence(one) and is_sequence(two):
        return len(one) == len(two) and all(_equal(i, j) for i, j in zip(one, two, strict=True))
    if is_mapping(one) and is_mapping(two):
        return len(one) == len(two) and all(
            key in two and _equal(value, two[key]) for key, value in one.items()
        )
    return bool(_unbool(one) == _unbool(two))


_TRUE: Final = object()
_FALSE: Final = object()


def _unbool(value: Any) -> Any:
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value


def _uniq(container: Sequence[Any]) -> bool:
    try:
        ordered = sorted(_unbool(item) for item in container)
        return not any(_equal(i, j) for i, j in itertools.pairwise(ordered))
    except (NotImplementedError, TypeError):
        seen: list[Any] = []
        for item in container:
            item = _unbool(item)
            if any(_equal(other, item) for other in seen):
                return False
            seen.append(item)
    return True


# jsonschema's types (draft 2020-12's type checker), for any value.
_IS_TYPE: Final[Mapping[str, Callable[[Any], bool]]] = {
    "array": lambda value: isinstance(value, list),
    "boolean": lambda value: isinstance(value, bool),
    "integer": lambda value: (
        not isinstance(value, bool)
        and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
    ),
    "null": lambda value: value is None,
    "number": lambda value: not isinstance(value, bool) and isinstance(value, numbers.Number),
    "object": lambda value: isinstance(value, dict),
    "string": lambda value: isinstance(value, str),
}


def _is_type(value: Any, name: str) -> bool:
    return _IS_TYPE[name](value)


# The same for plain data, by exact type (bool is not int; an integral float is an integer).
_PLAIN_TYPE: Final[Mapping[str, Callable[[type, Any], bool]]] = {
    "array": lambda kind, value: kind is list,
    "boolean": lambda kind, value: kind is bool,
    "integer": lambda kind, value: kind is int or (kind is float and value.is_integer()),
    "null": lambda kind, value: kind is type(None),
    "number": lambda kind, value: kind is int or kind is float,
    "object": lambda kind, value: kind is dict,
    "string": lambda kind, value: kind is str,
}


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


class Validator:
    """A validator of ``schema`` (draft 2020-12), its ``$ref``\\ s resolved among ``schema``
    itself and ``resources`` (schemas with an ``$id``), never over a network."""

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        resources: Iterable[Mapping[str, Any]] = (),
        explain: bool = False,
        finite: bool = False,
    ) -> None:
        self.schema = schema
        self.explain = explain
        # Whether a "number" (and an "integer") must be finite, when explaining: NaN and the
        # infinities have no JSON form (is_valid leaves any such value to its caller).
        self.finite = finite
        self._documents: dict[str, Mapping[str, Any]] = {}
        for document in (*resources, schema):
            if "$id" in document:
                self._documents[document["$id"]] = document
        self._base: str = schema.get("$id", "")
        # Compiled checks by the schema object they check (kept alive, so ids stay theirs).
        self._compiled: dict[int, tuple[Any, _Check]] = {}
        self._refs: dict[tuple[str, str], tuple[Any, str]] = {}
        self._known(schema, self._base, VALIDATED)
        if explain:
            self._known(schema, self._base, EXPLAINED)
        self._check = self._compile(schema, self._base)

    # -- reading the schema -------------------------------------------------------------------

    def _resolve(self, ref: str, base: str) -> tuple[Any, str]:
        """The schema ``ref`` names from ``base``, and the base of what it holds."""
        found = self._refs.get((ref, base))
        if found is not None:
            return found
        url, fragment = urldefrag(urljoin(base, ref) if base else ref)
        if not url:
            document, url = self.schema, base
        elif url in self._documents:
            document = self._documents[url]
        else:
            raise ValueError(f"cannot resolve $ref {ref!r} from {base or 'the root'}")
        target: Any = document
        for token in fragment.split("/")[1:] if fragment else ():
            token = token.replace("~1", "/").replace("~0", "~")
            target = target[int(token)] if isinstance(target, list) else target[token]
        self._refs[(ref, base)] = (target, url)
        return target, url

    def _known(
        self,
        schema: Any,
        base: str,
        keywords: frozenset[str],
        checked: set[int] | None = None,
    ) -> None:
        """Refuse a schema with a keyword outside ``keywords`` (and annotations), anywhere
        it reaches."""
        checked = set() if checked is None else checked
        if isinstance(schema, bool) or id(schema) in checked:
            return
        checked.add(id(schema))
        if "$id" in schema and self._documents.get(schema["$id"]) is not schema:
            raise ValueError(f"a nested $id ({schema['$id']!r}) is not interpreted here")
        unknown = sorted(set(schema) - keywords - ANNOTATIONS)
        if unknown:
            raise ValueError(f"keyword {unknown[0]!r} is not interpreted here")
        if schema.get("additionalProperties") is not None and "patternProperties" in schema:
            raise ValueError("patternProperties is not interpreted here")
        for keyword, value in schema.items():
            if keyword == "$ref":
                target, url = self._resolve(value, base)
                self._known(target, url, keywords, checked)
            elif keyword == "properties":
                for sub in value.values():
                    self._known(sub, base, keywords, checked)
            elif keyword in ("allOf", "anyOf", "oneOf"):
                for sub in value:
                    self._known(sub, base, keywords, checked)
            elif keyword in (
                "additionalProperties",
                "unevaluatedProperties",
                "propertyNames",
                "items",
                "not",
                "if",
                "then",
                "else",
            ):
                self._known(value, base, keywords, checked)

    # -- is_valid -------------------------------------------------------------------------------

    def is_valid(self, instance: object) -> bool:
        """Whether jsonschema would find ``instance`` valid, for plain JSON data; ``False`` for
        anything else (then ask jsonschema)."""
        try:
            return self._check(instance)
        except _NotPlain:
            return False
        except RecursionError:
            return False

    def _compile(self, schema: Any, base: str) -> _Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        found = self._compiled.get(id(schema))
        if found is not None and found[0] is schema:
            return found[1]
        checks = [
            self._keyword(keyword, value, schema, base)
            for keyword, value in schema.items()
            if keyword not in ANNOTATIONS and keyword not in ("then", "else")
        ]

        def check(value: Any) -> bool:
            _plain(value)
            return all(each(value) for each in checks)

        self._compiled[id(schema)] = (schema, check)
        return check

    def _keyword(self, keyword: str, value: Any, schema: Mapping[str, Any], base: str) -> _Check:
        make = getattr(self, "_k_" + keyword.lstrip("$"), None)
        if make is None:  # refused by _known already
            raise ValueError(f"keyword {keyword!r} is not interpreted here")
        check: _Check = make(value, schema, base)
        return check

    def _k_ref(self, ref: str, schema: Mapping[str, Any], base: str) -> _Check:
        # Resolved when first used: schemas may refer to themselves.
        compiled: list[_Check] = []

        def check(value: Any) -> bool:
            if not compiled:
                target, url = self._resolve(ref, base)
                compiled.append(self._compile(target, url))
            return compiled[0](value)

        return check

    def _k_type(self, types: Any, schema: Mapping[str, Any], base: str) -> _Check:
        tests = [_PLAIN_TYPE[name] for name in ([types] if isinstance(types, str) else types)]
        return lambda value: any(test(type(value), value) for test in tests)

    def _k_enum(self, enums: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: any(_equal(each, value) for each in enums)

    def _k_const(self, const: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: _equal(value, const)

    def _k_properties(self, properties: Any, schema: Mapping[str, Any], base: str) -> _Check:
        compiled = [(name, self._compile(sub, base)) for name, sub in properties.items()]

        def check(value: Any) -> bool:
            if type(value) is not dict:
                return True
            return all(sub(value[name]) for name, sub in compiled if name in value)

        return check

    def _k_additionalProperties(self, extra: Any, schema: Mapping[str, Any], base: str) -> _Check:
        known = schema.get("properties", {})
        sub = self._compile(extra, base)

        def check(value: Any) -> bool:
            if type(value) is not dict:
                return True
            return all(sub(item) for key, item in value.items() if key not in known)

        return check

    def _k_unevaluatedProperties(self, extra: Any, schema: Mapping[str, Any], base: str) -> _Check:
        sub = self._compile(extra, base)

        def check(value: Any) -> bool:
            if type(value) is not dict:
                return True
            evaluated = self._evaluated(schema, base, value)
            return all(sub(item) for key, item in value.items() if key not in evaluated)

        return check

    def _evaluated(self, schema: Any, base: str, value: dict[str, Any]) -> set[str]:
        """The keys of ``value`` that ``schema`` evaluates (jsonschema's
        find_evaluated_property_keys_by_schema, for the keywords interpreted here).

        One difference, which cannot change the answer of :meth:`is_valid`: a subschema of
        ``allOf`` counts whether or not it is valid (jsonschema counts only a valid one). Every
        schema this is asked about must itself be valid for the value to be (it is the schema
        being checked, a ``$ref``, a branch of ``allOf``, the ``then`` or ``else`` taken, or a
        branch of ``anyOf``/``oneOf`` found valid), so an invalid ``allOf`` branch makes the
        value invalid whatever is counted; and not validating each branch twice halves the cost.
        """
        if isinstance(schema, bool):
            return set()
        keys: set[str] = set()
        if "$ref" in schema:
            target, url = self._resolve(schema["$ref"], base)
            keys |= self._evaluated(target, url, value)
        if isinstance(schema.get("properties"), dict):
            keys |= schema["properties"].keys() & value.keys()
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            if keyword in schema:
                sub = self._compile(schema[keyword], base)
                keys.update(key for key, item in value.items() if sub(item))
        for each in schema.get("allOf", ()):
            keys |= self._evaluated(each, base, value)
        for keyword in ("oneOf", "anyOf"):
            for each in schema.get(keyword, ()):
                if self._compile(each, base)(value):
                    keys |= self._evaluated(each, base, value)
        if "if" in schema:
            if self._compile(schema["if"], base)(value):
                keys |= self._evaluated(schema["if"], base, value)
                if "then" in schema:
                    keys |= self._evaluated(schema["then"], base, value)
            elif "else" in schema:
                keys |= self._evaluated(schema["else"], base, value)
        return keys

    def _k_required(self, required: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: type(value) is not dict or all(key in value for key in required)

    def _k_propertyNames(self, names: Any, schema: Mapping[str, Any], base: str) -> _Check:
        sub = self._compile(names, base)
        return lambda value: type(value) is not dict or all(sub(key) for key in value)

    def _k_minProperties(self, limit: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: type(value) is not dict or len(value) >= limit

    def _k_items(self, items: Any, schema: Mapping[str, Any], base: str) -> _Check:
        sub = self._compile(items, base)
        return lambda value: type(value) is not list or all(sub(item) for item in value)

    def _k_minItems(self, limit: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: type(value) is not list or len(value) >= limit

    def _k_maxItems(self, limit: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: type(value) is not list or len(value) <= limit

    def _k_uniqueItems(self, unique: Any, schema: Mapping[str, Any], base: str) -> _Check:
        if not unique:
            return _always
        return lambda value: type(value) is not list or _uniq(value)

    def _k_minLength(self, limit: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: type(value) is not str or len(value) >= limit

    def _k_maxLength(self, limit: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: type(value) is not str or len(value) <= limit

    def _k_pattern(self, pattern: str, schema: Mapping[str, Any], base: str) -> _Check:
        search = re.compile(pattern).search
        return lambda value: type(value) is not str or search(value) is not None

    def _k_minimum(self, limit: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: not _is_number(value) or not value < limit

    def _k_maximum(self, limit: Any, schema: Mapping[str, Any], base: str) -> _Check:
        return lambda value: not _is_number(value) or not value > limit

    def _k_allOf(self, subs: Any, schema: Mapping[str, Any], base: str) -> _Check:
        compiled = [self._compile(sub, base) for sub in subs]
        return lambda value: all(sub(value) for sub in compiled)

    def _k_anyOf(self, subs: Any, schema: Mapping[str, Any], base: str) -> _Check:
        compiled = [self._compile(sub, base) for sub in subs]
        return lambda value: any(sub(value) for sub in compiled)

    def _k_oneOf(self, subs: Any, schema: Mapping[str, Any], base: str) -> _Check:
        compiled = [self._compile(sub, base) for sub in subs]
        return lambda value: sum(1 for sub in compiled if sub(value)) == 1

    def _k_not(self, sub: Any, schema: Mapping[str, Any], base: str) -> _Check:
        compiled = self._compile(sub, base)
        return lambda value: not compiled(value)

    def _k_if(self, condition: Any, schema: Mapping[str, Any], base: str) -> _Check:
        test = self._compile(condition, base)
        then = self._compile(schema.get("then", True), base)
        otherwise = self._compile(schema.get("else", True), base)
        return lambda value: then(value) if test(value) else otherwise(value)

    # -- iter_errors ----------------------------------------------------------------------------

    def iter_errors(self, instance: object) -> Iterator[SchemaError]:
        """jsonschema's errors for ``instance``, in its order (an object's unknown keys in the
        object's order). Only for a validator made with ``explain=True``."""
        if not self.explain:
            raise ValueError("this validator was made without explain=True")
        yield from self._errors(instance, self.schema, self._base)

    def _errors(self, instance: Any, schema: Any, base: str) -> Iterator[SchemaError]:
        if schema is True:
            return
        if schema is False:
            yield SchemaError("false", False, instance, {}, (), ())
            return
        for keyword, value in schema.items():
            if keyword in ANNOTATIONS or keyword in ("then", "else"):
                continue
            for error in self._keyword_errors(keyword, value, instance, schema, base):
                if keyword not in ("if", "$ref"):
                    error = error._replace(schema_path=(keyword, *error.schema_path))
                yield error

    def _descend(
        self, instance: Any, schema: Any, base: str, *, path: Any = None, schema_path: Any = None
    ) -> Iterator[SchemaError]:
        for error in self._errors(instance, schema, base):
            if path is not None:
                error = _under(error, path)
            if schema_path is not None:
                error = error._replace(schema_path=(schema_path, *error.schema_path))
            yield error

    def _keyword_errors(
        self, keyword: str, value: Any, instance: Any, schema: Mapping[str, Any], base: str
    ) -> Iterator[SchemaError]:
        def error() -> SchemaError:
            return SchemaError(keyword, value, instance, schema, (), ())

        if keyword == "$ref":
            target, url = self._resolve(value, base)
            yield from self._descend(instance, target, url)
        elif keyword == "type":
            names = [value] if isinstance(value, str) else value
            if not any(self.is_type(instance, name) for name in names):
                yield error()
        elif keyword == "enum":
            if not any(_equal(each, instance) for each in value):
                yield error()
        elif keyword == "const":
            if not _equal(instance, value):
                yield error()
        elif keyword == "allOf":
            for index, sub in enumerate(value):
                yield from self._descend(instance, sub, base, schema_path=index)
        elif keyword in ("anyOf", "oneOf"):
            yield from self._branch_errors(keyword, value, instance, base, error)
        elif keyword == "not":
            if next(self._errors(instance, value, base), None) is None:
                yield error()
        elif keyword == "if":
            if next(self._errors(instance, value, base), None) is None:
                if "then" in schema:
                    yield from self._descend(instance, schema["then"], base, schema_path="then")
            elif "else" in schema:
                yield from self._descend(instance, schema["else"], base, schema_path="else")
        elif _is_type(instance, "object"):
            yield from self._object_errors(keyword, value, instance, schema, base, error)
        elif _is_type(instance, "array"):
            yield from self._array_errors(keyword, value, instance, base, error)
        elif _is_type(instance, "string"):
            if (
                (keyword == "minLength" and len(instance) < value)
                or (keyword == "maxLength" and len(instance) > value)
                or (keyword == "pattern" and not re.search(value, instance))
            ):
                yield error()
        elif _is_type(instance, "number") and (
            (keyword == "minimum" and instance < value)
            or (keyword == "maximum" and instance > value)
        ):
            yield error()

    def is_type(self, instance: Any, name: str) -> bool:
        """jsonschema's type check of ``instance`` against the type ``name``."""
        if self.finite and name in ("number", "integer") and type(instance) is float:
            return math.isfinite(instance) and _is_type(instance, name)
        return _is_type(instance, name)

    def _branch_errors(
        self,
        keyword: str,
        branches: Any,
        instance: Any,
        base: str,
        error: Callable[[], SchemaError],
    ) -> Iterator[SchemaError]:
        # jsonschema's anyOf and oneOf: one error carrying every branch's errors when no branch
        # holds; for oneOf, one without context when more than one does.
        context: list[SchemaError] = []
        valid = 0
        for index, sub in enumerate(branches):
            found = [
                found._replace(schema_path=(index, *found.schema_path))
                for found in self._errors(instance, sub, base)
            ]
            if not found:
                valid += 1
                if keyword == "anyOf":
                    return
            elif not valid:  # jsonschema stops gathering at the first branch that holds
                context.extend(found)
        if not valid:
            yield error()._replace(context=tuple(context))
        elif valid > 1:
            yield error()

    def _object_errors(
        self,
        keyword: str,
        value: Any,
        instance: dict[Any, Any],
        schema: Mapping[str, Any],
        base: str,
        error: Callable[[], SchemaError],
    ) -> Iterator[SchemaError]:
        if keyword == "required":
            for key in value:
                if key not in instance:
                    yield error()
        elif keyword == "properties":
            for key, sub in value.items():
                if key in instance:
                    yield from self._descend(instance[key], sub, base, path=key, schema_path=key)
        elif keyword == "additionalProperties":
            known = schema.get("properties", {})
            extras = [key for key in instance if key not in known]
            if isinstance(value, dict):
                for key in extras:
                    yield from self._descend(instance[key], value, base, path=key)
            elif not value and extras:
                yield error()
        elif keyword == "propertyNames":
            for key in instance:
                yield from self._descend(key, value, base)
        elif keyword == "minProperties" and len(instance) < value:
            yield error()

    def _array_errors(
        self,
        keyword: str,
        value: Any,
        instance: list[Any],
        base: str,
        error: Callable[[], SchemaError],
    ) -> Iterator[SchemaError]:
        if keyword == "items":
            for index, item in enumerate(instance):
                yield from self._descend(item, value, base, path=index)
        elif (
            (keyword == "minItems" and len(instance) < value)
            or (keyword == "maxItems" and len(instance) > value)
            or (keyword == "uniqueItems" and value and not _uniq(instance))
        ):
            yield error()


def _is_number(value: object) -> bool:
    return of_type(value, int, float)
