"""From a raw check key to a :class:`Check`: every problem at once, then normalization.

Validation is two passes per question, as the shipped schema describes:

1. the structural pass -- the question is validated against its kind's definition in
   ``schemas/check.schema.json`` and each schema error becomes one :class:`Problem` (the
   errors are jsonschema's, given by :mod:`._fastschema`, which is proved to give the same);
2. the semantic pass -- rules a schema cannot state well (``fail <= pass``, names of
   ``pass``/``unsure`` from ``one_of`` without overlap, distinct texts, distinct asks, NaN).

Each fault gives exactly one problem, at the path of the key or value to fix.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, TypeGuard, cast

from ._alike import as_read, both_shown
from ._check import Check, Kind, Question
from ._convert import NotJson, converter, is_integral, is_probability, plain
from ._fastschema import SchemaError, Validator
from ._limits import Limits
from ._schemas import schema_file
from ._shown import is_blank, meant, names_text, show
from .errors import CheckError, Problem

__all__ = ["parse_check", "validate_check"]

Path = tuple[str | int, ...]

# Keys each kind of question takes (design decision 1), in the order messages list them.
_KEYS: dict[Kind, tuple[str, ...]] = {
    "yes_no": ("ask", "pass", "fail"),
    "choice": ("ask", "one_of", "pass", "unsure", "confidence"),
    "rubric": ("ask", "levels", "pass", "confidence"),
}
_KIND_NAMES: dict[Kind, str] = {"yes_no": "yes/no", "choice": "choice", "rubric": "rubric"}
_ALL_KEYS = ("ask", "pass", "fail", "one_of", "unsure", "confidence", "levels")
# The keys each kind takes whose schema is a probability (the only place NaN can slip by).
_PROBABILITIES: dict[Kind, tuple[str, ...]] = {
    "yes_no": ("pass", "fail"),
    "choice": ("confidence",),
    "rubric": ("confidence",),
}

# What a missing required key is for, so the message says what to add.
_MISSING: dict[tuple[Kind | None, str], str] = {
    (None, "ask"): "every question needs ask: the question, in plain language",
    ("choice", "pass"): "a choice question needs pass: the list of answer names that pass",
    ("rubric", "pass"): (
        "a rubric question needs pass: the 0-based level at or above which the answer passes"
    ),
}

# Why a key of another kind does not belong here: the usual mistakes, answered directly.
_MISPLACED: dict[tuple[Kind, str], str] = {
    ("yes_no", "confidence"): (
        "a yes/no question has no confidence threshold (its answer is a probability:"
        " use pass, and fail for an unsure band); confidence is for choice and rubric questions"
    ),
    ("yes_no", "unsure"): (
        "unsure lists answer names of a choice question; a yes/no question is unsure"
        " between fail and pass"
    ),
    ("choice", "fail"): (
        "fail is a yes/no threshold; a choice answer fails when it is in neither pass nor unsure"
    ),
    ("rubric", "fail"): "fail is a yes/no threshold; a rubric level below pass fails",
    ("rubric", "unsure"): (
        "unsure lists answer names of a choice question; a rubric answer is unsure"
        " when its confidence is below confidence"
    ),
    ("choice", "levels"): "a question has exactly one of one_of and levels",
    ("rubric", "one_of"): "a question has exactly one of one_of and levels",
}


@cache
def _kind_validator(kind: Kind) -> Validator:
    schema = schema_file("check")
    return Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{kind}"}, explain=True)


def validate_check(raw: object, *, limits: Limits = Limits()) -> tuple[Problem, ...]:
    """Every problem of the check key ``raw``; empty when it is valid. Never raises, whatever
    ``raw`` is (a value that is not JSON data is a problem at its place).

    ``limits`` matters only where a server default meets an explicit threshold (a ``fail``
    above the default ``pass``, or a ``pass`` below the default ``fail``); anything but a
    :class:`Limits` raises :class:`TypeError`.
    """
    return _validated(raw, limits)[1]


def parse_check(raw: object, *, limits: Limits = Limits()) -> Check:
    """Validate ``raw`` and normalize it to the full form, defaults taken from ``limits``.

    The check remembers ``limits`` (:attr:`Check.limits`): :func:`~checkprofile.run_check`
    runs it under them, and refuses limits with other thresholds.

    Raises :class:`~checkprofile.errors.CheckError` carrying every problem (and
    :class:`TypeError` for ``limits`` that are not a :class:`Limits`).
    """
    items, problems = _validated(raw, limits)
    if problems:
        raise CheckError(problems)
    return Check(tuple(_normalize(item, limits) for item in items), limits=limits)


def _validated(raw: object, limits: Limits) -> tuple[list[Any], tuple[Problem, ...]]:
    """The check key as plain JSON data (a list of question maps, the short form made one)
    and its problems. Each question is made plain on its own, so a value that is not JSON
    data in one question does not hide the problems of the others."""
    if type(limits) is not Limits:
        raise TypeError(f"limits must be a Limits (see Limits.from_json), got {show(limits)}")
    kind = type(raw)
    if issubclass(kind, str):
        text = str.__str__(raw)
        if not is_blank(text):
            return [{"ask": text}], ()
        return [], (Problem((), f"expected a non-blank question, got {show(raw)}"),)
    if not issubclass(kind, list):
        return [], (
            Problem(
                (),
                f"expected a question (a string) or a non-empty list of questions, got {show(raw)}",
            ),
        )
    items: list[Any] = list(list.__iter__(cast(list[Any], raw)))
    if not items:
        return [], (Problem((), "expected at least one question, got an empty list"),)
    problems: list[Problem] = []
    questions: list[Any] = []
    for index, question in enumerate(items):
        try:
            question = plain(question, finite=False)
        except NotJson as error:
            problems.append(Problem((index, *error.path), error.reason))
            questions.append(None)
            continue
        questions.append(question)
        problems.extend(_question_problems(question, (index,), limits))
    problems.extend(_duplicate_asks(questions))
    # Document order: by question, the problems of each question in the order found.
    problems.sort(key=lambda problem: problem.path[0])
    return questions, tuple(problems)


def _normalize(item: Mapping[str, Any], limits: Limits) -> Question:
    # Fill the defaults in JSON space (decision 2), then let the converter build the question:
    # the full form JSON is the one shape both directions agree on.
    full = dict(item)
    if "one_of" in full or "levels" in full:
        full.setdefault("confidence", limits.check_confidence)
        full["confidence"] = float(full["confidence"])
        if "one_of" in full:
            full.setdefault("unsure", [])
        else:
            full["pass"] = int(full["pass"])  # 2.0 is level 2 (decision 5)
    else:
        full["pass"] = float(full.get("pass", limits.check_pass))
        fail = full.get("fail", limits.check_fail)
        if fail is not None:
            full["fail"] = float(fail)
    question: Question = converter.structure(full, Question)  # type: ignore[arg-type]
    return question


def _kind_of(question: Mapping[Any, Any]) -> Kind:
    if "one_of" in question:
        return "choice"
    if "levels" in question:
        return "rubric"
    return "yes_no"


def _question_problems(question: object, at: Path, limits: Limits) -> Iterator[Problem]:
    if not isinstance(question, dict):
        yield Problem(
            at,
            "expected a question map with ask (and one_of, levels or neither),"
            f" got {show(question)}",
        )
        return
    if "one_of" in question and "levels" in question:
        yield Problem(
            at,
            "a question has exactly one of one_of (a choice) and levels (a rubric), not both",
        )
        return
    kind = _kind_of(question)
    yield from _structural(question, kind, at)
    yield from _semantic(question, kind, at, limits)


def _structural(question: dict[Any, Any], kind: Kind, at: Path) -> Iterator[Problem]:
    # One fault, one problem: jsonschema reports `required` once per missing key (each error
    # carrying the whole list), so identical problems are kept once.
    validator = _kind_validator(kind)
    if validator.is_valid(question):
        return
    seen: set[Problem] = set()
    for error in validator.iter_errors(question):
        if "propertyNames" in error.schema_path:
            continue  # an answer name: reported by _choice, at the name's own path
        for problem in _from_schema_error(error, question, kind, at):
            if problem not in seen:
                seen.add(problem)
                yield problem


def _from_schema_error(
    error: SchemaError, question: dict[Any, Any], kind: Kind, at: Path
) -> Iterator[Problem]:
    path: Path = (*at, *error.absolute_path)
    keyword = error.validator
    instance: Any = error.instance
    schema = error.schema
    required: list[str] = error.validator_value
    if keyword == "required":
        for key in required:
            if key not in instance:
                why = _MISSING.get((kind, key)) or _MISSING[(None, key)]
                yield Problem(path, f'missing "{key}": {why}')
    elif keyword == "additionalProperties":
        allowed = set(schema.get("properties", {}))
        for key in instance:
            if key not in allowed:
                yield Problem(
                    (*path, key if isinstance(key, str) else str(key)), _unknown_key(key, kind)
                )
    elif keyword == "uniqueItems":
        return  # reported by the semantic pass, at the exact item that repeats
    elif keyword in ("minItems", "maxItems", "minProperties"):
        count = len(instance)
        noun = "entry" if count == 1 else "entries"
        yield Problem(path, f"expected {schema['description']}, got {count} {noun}")
    else:
        expected = schema.get("description", f"a value allowed by {keyword}")
        yield Problem(path, f"expected {expected}, got {show(instance)}")


def _unknown_key(key: object, kind: Kind) -> str:
    takes = f"a {_KIND_NAMES[kind]} question takes {', '.join(_KEYS[kind])}"
    if not isinstance(key, str):
        return f"unknown key {show(key)} (keys are strings); {takes}"
    if key == "advisory":
        return "advisory is a step key beside check, not a key of a question"
    if (kind, key) in _MISPLACED:
        return f"{key} does not belong here: {_MISPLACED[(kind, key)]}"
    # A key of this kind first; only then one of another kind, said to be so.
    match = meant(key, _KEYS[kind])
    if match is not None:
        return f'unknown key {show(key)}; did you mean "{match}"? {takes}'
    match = meant(key, _ALL_KEYS)
    if match is not None:
        kinds = " and ".join(_KIND_NAMES[k] for k in _KEYS if match in _KEYS[k])
        return f'unknown key {show(key)}; "{match}" is a key of {kinds} questions, and {takes}'
    return f"unknown key {show(key)}; {takes}"


def _semantic(question: dict[Any, Any], kind: Kind, at: Path, limits: Limits) -> Iterator[Problem]:
    # Only values the structural pass accepted are judged here, so one fault gives one problem.
    # NaN passes `minimum` and `maximum` (every comparison with it is false), so the schema
    # lets it through exactly where it asks for a probability.
    for key in _PROBABILITIES[kind]:
        value = question.get(key)
        if isinstance(value, float) and math.isnan(value):
            yield Problem((*at, key), f"expected a number in [0, 1], got {show(value)}")
    if kind == "yes_no":
        yield from _thresholds(question, at, limits)
    elif kind == "choice":
        yield from _choice(question, at)
    else:
        yield from _rubric(question, at)


def _thresholds(question: dict[Any, Any], at: Path, limits: Limits) -> Iterator[Problem]:
    pass_, fail = question.get("pass"), question.get("fail")
    if "pass" in question and "fail" in question:
        if is_probability(pass_) and is_probability(fail) and fail > pass_:
            yield Problem(
                (*at, "fail"),
                f"fail {show(fail)} is above pass {show(pass_)}: fail must be at or below pass"
                " (equal means no unsure band)",
            )
    elif "fail" in question:
        if is_probability(fail) and fail > limits.check_pass:
            yield Problem(
                (*at, "fail"),
                f"fail {show(fail)} is above the default pass {show(limits.check_pass)}"
                " (describe.limits.checkPass): fail must be at or below pass; set pass too",
            )
    elif (
        "pass" in question
        and limits.check_fail is not None
        and is_probability(pass_)
        and pass_ < limits.check_fail
    ):
        yield Problem(
            (*at, "pass"),
            f"pass {show(pass_)} is below the default fail {show(limits.check_fail)}"
            " (describe.limits.checkFail): give this question its own fail",
        )


def _is_text(value: object) -> TypeGuard[str]:
    # A non-blank string: what the schema's "text" accepts (its pattern is WHITESPACE's
    # complement), so the semantic pass judges only what the structural pass let through.
    return isinstance(value, str) and not is_blank(value)


def _texts(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _choice(question: dict[Any, Any], at: Path) -> Iterator[Problem]:
    one_of = question.get("one_of")
    names: list[str] | None = None
    if isinstance(one_of, dict):
        for name in one_of:
            if not _is_text(name):
                yield Problem(
                    (*at, "one_of", name),
                    f"expected an answer name (a non-blank string), got {show(name)}",
                )
        yield from _alike_names(one_of, at)
        if one_of and all(_is_text(name) for name in one_of):
            names = list(one_of)
    known = frozenset(names or ())
    hints = _Hints()
    seen_in_pass: set[str] = set()
    for key in ("pass", "unsure"):
        listed = question.get(key)
        if not isinstance(listed, list):
            continue
        seen: dict[str, int] = {}
        for index, name in enumerate(listed):
            if not _is_text(name):
                continue  # the structural pass reported it (one fault, one problem)
            where = (*at, key, index)
            if name in seen:
                yield Problem(
                    where, f"{show(name)} is listed twice in {key} (first at {seen[name]})"
                )
                continue
            seen[name] = index
            if key == "unsure" and name in seen_in_pass:
                yield Problem(
                    where, f"{show(name)} is in both pass and unsure; an answer is one or the other"
                )
            elif names is not None and name not in known:
                hint = hints.hint(name, names)
                yield Problem(
                    where, f"{show(name)} is not an answer of one_of ({names_text(names)}){hint}"
                )
        if key == "pass":
            seen_in_pass = set(seen)


def _alike_names(one_of: dict[Any, Any], at: Path) -> Iterator[Problem]:
    """An answer name that reads as an earlier one (:func:`~._alike.as_read`): no receipt
    could show a person which of the two the model chose."""
    first: dict[str, str] = {}
    for name in one_of:
        if not _is_text(name):
            continue
        read = as_read(name)
        if read in first:
            yield Problem(
                (*at, "one_of", name),
                f"the same answer name as an earlier one ({both_shown(first[read], name)}):"
                " every name in one_of must differ",
            )
        else:
            first[read] = name


class _Hints:
    """Close-match hints (``did you mean "states"?``), bounded: difflib compares a name with
    every candidate, so a hint is looked for only among at most :data:`_HINT_CANDIDATES`
    names, for at most :data:`_HINTS` problems of one question, each name at most
    :data:`_HINT_CHARS` long. A check with more gets its problems without hints."""

    def __init__(self) -> None:
        self.left = _HINTS

    def hint(self, name: str, names: list[str]) -> str:
        if self.left <= 0 or len(names) > _HINT_CANDIDATES or len(name) > _HINT_CHARS:
            return ""
        self.left -= 1
        match = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        return f"; did you mean {show(match[0])}?" if match else ""


_HINTS = 20
_HINT_CANDIDATES = 100
_HINT_CHARS = 100


def _rubric(question: dict[Any, Any], at: Path) -> Iterator[Problem]:
    levels = question.get("levels")
    if not isinstance(levels, list):
        return
    first: dict[str, int] = {}
    for index, text in enumerate(levels):
        if not isinstance(text, str):
            continue  # the structural pass reported it
        if not _is_text(text):
            continue  # a blank level is its own problem, and takes no part in repeats
        read = as_read(text)  # "" for a text of invisible characters alone: not blank
        if read in first:
            earlier = first[read]
            yield Problem(
                (*at, "levels", index),
                f"level {index} repeats level {earlier} ({both_shown(levels[earlier], text)}):"
                " levels must differ",
            )
        first.setdefault(read, index)
    level = question.get("pass")
    if _texts(levels) and 2 <= len(levels) <= 10 and is_integral(level) and level >= 0:
        top = len(levels) - 1
        if level > top:
            yield Problem(
                (*at, "pass"),
                f"expected a level from 0 to {top} (levels are numbered from 0, worst first),"
                f" got {show(level)}",
            )


def _duplicate_asks(raw: list[Any]) -> Iterator[Problem]:
    # Asks a person reads alike (:func:`~._alike.as_read`: whitespace, NFC, invisible
    # characters) would print the same issue line and receipt, so they count as the same.
    first: dict[str, tuple[int, str]] = {}
    for index, question in enumerate(raw):
        if not isinstance(question, dict):
            continue
        ask = question.get("ask")
        if not _is_text(ask):
            continue
        read = as_read(ask)
        if read in first:
            earlier, earlier_ask = first[read]
            yield Problem(
                (index, "ask"),
                f"the same ask as question {earlier} ({both_shown(earlier_ask, ask)}): every"
                " ask in a check must differ (split or reword the question)",
            )
        else:
            first[read] = (index, ask)
