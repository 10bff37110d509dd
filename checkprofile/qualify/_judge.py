"""Judging what the battery asked: each probe's figure, its interval, and its status.

Every invariance probe (order, form, injection, cut) is judged against the repeat: it fails
only when what changed under its variant exceeds what changed between two identical asks by
more than its margin, with 95% confidence. The repeat, reliability and knowledge probes are
judged on their own figures. :class:`Thresholds` holds every threshold, with its default and
why; a probe short of the comparisons it needs to pass says ``too_few``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

from .._check import Check, ChoiceQuestion
from .._convert import is_finite
from .._shown import show
from .._verdict import Answer, Failure, grade
from ..human._audit._qualification import PROBES, ProbeResult
from ._cases import QualifyCase, known
from ._stats import auc_interval, difference_interval, mean_interval, percentile, wilson
from ._variants import changed, pass_score, toward_pass, yes_share

__all__ = ["Asked", "Thresholds", "judge"]


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


@attrs.define
class Asked:
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
    difference, low, high = difference_interval(hits, total, noise_hits, noise_total)
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


def judge(
    check: Check,
    cases: Sequence[QualifyCase],
    asked: Asked,
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
    if wilson(0, total)[1] > limit:
        return _result(
            "repeat",
            "too_few",
            f"{total} cases answered twice: too few for even no change to show a rate within"
            f" {limit:g}",
            compared=total,
            threshold=limit,
        )
    hits = sum(changed(check, b, a) for _, b, a in both)
    low, high = wilson(hits, total)
    status = "passed" if high <= limit else "failed"
    why = (
        f"the same request asked twice changed a result or an option on {_pct(hits, total)}"
        f" cases (95% interval {low:.3f} to {high:.3f}); at most {limit:g} is allowed"
    )
    return _result(
        "repeat", status, why, figure=hits / total, low=low, high=high, threshold=limit,
        compared=total,
    )  # fmt: skip


def _order(check: Check, asked: Asked, both: list[_Pair], thresholds: Thresholds) -> ProbeResult:
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
    asked: Asked,
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
    mean, low, high = mean_interval(gaps)
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
    check: Check, asked: Asked, both: list[_Pair], thresholds: Thresholds
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
    return [grade(q, a) for q, a in zip(check, answers, strict=True)]


def _cut(
    check: Check,
    cases: Sequence[QualifyCase],
    asked: Asked,
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


def _reliability(asked: Asked, thresholds: Thresholds) -> ProbeResult:
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
    if wilson(0, total)[1] > limit:
        return _result(
            "reliability",
            "too_few",
            f"{total} requests: too few for even no failure to show a rate within {limit:g}",
            compared=total,
            threshold=limit,
        )
    low, high = wilson(failed, total)
    reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(asked.failures.items()))
    problems = []
    if high > limit:
        problems.append(f"the failure rate's interval reaches above {limit:g}")
    if len(asked.models) > 1:
        problems.append(f"several models answered ({', '.join(asked.models)})")
    slow = ""
    if thresholds.max_p95_seconds is not None and asked.seconds:
        p95 = percentile(asked.seconds, 0.95)
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
    check: Check, cases: Sequence[QualifyCase], asked: Asked, thresholds: Thresholds
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
    area, low, high = auc_interval(good, bad)
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
