"""The objective rules a submission passes before its check runs (core §6 rule 3).

The profile runs a check "after the objective rules of core §6 rule 3 pass": the output has
the fields the step declares, each of its declared type, and the evidence the step requires is
there. :func:`objective_problems` is those rules over a step of a process and a submission,
every problem at once, each a :class:`~checkprofile.Problem` whose path leads from the root of
the submission (``/output/total_eur``, ``/evidence``), as the shapes' problems do. A host runs
it first, and runs the check only when it finds nothing; ``checkprofile run`` does.

What is read where (docs/embedding.md says the same): the field types and their keys
(``type``, ``optional``, ``one_of``, ``items``) and ``evidence: [file, link]`` are core-2's
process shape (docs/human-side.md, *core-2's shapes*). What each type name takes is this
module's reading, stated here since the shapes give the names only: ``string`` a string,
``number`` a JSON number (never ``true``), ``boolean`` ``true`` or ``false``, ``date`` a
``YYYY-MM-DD`` day that exists, ``datetime`` an RFC 3339 time with its offset, ``list`` a
list (each item of its ``items`` type), ``object`` a map, ``person`` a non-blank string. A field
the step does not declare is left to the process (core-2 does not close the output).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any, Final

from ._bundle import Submission
from ._json_text import same_json
from ._process import ProcessStep
from ._shown import is_blank, show
from .errors import Problem

__all__ = ["objective_problems"]

_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?![\s\S])")
_DATETIME: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})(?![\s\S])"
)
# Deeper than any declared type a process writes: a list of lists of ... is refused past it.
_MAX_DEPTH: Final = 32


def _day(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _moment(text: str) -> bool:
    head, _, fraction = text.partition(".")
    if fraction:  # fromisoformat takes at most 6 digits of a fraction before 3.11
        digits = re.match(r"[0-9]+", fraction)
        assert digits is not None
        text = head + "." + digits.group()[:6].ljust(6, "0") + fraction[digits.end() :]
    try:
        datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


_TYPES: Final[dict[str, tuple[str, Callable[[Any], bool]]]] = {
    "string": ("a string", lambda v: type(v) is str),
    "number": ("a number", lambda v: type(v) is int or type(v) is float),
    "boolean": ("true or false", lambda v: type(v) is bool),
    "date": ("a date (YYYY-MM-DD)", lambda v: type(v) is str and bool(_DATE.match(v)) and _day(v)),
    "datetime": (
        "an RFC 3339 time with its offset",
        lambda v: type(v) is str and bool(_DATETIME.match(v)) and _moment(v),
    ),
    "list": ("a list", lambda v: type(v) is list),
    "object": ("a map", lambda v: type(v) is dict),
    "person": ("a person (a non-blank string)", lambda v: type(v) is str and not is_blank(v)),
}


def _declared(field_type: object) -> tuple[str, Mapping[str, Any]] | None:
    """A field type's name and its options; ``None`` for one core-2's shape refuses (the
    process was read, so only a caller's own step gets here with one)."""
    if type(field_type) is str and field_type in _TYPES:
        return field_type, {}
    if (
        type(field_type) is dict
        and type(field_type.get("type")) is str
        and field_type["type"] in _TYPES
    ):
        return str(field_type["type"]), field_type
    return None


def _value_problems(
    path: tuple[str | int, ...], value: Any, field_type: object, depth: int
) -> list[Problem]:
    declared = _declared(field_type)
    if declared is None:
        return [Problem(path, f"the step declares a field type core-2 has not: {show(field_type)}")]
    name, options = declared
    expected, fits = _TYPES[name]
    if not fits(value):
        return [Problem(path, f"expected {expected} ({name}), got {show(value)}")]
    choices = options.get("one_of")
    if type(choices) is list and not any(same_json(value, choice) for choice in choices):
        listed = ", ".join(show(choice) for choice in choices[:10])
        return [Problem(path, f"expected one of {listed}, got {show(value)}")]
    items = options.get("items")
    if name == "list" and items is not None:
        if depth >= _MAX_DEPTH:
            return [Problem(path, f"nested deeper than {_MAX_DEPTH} lists")]
        found: list[Problem] = []
        for index, item in enumerate(value):
            found += _value_problems((*path, index), item, items, depth + 1)
        return found
    return []


def objective_problems(step: ProcessStep, submission: Submission) -> tuple[Problem, ...]:
    """Every way ``submission`` breaks the objective rules of ``step`` (core §6 rule 3): a
    declared output field missing (unless ``optional: true``) or not of its type or not one of
    its ``one_of``, and a kind of evidence the step requires (``evidence: [file]``) with no
    item of it. Empty when it keeps them all; then run the check. Paths lead from the root of
    the submission. Raises :class:`TypeError` for a ``step`` that is not a
    :class:`~checkprofile.ProcessStep` (``process.step(step_id)``) or a ``submission`` that is
    not a :class:`~checkprofile.Submission`.
    """
    if type(step) is not ProcessStep:
        raise TypeError(f"step must be a ProcessStep (process.step(id)), got {show(step)}")
    if type(submission) is not Submission:
        raise TypeError(f"submission must be a Submission, got {show(submission)}")
    problems: list[Problem] = []
    declared = step.data.get("output")
    output = submission.output
    if type(declared) is dict:
        for name, field_type in declared.items():
            path: tuple[str | int, ...] = ("output", name)
            options = field_type if type(field_type) is dict else {}
            if name not in output:
                if options.get("optional") is not True:
                    described = _declared(field_type)
                    kind = described[0] if described else "a field"
                    problems.append(
                        Problem(path, f"missing: the step declares {show(name)} ({kind})")
                    )
                continue
            problems += _value_problems(path, output[name], field_type, 0)
    required = step.data.get("evidence")
    if type(required) is list:
        given = {item.kind for item in submission.evidence}
        for kind in dict.fromkeys(k for k in required if type(k) is str):
            if kind not in given:
                problems.append(
                    Problem(
                        ("evidence",), f"the step requires evidence of kind {kind}; none was given"
                    )
                )
    return tuple(problems)
