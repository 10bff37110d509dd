"""``monitor``: after enforcement, whether a check still keeps its promise, from the spot checks
of an audit trail (one per replica) or a PostgreSQL store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..human import AuditError
from ..human._audit._postgres import DEFAULT_TABLE, PostgresRecorder, StoreError
from ..human._audit._spot import MIN_SECRET_BYTES, SpotPlan
from ..human._calibration._monitor import FALSE_ALARM, MonitorReport, MonitorSettings, monitor
from ..human._calibration._monitor_report import monitor_html, monitor_text
from ..human._calibration._recommend import CONFIDENCE, MAX_WRONG_FAIL, MAX_WRONG_PASS
from ._calibrate import _rate, _read, _segments, _since, _title, _until
from ._common import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_UNSURE,
    Commands,
    UsageError,
    common_options,
    print_json,
    unreadable,
)

_EXIT = {"certified": EXIT_OK, "broken": EXIT_FAIL, "not_yet": EXIT_UNSURE}


def register(commands: Commands) -> None:
    """Add ``monitor``."""
    parser = commands.add_parser(
        "monitor",
        parents=[common_options()],
        help="say whether an enforced check still keeps its promise, from spot checks",
        description="Weigh the spot checks of an audit trail (a sampled share of enforced "
        "verdicts a person reviewed) by the inverse of their sampling rate, and say per step: "
        "the rate of wrong passes and wrong fails among enforced verdicts, bounds that hold at "
        "any time however often this runs, and whether the promise (--max-wrong-pass, "
        "--max-wrong-fail) is certified or broken, with the false-alarm probability "
        "(--false-alarm). A new model or a reworded check starts afresh. Only spot checks the "
        "plan (--secret-file, --pass-rate, --fail-rate) drew count. Exit 0 certified, 1 "
        "broken, 3 not certified yet (too few spot checks), 2 for unreadable input.",
    )
    parser.add_argument(
        "sources",
        nargs="*",
        metavar="TRAIL",
        type=Path,
        help="an audit file (JSON Lines), or a directory: its *.jsonl files",
    )
    parser.add_argument(
        "--db",
        metavar="CONNINFO",
        help="read a PostgresRecorder's records (a libpq connection string or postgresql:// URI)",
    )
    parser.add_argument(
        "--db-table",
        metavar="TABLE",
        default=DEFAULT_TABLE,
        help=f"the table of --db (default: {DEFAULT_TABLE})",
    )
    parser.add_argument(
        "--secret-file",
        type=Path,
        metavar="FILE",
        required=True,
        help="the spot-check secret (its bytes, a final newline left out; at "
        f"least {MIN_SECRET_BYTES})",
    )
    parser.add_argument(
        "--pass-rate",
        type=_share,
        required=True,
        metavar="RATE",
        help="the share of passes spot-checked (0 to 1)",
    )
    parser.add_argument(
        "--fail-rate",
        type=_share,
        default=0.0,
        metavar="RATE",
        help="the share of fails spot-checked (0 to 1; default 0)",
    )
    parser.add_argument(
        "--max-wrong-pass",
        type=_rate,
        default=MAX_WRONG_PASS,
        metavar="RATE",
        help=f"the promised wrong-pass rate (default: {MAX_WRONG_PASS})",
    )
    parser.add_argument(
        "--max-wrong-fail",
        type=_rate,
        default=MAX_WRONG_FAIL,
        metavar="RATE",
        help=f"the promised wrong-fail rate, watched when --fail-rate is above "
        f"0 (default: {MAX_WRONG_FAIL})",
    )
    parser.add_argument(
        "--false-alarm",
        type=_rate,
        default=FALSE_ALARM,
        metavar="P",
        help=f"the chance of ever calling a kept promise broken, per step, "
        f"segment and kind (default: {FALSE_ALARM})",
    )
    parser.add_argument(
        "--confidence",
        type=_rate,
        default=CONFIDENCE,
        metavar="LEVEL",
        help=f"how sure a certificate is (default: {CONFIDENCE})",
    )
    parser.add_argument(
        "--on-broken",
        choices=("advisory", "to_person"),
        default="advisory",
        help="the event's action when the promise breaks (default: advisory)",
    )
    parser.add_argument(
        "--by", metavar="FIELD", help="also watch each value of FIELD on its own (needs --segments)"
    )
    parser.add_argument(
        "--segments",
        type=Path,
        metavar="FILE.json",
        help='each run\'s fields: {"<run id>": {"<field>": "<value>"}}',
    )
    parser.add_argument(
        "--min-spot-checks",
        type=int,
        default=30,
        metavar="N",
        help="a segment with fewer rides on the step's certificate (default 30)",
    )
    parser.add_argument(
        "--since", type=_since, metavar="TIME", help="only verdicts at or after TIME"
    )
    parser.add_argument("--until", type=_until, metavar="TIME", help="only verdicts before TIME")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="REPORT.html",
        help="also write the report as one self-contained HTML page",
    )
    parser.set_defaults(handler=_monitor)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text}")
    return value


def _monitor(args: argparse.Namespace) -> int:
    paths: list[Path] = args.sources
    if not paths and args.db is None:
        raise UsageError("monitor: give an audit file or directory, or --db CONNINFO")
    if (args.by is None) != (args.segments is None):
        raise UsageError("monitor: --by and --segments go together")
    secret = _read(args.secret_file, "the spot-check secret").removesuffix(b"\n")
    try:
        settings = MonitorSettings(
            plan=SpotPlan(passes=args.pass_rate, fails=args.fail_rate, secret=secret),
            max_wrong_pass=args.max_wrong_pass,
            max_wrong_fail=args.max_wrong_fail if args.fail_rate > 0 else None,
            false_alarm=args.false_alarm,
            confidence=args.confidence,
            on_broken=args.on_broken,
            by=args.by,
            segments=_segments(args.segments),
            min_spot_checks=args.min_spot_checks,
        )
    except ValueError as error:
        raise UsageError(f"monitor: {error}") from None
    sources: list[object] = list(paths)
    if args.db is not None:
        try:
            sources.append(PostgresRecorder(args.db, table=args.db_table))
        except (StoreError, ValueError) as error:
            raise UsageError(f"--db: {error}") from None
    report = _report(sources, paths, settings, args)
    if args.html is not None:
        page = monitor_html(report, title=f"Monitor: {_title(report.sources)}")
        try:
            args.html.write_text(page, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"{args.html}: cannot write the HTML report: {error}") from None
    if args.json:
        print_json(report.to_json())
    else:
        sys.stdout.write(monitor_text(report))
    return _EXIT[report.status]


def _report(
    sources: list[object], paths: list[Path], settings: MonitorSettings, args: argparse.Namespace
) -> MonitorReport:
    try:
        return monitor(*sources, settings=settings, since=args.since, until=args.until)
    except (AuditError, StoreError, ValueError) as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        path = Path(error.filename) if error.filename else paths[0]
        if path.is_dir():
            raise UsageError(f"{path}: no audit records (*.jsonl) in this directory") from None
        raise unreadable(path, "audit records", error) from None
