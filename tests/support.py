"""Helpers shared by the test modules (imported as ``support``)."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import jsonschema
import pytest
from hypothesis import strategies as st

import checkprofile
from checkprofile import (
    Limits,
    Material,
    Outcome,
    Reply,
    Submission,
    Verdict,
    YesNoAnswer,
    outcome_for,
    parse_check,
    run_check_sync,
)

#: The profile's own full-form example (section 2), shared by the test modules.
SPEC_ASK = "The cleared verdict matches what the attached report says."
SPEC_CHOICE_ASK = "What does the summary do?"
SPEC_RUBRIC_ASK = "How complete is the screening?"
SPEC_ONE_OF = {
    "states": "States the verdict and the lists checked.",
    "hedges": "Avoids a verdict or qualifies it heavily.",
    "unclear": "Cannot tell.",
}
SPEC_LEVELS = [
    "Neither list is clearly covered.",
    "One list is covered.",
    "Both lists are covered with the search terms stated.",
]


def spec_full_form(ask: str = SPEC_ASK) -> list[dict[str, Any]]:
    """The example as a user writes it, fresh on every call (tests may change their copy)."""
    return [
        {"ask": ask, "pass": 0.9, "fail": 0.5},
        {
            "ask": SPEC_CHOICE_ASK,
            "one_of": dict(SPEC_ONE_OF),
            "pass": ["states"],
            "unsure": ["unclear"],
        },
        {"ask": SPEC_RUBRIC_ASK, "levels": list(SPEC_LEVELS), "pass": 2, "confidence": 0.8},
    ]


#: A fixed verdict time: the pure stages never read the clock.
AT = "2026-10-06T09:04:20Z"


@cache
def verdict_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(checkprofile.verdict_schema())


def assert_verdict_valid(verdict: Verdict) -> None:
    """The verdict has the check-verdict shape and survives a JSON round trip."""
    data = verdict.to_json()
    errors = list(verdict_validator().iter_errors(data))
    assert not errors, [error.message for error in errors]
    text = json.dumps(data)
    again = Verdict.from_json(json.loads(text))
    assert again == verdict
    assert again.to_json() == data


def material(
    run_data: dict[str, Any] | None = None,
    *,
    output: Any = None,
    instructions: str = "Check the vendor against the OFAC and EU lists.",
    body: str = "# Vendor onboarding\n",
) -> Material:
    return Material(
        instructions=instructions,
        body=body,
        run_data=run_data if run_data is not None else {"inputs": {}, "steps": {}},
        submission=Submission(output if output is not None else {"cleared": True}, "done"),
    )


#: JSON-like values of every shape, including the odd ones YAML produces (non-string keys).
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
json_like = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text(max_size=8) | st.integers() | st.booleans(), children, max_size=5)
    ),
    max_leaves=25,
)


def unavailable(missing: str, needed_for: str) -> NoReturn:
    """Skips the test for want of ``missing`` (a real part: a server, a host, a browser, a
    wheel), except on CI, where .ci/run provides every one and a skip would hide a missing
    install step: there it fails, saying ``needed_for``."""
    if os.environ.get("CI"):
        pytest.fail(f"{missing}, and CI must {needed_for}")
    pytest.skip(missing)


# Impostors and evaluators of the tests mutation runs found (docs/mutation-results.md) -------------


class SaysItIsText(type):
    """A metaclass whose classes say they are no different from any type."""

    def __eq__(cls, other: object) -> bool:
        return True

    def __ne__(cls, other: object) -> bool:
        return False

    __hash__ = type.__hash__


class Reports:
    """Answers every question with ``failure``, on every attempt."""

    model = "m"

    def __init__(self, failure: Any) -> None:
        self.failure = failure

    async def answer(self, bundle: Any) -> Reply:
        return Reply("m-1", [self.failure] * len(bundle.check))


class Claims(metaclass=SaysItIsText):
    """A value whose type says it is no different from any type, and which says it equals any
    value: what only a comparison by identity tells apart from the thing it claims to be."""

    reason = "timeout"
    detail = "slow"
    retry_after = None
    exception = None
    model = "m-1"
    answers = (YesNoAnswer(0.95),)
    usage = None

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class Counts(Reports):
    """Answers yes, and counts how often it was asked."""

    def __init__(self) -> None:
        super().__init__(YesNoAnswer(0.95))
        self.asked = 0

    async def answer(self, bundle: Any) -> Reply:
        self.asked += 1
        return await super().answer(bundle)


def run_with(**given: Any) -> Outcome:
    arguments: dict[str, Any] = {
        "check": parse_check("Is it right?"),
        "material": material(),
        "evaluator": Reports(YesNoAnswer(0.95)),
        "limits": Limits(),
        "max_retry_wait": 0.0,
        **given,
    }
    check, bundle, evaluator = (
        arguments.pop("check"),
        arguments.pop("material"),
        arguments.pop("evaluator"),
    )
    return run_check_sync(check, bundle, evaluator, **arguments)


class Hostile(type):
    """A metaclass whose own comparison raises: a value of such a type runs a host's code as
    soon as its type is compared by == or !=."""

    def __eq__(cls, other: object) -> bool:
        raise RuntimeError("a hostile type's own code ran")

    def __ne__(cls, other: object) -> bool:
        raise RuntimeError("a hostile type's own code ran")

    __hash__ = type.__hash__


class Stamp(metaclass=Hostile):
    """A value of a hostile type."""


def stamp() -> Any:
    return Stamp()


#: A trail's first verdict time, and the one yes/no question its verdicts answer.
TRAIL_AT = "2026-11-02T09:00:00Z"
TRAIL_CHECK = parse_check("Is the report right?")


def verdict(p: float = 0.95, *, at: str = TRAIL_AT, advisory: bool = True) -> Verdict:
    # Looked up when called: tests/conftest.py wraps checkprofile.combine to validate each verdict.
    return checkprofile.combine(TRAIL_CHECK, [YesNoAnswer(p)], model="m", at=at, advisory=advisory)


def write_verdict(path: Path, run: str, p: float = 0.95, *, at: str = TRAIL_AT) -> None:
    """Append to ``path`` a verdict (yes at ``p``) on the submission of ``run``."""
    from checkprofile.human import JsonLinesRecorder, verdict_record

    record = verdict_record(
        outcome_for(verdict(p, at=at)),
        run_id=run,
        step_id="review",
        submission=Submission({"report": run}),
    )
    JsonLinesRecorder(path).record(record)


def write_decision(path: Path, run: str, decision: Any) -> None:
    """Append to ``path`` a person's ``decision`` on the submission of ``run``."""
    from checkprofile.human import JsonLinesRecorder, decision_record

    record = decision_record(
        decision, run_id=run, step_id="review", submission=Submission({"report": run})
    )
    JsonLinesRecorder(path).record(record)
