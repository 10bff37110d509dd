"""The evaluator: the protocol every backend implements, and the strict reading of its reply.

An evaluator that raises, returns the wrong number of answers, or answers something that does
not fit its question has not answered: each such entry is a :class:`Failure`, never a pass or a
fail. Each call is timed, logged and traced here; the retry loop is :mod:`._run`'s.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Protocol, get_args, runtime_checkable

import attrs

from ._bundle import Bundle
from ._check import Check
from ._convert import is_finite, plain_text
from ._log import logger
from ._shown import error_text, is_blank, show
from ._telemetry import telemetry
from ._usage import ModelCall, Usage
from ._verdict import Answer, Failure, answer_problem
from .errors import EvaluatorError, FailureReason

__all__ = ["Evaluator", "Reply", "ask_evaluator"]

_log = logger("run")


def _entries(items: Iterable[Answer | Failure]) -> tuple[Answer | Failure, ...]:
    return tuple(items)


@attrs.frozen
class Reply:
    """An evaluator's reply to one bundle: the ``model`` that actually answered (a pinned
    version, not an alias) and, for each question of the bundle's check in order, an answer
    or a :class:`Failure`. ``usage``: what the host reported the call cost (tokens, request
    ids; see :class:`~checkprofile.Usage`), or ``None`` when it reported nothing."""

    model: str
    answers: tuple[Answer | Failure, ...] = attrs.field(converter=_entries)
    usage: Usage | None = attrs.field(default=None, kw_only=True)


@runtime_checkable
class Evaluator(Protocol):
    """What every backend implements.

    ``model`` names the configured model (it may be an alias); ``answer`` answers every
    question of ``bundle.check`` independently -- no answer may depend on another's -- and
    reports the model version that answered. It should return a :class:`Failure` for a
    question it could not answer rather than raise; an exception counts as a failure of every
    question asked. It must not retry on its own: the profile's single re-ask is the retry.
    """

    @property
    def model(self) -> str: ...

    async def answer(self, bundle: Bundle) -> Reply: ...


async def ask_evaluator(
    evaluator: Evaluator, bundle: Bundle, *, quiet: bool = False
) -> tuple[str | None, list[Answer | Failure]]:
    """Ask once and read the reply strictly: one entry per question of ``bundle.check``, each
    a fitting answer or a :class:`Failure`. Returns the model that answered (``None`` when the
    evaluator raised or misreported it) and the entries. ``quiet``: log nothing and trace
    nothing, for an evaluator that asks another within its own call and gives what came of it
    in its reply (the check that called it then reports each failure once). Raises
    :class:`TypeError` when ``evaluator`` is not an evaluator, ``bundle`` is not a
    :class:`Bundle` or ``quiet`` is not a bool."""
    configured = evaluator_model(evaluator)
    if type(bundle) is not Bundle:
        raise TypeError(f"ask_evaluator takes a Bundle (see build_bundle), got {show(bundle)}")
    if type(quiet) is not bool:
        raise TypeError(f"quiet must be true or false (a bool), got {show(quiet)}")
    if quiet:
        model, entries, _ = await _reply_of(evaluator, bundle, configured, log=False)
        return model, entries
    model, entries, _ = await ask_once(evaluator, bundle, configured)
    return model, entries


async def ask_once(
    evaluator: Evaluator, bundle: Bundle, configured: str
) -> tuple[str | None, list[Answer | Failure], ModelCall]:
    """:func:`ask_evaluator` once its arguments are known to be right, with the call it made
    (its wall time and reported usage). Each call is logged at ``DEBUG``; what went wrong as
    well: an evaluator that raised with its traceback, any other failure as one warning
    (``configured``: the evaluator's model, to name it)."""
    otel = telemetry()
    if otel is None:
        call, model, entries = await _timed(evaluator, bundle, configured)
    else:
        operation = _operation(evaluator)
        with otel.call_span(operation, configured) as span:
            call, model, entries = await _timed(evaluator, bundle, configured)
            otel.called(span, call, entries, operation, configured)
    if _log.isEnabledFor(logging.DEBUG):
        _log.debug(
            "the evaluator %s answered %d question(s) in %.3f s as %s; usage %s",
            show(configured),
            call.questions,
            call.seconds,
            show(model),
            _usage_text(call.usage),
        )
    return model, entries, call


async def _timed(
    evaluator: Evaluator, bundle: Bundle, configured: str
) -> tuple[ModelCall, str | None, list[Answer | Failure]]:
    start = time.perf_counter()
    model, entries, usage = await _reply_of(evaluator, bundle, configured)
    call = ModelCall(
        seconds=time.perf_counter() - start,
        questions=len(bundle.check),
        model=model,
        usage=usage,
    )
    return call, model, entries


#: The GenAI operation name of an evaluator that names none (``operation_name``).
DEFAULT_OPERATION = "evaluate"


def _operation(evaluator: object) -> str:
    """The evaluator's ``gen_ai.operation.name``: its ``operation_name`` (a class attribute, or
    a wrapper's property naming its inner evaluator's) when that is a short plain name, else
    :data:`DEFAULT_OPERATION`."""
    try:  # an evaluator's own __getattr__ may raise anything: it then names none
        named = getattr(evaluator, "operation_name", None)
    except Exception:
        named = None
    if type(named) is str and 0 < len(named) <= 64 and named.isascii() and named.isprintable():
        return named
    return DEFAULT_OPERATION


def _usage_text(usage: Usage | None) -> str:
    if usage is None:
        return "not reported"
    figures = [
        f"{name} {value if value is not None else 'not reported'}"
        for name, value in (
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
            ("cached", usage.cached_tokens),
        )
    ]
    ids = ", ".join(usage.request_ids) or "none"
    return f"{', '.join(figures)}; request ids {ids}"


async def _reply_of(
    evaluator: Evaluator, bundle: Bundle, configured: str, *, log: bool = True
) -> tuple[str | None, list[Answer | Failure], Usage | None]:
    """The reply of one call, read strictly, and its usage; each failure logged (``log``)."""
    count = len(bundle.check)
    try:
        reply = await evaluator.answer(bundle)
    except EvaluatorError as error:
        # An evaluator's own account of what went wrong: its message is the detail.
        failure = _failure(
            error.reason, error_text(error, named=False), error.retry_after, exception=error
        )
        entries: list[Answer | Failure] = [failure] * count
        if log:
            _log_failures(configured, bundle.check, entries)
        return None, entries, None
    except Exception as error:  # an evaluator that crashes has not answered; never a verdict
        # A defect of the evaluator (the host's own, often): kept on the failure and logged
        # with its traceback, so it is seen, never mistaken for a model's refusal.
        if log:
            _log.error(
                "the evaluator %s raised %s; its questions count as not answered",
                show(configured),
                error_text(error),
                exc_info=error,
            )
        detail = f"the evaluator raised {error_text(error)}"
        return None, [Failure("unknown", detail, exception=error)] * count, None
    model, entries = _entries_of(reply, bundle.check)
    if log:
        _log_failures(configured, bundle.check, entries)
    # Usage is what the host said it cost, kept only as the type that checked its figures.
    usage = getattr(reply, "usage", None) if type(reply) is Reply else None
    known = type(usage) is Usage and (usage.reported or bool(usage.request_ids))
    return model, entries, usage if known else None


def _entries_of(reply: object, check: Check) -> tuple[str | None, list[Answer | Failure]]:
    """The model that answered and the entries of ``reply``, read strictly (see
    :func:`ask_evaluator`)."""
    count = len(check)
    if type(reply) is not Reply:
        detail = f"the evaluator returned {show(reply)}, not a Reply"
        return None, [Failure("malformed", detail)] * count
    if len(reply.answers) != count:
        detail = f"{len(reply.answers)} answers for {count} questions"
        return None, [Failure("malformed", detail)] * count
    model = plain_text(reply.model)
    entries: list[Answer | Failure] = []
    for question, entry in zip(check, reply.answers, strict=True):
        if type(entry) is Failure:
            entries.append(
                _failure(entry.reason, entry.detail, entry.retry_after, exception=entry.exception)
            )
            continue
        problem = answer_problem(question, entry)
        entries.append(entry if problem is None else Failure("malformed", problem))
    if type(model) is not str or is_blank(model):
        entries = [Failure("malformed", f"the reply names no model: {show(reply.model)}")] * count
        return None, entries
    if len(model) > MAX_REPLY_MODEL:
        # A name of megabytes would make the verdict record too large for the audit trail.
        detail = (
            f"the reply's model name is {len(model)} characters long, more than"
            f" {MAX_REPLY_MODEL}: {show(model)}"
        )
        return None, [Failure("malformed", detail)] * count
    return model, entries


#: The longest model name a reply may give (every version that answered, joined): longer, and
#: every answer of the reply is ``malformed``, so a verdict record always fits the audit trail.
MAX_REPLY_MODEL = 1000


def _log_failures(model: str, check: Check, entries: list[Answer | Failure]) -> None:
    """One warning for the questions of one attempt that were not answered, if any."""
    if not _log.isEnabledFor(logging.WARNING):
        return
    failed = [(q.ask, e) for q, e in zip(check, entries, strict=True) if type(e) is Failure]
    if failed:
        _log.warning(
            "the evaluator %s did not answer %d of %d questions (%s): %s",
            show(model),
            len(failed),
            len(entries),
            ", ".join(sorted({failure.reason for _, failure in failed})),
            failed[0][1].detail,
        )


def evaluator_model(evaluator: object) -> str:
    """The model ``evaluator`` is configured with, as records name it. Raises
    :class:`TypeError` for an object that is not an evaluator: one without an ``answer``
    method, or whose ``model`` is not non-blank text."""
    try:
        answer = getattr(evaluator, "answer", None)
    except Exception:  # an object's own __getattr__ that raises
        answer = None
    if not callable(answer):
        raise TypeError(
            "an evaluator has a model and an async answer(bundle) method (see Evaluator),"
            f" got {show(evaluator)}"
        )
    model = configured_model(evaluator)
    if model is None:
        try:
            named: object = getattr(evaluator, "model", None)
        except Exception as error:
            named = error
        raise TypeError(
            f"an evaluator names the model it is configured with: the model of {show(evaluator)}"
            f" is {show(named)}, not non-blank text"
        )
    return model


_REASONS: frozenset[str] = frozenset(get_args(FailureReason))
# The longest failure detail kept: a failure is a message, never a provider's whole body.
_DETAIL = 1000


def _failure(
    reason: object, detail: object, retry_after: object, *, exception: object = None
) -> Failure:
    """A failure as an evaluator reported it, made plain: a reason that is not one of
    :data:`~checkprofile.errors.FailureReason` is ``unknown``, a detail is text of at most
    1000 characters, and a ``retry_after`` that is not a finite number of seconds is none."""
    why = plain_text(reason)
    text = plain_text(detail)
    if type(text) is not str:
        text = show(detail)
    elif len(text) > _DETAIL:
        text = text[: _DETAIL - 1] + "…"
    wait = retry_after if is_finite(retry_after) and retry_after >= 0 else None
    known = type(why) is str and why in _REASONS
    kept = exception if isinstance(exception, BaseException) else None
    return Failure(why if known else "unknown", text, retry_after=wait, exception=kept)  # type: ignore[arg-type]


def configured_model(evaluator: object) -> str | None:
    """The evaluator's ``model`` as plain text, or ``None`` when it is not non-blank text."""
    try:
        model = plain_text(getattr(evaluator, "model", None))
    except Exception:  # an evaluator's own property that raises
        model = None
    return model if type(model) is str and not is_blank(model) else None
