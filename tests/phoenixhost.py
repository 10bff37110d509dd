"""Arize Phoenix, run for real on loopback as an OTLP receiver, for the Phoenix test and the
screenshot of a check's trace (tools/phoenix_screenshot.py).

Phoenix runs in a virtual environment of its own (its dependencies are many): ``ENV`` names
that environment's Python. :class:`PhoenixHost` starts its server (tests/hosts/phoenix_serve.py,
which runs Phoenix's own ``phoenix.server.main serve`` with its gRPC receiver narrowed to
loopback) on 127.0.0.1 only, on free ports, with its SQLite database in a temporary directory,
its own telemetry, its assistant agent and external resources off. It is stopped, and its
files removed, when the ``with`` block ends.

:func:`export_checks` is a host's process: it configures the OpenTelemetry SDK with the
OTLP/HTTP span exporter pointed at Phoenix, runs checks against each adapter's loopback host
and prints what each outcome said, as JSON. Phoenix reads traces only (it has no OTLP logs
receiver), so the host copies each evaluation event onto the span it belongs to with
:class:`EventsOnSpans` (docs/operations.md shows the same processor). Run it in a child
process (``python tests/phoenixhost.py export URL PROJECT``): the SDK's global providers can
be set once per process, and the in-memory tests set their own.

Make the environment once (``.ci/run`` does the same)::

    python3.11 -m venv /work/venvs/phoenix
    /work/venvs/phoenix/bin/pip install -r tests/hosts/phoenix-requirements.txt
    CHECKPROFILE_TEST_PHOENIX_PYTHON=/work/venvs/phoenix/bin/python \\
        python -m pytest tests/test_telemetry_phoenix.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from jevhost import HostProcess, free_port

__all__ = ["ENV", "PROJECT", "VERSION", "EventsOnSpans", "PhoenixHost", "export_checks"]

#: The environment variable naming the Python of Phoenix's virtual environment.
ENV = "CHECKPROFILE_TEST_PHOENIX_PYTHON"

#: Phoenix's version, as tests/hosts/phoenix-requirements.txt pins it.
VERSION = "20.26.1"

#: The Phoenix project the checks' traces go to (the ``openinference.project.name``
#: resource attribute Phoenix reads).
PROJECT = "checkprofile"

HOSTS = Path(__file__).resolve().parent / "hosts"


class PhoenixHost(HostProcess):
    """A running Phoenix server; ``url`` is its web root, which also takes OTLP/HTTP at
    ``/v1/traces`` and serves its REST API under ``/v1``."""

    NAME = "Phoenix"
    START_TIMEOUT = 240.0  # it creates its database on first start

    def __init__(self, python: str) -> None:
        super().__init__(python)
        self.grpc_port = free_port()

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # Phoenix's environment is its own
        env.update(
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT=str(self.port),
            PHOENIX_GRPC_PORT=str(self.grpc_port),
            PHOENIX_WORKING_DIR=str(self.root / "phoenix"),
            PHOENIX_SQL_DATABASE_URL=f"sqlite:///{self.root / 'phoenix.db'}",
            PHOENIX_TELEMETRY_ENABLED="false",
            PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
            PHOENIX_DISABLE_AGENT_ASSISTANT="true",
            PHOENIX_AGENTS_DISABLE_BASH="true",
            PHOENIX_AGENTS_DISABLE_WEB_ACCESS="true",
            PYTHONUNBUFFERED="1",
        )
        return env

    def start(self) -> PhoenixHost:
        self.launch([self.python, str(HOSTS / "phoenix_serve.py")], self._environment(), "/healthz")
        return self

    def get(self, path: str, **query: str) -> Any:
        """A GET of Phoenix's REST API (``path`` under ``/v1``), its JSON body."""
        url = f"{self.url}/v1/{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.loads(response.read())

    def spans(self, project: str = PROJECT) -> list[dict[str, Any]]:
        """Every span Phoenix holds for ``project``, through its REST API, page by page."""
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = {"limit": "100", **({"cursor": cursor} if cursor else {})}
            page = self.get(f"projects/{urllib.parse.quote(project)}/spans", **query)
            found.extend(page["data"])
            cursor = page.get("next_cursor")
            if not cursor:
                return found

    def wait_for_spans(
        self, count: int, project: str = PROJECT, timeout: float = 30
    ) -> list[dict[str, Any]]:
        """The project's spans once there are ``count`` of them (Phoenix writes what it
        receives in batches, a moment later)."""
        deadline = time.monotonic() + timeout
        spans: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            try:
                spans = self.spans(project)
            except urllib.error.HTTPError as error:
                if error.code != 404:  # the project exists once its first span is written
                    raise
            if len(spans) >= count:
                return spans
            time.sleep(0.25)
        raise AssertionError(f"Phoenix holds {len(spans)} span(s) of {project}, not {count}")

    def export(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Run :func:`export_checks` against this Phoenix in a child process: what each
        outcome said, and the spans Phoenix then holds of them (each check's span and one
        child per attempt)."""
        done = subprocess.run(
            [sys.executable, str(Path(__file__)), "export", self.url + "/v1/traces"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent.parent,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the host process failed: {done.stderr[-4000:]}")
        said: list[dict[str, Any]] = json.loads(done.stdout)
        return said, self.wait_for_spans(sum(1 + len(run["calls"]) for run in said))


# --- A host's process: the SDK pointed at Phoenix, checks against the loopback hosts -----------

try:
    from opentelemetry import trace
    from opentelemetry.sdk._logs import LogRecordProcessor
except ImportError:  # without the SDK, the Phoenix test skips before anything here is used
    pass
else:

    class EventsOnSpans(LogRecordProcessor):
        """Copies each event (a log record with an event name) onto the span it was emitted
        in, as a span event of the same name and attributes: for a backend that reads traces
        only. checkprofile emits its evaluation events while the check's span is current."""

        def on_emit(self, log_record: Any) -> None:
            record = getattr(log_record, "log_record", log_record)  # the SDK's wrapper, or not
            span = trace.get_current_span()
            if (
                getattr(record, "event_name", None)
                and span.is_recording()
                and span.get_span_context().span_id == record.span_id
            ):
                span.add_event(record.event_name, dict(record.attributes or {}), record.timestamp)

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True


#: The checks :func:`export_checks` runs: (adapter, the model it asks for, the host's answer).
RUNS = (
    ("systemone", "jev-latest", "answers"),
    ("decisions", "gpt-6-luna", "answers"),
    ("chat", "judge", "answers"),
    ("systemone", "jev-down", "500"),
)


def export_checks(endpoint: str, project: str = PROJECT) -> list[dict[str, Any]]:
    """Configure the SDK to export spans over OTLP/HTTP to ``endpoint`` (Phoenix's
    ``/v1/traces``), run :data:`RUNS`, and return what each outcome said."""
    from loopback import LoopbackServer, Scripted, chat, decisions, run_example_check, systemone
    from opentelemetry import _logs
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from checkprofile.adapters.openai_chat import ChatEvaluator
    from checkprofile.adapters.openai_decisions import DecisionsEvaluator
    from checkprofile.adapters.systemone import SystemOneEvaluator

    resource = Resource.create(
        {"service.name": "checkprofile-phoenix-test", "openinference.project.name": project}
    )
    tracing = TracerProvider(resource=resource)
    tracing.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(tracing)
    events = LoggerProvider(resource=resource)
    events.add_log_record_processor(EventsOnSpans())
    _logs.set_logger_provider(events)

    said: list[dict[str, Any]] = []
    with LoopbackServer() as server:
        for kind, model, answer in RUNS:
            evaluator: Any
            if kind == "systemone":
                server.default = systemone()
                evaluator = SystemOneEvaluator(model, base_url=server.url, api_key="k")
            elif kind == "decisions":
                server.default = decisions()
                evaluator = DecisionsEvaluator(model, base_url=server.url + "/v1", api_key="k")
            else:
                server.default = chat()
                evaluator = ChatEvaluator(model, base_url=server.url + "/v1", api_key="k")
            if answer == "500":
                server.default = Scripted(status=500, json={"detail": "down"})
            outcome = run_example_check(evaluator)
            said.append(
                {
                    "kind": kind,
                    "model": model,
                    "verdict": outcome.verdict.verdict,
                    "action": outcome.action,
                    "response_model": outcome.verdict.model,
                    "results": [q.result for q in outcome.verdict.questions],
                    "failures": sorted({f.reason for _, f in outcome.failures}),
                    "answers": [
                        {
                            "kind": type(a).__name__,
                            **{
                                field: getattr(a, field)
                                for field in ("p", "confidence", "level")
                                if hasattr(a, field)
                            },
                        }
                        for a in outcome.answers
                    ],
                    "calls": [
                        {
                            "input_tokens": call.usage.input_tokens if call.usage else None,
                            "output_tokens": call.usage.output_tokens if call.usage else None,
                            "request_ids": list(call.usage.request_ids) if call.usage else [],
                            "model": call.model,
                        }
                        for call in outcome.calls
                    ],
                }
            )
    tracing.shutdown()  # exports what the batch processor still holds
    return said


if __name__ == "__main__":
    if sys.argv[1:2] != ["export"] or len(sys.argv) not in (3, 4):
        sys.exit("usage: python tests/phoenixhost.py export OTLP_TRACES_URL [PROJECT]")
    print(json.dumps(export_checks(*sys.argv[2:])))
