"""``conformance``: run a conformance corpus (ours, or one given) against this library."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .._shown import escaped_text
from ..conformance import STAGES, CaseResult, CorpusError, run_corpus
from ._common import (
    EXIT_FAIL,
    EXIT_OK,
    Commands,
    Style,
    UsageError,
    common_options,
    path_text,
    print_json,
)


def register(commands: Commands) -> None:
    """Add ``conformance``."""
    conformance = commands.add_parser(
        "conformance",
        parents=[common_options()],
        help="run the conformance corpus against this library",
        description="Run every case of a conformance corpus (default: the one shipped with "
        "checkprofile) and print a pass/fail table per stage, then each failing case with "
        "where it differs. Exit 0 all pass, 1 any case fails, 2 unreadable or invalid corpus.",
    )
    conformance.add_argument(
        "directory",
        nargs="?",
        type=Path,
        metavar="DIR",
        help="a corpus: one folder per stage (check_keys, grading, truncation, outcomes) of "
        "*.yaml case files",
    )
    conformance.set_defaults(handler=_conformance)


def _conformance(args: argparse.Namespace) -> int:
    directory: Path | None = args.directory
    if directory is not None and not directory.is_dir():
        what = "not found" if not directory.exists() else "not a directory"
        raise UsageError(f"{path_text(directory)}: corpus {what}")
    try:
        results = run_corpus(directory)
    except CorpusError as error:
        raise UsageError(str(error)) from None
    if args.json:
        print_json(_report(results))
    else:
        _print_table(results, sys.stdout)
    return EXIT_OK if all(result.passed for result in results) else EXIT_FAIL


def _counts(results: Sequence[CaseResult]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for stage in STAGES:
        ran = [result for result in results if result.stage == stage]
        if ran:
            passed = sum(result.passed for result in ran)
            counts[stage] = {"cases": len(ran), "passed": passed, "failed": len(ran) - passed}
    return counts


def _report(results: Sequence[CaseResult]) -> dict[str, Any]:
    return {
        "passed": all(result.passed for result in results),
        "stages": _counts(results),
        "cases": [
            {
                "id": result.id,
                "stage": result.stage,
                "rule": result.rule,
                "decisions": list(result.decisions),
                "passed": result.passed,
                "diff": result.diff or None,
                "file": result.source,
            }
            for result in results
        ],
    }


def _print_table(results: Sequence[CaseResult], out: TextIO) -> None:
    style = Style(out)
    counts = _counts(results)
    total = {
        "cases": len(results),
        "passed": sum(result.passed for result in results),
        "failed": sum(not result.passed for result in results),
    }
    width = max(len(stage) for stage in (*counts, "total"))
    out.write(f"{'stage':<{width}}  {'cases':>5}  {'passed':>6}  {'failed':>6}\n")
    for name, numbers in [*counts.items(), ("total", total)]:
        failed = f"{numbers['failed']:>6}"
        out.write(
            f"{name:<{width}}  {numbers['cases']:>5}  {numbers['passed']:>6}  "
            f"{style(failed, 'fail') if numbers['failed'] else failed}\n"
        )
    failing = [result for result in results if not result.passed]
    if failing:
        out.write("\n")
    for result in failing:
        # A corpus given on the command line is anyone's text: each line stays one line.
        name, source = escaped_text(result.id), escaped_text(result.source)
        out.write(f"{style('FAIL', 'fail')} {style(name, 'path')} ({source})\n")
        out.write(f"  rule: {escaped_text(result.rule)}\n")
        out.write(f"  {escaped_text(result.diff)}\n")
