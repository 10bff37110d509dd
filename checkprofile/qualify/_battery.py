"""The probe battery: ask a check's cases again in other forms (judged in :mod:`._judge`).

:func:`qualify` plans every request first (:func:`plan_requests`; more than ``max_requests``
and nothing is asked), then, case by case, asks the evaluator: the case twice as it is (the
**repeat**: the evaluator's own noise), then each of its variants (:mod:`._variants`). Each
request is one call of the evaluator, read as strictly as a check's (``ask_once``: the same
cache, if the evaluator is wrapped in one, the same logging and telemetry, inside a span
``probe NAME`` marked ``checkprofile.probe``); none is retried, so a failure counts once, for
the reliability probe.

Every invariance probe (order, form, injection, cut) is judged against the repeat: a probe
fails only when what changed under its variant exceeds what changed between the two identical
asks by more than its margin, with 95% confidence; the repeat itself, the reliability and the
knowledge probes are judged on their own figures (:class:`Thresholds` gives every default and
why). The report says which probes passed, with each figure and its interval, and is bound to
the model that answered, the check and :data:`BATTERY`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Final

import attrs

from .._bundle import Bundle, build_bundle
from .._check import Check
from .._evaluator import Evaluator, ask_once, evaluator_model
from .._limits import Limits
from .._log import logger
from .._shown import show
from .._telemetry import telemetry
from .._verdict import Answer, Failure, format_at
from ..errors import CheckprofileError, MaterialError
from ..human._audit._qualification import (
    QualificationRecord,
    qualification_key,
    qualified_by,
)
from ..human._audit._records import check_key
from ._cases import CasesError, QualifyCase
from ._judge import Asked, Thresholds, judge
from ._stats import percentile
from ._variants import (
    INJECTIONS,
    PLACES,
    answered,
    form_check,
    injected,
    order_checks,
)

__all__ = [
    "BATTERY",
    "MAX_REQUESTS",
    "BudgetError",
    "EvaluatorUnreachableError",
    "Qualification",
    "plan_requests",
    "qualify",
]

#: The battery's version: its probes, their variants and how each is judged. A qualification
#: is bound to it; a change to any of them changes it.
BATTERY: Final = "checkprofile-qualify-1"

#: The most requests a battery makes unless told otherwise.
MAX_REQUESTS: Final = 1000

_log = logger("qualify")


class BudgetError(CheckprofileError, ValueError):
    """The battery would make more requests than allowed: nothing was asked. ``needed`` is
    how many it would make."""

    needed: int

    def __init__(self, message: str, *, needed: int) -> None:
        self.needed = needed
        super().__init__(message)


class EvaluatorUnreachableError(CheckprofileError, RuntimeError):
    """The evaluator answered none of the battery's requests: there is nothing to judge."""


@attrs.frozen(kw_only=True)
class Qualification:
    """What the battery found: the ``record`` to keep in the audit trail (which probes passed,
    with figures, bound to the model, the check and the battery), and what the report adds:
    the ``thresholds`` used, ``failures`` by reason, ``latency`` percentiles in seconds (p50,
    p90, p95, p99 of the requests answered) and the ``planned`` requests."""

    record: QualificationRecord
    thresholds: Thresholds
    failures: dict[str, int]
    latency: dict[str, float]
    planned: int

    @property
    def qualified(self) -> bool:
        return self.record.qualified


def plan_requests(check: Check, cases: Sequence[QualifyCase]) -> int:
    """How many requests :func:`qualify` makes for ``check`` on ``cases``: per case, two for
    the repeat, one per order variant, one for the form, one per place of the injection, and
    one for the cut where the case is marked."""
    per_case = 2 + len(order_checks(check)) + (form_check(check) is not None) + len(PLACES)
    return per_case * len(cases) + sum(case.cut_bytes is not None for case in cases)


async def _ask(
    evaluator: Evaluator, bundle: Bundle, configured: str, probe: str, asked: Asked
) -> tuple[Answer | Failure, ...]:
    otel = telemetry()
    if otel is None:
        model, entries, call = await ask_once(evaluator, bundle, configured)
    else:
        with otel.tracer.start_as_current_span(f"probe {probe}") as span:
            if span.is_recording():
                span.set_attribute("checkprofile.probe", probe)
            model, entries, call = await ask_once(evaluator, bundle, configured)
    asked.requests += 1
    failed = [entry for entry in entries if isinstance(entry, Failure)]
    # An evaluator that says it cannot answer a two-way choice has not failed: the form probe
    # does not apply to it.
    counted = [f for f in failed if not (probe == "form" and f.reason == "unsupported")]
    if counted:
        asked.unanswered += 1
        asked.failures[counted[0].reason] += 1
    else:
        asked.seconds.append(call.seconds)
    if model is not None and len(failed) < len(entries) and model not in asked.models:
        asked.models.append(model)
    return tuple(entries)


def _uncached(evaluator: Evaluator) -> Evaluator:
    """The evaluator behind an answer cache (:class:`~checkprofile.adapters.CachingEvaluator`),
    or ``evaluator`` itself."""
    from ..adapters.cache import CachingEvaluator

    return evaluator.inner if type(evaluator) is CachingEvaluator else evaluator


async def qualify(
    check: Check,
    cases: Sequence[QualifyCase],
    evaluator: Evaluator,
    *,
    step: str,
    thresholds: Thresholds | None = None,
    limits: Limits | None = None,
    max_requests: int | None = MAX_REQUESTS,
    now: datetime | str | None = None,
) -> Qualification:
    """Run the battery for ``check`` (of step ``step``) on ``cases`` with ``evaluator``.

    Raises :class:`CasesError` naming a case that cannot be shown to the evaluator, and
    :class:`BudgetError`, both before asking anything, when the plan
    (:func:`plan_requests`) exceeds ``max_requests`` (``None``: no bound), and
    :class:`EvaluatorUnreachableError` when no request was answered. ``limits`` (default:
    those the check was read with) give the run data budget of every request but the cut's.
    """
    configured = evaluator_model(evaluator)
    if type(check) is not Check:
        raise TypeError(f"check must be a Check (see parse_check), got {show(check)}")
    cases = list(cases)
    if not all(type(case) is QualifyCase for case in cases):
        raise TypeError("cases must be QualifyCase values (see read_cases)")
    if type(step) is not str or not step.strip():
        raise ValueError(f"step must be a step id, got {show(step)}")
    thresholds = Thresholds() if thresholds is None else thresholds
    if type(thresholds) is not Thresholds:
        raise TypeError(f"thresholds must be a Thresholds, got {show(thresholds)}")
    limits = limits if limits is not None else check.limits or Limits()
    planned = plan_requests(check, cases)
    if max_requests is not None:
        if type(max_requests) is not int or max_requests < 1:
            raise ValueError(f"max_requests must be a whole number >= 1, got {show(max_requests)}")
        if planned > max_requests:
            raise BudgetError(
                f"the battery would make {planned} requests for {len(cases)} cases, more than"
                f" the {max_requests} allowed: give fewer cases or allow more requests",
                needed=planned,
            )
    # Every case is shown as the check would show it before anything is asked: a case that
    # cannot be (run data with no JSON form) is named, and costs no request.
    bundles = []
    for case in cases:
        try:
            bundles.append(build_bundle(check, case.material, state_bytes=limits.check_state_bytes))
        except MaterialError as error:
            raise CasesError(f"case {case.name}: {error}") from None
    _log.info("qualifying %s: %d requests on %d cases", show(configured), planned, len(cases))
    asked = Asked()
    orders = order_checks(check)
    form = form_check(check)
    for number, (case, bundle) in enumerate(zip(cases, bundles, strict=True)):
        asked.base.append(answered(await _ask(evaluator, bundle, configured, "repeat", asked)))
        # Asked again past any answer cache, or the repeat would measure the cache.
        again = await _ask(_uncached(evaluator), bundle, configured, "repeat", asked)
        asked.again.append(answered(again))
        asked.order.append(
            [
                answered(await _ask(evaluator, bundle.with_check(o), configured, "order", asked))
                for o in orders
            ]
        )
        if form is not None:
            asked.form.append(
                await _ask(evaluator, bundle.with_check(form[0]), configured, "form", asked)
            )
        variants = []
        for turn, place in enumerate(PLACES):
            claim = INJECTIONS[(number + turn) % len(INJECTIONS)]
            shown = build_bundle(
                check,
                injected(case.material, place, claim),
                state_bytes=limits.check_state_bytes,
            )
            variants.append(answered(await _ask(evaluator, shown, configured, "injection", asked)))
        asked.injection.append(variants)
        if case.cut_bytes is not None:
            budget = min(case.cut_bytes, limits.check_state_bytes)
            cut = build_bundle(check, case.material, state_bytes=budget)
            asked.cut.append(answered(await _ask(evaluator, cut, configured, "cut", asked)))
        else:
            asked.cut.append(None)
    if asked.requests and asked.unanswered == asked.requests:
        raise EvaluatorUnreachableError(
            f"the evaluator {show(configured)} answered none of the battery's {asked.requests}"
            f" requests ({', '.join(f'{r}: {n}' for r, n in sorted(asked.failures.items()))})"
        )
    results = judge(check, cases, asked, thresholds, form)
    at = format_at(now) if now is not None else datetime.now(timezone.utc).replace(microsecond=0)
    model = ", ".join(asked.models) if asked.models else configured
    key = check_key(check)
    record = QualificationRecord(
        key=qualification_key(model, key, BATTERY),
        step=step,
        check_key=key,
        check=check,
        model=model,
        battery=BATTERY,
        at=format_at(at),
        qualified=qualified_by(results),
        cases=len(cases),
        requests=asked.requests,
        probes=results,
    )
    if _log.isEnabledFor(logging.INFO):
        failed = [r.probe for r in results if r.status != "passed"]
        _log.info(
            "%s %s for this check (%s)",
            show(model),
            "qualified" if record.qualified else "not qualified",
            ", ".join(failed) or "every probe passed",
        )
    latency = {}
    if asked.seconds:
        for name, share in (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)):
            latency[name] = percentile(asked.seconds, share)
    return Qualification(
        record=record,
        thresholds=thresholds,
        failures=dict(sorted(asked.failures.items())),
        latency=latency,
        planned=planned,
    )


def qualify_sync(
    check: Check,
    cases: Sequence[QualifyCase],
    evaluator: Evaluator,
    *,
    step: str,
    thresholds: Thresholds | None = None,
    limits: Limits | None = None,
    max_requests: int | None = MAX_REQUESTS,
    now: datetime | str | None = None,
) -> Qualification:
    """:func:`qualify` for synchronous hosts, on the long-lived loop
    :func:`~checkprofile.run_check_sync` uses (so the adapters' clients are shared). Not for
    use inside a running event loop."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("qualify_sync was called inside a running event loop; await qualify")
    from .._sync_loop import SYNC_LOOP

    return SYNC_LOOP.run(
        qualify(
            check,
            cases,
            evaluator,
            step=step,
            thresholds=thresholds,
            limits=limits,
            max_requests=max_requests,
            now=now,
        )
    )
