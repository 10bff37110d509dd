"""OpenTelemetry, the way libraries do it: the API only, the host configures the SDK.

With ``opentelemetry-api`` installed (``pip install "checkprofile[otel]"``), every
``run_check`` makes a span (``check``) with one child span per attempt (one call of the
evaluator), emits one ``gen_ai.evaluation.result`` event per question, and records the GenAI
client metrics and a counter of checks. The API is imported only after the host has imported
it (to configure its SDK), and nothing is done while no SDK is configured: without the API, or
with it installed but not set up, a check costs what it did without telemetry.
docs/operations.md lists every name.

No submission text, run data or answer text goes into telemetry. With content capture on
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, as the GenAI conventions name
it) each evaluation event also carries the question's ask and the answer or failure detail.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Final

from ._check import Check
from ._verdict import Answer, ChoiceAnswer, Failure, RubricAnswer, Verdict

if TYPE_CHECKING:
    from ._outcome import Outcome
    from ._usage import ModelCall, Usage

__all__ = ["CAPTURE_ENV", "EVALUATION_EVENT", "Telemetry", "evaluation_name", "telemetry"]

#: The environment variable that turns content capture on (``true``), as the GenAI
#: conventions name it.
CAPTURE_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

#: The event emitted for each question of a check.
EVALUATION_EVENT: Final = "gen_ai.evaluation.result"

_SCOPE: Final = "checkprofile"


def evaluation_name(check: Check, index: int) -> str:
    """The ``gen_ai.evaluation.name`` of question ``index`` of ``check``: ``checkprofile.``,
    the question's kind and its position, as ``checkprofile.yes_no.0``. Stable for a check,
    and free of the ask's text (which only content capture sends)."""
    return f"{_SCOPE}.{check[index].kind}.{index}"


class Telemetry:
    """The tracer, meter, instruments and event logger, made once when the API is found."""

    def __init__(self) -> None:
        from opentelemetry import metrics, trace

        from ._version import __version__

        self._trace = trace
        self.tracer = trace.get_tracer(_SCOPE, __version__)
        meter = metrics.get_meter(_SCOPE, __version__)
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration: one call of a check's evaluator",
        )
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used, as the host reported them",
        )
        self.checks = meter.create_counter(
            "checkprofile.checks",
            unit="{check}",
            description="Checks run, by verdict, action, advisory and model",
        )
        self.monitor_bound = meter.create_histogram(
            "checkprofile.monitor.bound",
            unit="1",
            description="The monitor's upper bound on a rate of wrong verdicts, by step and kind",
        )
        self._events: Any = None
        self._record: Any = None
        self._providers: tuple[Any, ...] = (trace.get_tracer_provider, metrics.get_meter_provider)
        try:
            from opentelemetry import _logs
        except ImportError:  # an API too old for the logs (events) API: no events
            return
        self._events = _logs.get_logger(_SCOPE, __version__)
        self._record = _logs.LogRecord
        self._providers += (_logs.get_logger_provider,)

    def configured(self) -> bool:
        """Whether the host has configured an SDK (any provider that is not the API's proxy
        or no-op one): until then a check makes no span, event or metric at all, so the API
        alone costs a check next to nothing. Asked at each check: an SDK set up later counts."""
        return any(_real(provider()) for provider in self._providers)

    def monitored(
        self, step: str, segment: str, kind: str, upper: float, lower: float, status: str
    ) -> None:
        """The monitor's bounds for one step (segment) and kind: the upper bound as a metric,
        and an event ``checkprofile.monitor`` on the current span, if one is recording."""
        attributes = {
            "checkprofile.step": step,
            "checkprofile.segment": segment,
            "checkprofile.monitor.kind": kind,
            "checkprofile.monitor.status": status,
        }
        self.monitor_bound.record(upper, attributes)
        span = self._trace.get_current_span()
        if span.is_recording():
            span.add_event(
                "checkprofile.monitor",
                {
                    **attributes,
                    "checkprofile.monitor.upper": upper,
                    "checkprofile.monitor.lower": lower,
                },
            )

    @contextmanager
    def check_span(self, model: str, questions: int) -> Iterator[Any]:
        """The span of one check, current while it runs."""
        with self.tracer.start_as_current_span("check", record_exception=True) as span:
            if span.is_recording():
                span.set_attribute("gen_ai.request.model", model)
                span.set_attribute("checkprofile.questions", questions)
            yield span

    @contextmanager
    def call_span(self, operation: str, model: str) -> Iterator[Any]:
        """The span of one call of the evaluator, a child of the check's."""
        with self.tracer.start_as_current_span(f"{operation} {model}") as span:
            if span.is_recording():
                span.set_attribute("gen_ai.operation.name", operation)
                span.set_attribute("gen_ai.request.model", model)
            yield span

    def request_span(self, operation: str, model: str) -> AbstractContextManager[Any]:
        """The span of one request an evaluator's call makes, when it makes several (the chat
        fallback asks each question on its own): a child of the call's span, so each request
        keeps its own ``gen_ai.response.id``. Named and marked as a call's span is."""
        return self.call_span(operation, model)

    def requested(self, span: Any, model: str | None, entry: object, usage: Usage | None) -> None:
        """What one request says on its span: the model that answered, its tokens and its
        id as the host reported them, ``error.type`` when it gave no answer. Its metrics are
        its call's (:meth:`called`), so nothing is counted twice."""
        if not span.is_recording():
            return
        if model is not None:
            span.set_attribute("gen_ai.response.model", model)
        _usage_attributes(span, usage)
        if type(entry) is Failure:
            span.set_attribute("error.type", entry.reason)
            span.set_status(self._trace.StatusCode.ERROR, entry.reason)

    def called(
        self,
        span: Any,
        call: ModelCall,
        entries: Sequence[Answer | Failure],
        operation: str,
        model: str,
    ) -> None:
        """What one call says: its span's attributes and the two GenAI client metrics."""
        usage = call.usage
        failed = [entry for entry in entries if type(entry) is Failure]
        error = failed[0].reason if failed and len(failed) == len(entries) else None
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.request.model": model,
        }
        if call.model is not None:
            attributes["gen_ai.response.model"] = call.model
        if error is not None:
            attributes["error.type"] = error
        if span.is_recording():
            span.set_attributes(attributes)
            _usage_attributes(span, usage)
            if error is not None:
                span.set_status(self._trace.StatusCode.ERROR, error)
        self.duration.record(call.seconds, attributes)
        if usage is not None:
            for kind, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
                if count is not None:
                    self.tokens.record(count, {**attributes, "gen_ai.token.type": kind})

    def checked(
        self, span: Any, outcome: Outcome, check: Check, model: str, *, capture: bool
    ) -> None:
        """What one check says: its span's attributes, an evaluation event per question and
        the count of checks."""
        verdict = outcome.verdict
        counted = {
            "checkprofile.verdict": verdict.verdict,
            "checkprofile.action": outcome.action,
            "checkprofile.advisory": verdict.advisory,
            "gen_ai.request.model": model,
        }
        if span.is_recording():
            span.set_attributes(counted)
            span.set_attribute("gen_ai.response.model", verdict.model)
            span.set_attribute("checkprofile.attempts", outcome.attempts)
            if verdict.verdict == "error":
                reasons = sorted({failure.reason for _, failure in outcome.failures})
                span.set_attribute("error.type", reasons[0] if reasons else "unknown")
                span.set_status(self._trace.StatusCode.ERROR, "the evaluator did not answer")
        self.checks.add(1, counted)
        if self._events is not None:
            self._evaluations(outcome, check, verdict, capture=capture)

    def _evaluations(
        self, outcome: Outcome, check: Check, verdict: Verdict, *, capture: bool
    ) -> None:
        failures = dict(outcome.failures)
        answers = iter(outcome.answers)
        usage = outcome.calls[-1].usage if outcome.calls else None
        response_id = usage.request_ids[0] if usage is not None and usage.request_ids else None
        for index, result in enumerate(verdict.questions):
            attributes: dict[str, Any] = {"gen_ai.evaluation.name": evaluation_name(check, index)}
            failure = failures.get(result.ask) if verdict.verdict == "error" else None
            answer = next(answers, None) if verdict.verdict != "error" else None
            if answer is not None:
                attributes["gen_ai.evaluation.score.value"] = _score(answer)
                attributes["gen_ai.evaluation.score.label"] = result.result
            else:
                attributes["error.type"] = failure.reason if failure is not None else "unknown"
            if response_id is not None:
                attributes["gen_ai.response.id"] = response_id
            if capture:
                attributes["checkprofile.question.ask"] = result.ask
                explained = _explanation(answer, failure)
                if explained is not None:
                    attributes["gen_ai.evaluation.explanation"] = explained
            self._emit(attributes)

    def _emit(self, attributes: dict[str, Any]) -> None:
        try:
            record = self._record(event_name=EVALUATION_EVENT, attributes=attributes)
        except TypeError:  # an API whose log records have no event name: say it as attribute
            record = self._record(attributes={"event.name": EVALUATION_EVENT, **attributes})
        self._events.emit(record)


def _usage_attributes(span: Any, usage: Usage | None) -> None:
    """A span's usage attributes: each token figure the host reported, and its response id
    when the span stands for one request (a call of several requests lists them all in
    ``checkprofile.request_ids``; each has its own span, :meth:`Telemetry.request_span`)."""
    if usage is None:
        return
    for name, count in (
        ("gen_ai.usage.input_tokens", usage.input_tokens),
        ("gen_ai.usage.output_tokens", usage.output_tokens),
        ("gen_ai.usage.cache_read.input_tokens", usage.cached_tokens),
    ):
        if count is not None:
            span.set_attribute(name, count)
    if len(usage.request_ids) == 1:
        span.set_attribute("gen_ai.response.id", usage.request_ids[0])
    if usage.request_ids:
        span.set_attribute("checkprofile.request_ids", list(usage.request_ids))


def _real(provider: object) -> bool:
    # The API's stand-ins until a provider is set: ProxyTracerProvider, _ProxyMeterProvider,
    # ProxyLoggerProvider, and the NoOp ones a host may set to turn telemetry off.
    name = type(provider).__name__
    return "Proxy" not in name and not name.startswith("NoOp")


def _score(answer: Answer) -> float:
    """The score of an answer: a yes/no answer's probability, a rubric answer's level, a
    choice's confidence."""
    if isinstance(answer, RubricAnswer):
        return float(answer.level)
    if isinstance(answer, ChoiceAnswer):
        return float(answer.confidence)
    return float(answer.p)


def _explanation(answer: Answer | None, failure: Failure | None) -> str | None:
    if isinstance(answer, ChoiceAnswer):
        return answer.name
    if failure is not None:
        return failure.detail or failure.reason
    return None


def capture_content() -> bool:
    """Whether the host opted in to content capture (:data:`CAPTURE_ENV` is ``true``)."""
    return os.environ.get(CAPTURE_ENV, "").strip().lower() == "true"


# None: not looked for yet; False: the API is not installed.
_found: Telemetry | bool | None = None


# A host that configures an SDK has imported one of these API modules first (so has the
# auto-instrumentation that configures it from the environment).
_API_MODULES: Final = ("opentelemetry.trace", "opentelemetry.metrics", "opentelemetry._logs")


def telemetry() -> Telemetry | None:
    """The process's telemetry, or ``None`` while no SDK is configured
    (:meth:`Telemetry.configured`). The API is imported only once the host has imported it
    itself, so a process that never sets telemetry up pays for no import, and one without
    the API never tries."""
    global _found
    if _found is None:
        modules = sys.modules
        if not any(name in modules for name in _API_MODULES):
            return None
        try:
            _found = Telemetry()
        except ImportError:
            _found = False
    if isinstance(_found, Telemetry) and _found.configured():
        return _found
    return None
