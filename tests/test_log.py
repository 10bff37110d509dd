"""Failures a host can see: the package's loggers, silent until the host configures logging."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from checkprofile import (
    Bundle,
    EvaluatorError,
    Failure,
    Limits,
    Reply,
    YesNoAnswer,
    parse_check,
    run_check_sync,
)
from checkprofile.human import JsonLinesRecorder, receipt_for, verdict_record
from checkprofile.testing import ScriptedEvaluator
from support import AT, material

ROOT = Path(__file__).resolve().parent.parent
CHECK = parse_check("Is the vendor cleared?")


class HostBug:
    """A host's evaluator with a bug of its own: a lookup that fails."""

    model = "host-model-1"

    async def answer(self, bundle: Bundle) -> Reply:
        table: dict[str, float] = {}
        return Reply(self.model, [YesNoAnswer(table[bundle.check[0].ask])])


def test_an_exception_the_evaluator_raises_is_logged_with_its_traceback_and_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="checkprofile"):
        outcome = run_check_sync(CHECK, material(), HostBug(), limits=Limits(), now=AT)
    assert (outcome.verdict.verdict, outcome.action) == ("error", "retry")
    # Kept on the failure, the very exception, with its traceback to the host's own line.
    ((_, failure),) = outcome.failures
    assert type(failure.exception) is KeyError
    assert failure.exception.__traceback__ is not None
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 2  # one per attempt
    for record in errors:
        assert record.name == "checkprofile.run"
        assert "host-model-1" in record.getMessage()
        assert "KeyError" in record.getMessage()
        assert record.exc_info is not None and record.exc_info[0] is KeyError
    assert errors[-1].exc_info[1] is failure.exception  # type: ignore[index]
    assert "table[bundle.check[0].ask]" in caplog.text  # the traceback shows the host's line
    # The outcome, at DEBUG, on the same logger.
    assert any(
        r.levelno == logging.DEBUG and "verdict error" in r.getMessage() for r in caplog.records
    )


def test_the_exception_is_never_written_into_a_record(tmp_path: Path) -> None:
    outcome = run_check_sync(CHECK, material(), HostBug(), limits=Limits(), now=AT)
    record = verdict_record(outcome, run_id="run-1", step_id="screen")
    JsonLinesRecorder(tmp_path / "audit.jsonl").record(record)
    receipt = receipt_for(outcome, run_id="run-1", step_id="screen")
    # JSON could not hold an exception object: both are plain JSON, with the detail as text.
    written = (tmp_path / "audit.jsonl").read_text() + json.dumps(receipt.to_json())
    assert "the evaluator raised KeyError" in written
    assert "Traceback" not in written
    # Two failures that differ only in the exception are the same failure.
    ((_, failure),) = outcome.failures
    assert failure == Failure(failure.reason, failure.detail)


def test_a_failure_the_evaluator_reports_is_one_warning_per_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limited = ScriptedEvaluator(
        {"Is the vendor cleared?": EvaluatorError("slow down", reason="rate_limited")}
    )
    with caplog.at_level(logging.WARNING, logger="checkprofile"):
        outcome = run_check_sync(
            CHECK, material(), limited, limits=Limits(), now=AT, max_retry_wait=0
        )
    assert outcome.verdict.verdict == "error"
    warnings = [r for r in caplog.records if r.name == "checkprofile.run"]
    assert [r.levelno for r in warnings] == [logging.WARNING, logging.WARNING]
    assert "rate_limited" in warnings[0].getMessage()
    assert "slow down" in warnings[0].getMessage()


class Refusing:
    """An evaluator that raises its own account of what went wrong."""

    model = "provider-model-1"

    async def answer(self, bundle: Bundle) -> Reply:
        raise EvaluatorError("no reply in 60 s", reason="timeout", retry_after=0)


def test_an_evaluator_error_raised_is_a_warning_and_kept_on_the_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="checkprofile"):
        outcome = run_check_sync(CHECK, material(), Refusing(), limits=Limits(), now=AT)
    ((_, failure),) = outcome.failures
    assert (failure.reason, failure.detail) == ("timeout", "no reply in 60 s")
    assert type(failure.exception) is EvaluatorError
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.WARNING]
    assert all("provider-model-1" in r.getMessage() for r in caplog.records)


def test_an_answer_logs_nothing_above_debug(caplog: pytest.LogCaptureFixture) -> None:
    evaluator = ScriptedEvaluator({"Is the vendor cleared?": YesNoAnswer(0.97)})
    with caplog.at_level(logging.DEBUG, logger="checkprofile"):
        outcome = run_check_sync(CHECK, material(), evaluator, limits=Limits(), now=AT)
    assert outcome.verdict.verdict == "pass"
    # Each attempt and the outcome are debug lines; an answer never warns.
    assert caplog.records
    assert {r.levelno for r in caplog.records} == {logging.DEBUG}


def test_the_library_is_silent_until_the_host_configures_logging() -> None:
    # Without the package's NullHandler, Python's last-resort handler would print the error
    # (and its traceback) to stderr in a host that never configured logging.
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, "tests")
        from test_log import CHECK, HostBug
        from support import AT, material
        from checkprofile import Limits, run_check_sync
        outcome = run_check_sync(CHECK, material(), HostBug(), limits=Limits(), now=AT)
        print(outcome.verdict.verdict)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("error\n", "")


def test_every_area_logs_under_the_package_logger_which_has_a_null_handler() -> None:
    from checkprofile import _log

    assert _log.ROOT == "checkprofile"
    handlers = logging.getLogger("checkprofile").handlers
    assert any(type(handler) is logging.NullHandler for handler in handlers)
    for area in _log.AREAS:
        assert _log.logger(area).name == f"checkprofile.{area}"
    # The page a host reads names every logger.
    page = (ROOT / "docs" / "logging.md").read_text(encoding="utf-8")
    for area in _log.AREAS:
        assert f"`checkprofile.{area}`" in page, area


def test_a_recorder_that_finds_a_torn_line_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b'{"record":"verd')  # a writer that died mid-line
    outcome = run_check_sync(CHECK, material(), HostBug(), limits=Limits(), now=AT)
    with caplog.at_level(logging.WARNING, logger="checkprofile"):
        JsonLinesRecorder(path).record(verdict_record(outcome, run_id="r", step_id="s"))
    (record,) = [r for r in caplog.records if r.name == "checkprofile.human"]
    assert str(path) in record.getMessage()
    assert "middle of a line" in record.getMessage()


def test_an_internal_error_of_the_command_line_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    from checkprofile.cli._common import EXIT_INTERNAL, internal_error

    def broken() -> Any:
        raise ZeroDivisionError("a defect")

    try:
        broken()
    except ZeroDivisionError as error:
        with caplog.at_level(logging.ERROR, logger="checkprofile"):
            code = internal_error(error)
    assert code == EXIT_INTERNAL
    (record,) = caplog.records
    assert record.name == "checkprofile.cli"
    assert record.exc_info is not None and record.exc_info[0] is ZeroDivisionError
    assert "Traceback" not in capsys.readouterr().err  # the user sees one line


def test_ask_evaluator_quiet_logs_nothing_where_it_would_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # An evaluator wrapping another (a cache) asks it quietly, so a failure is said once, by
    # the check that called the wrapper; asked plainly, the same failure is a warning.
    import asyncio

    from checkprofile import ask_evaluator, build_bundle

    limited = ScriptedEvaluator(
        {"Is the vendor cleared?": EvaluatorError("slow down", reason="rate_limited")}
    )
    bundle = build_bundle(CHECK, material(), state_bytes=65536)
    with caplog.at_level(logging.DEBUG, logger="checkprofile"):
        _, quiet = asyncio.run(ask_evaluator(limited, bundle, quiet=True))
    assert [type(entry) for entry in quiet] == [Failure]
    assert caplog.records == []
    with caplog.at_level(logging.DEBUG, logger="checkprofile"):
        _, said = asyncio.run(ask_evaluator(limited, bundle))
    assert said == quiet
    assert [r.levelno for r in caplog.records if r.levelno >= logging.WARNING] == [logging.WARNING]
