"""The outcome of a check (`_outcome.py`): how it is made, and what it holds."""

from __future__ import annotations

import attrs
import pytest

from checkprofile import (
    Limits,
    Outcome,
    YesNoAnswer,
    combine,
    outcome_for,
    parse_check,
    run_check_sync,
)
from support import AT, Claims, Reports, material

# Found by mutation runs, each under its draw's seed (docs/mutation-results.md) --------------------


# found by a mutation draw (seed 27): Outcome's kw_only=True -> False
def test_an_outcome_is_built_by_keyword_only() -> None:
    # kw_only=False survived: an Outcome built by position would take a field for the next
    # one in some later version.
    outcome = failure_kept_outcome()
    values = {field.name: getattr(outcome, field.name) for field in attrs.fields(Outcome)}
    assert Outcome(**values) == outcome
    with pytest.raises(TypeError):
        Outcome(*values.values())  # type: ignore[call-arg]


def failure_kept_outcome() -> Outcome:
    check = parse_check("Is it right?")
    return run_check_sync(check, material(), Reports(YesNoAnswer(0.95)), limits=Limits(), now=AT)


# found by a mutation draw (seed 2028): outcome_for's `*` -> `/`
def test_outcome_for_takes_its_options_by_keyword_only() -> None:
    # `*` -> `/` survived: a count of attempts given by position was taken as the attempts.
    verdict = combine(parse_check("Is it right?"), [YesNoAnswer(0.95)], model="m-1", at=AT)
    assert outcome_for(verdict=verdict, attempts=2).attempts == 2
    with pytest.raises(TypeError):
        outcome_for(verdict, 2)  # type: ignore[call-arg]


# found by a mutation draw (seed 2029): the verdict's type compared by `!=`, not by identity
def test_a_verdict_whose_type_only_claims_to_be_a_verdict_is_refused() -> None:
    with pytest.raises(TypeError, match="Verdict"):
        outcome_for(Claims())  # type: ignore[arg-type]


# found by a mutation draw (seed 2032): the default attempts=1 -> 0
def test_an_outcome_made_from_a_verdict_alone_took_one_attempt() -> None:
    # The default `attempts=1` -> `0` survived.
    verdict = combine(parse_check("Is it right?"), [YesNoAnswer(0.95)], model="m-1", at=AT)
    assert outcome_for(verdict).attempts == 1
