"""The ``checkprofile`` command line (also ``python -m checkprofile``).

Exit codes: 0 pass or no problems, 1 fail or problems found, 2 usage or unreadable input,
3 unsure, 4 error. Every command takes ``--json``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import _calibrate, _conformance, _process
from ._common import EXIT_USAGE, UsageError, error_lines, internal_error, prepare_streams

__all__ = ["main"]

# Each command module adds its parsers with ``register(commands)``; a parser's ``handler`` runs
# it and returns the exit code.
COMMAND_MODULES = (_process, _calibrate, _conformance)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse prints the whole usage; one line and the documented code are enough.
        self.exit(
            EXIT_USAGE, f"{self.prog}: error: {' '.join(error_lines(message))} (see --help)\n"
        )


def parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    top = _Parser(
        prog="checkprofile",
        description="Lint, normalize and run agentprocess check-1 checks.",
        epilog="Exit codes: 0 pass or no problems, 1 fail or problems found, "
        "2 usage or unreadable input, 3 unsure, 4 error.",
    )
    commands = top.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for module in COMMAND_MODULES:
        module.register(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code."""
    prepare_streams()
    args = parser().parse_args(argv)
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
