"""``lint``, ``normalize``, ``bundle`` and ``run``: PROCESS.md files and their checks."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .. import _process as process_
from .._limits import Limits
from .._process import Process, ProcessError, ProcessProblem, ProcessStep
from .._shown import WHITESPACE, escaped_text, is_blank, names_text, show, shown_pointer
from ..errors import LimitsError, Problem
from ._common import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    STDIN,
    VERDICT_EXIT,
    Commands,
    DataFile,
    Style,
    UsageError,
    common_options,
    error_lines,
    print_json,
    read_data,
    read_text,
    shown,
    shown_lines,
)
from ._waiting import StatusLine

if TYPE_CHECKING:
    from .._bundle import Bundle, Material, Submission
    from .._check import Check

# `lint` and `normalize` need only the modules above; what `bundle` and `run` need (bundles,
# run data shapes, the evaluators, the run itself) is imported where they use it.

# Below this many files, lint says nothing while it reads; at or above it (on a terminal, or
# with --progress) a progress line shows how far it has got.
PROGRESS_FROM = 20


def register(commands: Commands) -> None:
    """Add ``lint``, ``normalize``, ``bundle`` and ``run``."""
    common = common_options()

    lint = commands.add_parser(
        "lint",
        parents=[common],
        help="report every problem of PROCESS.md files",
        description="Report every problem a server offering check-1 would refuse a process "
        "for, one per line as FILE:LINE:COL: POINTER: message, then a count. Checked: the "
        "whole frontmatter against core-2's shape (unknown or misspelt keys at any depth, "
        "types, the required name, description, steps and step id, the name's pattern, step "
        "ids used twice) and the check-1 profile's rules (check only on agent and task steps, "
        "advisory only beside check, every check key valid under the server's limits, a "
        "server with check-1 and an evaluator). A folder means every PROCESS.md and "
        "*.process.md file in it; - is standard input. Exit 0 no problems, 1 problems, 2 "
        "unreadable file.",
    )
    lint.add_argument("files", nargs="+", metavar="FILE", type=Path)
    _limits_option(lint)
    lint.add_argument(
        "--profiles",
        default=process_.PROFILE,
        metavar="NAMES",
        help=f"the profiles the server offers, comma-separated (default: {process_.PROFILE})",
    )
    lint.add_argument(
        "--no-evaluator",
        action="store_true",
        help="lint for a server with no evaluator configured (any check is refused)",
    )
    lint.add_argument(
        "--progress",
        action="store_true",
        help="show the progress line even when stderr is not a terminal",
    )
    lint.set_defaults(handler=_lint)

    normalize = commands.add_parser(
        "normalize",
        parents=[common],
        help="print a step's check in full form, every threshold explicit",
        description="Print the step's check key in full form with every threshold explicit "
        "(YAML to paste into the file; with --json, the JSON). Exit 1 if the key has problems.",
    )
    _step_options(normalize, material=False)
    normalize.set_defaults(handler=_normalize)

    bundle = commands.add_parser(
        "bundle",
        parents=[common],
        help="show exactly what the evaluator would be shown, and what was cut",
        description="Show exactly what the evaluator would be shown for a submission to the "
        "step, with sizes, and what was cut to fit checkStateBytes. The submission and the run "
        "data must have core-2's shapes: every problem is listed as FILE:LINE:COL: POINTER: "
        "message. Exit 0, or 2 for unreadable input.",
    )
    _step_options(bundle, material=True)
    bundle.set_defaults(handler=_bundle)

    run = commands.add_parser(
        "run",
        parents=[common],
        help="run a step's check on a submission and print the outcome",
        description="Run the step's check on a submission. The submission and the run data "
        "must have core-2's shapes (as for bundle). Exit 0 pass, 1 fail, 3 unsure, 4 error (by "
        "the verdict, advisory or not), 2 unreadable input.",
    )
    _step_options(run, material=True)
    run.add_argument(
        "--evaluator",
        required=True,
        metavar="SPEC",
        help="replay:ANSWERS (recorded answers, YAML or JSON; replay:- reads standard "
        "input), systemone:MODEL, openai-decisions:MODEL, openai-chat:MODEL or "
        "sglang-decisions:MODEL (their keys and hosts come from TYPESAFE_*, OPENAI_* and "
        "SGLANG_* variables: docs/environment.md)",
    )
    run.add_argument(
        "--advisory",
        action="store_true",
        help="record the verdict without blocking (as the step's advisory: true does)",
    )
    run.add_argument("--now", metavar="TIME", help="the verdict's at (RFC 3339; default: now)")
    run.add_argument(
        "--cache",
        metavar="DIR",
        type=Path,
        help="keep model answers in DIR and reuse them for what was already asked",
    )
    run.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="the longest to wait for the model, the one re-ask included: a question still "
        "unanswered then is not answered (reason: timeout), and the verdict is error "
        "(default: each request waits the backend's own limit, 60 s)",
    )
    run.add_argument(
        "--progress",
        action="store_true",
        help="say on stderr who is being asked even when stderr is not a terminal (on a "
        "terminal, a waiting line always shows)",
    )
    run.set_defaults(handler=_run)


def _seconds(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text!r}")
    return value


def _limits_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--limits",
        type=Path,
        metavar="LIMITS",
        help="the server's describe.limits (JSON or YAML, - for standard input; default: the "
        "profile's defaults)",
    )


def _step_options(parser: argparse.ArgumentParser, *, material: bool) -> None:
    parser.add_argument(
        "file", type=Path, metavar="FILE", help="a PROCESS.md file (- for standard input)"
    )
    parser.add_argument("--step", required=True, metavar="ID", help="the step's id")
    _limits_option(parser)
    if material:
        parser.add_argument(
            "--submission",
            required=True,
            type=Path,
            metavar="SUB",
            help='the submission, in core-2\'s shape: {"output": {...}, "summary": ..., '
            '"evidence": [{"kind", "ref"}], "next": ..., "reason": ...} (JSON or YAML, - for '
            "standard input)",
        )
        parser.add_argument(
            "--run-data",
            type=Path,
            metavar="RUN",
            help='the run data, in core-2\'s shape: {"inputs": {...}, "steps": {ID: record}} '
            '(JSON or YAML, - for standard input; default: {"inputs": {}, "steps": {}})',
        )
        parser.add_argument(
            "--show-route",
            action="store_true",
            help="show the evaluator the submission's next and reason (not shown by default)",
        )


# Reading inputs -------------------------------------------------------------------------------


def _limits(path: Path | None) -> Limits:
    if path is None:
        return Limits()
    data = read_data(path, "limits file")
    try:
        return Limits.from_json(data.data)
    except LimitsError as error:
        # Each message starts with the key it is about (``checkPass must be ...``).
        first = str(error).split(" ", 1)[0]
        at = (first,) if isinstance(data.data, dict) and first in data.data else ()
        raise UsageError(f"{data.where(at)}: {error}") from None


def _process(path: Path) -> Process:
    """The process, or its problems: a file a server would refuse for its shape is exit 1,
    one line per problem; a file that cannot be read as a process is exit 2."""
    source = shown(path)
    try:
        text = (
            read_text(path, "process")
            if str(path) == STDIN
            else process_.process_text(path, source=source)
        )
        return process_.read_process(text, source=source)
    except ProcessError as error:
        raise UsageError(str(error), code=EXIT_FAIL if error.problems else EXIT_USAGE) from None


def _check(process: Process, step_id: str, limits: Limits) -> tuple[Check, bool]:
    """The step's check and whether the step is advisory.

    A step a server would refuse to publish (its check invalid, a check on an approve step,
    ``advisory`` without ``check``) is refused here too, with its problems located: exit 1.
    (A file core-2 refuses never gets here: :func:`_process` refuses it whole.)
    """
    try:
        step = process.step(step_id)
        if not step.has_check:
            process.check_for(step_id)  # raises the located "has no check"
    except ProcessError as error:
        raise UsageError(str(error)) from None
    found = [
        problem.format(process.source)
        for problem in process_.publication_problems(
            process, profiles=[process_.PROFILE], limits=limits
        )
        if problem.path[:2] == ("steps", step.index)
    ]
    if found:
        raise UsageError("\n".join(found), code=EXIT_FAIL)
    return process.check_for(step_id, limits=limits), step.data.get("advisory") is True


def _submission(path: Path, step: ProcessStep) -> tuple[Submission, str | None]:
    """The submission file, checked against core-2's shape for ``step``: every problem at once,
    each at its line and column (exit 2). With it, the objective rules it breaks
    (:func:`~checkprofile.objective_problems`), each at its place, or ``None``."""
    from .._bundle import Submission
    from .._shapes import submission_problems
    from ..errors import MaterialError

    data = read_data(path, "submission")
    problems = (
        *submission_problems(data.data, agent=step.kind == "agent"),
        *_route_problems(data.data, step),
    )
    if problems:
        raise UsageError(data.problems(problems))
    try:
        submission = Submission.from_json(data.data)
    except MaterialError as error:  # inside the output: NaN, an infinity (no JSON form)
        raise UsageError(f"{data.where(error.path)}: {error}") from None
    from .._objective import objective_problems

    broken = objective_problems(step, submission)
    return submission, (data.problems(broken) if broken else None)


def _route_problems(data: object, step: ProcessStep) -> list[Problem]:
    """A submission's ``next`` must name one of the step's routes (a server refuses any other
    step id, and a route on a step without a list of routes)."""
    if not isinstance(data, dict) or type(data.get("next")) is not str or not data["next"]:
        return []  # no route, or one the shape check refuses
    import difflib

    chosen = data["next"]
    routes = step.data.get("next")
    if not isinstance(routes, list):
        return [
            Problem(
                ("next",),
                f"next {show(chosen)}: step {show(step.id)} has no list of routes to choose from",
            )
        ]
    targets = [
        route if isinstance(route, str) else route.get("to")
        for route in routes
        if isinstance(route, (str, dict))
    ]
    names = [target for target in targets if isinstance(target, str)]
    if chosen in names:
        return []
    match = difflib.get_close_matches(chosen, names, n=1, cutoff=0.6)
    hint = f"; did you mean {show(match[0])}?" if match else ""
    return [
        Problem(
            ("next",),
            f"next {show(chosen)} is not a route of step {show(step.id)}{hint}"
            f" (routes: {names_text(names) or 'none'})",
        )
    ]


def _run_data(path: Path | None) -> DataFile | None:
    """The run data file, checked against core-2's shape: every problem at once, each at its
    line and column (exit 2). Without a file, ``None`` (empty run data)."""
    if path is None:
        return None
    from .._shapes import run_data_problems

    data = read_data(path, "run data")
    problems = run_data_problems(data.data)
    if problems:
        raise UsageError(data.problems(problems))
    return data


@attrs.frozen
class _Inputs:
    check: Check
    advisory: bool
    material: Material
    bundle: Bundle
    limits: Limits
    objective: str | None  # the objective rules the submission breaks, located; None: none


def _inputs(args: argparse.Namespace) -> _Inputs:
    """Everything ``bundle`` and ``run`` read, each file's problems named with its place."""
    from .._bundle import build_bundle
    from ..errors import MaterialError

    limits = _limits(args.limits)
    process = _process(args.file)
    check, advisory = _check(process, args.step, limits)
    submission, objective = _submission(args.submission, process.step(args.step))
    run_file = _run_data(args.run_data)
    run_data = run_file.data if run_file is not None else {"inputs": {}, "steps": {}}
    try:
        material = process_.material_for(
            process, args.step, submission=submission, run_data=run_data
        )
    except ProcessError as error:
        raise UsageError(str(error)) from None
    material = attrs.evolve(material, show_route=args.show_route)
    try:
        bundle = build_bundle(check, material, state_bytes=limits.check_state_bytes)
    except MaterialError as error:  # run data the evaluator cannot be shown (NaN), at its place
        where = run_file.where(error.path) if run_file is not None else "run data"
        raise UsageError(f"{where}: {error}") from None
    return _Inputs(check, advisory, material, bundle, limits, objective)


# lint -----------------------------------------------------------------------------------------


def _files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and (p.name.lower() == "process.md" or p.name.endswith(".process.md"))
            )
            if not found:
                raise UsageError(f"{path}: no PROCESS.md or *.process.md file in this folder")
            yield from found
        else:
            yield path


def _lint(args: argparse.Namespace) -> int:
    limits = _limits(args.limits)
    profiles = [name.strip(WHITESPACE) for name in args.profiles.split(",") if not is_blank(name)]
    files = list(_files(args.files))
    style = Style(sys.stdout)
    progress = StatusLine(forced=args.progress, wanted=len(files) >= PROGRESS_FROM)
    reports: list[dict[str, Any]] = []
    unreadable = problems = 0
    for number, path in enumerate(files, start=1):
        source = shown(path)
        progress.show(f"[{number}/{len(files)}] {source}")
        try:
            text = read_text(path, "process") if str(path) == STDIN else None
            found = process_.lint_process(
                process_.process_text(path, source=source) if text is None else text,
                source=source,
                profiles=profiles,
                evaluator_configured=not args.no_evaluator,
                limits=limits,
            )
        except ProcessError as error:
            unreadable += 1
            reports.append({"file": source, "error": str(error), "problems": []})
            if not args.json:
                progress.clear()
                for line in error_lines(str(error)):
                    print(style(line, "error"))
            continue
        problems += len(found)
        reports.append(
            {"file": source, "error": None, "problems": [_problem_json(p) for p in found]}
        )
        if not args.json and found:
            progress.clear()
            for problem in found:
                print(_styled(problem, source, style))
    progress.clear()
    if args.json:
        print_json({"files": reports, "problems": problems, "unreadable": unreadable})
    else:
        print(_summary(len(files), problems, unreadable))
    if unreadable:
        return EXIT_USAGE
    return EXIT_FAIL if problems else EXIT_OK


def _summary(files: int, problems: int, unreadable: int) -> str:
    """``3 files, no problems``; ``1 file, 4 problems``; ``2 files, 4 problems, 1 unreadable``."""
    line = f"{files} file{'s' * (files != 1)}, "
    line += f"{problems} problem{'s' * (problems != 1)}" if problems else "no problems"
    return line + (f", {unreadable} unreadable" if unreadable else "")


def _problem_json(problem: ProcessProblem) -> dict[str, Any]:
    return {
        "line": problem.line,
        "column": problem.column,
        "pointer": problem.pointer,
        "message": problem.message,
    }


def _styled(problem: ProcessProblem, source: str, style: Style) -> str:
    where = style(f"{source}:{problem.line}:{problem.column}:", "path")
    message = escaped_text(problem.message)
    return f"{where} {style(shown_pointer(problem.pointer), 'dim')}: {message}"


# normalize, bundle ----------------------------------------------------------------------------


def _normalize(args: argparse.Namespace) -> int:
    limits = _limits(args.limits)
    process = _process(args.file)
    check, advisory = _check(process, args.step, limits)
    if args.json:
        print_json({"step": args.step, "check": check.to_json(), "advisory": advisory})
    else:
        sys.stdout.write(_yaml_text({"check": check.to_json()}))
    return EXIT_OK


def _yaml_text(data: Any) -> str:
    """``data`` as YAML to paste into a process file; a text holding a character that does not
    print as itself is written double-quoted with it escaped (it reads back the same)."""
    import io

    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.Emitter = _visible_emitter()
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 100
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _visible_emitter() -> type:
    """ruamel.yaml's emitter, but a scalar with a hidden character (ESC, a bidi control, a
    zero-width space: what :func:`escaped_text` escapes) is double-quoted and written with
    every character beyond ASCII escaped, so none reaches the terminal as itself."""
    from ruamel.yaml.emitter import Emitter

    class VisibleEmitter(Emitter):
        def analyze_scalar(self, scalar: str) -> Any:
            analysis = super().analyze_scalar(scalar)
            if escaped_text(scalar, keep="\n") != scalar:
                analysis.allow_flow_plain = analysis.allow_block_plain = False
                analysis.allow_single_quoted = analysis.allow_block = False
            return analysis

        def write_double_quoted(self, text: str, split: bool = True) -> None:
            if escaped_text(text, keep="\n") == text:
                super().write_double_quoted(text, split)
                return
            self.allow_unicode = False
            try:
                super().write_double_quoted(text, split)
            finally:
                self.allow_unicode = True

    return VisibleEmitter


def _bundle(args: argparse.Namespace) -> int:
    from .._bundle import shown_submission

    inputs = _inputs(args)
    check, bundle, limits = inputs.check, inputs.bundle, inputs.limits
    sizes = {
        "instructions": len(bundle.instructions.encode()),
        "body": len(bundle.body.encode()),
        "submission": len(bundle.submission_json.encode()),
        "run_data": bundle.run_data_bytes,
    }
    if args.json:
        print_json(
            {
                "questions": check.to_json(),
                "instructions": bundle.instructions,
                "body": bundle.body,
                "submission": shown_submission(
                    bundle.submission, show_route=inputs.material.show_route
                ),
                "run_data": bundle.run_data,
                "truncated": bundle.truncated,
                "dropped_steps": list(bundle.dropped_steps),
                "dropped_fields": list(bundle.dropped_fields),
                "bytes": sizes,
                "state_bytes": limits.check_state_bytes,
            }
        )
        return EXIT_OK
    out = sys.stdout
    # Every text is the process file's, the run data's or the agent's: shown line by line
    # with whatever does not print as itself escaped (a CR or ESC would rewrite the page).
    out.write(
        f"# Instructions ({sizes['instructions']} bytes)\n"
        f"{shown_lines(bundle.instructions.rstrip())}\n\n"
    )
    out.write(f"# Body ({sizes['body']} bytes)\n{shown_lines(bundle.body.rstrip())}\n\n")
    out.write(
        f"# Submission ({sizes['submission']} bytes)\n{shown_lines(bundle.submission_json)}\n\n"
    )
    out.write(
        f"# Run data ({sizes['run_data']} of {limits.check_state_bytes} bytes)\n"
        f"{shown_lines(bundle.run_data_json)}\n\n"
    )
    out.write("# Questions\n")
    for number, question in enumerate(check, start=1):
        out.write(f"{number}. [{question.kind}] {escaped_text(question.ask)}\n")
    out.write("\n# Cut\n")
    if not bundle.truncated:
        out.write("nothing: the run data fits\n")
    else:
        if bundle.dropped_steps:
            steps = ", ".join(map(escaped_text, bundle.dropped_steps))
            out.write(f"steps (oldest first): {steps}\n")
        if bundle.dropped_fields:
            out.write(f"fields: {', '.join(map(escaped_text, bundle.dropped_fields))}\n")
    return EXIT_OK


# run ------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from .._lines import answer_text
    from .._run import run_check_sync
    from .._verdict import format_at
    from ._evaluators import evaluator_for
    from ._waiting import Watched

    inputs = _inputs(args)
    if inputs.objective is not None:
        # The check runs after the objective rules of core §6 rule 3 pass (profile §3): a
        # submission that breaks them is not accepted, and no model is asked.
        print(inputs.objective, file=sys.stderr)
        print(
            "checkprofile: not accepted: the submission breaks the step's objective rules;"
            " the check did not run",
            file=sys.stderr,
        )
        return 1
    if args.now is not None:
        try:
            format_at(args.now)
        except ValueError as error:
            raise UsageError(f"--now: {error}") from None
    evaluator = Watched(
        evaluator_for(args.evaluator, check=inputs.check, cache=args.cache, timeout=args.timeout),
        name=args.evaluator,
        timeout=args.timeout,
        line=StatusLine(forced=args.progress),
    )
    outcome = run_check_sync(
        inputs.check,
        inputs.material,
        evaluator,
        limits=inputs.limits,
        advisory=inputs.advisory or args.advisory,
        now=args.now,
    )
    verdict = outcome.verdict
    if args.json:
        print_json(
            {
                "action": outcome.action,
                "verdict": verdict.to_json(),
                "issues": list(outcome.issues),
                "attempts": outcome.attempts,
                "failures": [
                    {"ask": ask, "reason": failure.reason, "detail": failure.detail or None}
                    for ask, failure in outcome.failures
                ],
            }
        )
        return VERDICT_EXIT[verdict.verdict]
    style = Style(sys.stdout)
    flag = " (advisory)" if verdict.advisory else ""
    print(f"{style(verdict.verdict, verdict.verdict)}{flag}: {outcome.action}")
    print(f"model: {escaped_text(verdict.model)}  at: {verdict.to_json()['at']}")
    if verdict.truncated:
        print("run data was cut to fit checkStateBytes")
    for result, question in zip(verdict.questions, inputs.check, strict=True):
        mark = style(result.result.ljust(6), result.result)
        print(
            f"  {mark} {escaped_text(result.ask)} → {escaped_text(answer_text(result, question))}"
        )
    for ask, failure in outcome.failures:
        detail = f": {escaped_text(failure.detail)}" if failure.detail else ""
        print(f"  not answered: {escaped_text(ask)}: {failure.reason}{detail}")
    for line in outcome.issues:
        print(f"issue: {escaped_text(line)}")
    return VERDICT_EXIT[verdict.verdict]
