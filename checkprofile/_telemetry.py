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
it) each evaluation event also carries the question's ask and a choice answer's name: texts
of the check itself, each cut to :data:`MAX_CAPTURED` characters. A failure's detail never
goes in (a provider's message may quote the submission); its reason is ``error.type``.

Nothing an observer does changes an outcome: every call into the API is guarded. A call that
raises (a span processor, log processor, exporter or metric reader of the host's SDK that
fails) is logged once per kind of call on ``checkprofile.telemetry``, the telemetry of that
call is lost, and the check goes on with the verdict it has without telemetry.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Final

from ._check import Check
from ._log import logger
from ._shown import error_text
from ._verdict import Answer, ChoiceAnswer, Failure, RubricAnswer, Verdict

if TYPE_CHECKING:
    from ._outcome import Outcome
    from ._usage import ModelCall, Usage

__all__ = [
    "CAPTURE_ENV",
    "EVALUATION_EVENT",
    "MAX_CAPTURED",
    "Telemetry",
    "evaluation_name",
    "telemetry",
]

#: The environment variable that turns content capture on (``true``), as the GenAI
#: conventions name it.
CAPTURE_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

#: The event emitted for each question of a check.
EVALUATION_EVENT: Final = "gen_ai.evaluation.result"

#: The most characters of any text attribute: an ask or a choice's name captured, a model
#: name. A longer text is cut, ending in ``…``.
MAX_CAPTURED: Final = 1024

_SCOPE: Final = "checkprofile"

_log = logger("telemetry")

# The kinds of call into the API whose failure has been logged: each is logged once in the
# process's life, so a broken exporter costs one record, not one per check.
_logged: set[str] = set()
_logged_lock = threading.Lock()


def _failed(kind: str, error: BaseException) -> None:
    """A call into the API of ``kind`` raised ``error``: logged the first time for its kind,
    with the traceback; the caller goes on without it."""
    with _logged_lock:
        if kind in _logged:
            return
        _logged.add(kind)
    _log.warning(
        "OpenTelemetry failed (%s): %s; the check goes on without it, and later failures of"
        " this kind are not logged",
        kind,
        error_text(error),
        exc_info=(type(error), error, error.__traceback__),
    )


def _guarded(kind: str, call: Callable[..., object], *arguments: object) -> None:
    """``call(*arguments)``, a call into the API; a failure is :func:`_failed`."""
    try:
        call(*arguments)
    except Exception as error:
        _failed(kind, error)


def _bounded(text: str) -> str:
    """``text`` cut to :data:`MAX_CAPTURED` characters."""
    return text if len(text) <= MAX_CAPTURED else text[: MAX_CAPTURED - 1] + "…"


class _Unrecorded:
    """The span a check goes on with when the API failed to start one: records nothing."""

    def is_recording(self) -> bool:
        return False


_UNRECORDED: Final = _Unrecorded()


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
        try:
            return any(_real(provider()) for provider in self._providers)
        except Exception as error:
            _failed("finding the providers", error)
            return False

    def monitored(
        self, step: str, segment: str, kind: str, upper: float, lower: float, status: str
    ) -> None:
        """The monitor's bounds for one step (segment) and kind: the upper bound as a metric,
        and an event ``checkprofile.monitor`` on the current span, if one is recording."""
        attributes = {
            "checkprofile.step": _bounded(step),
            "checkprofile.segment": _bounded(segment),
            "checkprofile.monitor.kind": kind,
            "checkprofile.monitor.status": status,
        }
        try:
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
        except Exception as error:
            _failed("recording the monitor", error)

    def check_span(self, model: str, questions: int) -> AbstractContextManager[Any]:
        """The span of one check, current while it runs."""
        return self._span(
            "check",
            {"gen_ai.request.model": _bounded(model), "checkprofile.questions": questions},
        )

    def call_span(self, operation: str, model: str) -> AbstractContextManager[Any]:
        """The span of one call of the evaluator, a child of the check's."""
        return self._span(
            _bounded(f"{operation} {model}"),
            {"gen_ai.operation.name": operation, "gen_ai.request.model": _bounded(model)},
        )

    @contextmanager
    def _span(self, name: str, attributes: Mapping[str, Any]) -> Iterator[Any]:
        """A span named ``name``, current while the ``with`` runs, guarded: if it cannot be
        started the body runs with a span that records nothing; if it cannot be ended, the
        body's own result (or exception) stands. Nothing of the API reaches the body."""
        try:
            opened = self.tracer.start_as_current_span(name, record_exception=True)
            span = opened.__enter__()
        except Exception as error:
            _failed("starting a span", error)
            yield _UNRECORDED
            return
        _set(span, attributes)
        try:
            yield span
        except BaseException as raised:
            _close(opened, raised)
            raise
        _close(opened, None)

    def request_span(self, operation: str, model: str) -> AbstractContextManager[Any]:
        """The span of one request an evaluator's call makes, when it makes several (the chat
        fallback asks each question on its own): a child of the call's span, so each request
        keeps its own ``gen_ai.response.id``. Named and marked as a call's span is."""
        return self.call_span(operation, model)

    def requested(self, span: Any, model: str | None, entry: object, usage: Usage | None) -> None:
        """What one request says on its span: the model that answered, its tokens and its
        id as the host reported them, ``error.type`` when it gave no answer. Its metrics are
        its call's (:meth:`called`), so nothing is counted twice."""
        attributes: dict[str, Any] = {}
        if model is not None:
            attributes["gen_ai.response.model"] = _bounded(model)
        _usage_attributes(attributes, usage)
        error = entry.reason if type(entry) is Failure else None
        if error is not None:
            attributes["error.type"] = error
        _set(span, attributes, self._trace, error)

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
            "gen_ai.request.model": _bounded(model),
        }
        if call.model is not None:
            attributes["gen_ai.response.model"] = _bounded(call.model)
        if error is not None:
            attributes["error.type"] = error
        on_span = dict(attributes)
        _usage_attributes(on_span, usage)
        _set(span, on_span, self._trace, error)
        _guarded("recording a metric", self.duration.record, call.seconds, attributes)
        if usage is not None:
            for kind, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
                if count is not None:
                    _guarded(
                        "recording a metric",
                        self.tokens.record,
                        count,
                        {**attributes, "gen_ai.token.type": kind},
                    )

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
            "gen_ai.request.model": _bounded(model),
        }
        on_span: dict[str, Any] = {
            **counted,
            "gen_ai.response.model": _bounded(verdict.model),
            "checkprofile.attempts": outcome.attempts,
        }
        error = None
        if verdict.verdict == "error":
            reasons = sorted({failure.reason for _, failure in outcome.failures})
            on_span["error.type"] = reasons[0] if reasons else "unknown"
            error = "the evaluator did not answer"
        _set(span, on_span, self._trace, error)
        _guarded("recording a metric", self.checks.add, 1, counted)
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
                attributes["gen_ai.response.id"] = _bounded(response_id)
            if capture:
                # Texts of the check itself, bounded; never a failure's detail, which may
                # quote a provider's message quoting the submission.
                attributes["checkprofile.question.ask"] = _bounded(result.ask)
                if isinstance(answer, ChoiceAnswer):
                    attributes["gen_ai.evaluation.explanation"] = _bounded(answer.name)
            _guarded("emitting an event", self._emit, attributes)

    def _emit(self, attributes: dict[str, Any]) -> None:
        try:
            record = self._record(event_name=EVALUATION_EVENT, attributes=attributes)
        except TypeError:  # an API whose log records have no event name: say it as attribute
            record = self._record(attributes={"event.name": EVALUATION_EVENT, **attributes})
        self._events.emit(record)


def _set(
    span: Any, attributes: Mapping[str, Any], trace: Any = None, error: str | None = None
) -> None:
    """``attributes`` on ``span`` if it records, and an error status saying ``error`` (with
    ``trace``, the API's module) if one is given; guarded."""
    try:
        if not span.is_recording():
            return
        span.set_attributes(attributes)
        if error is not None:
            span.set_status(trace.StatusCode.ERROR, error)
    except Exception as failure:
        _failed("setting a span's attributes", failure)


def _close(opened: AbstractContextManager[Any], raised: BaseException | None) -> None:
    """Ends the span ``opened`` started, guarded: with ``raised``, the exception the body
    raised (recorded on the span, when it records exceptions), which the caller raises again
    whatever happens here."""
    try:
        if raised is None:
            opened.__exit__(None, None, None)
        else:
            opened.__exit__(type(raised), raised, raised.__traceback__)
    except Exception as failure:
        if failure is not raised:
            _failed("ending a span", failure)


def _usage_attributes(attributes: dict[str, Any], usage: Usage | None) -> None:
    """A span's usage attributes, added to ``attributes``: each token figure the host
    reported, and its response id when the span stands for one request (a call of several
    requests lists them all in ``checkprofile.request_ids``; each has its own span,
    :meth:`Telemetry.request_span`)."""
    if usage is None:
        return
    for name, count in (
        ("gen_ai.usage.input_tokens", usage.input_tokens),
        ("gen_ai.usage.output_tokens", usage.output_tokens),
        ("gen_ai.usage.cache_read.input_tokens", usage.cached_tokens),
    ):
        if count is not None:
            attributes[name] = count
    if len(usage.request_ids) == 1:
        attributes["gen_ai.response.id"] = _bounded(usage.request_ids[0])
    if usage.request_ids:
        attributes["checkprofile.request_ids"] = [_bounded(named) for named in usage.request_ids]


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
        except Exception as error:  # the API, or the host's SDK, failed to make an instrument
            _failed("setting up", error)
            _found = False
    if isinstance(_found, Telemetry) and _found.configured():
        return _found
    return None
