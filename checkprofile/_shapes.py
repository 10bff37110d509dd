"""core-2's shapes where a host meets checkprofile: run data and the submission.

Each is checked against its shipped JSON Schema (``schemas/run-data.schema.json``,
``schemas/submission.schema.json``, which refer to ``step-record.schema.json``): every problem
at once, one per fault, each a :class:`~checkprofile.Problem` whose path leads from the root
of what was read to the key or value to fix, and whose message names what was expected and
quotes what was given (bounded, never a whole value). A misspelt key says which key was meant.

The checks never raise, whatever they are given, and cost what the shape costs, not what the
data weighs: the schema never looks inside ``inputs`` or an ``output``, and the validator's own
keywords for types, enums, lengths and unknown keys are replaced by ones that never render a
value (the stock ones ``repr()`` what they reject, which a 5,000-digit integer or a value of
many megabytes turns into an exception or a runaway). A step record's ``check`` is read by
:meth:`Verdict.from_json`, the one reader of verdict records, rather than by the schema.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, get_args

from ._convert import show
from ._fastschema import Validator
from ._schemas import CoreShape, registry_of, schema_file
from ._verdict import Verdict
from .errors import MaterialError, Problem, VerdictError

__all__ = ["check_run_data", "run_data_problems", "submission_problems"]

Path = tuple[str | int, ...]

#: An agent's summary, in characters (core-2's submit).
AGENT_SUMMARY = (1, 2000)


def run_data_problems(data: object) -> tuple[Problem, ...]:
    """Every way ``data`` is not core-2's run data; empty when it is. Never raises.

    Run data is ``{"inputs": {...}, "steps": {<id>: <step record>}}``, both keys required and
    no other. A step record is a closed map of ``output`` (a map), ``evidence`` (a list of
    ``{kind: file|link, ref, sha256?, url?}``), ``summary``, ``next``, ``reason``, ``note``,
    ``by``, ``at`` (strings), ``decision`` (``approved``, ``rejected`` or ``failed``),
    ``check`` (a verdict record) and a required ``history``: a list of entries with the same
    keys but ``history``. Paths lead from the root of ``data``.
    """
    problems = _schema_problems("run-data", _run_data_view(data))
    problems.extend(_verdict_problems(data))
    return _in_order(problems)


def check_run_data(data: object) -> None:
    """Raise :class:`~checkprofile.MaterialError` carrying every problem of
    :func:`run_data_problems` (its ``problems``; ``path`` is the first one's) unless ``data``
    is core-2's run data."""
    problems = run_data_problems(data)
    if problems:
        raise MaterialError(
            described("run data", problems), path=problems[0].path, problems=problems
        )


def submission_problems(data: object, *, agent: bool = False) -> tuple[Problem, ...]:
    """Every way ``data`` is not core-2's submission; empty when it is. Never raises.

    A submission is ``{"output": {...}}`` with optional ``summary`` (a string), ``evidence``
    (a list of ``{kind: file|link, ref, sha256?, url?}``), ``next`` (the chosen step id, a
    non-empty string) and ``reason`` (at most 4000 characters), and no other key. With
    ``agent``, the summary of an agent's submit is also 1 to 2000 characters.
    """
    problems = _schema_problems("submission", data)
    if agent and isinstance(data, dict):
        summary = data.get("summary")
        low, high = AGENT_SUMMARY
        if type(summary) is str and not low <= len(summary) <= high:
            problems.append(
                Problem(
                    ("summary",),
                    f"an agent's summary is {low} to {high} characters, got {len(summary)}",
                )
            )
    return _in_order(problems)


def described(what: str, problems: tuple[Problem, ...]) -> str:
    """The message of an error carrying ``problems`` of ``what`` (one per line)."""
    count = len(problems)
    lines = "\n".join(f"  {problem}" for problem in problems)
    return f"{what} has {count} problem{'s' * (count != 1)}:\n{lines}"


# --- what the schema is shown -----------------------------------------------------------------


def _run_data_view(data: object) -> object:
    """``data`` with every step record's (and history entry's) ``check`` left out: the verdict
    reader judges those. Only the maps and lists on the way are copied, never their contents."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), dict):
        return data
    return {**data, "steps": {key: _record_view(record) for key, record in data["steps"].items()}}


def _record_view(record: object) -> object:
    if not isinstance(record, dict):
        return record
    view = {key: value for key, value in record.items() if key != "check"}
    history = view.get("history")
    if isinstance(history, list):
        view["history"] = [
            {key: value for key, value in entry.items() if key != "check"}
            if isinstance(entry, dict)
            else entry
            for entry in history
        ]
    return view


def _verdict_problems(data: object) -> Iterator[Problem]:
    """A problem for each step record's (or history entry's) ``check`` that is not a verdict
    record, in the verdict reader's words."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), dict):
        return
    for step_id, record in data["steps"].items():
        if not isinstance(record, dict):
            continue
        at: Path = ("steps", _token(step_id))
        places: list[tuple[Path, Mapping[Any, Any]]] = [(at, record)]
        history = record.get("history")
        if isinstance(history, list):
            places.extend(
                ((*at, "history", index), entry)
                for index, entry in enumerate(history)
                if isinstance(entry, dict)
            )
        for where, entry in places:
            if "check" not in entry:
                continue
            try:
                Verdict.from_json(entry["check"])
            except VerdictError as error:
                yield Problem((*where, "check"), f"expected a check verdict record: {error}")


# --- from schema errors to problems -----------------------------------------------------------


def _schema_problems(shape: CoreShape, data: object) -> list[Problem]:
    # Data of core-2's shape needs no jsonschema; data that is not is explained by it.
    if _fast_validator(shape).is_valid(data):
        return []
    found: list[Problem] = []
    suggested: set[tuple[Path, str]] = set()  # (object, key) an unknown key may have meant
    for error in _validator(shape).iter_errors(data):
        path = tuple(_token(token) for token in error.absolute_path)
        keyword, schema, instance = error.validator, error.schema, error.instance
        assert isinstance(schema, dict)
        if keyword == "required":
            for key in error.validator_value:
                if key not in instance:
                    about = schema.get("properties", {}).get(key, {}).get("description")
                    why = f": expected {about}" if about else ""
                    found.append(Problem(path, f'missing "{key}"{why}'))
        elif keyword == "additionalProperties":
            # One error per unknown key, its path ending at the key (see _additional).
            key = error.path[-1] if error.path else None
            message, meant = _unknown_key(key, schema)
            if meant is not None:
                suggested.add((path[:-1], meant))
            found.append(Problem(path, message))
        else:
            expected = schema.get("description", f"a value allowed by {keyword}")
            # A text too long is counted, not quoted.
            too_long = keyword == "maxLength"
            got = f"{len(instance)} characters" if too_long else show(instance)
            found.append(Problem(path, f"expected {expected}, got {got}"))
    # One fault, one problem: a misspelt key ("input") is reported as the unknown key it is,
    # with its hint, and not again as the key it meant being missing.
    unique: dict[Problem, None] = {}
    for problem in found:
        missing = problem.message.startswith('missing "')
        if missing and (problem.path, problem.message.split('"')[1]) in suggested:
            continue
        unique.setdefault(problem, None)
    return list(unique)


def _unknown_key(key: object, schema: Mapping[str, Any]) -> tuple[str, str | None]:
    keys = list(schema.get("properties", {}))
    has = f"{schema.get('title', 'this map')} has {_listed(keys)}"
    if not isinstance(key, str):
        return f"unknown key {show(key)} (keys are strings); {has}", None
    folded = key.strip().lower().replace("-", "_").replace(" ", "_")
    # Stricter than difflib's default: "extra" is not a misspelt "next".
    match = difflib.get_close_matches(folded, keys, n=1, cutoff=0.75)
    if match:
        return f'unknown key {show(key)}; did you mean "{match[0]}"? {has}', match[0]
    return f"unknown key {show(key)}; {has}", None


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _token(token: object) -> str | int:
    # A path leads through map keys (strings) and list indexes; a key of another type (from a
    # Python host: JSON has none) is named by its text.
    return token if type(token) in (str, int) else str(token)  # type: ignore[return-value]


def _in_order(problems: list[Problem]) -> tuple[Problem, ...]:
    # Document order as far as a path tells it: by path, indexes by number.
    return tuple(
        sorted(
            problems,
            key=lambda p: [(0, t, "") if isinstance(t, int) else (1, 0, t) for t in p.path],
        )
    )


# --- a validator that never renders a value ---------------------------------------------------
# Keyword functions in jsonschema's signature. Each error's message is only its keyword: the
# problem is written from the keyword, the schema's description and show() of the value.


def _error(keyword: str, *, path: list[Any] | None = None) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(keyword, path=path or ())


def _type(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[Any]:
    names = [types] if isinstance(types, str) else types
    if not any(validator.is_type(instance, name) for name in names):
        yield _error("type")


def _enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[Any]:
    # The enums of these schemas are strings; a value of any other exact type is not one (a
    # str subclass could compare equal while being something else).
    if not (type(instance) is str and instance in enums):
        yield _error("enum")


def _min_length(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if type(instance) is str and len(instance) < limit:
        yield _error("minLength")


def _max_length(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if type(instance) is str and len(instance) > limit:
        yield _error("maxLength")


def _additional(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    extras = [key for key in instance if key not in known]
    if allowed is False:
        for key in extras:
            yield _error("additionalProperties", path=[key])
    elif isinstance(allowed, dict):
        for key in extras:
            yield from validator.descend(instance[key], allowed, path=key)


def _inlined(schema: Any, resolver: Any) -> Any:
    """``schema`` with every ``$ref`` replaced by what it refers to, merged with the keys
    beside it (a ``description``). These schemas have no cycles, and looking references up is
    most of jsonschema's cost on a run of many steps."""
    if isinstance(schema, list):
        return [_inlined(item, resolver) for item in schema]
    if not isinstance(schema, dict):
        return schema
    # $id and $schema would make a part a resource of its own (the stock validator of its
    # dialect, not this one); with every $ref inlined, $defs are not needed.
    own = {
        key: _inlined(value, resolver)
        for key, value in schema.items()
        if key not in ("$ref", "$id", "$schema", "$defs")
    }
    if "$ref" not in schema:
        return own
    target = resolver.lookup(schema["$ref"])
    return {**_inlined(target.contents, target.resolver), **own}


@cache
def _fast_validator(shape: CoreShape) -> Validator:
    others: list[CoreShape] = list(get_args(CoreShape))
    return Validator(
        schema_file(shape), resources=[*map(schema_file, others), schema_file("verdict")]
    )


@cache
def _validator(shape: CoreShape) -> Any:
    from jsonschema import Draft202012Validator, validators

    safe = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator,
        {
            "type": _type,
            "enum": _enum,
            "minLength": _min_length,
            "maxLength": _max_length,
            "additionalProperties": _additional,
        },
    )
    schema = schema_file(shape)
    resolver = registry_of(lambda contents: contents).resolver(base_uri=schema["$id"])
    return safe(_inlined(schema, resolver))
