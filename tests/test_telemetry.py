"""OpenTelemetry: a check against each adapter's loopback host yields its spans, evaluation
events and metrics, read back through the SDK's in-memory exporters; without the API nothing
is imported."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import attrs
import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

from loopback import (
    VENDOR_SUMMARY,
    LoopbackServer,
    Scripted,
    chat,
    decisions,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
    systemone,
    vendor_material,
)
from opentelemetry import _logs, metrics, trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.metrics.view import DropAggregation
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from checkprofile import (
    ChoiceAnswer,
    Failure,
    Limits,
    YesNoAnswer,
    _telemetry,
    parse_check,
    run_check,
    run_check_sync,
)
from checkprofile.adapters.cache import CachingEvaluator
from checkprofile.adapters.openai_chat import ChatEvaluator
from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from checkprofile.testing import ScriptedEvaluator
from support import spec_full_form

SPANS = InMemorySpanExporter()
LOGS = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
METRICS = InMemoryMetricReader()


class Fault(Exception):
    """What a broken telemetry component raises."""


class _RaisingAttributes(BoundedAttributes):
    """The SDK's attribute store of a span, made to refuse every attribute."""

    def __setitem__(self, key: str, value: Any) -> None:
        raise Fault(f"attribute {key} refused")

    def _set_items(self, attributes: Any) -> None:
        raise Fault("attributes refused")


class FaultySpans(SpanProcessor):
    """A span processor of the SDK that raises where ``armed`` says: on ``"start"``, on
    ``"end"``, or makes each span it sees refuse its attributes (``"attribute"``)."""

    armed: ClassVar[set[str]] = set()

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if "start" in self.armed:
            raise Fault("on_start")
        if "attribute" in self.armed:
            span._attributes = _RaisingAttributes()

    def on_end(self, span: Any) -> None:
        if "end" in self.armed:
            raise Fault("on_end")


class FaultyLogs(LogRecordProcessor):
    """A log record processor of the SDK that raises on every event while ``armed``."""

    armed: ClassVar[bool] = False

    def on_emit(self, log_record: Any) -> None:
        if self.armed:
            raise Fault("on_emit")

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class _FaultyAggregation(DropAggregation):
    """The SDK's aggregation of a metric reader, made to raise at the first measurement."""

    def _create_aggregation(self, *args: Any, **kwargs: Any) -> Any:
        raise Fault("aggregation")


def faulty_reader() -> InMemoryMetricReader:
    """A metric reader of the SDK whose every instrument raises as it records."""
    return InMemoryMetricReader(
        preferred_aggregation={kind: _FaultyAggregation() for kind in (Counter, Histogram)}
    )


PROVIDERS: dict[str, Any] = {}


@pytest.fixture(scope="module", autouse=True)
def _sdk() -> None:
    # The global providers can be set once per process: set here, as a host sets them.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(SPANS))
    provider.add_span_processor(FaultySpans())
    trace.set_tracer_provider(provider)
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(LOGS))
    logs.add_log_record_processor(FaultyLogs())
    _logs.set_logger_provider(logs)
    PROVIDERS["meter"] = MeterProvider(metric_readers=[METRICS])
    metrics.set_meter_provider(PROVIDERS["meter"])


@pytest.fixture(autouse=True)
def _clear() -> Iterator[None]:
    SPANS.clear()
    LOGS.clear()
    METRICS.get_metrics_data()  # drains nothing (cumulative), read to compare before/after
    yield


def finished_spans() -> list[Any]:
    return list(SPANS.get_finished_spans())


def finished_events() -> list[Any]:
    return [log.log_record for log in LOGS.get_finished_logs()]


def points(name: str) -> list[Any]:
    data = METRICS.get_metrics_data()
    assert data is not None
    found: list[Any] = []
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    found.extend(metric.data.data_points)
    return found


def children(spans: list[Any], parent: Any) -> list[Any]:
    """The spans whose parent is ``parent``, in the order they ended."""
    return [
        span
        for span in spans
        if span.parent is not None and span.parent.span_id == parent.context.span_id
    ]


def _run(kind: str, server: LoopbackServer) -> Any:
    if kind == "systemone":
        server.default = systemone()
        evaluator: Any = SystemOneEvaluator("jev-latest", base_url=server.url, api_key="k")
    elif kind == "decisions":
        server.default = decisions()
        evaluator = DecisionsEvaluator("gpt-6-luna", base_url=server.url + "/v1", api_key="k")
    else:
        server.default = chat()
        evaluator = ChatEvaluator("judge", base_url=server.url + "/v1", api_key="k")
    return run_example_check(evaluator)


@pytest.mark.parametrize(
    ("kind", "operation", "response_model"),
    [
        ("systemone", "system_one", "jev-2026-09-15"),
        ("decisions", "decisions", "gpt-6-luna-2026-10-01"),
        ("chat", "chat", "judge-2026-09-30"),
    ],
)
def test_a_check_is_a_span_with_a_child_per_model_call_and_an_event_per_question(
    loopback: LoopbackServer, kind: str, operation: str, response_model: str
) -> None:
    outcome = _run(kind, loopback)
    assert outcome.verdict.verdict == "pass"
    spans = finished_spans()
    (check,) = [span for span in spans if span.name == "check"]
    (call,) = children(spans, check)
    requested = outcome.verdict.model if kind != "chat" else response_model
    assert call.name == f"{operation} {call.attributes['gen_ai.request.model']}"
    assert call.attributes["gen_ai.operation.name"] == operation
    assert call.attributes["gen_ai.response.model"] == requested
    usage = outcome.calls[0].usage
    if usage is not None and usage.input_tokens is not None:
        assert call.attributes["gen_ai.usage.input_tokens"] == usage.input_tokens
        assert call.attributes["gen_ai.usage.output_tokens"] == usage.output_tokens
    assert check.attributes["checkprofile.verdict"] == "pass"
    assert check.attributes["checkprofile.action"] == "complete"
    assert check.attributes["checkprofile.advisory"] is False

    events = finished_events()
    assert [event.event_name for event in events] == ["gen_ai.evaluation.result"] * 3
    assert [event.attributes["gen_ai.evaluation.name"] for event in events] == [
        "checkprofile.yes_no.0",
        "checkprofile.choice.1",
        "checkprofile.rubric.2",
    ]
    assert {event.attributes["gen_ai.evaluation.score.label"] for event in events} == {"pass"}
    assert events[0].attributes["gen_ai.evaluation.score.value"] == outcome.answers[0].p
    for event in events:  # parented to the check's span
        assert event.span_id == check.context.span_id
        assert event.trace_id == check.context.trace_id


def test_usage_on_spans_and_metrics_equals_what_the_host_reported(
    loopback: LoopbackServer,
) -> None:
    # The loopback System One host reports a quarter of the request's bytes as input tokens.
    outcome = _run("systemone", loopback)
    sent = len(loopback.last().body) // 4
    usage = outcome.calls[0].usage
    assert usage is not None and usage.input_tokens == sent and usage.output_tokens == 0
    (call,) = [span for span in finished_spans() if span.name != "check"]
    assert call.attributes["gen_ai.usage.input_tokens"] == sent
    assert call.attributes["gen_ai.response.id"] == "req-1"
    tokens = {
        p.attributes["gen_ai.token.type"]: p.sum
        for p in points("gen_ai.client.token.usage")
        if p.attributes["gen_ai.request.model"] == "jev-latest"
    }
    assert tokens["input"] >= sent
    durations = [
        p
        for p in points("gen_ai.client.operation.duration")
        if p.attributes["gen_ai.operation.name"] == "system_one"
    ]
    assert durations and durations[0].count >= 1


def test_each_request_of_a_chat_call_is_a_span_with_its_own_response_id(
    loopback: LoopbackServer,
) -> None:
    # The chat fallback asks each question in a request of its own: one attempt, three
    # requests, three ids. Each request is a child span of the attempt's, with its id.
    answer = chat()
    numbers = itertools.count(1)

    def respond(request: Any) -> Scripted:
        return attrs.evolve(answer(request), headers={"x-request-id": f"req-{next(numbers)}"})

    loopback.default = respond
    evaluator = ChatEvaluator("judge", base_url=loopback.url + "/v1", api_key="k")
    outcome = run_example_check(evaluator)
    assert outcome.verdict.verdict == "pass"
    (usage,) = [call.usage for call in outcome.calls]
    assert usage is not None and sorted(usage.request_ids) == ["req-1", "req-2", "req-3"]
    spans = finished_spans()
    (check,) = [span for span in spans if span.name == "check"]
    (call,) = children(spans, check)
    # The attempt names every request; no one id stands for all three.
    assert "gen_ai.response.id" not in call.attributes
    assert list(call.attributes["checkprofile.request_ids"]) == list(usage.request_ids)
    requests = children(spans, call)
    assert sorted(span.attributes["gen_ai.response.id"] for span in requests) == sorted(
        usage.request_ids
    )
    for span in requests:
        assert span.name == "chat judge"
        assert span.attributes["gen_ai.operation.name"] == "chat"
        assert span.attributes["gen_ai.response.model"] == "judge-2026-09-30"
        assert span.attributes["gen_ai.usage.input_tokens"] == 100
        assert span.attributes["gen_ai.usage.output_tokens"] == 1
    # The tokens are counted once, by the attempt: 3 requests of 100 input tokens.
    assert call.attributes["gen_ai.usage.input_tokens"] == 300


def test_a_cached_evaluator_is_traced_as_the_operation_it_caches(
    loopback: LoopbackServer, tmp_path: Any
) -> None:
    loopback.default = chat()
    inner = ChatEvaluator("judge", base_url=loopback.url + "/v1", api_key="k")
    outcome = run_example_check(CachingEvaluator(inner, tmp_path))
    assert outcome.verdict.verdict == "pass"
    spans = finished_spans()
    (check,) = [span for span in spans if span.name == "check"]
    (call,) = children(spans, check)
    assert call.name == "chat judge"
    assert call.attributes["gen_ai.operation.name"] == "chat"
    durations = [
        p
        for p in points("gen_ai.client.operation.duration")
        if p.attributes["gen_ai.request.model"] == "judge"
    ]
    assert {p.attributes["gen_ai.operation.name"] for p in durations} == {"chat"}


def test_checks_are_counted_by_verdict_action_advisory_and_model(
    loopback: LoopbackServer,
) -> None:
    def count(verdict: str) -> int:
        return sum(
            p.value
            for p in points("checkprofile.checks")
            if p.attributes["checkprofile.verdict"] == verdict
            and p.attributes["gen_ai.request.model"] == "jev-latest"
        )

    before = count("error")
    loopback.default = Scripted(status=500, json={"detail": "down"})
    evaluator = SystemOneEvaluator("jev-latest", base_url=loopback.url, api_key="k")
    outcome = run_example_check(evaluator)
    assert outcome.verdict.verdict == "error"
    assert count("error") == before + 1
    (check,) = [span for span in finished_spans() if span.name == "check"]
    assert check.attributes["error.type"] == "server_error"
    events = finished_events()
    assert {event.attributes["error.type"] for event in events} == {"server_error"}
    assert all("gen_ai.evaluation.score.label" not in event.attributes for event in events)


def test_no_submission_run_data_or_answer_text_without_content_capture(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "Acme-SECRET-7731"
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    loopback.default = chat()
    evaluator = ChatEvaluator("judge", base_url=loopback.url + "/v1", api_key="k")
    run_check_sync(
        parse_check(spec_full_form()),
        vendor_material(secret, vendor=secret),
        evaluator,
        limits=Limits(),
    )
    dumped = _dump()
    assert secret not in dumped
    assert "Is the vendor" not in dumped  # not even the ask
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    SPANS.clear()
    LOGS.clear()
    outcome = run_example_check(evaluator, summary=VENDOR_SUMMARY)
    events = finished_events()
    assert [e.attributes["checkprofile.question.ask"] for e in events] == [
        q.ask for q in outcome.verdict.questions
    ]
    assert VENDOR_SUMMARY not in _dump()  # the submission never, even so


class _Named(ScriptedEvaluator):
    """A scripted evaluator whose class names its own GenAI operation."""

    operation_name: object = None


@pytest.mark.parametrize(
    ("named", "operation"),
    [
        ("grade", "grade"),
        ("o" * 64, "o" * 64),  # the longest name kept
        ("o" * 65, "evaluate"),
        ("", "evaluate"),
        ("two\nlines", "evaluate"),
        ("café", "evaluate"),
        (7, "evaluate"),
    ],
    ids=["short", "64", "65", "empty", "newline", "not-ascii", "not-text"],
)
def test_a_call_span_names_the_evaluators_operation_only_when_short_and_plain(
    named: object, operation: str
) -> None:
    # An evaluator class names its operation; a name too long or not plain is the default.
    evaluator = type("Evaluator", (_Named,), {"operation_name": named})(
        {"Is it done?": YesNoAnswer(0.99)}, model="graded-1"
    )
    outcome = run_check_sync(
        parse_check("Is it done?"), vendor_material(), evaluator, limits=Limits()
    )
    assert outcome.verdict.verdict == "pass"
    (call,) = [span for span in finished_spans() if span.name != "check"]
    assert call.attributes["gen_ai.operation.name"] == operation
    assert call.name == f"{operation} graded-1"


def _dump() -> str:
    spans = [span.to_json() for span in finished_spans()]
    logs = [log.to_json() for log in LOGS.get_finished_logs()]
    return json.dumps([spans, logs])


@pytest.mark.parametrize("api", ["absent", "installed but not imported by the host"])
def test_without_the_api_in_use_nothing_is_imported_and_checks_run(api: str) -> None:
    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError("blocked: " + name)
if sys.argv[1] == "absent":
    sys.meta_path.insert(0, Block())
from checkprofile import Limits, parse_check, run_check_sync, YesNoAnswer
from checkprofile.testing import ScriptedEvaluator
sys.path.insert(0, "tests")
from loopback import vendor_material
outcome = run_check_sync(parse_check("Is it done?"), vendor_material(),
    ScriptedEvaluator({"Is it done?": YesNoAnswer(0.99)}), limits=Limits())
assert outcome.verdict.verdict == "pass", outcome
loaded = sorted(name for name in sys.modules if name.startswith("opentelemetry"))
print(loaded)
"""
    done = subprocess.run(
        [sys.executable, "-c", code, api],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_importing_the_package_imports_no_telemetry() -> None:
    code = (
        "import sys, checkprofile, checkprofile.adapters.systemone;"
        " print(sorted(n for n in sys.modules if n.startswith('opentelemetry')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_monitor_records_its_bound_and_a_span_event() -> None:
    from test_human_monitor import SETTINGS, trail

    from checkprofile.human import monitor_update

    tracer = trace.get_tracer("host")
    with tracer.start_as_current_span("after spot checks"):
        state, events = monitor_update(None, trail(1500, 0.4), settings=SETTINGS)
    assert events and state["steps"]["review"]["broken"]
    (span,) = [s for s in finished_spans() if s.name == "after spot checks"]
    found = [e for e in span.events if e.name == "checkprofile.monitor"]
    kinds = {e.attributes["checkprofile.monitor.kind"]: e.attributes for e in found}
    assert kinds["wrong_pass"]["checkprofile.monitor.status"] == "broken"
    assert kinds["wrong_pass"]["checkprofile.monitor.lower"] > 0.05
    bound = [
        p
        for p in points("checkprofile.monitor.bound")
        if p.attributes["checkprofile.monitor.kind"] == "wrong_pass"
    ]
    assert bound and bound[-1].max > 0.05


# --- Issue 34, finding 12: a broken telemetry component changes no outcome -----------------------

FAULTS = ["span start", "span end", "span attribute", "event", "metric"]


@contextmanager
def broken(fault: str) -> Iterator[None]:
    """The SDK's real components made to raise, as ``fault`` names, while the ``with`` runs."""
    reader = faulty_reader() if fault == "metric" else None
    if fault.startswith("span "):
        FaultySpans.armed.add(fault.removeprefix("span "))
    if fault == "event":
        FaultyLogs.armed = True
    if reader is not None:
        PROVIDERS["meter"].add_metric_reader(reader)
    try:
        yield
    finally:
        FaultySpans.armed.clear()
        FaultyLogs.armed = False
        if reader is not None:
            PROVIDERS["meter"].remove_metric_reader(reader)


@pytest.fixture(name="forgotten")
def forgotten_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    """No kind of telemetry failure logged yet in this process (each is logged once)."""
    monkeypatch.setattr(_telemetry, "_logged", set())


def scripted_check(verdict: str) -> Any:
    """A check whose scripted evaluator gives ``verdict``: pass, fail, or error."""
    if verdict == "error":
        step: Any = Failure("malformed", "a broken answer")
    else:
        step = YesNoAnswer(0.99 if verdict == "pass" else 0.01)
    return lambda: run_check_sync(
        parse_check("Is it done?"),
        vendor_material(),
        ScriptedEvaluator({"Is it done?": step}, model="graded-1"),
        limits=Limits(),
        now="2026-10-06T09:04:20Z",
    )


def same(outcome: Any, expected: Any) -> None:
    """``outcome`` is ``expected`` in all that a host reads of it (not its wall times)."""
    assert outcome.verdict == expected.verdict
    assert outcome.action == expected.action
    assert outcome.answers == expected.answers
    assert [(ask, f.reason, f.detail) for ask, f in outcome.failures] == [
        (ask, f.reason, f.detail) for ask, f in expected.failures
    ]
    assert outcome.attempts == expected.attempts


@pytest.mark.parametrize("verdict", ["pass", "fail", "error"])
@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_telemetry_component_leaves_the_verdict_as_it_is(
    fault: str, verdict: str, forgotten: None, caplog: pytest.LogCaptureFixture
) -> None:
    run = scripted_check(verdict)
    expected = run()
    assert expected.verdict.verdict == verdict
    with caplog.at_level(logging.WARNING, logger="checkprofile.telemetry"), broken(fault):
        outcome = run()
    same(outcome, expected)
    (record,) = [r for r in caplog.records if r.name == "checkprofile.telemetry"]
    assert "Fault" in record.getMessage()
    assert record.exc_info is not None and type(record.exc_info[1]) is Fault


@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_telemetry_component_leaves_an_adapters_verdict_as_it_is(
    loopback: LoopbackServer, fault: str, forgotten: None
) -> None:
    # The chat adapter makes a span per request of its own, inside the call's span.
    expected = _run("chat", loopback)
    assert expected.verdict.verdict == "pass"
    with broken(fault):
        outcome = _run("chat", loopback)
    same(outcome, expected)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_component_is_logged_once_not_once_per_check(
    fault: str, forgotten: None, caplog: pytest.LogCaptureFixture
) -> None:
    run = scripted_check("error")
    with caplog.at_level(logging.DEBUG, logger="checkprofile.telemetry"), broken(fault):
        outcomes = [run() for _ in range(20)]
    assert {outcome.verdict.verdict for outcome in outcomes} == {"error"}
    logged = [r for r in caplog.records if r.name == "checkprofile.telemetry"]
    assert len(logged) == 1, [r.getMessage() for r in logged]


def test_the_telemetry_after_a_fault_is_whole_again(forgotten: None) -> None:
    with broken("span end"):
        scripted_check("pass")()
    SPANS.clear()
    outcome = scripted_check("pass")()
    assert outcome.verdict.verdict == "pass"
    assert [span.name for span in finished_spans()] == ["evaluate graded-1", "check"]
    assert trace.get_current_span() is trace.INVALID_SPAN  # no span left current


def test_a_check_cancelled_while_a_span_cannot_end_is_cancelled(forgotten: None) -> None:
    # The body's own exception stands, whatever the span's end raises.
    class Slow(ScriptedEvaluator):
        async def answer(self, bundle: Any) -> Any:
            await asyncio.sleep(30)
            return await super().answer(bundle)

    async def go() -> None:
        task = asyncio.ensure_future(
            run_check(
                parse_check("Is it done?"),
                vendor_material(),
                Slow({"Is it done?": YesNoAnswer(0.99)}),
                limits=Limits(),
            )
        )
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with broken("span end"):
        asyncio.run(go())


# --- Issue 34, finding 13: capture carries no provider text, and every text is bounded -----------


def test_with_capture_on_a_providers_message_quoting_the_submission_stays_out(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "Acme-SECRET-7731"
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    # A host's 400 that quotes what it was sent, as many do.
    loopback.default = Scripted(
        status=400,
        json={"error": {"message": f"invalid request: '{secret}' is not allowed"}},
    )
    evaluator = ChatEvaluator("judge", base_url=loopback.url + "/v1", api_key="k")
    outcome = run_example_check(evaluator, summary=secret)
    assert outcome.verdict.verdict == "error"
    events = finished_events()
    assert events and all("gen_ai.evaluation.explanation" not in e.attributes for e in events)
    assert {e.attributes["error.type"] for e in events} == {outcome.failures[0][1].reason}
    assert secret not in _dump()


def test_with_capture_on_a_choices_name_is_the_explanation(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    outcome = _run("chat", loopback)
    explained = [e.attributes.get("gen_ai.evaluation.explanation") for e in finished_events()]
    chosen = outcome.answers[1].name
    assert explained == [None, chosen, None]


def test_with_capture_on_every_captured_text_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    ask = "Is it done, " + "and done " * 20_000 + "?"
    name = "n" * 5_000
    check = parse_check(
        [{"ask": ask}, {"ask": "Which?", "one_of": {name: "Long.", "b": "B."}, "pass": [name]}]
    )
    evaluator = ScriptedEvaluator(
        {
            ask: YesNoAnswer(0.99),
            "Which?": ChoiceAnswer(name, 0.9, distribution=((name, 0.9), ("b", 0.1))),
        },
        model="m" * 1_000,  # the longest a reply may name
    )
    outcome = run_check_sync(check, vendor_material(), evaluator, limits=Limits())
    assert outcome.verdict.verdict == "pass"
    events = finished_events()
    asked = events[0].attributes["checkprofile.question.ask"]
    assert len(asked) == _telemetry.MAX_CAPTURED and ask.startswith(asked[:-1])
    explained = events[1].attributes["gen_ai.evaluation.explanation"]
    assert len(explained) == _telemetry.MAX_CAPTURED and explained.endswith("…")
    texts = [
        value
        for item in [*finished_spans(), *events]
        for value in item.attributes.values()
        if isinstance(value, str)
    ]
    assert texts and max(map(len, texts)) <= _telemetry.MAX_CAPTURED


def test_a_probe_batterys_requests_are_traced_as_probes() -> None:
    import asyncio

    import qualify_fakes as fakes

    from checkprofile.qualify import qualify

    found = asyncio.run(qualify(fakes.CHECK, fakes.cases(2), fakes.well_behaved(), step="assemble"))
    spans = finished_spans()
    probes = [span for span in spans if span.name.startswith("probe ")]
    assert len(probes) == found.record.requests == 18
    counted: dict[str, int] = {}
    for span in probes:
        name = span.attributes["checkprofile.probe"]
        assert span.name == f"probe {name}"
        counted[name] = counted.get(name, 0) + 1
    assert counted == {"repeat": 4, "order": 4, "form": 2, "injection": 6, "cut": 2}
    # Each probe's call is the evaluator call a check makes, as its child.
    ids = {span.context.span_id for span in probes}
    calls = [span for span in spans if span.parent is not None and span.parent.span_id in ids]
    assert len(calls) == 18
    assert all(call.attributes["gen_ai.request.model"] == "well-behaved" for call in calls)
