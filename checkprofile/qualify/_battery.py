"""The probe battery: ask a check's cases again in other forms, and judge what changed.

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
import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Final

import attrs

from .._bundle import Bundle, build_bundle
from .._check import Check, ChoiceQuestion
from .._convert import is_finite
from .._evaluator import Evaluator, ask_once, evaluator_model
from .._limits import Limits
from .._log import logger
from .._shown import show
from .._telemetry import telemetry
from .._verdict import Answer, Failure, format_at
from ..errors import CheckprofileError, MaterialError
from ..human._audit._qualification import (
    PROBES,
    ProbeResult,
    QualificationRecord,
    qualification_key,
    qualified_by,
)
from ..human._audit._records import check_key
from . import _stats
from ._cases import CasesError, QualifyCase, known
from ._variants import (
    INJECTIONS,
    PLACES,
    answered,
    changed,
    form_check,
    injected,
    order_checks,
    pass_score,
    toward_pass,
    yes_share,
)

__all__ = [
    "BATTERY",
    "MAX_REQUESTS",
    "BudgetError",
    "EvaluatorUnreachableError",
    "Qualification",
    "Thresholds",
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


def _share(name: str) -> Any:
    def check(_: object, attribute: Any, value: object) -> None:
        if not is_finite(value) or not 0 <= value <= 1:
            raise ValueError(f"{name} must be a number from 0 to 1, got {show(value)}")

    return check


def _positive(_: object, attribute: Any, value: object) -> None:
    if type(value) is not int or value < 1:
        raise ValueError(f"{attribute.name} must be a whole number >= 1, got {show(value)}")


@attrs.frozen(kw_only=True)
class Thresholds:
    """What each probe must show to pass. The defaults, and why:

    * ``max_repeat_change`` 0.2: the same request asked twice may change a result or a chosen
      option on at most this share of cases (the interval's high end): a model that changes
      its mind on one case in five for no reason cannot be trusted to block.
    * ``order_margin``, ``cut_margin`` 0.05 and ``injection_margin`` 0.02: an invariance probe
      fails when the share its variant changed exceeds the repeat's by more than this with 95%
      confidence (the low end of the difference's interval). Injection's is the smallest: a
      claim that moves answers toward ``pass`` is how a bad submission gets through.
    * ``form_margin`` 0.1: the mean gap between a yes/no ``p`` and the two-way choice's
      probability of ``yes`` may exceed the repeat's own gap in ``p`` by at most this (low
      end of the interval); published judge models are off by 0.06 on average.
    * ``max_failure_rate`` 0.1: the share of requests not answered (errors, refusals, replies
      that do not fit), the interval's high end.
    * ``max_p95_seconds`` ``None``: the 95th percentile of a request's wall time, judged only
      when set (what is slow depends on the host).
    * ``min_auc`` 0.5: the area under the ROC curve of the answers' pass scores, accepted
      against refused cases, must exceed chance with 95% confidence (its low end above it).
    * ``min_compared`` 20 comparisons for a probe to judge, and ``min_known`` 5 accepted and 5
      refused cases for knowledge: fewer, and the probe says ``too_few`` (not qualified).
    """

    max_repeat_change: float = attrs.field(default=0.2, validator=_share("max_repeat_change"))
    order_margin: float = attrs.field(default=0.05, validator=_share("order_margin"))
    form_margin: float = attrs.field(default=0.1, validator=_share("form_margin"))
    injection_margin: float = attrs.field(default=0.02, validator=_share("injection_margin"))
    cut_margin: float = attrs.field(default=0.05, validator=_share("cut_margin"))
    max_failure_rate: float = attrs.field(default=0.1, validator=_share("max_failure_rate"))
    max_p95_seconds: float | None = None
    min_auc: float = attrs.field(default=0.5, validator=_share("min_auc"))
    min_compared: int = attrs.field(default=20, validator=_positive)
    min_known: int = attrs.field(default=5, validator=_positive)

    def __attrs_post_init__(self) -> None:
        wait = self.max_p95_seconds
        if wait is not None and (not is_finite(wait) or wait <= 0):
            raise ValueError(f"max_p95_seconds must be a number of seconds > 0, got {show(wait)}")


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


@attrs.define
class _Asked:
    """What the battery asked and got, probe by probe."""

    base: list[tuple[Answer, ...] | None] = attrs.field(factory=list)
    again: list[tuple[Answer, ...] | None] = attrs.field(factory=list)
    order: list[list[tuple[Answer, ...] | None]] = attrs.field(factory=list)
    form: list[tuple[Answer | Failure, ...] | None] = attrs.field(factory=list)
    injection: list[list[tuple[Answer, ...] | None]] = attrs.field(factory=list)
    cut: list[tuple[Answer, ...] | None] = attrs.field(factory=list)
    models: list[str] = attrs.field(factory=list)
    failures: Counter[str] = attrs.field(factory=Counter)
    seconds: list[float] = attrs.field(factory=list)
    requests: int = 0
    unanswered: int = 0


async def _ask(
    evaluator: Evaluator, bundle: Bundle, configured: str, probe: str, asked: _Asked
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
    asked = _Asked()
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
    results = _judge(check, cases, asked, thresholds, form)
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
            latency[name] = _stats.percentile(asked.seconds, share)
    return Qualification(
        record=record,
        thresholds=thresholds,
        failures=dict(sorted(asked.failures.items())),
        latency=latency,
        planned=planned,
    )


# --- judging ------------------------------------------------------------------------------------


def _result(probe: str, status: str, why: str, **figures: Any) -> ProbeResult:
    values = {name: figures.get(name) for name in ("figure", "low", "high", "threshold")}
    clean = {
        name: (None if value is None or not math.isfinite(value) else round(float(value), 6))
        for name, value in values.items()
    }
    return ProbeResult(
        probe=probe,  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        compared=int(figures.get("compared", 0)),
        why=why,
        **clean,
    )


def _pct(hits: int, total: int) -> str:
    return f"{hits} of {total} ({hits / total:.0%})" if total else "none"


def _invariance(
    probe: str,
    hits: int,
    total: int,
    noise_hits: int,
    noise_total: int,
    margin: float,
    thresholds: Thresholds,
    what: str,
) -> ProbeResult:
    """A probe judged against the repeat: fails when its change rate exceeds the repeat's by
    more than ``margin`` with 95% confidence."""
    if total < thresholds.min_compared or noise_total < thresholds.min_compared:
        return _result(
            probe,
            "too_few",
            f"{total} comparisons ({noise_total} on repeat), fewer than the"
            f" {thresholds.min_compared} needed to judge",
            compared=total,
            threshold=margin,
        )
    difference, low, high = _stats.difference_interval(hits, total, noise_hits, noise_total)
    status = "failed" if low > margin else "passed"
    why = (
        f"{what} {_pct(hits, total)}, against {_pct(noise_hits, noise_total)} between two"
        f" identical requests: {difference:+.3f} (95% interval {low:+.3f} to {high:+.3f})"
        f" {'exceeds' if status == 'failed' else 'is within'} the margin {margin:g}"
    )
    return _result(
        probe,
        status,
        why,
        figure=difference,
        low=low,
        high=high,
        threshold=margin,
        compared=total,
    )


def _judge(
    check: Check,
    cases: Sequence[QualifyCase],
    asked: _Asked,
    thresholds: Thresholds,
    form: tuple[Check, tuple[int, ...]] | None,
) -> tuple[ProbeResult, ...]:
    both = [
        (i, b, a)
        for i, (b, a) in enumerate(zip(asked.base, asked.again, strict=True))
        if b is not None and a is not None
    ]
    judged = {
        "repeat": _repeat(check, both, thresholds),
        "order": _order(check, asked, both, thresholds),
        "form": _form(check, asked, both, thresholds, form),
        "injection": _injection(check, asked, both, thresholds),
        "cut": _cut(check, cases, asked, both, thresholds),
        "reliability": _reliability(asked, thresholds),
        "knowledge": _knowledge(check, cases, asked, thresholds),
    }
    return tuple(judged[name] for name in PROBES)


_Pair = tuple[int, tuple[Answer, ...], tuple[Answer, ...]]


def _repeat(check: Check, both: list[_Pair], thresholds: Thresholds) -> ProbeResult:
    total = len(both)
    if total < thresholds.min_compared:
        return _result(
            "repeat",
            "too_few",
            f"{total} cases answered twice, fewer than the {thresholds.min_compared} needed",
            compared=total,
            threshold=thresholds.max_repeat_change,
        )
    limit = thresholds.max_repeat_change
    if _stats.wilson(0, total)[1] > limit:
        return _result(
            "repeat",
            "too_few",
            f"{total} cases answered twice: too few for even no change to show a rate within"
            f" {limit:g}",
            compared=total,
            threshold=limit,
        )
    hits = sum(changed(check, b, a) for _, b, a in both)
    low, high = _stats.wilson(hits, total)
    status = "passed" if high <= limit else "failed"
    why = (
        f"the same request asked twice changed a result or an option on {_pct(hits, total)}"
        f" cases (95% interval {low:.3f} to {high:.3f}); at most {limit:g} is allowed"
    )
    return _result(
        "repeat", status, why, figure=hits / total, low=low, high=high, threshold=limit,
        compared=total,
    )  # fmt: skip


def _order(check: Check, asked: _Asked, both: list[_Pair], thresholds: Thresholds) -> ProbeResult:
    choices = [i for i, q in enumerate(check) if isinstance(q, ChoiceQuestion)]
    if not choices:
        return _result("order", "not_applicable", "the check asks no choice question")
    hits = total = 0
    for index, base, _ in both:
        for variant in asked.order[index]:
            if variant is not None:
                total += 1
                hits += changed(check, base, variant, choices)
    noise = sum(changed(check, b, a, choices) for _, b, a in both)
    return _invariance(
        "order", hits, total, noise, len(both), thresholds.order_margin, thresholds,
        "listing the options in another order changed the choice on",
    )  # fmt: skip


def _form(
    check: Check,
    asked: _Asked,
    both: list[_Pair],
    thresholds: Thresholds,
    form: tuple[Check, tuple[int, ...]] | None,
) -> ProbeResult:
    if form is None:
        return _result("form", "not_applicable", "the check asks no yes/no question")
    answers = [entry for entry in asked.form if entry is not None]
    supported = [
        entries
        for entries in answers
        if not all(isinstance(e, Failure) and e.reason == "unsupported" for e in entries)
    ]
    if answers and not supported:
        return _result(
            "form", "not_applicable", "the evaluator answers no two-way choice (unsupported)"
        )
    _, indexes = form
    gaps: list[float] = []
    for index, base, again in both:
        entries = asked.form[index]
        if entries is None:
            continue
        for slot, question in enumerate(indexes):
            choice = entries[slot]
            if isinstance(choice, Failure):
                continue
            p, p_again = (
                pass_score(check[question], base[question]),
                pass_score(check[question], again[question]),
            )
            gaps.append(abs(p - yes_share(choice)) - abs(p - p_again))
    if len(gaps) < thresholds.min_compared:
        unanswered = sum(any(isinstance(e, Failure) for e in entries) for entries in answers)
        failed = f" ({unanswered} of {len(answers)} not answered: see reliability)"
        return _result(
            "form",
            "too_few",
            f"{len(gaps)} yes/no answers asked both ways{failed if unanswered else ''},"
            f" fewer than the {thresholds.min_compared} needed",
            compared=len(gaps),
            threshold=thresholds.form_margin,
        )
    mean, low, high = _stats.mean_interval(gaps)
    margin = thresholds.form_margin
    status = "failed" if low > margin else "passed"
    why = (
        f"a yes/no p and the two-way choice's probability of yes differ by {mean:+.3f} more"
        f" on average than p between two identical requests (95% interval {low:+.3f} to"
        f" {high:+.3f}, {len(gaps)} answers); the margin is {margin:g}"
    )
    return _result(
        "form", status, why, figure=mean, low=low, high=high, threshold=margin,
        compared=len(gaps),
    )  # fmt: skip


def _injection(
    check: Check, asked: _Asked, both: list[_Pair], thresholds: Thresholds
) -> ProbeResult:
    # Only cases with room to move: a case whose every question passed cannot move up.
    room = [(i, b, a) for i, b, a in both if not all(r == "pass" for r in _results(check, b))]
    hits = total = 0
    for index, base, _ in room:
        for variant in asked.injection[index]:
            if variant is not None:
                total += 1
                hits += toward_pass(check, base, variant)
    noise = sum(toward_pass(check, b, a) for _, b, a in room)
    return _invariance(
        "injection", hits, total, noise, len(room), thresholds.injection_margin, thresholds,
        "an unverified claim of quality added to the submission moved an answer toward pass on",
    )  # fmt: skip


def _results(check: Check, answers: Sequence[Answer]) -> list[str]:
    from .._verdict import grade

    return [grade(q, a) for q, a in zip(check, answers, strict=True)]


def _cut(
    check: Check,
    cases: Sequence[QualifyCase],
    asked: _Asked,
    both: list[_Pair],
    thresholds: Thresholds,
) -> ProbeResult:
    marked = [(i, b, a) for i, b, a in both if cases[i].cut_bytes is not None]
    if not any(case.cut_bytes is not None for case in cases):
        return _result("cut", "not_applicable", "no case is marked with a smaller budget")
    hits = total = 0
    for index, base, _ in marked:
        variant = asked.cut[index]
        if variant is not None:
            total += 1
            hits += changed(check, base, variant)
    noise = sum(changed(check, b, a) for _, b, a in marked)
    return _invariance(
        "cut", hits, total, noise, len(marked), thresholds.cut_margin, thresholds,
        "cutting the run data to the marked budget changed a result on",
    )  # fmt: skip


def _reliability(asked: _Asked, thresholds: Thresholds) -> ProbeResult:
    total, failed = asked.requests, asked.unanswered
    limit = thresholds.max_failure_rate
    if total < thresholds.min_compared:
        return _result(
            "reliability",
            "too_few",
            f"{total} requests, fewer than the {thresholds.min_compared} needed",
            compared=total,
            threshold=limit,
        )
    if _stats.wilson(0, total)[1] > limit:
        return _result(
            "reliability",
            "too_few",
            f"{total} requests: too few for even no failure to show a rate within {limit:g}",
            compared=total,
            threshold=limit,
        )
    low, high = _stats.wilson(failed, total)
    reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(asked.failures.items()))
    problems = []
    if high > limit:
        problems.append(f"the failure rate's interval reaches above {limit:g}")
    if len(asked.models) > 1:
        problems.append(f"several models answered ({', '.join(asked.models)})")
    slow = ""
    if thresholds.max_p95_seconds is not None and asked.seconds:
        p95 = _stats.percentile(asked.seconds, 0.95)
        slow = f"; p95 latency {p95:.3f} s"
        if p95 > thresholds.max_p95_seconds:
            problems.append(f"p95 latency {p95:.3f} s is over {thresholds.max_p95_seconds:g} s")
    why = (
        f"{_pct(failed, total)} requests not answered"
        f"{f' ({reasons})' if reasons else ''} (95% interval {low:.3f} to {high:.3f}){slow}"
        + (f": {'; '.join(problems)}" if problems else f"; at most {limit:g} is allowed")
    )
    return _result(
        "reliability", "failed" if problems else "passed", why, figure=failed / total,
        low=low, high=high, threshold=limit, compared=total,
    )  # fmt: skip


def _knowledge(
    check: Check, cases: Sequence[QualifyCase], asked: _Asked, thresholds: Thresholds
) -> ProbeResult:
    accepted, refused = known(cases)
    scores: list[tuple[bool, float]] = []
    for index, case in enumerate(cases):
        if case.accepted is None:
            continue
        asks = [a for a in (asked.base[index], asked.again[index]) if a is not None]
        if not asks:
            continue
        per_ask = [
            math.fsum(pass_score(q, a) for q, a in zip(check, answers, strict=True)) / len(check)
            for answers in asks
        ]
        scores.append((case.accepted, math.fsum(per_ask) / len(per_ask)))
    good = [score for accepted_, score in scores if accepted_]
    bad = [score for accepted_, score in scores if not accepted_]
    need = thresholds.min_known
    if len(good) < need or len(bad) < need:
        return _result(
            "knowledge",
            "too_few",
            f"{len(good)} accepted and {len(bad)} refused cases answered ({accepted} and"
            f" {refused} known), fewer than {need} of each needed to judge",
            compared=len(scores),
            threshold=thresholds.min_auc,
        )
    area, low, high = _stats.auc_interval(good, bad)
    status = "passed" if low > thresholds.min_auc else "failed"
    why = (
        f"the answers rank an accepted case above a refused one with probability {area:.3f}"
        f" (95% interval {low:.3f} to {high:.3f}, {len(good)} accepted, {len(bad)} refused);"
        f" its low end must be above {thresholds.min_auc:g}"
        + ("" if status == "passed" else ": the answers do not tell them apart")
    )
    return _result(
        "knowledge", status, why, figure=area, low=low, high=high,
        threshold=thresholds.min_auc, compared=len(scores),
    )  # fmt: skip


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
