"""What every command shares: exit codes, one-line errors, JSON and file reading, colour."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Final, Literal, TypeAlias

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

__all__ = [
    "EXIT_ERROR",
    "EXIT_FAIL",
    "EXIT_OK",
    "EXIT_UNSURE",
    "EXIT_USAGE",
    "VERDICT_EXIT",
    "Commands",
    "Style",
    "UsageError",
    "common_options",
    "load_yaml_text",
    "print_json",
    "read_data",
    "read_text",
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
    parent.add_argument(
        "--json", action="store_true", help="print one JSON document instead of text"
    )
    return parent


def print_json(data: Any, *, stream: IO[str] | None = None) -> None:
    """One JSON document, UTF-8 as written, ending in a newline."""
    out = sys.stdout if stream is None else stream
    out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def read_text(path: Path | str, what: str) -> str:
    """A file's text (UTF-8), or a one-line :class:`UsageError` naming it and ``what`` it is."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: {what} is a directory, not a file") from None
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: {what} is not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise UsageError(f"{path}: cannot read {what}: {error.strerror or error}") from None


def _yaml() -> YAML:
    # YAML 1.2, core schema: yes/no/on/off stay strings; duplicate keys are an error.
    yaml = YAML(typ="rt", pure=True)
    yaml.version = (1, 2)
    yaml.allow_duplicate_keys = False
    return yaml


def load_yaml_text(text: str, *, source: str, line_offset: int = 0) -> Any:
    """Parse YAML 1.2 (core schema, no duplicate keys), keeping line and column on every node.

    A parse error becomes a one-line :class:`UsageError` at ``source:LINE:COL`` (1-based, in
    the file's own lines: ``line_offset`` lines come before ``text`` in the file).
    """
    try:
        return _yaml().load(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = " ".join(str(error.problem or error.context or "invalid YAML").split())
        if mark is None:
            raise UsageError(f"{source}: invalid YAML: {problem}") from None
        where = f"{source}:{mark.line + 1 + line_offset}:{mark.column + 1}"
        raise UsageError(f"{where}: invalid YAML: {problem}") from None
    except YAMLError as error:
        raise UsageError(f"{source}: invalid YAML: {' '.join(str(error).split())}") from None


def read_data(path: Path | str, what: str) -> Any:
    """A JSON or YAML file's data (JSON is YAML 1.2), with errors at ``FILE:LINE:COL``."""
    text = read_text(path, what)
    if str(path).endswith(".json"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            where = f"{path}:{error.lineno}:{error.colno}"
            raise UsageError(f"{where}: {what} is not valid JSON: {error.msg}") from None
    return load_yaml_text(text, source=str(path))


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
