"""PROCESS.md files: reading them, the profile's publication rules, and material for a step.

A PROCESS.md file is YAML frontmatter between two ``---`` lines, then a markdown body. Its
``steps`` list holds the steps; a step's kind is the key that holds its instructions (``agent``,
``task``, ``approve``...). The ``check-1`` profile adds two step keys, ``check`` and
``advisory`` (profile, sections 2 and 3), and says when a server refuses a process at
publication. Reading and the rules are pure: they take text and give values and problems.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from ._bundle import Material, Submission
from ._check import Check
from ._convert import show
from ._limits import Limits
from ._validate import parse_check, validate_check
from ._yaml import Document, Mark, YamlError, load_yaml
from .errors import CheckError, CheckprofileError, Problem

__all__ = [
    "CHECK_STEP_KINDS",
    "PROFILE",
    "Process",
    "ProcessError",
    "ProcessProblem",
    "ProcessStep",
    "describe_fragment",
    "load_process",
    "material_for",
    "publication_problems",
    "read_process",
]

#: The profile's name in ``describe.profiles``.
PROFILE: Final = "check-1"

#: The step kinds a ``check`` may sit on (profile: "a `check:` key on an `agent` or `task`
#: step").
CHECK_STEP_KINDS: Final = ("agent", "task")

# The keys that name a step's kind and hold its instructions. A step is of the first of these
# it has; `agent` and `task` are the ones the profile names, the rest are the core's other kinds.
_KIND_KEYS: Final = ("agent", "task", "approve")

_FENCE: Final = "---"


class ProcessError(CheckprofileError, ValueError):
    """A file that is not a readable process: no frontmatter, bad YAML, ``steps`` not a list,
    no such step. ``str()`` is one line: ``SOURCE:LINE:COL: message``."""

    def __init__(self, message: str, *, source: str, mark: Mark | None = None) -> None:
        where = source if mark is None else f"{source}:{mark.line}:{mark.column}"
        super().__init__(f"{where}: {message}")
        self.message = message
        self.source = source
        self.mark = mark


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
        return f"{source}:{self.line}:{self.column}: {self.pointer or '/'}: {self.message}"


@attrs.frozen
class ProcessStep:
    """One entry of ``steps``: its ``index``, ``id`` and ``kind`` (``None`` when absent or not
    text), its ``instructions`` (the text under its kind key) and the raw ``data``."""

    index: int
    id: str | None
    kind: str | None
    instructions: str | None
    data: Mapping[str, Any] = attrs.field(repr=False)

    @property
    def has_check(self) -> bool:
        return "check" in self.data


@attrs.frozen
class Process:
    """A PROCESS.md file read: the frontmatter as plain data (with where each part of it is),
    the ``body`` exactly as written, and the ``steps`` that are maps."""

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
        or where the id is used twice (a step cannot be told from its namesake)."""
        found = [step for step in self.steps if step.id == step_id]
        if len(found) > 1:
            lines = [self.document.locate(("steps", step.index)).line for step in found]
            raise ProcessError(
                f'step id "{step_id}" is used by more than one step (lines '
                f"{', '.join(map(str, lines))})",
                source=self.source,
                mark=self.document.locate(("steps", found[1].index, "id")),
            )
        if found:
            return found[0]
        ids = ", ".join(step.id for step in self.steps if step.id is not None) or "none"
        raise ProcessError(
            f'no step has id "{step_id}" (steps: {ids})',
            source=self.source,
            mark=self.document.locate(("steps",), key=True),
        )

    def problem(
        self, path: tuple[str | int, ...], message: str, *, key: bool = False
    ) -> ProcessProblem:
        """A problem at ``path``, placed at its key (``key``) or its value in the file."""
        mark = self.document.locate(path, key=key)
        return ProcessProblem(path, message, mark.line, mark.column)

    def check_for(self, step_id: str, *, limits: Limits = Limits()) -> Check:
        """The step's check, parsed under ``limits``. A :class:`ProcessError` when the step has
        no check; a :class:`~checkprofile.CheckError` whose problems are rooted at the
        frontmatter (``/steps/<i>/check/...``) when the key is not valid."""
        step = self.step(step_id)
        if not step.has_check:
            raise ProcessError(
                f'step "{step_id}" has no check',
                source=self.source,
                mark=self.document.locate(("steps", step.index)),
            )
        try:
            return parse_check(step.data["check"], limits=limits)
        except CheckError as error:
            raise CheckError(
                tuple(p.rerooted("steps", step.index, "check") for p in error.problems)
            ) from None


def read_process(text: str, *, source: str = "<string>") -> Process:
    """Read a PROCESS.md file's text. ``source`` names it in errors.

    Raises :class:`ProcessError` when it is not a readable process: no frontmatter, bad YAML,
    frontmatter that is not a map, ``steps`` missing or not a list.
    """
    frontmatter, offset, body = _split(text, source)
    try:
        document = load_yaml(frontmatter, line_offset=offset)
    except YamlError as error:
        raise ProcessError(
            f"invalid YAML: {error.message}", source=source, mark=error.mark
        ) from None
    data = document.data
    if not isinstance(data, dict):
        raise ProcessError(
            f"the frontmatter must be a map of keys, got {show(data)}",
            source=source,
            mark=document.locate(()),
        )
    if "steps" not in data:
        raise ProcessError(
            'the frontmatter has no "steps"', source=source, mark=document.locate(())
        )
    if not isinstance(data["steps"], list):
        raise ProcessError(
            f'"steps" must be a list of steps, got {show(data["steps"])}',
            source=source,
            mark=document.locate(("steps",)),
        )
    steps = tuple(
        _step(index, raw) for index, raw in enumerate(data["steps"]) if isinstance(raw, dict)
    )
    return Process(source, document, body, steps)


def load_process(path: str | Path) -> Process:
    """Read a PROCESS.md file from disk (UTF-8); errors name the path as given."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ProcessError(f"not UTF-8 text (byte {error.start})", source=source) from None
    except OSError as error:
        raise ProcessError(f"cannot read: {error.strerror or error}", source=source) from None
    return read_process(text, source=source)


def _split(text: str, source: str) -> tuple[str, int, str]:
    """The frontmatter, how many lines come before it, and the body exactly as written."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
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


def _step(index: int, data: dict[str, Any]) -> ProcessStep:
    kind = next((key for key in _KIND_KEYS if key in data), None)
    instructions = data.get(kind) if kind is not None else None
    step_id = data.get("id")
    return ProcessStep(
        index=index,
        id=step_id if isinstance(step_id, str) else None,
        kind=kind,
        instructions=instructions if isinstance(instructions, str) else None,
        data=data,
    )


def publication_problems(
    process: Process,
    *,
    profiles: Iterable[str],
    evaluator_configured: bool = True,
    limits: Limits = Limits(),
) -> tuple[ProcessProblem, ...]:
    """Every problem that makes a server refuse ``process`` at publication, in file order.

    ``profiles`` is what the server offers (its ``describe.profiles``); without ``check-1``,
    or without an evaluator configured, any step with ``check`` is refused. ``check`` may sit
    only on ``agent`` and ``task`` steps; ``advisory`` only beside ``check``, and only as a
    boolean; each check key must be valid under ``limits`` (the core's problems, rooted at
    ``/steps/<i>/check``).
    """
    offered = frozenset(profiles)
    problems: list[ProcessProblem] = []
    for index, raw in enumerate(process.data["steps"]):
        at = ("steps", index)
        if not isinstance(raw, dict):
            problems.append(process.problem(at, f"expected a step (a map), got {show(raw)}"))
            continue
        step = _step(index, raw)
        problems.extend(_step_problems(process, step, offered, evaluator_configured, limits))
    return tuple(sorted(problems, key=lambda p: (p.line, p.column)))


def _step_problems(
    process: Process,
    step: ProcessStep,
    offered: frozenset[str],
    evaluator_configured: bool,
    limits: Limits,
) -> Iterable[ProcessProblem]:
    at: tuple[str | int, ...] = ("steps", step.index)
    name = f'step "{step.id}"' if step.id is not None else f"step {step.index}"
    if "advisory" in step.data:
        advisory = step.data["advisory"]
        if not step.has_check:
            yield process.problem(
                (*at, "advisory"), "advisory is allowed only beside check", key=True
            )
        elif not isinstance(advisory, bool):
            yield process.problem(
                (*at, "advisory"), f"advisory must be true or false, got {show(advisory)}"
            )
    if not step.has_check:
        return
    where = (*at, "check")
    if PROFILE not in offered:
        listed = ", ".join(sorted(offered)) or "none"
        yield process.problem(
            where,
            f"check needs the {PROFILE} profile, which this server does not offer "
            f"(profiles: {listed})",
            key=True,
        )
    elif not evaluator_configured:
        yield process.problem(
            where, "check needs an evaluator, and this server has none configured", key=True
        )
    if step.kind not in CHECK_STEP_KINDS:
        kind = f"an {step.kind} step" if step.kind is not None else "a step with no agent or task"
        yield process.problem(
            where, f"check is allowed only on agent and task steps; {name} is {kind}", key=True
        )
    for problem in validate_check(step.data["check"], limits=limits):
        rooted = problem.rerooted(*where)
        # An unknown key is best shown at the key itself; anything else at the value.
        yield process.problem(rooted.path, rooted.message, key=_about_key(rooted.message))


def _about_key(message: str) -> bool:
    return message.startswith("unknown key")


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
    (``checkFail`` is ``null`` when there is no default fail threshold).
    """
    if (
        not isinstance(run_data_bytes, int)
        or isinstance(run_data_bytes, bool)
        or run_data_bytes < 1
    ):
        raise ValueError(f"run_data_bytes must be a positive int, got {show(run_data_bytes)}")
    listed = [name for name in profiles if name != PROFILE]
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
) -> Material:
    """What the evaluator may see for a submission to ``step_id``: the step's instructions,
    the body exactly as written, the run data and the submission."""
    step = process.step(step_id)
    if step.instructions is None:
        what = step.kind or "agent or task"
        raise ProcessError(
            f'step "{step_id}" has no instructions (its "{what}" is not text)',
            source=process.source,
            mark=process.document.locate(("steps", step.index, step.kind or "id")),
        )
    return Material(
        instructions=step.instructions,
        body=process.body,
        run_data=run_data,
        submission=submission,
    )
