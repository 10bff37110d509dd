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

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, cast, get_args

from ._convert import NotJson, plain
from ._fastschema import Validator
from ._schemas import CoreShape, schema_file
from ._shown import meant, show
from ._types import of_type
from ._verdict import Verdict
from .errors import MaterialError, Problem, VerdictError, problems_text

__all__ = [
    "check_run_data",
    "run_data_problems",
    "shallow_members",
    "step_record_problems",
    "submission_problems",
]

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
    view, checks = _run_data_view(data)
    try:
        view = plain(view)
    except NotJson as error:
        return (_not_json(error),)
    problems = _schema_problems("run-data", view)
    problems.extend(_verdict_problems(checks))
    return _in_order(problems)


def step_record_problems(data: object) -> tuple[Problem, ...]:
    """Every way ``data`` is not a core-2 step record (one entry of run data's ``steps``);
    empty when it is. Never raises. Paths lead from the root of ``data``."""
    problems = run_data_problems({"inputs": {}, "steps": {"step": data}})
    return tuple(Problem(problem.path[2:], problem.message) for problem in problems)


def _not_json(error: NotJson) -> Problem:
    return Problem(error.path, error.reason)


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
    if type(agent) is not bool:
        raise TypeError(f"agent must be true or false (a bool), got {show(agent)}")
    view = shallow_members(data)
    if view is not None and "output" in view and shallow_members(view["output"]) is not None:
        view["output"] = {}  # the host's: any map
    try:
        data = plain(data if view is None else view)
    except NotJson as error:
        return (_not_json(error),)
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
    """The message of an error carrying ``problems`` of ``what`` (one per line, the first
    :data:`~checkprofile.errors.LISTED_PROBLEMS`)."""
    return problems_text(what, problems)


# --- what the schema is shown -----------------------------------------------------------------


def shallow_members(value: object) -> dict[str, Any] | None:
    """A map's members keyed by plain text, read by dict's own methods (never a subclass's),
    or ``None`` for a value that is not a map of text keys (which :func:`plain` then names)."""
    if not issubclass(type(value), dict):
        return None
    members: dict[str, Any] = {}
    for key, item in dict.items(cast(dict[Any, Any], value)):
        if not issubclass(type(key), str):
            return None
        name = str.__str__(key)
        if name in members:
            return None
        members[name] = item
    return members


def _run_data_view(data: object) -> tuple[object, list[tuple[Path, object]]]:
    """What the schema is shown of ``data``, and each step record's (and history entry's)
    ``check`` with its place: the verdict reader judges those. The contents of ``inputs`` and
    of each ``output`` are the host's (any map) and are never looked into: an empty map stands
    in for each. Only the maps and lists on the way are copied, never their contents."""
    checks: list[tuple[Path, object]] = []
    root = shallow_members(data)
    if root is None:
        return data, checks
    if shallow_members(root.get("inputs")) is not None:
        root["inputs"] = {}
    steps = shallow_members(root.get("steps"))
    if steps is not None:
        for step_id, record in steps.items():
            at: Path = ("steps", step_id)
            view = _entry_view(record, at, checks)
            if view is not None:
                history = view.get("history")
                if issubclass(type(history), list):
                    view["history"] = [
                        _entry_view(entry, (*at, "history", index), checks) or entry
                        for index, entry in enumerate(list.__iter__(history))  # type: ignore[arg-type]
                    ]
                steps[step_id] = view
        root["steps"] = steps
    return root, checks


def _entry_view(
    entry: object, at: Path, checks: list[tuple[Path, object]]
) -> dict[str, Any] | None:
    view = shallow_members(entry)
    if view is None:
        return None
    if "check" in view:
        checks.append(((*at, "check"), view.pop("check")))
    if shallow_members(view.get("output")) is not None:
        view["output"] = {}
    return view


def _verdict_problems(checks: list[tuple[Path, object]]) -> Iterator[Problem]:
    """A problem for each step record's (or history entry's) ``check`` that is not a verdict
    record, in the verdict reader's words."""
    for where, check in checks:
        try:
            Verdict.from_json(check)
        except VerdictError as error:
            yield Problem(where, f"expected a check verdict record: {error}")


# --- from schema errors to problems -----------------------------------------------------------


def _schema_problems(shape: CoreShape, data: object) -> list[Problem]:
    validator = _validator(shape)
    if validator.is_valid(data):
        return []
    found: list[Problem] = []
    suggested: set[tuple[Path, str]] = set()  # (object, key) an unknown key may have meant
    for error in validator.iter_errors(data):
        path = tuple(_token(token) for token in error.absolute_path)
        keyword, schema, instance = error.validator, error.schema, error.instance
        if keyword == "required":
            for key in error.validator_value:
                if key not in instance:
                    about = schema.get("properties", {}).get(key, {}).get("description")
                    why = f": expected {about}" if about else ""
                    found.append(Problem(path, f'missing "{key}"{why}'))
        elif keyword == "additionalProperties":
            # One problem per unknown key, its path ending at the key.
            known = schema.get("properties", {})
            for key in (key for key in instance if key not in known):
                message, meant = _unknown_key(key, schema)
                if meant is not None:
                    suggested.add((path, meant))
                found.append(Problem((*path, _token(key)), message))
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
    match = meant(key, keys)
    if match is not None:
        return f'unknown key {show(key)}; did you mean "{match}"? {has}', match
    return f"unknown key {show(key)}; {has}", None


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _token(token: object) -> str | int:
    # A path leads through map keys (strings) and list indexes; a key of another type (from a
    # Python host: JSON has none) is named by its text.
    if of_type(token, str, int):
        return token  # type: ignore[return-value]
    return str.__str__(token) if issubclass(type(token), str) else show(token)


def _in_order(problems: list[Problem]) -> tuple[Problem, ...]:
    # Document order as far as a path tells it: by path, indexes by number.
    return tuple(
        sorted(
            problems,
            key=lambda p: [(0, t, "") if isinstance(t, int) else (1, 0, t) for t in p.path],
        )
    )


@cache
def _validator(shape: CoreShape) -> Validator:
    others: list[CoreShape] = list(get_args(CoreShape))
    return Validator(
        schema_file(shape),
        resources=[*map(schema_file, others), schema_file("verdict")],
        explain=True,
        finite=True,
    )
