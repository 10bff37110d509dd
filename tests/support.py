"""Helpers shared by the test modules (imported as ``support``)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
from hypothesis import strategies as st

import checkprofile
from checkprofile import Material, Submission, Verdict

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
