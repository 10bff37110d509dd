"""PROCESS.md files: reading them, the profile's publication rules, and material for a step.

A PROCESS.md file is YAML frontmatter between two ``---`` lines, then a markdown body. Its
``steps`` list holds the steps; a step's kind is the key that holds its text (``agent``,
``task``, ``approve``, ``wait``, ``wait_until``, ``wait_for``, ``finish``). The ``check-1``
profile adds two step keys, ``check`` and ``advisory`` (profile, sections 2 and 3), and says
when a server refuses a process at publication. Reading and the rules are pure: they take text
and give values and problems.

Two tiers of rules, as a server applies them:

1. **core-2's shape** (:func:`read_process`): the whole frontmatter against
   ``schemas/process.schema.json`` (every map closed, every type, the required keys, the
   ``name`` pattern), and step ids that repeat. A :class:`Process` is a file that passes.
2. **the profile's rules** (:func:`publication_problems`): what depends on the server (its
   profiles, whether an evaluator is configured, its limits): ``check`` only on agent and task
   steps, ``advisory`` only beside ``check``, every check key valid under the limits.

The value of ``check`` belongs to tier 2 alone (it can be judged only under the server's
limits), so one fault gives one problem. :func:`lint_process` gives both tiers at once.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from ._alike import as_read, both_shown
from ._check import Check
from ._convert import NotJson, plain
from ._fastschema import SchemaError, Validator
from ._files import file_name, read_bounded
from ._limits import Limits
from ._schemas import schema_file
from ._shown import meant, names_text, show, shown_pointer
from ._validate import parse_check, validate_check
from ._yaml import Document, Mark, YamlError, load_yaml
from .errors import CheckError, CheckprofileError, Problem

if TYPE_CHECKING:
    from ._bundle import Material, Submission

__all__ = [
    "CHECK_STEP_KINDS",
    "PROFILE",
    "Process",
    "ProcessError",
    "ProcessProblem",
    "ProcessStep",
    "describe_fragment",
    "lint_process",
    "load_process",
    "material_for",
    "process_problems",
    "process_text",
    "publication_problems",
    "read_process",
]

#: The profile's name in ``describe.profiles``.
PROFILE: Final = "check-1"

#: The step kinds a ``check`` may sit on (profile: "a `check:` key on an `agent` or `task`
#: step").
CHECK_STEP_KINDS: Final = ("agent", "task")

# The keys that name a step's kind and hold its text (core-2: "the step's kind and its text").
# `agent` and `task` are the ones the profile names. `parallel` is no kind: it lists step ids.
# A step of one kind is of that kind; a step with two kind keys, or none, is of no kind.
_KIND_KEYS: Final = ("agent", "task", "approve", "wait", "wait_until", "wait_for", "finish")

_FENCE: Final = "---"

# A check question's keys written at the step's level: usually a question indented too little.
_QUESTION_KEYS: Final = ("ask", "pass", "fail", "one_of", "unsure", "levels", "confidence")

Location = tuple[str | int, ...]


@attrs.frozen
class ProcessProblem:
    """One problem of a process, where it is in the file.

    ``path`` runs from the frontmatter's root (``("steps", 2, "check", 0, "pass")``);
    ``line`` and ``column`` (1-based, the file's own lines) are where the offending key or
    value starts.
    """

    path: tuple[str | int, ...]
    message: str
    line: int
    column: int

    @property
    def pointer(self) -> str:
        """``path`` as an RFC 6901 JSON Pointer."""
        return Problem(self.path, self.message).pointer

    def format(self, source: str) -> str:
        """The problem as one line: ``SOURCE:LINE:COL: POINTER: message``."""
        return f"{source}:{self.line}:{self.column}: {shown_pointer(self.pointer)}: {self.message}"


class ProcessError(CheckprofileError, ValueError):
    """A file that is not a process a server would take, or a step that is not there.

    Two kinds, told apart by ``problems``:

    * ``problems`` is empty: the file cannot be read as a process at all (no frontmatter, not
      UTF-8, invalid YAML, a duplicate key), or a step looked up is missing. ``message`` says
      what, ``mark`` where (``None`` when nowhere in particular), and ``str()`` is one line:
      ``SOURCE:LINE:COL: message``.
    * ``problems`` holds every :class:`ProcessProblem` that makes core-2 refuse the file's
      frontmatter (an unknown or misspelt key, a wrong type, a missing key, a bad ``name``, a
      repeated step id), in file order. ``str()`` is one line per problem,
      ``SOURCE:LINE:COL: POINTER: message``; ``mark`` is where the first one is.
    """

    problems: tuple[ProcessProblem, ...]

    def __init__(
        self,
        message: str,
        *,
        source: str,
        mark: Mark | None = None,
        problems: Sequence[ProcessProblem] = (),
    ) -> None:
        self.problems = tuple(problems)
        if self.problems:
            text = "\n".join(problem.format(source) for problem in self.problems)
        else:
            text = f"{source if mark is None else f'{source}:{mark.line}:{mark.column}'}: {message}"
        super().__init__(text)
        self.message = message
        self.source = source
        self.mark = mark


@attrs.frozen
class ProcessStep:
    """One entry of ``steps``: its ``index``, ``id`` and ``kind`` (the one kind key it has:
    ``agent``, ``task``, ``approve``, ``wait``, ``wait_until``, ``wait_for`` or ``finish``;
    ``None`` when it has none, or two), its ``instructions`` (the text under its kind key;
    ``None`` when that is not text) and the raw ``data``."""

    index: int
    id: str | None
    kind: str | None
    instructions: str | None
    data: Mapping[str, Any] = attrs.field(repr=False)

    @property
    def has_check(self) -> bool:
        return "check" in self.data

    @property
    def advisory(self) -> bool:
        """Whether the step's check is advisory (``advisory: true`` beside ``check``): its
        verdicts are recorded and never block. Only a real ``true`` is; a step whose
        ``advisory`` is not a boolean is refused at publication."""
        return self.has_check and self.data.get("advisory") is True


@attrs.frozen
class Process:
    """A PROCESS.md file read: the frontmatter as plain data (with where each part of it is),
    the ``body`` exactly as written, and the ``steps`` that are maps.

    A ``Process`` from :func:`read_process` or :func:`load_process` has core-2's shape: every
    key known, every value of the right type, step ids unique. The profile's rules (which
    depend on the server) are :func:`publication_problems`.
    """

    source: str
    document: Document = attrs.field(repr=False)
    body: str = attrs.field(repr=False)
    steps: tuple[ProcessStep, ...]

    @property
    def data(self) -> Mapping[str, Any]:
        """The frontmatter."""
        result: Mapping[str, Any] = self.document.data
        return result

    def step(self, step_id: str) -> ProcessStep:
        """The step with this id; a :class:`ProcessError` naming the ids there are if none,
        or where the id is used twice (a step cannot be told from its namesake; only a
        ``Process`` built by hand can have such a step, as :func:`read_process` refuses it)."""
        if not issubclass(type(step_id), str):
            raise TypeError(f"a step id is a string, got {show(step_id)}")
        step_id = str.__str__(step_id)
        found = [step for step in self.steps if step.id == step_id]
        if len(found) > 1:
            lines = [self.document.locate(("steps", step.index)).line for step in found]
            raise ProcessError(
                f"step id {show(step_id)} is used by more than one step (lines "
                f"{', '.join(map(str, lines))})",
                source=self.source,
                mark=self.document.locate(("steps", found[1].index, "id")),
            )
        if found:
            return found[0]
        ids = names_text([step.id for step in self.steps if step.id is not None]) or "none"
        raise ProcessError(
            f"no step has id {show(step_id)} (steps: {ids})",
            source=self.source,
            mark=self.document.locate(("steps",), key=True),
        )

    def problem(
        self, path: tuple[str | int, ...], message: str, *, key: bool = False
    ) -> ProcessProblem:
        """A problem at ``path``, placed at its key (``key``) or its value in the file."""
        return _problem(self.document, path, message, key=key)

    def check_for(self, step_id: str, *, limits: Limits = Limits()) -> Check:
        """The step's check, parsed under ``limits`` (which it remembers, see
        :attr:`~checkprofile.Check.limits`). A :class:`ProcessError` when the step has
        no check; a :class:`~checkprofile.CheckError` whose problems are rooted at the
        frontmatter (``/steps/<i>/check/...``) when the key is not valid."""
        step = self.step(step_id)
        if not step.has_check:
            raise ProcessError(
                f"step {show(step_id)} has no check",
                source=self.source,
                mark=self.document.locate(("steps", step.index)),
            )
        try:
            return parse_check(step.data["check"], limits=limits)
        except CheckError as error:
            raise CheckError(
                tuple(p.rerooted("steps", step.index, "check") for p in error.problems)
            ) from None


def _problem(
    document: Document, path: Location, message: str, *, key: bool = False
) -> ProcessProblem:
    mark = document.locate(path, key=key)
    return ProcessProblem(path, message, mark.line, mark.column)


def _refused(problems: Sequence[ProcessProblem], *, source: str) -> ProcessError:
    """The error for a file whose frontmatter has these (one or more) shape problems."""
    count = len(problems)
    first = problems[0]
    return ProcessError(
        f"core-2 refuses this frontmatter: {count} problem{'s' * (count != 1)}",
        source=source,
        mark=Mark(first.line, first.column),
        problems=problems,
    )


def _in_file_order(problems: Iterable[ProcessProblem]) -> tuple[ProcessProblem, ...]:
    # A stable sort: problems at the same place keep the order they were found in.
    return tuple(sorted(problems, key=lambda p: (p.line, p.column)))


# Reading --------------------------------------------------------------------------------------


def read_process(text: str, *, source: str = "<string>") -> Process:
    """Read a PROCESS.md file's text. ``source`` names it in errors.

    Raises :class:`ProcessError`: with no ``problems`` when the text is not a readable process
    (no frontmatter, invalid YAML, a duplicate key); with every problem at once, in file order,
    when core-2 refuses the frontmatter's shape (see :func:`lint_process` for these and the
    profile's rules together). The ``check`` values are not judged here: they can be judged
    only under a server's limits, by :func:`publication_problems`. Raises :class:`TypeError`
    for a ``text`` that is not a string.
    """
    document, body = _read(_text_arg(text), _text_arg(source))
    problems = _shape_problems(document)
    if problems:
        raise _refused(_in_file_order(problems), source=source)
    steps = tuple(_step(index, raw) for index, raw in enumerate(document.data["steps"]))
    return Process(source, document, body, steps)


def process_text(path: str | Path, *, source: str | None = None) -> str:
    """A PROCESS.md file's text (UTF-8), or a :class:`ProcessError` naming the path as given
    (or as ``source``). Raises :class:`TypeError` for a path that is not a path."""
    name = ""
    try:
        name = file_name(path)
        return read_bounded(name).decode("utf-8")
    except UnicodeDecodeError as error:
        where = name if source is None else source
        raise ProcessError(f"not UTF-8 text (byte {error.start})", source=where) from None
    except OSError as error:
        where = str(error.filename or name) if source is None else source
        raise ProcessError(f"cannot read: {error.strerror or error}", source=where) from None


def load_process(path: str | Path) -> Process:
    """Read a PROCESS.md file from disk (UTF-8), as :func:`read_process` does; errors name the
    path as given. Raises :class:`TypeError` for a path that is not a path."""
    text = process_text(path)
    return read_process(text, source=file_name(path))


def _profiles(profiles: object) -> tuple[str, ...]:
    """The profiles a server offers, in order, each once: a list, tuple or set of strings
    (never a lone string, whose letters would be taken as profile names). Raises
    :class:`TypeError`."""
    kind = type(profiles)
    if issubclass(kind, (list, tuple, set, frozenset)):
        iterate = {list: list.__iter__, tuple: tuple.__iter__, set: set.__iter__}
        base = next(b for b in (list, tuple, set, frozenset) if issubclass(kind, b))
        names = list(iterate.get(base, frozenset.__iter__)(profiles))  # type: ignore[operator]
        if all(issubclass(type(name), str) for name in names):
            return tuple(dict.fromkeys(str.__str__(name) for name in names))
    raise TypeError(f"profiles must be a list of profile names (strings), got {show(profiles)}")


def _limits_arg(limits: object) -> Limits:
    if type(limits) is not Limits:
        raise TypeError(f"limits must be a Limits (see Limits.from_json), got {show(limits)}")
    return limits


def _flag(name: str, value: object) -> bool:
    if type(value) is not bool:
        raise TypeError(f"{name} must be true or false (a bool), got {show(value)}")
    return value


def lint_process(
    text: str,
    *,
    source: str = "<string>",
    profiles: Iterable[str],
    evaluator_configured: bool = True,
    limits: Limits = Limits(),
) -> tuple[ProcessProblem, ...]:
    """Every problem that makes a server offering ``profiles`` refuse this PROCESS.md text, in
    file order: core-2's shape (what :func:`read_process` refuses) and the profile's rules
    (what :func:`publication_problems` reports), together. This is ``checkprofile lint``.

    Raises :class:`ProcessError` only when the text is not a readable process at all (no
    frontmatter, invalid YAML, a duplicate key), and :class:`TypeError` for arguments of the
    wrong type (``text`` not a string, ``profiles`` not a list of strings).
    """
    offered = frozenset(_profiles(profiles))
    _flag("evaluator_configured", evaluator_configured)
    _limits_arg(limits)
    document, _ = _read(_text_arg(text), _text_arg(source))
    problems = _shape_problems(document)
    problems.extend(_profile_problems(document, offered, evaluator_configured, limits))
    return _in_file_order(problems)


def process_problems(
    frontmatter: object,
    *,
    profiles: Iterable[str],
    evaluator_configured: bool = True,
    limits: Limits = Limits(),
) -> tuple[Problem, ...]:
    """:func:`lint_process` for a frontmatter that is data already (a host that keeps its
    processes as JSON, or has read the YAML itself): every problem that makes a server offering
    ``profiles`` refuse it, core-2's shape and the profile's rules, as paths and messages in
    document order. A value that is not JSON data is one problem at its path. Raises
    :class:`TypeError` only for arguments of the wrong type."""
    offered = frozenset(_profiles(profiles))
    _flag("evaluator_configured", evaluator_configured)
    _limits_arg(limits)
    try:
        data = plain(frontmatter)
    except NotJson as error:
        return (Problem(error.path, error.reason),)
    document = Document.unplaced(data)
    problems = _shape_problems(document)
    problems.extend(_profile_problems(document, offered, evaluator_configured, limits))
    return tuple(Problem(p.path, p.message) for p in _in_file_order(problems))


def _text_arg(text: object) -> str:
    if not issubclass(type(text), str):
        raise TypeError(f"a process file's text is a string, got {show(text)}")
    return str.__str__(text)


def _read(text: str, source: str) -> tuple[Document, str]:
    frontmatter, offset, body = _split(text, source)
    try:
        document = load_yaml(frontmatter, line_offset=offset)
    except YamlError as error:
        raise ProcessError(
            f"invalid YAML: {error.message}", source=source, mark=error.mark
        ) from None
    return document, body


def _split(text: str, source: str) -> tuple[str, int, str]:
    """The frontmatter, how many lines come before it, and the body exactly as written."""
    text = text.removeprefix("\ufeff")
    # YAML 1.2's line breaks only (LF, CR LF, CR): str.splitlines also breaks at NEL, U+2028
    # and more, which would let a "---" inside a scalar end the frontmatter.
    lines = io.StringIO(text, newline="").readlines()
    if not lines or lines[0].rstrip("\r\n").rstrip() != _FENCE:
        raise ProcessError(
            'no frontmatter: a PROCESS.md file starts with a "---" line, then YAML, then "---"',
            source=source,
            mark=Mark(1, 1),
        )
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip("\r\n").rstrip() == _FENCE:
            return "".join(lines[1:number]), 1, "".join(lines[number + 1 :])
    raise ProcessError(
        'the frontmatter never ends: no closing "---" line after the one on line 1',
        source=source,
        mark=Mark(1, 1),
    )


def _kinds(data: Mapping[str, Any]) -> list[str]:
    """The kind keys a step has, in the order of _KIND_KEYS."""
    return [key for key in _KIND_KEYS if key in data]


def _step(index: int, data: dict[str, Any]) -> ProcessStep:
    kinds = _kinds(data)
    kind = kinds[0] if len(kinds) == 1 else None
    instructions = data.get(kind) if kind is not None else None
    step_id = data.get("id")
    return ProcessStep(
        index=index,
        id=step_id if isinstance(step_id, str) else None,
        kind=kind,
        instructions=instructions if isinstance(instructions, str) else None,
        data=data,
    )


# core-2's shape -------------------------------------------------------------------------------


@cache
def _shape_validator() -> Validator:
    # A number is finite: NaN and the infinities have no JSON form, so no core-2 server sees
    # one (a YAML file can write them).
    return Validator(schema_file("process"), explain=True, finite=True)


def _resolved(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with a ``#/$defs/NAME`` reference followed (the only kind the file has)."""
    while "$ref" in schema:
        schema = schema_file("process")["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _shape_problems(document: Document) -> list[ProcessProblem]:
    """Every problem core-2's shape finds, then the repeated step ids (a rule no schema
    states)."""
    found: dict[ProcessProblem, None] = {}
    valid = _shape_validator().is_valid(document.data)
    # One fault, one problem: a value that breaks two keywords (a long name with a space in
    # it) is described once, by the first, since each message names everything expected.
    # (A missing key is reported once per `required` error, as jsonschema does: kept once.)
    described: set[Location] = set()
    for error in () if valid else _shape_validator().iter_errors(document.data):
        for path, message, place in _from_schema_error(error):
            if place == "value":
                if path in described:
                    continue
                described.add(path)
            found.setdefault(_problem(document, path, message, key=place == "key"))
    found.update(dict.fromkeys(_repeated_ids(document)))
    return list(found)


# What a problem from the schema is about, which decides where it is shown: a key (unknown, or
# an empty field name), a value (of the wrong type or shape), or a map that lacks a key.
Place = Literal["key", "value", "map"]


def _from_schema_error(error: SchemaError) -> Iterator[tuple[Location, str, Place]]:
    """(path, message, what it is about) for each problem one schema error stands for."""
    path: Location = error.absolute_path
    keyword, instance, schema = error.validator, error.instance, error.schema
    if keyword == "anyOf":
        branch = _branch_for(instance, schema["anyOf"])
        if branch is None:
            yield path, f"expected {schema['description']}, got {show(instance)}", "value"
            return
        for sub in error.context:
            if sub.schema_path[0] == branch:
                yield from _from_schema_error(sub)
    elif keyword == "required":
        properties = schema["properties"]
        # One fault, one problem: a misspelt key ("stepz") is reported as the unknown key it
        # is, with its hint, and not again as the key it meant being missing.
        misspelt = set()
        if schema.get("additionalProperties") is False:
            misspelt = {meant(key, list(properties)) for key in instance if key not in properties}
        for name in error.validator_value:
            if name not in instance and name not in misspelt:
                wanted = _resolved(properties[name])["description"]
                yield path, f'missing "{name}": {schema["title"]} needs {wanted}', "map"
    elif keyword == "additionalProperties":
        allowed = list(schema["properties"])
        for name in instance:
            if name not in allowed:
                yield (*path, name), _unknown_key(name, schema["title"], allowed), "key"
    elif error.schema_path[-2:-1] == ("propertyNames",):
        yield (*path, instance), f"expected {schema['description']}, got {show(instance)}", "key"
    else:
        yield path, _unexpected(keyword, schema, instance), "value"


def _branch_for(instance: object, branches: Sequence[Mapping[str, Any]]) -> int | None:
    """Which branch of an ``anyOf`` the value meant, by its JSON type (each branch of the
    schema has its own type)."""
    validator = _shape_validator()
    for index, branch in enumerate(branches):
        types = _resolved(branch)["type"]
        kinds = [types] if isinstance(types, str) else types
        if any(validator.is_type(instance, kind) for kind in kinds):
            return index
    return None


def _unexpected(keyword: str, schema: Mapping[str, Any], instance: object) -> str:
    expected = schema.get("description", f"a value allowed by {keyword}")
    message = f"expected {expected}, got {show(instance)}"
    if keyword == "maxLength" and isinstance(instance, str):
        message += f" ({len(instance)} characters)"
    elif keyword == "enum" and isinstance(instance, str):
        match = meant(instance, schema["enum"])
        if match is not None:
            message += f'; did you mean "{match}"?'
    return message


def _unknown_key(key: str, title: str, allowed: Sequence[str]) -> str:
    if "check" in allowed and key in _QUESTION_KEYS:
        return (
            f'unknown key "{key}": {key} is a key of a check question, not of a step '
            "(is it indented under check?)"
        )
    match = meant(key, allowed)
    if match is not None:
        return f'unknown key {show(key)}; did you mean "{match}"?'
    return f"unknown key {show(key)}; {title} takes {', '.join(allowed)}"


def _repeated_ids(document: Document) -> Iterator[ProcessProblem]:
    """A step id that an earlier step already has, as a person reads it
    (:func:`~._alike.as_read`), at the later copy."""
    first: dict[str, tuple[int, str]] = {}
    for index, step in enumerate(_steps_of(document.data)):
        step_id = step.get("id") if isinstance(step, dict) else None
        if not isinstance(step_id, str):
            continue
        read = as_read(step_id)
        if read not in first:
            first[read] = (index, step_id)
            continue
        earlier_index, earlier_id = first[read]
        earlier = ("steps", earlier_index, "id")
        where = (
            f"the step on line {document.locate(earlier).line}"
            if document.placed
            else f"step {earlier_index}"
        )
        yield _problem(
            document,
            ("steps", index, "id"),
            f"step id {both_shown(earlier_id, step_id)} is already the id of {where}: "
            "ids are unique within a process",
        )


def _steps_of(data: object) -> list[Any]:
    steps = data.get("steps") if isinstance(data, dict) else None
    return steps if isinstance(steps, list) else []


# The profile's rules ------------------------------------------------------------------------


def publication_problems(
    process: Process,
    *,
    profiles: Iterable[str],
    evaluator_configured: bool = True,
    limits: Limits = Limits(),
) -> tuple[ProcessProblem, ...]:
    """Every problem of the profile that makes a server refuse ``process`` at publication, in
    file order. (The process has core-2's shape already: :func:`read_process` made sure.)

    ``profiles`` is what the server offers (its ``describe.profiles``); without ``check-1``,
    or without an evaluator configured, any step with ``check`` is refused. ``check`` may sit
    only on ``agent`` and ``task`` steps; ``advisory`` only beside ``check``; each check key
    must be valid under ``limits`` (the core's problems, rooted at ``/steps/<i>/check``).
    Raises :class:`TypeError` for arguments of the wrong type.
    """
    if type(process) is not Process:
        raise TypeError(
            f"publication_problems takes a Process (see read_process), got {show(process)}"
        )
    offered = frozenset(_profiles(profiles))
    _flag("evaluator_configured", evaluator_configured)
    _limits_arg(limits)
    return _in_file_order(
        _profile_problems(process.document, offered, evaluator_configured, limits)
    )


def _profile_problems(
    document: Document, offered: frozenset[str], evaluator_configured: bool, limits: Limits
) -> Iterator[ProcessProblem]:
    # The frontmatter may not have core-2's shape here (lint_process): only the steps that are
    # maps are judged, and only by what the shape accepted, so one fault gives one problem.
    for index, raw in enumerate(_steps_of(document.data)):
        if isinstance(raw, dict):
            yield from _step_problems(
                document, _step(index, raw), offered, evaluator_configured, limits
            )


def _step_problems(
    document: Document,
    step: ProcessStep,
    offered: frozenset[str],
    evaluator_configured: bool,
    limits: Limits,
) -> Iterator[ProcessProblem]:
    at: Location = ("steps", step.index)
    name = f"step {show(step.id)}" if step.id is not None else f"step {step.index}"
    # A non-boolean advisory is the shape's problem; only a real true or false is misplaced.
    if isinstance(step.data.get("advisory"), bool) and not step.has_check:
        yield _problem(
            document, (*at, "advisory"), "advisory is allowed only beside check", key=True
        )
    if not step.has_check:
        return
    where = (*at, "check")
    if PROFILE not in offered:
        listed = ", ".join(sorted(offered)) or "none"
        yield _problem(
            document,
            where,
            f"check needs the {PROFILE} profile, which this server does not offer "
            f"(profiles: {listed})",
            key=True,
        )
    elif not evaluator_configured:
        yield _problem(
            document,
            where,
            "check needs an evaluator, and this server has none configured",
            key=True,
        )
    # A step with no kind and an unknown key that is a close spelling of one (`agnet:`) has its
    # kind misspelt: the shape names that key, and the step's kind is not guessed at.
    kinds = _kinds(step.data)
    if step.kind not in CHECK_STEP_KINDS and not (not kinds and _misspelt_kind(step.data)):
        if len(kinds) > 1:
            kind = f"a step of {len(kinds)} kinds ({names_text(kinds)})"
        elif step.kind is not None:
            kind = f"an {step.kind} step" if step.kind[0] in "aeiou" else f"a {step.kind} step"
        else:
            kind = "a step with no agent or task"
        yield _problem(
            document,
            where,
            f"check is allowed only on agent and task steps; {name} is {kind}",
            key=True,
        )
    for problem in validate_check(step.data["check"], limits=limits):
        rooted = problem.rerooted(*where)
        # An unknown key is best shown at the key itself; anything else at the value.
        yield _problem(document, rooted.path, rooted.message, key=_about_key(rooted.message))


def _misspelt_kind(step: Mapping[str, Any]) -> bool:
    """Whether a key of ``step`` that core-2 does not know is a close spelling of a kind key."""
    known = list(_resolved({"$ref": "#/$defs/step"})["properties"])
    return any(
        key not in known and meant(key, known) in _KIND_KEYS for key in step if isinstance(key, str)
    )


def _about_key(message: str) -> bool:
    # validate_check's problems with a key a question does not take: unknown, a key of
    # another kind of question, or advisory (a step key). Each is shown at the key to remove.
    return (
        message.startswith(("unknown key", "advisory is a step key"))
        or " does not belong here: " in message
    )


def describe_fragment(
    *,
    evaluator_configured: bool,
    run_data_bytes: int,
    limits: Limits = Limits(),
    profiles: Iterable[str] = (),
) -> dict[str, Any]:
    """The part of a server's ``describe`` that this profile sets.

    ``profiles``: the server's other profiles, to which ``check-1`` is added only while an
    evaluator is configured. ``limits``: ``runDataBytes`` and the four check limits
    (``checkFail`` is ``null`` when there is no default fail threshold). Raises
    :class:`ValueError` for a ``run_data_bytes`` that is not a positive int, and
    :class:`TypeError` for other arguments of the wrong type.
    """
    if type(run_data_bytes) is not int or run_data_bytes < 1:
        raise ValueError(f"run_data_bytes must be a positive int, got {show(run_data_bytes)}")
    _flag("evaluator_configured", evaluator_configured)
    _limits_arg(limits)
    listed = [name for name in _profiles(profiles) if name != PROFILE]
    if evaluator_configured:
        listed.append(PROFILE)
    check = limits.to_json()
    return {
        "profiles": listed,
        "limits": {
            "runDataBytes": run_data_bytes,
            "checkPass": check["checkPass"],
            "checkFail": check.get("checkFail"),
            "checkConfidence": check["checkConfidence"],
            "checkStateBytes": check["checkStateBytes"],
        },
    }


def material_for(
    process: Process,
    step_id: str,
    *,
    submission: Submission,
    run_data: Mapping[str, Any],
    show_route: bool = False,
) -> Material:
    """What the evaluator may see for a submission to ``step_id``: the step's instructions,
    the body exactly as written, the run data and the submission, its route (``next``,
    ``reason``) only with ``show_route=True``. Raises :class:`ProcessError` for a step that
    is not there or has no instructions, and :class:`TypeError` for arguments of the wrong
    type."""
    from ._bundle import Material, Submission

    if type(process) is not Process:
        raise TypeError(f"material_for takes a Process (see read_process), got {show(process)}")
    if type(submission) is not Submission:
        raise TypeError(f"submission must be a Submission, got {show(submission)}")
    _flag("show_route", show_route)
    step = process.step(step_id)
    if step.instructions is None:
        what = step.kind or "agent or task"
        raise ProcessError(
            f'step {show(step_id)} has no instructions (its "{what}" is not text)',
            source=process.source,
            mark=process.document.locate(("steps", step.index, step.kind or "id")),
        )
    return Material(
        instructions=step.instructions,
        body=process.body,
        run_data=run_data,
        submission=submission,
        show_route=show_route,
    )
