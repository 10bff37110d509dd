"""What a check's model calls cost, summed from the verdict records calibration reads.

A verdict record keeps one call per attempt (``calls``, see ``_audit_records``): its wall
time and the tokens the host reported. Calibration adds them up for each check it reports and
for the whole trail it read (every distinct verdict record in the window, whatever its
verdict: an ``error`` cost calls too). A figure a call did not report is counted apart, as
calls that did not report it, never as ``0``; a record written without calls (before they
were kept) is counted apart too.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from ..._usage import ModelCall

__all__ = ["CallCost", "CostTally", "TokenTotal", "cost_text"]


@attrs.frozen(kw_only=True)
class TokenTotal:
    """One token figure over many calls: the ``total`` of the calls that reported it, and
    how many calls did not (``not_reported``)."""

    total: int = 0
    not_reported: int = 0


@attrs.frozen(kw_only=True)
class CallCost:
    """The model calls of some verdict records: how many ``verdicts`` were read, how many of
    them kept no calls (``without_calls``), the ``calls`` the others made, their wall time
    in all (``seconds``) and each token figure (:class:`TokenTotal`)."""

    verdicts: int = 0
    without_calls: int = 0
    calls: int = 0
    seconds: float = 0.0
    input_tokens: TokenTotal = TokenTotal()
    output_tokens: TokenTotal = TokenTotal()
    cached_tokens: TokenTotal = TokenTotal()


class CostTally:
    """Adds up the calls of verdict records as calibration reads them."""

    __slots__ = ("_not_reported", "_totals", "calls", "seconds", "verdicts", "without_calls")

    def __init__(self) -> None:
        self.verdicts = 0
        self.without_calls = 0
        self.calls = 0
        self.seconds = 0.0
        self._totals = [0, 0, 0]  # input, output, cached
        self._not_reported = [0, 0, 0]

    def add(self, calls: Iterable[ModelCall]) -> None:
        """The calls of one verdict record (none: a record that keeps none)."""
        self.verdicts += 1
        made = 0
        totals, missing = self._totals, self._not_reported
        for call in calls:
            made += 1
            self.seconds += call.seconds
            usage = call.usage
            if usage is None:
                missing[0] += 1
                missing[1] += 1
                missing[2] += 1
                continue
            for index, figure in enumerate(
                (usage.input_tokens, usage.output_tokens, usage.cached_tokens)
            ):
                if figure is None:
                    missing[index] += 1
                else:
                    totals[index] += figure
        if made:
            self.calls += made
        else:
            self.without_calls += 1

    def merge(self, other: CostTally) -> None:
        """Add what ``other`` added up."""
        self.verdicts += other.verdicts
        self.without_calls += other.without_calls
        self.calls += other.calls
        self.seconds += other.seconds
        for index in range(3):
            self._totals[index] += other._totals[index]
            self._not_reported[index] += other._not_reported[index]

    def cost(self) -> CallCost:
        """What was added up so far."""
        tokens = [
            TokenTotal(total=total, not_reported=missing)
            for total, missing in zip(self._totals, self._not_reported, strict=True)
        ]
        return CallCost(
            verdicts=self.verdicts,
            without_calls=self.without_calls,
            calls=self.calls,
            seconds=round(self.seconds, 6),
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            cached_tokens=tokens[2],
        )


def _count(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _tokens(name: str, tokens: TokenTotal, calls: int) -> str:
    if calls and tokens.not_reported == calls:
        return f"{name} not reported"
    if not tokens.not_reported:
        return f"{tokens.total:,} {name}"
    return f"{tokens.total:,} {name} ({_count(tokens.not_reported, 'call')} not reported)"


def cost_text(cost: CallCost) -> str:
    """One sentence for people: the calls, their time and their tokens."""
    text = f"{_count(cost.calls, 'model call')} for {_count(cost.verdicts, 'verdict')}"
    if cost.without_calls:
        text += f" ({_count(cost.without_calls, 'verdict')} kept no calls)"
    if not cost.calls:
        return text + "."
    tokens = ", ".join(
        _tokens(name, figure, cost.calls)
        for name, figure in (
            ("input tokens", cost.input_tokens),
            ("output tokens", cost.output_tokens),
            ("cached input tokens", cost.cached_tokens),
        )
    )
    return f"{text}: {cost.seconds:,.1f} s of model time; {tokens}."
