"""An outcome: what the host does with a submission once its check has a verdict (decision 10).

The facts an outcome carries about itself live here too: the check its verdict answers
(:func:`held_check`) and where each of its answers came from (:func:`provenance_of`), so a
record of the outcome is made without reaching into the person's receipts.
"""

from __future__ import annotations

from typing import Literal

import attrs

from ._bundle import Bundle
from ._check import Check
from ._lines import issue_lines
from ._shown import show
from ._usage import ModelCall, Usage, total_usage
from ._verdict import Answer, Failure, Provenance, Verdict, provenance_of_answer

__all__ = ["Action", "Outcome", "held_check", "outcome_for", "provenance_of"]

Action = Literal["complete", "not_accepted", "escalate", "retry"]

# Decision 10: what each verdict makes the host do, when the check is not advisory.
_ACTIONS: dict[str, Action] = {
    "pass": "complete",
    "fail": "not_accepted",
    "unsure": "escalate",
    "error": "retry",
}


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
    evaluator reported (empty for an outcome not made by :func:`run_check`). ``tried``: for
    each question of the check, what each attempt that asked it gave (an answer, or the
    failure), so a person sees what the model did answer on an attempt whose verdict is an
    error (empty for an outcome not made by :func:`run_check`).
    """

    action: Action
    verdict: Verdict
    issues: tuple[str, ...] = ()
    attempts: int = 1
    failures: tuple[tuple[str, Failure], ...] = ()
    answers: tuple[Answer, ...] = ()
    bundle: Bundle | None = attrs.field(default=None, eq=False, repr=False)
    calls: tuple[ModelCall, ...] = attrs.field(default=(), eq=False, repr=False)
    tried: tuple[tuple[Answer | Failure, ...], ...] = attrs.field(default=(), eq=False, repr=False)

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


def held_check(outcome: Outcome) -> Check:
    """The check an outcome's verdict answers: the verdict's own, else the bundle's.

    Raises :class:`ValueError` when the outcome knows neither (a verdict read with
    ``Verdict.from_json`` without ``check=``), because thresholds and level texts come from it.
    """
    if type(outcome) is not Outcome:
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    if outcome.verdict.check is not None:
        return outcome.verdict.check
    if outcome.bundle is not None:
        return outcome.bundle.check
    raise ValueError(
        "the outcome's verdict does not know its check: read it with"
        " Verdict.from_json(data, check=...) or make the outcome with run_check"
    )


def provenance_of(outcome: Outcome) -> tuple[Provenance, ...]:
    """Where each answer of ``outcome`` came from, in question order (empty for an error)."""
    return tuple(provenance_of_answer(answer) for answer in outcome.answers)
