"""``qualify``: run the probe battery against a model on a step's check, and say whether it
may block.

Exit 0 qualified, 1 not qualified, 2 unreadable input (or a battery larger than
``--max-requests``), 4 the evaluator could not be asked (it answered none of the requests).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any

from .._shown import escaped_text
from ._common import (
    EXIT_ERROR,
    EXIT_FAIL,
    EXIT_OK,
    Commands,
    UsageError,
    common_options,
    print_json,
)

# The options that set a threshold: (option, Thresholds field, kind).
_THRESHOLDS = (
    ("--max-repeat-change", "max_repeat_change", "share"),
    ("--order-margin", "order_margin", "share"),
    ("--form-margin", "form_margin", "share"),
    ("--injection-margin", "injection_margin", "share"),
    ("--cut-margin", "cut_margin", "share"),
    ("--max-failure-rate", "max_failure_rate", "share"),
    ("--max-p95-seconds", "max_p95_seconds", "seconds"),
    ("--min-auc", "min_auc", "share"),
    ("--min-compared", "min_compared", "count"),
    ("--min-known", "min_known", "count"),
)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {text!r}")
    return value


def register(commands: Commands) -> None:
    """Add ``qualify``."""
    from ..qualify import MAX_REQUESTS
    from ._process import _seconds, _step_options

    qualify = commands.add_parser(
        "qualify",
        parents=[common_options()],
        help="probe a model on a step's check before it may block",
        description="Run the probe battery (repeat, order, form, injection, cut, reliability, "
        "knowledge) against a model on the step's check, on real cases, and print which "
        "probes passed, each figure with its interval and threshold. The number of requests "
        "is printed before any is made. Exit 0 qualified, 1 not qualified, 2 unreadable "
        "input or more requests than --max-requests, 4 the evaluator answered none.",
    )
    _step_options(qualify, material=False)
    qualify.add_argument(
        "--evaluator",
        required=True,
        metavar="SPEC",
        help="systemone:MODEL, openai-decisions:MODEL, openai-chat:MODEL or "
        "sglang-decisions:MODEL (keys and hosts from the environment: docs/environment.md)",
    )
    qualify.add_argument(
        "--cases",
        required=True,
        action="append",
        type=Path,
        metavar="TRAIL_OR_DIR",
        help="a folder of case files (*.json, *.yaml: a submission, its run data, and "
        "optionally accepted, run, cut_bytes), whose *.jsonl files are read as the audit "
        "trail too; or an audit trail (a .jsonl file) whose decisions say which cases people "
        "accepted. Repeat it to give both.",
    )
    qualify.add_argument(
        "--max-requests",
        type=_count,
        default=MAX_REQUESTS,
        metavar="N",
        help=f"refuse to start a battery of more requests (default {MAX_REQUESTS})",
    )
    qualify.add_argument(
        "--record",
        type=Path,
        metavar="AUDIT.jsonl",
        help="append the qualification to this audit trail (where the gate reads it)",
    )
    qualify.add_argument(
        "--html", type=Path, metavar="REPORT.html", help="also write the report as a page"
    )
    qualify.add_argument(
        "--cache",
        metavar="DIR",
        type=Path,
        help="keep model answers in DIR (the repeat probe's second request is asked past it)",
    )
    qualify.add_argument(
        "--timeout", type=_seconds, metavar="SECONDS", help="the longest to wait per request"
    )
    qualify.add_argument("--now", metavar="TIME", help="the record's at (default: now)")
    for option, field, kind in _THRESHOLDS:
        kinds = {"share": _share, "seconds": _seconds, "count": _count}
        qualify.add_argument(
            option,
            dest=field,
            type=kinds[kind],
            metavar="N",
            help=f"the threshold {field} (docs/earning-trust.md says the default and why)",
        )
    qualify.set_defaults(handler=_qualify)


def _sources(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The folders of cases and the audit files among ``paths``."""
    folders: list[Path] = []
    trails: list[str] = []
    for path in paths:
        if path.is_dir():
            folders.append(path)
            trails += sorted(
                entry.path
                for entry in os.scandir(path)
                if entry.name.endswith(".jsonl") and entry.is_file()
            )
        elif path.is_file():
            trails.append(str(path))
        else:
            raise UsageError(f"--cases {escaped_text(str(path))}: not found")
    if not folders:
        raise UsageError(
            "--cases: no folder of cases given. An audit trail records hashes of what was"
            " checked, not the submissions: put each case (its submission and run data) in a"
            " file of a folder, and give the folder (the trail then says what people decided)"
        )
    return folders, trails


def _qualify(args: argparse.Namespace) -> int:
    from .. import _process as process_
    from .._verdict import format_at
    from ..human import AuditError, JsonLinesRecorder, iter_records
    from ..qualify import (
        BudgetError,
        CasesError,
        EvaluatorUnreachableError,
        Thresholds,
        plan_requests,
        qualification_html,
        qualification_json,
        qualification_text,
        qualify_sync,
        read_cases,
    )
    from ._evaluators import evaluator_for
    from ._process import _check, _limits, _process

    limits = _limits(args.limits)
    process = _process(args.file)
    check, _ = _check(process, args.step, limits)
    if args.now is not None:
        try:
            format_at(args.now)
        except ValueError as error:
            raise UsageError(f"--now: {error}") from None
    folders, trail_files = _sources(args.cases)
    try:
        trail = [record for name in trail_files for record in iter_records(name)]
    except (OSError, AuditError, ValueError) as error:
        raise UsageError(f"--cases: {error}") from None

    def material(submission: Any, run_data: Any) -> Any:
        return process_.material_for(process, args.step, submission=submission, run_data=run_data)

    cases = []
    try:
        for folder in folders:
            cases += read_cases(folder, material=material, step=args.step, trail=trail)
    except (CasesError, OSError) as error:
        raise UsageError(str(error)) from None
    options = {field: getattr(args, field) for _, field, _ in _THRESHOLDS}
    try:
        thresholds = Thresholds(**{k: v for k, v in options.items() if v is not None})
    except ValueError as error:
        raise UsageError(str(error)) from None
    planned = plan_requests(check, cases)
    evaluator = evaluator_for(args.evaluator, check=check, cache=args.cache, timeout=args.timeout)
    print(
        f"checkprofile: qualify: {planned} requests to {escaped_text(args.evaluator)} on"
        f" {len(cases)} cases (at most {args.max_requests})",
        file=sys.stderr,
    )
    try:
        found = qualify_sync(
            check,
            cases,
            evaluator,
            step=args.step,
            thresholds=thresholds,
            limits=limits,
            max_requests=args.max_requests,
            now=args.now,
        )
    except BudgetError as error:
        raise UsageError(f"--max-requests: {error}") from None
    except CasesError as error:
        raise UsageError(f"--cases: {error}") from None
    except EvaluatorUnreachableError as error:
        raise UsageError(str(error), code=EXIT_ERROR) from None
    if args.record is not None:
        try:
            JsonLinesRecorder(args.record).record(found.record)
        except OSError as error:
            raise UsageError(f"--record {args.record}: {error.strerror or error}") from None
    if args.html is not None:
        try:
            args.html.write_text(qualification_html(found), encoding="utf-8")
        except OSError as error:
            raise UsageError(f"--html {args.html}: {error.strerror or error}") from None
    if args.json:
        print_json(qualification_json(found))
    else:
        sys.stdout.write(qualification_text(found))
    return EXIT_OK if found.qualified else EXIT_FAIL
