"""The ``checkprofile`` command line (also ``python -m checkprofile``).

Exit codes: 0 pass or no problems, 1 fail or problems found, 2 usage or unreadable input,
3 unsure, 4 error. Every command takes ``--json``, before or after the command's name.

Only the module of the command that runs is imported (``--help`` and ``--version`` import
none), so each command starts in the time its own work needs.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Mapping, Sequence
from typing import Final, NoReturn

from .._version import __version__

__all__ = ["COMMANDS", "main", "parser"]

#: Every command: the module (in this package) that adds its options and runs it, with
#: ``register(commands)``, and its one-line summary in ``checkprofile --help``.
#: (tests/test_cli_first_hour.py checks the summaries are the modules' own.)
COMMANDS: Final[Mapping[str, tuple[str, str]]] = {
    "lint": ("_process", "report every problem of PROCESS.md files"),
    "normalize": ("_process", "print a step's check in full form, every threshold explicit"),
    "bundle": ("_process", "show exactly what the evaluator would be shown, and what was cut"),
    "run": ("_process", "run a step's check on a submission and print the outcome"),
    "calibrate": (
        "_calibrate",
        "compare advisory verdicts with people's decisions and suggest thresholds",
    ),
    "qualify": ("_qualify", "probe a model on a step's check before it may block"),
    "monitor": (
        "_monitor",
        "say whether an enforced check still keeps its promise, from spot checks",
    ),
    "conformance": ("_conformance", "run the conformance corpus against this library"),
}

_DESCRIPTION = "Lint, normalize and run agentprocess check-1 checks."
_EPILOG = (
    "Exit codes: 0 pass or no problems, 1 fail or problems found, 2 usage or unreadable input, "
    "3 unsure, 4 error. 'checkprofile COMMAND --help' describes a command."
)


class _Parser(argparse.ArgumentParser):
    #: The command being parsed (argparse reports a misspelt option from the top parser).
    command: str | None = None

    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage; one line in our style (``checkprofile: run: ...``),
        # a hint, and the documented code are enough.
        from ._common import EXIT_USAGE, error_lines

        prog = self.prog if self.command is None else f"{self.prog} {self.command}"
        where = prog.replace(" ", ": ", 1)
        hint = _hint(message, self)
        said = " ".join(error_lines(message))
        self.exit(EXIT_USAGE, f"{where}: {said}{hint} (see {prog} --help)\n")


def _hint(message: str, parser: _Parser) -> str:
    """``; did you mean "--evaluator"?`` for an option that is one misspelt."""
    if not message.startswith("unrecognized arguments:"):
        return ""
    import difflib

    words = message.split(":", 1)[1].split()
    wrong = next((word.split("=")[0] for word in words if word.startswith("--")), None)
    known = [option for option in _options(parser) if option.startswith("--")]
    match = difflib.get_close_matches(wrong, known, n=1, cutoff=0.6) if wrong else []
    return f'; did you mean "{match[0]}"?' if match else ""


def _options(parser: argparse.ArgumentParser) -> list[str]:
    found = [option for action in parser._actions for option in action.option_strings]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_options(sub))
    return found


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser. Every command is listed; ``command``'s options are added from its
    module (all commands' when ``command`` is ``"*"``), the others' only when they run."""
    top = _Parser(
        prog="checkprofile",
        description=_DESCRIPTION,
        epilog=_EPILOG,
    )
    top.add_argument("--version", action="version", version=f"checkprofile {__version__}")
    top.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    commands = top.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    modules = {module for module, _ in COMMANDS.values()}
    wanted: set[str] = set()
    if command == "*":
        wanted = set(modules)
    elif command is not None and command in COMMANDS:
        wanted = {COMMANDS[command][0]}
    for name, (module, summary) in COMMANDS.items():
        if module not in wanted:
            commands.add_parser(name, help=summary)  # listed; its options come when it runs
        elif module in modules:  # a module adds all of its commands at once
            modules.remove(module)
            __import__(module, globals(), None, ["register"], 1).register(commands)
    return top


def _command(argv: Sequence[str]) -> str | None:
    """The command named in ``argv``: its first word that is not an option (the options
    before a command take no value)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code."""
    prepare_streams()
    words = sys.argv[1:] if argv is None else list(argv)
    command = _command(words)
    if command is not None and command not in COMMANDS:
        return _unknown_command(command)
    top = parser(command)
    if isinstance(top, _Parser):
        top.command = command
    args = top.parse_args(words)
    # The command's module has imported these.
    from ._common import EXIT_USAGE, STDIN_READ, UsageError, error_lines, internal_error

    STDIN_READ.clear()  # standard input is read once a command, and this is a new command
    try:
        code: int = args.handler(args)
    except UsageError as error:
        for line in error_lines(str(error)):
            print(f"checkprofile: {line}", file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        print("checkprofile: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``); nothing more to say to it.
        sys.stderr.close()
        return 0
    except MemoryError:
        print("checkprofile: out of memory: the input is too large", file=sys.stderr)
        return EXIT_USAGE
    except Exception as error:  # a defect: one line and exit 70, never a traceback
        return internal_error(error)
    return code


def prepare_streams() -> None:
    """Make stdout and stderr write any text: a character their encoding cannot write (a lone
    surrogate from a JSON file, anything on an ASCII terminal) is written as its backslash
    escape instead of ending the command with a traceback."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a stream already closed
                reconfigure(errors="backslashreplace")


def _unknown_command(command: str) -> int:
    import difflib

    from ._common import EXIT_USAGE, error_lines

    match = difflib.get_close_matches(command, list(COMMANDS), n=1, cutoff=0.5)
    hint = f'; did you mean "{match[0]}"?' if match else ""
    shown = " ".join(error_lines(command))
    print(
        f'checkprofile: unknown command "{shown}"{hint} (commands: {", ".join(COMMANDS)})',
        file=sys.stderr,
    )
    return EXIT_USAGE
