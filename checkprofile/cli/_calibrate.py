"""``calibrate``: advisory verdicts against people's decisions, from JSON Lines audit trails
(one per replica) or a PostgreSQL store."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from .._json_read import load_json
from .._shown import escaped_text
from ..human import AuditError
from ..human._audit._postgres import DEFAULT_TABLE, PostgresRecorder, StoreError
from ..human._audit._sources import Window
from ..human._calibration._calibrate import MIN_CASES, Calibration, calibrate
from ..human._calibration._drift import drift, drift_text
from ..human._calibration._recommend import CONFIDENCE, MAX_WRONG_FAIL, MAX_WRONG_PASS
from ..human._calibration._report import calibration_html, calibration_text
from ._common import (
    EXIT_FAIL,
    EXIT_OK,
    Commands,
    UsageError,
    common_options,
    print_json,
    unreadable,
)


def register(commands: Commands) -> None:
    """Add ``calibrate``."""
    parser = commands.add_parser(
        "calibrate",
        parents=[common_options()],
        help="compare advisory verdicts with people's decisions and suggest thresholds",
        description="Join each advisory verdict of an audit trail with the decision of the "
        "person who saw the same submission, and report per check and per question: "
        "agreement, confusion matrix, Cohen's kappa, cases sent to a person, and the thresholds "
        "that would have matched the people at the target agreement. The trail is one or more "
        "JSON Lines files or directories of them (one per replica; a record in two counts "
        "once), and/or a PostgreSQL store (--db). It also recommends thresholds for the whole "
        "check that keep wrong passes and wrong fails within --max-wrong-pass and "
        "--max-wrong-fail with --confidence. Exit 0 when the report is made, 2 for an "
        "unreadable file or store, or a line that is not a record (FILE:LINE). With "
        "--baseline-since or --baseline-until it compares that window with the --since/--until "
        "one instead, for a scheduled job: exit 0 when nothing moved beyond its interval, 1 "
        "when a figure did, 2 as above.",
    )
    parser.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        type=Path,
        help="an audit file (JSON Lines), or a directory: its *.jsonl files",
    )
    parser.add_argument(
        "--db",
        metavar="CONNINFO",
        help="read the records a PostgresRecorder keeps: a libpq connection string or "
        "postgresql:// URI ('' takes it all from PGHOST, PGDATABASE, PGUSER, PGPASSWORD...; "
        "keep a password there or in ~/.pgpass, not on the command line)",
    )
    parser.add_argument(
        "--db-table",
        metavar="TABLE",
        default=DEFAULT_TABLE,
        help=f"the table of --db (default: {DEFAULT_TABLE})",
    )
    parser.add_argument(
        "--since",
        type=_since,
        metavar="TIME",
        help="only verdicts at or after TIME (RFC 3339: 2026-11-01T00:00:00Z, an offset, or a "
        "date for midnight UTC), with the decisions on them whenever made",
    )
    parser.add_argument(
        "--until",
        type=_until,
        metavar="TIME",
        help="only verdicts before TIME (as --since)",
    )
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
        "--max-wrong-pass",
        type=_rate,
        default=MAX_WRONG_PASS,
        metavar="RATE",
        help="the share of submissions the recommended thresholds may pass though a person "
        f"would refuse them, above 0 and below 1 (default: {MAX_WRONG_PASS})",
    )
    parser.add_argument(
        "--max-wrong-fail",
        type=_rate,
        default=MAX_WRONG_FAIL,
        metavar="RATE",
        help="the share of submissions they may fail though a person would accept them "
        f"(default: {MAX_WRONG_FAIL})",
    )
    parser.add_argument(
        "--confidence",
        type=_rate,
        default=CONFIDENCE,
        metavar="LEVEL",
        help="how sure the promise of the recommendation is, above 0 and below 1 "
        f"(default: {CONFIDENCE})",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        metavar="LABELS.jsonl",
        help="people's own answers to each question, one submission a line: "
        '{"key": "<submission key>", "labels": {"<ask>": <label>}}; adds each question\'s '
        "reliability against them",
    )
    parser.add_argument(
        "--baseline-since",
        type=_since,
        metavar="TIME",
        help="drift: the baseline window starts at TIME; compare it with --since/--until",
    )
    parser.add_argument(
        "--baseline-until",
        type=_until,
        metavar="TIME",
        help="drift: the baseline window ends before TIME",
    )
    parser.add_argument(
        "--html",
        type=Path,
        metavar="REPORT.html",
        help="also write the report as one self-contained HTML page with charts",
    )
    parser.add_argument(
        "--by",
        metavar="FIELD",
        help="one report per value of FIELD (needs --segments), as checkprofile monitor --by",
    )
    parser.add_argument(
        "--segments",
        type=Path,
        metavar="FILE.json",
        help='each run\'s fields: {"<run id>": {"<field>": "<value>"}}',
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


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 < value < 1):
        raise argparse.ArgumentTypeError(f"must be above 0 and below 1, got {text!r}")
    return value


def _min_cases(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _bound(name: str, text: str) -> str:
    try:
        bound = getattr(Window.of(**{name: text}), name)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"{name} ")) from None
    assert isinstance(bound, str)
    return bound


def _since(text: str) -> str:
    return _bound("since", text)


def _until(text: str) -> str:
    return _bound("until", text)


def _calibrate(args: argparse.Namespace) -> int:
    paths: list[Path] = args.sources
    if not paths and args.db is None:
        raise UsageError("calibrate: give an audit file or directory, or --db CONNINFO")
    sources: list[object] = list(paths)
    if args.db is not None:
        try:
            sources.append(PostgresRecorder(args.db, table=args.db_table))
        except (StoreError, ValueError) as error:
            raise UsageError(f"--db: {error}") from None
    drifting = args.baseline_since is not None or args.baseline_until is not None
    if args.by is not None or args.segments is not None:
        return _by_segment(args, sources, paths, drifting)
    if drifting and args.html is not None:
        raise UsageError("calibrate: --html makes a report, not a drift comparison")
    report = _report(args, sources, paths, args.since, args.until)
    if drifting:
        baseline = _report(args, sources, paths, args.baseline_since, args.baseline_until)
        _warn_torn(baseline)
        result = drift(baseline, report)
        if args.json:
            print_json(result.to_json())
        else:
            sys.stdout.write(drift_text(result))
        return EXIT_FAIL if result.moved else EXIT_OK
    _warn_torn(report)
    if args.html is not None:
        page = calibration_html(report, title=f"Calibration: {_title(report.sources)}")
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


def _report(
    args: argparse.Namespace,
    sources: list[object],
    paths: list[Path],
    since: str | None,
    until: str | None,
) -> Calibration:
    try:
        return calibrate(
            *sources,
            target=args.target,
            min_cases=args.min_cases,
            max_wrong_pass=args.max_wrong_pass,
            max_wrong_fail=args.max_wrong_fail,
            confidence=args.confidence,
            since=since,
            until=until,
            labels=args.labels,
        )
    except (AuditError, StoreError) as error:
        raise UsageError(str(error)) from None
    except ValueError as error:  # since after until, a label that does not fit
        raise UsageError(str(error)) from None
    except OSError as error:
        path = Path(error.filename) if error.filename else paths[0]
        if args.labels is not None and path == args.labels:
            raise unreadable(path, "labels", error) from None
        if path.is_dir():
            raise UsageError(f"{path}: no audit records (*.jsonl) in this directory") from None
        raise unreadable(path, "audit records", error) from None


def _by_segment(
    args: argparse.Namespace, sources: list[object], paths: list[Path], drifting: bool
) -> int:
    """One report per segment: the records of each value of ``--by`` calibrated apart."""
    from ..human._audit._fast._reader import DecisionFacts, VerdictFacts
    from ..human._audit._sources import open_sources

    if args.by is None or args.segments is None:
        raise UsageError("calibrate: --by and --segments go together")
    if drifting or args.html is not None:
        raise UsageError("calibrate: --by makes one text or --json report per segment")
    fields = _segments(args.segments)
    groups: dict[str, list[object]] = {}
    try:
        _, stream = open_sources(sources, Window.of(None, None))
        for item, _ in stream:
            if isinstance(item, (VerdictFacts, DecisionFacts)):
                item = item.record()
            run = getattr(item, "run", None)
            if run is None:
                continue  # a torn line: calibrate reports those when read whole
            value = fields.get(run, {}).get(args.by)
            groups.setdefault(value if isinstance(value, str) else "(unknown)", []).append(item)
    except (AuditError, StoreError, ValueError) as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise unreadable(Path(error.filename or paths[0]), "audit records", error) from None
    reports = {
        value: _report(args, [records], paths, args.since, args.until)
        for value, records in sorted(groups.items())
    }
    if args.json:
        print_json({"by": args.by, "segments": {v: r.to_json() for v, r in reports.items()}})
    else:
        for value, report in reports.items():
            sys.stdout.write(f"== {args.by} = {value}\n{calibration_text(report)}\n")
    return EXIT_OK


def _warn_torn(report: Calibration) -> None:
    for torn in report.torn:
        print(f"checkprofile: warning: {escaped_text(str(torn))}", file=sys.stderr)
    if report.torn_lines > len(report.torn):
        print(
            f"checkprofile: warning: {report.torn_lines - len(report.torn)} more torn lines"
            " skipped",
            file=sys.stderr,
        )


def _title(sources: tuple[str, ...]) -> str:
    first = Path(sources[0]).name if sources and not sources[0].startswith("postgresql ") else ""
    if not first:
        first = "PostgreSQL" if sources else "records"
    more = len(sources) - 1
    return first + (f" and {more} more" if more > 0 else "")


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise unreadable(path, what, error) from None


def _segments(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = load_json(_read(path, "segments").decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise UsageError(f"{path}: not JSON: {error}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise UsageError(f'{path}: segments are {{"<run id>": {{"<field>": "<value>"}}}}')
    return data
