"""Running a check: the only stage that talks to an evaluator (profile section 3).

``run_check`` builds the bundle, asks the evaluator, re-asks once only the questions that were
not validly answered (decision 9), combines, and says what the host does next (decision 10).
An evaluator that raises, returns the wrong number of answers, or answers something that does
not fit its question has not answered: that never becomes a pass or a fail.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from datetime import datetime, timezone
from types import coroutine
from typing import TYPE_CHECKING, Literal, Protocol, get_args, runtime_checkable

import attrs

from ._bundle import Bundle, Material, build_bundle
from ._check import Check
from ._convert import is_finite, plain_text
from ._limits import Limits
from ._lines import issue_lines
from ._log import logger
from ._shown import error_text, is_blank, show
from ._telemetry import capture_content, telemetry
from ._usage import ModelCall, Usage, total_usage
from ._verdict import (
    Answer,
    Failure,
    Verdict,
    answer_problem,
    combine,
    error_verdict,
    format_at,
)
from .errors import EvaluatorError, FailureReason, LimitsError

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "Action",
    "Evaluator",
    "Outcome",
    "Reply",
    "ask_evaluator",
    "outcome_for",
    "run_check",
    "run_check_sync",
]

Action = Literal["complete", "not_accepted", "escalate", "retry"]

# How many times the evaluator is asked in all: the profile's "the server retries once".
ATTEMPTS = 2

#: The longest a re-ask waits for a server's ``Retry-After``, in seconds, unless the host says.
MAX_RETRY_WAIT = 5.0

_log = logger("run")

# Decision 10: what each verdict makes the host do, when the check is not advisory.
_ACTIONS: dict[str, Action] = {
    "pass": "complete",
    "fail": "not_accepted",
    "unsure": "escalate",
    "error": "retry",
}


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


@attrs.frozen(kw_only=True)
class Outcome:
    """What the host does with a submission.

    ``action``: ``complete``, ``not_accepted``, ``escalate`` or ``retry``. ``verdict``: the
    record to keep. ``issues``: the issue lines for the agent -- set when the action is
    ``not_accepted``, empty otherwise (``issue_lines(verdict)`` gives them for any verdict).
    ``attempts``: evaluator calls made (1 or 2). ``failures``: for each question still not
    answered after the last attempt, its ask and why. ``answers``: the answers the verdict was
    made from, with their provenance (empty for an error verdict). ``bundle``: exactly what
    the evaluator was shown on the first attempt (``None`` for an outcome not made by
    :func:`run_check`); receipts and audit records are made from it. ``calls``: one
    :class:`~checkprofile.ModelCall` per attempt, with its wall time and the usage the
    evaluator reported (empty for an outcome not made by :func:`run_check`).
    """

    action: Action
    verdict: Verdict
    issues: tuple[str, ...] = ()
    attempts: int = 1
    failures: tuple[tuple[str, Failure], ...] = ()
    answers: tuple[Answer, ...] = ()
    bundle: Bundle | None = attrs.field(default=None, eq=False, repr=False)
    calls: tuple[ModelCall, ...] = attrs.field(default=(), eq=False, repr=False)

    @property
    def usage(self) -> Usage | None:
        """The usage of every attempt together (each figure summed over the attempts that
        reported it), or ``None`` when no attempt reported any."""
        return total_usage(call.usage for call in self.calls)


def outcome_for(
    verdict: Verdict,
    *,
    attempts: int = 1,
    failures: tuple[tuple[str, Failure], ...] = (),
    answers: tuple[Answer, ...] = (),
    bundle: Bundle | None = None,
    calls: tuple[ModelCall, ...] = (),
) -> Outcome:
    """The outcome a verdict calls for (decision 10). With ``advisory`` every verdict,
    ``error`` included, completes the step; the verdict still says what it was. Raises
    :class:`TypeError` when ``verdict`` is not a :class:`Verdict`."""
    if type(verdict) is not Verdict:
        raise TypeError(f"outcome_for takes a Verdict, got {show(verdict)}")
    action: Action = "complete" if verdict.advisory else _ACTIONS[verdict.verdict]
    issues = issue_lines(verdict) if action == "not_accepted" else ()
    return Outcome(
        action=action,
        verdict=verdict,
        issues=issues,
        attempts=attempts,
        failures=failures,
        answers=answers,
        bundle=bundle,
        calls=calls,
    )


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
    configured = _evaluator_model(evaluator)
    if type(bundle) is not Bundle:
        raise TypeError(f"ask_evaluator takes a Bundle (see build_bundle), got {show(bundle)}")
    if type(quiet) is not bool:
        raise TypeError(f"quiet must be true or false (a bool), got {show(quiet)}")
    if quiet:
        model, entries, _ = await _reply_of(evaluator, bundle, configured, log=False)
        return model, entries
    model, entries, _ = await _ask(evaluator, bundle, configured)
    return model, entries


async def _ask(
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


def _evaluator_model(evaluator: object) -> str:
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
    model = _configured_model(evaluator)
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


async def run_check(
    check: Check,
    material: Material,
    evaluator: Evaluator,
    *,
    limits: Limits | None = None,
    advisory: bool = False,
    now: datetime | str | None = None,
    max_retry_wait: float = MAX_RETRY_WAIT,
) -> Outcome:
    """Run ``check`` on ``material`` with ``evaluator`` and say what the host does next.

    Questions that were not validly answered are asked once more (only those, and not one
    that failed as ``unsupported``: the evaluator cannot answer its kind); any still
    unanswered make the verdict ``error``. Before that one re-ask it waits as long as the
    longest ``Retry-After`` a failure carried, but never more than ``max_retry_wait`` seconds.
    ``now`` is the verdict's ``at`` (default: the clock when the verdict is made, in whole
    seconds). Safe to run many at once: it keeps no state between calls.

    ``limits`` default to the limits the check was read with (:attr:`Check.limits`; a check
    built by hand: ``Limits()``); run data is cut to their ``check_state_bytes``. The check's
    thresholds were filled from those limits when it was read, so limits with another
    ``check_pass``, ``check_fail`` or ``check_confidence`` raise
    :class:`~checkprofile.errors.LimitsError` before the model is asked: read the check with
    them (``parse_check(raw, limits=...)``, ``Process.check_for(step, limits=...)``) instead.
    A different ``check_state_bytes`` is taken.
    """
    # Everything the host gave is checked before the model is asked: a bad argument must not
    # cost a model call, nor be found only once the answers are in.
    configured = _evaluator_model(evaluator)
    limits = _limits_for(check, limits)
    if type(advisory) is not bool:
        raise TypeError(f"advisory must be true or false (a bool), got {show(advisory)}")
    if not is_finite(max_retry_wait) or max_retry_wait < 0:
        raise ValueError(
            f"max_retry_wait must be a finite number of seconds >= 0, got {show(max_retry_wait)}"
        )
    stamp = format_at(now) if now is not None else None
    bundle = build_bundle(check, material, state_bytes=limits.check_state_bytes)
    otel = telemetry()
    if otel is None:
        return await _checked(check, bundle, evaluator, configured, advisory, stamp, max_retry_wait)
    with otel.check_span(configured, len(check)) as span:
        outcome = await _checked(
            check, bundle, evaluator, configured, advisory, stamp, max_retry_wait
        )
        otel.checked(span, outcome, check, configured, capture=capture_content())
    return outcome


async def _checked(
    check: Check,
    bundle: Bundle,
    evaluator: Evaluator,
    configured: str,
    advisory: bool,
    stamp: str | None,
    max_retry_wait: float,
) -> Outcome:
    """:func:`run_check` once its arguments are known to be right."""
    answers: list[Answer | None] = [None] * len(check)
    failures: dict[int, Failure] = {}
    models: list[str] = []
    pending = list(range(len(check)))
    attempts = 0
    calls: list[ModelCall] = []
    while pending and attempts < ATTEMPTS:
        if attempts:
            await _pause(_retry_wait(failures.values(), max_retry_wait))
        attempts += 1
        asked = bundle if len(pending) == len(check) else bundle.with_check(check.select(pending))
        model, entries, call = await _ask(evaluator, asked, configured)
        calls.append(call)
        answered = any(not isinstance(entry, Failure) for entry in entries)
        if model is not None and answered and model not in models:
            models.append(model)
        for index, entry in zip(pending, entries, strict=True):
            if isinstance(entry, Failure):
                failures[index] = entry
            else:
                answers[index] = entry
                failures.pop(index, None)
        # A question the evaluator said it cannot answer (its kind is not supported) would
        # fail the same way again: it is not asked again.
        pending = [
            index
            for index in pending
            if answers[index] is None and failures[index].reason != "unsupported"
        ]

    # Read from the clock: whole seconds (`…T19:52:06Z`), as people and the profile write times.
    at = stamp if stamp is not None else datetime.now(timezone.utc).replace(microsecond=0)
    # The record names every model version that gave an answer used (normally exactly one);
    # with none, the model the evaluator was configured with.
    model_name = ", ".join(models) if models else _configured_model(evaluator) or configured
    unanswered = tuple((check[i].ask, failures[i]) for i in sorted(failures))
    if any(answer is None for answer in answers):  # pending, or not to be asked again
        verdict = error_verdict(
            check, model=model_name, at=at, advisory=advisory, truncated=bundle.truncated
        )
        outcome = outcome_for(
            verdict, attempts=attempts, failures=unanswered, bundle=bundle, calls=tuple(calls)
        )
    else:
        complete: Sequence[Answer] = [answer for answer in answers if answer is not None]
        verdict = combine(
            check, complete, model=model_name, at=at, advisory=advisory, truncated=bundle.truncated
        )
        outcome = outcome_for(
            verdict,
            attempts=attempts,
            failures=unanswered,
            answers=tuple(complete),
            bundle=bundle,
            calls=tuple(calls),
        )
    _log.debug(
        "verdict %s, action %s, after %d attempt(s), model %s",
        verdict.verdict,
        outcome.action,
        attempts,
        show(model_name),
    )
    return outcome


# The limits whose defaults parse_check writes into a check's questions.
_THRESHOLDS = (
    ("check_pass", "checkPass"),
    ("check_fail", "checkFail"),
    ("check_confidence", "checkConfidence"),
)


def _limits_for(check: Check, limits: object) -> Limits:
    """The limits ``check`` runs under: ``limits``, or (``None``) those it was read with.
    Raises :class:`LimitsError` for limits whose thresholds are not the ones the check was read
    with, and :class:`TypeError` for ``limits`` that are not a :class:`Limits`."""
    if type(check) is not Check:
        raise TypeError(f"check must be a Check (see parse_check), got {show(check)}")
    read = check.limits
    if limits is None:
        return read if read is not None else Limits()
    if type(limits) is not Limits:
        raise TypeError(f"limits must be a Limits (see Limits.from_json), got {show(limits)}")
    if read is not None:
        differ = [
            f"{name} {show(getattr(limits, attr))} (read with {show(getattr(read, attr))})"
            for attr, name in _THRESHOLDS
            if getattr(limits, attr) != getattr(read, attr)
        ]
        if differ:
            raise LimitsError(
                "these limits are not the ones the check was read with, whose defaults fill its"
                f" thresholds: {', '.join(differ)}; read the check with these limits"
                " (parse_check(raw, limits=...)) or leave limits out"
            )
    return limits


async def _pause(seconds: float) -> None:
    """Wait ``seconds`` before the re-ask; with none to wait, give the event loop one turn, as
    ``asyncio.sleep(0)`` does, without importing asyncio (a host that never waits, like the
    conformance runner, starts without it)."""
    if seconds > 0:
        import asyncio

        await asyncio.sleep(seconds)
    else:
        await _one_turn()


@coroutine
def _one_turn() -> Generator[None, None, None]:
    yield  # what asyncio.sleep(0) does: a bare yield, which the loop takes as "run others"


def _retry_wait(failures: Iterable[Failure], cap: float) -> float:
    """How long to wait before the re-ask: the longest server hint, within ``cap``."""
    hints = [f.retry_after for f in failures if is_finite(f.retry_after)]
    return min(max([0.0, *hints]), cap)


def _configured_model(evaluator: object) -> str | None:
    """The evaluator's ``model`` as plain text, or ``None`` when it is not non-blank text."""
    try:
        model = plain_text(getattr(evaluator, "model", None))
    except Exception:  # an evaluator's own property that raises
        model = None
    return model if type(model) is str and not is_blank(model) else None


def run_check_sync(
    check: Check,
    material: Material,
    evaluator: Evaluator,
    *,
    limits: Limits | None = None,
    advisory: bool = False,
    now: datetime | str | None = None,
    max_retry_wait: float = MAX_RETRY_WAIT,
) -> Outcome:
    """:func:`run_check` for synchronous hosts. Not for use inside a running event loop
    (there, ``await run_check(...)``).

    Every call runs on one long-lived event loop, on a thread of its own started by the first
    call, so the adapters' HTTP clients and their open connections are reused from one call
    to the next (``docs/performance.md``). Safe to call from many threads at once: their
    checks run side by side on that loop. An evaluator that blocks the loop (a synchronous
    client inside its async ``answer``) holds only its own check and those already running
    beside it: a check that cannot start within 0.25 s goes to a fresh loop, and the held one
    is closed once its checks are done (:mod:`._sync_loop`). The caller's context variables
    are seen by the evaluator, as with ``asyncio.run``. The loop, and the adapters' clients on
    it, are closed at interpreter exit.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "run_check_sync was called inside a running event loop; await run_check(...) there"
        )
    from ._sync_loop import SYNC_LOOP

    return SYNC_LOOP.run(
        run_check(
            check,
            material,
            evaluator,
            limits=limits,
            advisory=advisory,
            now=now,
            max_retry_wait=max_retry_wait,
        )
    )


def on_sync_loop_close(closer: Callable[[asyncio.AbstractEventLoop], Awaitable[None]]) -> None:
    """Have ``closer(loop)`` awaited on each of ``run_check_sync``'s loops before it closes
    (the adapters close their clients so; :mod:`._sync_loop`, imported only when used)."""
    from . import _sync_loop

    _sync_loop.on_sync_loop_close(closer)
