"""What every command shares: exit codes, one-line errors, JSON and file reading, colour."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Literal, TypeAlias

import attrs

from ..errors import Problem

if TYPE_CHECKING:
    from .._yaml import Document

__all__ = [
    "EXIT_ERROR",
    "EXIT_FAIL",
    "EXIT_OK",
    "EXIT_UNSURE",
    "EXIT_USAGE",
    "STDIN",
    "VERDICT_EXIT",
    "Commands",
    "DataFile",
    "Style",
    "UsageError",
    "common_options",
    "print_json",
    "read_data",
    "read_text",
    "shown",
    "unreadable",
]

# The documented exit codes (README, docs/cli.md). Scripts rely on them: never renumber.
EXIT_OK: Final = 0  # pass, or no problems
EXIT_FAIL: Final = 1  # fail, or problems found
EXIT_USAGE: Final = 2  # usage, or unreadable input
EXIT_UNSURE: Final = 3
EXIT_ERROR: Final = 4

VERDICT_EXIT: Final[Mapping[str, int]] = {
    "pass": EXIT_OK,
    "fail": EXIT_FAIL,
    "unsure": EXIT_UNSURE,
    "error": EXIT_ERROR,
}

#: What a command module's ``register(commands)`` receives.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class UsageError(Exception):
    """A bad argument or unreadable input: printed as one line, exit code 2 (or ``code``).

    The message names the file, and the line and column where there is one.
    """

    def __init__(self, message: str, *, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def common_options() -> argparse.ArgumentParser:
    """The options every command takes (a parent parser)."""
    parent = argparse.ArgumentParser(add_help=False)
    # No default here: `--json` may also come before the command (the top parser's, False).
    parent.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print one JSON document instead of text",
    )
    return parent


def print_json(data: Any, *, stream: IO[str] | None = None) -> None:
    """One JSON document, UTF-8 as written, ending in a newline."""
    out = sys.stdout if stream is None else stream
    out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


#: The file name that means standard input, wherever a command reads a file; once a command.
STDIN: Final = "-"
#: What standard input has been read as, by the command running (at most one thing).
STDIN_READ: list[str] = []


def shown(path: Path | str) -> str:
    """How a file is named in messages: ``<stdin>`` for ``-``."""
    return "<stdin>" if str(path) == STDIN else str(path)


def read_text(path: Path | str, what: str) -> str:
    """A file's text (UTF-8), or a one-line :class:`UsageError` naming it and ``what`` it is.
    ``-`` is standard input, which one command reads once."""
    if str(path) == STDIN:
        return _stdin(what)
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: {what} is not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise unreadable(path, what, error) from None


def _stdin(what: str) -> str:
    if STDIN_READ:
        raise UsageError(
            f"-: standard input is already the {STDIN_READ[0]}; give the {what} as a file"
        )
    STDIN_READ.append(what)
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"<stdin>: {what} is not UTF-8 text (byte {error.start})") from None


def unreadable(path: Path | str, what: str, error: OSError) -> UsageError:
    """The one-line error for a file that could not be opened or read."""
    if isinstance(error, FileNotFoundError):
        return UsageError(f"{path}: {what} not found")
    if isinstance(error, IsADirectoryError):
        return UsageError(f"{path}: {what} is a directory, not a file")
    return UsageError(f"{path}: cannot read {what}: {error.strerror or error}")


@attrs.frozen
class DataFile:
    """A JSON or YAML data file read: its ``data`` and where each part of it is."""

    path: str
    data: Any
    text: str = attrs.field(repr=False)
    document: Document | None = attrs.field(default=None, repr=False)

    def where(self, path: tuple[str | int, ...] = (), *, key: bool = False) -> str:
        """``FILE:LINE:COL`` of ``path`` in the file (``FILE`` alone if it cannot be found)."""
        return self._where(self._document(), path, key=key)

    def problems(self, problems: Sequence[Problem]) -> str:
        """``problems`` of this file, one per line as ``FILE:LINE:COL: POINTER: message``, in
        file order. An unknown key is shown at the key; any other problem at its value (a
        missing key at the map that lacks it)."""
        document = self._document()
        located = []
        for problem in problems:
            key = problem.message.startswith("unknown key")
            mark = document.locate(problem.path, key=key) if document is not None else None
            order = (mark.line, mark.column) if mark is not None else (0, 0)
            where = self._where(document, problem.path, key=key)
            located.append((order, f"{where}: {problem.pointer or '/'}: {problem.message}"))
        return "\n".join(line for _, line in sorted(located, key=lambda pair: pair[0]))

    def _document(self) -> Document | None:
        if self.document is not None:
            return self.document
        # JSON is read by the json module (fast, for large run data); positions come from a
        # second, YAML 1.2 reading only when an error needs one.
        from .._yaml import YamlError, load_yaml

        try:
            return load_yaml(self.text)
        except YamlError:
            return None

    def _where(self, document: Document | None, path: tuple[str | int, ...], *, key: bool) -> str:
        if document is None:
            return self.path
        mark = document.locate(path, key=key)
        return f"{self.path}:{mark.line}:{mark.column}"


def read_data(path: Path | str, what: str) -> DataFile:
    """A JSON (``.json``) or YAML 1.2 file's data, with errors at ``FILE:LINE:COL``. Standard
    input (``-``) is read as JSON when it is JSON, and as YAML 1.2 otherwise."""
    source = shown(path)
    text = read_text(path, what)
    if str(path) == STDIN:
        try:
            return DataFile(source, json.loads(text), text)
        except (ValueError, RecursionError):
            pass  # not JSON: YAML 1.2 (of which JSON is nearly a part) says what is wrong
    elif source.endswith(".json"):
        try:
            return DataFile(source, json.loads(text), text)
        except json.JSONDecodeError as error:
            where = f"{source}:{error.lineno}:{error.colno}"
            raise UsageError(f"{where}: {what} is not valid JSON: {error.msg}") from None
        except RecursionError:
            raise UsageError(f"{source}: {what} is nested too deeply to read") from None
    from .._yaml import YamlError, load_yaml

    try:
        document = load_yaml(text)
    except YamlError as error:
        mark = error.mark
        where = source if mark is None else f"{source}:{mark.line}:{mark.column}"
        raise UsageError(f"{where}: {what} is not valid YAML: {error.message}") from None
    return DataFile(source, document.data, text, document)


class Style:
    """Colour for a terminal, and nothing otherwise (or when ``NO_COLOR`` is set)."""

    _CODES: Final[Mapping[str, str]] = {
        "pass": "32",
        "fail": "31",
        "unsure": "33",
        "error": "35",
        "path": "1",
        "dim": "2",
    }

    def __init__(self, stream: IO[str]) -> None:
        isatty = getattr(stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) and not os.environ.get("NO_COLOR")

    def __call__(
        self, text: str, role: Literal["pass", "fail", "unsure", "error", "path", "dim"]
    ) -> str:
        if not self.enabled:
            return text
        return f"\033[{self._CODES[role]}m{text}\033[0m"
