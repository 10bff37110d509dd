"""``calibrate``: advisory verdicts against people's decisions, from a JSON Lines audit trail."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..human._audit import AuditError, read_records
from ..human._calibrate import MIN_CASES, calibrate
from ..human._calibrate_report import calibration_html, calibration_text
from ._common import EXIT_OK, Commands, UsageError, common_options, print_json, unreadable


def register(commands: Commands) -> None:
    """Add ``calibrate``."""
    parser = commands.add_parser(
        "calibrate",
        parents=[common_options()],
        help="compare advisory verdicts with people's decisions and suggest thresholds",
        description="Join each advisory verdict of an audit trail (JSON Lines) with the decision "
        "of the person who saw the same submission, and report per check and per question: "
        "agreement, confusion matrix, Cohen's kappa, cases sent to a person, and the thresholds "
        "that would have matched the people at the target agreement. Exit 0 when the report is "
        "made, 2 for an unreadable file or a line that is not a record (FILE:LINE).",
    )
    parser.add_argument("records", metavar="RECORDS.jsonl", type=Path)
    parser.add_argument(
        "--target",
        type=_target,
        default=0.95,
        metavar="AGREEMENT",
        help="the agreement the suggested thresholds must keep, above 0 and at most 1 "
        "(default: 0.95)",
    )
    parser.add_argument(
        "--min-cases",
        type=_min_cases,
        default=MIN_CASES,
        metavar="N",
        help=f"below this many cases a figure is marked too few to trust (default: {MIN_CASES})",
    )
    parser.add_argument(
        "--html",
        type=Path,
        metavar="REPORT.html",
        help="also write the report as one self-contained HTML page with charts",
    )
    parser.set_defaults(handler=_calibrate)


def _target(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= 1):
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {text!r}")
    return value


def _min_cases(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _calibrate(args: argparse.Namespace) -> int:
    path: Path = args.records
    try:
        records = read_records(path)
    except AuditError as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise unreadable(path, "audit records", error) from None
    report = calibrate(records, target=args.target, min_cases=args.min_cases)
    if args.html is not None:
        page = calibration_html(report, title=f"Calibration: {path.name}")
        try:
            args.html.write_text(page, encoding="utf-8")
        except OSError as error:
            raise UsageError(
                f"{args.html}: cannot write the HTML report: {error.strerror or error}"
            ) from None
    if args.json:
        print_json(report.to_json())
    else:
        sys.stdout.write(calibration_text(report))
    return EXIT_OK
