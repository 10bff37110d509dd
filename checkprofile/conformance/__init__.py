"""The conformance corpus: ``check-1`` behaviour as language-neutral cases, and their runner.

The corpus ships in this package (``cases/<stage>/*.yaml``, one YAML sequence of cases per
file, each case described by ``case.schema.json``). Another implementation runs the same files
against its own code; this module runs them against checkprofile::

    from checkprofile.conformance import run_corpus
    failed = [result for result in run_corpus() if not result.passed]

The YAML files are the corpus. Beside them, ``corpus.json`` holds the same cases as JSON,
written by ``python tools/gen_conformance.py`` with the SHA-256 of every file it
was made from: the default corpus is read from it only while every YAML file and the schema are
byte for byte what it was made from (reading YAML in pure Python is most of a run's cost), and
from the YAML otherwise. The test suite fails when it is stale.

``docs/conformance.md`` describes the format for implementers in any language. Loading refuses
a corpus that is unreadable or does not match the schema with :class:`CorpusError` (one line,
naming the file and the JSON Pointer); a case whose expectation differs from what the library
does is a :class:`CaseResult` with ``passed`` false and a one-line ``diff``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from .. import (
    PROFILE,
    Answer,
    ChoiceAnswer,
    Failure,
    Limits,
    LimitsError,
    Material,
    MaterialError,
    Outcome,
    Question,
    RubricAnswer,
    Submission,
    Verdict,
    YesNoAnswer,
    answer_problem,
    build_bundle,
    combine,
    error_verdict,
    issue_lines,
    js_number,
    outcome_for,
    parse_check,
    pointer_token,
    process_problems,
    run_check,
    run_data_problems,
    submission_problems,
    validate_check,
)
from .._convert import NotJson, plain
from .._fastschema import Validator
from .._files import file_name, read_bounded
from .._schemas import safe_validator, schema_message
from .._shown import error_text, show
from .._types import is_mapping
from ..errors import CheckprofileError
from ..human import (
    DecisionRequiredError,
    StateError,
    StepState,
    after_check,
    after_decision,
    after_rework,
    escalate_error,
)
from ..testing import ScriptedEvaluator, Step

if TYPE_CHECKING:
    import jsonschema
    from ruamel.yaml import YAML

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:  # pragma: no cover - Python 3.10
    from importlib.abc import Traversable

__all__ = [
    "STAGES",
    "Case",
    "CaseResult",
    "CorpusError",
    "Stage",
    "case_schema",
    "covered_decisions",
    "default_directory",
    "load_cases",
    "run_case",
    "run_cases",
    "run_corpus",
]

Stage = Literal["check_keys", "grading", "truncation", "outcomes", "shapes", "records"]

# What a runner shows the evaluator besides the run data: the corpus pins neither, because the
# verdict may not depend on them (only the run data view is measured against a budget).
_INSTRUCTIONS = "Check the submission."
_BODY = "# Conformance\n"
_RUN_DATA: Final[Mapping[str, Any]] = {"inputs": {}, "steps": {}}
# The check a truncation case is shown with: the run data view does not depend on it.
_TRUNCATION_CHECK = "Is the submission complete?"


class CorpusError(CheckprofileError, ValueError):
    """A corpus that cannot be run: unreadable, not YAML, or a case that does not match
    ``case.schema.json``. The message is one line naming the file and the JSON Pointer."""


@attrs.frozen
class Case:
    """One case as read from the corpus: ``data`` is the whole case, as plain JSON data (shared
    between loads of the same file: read it, do not change it); ``source`` names its file and
    ``index`` its place in that file's sequence."""

    id: str
    stage: Stage
    rule: str
    decisions: tuple[int, ...]
    data: Mapping[str, Any] = attrs.field(eq=False, repr=False)
    source: str
    index: int


@attrs.frozen
class CaseResult:
    """The outcome of running one case: ``passed``, and when it did not, ``diff`` says in one
    line where the library's answer first differs from the expectation."""

    id: str
    stage: Stage
    rule: str
    decisions: tuple[int, ...]
    passed: bool
    diff: str
    source: str


def default_directory() -> Traversable:
    """The corpus shipped in this package."""
    return resources.files(__name__) / "cases"


@cache
def _schema() -> dict[str, Any]:
    text = (resources.files(__name__) / "case.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def case_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one case, as a fresh dict."""
    return copy.deepcopy(_schema())


@cache
def _validator() -> jsonschema.Draft202012Validator:
    validator: jsonschema.Draft202012Validator = safe_validator(_schema())
    return validator


@cache
def _fast_validator() -> Validator:
    return Validator(_schema())


def _yaml() -> YAML:
    from ruamel.yaml import YAML

    # YAML 1.2 core schema, pure Python (the C loader speaks YAML 1.1), duplicate keys refused.
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.allow_duplicate_keys = False
    return yaml


@lru_cache(maxsize=256)
def _parse(text: str) -> Any:
    # A pure-Python YAML parser reads about 40 KB a second, and a test session loads the same
    # corpus several times: each file's text is parsed once per process. The data is shared,
    # so nothing here changes it (Case.data is read-only).
    return _yaml().load(text)


def _pointer(path: Sequence[str | int]) -> str:
    return "".join("/" + pointer_token(token) for token in path) or "/"


_JSON_HINT: Final = " (quote timestamps; keys are strings; numbers are finite)"


def _read_file(file: Traversable, shown: str) -> list[Any]:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        # A corpus on disk is anyone's files: each is read with the one bound on a file.
        text = (
            read_bounded(file).decode("utf-8")
            if isinstance(file, Path)
            else file.read_text(encoding="utf-8")
        )
    except UnicodeDecodeError as error:
        raise CorpusError(f"{shown}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise CorpusError(f"{shown}: cannot read: {error.strerror or error}") from None
    try:
        data = _parse(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = " ".join(str(error.problem or error.context or "invalid YAML").split())
        where = f"{shown}:{mark.line + 1}:{mark.column + 1}" if mark is not None else shown
        raise CorpusError(f"{where}: invalid YAML: {problem}") from None
    except YAMLError as error:
        raise CorpusError(f"{shown}: invalid YAML: {' '.join(str(error).split())}") from None
    except RecursionError:
        raise CorpusError(f"{shown}: nested too deeply to read") from None
    # YAML has more than JSON (timestamps, keys that are not strings, NaN) and aliases, which
    # can make a small file stand for an enormous one: a case must be plain JSON data, of a
    # bounded size once its aliases are counted, so that every language reads it the same way.
    try:
        data = plain(data)
    except NotJson as error:
        hint = "" if "(aliases)" in error.reason or "deep" in error.reason else _JSON_HINT
        raise CorpusError(
            f"{shown}: {error.pointer}: not JSON data: {error.reason}{hint}"
        ) from None
    if not isinstance(data, list):
        raise CorpusError(f"{shown}: /: expected a sequence of cases, got {show(data)}")
    return data


def _schema_problem(case: object) -> tuple[str, str] | None:
    """The pointer and message of the case's first schema error (the deepest, then the first
    in document order), or ``None`` when it matches."""
    if _fast_validator().is_valid(case):
        return None
    import jsonschema

    errors = list(_validator().iter_errors(case))
    if not errors:
        return None
    # An "unevaluated property" is usually the echo of another error (a stage's fields are
    # evaluated only when the stage's schema matches), so it is named only when alone.
    causes = [error for error in errors if error.validator != "unevaluatedProperties"]
    # `best_match` prefers the error that says most about what is wrong.
    best = jsonschema.exceptions.best_match(causes or errors)
    assert best is not None  # errors is not empty
    return _pointer(list(best.absolute_path)), schema_message(best)


def _directory(directory: object) -> Traversable:
    """A corpus directory: a path (a string or a pathlib path) or a ``Traversable`` (package
    data). Raises :class:`TypeError` for anything else."""
    if issubclass(type(directory), (str, PurePath)):
        try:
            return Path(file_name(directory))
        except OSError as error:  # a name no directory can have
            raise CorpusError(f"{show(error.filename)}: cannot read: {error.strerror}") from None
    try:
        usable = callable(directory.is_dir) and callable(directory.iterdir)  # type: ignore[attr-defined]
    except Exception:  # an object whose own attributes raise is no directory
        usable = False
    if not usable:
        raise TypeError(f"a corpus directory is a path, got {show(directory)}")
    return directory  # type: ignore[return-value]


def load_cases(directory: Traversable | None = None) -> tuple[Case, ...]:
    """Every case of the corpus in ``directory`` (default: the one shipped here), by stage
    in pipeline order, then by file name, then in file order.

    ``directory`` holds one subdirectory per stage (``check_keys``, ``grading``,
    ``truncation``, ``outcomes``, ``shapes``, ``records``; any may be missing) with
    ``*.yaml`` files (a path or a ``Traversable``; anything else raises
    :class:`TypeError`). Raises
    :class:`CorpusError` for an unreadable file, invalid YAML, a value that is not JSON data,
    a case that does not match the schema, a case filed under another stage, a repeated id,
    or a corpus with no case at all.
    """
    if directory is None:
        shipped = _shipped_cases()
        if shipped is not None:
            return shipped
    root = default_directory() if directory is None else _directory(directory)
    return _cases(root, _case_files(root))


def _case_files(root: Traversable) -> list[tuple[Stage, Traversable]]:
    """The corpus's case files, each with its stage: by stage in pipeline order, then by name."""
    try:
        if not root.is_dir():
            raise CorpusError(f"{root}: not a directory")
        unknown = sorted(
            entry.name for entry in root.iterdir() if entry.is_dir() and entry.name not in STAGES
        )
    except OSError as error:
        raise CorpusError(f"{root}: cannot read: {error.strerror or error}") from None
    if unknown:
        raise CorpusError(
            f"{root}: unknown stage directory {show(unknown[0])} (stages: {', '.join(STAGES)})"
        )
    files: list[tuple[Stage, Traversable]] = []
    for stage in STAGES:
        folder = root / stage
        try:
            if folder.is_dir():
                found = (entry for entry in folder.iterdir() if entry.name.endswith(".yaml"))
                files.extend((stage, entry) for entry in sorted(found, key=lambda e: e.name))
        except OSError as error:
            raise CorpusError(f"{folder}: cannot read: {error.strerror or error}") from None
    return files


def _cases(
    root: Traversable,
    files: Sequence[tuple[Stage, Traversable]],
    shipped: Mapping[str, list[Any]] | None = None,
) -> tuple[Case, ...]:
    """The cases of ``files``, read from their YAML, or from ``shipped`` (the JSON form's cases
    by file, each checked against the schema when the form was written from these bytes)."""
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for stage, file in files:
        shown = f"{root}/{stage}/{file.name}"
        read = _read_file(file, shown) if shipped is None else shipped[f"{stage}/{file.name}"]
        for index, raw in enumerate(read):
            problem = _schema_problem(raw) if shipped is None else None
            if problem is not None:
                pointer, message = problem
                where = f"/{index}" + ("" if pointer == "/" else pointer)
                raise CorpusError(f"{shown}: {where}: {message}")
            if raw["stage"] != stage:
                raise CorpusError(
                    f"{shown}: /{index}/stage: {show(raw['stage'])} filed under {stage}/"
                )
            if raw["id"] in seen:
                raise CorpusError(
                    f"{shown}: /{index}/id: {show(raw['id'])} is also the id of a case in"
                    f" {seen[raw['id']]}"
                )
            seen[raw["id"]] = shown
            cases.append(
                Case(
                    id=raw["id"],
                    stage=stage,
                    rule=raw["rule"],
                    decisions=tuple(raw["decisions"]),
                    data=raw,
                    source=shown,
                    index=index,
                )
            )
    if not cases:
        raise CorpusError(f"{root}: no cases (expected {'/, '.join(STAGES)}/ with *.yaml files)")
    return tuple(cases)


# The JSON form of the shipped corpus --------------------------------------------------------

#: The JSON form's name, beside ``case.schema.json``.
CORPUS_JSON: Final = "corpus.json"


def _sha256(file: Traversable) -> str:
    return hashlib.sha256(file.read_bytes()).hexdigest()


def _shipped_cases() -> tuple[Case, ...] | None:
    """The shipped corpus from its JSON form, or ``None`` when the form is missing or was not
    made from exactly the files there are (then the YAML is read)."""
    here = resources.files(__name__)
    try:
        form = json.loads((here / CORPUS_JSON).read_text(encoding="utf-8"))
        root = default_directory()
        files = _case_files(root)
        made_from = [(entry["path"], entry["sha256"]) for entry in form["files"]]
        if form["schema_sha256"] != _sha256(here / "case.schema.json") or made_from != [
            (f"{stage}/{file.name}", _sha256(file)) for stage, file in files
        ]:
            return None
    except (OSError, ValueError, KeyError, TypeError, CorpusError):
        return None
    return _cases(root, files, {entry["path"]: entry["cases"] for entry in form["files"]})


def corpus_json(directory: Traversable | None = None) -> str:
    """The JSON form of the corpus in ``directory`` (default: the shipped one), read from its
    YAML: what ``corpus.json`` must hold. One case per line, so that a change reads as one."""
    root = default_directory() if directory is None else _directory(directory)
    files = _case_files(root)
    cases = _cases(root, files)
    schema = _sha256(resources.files(__name__) / "case.schema.json")
    lines = [f'{{"schema_sha256":"{schema}","files":[']
    for number, (stage, file) in enumerate(files):
        shown = f"{root}/{stage}/{file.name}"
        head = _compact({"path": f"{stage}/{file.name}", "sha256": _sha256(file)})
        lines.append(head[:-1] + ',"cases":[')
        data = [case.data for case in cases if case.source == shown]
        lines.extend(_compact(item) + "," * (i < len(data) - 1) for i, item in enumerate(data))
        lines.append("]}" + "," * (number < len(files) - 1))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Mismatch(Exception):
    """The library's answer differs from the case: ``where`` (a pointer into the case) and
    what was expected and got."""

    def __init__(self, where: str, expected: object, got: object) -> None:
        super().__init__(where)
        self.where, self.expected, self.got = where, expected, got


def _show(value: object, limit: int = 80) -> str:
    """``value`` as JSON text, cut to ``limit`` characters. Written lazily and only as far as
    the limit: a value of any size (a case's run data, a library's answer) costs the same."""
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=True)
    text = ""
    try:
        for chunk in encoder.iterencode(value):
            text += chunk
            if len(text) > limit:
                break
    except (TypeError, ValueError, RecursionError):
        return show(value, limit)
    text = "".join(char if char.isprintable() else show(char)[1:-1] for char in text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_difference(
    expected: object, got: object, path: tuple[str | int, ...] = ()
) -> tuple[tuple[str | int, ...], object, object] | None:
    """The first place ``got`` differs from ``expected`` as JSON data: numbers equal by value
    (``1`` is ``1.0``), booleans are not numbers, key order does not matter, a missing key
    differs from any value."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in expected:
            if key not in got:
                return (*path, key), expected[key], "(no such key)"
            found = _json_difference(expected[key], got[key], (*path, key))
            if found is not None:
                return found
        for key in got:
            if key not in expected:
                return (*path, key), "(no such key)", got[key]
        return None
    if isinstance(expected, list) and isinstance(got, list):
        for index, (want, have) in enumerate(zip(expected, got, strict=False)):
            found = _json_difference(want, have, (*path, index))
            if found is not None:
                return found
        if len(expected) != len(got):
            return path, expected, got
        return None
    if _json_type(expected) != _json_type(got) or expected != got:
        return path, expected, got
    return None


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _expect(where: str, expected: object, got: object) -> None:
    found = _json_difference(expected, got)
    if found is not None:
        path, want, have = found
        raise _Mismatch(where + "".join("/" + pointer_token(p) for p in path), want, have)


def _limits(case: Mapping[str, Any]) -> Limits:
    return Limits.from_json(case.get("limits", {}))


# The keys an answer of each kind may have, by the key that names the kind: the profile's
# answers are "the probability, the chosen name, or the level, with a confidence where the kind
# has one", and nothing else (docs/conformance.md, "Answers").
_ANSWER_KEYS: Final[Mapping[str, frozenset[str]]] = {
    "p": frozenset({"p"}),
    "name": frozenset({"name", "confidence"}),
    "level": frozenset({"level", "confidence"}),
}


def _answer(raw: object) -> Answer | None:
    """The library's answer for a case's answer, or ``None`` when its shape alone does not fit
    any question: ``null``, no kind key or two, or a key its kind does not have.

    Values are passed on as given, so a case can hold an answer whose values do not fit (a
    probability of 1.5, a name not in one_of); :func:`answer_problem` judges those.
    """
    if not is_mapping(raw):
        return None
    kinds = [key for key in _ANSWER_KEYS if key in raw]
    if len(kinds) != 1 or not _ANSWER_KEYS[kinds[0]].issuperset(raw):
        return None
    if kinds == ["p"]:
        return YesNoAnswer(raw["p"])
    if kinds == ["name"]:
        return ChoiceAnswer(raw["name"], raw.get("confidence"))
    return RubricAnswer(raw["level"], raw.get("confidence"))


def _fits(question: Question, raw: object) -> Answer | None:
    """The answer when ``raw`` fits ``question``, else ``None`` (decision 8: not answered)."""
    answer = _answer(raw)
    if answer is None or answer_problem(question, answer) is not None:
        return None
    return answer


def _step(raw: Mapping[str, Any]) -> Step:
    if "failure" in raw:
        return Failure(raw["failure"], "scripted failure")
    answer = _answer(raw)
    if answer is None:
        # What an adapter does with a reply it cannot read as an answer of any kind.
        return Failure("malformed", f"not an answer: {_show(raw)}")
    return answer


def _run_check_keys(case: Mapping[str, Any]) -> None:
    expect = case["expect"]
    try:
        limits = _limits(case)
    except LimitsError as error:
        # Limits a server may not publish (checkFail above checkPass): no check is judged.
        if expect.get("limits_refused"):
            return
        raise _Mismatch("/limits", "limits that are valid", f"refused: {error}") from None
    if expect.get("limits_refused"):
        raise _Mismatch("/expect/limits_refused", True, f"accepted as {limits.to_json()}")
    problems = validate_check(case["check"], limits=limits)
    if not expect["valid"]:
        # A multiset: implementations may order problems differently, but one fault is one
        # problem, so a repeated pointer means two faults at one place.
        _expect("/expect/problems", sorted(expect["problems"]), sorted(p.pointer for p in problems))
        return
    if problems:
        raise _Mismatch("/expect/valid", True, [str(problem) for problem in problems])
    full = parse_check(case["check"], limits=limits).to_json()
    _expect("/expect/full", expect["full"], full)
    # The full form is a fixed point: normalizing it again changes nothing.
    _expect("/expect/full", expect["full"], parse_check(full, limits=limits).to_json())


def _run_grading(case: Mapping[str, Any]) -> None:
    expect = case["expect"]
    if "number" in case:
        _expect("/expect/text", expect["text"], js_number(case["number"]))
        return
    check = parse_check(case["check"], limits=_limits(case))
    raw_answers: list[Any] = case["answers"]
    if len(raw_answers) != len(check):
        raise _Mismatch("/answers", f"{len(check)} answers", f"{len(raw_answers)}")
    answers = [_fits(question, raw) for question, raw in zip(check, raw_answers, strict=True)]
    if "unfit" in expect:
        unfit = [index for index, answer in enumerate(answers) if answer is None]
        _expect("/expect/unfit", expect["unfit"], unfit)
        return
    options = {
        "model": case["model"],
        "at": case["at"],
        "advisory": case.get("advisory", False),
        "truncated": case.get("truncated", False),
    }
    verdict: Verdict
    fitting = [answer for answer in answers if answer is not None]
    if len(fitting) < len(answers):
        # The answers after the re-ask: one that is null or does not fit is still unanswered
        # (decisions 8 and 9), so the whole check is an error.
        verdict = error_verdict(check, **options)
    else:
        verdict = combine(check, fitting, **options)
    _expect("/expect/results", expect["results"], [q.result for q in verdict.questions])
    _expect("/expect/verdict", expect["verdict"], verdict.verdict)
    _expect("/expect/verdict_json", expect["verdict_json"], verdict.to_json())
    _expect("/expect/issue_lines", expect["issue_lines"], list(issue_lines(verdict)))


def _run_truncation(case: Mapping[str, Any]) -> None:
    expect = case["expect"]
    raw_submission = case.get("submission", {"output": {}})
    material = Material(
        instructions=_INSTRUCTIONS,
        body=_BODY,
        run_data=case["run_data"],
        submission=Submission.from_json(raw_submission),
    )
    try:
        bundle = build_bundle(parse_check(_TRUNCATION_CHECK), material, state_bytes=case["budget"])
    except MaterialError as error:
        # Run data the evaluator cannot be shown at all (steps or inputs not a map): the host
        # gets an error, and no evaluator is asked.
        if expect.get("refused"):
            return
        raise _Mismatch("/expect/refused", False, f"refused: {error}") from None
    if expect.get("refused"):
        raise _Mismatch("/expect/refused", True, f"shown as {_show(bundle.run_data_json)}")
    _expect("/expect/view", expect["view"], bundle.run_data_json)
    _expect("/expect/bytes", expect["bytes"], bundle.run_data_bytes)
    _expect("/expect/truncated", expect["truncated"], bundle.truncated)
    _expect("/expect/dropped_steps", expect["dropped_steps"], list(bundle.dropped_steps))
    _expect("/expect/dropped_fields", expect["dropped_fields"], list(bundle.dropped_fields))
    if "submission_view" in expect:
        _expect("/expect/submission_view", expect["submission_view"], bundle.submission_json)


def _run_outcomes(case: Mapping[str, Any]) -> None:
    expect = case["expect"]
    limits = _limits(case)
    check = parse_check(case["check"], limits=limits)
    script: dict[str, Step | list[Step]] = {
        ask: [_step(item) for item in value] if isinstance(value, list) else _step(value)
        for ask, value in case["script"].items()
    }
    evaluator = ScriptedEvaluator(script, model=case["model"])
    material = Material(
        instructions=_INSTRUCTIONS,
        body=_BODY,
        run_data=case.get("run_data", _RUN_DATA),
        submission=Submission({"done": True}),
    )
    outcome = _finished(
        run_check(
            check,
            material,
            evaluator,
            limits=limits,
            advisory=case.get("advisory", False),
            now=case["now"],
        )
    )
    _expect("/expect/action", expect["action"], outcome.action)
    _expect("/expect/verdict", expect["verdict"], outcome.verdict.verdict)
    _expect("/expect/attempts", expect["attempts"], outcome.attempts)
    _expect("/expect/asked", expect["asked"], {ask: evaluator.asked(ask) for ask in check.asks})
    _expect("/expect/issues", expect["issues"], list(outcome.issues))
    _expect("/expect/verdict_json", expect["verdict_json"], outcome.verdict.to_json())


def _finished(running: Coroutine[Any, Any, Outcome]) -> Outcome:
    """What ``running`` returns, run to its end without an event loop: a scripted evaluator
    never waits, and a re-ask with no Retry-After to honour only gives the loop a turn (a bare
    yield), so a case needs no loop, nor asyncio, which would cost a run a tenth of its start."""
    try:
        while True:
            if running.send(None) is not None:  # a real wait: no case of the corpus has one
                running.close()
                raise RuntimeError("the check waited on something; a scripted run never does")
    except StopIteration as done:
        outcome: Outcome = done.value
        return outcome


def _run_shapes(case: Mapping[str, Any]) -> None:
    # core-2's shapes where a host meets the profile (design decisions 15 to 18). A process's
    # frontmatter is judged as a server offering check-1 with an evaluator judges it at
    # publication (what lint reports for a PROCESS.md file with this frontmatter), under the
    # limits the server publishes (its check keys are judged under them).
    value = case["value"]
    if case["shape"] == "process":
        problems = process_problems(value, profiles=[PROFILE], limits=_limits(case))
        found = [problem.pointer for problem in problems]
    elif case["shape"] == "run_data":
        found = [problem.pointer for problem in run_data_problems(value)]
    else:
        agent = case.get("agent", False)
        found = [problem.pointer for problem in submission_problems(value, agent=agent)]
    expect = case["expect"]
    if not expect["valid"]:
        _expect("/expect/problems", sorted(expect["problems"]), sorted(found))
    elif found:
        raise _Mismatch("/expect/valid", True, found)


def _run_records(case: Mapping[str, Any]) -> None:
    # One event on a step's state (decision 17): the state before, the event, the state after.
    # A refused event, or a state before that is not one, changes nothing.
    expect = case["expect"]
    limits = _limits(case)
    check = parse_check(case["check"], limits=limits)
    event = case["event"]
    try:
        before = StepState.from_json(
            {"state": 1, "run": case["run"], "step": case["step"], **case["before"]}, check=check
        )
        if "check" in event:
            checked = event["check"]
            material = Material(
                instructions=_INSTRUCTIONS,
                body=_BODY,
                run_data=_RUN_DATA,
                submission=Submission.from_json(checked["submission"]),
            )
            bundle = build_bundle(check, material, state_bytes=limits.check_state_bytes)
            outcome = outcome_for(Verdict.from_json(checked["verdict"], check=check), bundle=bundle)
            if checked.get("escalate_error", False):
                outcome = escalate_error(outcome)
            options = {key: checked[key] for key in ("by", "note") if key in checked}
            after = after_check(
                before,
                outcome,
                submitted_by=checked.get("submitted_by"),
                submitted_at=checked.get("submitted_at"),
                **options,
            )
        elif "decision" in event:
            after = after_decision(before, event["decision"], at=event.get("at"))
        else:
            after = after_rework(before)
    except (StateError, DecisionRequiredError) as error:
        if expect.get("refused"):
            return
        raise _Mismatch("/expect/refused", False, f"refused: {error}") from None
    if expect.get("refused"):
        raise _Mismatch("/expect/refused", True, f"taken, as {_show(_state_of(after))}")
    _expect("/expect/after", expect["after"], _state_of(after))


def _state_of(state: StepState) -> dict[str, Any]:
    """A step's state as a records case writes it: the state's JSON without its format, run
    and step (the case's own)."""
    data = state.to_json()
    return {key: value for key, value in data.items() if key not in ("state", "run", "step")}


# The stage table: each stage's runner, in pipeline order. A runner raises _Mismatch where the
# library's answer differs from the case. To add a stage: name it in Stage, write its runner and
# add its row here, then give it a $defs entry (and its name in the id pattern and the stage
# enum) in case.schema.json and a section in docs/conformance.md.
_RUNNERS: Final[Mapping[Stage, Callable[[Mapping[str, Any]], None]]] = {
    "check_keys": _run_check_keys,
    "grading": _run_grading,
    "truncation": _run_truncation,
    "outcomes": _run_outcomes,
    "shapes": _run_shapes,
    "records": _run_records,
}

#: The stages, in pipeline order; each is one directory of the corpus.
STAGES: Final[tuple[Stage, ...]] = tuple(_RUNNERS)


def run_case(case: Case) -> CaseResult:
    """Run one case against this library. Never raises for what the library does: an
    exception is a failed case whose ``diff`` names it."""
    try:
        _RUNNERS[case.stage](case.data)
    except _Mismatch as mismatch:
        diff = f"{mismatch.where}: expected {_show(mismatch.expected)}, got {_show(mismatch.got)}"
    except Exception as error:  # the library refused what the case expects it to take
        diff = f"raised {error_text(error, 153)}"
    else:
        diff = ""
    return CaseResult(
        id=case.id,
        stage=case.stage,
        rule=case.rule,
        decisions=case.decisions,
        passed=not diff,
        diff=diff,
        source=case.source,
    )


def run_cases(cases: Sequence[Case]) -> tuple[CaseResult, ...]:
    """Run ``cases`` in order."""
    return tuple(run_case(case) for case in cases)


def run_corpus(directory: Traversable | None = None) -> tuple[CaseResult, ...]:
    """Load the corpus in ``directory`` (default: ours) and run every case.

    Raises :class:`CorpusError` when the corpus cannot be loaded (see :func:`load_cases`).
    """
    return run_cases(load_cases(directory))


def covered_decisions(results: Sequence[Case] | Sequence[CaseResult]) -> dict[int, list[str]]:
    """For each design decision, the ids of the cases that cover it (in corpus order)."""
    covered: dict[int, list[str]] = {}
    for item in results:
        for decision in item.decisions:
            covered.setdefault(decision, []).append(item.id)
    return dict(sorted(covered.items()))
