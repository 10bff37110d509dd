"""Reading the conformance corpus: its case files, checked against the case schema, as cases.

The corpus is one directory per stage of ``*.yaml`` files (``cases/`` in this package by
default), each a sequence of cases matching ``case.schema.json``. The shipped corpus is read
from its JSON form, ``corpus.json``, while every file is what that form was made from.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

import attrs

from .._convert import NotJson, plain
from .._fastschema import Validator
from .._files import file_name, read_bounded
from .._schemas import safe_validator, schema_message
from .._shown import show
from ..errors import CheckprofileError, pointer_token

if TYPE_CHECKING:
    import jsonschema
    from ruamel.yaml import YAML

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable as Traversable
else:  # pragma: no cover - Python 3.10
    from importlib.abc import Traversable as Traversable

__all__ = [
    "CORPUS_JSON",
    "STAGES",
    "Case",
    "CorpusError",
    "Stage",
    "case_schema",
    "corpus_json",
    "default_directory",
    "load_cases",
]

Stage = Literal["check_keys", "grading", "truncation", "outcomes", "shapes", "records"]

#: The stages, in pipeline order; each is one directory of the corpus.
STAGES: Final[tuple[Stage, ...]] = get_args(Stage)

# The package the corpus ships in (this module's), for its package data.
_PACKAGE: Final = __name__.rpartition(".")[0]


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


def default_directory() -> Traversable:
    """The corpus shipped in this package."""
    return resources.files(_PACKAGE) / "cases"


@cache
def _schema() -> dict[str, Any]:
    text = (resources.files(_PACKAGE) / "case.schema.json").read_text(encoding="utf-8")
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
    here = resources.files(_PACKAGE)
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
    schema = _sha256(resources.files(_PACKAGE) / "case.schema.json")
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
