"""Helpers shared by the test modules (imported as ``support``)."""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any, NoReturn

import jsonschema
import pytest
from hypothesis import strategies as st

import checkprofile
from checkprofile import Material, Submission, Verdict

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
