"""Running a check: the only stage that talks to an evaluator (profile section 3).

``run_check`` builds the bundle, asks the evaluator (:mod:`._evaluator` reads each reply
strictly), re-asks once only the questions that were not validly answered (decision 9),
combines, and says what the host does next (decision 10, :mod:`._outcome`).
An evaluator that raises, returns the wrong number of answers, or answers something that does
not fit its question has not answered: that never becomes a pass or a fail.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from datetime import datetime, timezone
from types import coroutine
from typing import TYPE_CHECKING

import attrs

from ._bundle import Bundle, Material, build_bundle
from ._check import Check
from ._convert import is_finite
from ._evaluator import Evaluator, ask_once, configured_model, evaluator_model
from ._limits import Limits
from ._log import logger
from ._outcome import Outcome, outcome_for
from ._shown import show
from ._telemetry import capture_content, telemetry
from ._usage import ModelCall
from ._verdict import Answer, Failure, combine, error_verdict, format_at
from .errors import LimitsError

if TYPE_CHECKING:
    import asyncio

__all__ = ["run_check", "run_check_sync"]

# How many times the evaluator is asked in all: the profile's "the server retries once".
ATTEMPTS = 2

#: The longest a re-ask waits for a server's ``Retry-After``, in seconds, unless the host says.
MAX_RETRY_WAIT = 5.0

_log = logger("run")


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
    configured = evaluator_model(evaluator)
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
    tried: list[list[Answer | Failure]] = [[] for _ in range(len(check))]
    while pending and attempts < ATTEMPTS:
        if attempts:
            await _pause(_retry_wait(failures.values(), max_retry_wait))
        attempts += 1
        asked = bundle if len(pending) == len(check) else bundle.with_check(check.select(pending))
        model, entries, call = await ask_once(evaluator, asked, configured)
        calls.append(call)
        answered = any(not isinstance(entry, Failure) for entry in entries)
        if model is not None and answered and model not in models:
            models.append(model)
        for index, entry in zip(pending, entries, strict=True):
            tried[index].append(entry)
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
    model_name = ", ".join(models) if models else configured_model(evaluator) or configured
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
    # What each attempt gave each question, for the person who decides an error.
    outcome = attrs.evolve(outcome, tried=tuple(tuple(entries) for entries in tried))
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
    it, are closed at interpreter exit. Works in forked workers (Celery's prefork pool): a
    child shares no loop, client or lock with its parent. It cannot work under green-thread
    pools (gevent, eventlet): call ``run_check`` from their async side there.
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
    from ._sync_loop import on_sync_loop_close as register

    register(closer)
