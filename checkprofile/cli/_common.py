"""What every command shares: exit codes, one-line errors, JSON and file reading, colour."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Literal, TypeAlias

import attrs

from .._files import read_bounded, read_stream
from .._shown import IGNORABLE, error_text, escaped_text, shown_pointer
from ..errors import Problem

if TYPE_CHECKING:
    from .._json_read import Place
    from .._yaml import Document, Mark

__all__ = [
    "EXIT_ERROR",
    "EXIT_FAIL",
    "EXIT_INTERNAL",
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
    "error_lines",
    "internal_error",
    "path_text",
    "print_json",
    "read_data",
    "read_text",
    "shown",
    "shown_lines",
    "unreadable",
]

# The documented exit codes (README, docs/cli.md). Scripts rely on them: never renumber.
EXIT_OK: Final = 0  # pass, or no problems
EXIT_FAIL: Final = 1  # fail, or problems found
EXIT_USAGE: Final = 2  # usage, or unreadable input
EXIT_UNSURE: Final = 3
EXIT_ERROR: Final = 4
# A defect of checkprofile's own (sysexits.h's EX_SOFTWARE): never a verdict, never "fail".
EXIT_INTERNAL: Final = 70

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
    """One JSON document, UTF-8 as written, ending in a newline. A character that does not
    print as itself (a bidi control, a zero-width space, a lone surrogate, which UTF-8 cannot
    write) is written as its JSON escape, so a terminal shows it and the document reads back
    as the same data."""
    out = sys.stdout if stream is None else stream
    text = json.dumps(data, ensure_ascii=False, indent=2)
    out.write(_visible_json(text) + "\n")


# json.dumps escapes the control characters itself; only a character beyond ASCII can hide, and
# the document is indented, so a line is looked at whole (in C) and char by char only when it
# holds one that hides.


def _visible_json(text: str) -> str:
    if text.isascii():
        return text
    return "\n".join(
        line
        if line.isprintable() and not IGNORABLE.search(line)
        else "".join(map(_json_char, line))
        for line in text.split("\n")
    )


@functools.lru_cache(maxsize=1 << 16)
def _json_char(char: str) -> str:
    if char.isascii() or escaped_text(char) == char:
        return char
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 pair, as JSON writes a character beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def path_text(path: Path | str) -> str:
    """A file's name for a message: as given, with any character that does not print as
    itself escaped (a newline in a name found in a folder must not start a line of its own)."""
    return escaped_text(str(path))


def shown_lines(text: str) -> str:
    """A text of many lines as a person is shown it: its lines as they are, and in them every
    character that does not print as itself escaped (a CR, ESC, a bidi control, a zero-width
    space), the one rule every text from outside follows on its way to a terminal."""
    return escaped_text(text, keep="\n\t")


def error_lines(message: str) -> list[str]:
    """A message's lines as printed, one per problem: split at newlines only, and anything
    else that would break or hide a line escaped."""
    return [escaped_text(line, keep="\t") for line in message.split("\n")]


def internal_error(error: BaseException) -> int:
    """The last resort for an exception no part of the command expected: one line naming it,
    and exit 70 (a defect to report, never read as a verdict)."""
    from .._log import logger

    # The traceback goes to the log (silent unless a host that runs main() configures it).
    logger("cli").error("internal error: %s", error_text(error), exc_info=error)
    print(f"checkprofile: internal error: {error_text(error)} (please report it)", file=sys.stderr)
    return EXIT_INTERNAL


#: The file name that means standard input, wherever a command reads a file; once a command.
STDIN: Final = "-"
#: What standard input has been read as, by the command running (at most one thing).
STDIN_READ: list[str] = []


def shown(path: Path | str) -> str:
    """How a file is named in messages: ``<stdin>`` for ``-``."""
    return "<stdin>" if str(path) == STDIN else path_text(path)


def read_text(path: Path | str, what: str) -> str:
    """A file's text (UTF-8), or a one-line :class:`UsageError` naming it and ``what`` it is.
    ``-`` is standard input, which one command reads once."""
    if str(path) == STDIN:
        return _stdin(what)
    try:
        return read_bounded(path).decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(
            f"{path_text(path)}: {what} is not UTF-8 text (byte {error.start})"
        ) from None
    except OSError as error:
        raise unreadable(path, what, error) from None
    except MemoryError:
        raise UsageError(
            f"{path_text(path)}: {what} is too large to read into the memory available"
        ) from None


def _stdin(what: str) -> str:
    if STDIN_READ:
        raise UsageError(
            f"-: standard input is already the {STDIN_READ[0]}; give the {what} as a file"
        )
    STDIN_READ.append(what)
    try:
        return read_stream(sys.stdin.buffer).decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"<stdin>: {what} is not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise unreadable("<stdin>", what, error) from None


def unreadable(path: Path | str, what: str, error: OSError) -> UsageError:
    """The one-line error for a file that could not be opened or read."""
    shown = path_text(path)
    if isinstance(error, FileNotFoundError):
        return UsageError(f"{shown}: {what} not found")
    if isinstance(error, IsADirectoryError):
        return UsageError(f"{shown}: {what} is a directory, not a file")
    return UsageError(f"{shown}: cannot read {what}: {error.strerror or error}")


@attrs.frozen
class DataFile:
    """A JSON or YAML data file read: its ``data`` and where each part of it is."""

    path: str
    data: Any
    text: str = attrs.field(repr=False)
    document: Document | None = attrs.field(default=None, repr=False)

    def where(self, path: tuple[str | int, ...] = (), *, key: bool = False) -> str:
        """``FILE:LINE:COL`` of ``path`` in the file (its nearest ancestor if it is not
        there)."""
        mark = self.marks([(tuple(path), key)])[(tuple(path), key)]
        return f"{self.path}:{mark.line}:{mark.column}"

    def problems(self, problems: Sequence[Problem]) -> str:
        """``problems`` of this file, one per line as ``FILE:LINE:COL: POINTER: message``, in
        file order. An unknown key is shown at the key; any other problem at its value (a
        missing key at the map that lacks it)."""
        places = [(p.path, p.message.startswith("unknown key")) for p in problems]
        marks = self.marks(places)
        located = []
        for problem, place in zip(problems, places, strict=True):
            mark = marks[place]
            where = f"{self.path}:{mark.line}:{mark.column}"
            line = f"{where}: {shown_pointer(problem.pointer)}: {problem.message}"
            located.append(((mark.line, mark.column), line))
        return "\n".join(line for _, line in sorted(located, key=lambda pair: pair[0]))

    def marks(self, places: Sequence[Place]) -> dict[Place, Mark]:
        """Where each of ``places`` is. A YAML file knows it from its reading; a JSON file is
        read by the json module (fast, for large run data), and the places are found in one
        pass over its text, however many there are."""
        if self.document is not None:
            return {place: self.document.locate(place[0], key=place[1]) for place in places}
        from .._json_read import line_column, locate
        from .._yaml import Mark  # JSON's places are found without reading it as YAML

        starts = locate(self.text, places)
        lines = line_column(self.text, starts.values())
        return {place: Mark(*lines[start]) for place, start in starts.items()}


def read_data(path: Path | str, what: str) -> DataFile:
    """A JSON (``.json``) or YAML 1.2 file's data, with errors at ``FILE:LINE:COL``.

    JSON is read strictly: a duplicate key is refused (as YAML's is), and so are ``NaN``,
    ``Infinity`` and an integer too long to read, each at its place. Standard input (``-``)
    is read as JSON when it is JSON, and as YAML 1.2 otherwise.
    """
    from .._json_read import JsonFaultError, line_column, load_json

    source = shown(path)
    text = read_text(path, what)
    if str(path) == STDIN or source.endswith(".json"):
        try:
            return DataFile(source, load_json(text), text)
        except json.JSONDecodeError as error:
            # Standard input that is not JSON is read as YAML 1.2 (of which JSON is nearly a
            # part), which says what is wrong.
            if str(path) != STDIN:
                where = f"{source}:{error.lineno}:{error.colno}"
                raise UsageError(f"{where}: {what} is not valid JSON: {error.msg}") from None
        except JsonFaultError as error:
            line, column = line_column(text, [error.fault.index])[error.fault.index]
            raise UsageError(
                f"{source}:{line}:{column}: {what} is not valid JSON: {error.fault.message}"
            ) from None
        except RecursionError:
            raise UsageError(f"{source}: {what} is nested too deeply to read") from None
    from .._yaml import YamlError, load_yaml

    try:
        document = load_yaml(text)
    except YamlError as error:
        mark = error.mark
        where = source if mark is None else f"{source}:{mark.line}:{mark.column}"
        raise UsageError(f"{where}: {what} is not valid YAML: {error.message}") from None
    read = DataFile(source, document.data, text, document)
    at = _too_long_integer(document.data)
    if at is not None:
        # JSON's own bound (_json_read.py), for YAML's integers too: 0x and 20,000 f's
        # is a number no message, verdict or JSON document could write.
        raise UsageError(
            f"{read.where(at)}: {what} is not valid YAML: an integer of over"
            f" {sys.get_int_max_str_digits():,} digits is too long to read"
        )
    return read


def _too_long_integer(data: object) -> tuple[str | int, ...] | None:
    """Where the first integer of ``data`` with more digits than Python writes is, or
    ``None``. Each part is looked at once, however often YAML's aliases repeat it."""
    huge = 10 ** sys.get_int_max_str_digits()
    seen: set[int] = set()
    stack: list[tuple[tuple[str | int, ...], object]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            if abs(value) >= huge:
                return path
        elif isinstance(value, (dict, list)) and id(value) not in seen:
            seen.add(id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend(((*path, key), item) for key, item in reversed(list(items)))
    return None


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
