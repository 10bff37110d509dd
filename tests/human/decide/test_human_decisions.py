"""A person's decision: typed records, refused when they are anything else, and applied purely.

The profile (``check-1`` section 3): "The person decides `returned` with a note, `completed`
with the candidate or their own output, or `failed`. A person completing an escalated step is
not checked again". Every wrong shape raises DecisionRequiredError, whose message names the
shape received (types and keys) and never the contents, and nothing changes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from core2 import assert_shape
from hypothesis import given
from hypothesis import strategies as st
from test_human_records import RUN, STEP, outcome_of

from checkprofile import CheckprofileError, Evidence, Submission, format_at, issue_lines
from checkprofile.human import (
    Completed,
    Decision,
    DecisionRequiredError,
    Escalation,
    Failed,
    Handoff,
    Resolution,
    Returned,
    ReturnNote,
    apply_decision,
    decision_from_json,
    records_for,
)

WHEN = "2026-10-06T10:15:00Z"


def assert_resolution_is_core_2(resolution: Resolution) -> None:
    """What a host writes after a decision is in core-2's shapes: the handoff, the output
    the step completes with (a step record's fields), and the check that stays."""
    data = json.loads(json.dumps(resolution.to_json()))
    assert set(data) <= {"decision", "handoff", "output", "steps"}
    if "handoff" in data:
        assert_shape("handoff", data["handoff"])
    if "output" in data:
        assert_shape("submission", data["output"])
        assert_shape("candidate", data["output"])
    for record in data.get("steps", {}).values():
        assert_shape("step-record", {**record, "history": []})


#: Every value a wrong decision holds contains this: no message may show it.
SECRET = "s3cr3t"


def escalation() -> Escalation:
    made = records_for(outcome_of("unsure"), run_id=RUN, step_id=STEP).escalation
    assert made is not None
    return made


ESCALATION = escalation()


# --- the error ---------------------------------------------------------------------------------


def test_decision_required_error_is_in_the_family_and_both_stdlib_kin() -> None:
    assert issubclass(DecisionRequiredError, CheckprofileError)
    assert issubclass(DecisionRequiredError, TypeError)
    assert issubclass(DecisionRequiredError, ValueError)


class Approval:
    """A decision of the caller's own making (the seed's "an object of your own shape")."""

    def __init__(self) -> None:
        self.note = SECRET


def returned(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": "returned", "note": f"{SECRET} note", "by": SECRET, "at": WHEN}
    data.update(changes)
    return {key: value for key, value in data.items() if value is not DROP}


DROP = object()

# (id, what was received, what the message must say): the shapes, never SECRET.
WRONG: list[tuple[str, object, list[str]]] = [
    ("a-string", f"approve {SECRET}", ["not a decision", "received a str"]),
    ("bytes", SECRET.encode(), ["received a bytes"]),
    ("none", None, ["received null"]),
    ("a-number", 1, ["received a int"]),
    ("true", True, ["received a bool"]),
    ("a-list", [SECRET, "returned"], ["received a list of 2 items"]),
    ("own-object", Approval(), ["received a Approval"]),
    ("empty-map", {}, ["needs a kind", "received an empty map"]),
    ("no-kind", {"note": SECRET, "by": SECRET}, ["needs a kind", "by (str), note (str)"]),
    (
        "unknown-kind",
        returned(kind=f"approved-{SECRET}"),
        ["kind must be returned, completed or failed", "kind (str)"],
    ),
    ("kind-not-a-string", returned(kind=["returned"]), ["kind (list)"]),
    ("missing-note", returned(note=DROP), ["a returned decision needs note", "by (str), kind"]),
    ("missing-by", returned(by=DROP), ["needs by"]),
    ("missing-at", returned(at=DROP), ["needs at"]),
    ("missing-by-and-at", returned(by=DROP, at=DROP), ["needs by, at"]),
    ("failed-missing-note", {"kind": "failed", "by": SECRET, "at": WHEN}, ["failed decision"]),
    ("note-a-number", returned(note=12345), ["note must be a string", "note (int)"]),
    ("note-a-map", returned(note={"text": SECRET}), ["note must be a string", "note (dict)"]),
    ("note-blank", returned(note="   "), ["note must not be blank"]),
    ("by-null", returned(by=None), ["by must be a string", "by (null)"]),
    ("by-blank", returned(by=""), ["by must not be blank"]),
    ("at-not-a-time", returned(at=f"{SECRET} o'clock"), ["at must be RFC 3339", "at (str)"]),
    ("at-no-zone", returned(at="2026-10-06T10:15:00"), ["at must be RFC 3339"]),
    ("at-a-number", returned(at=1791000000), ["at must be an RFC 3339", "at (int)"]),
    ("unknown-key", returned(approved=True), ["only the keys", "approved (bool)"]),
    (
        "secret-key-is-shown-as-a-key-only",
        returned(**{"x" * 40: SECRET}),
        ["only the keys", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (str)"],
    ),
    (
        "completed-note-blank",
        {"kind": "completed", "by": SECRET, "at": WHEN, "note": " "},
        ["note must not be blank", "note (str)"],
    ),
    (
        "completed-with-a-key-of-returned",
        {"kind": "completed", "by": SECRET, "at": WHEN, "returned": SECRET},
        ["a completed decision has only the keys", "returned (str)"],
    ),
    (
        "completed-output-a-list",
        {"kind": "completed", "by": SECRET, "at": WHEN, "output": [SECRET]},
        ["output must be a map", "output (list)"],
    ),
    (
        "completed-next-without-output",
        {"kind": "completed", "by": SECRET, "at": WHEN, "next": "sign_off"},
        ["with next needs its own output", "next (str)"],
    ),
    (
        "completed-reason-without-output",
        {"kind": "completed", "by": SECRET, "at": WHEN, "reason": SECRET},
        ["with reason needs its own output", "reason (str)"],
    ),
    (
        "completed-next-empty",
        {"kind": "completed", "by": SECRET, "at": WHEN, "output": {}, "next": ""},
        ["next must be a step id (a non-empty string)", "next (str)"],
    ),
    (
        "completed-next-a-number",
        {"kind": "completed", "by": SECRET, "at": WHEN, "output": {}, "next": 3},
        ["next must be a step id", "next (int)"],
    ),
    (
        "completed-reason-too-long",
        {"kind": "completed", "by": SECRET, "at": WHEN, "output": {}, "reason": SECRET * 700},
        ["reason must be a string of at most 4000 characters", "reason (str)"],
    ),
    (
        "completed-evidence-kind-not-file-or-link",
        {
            "kind": "completed",
            "by": SECRET,
            "at": WHEN,
            "output": {},
            "evidence": [{"kind": SECRET, "ref": SECRET}],
        },
        ["evidence items need a kind (file or link) and a non-empty ref", "evidence (list)"],
    ),
    (
        "completed-output-null",
        {"kind": "completed", "by": SECRET, "at": WHEN, "output": None},
        ["output must not be null", "output (null)"],
    ),
    (
        "completed-summary-without-output",
        {"kind": "completed", "by": SECRET, "at": WHEN, "summary": SECRET},
        ["needs its own output", "summary (str)"],
    ),
    (
        "completed-summary-a-number",
        {"kind": "completed", "by": SECRET, "at": WHEN, "output": {}, "summary": 3},
        ["summary must be a string", "summary (int)"],
    ),
    (
        "completed-evidence-a-map",
        {"kind": "completed", "by": SECRET, "at": WHEN, "output": {}, "evidence": {"a": SECRET}},
        ["evidence must be a list", "evidence (dict)"],
    ),
    (
        "completed-evidence-item-bad",
        {"kind": "completed", "by": SECRET, "at": WHEN, "output": {}, "evidence": [SECRET]},
        ["evidence items need a kind (file or link) and a non-empty ref", "evidence (list)"],
    ),
]


@pytest.mark.parametrize(
    ("received", "expected"),
    [pytest.param(received, expected, id=name) for name, received, expected in WRONG],
)
def test_every_wrong_decision_is_refused_by_shape_with_nothing_changed(
    received: object, expected: list[str]
) -> None:
    before = copy.deepcopy(received) if not isinstance(received, Approval) else None
    escalation_before = ESCALATION.to_json()
    with pytest.raises(DecisionRequiredError) as read:
        decision_from_json(received)
    with pytest.raises(DecisionRequiredError) as applied:
        apply_decision(ESCALATION, received)  # type: ignore[arg-type]
    for error in (read.value, applied.value):
        message = str(error)
        assert SECRET not in message
        assert "\n" not in message
        assert f"received {error.received} (" in message
    for fragment in expected:
        assert fragment in str(read.value)
    assert applied.value.received == read.value.received
    if before is not None:
        assert received == before
    assert ESCALATION.to_json() == escalation_before


def test_apply_decision_takes_typed_decisions_only() -> None:
    # JSON goes through decision_from_json first; a map is not a decision, even a right one.
    with pytest.raises(DecisionRequiredError) as caught:
        apply_decision(ESCALATION, returned())  # type: ignore[arg-type]
    assert "see decision_from_json" in str(caught.value)
    assert caught.value.received == "a map with keys at (str), by (str), kind (str), note (str)"


def test_a_map_with_many_keys_is_named_in_one_short_line() -> None:
    received = {f"key{n:03d}": SECRET for n in range(500)}
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(received)
    assert caught.value.received.endswith("and 488 more")
    assert len(str(caught.value)) < 600


def test_odd_keys_are_named_by_type() -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json({1: SECRET, "kind\n": "x"})
    assert caught.value.received == r"a map with keys <a int key> (str), kind\n (str)"


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        pytest.param(
            lambda: Returned(note="", by="a", at=WHEN), "note must not be blank", id="note"
        ),
        pytest.param(
            lambda: Failed(note=SECRET, by=7, at=WHEN),
            "by must be a string",
            id="by",
        ),
        pytest.param(lambda: Failed(note=SECRET, by="a", at="now"), "at must be", id="at"),
        pytest.param(
            lambda: Returned(note=SECRET, by="a", at=datetime(2026, 1, 1)),
            "at must be RFC 3339 in UTC ending in Z (or an aware datetime)",
            id="at-naive-datetime",
        ),
        pytest.param(
            lambda: Completed(by="a", at=WHEN, summary=SECRET), "needs its own output", id="sum"
        ),
        pytest.param(
            lambda: Completed(by="a", at=WHEN, output={}, evidence=[SECRET]),  # type: ignore[list-item]
            "evidence must be a sequence of Evidence",
            id="evidence",
        ),
    ],
)
def test_typed_decisions_hold_only_what_they_need(
    make: Callable[[], Decision], fragment: str
) -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        make()
    assert fragment in str(caught.value)
    assert SECRET not in str(caught.value)


def test_a_typed_decision_takes_an_aware_datetime_as_its_time() -> None:
    at = datetime(2026, 10, 6, 12, 15, tzinfo=timezone(timedelta(hours=2)))
    assert Returned(note="n", by="a", at=at).at == WHEN


def test_a_decision_tampered_after_it_was_made_is_refused_when_applied() -> None:
    decision = Returned(note="Attach the EU report.", by="alice", at=WHEN)
    object.__setattr__(decision, "note", None)
    with pytest.raises(DecisionRequiredError, match="note must be a string"):
        apply_decision(ESCALATION, decision)


# --- reading decisions -------------------------------------------------------------------------


def test_decisions_read_from_json() -> None:
    assert decision_from_json(returned(note="Attach the EU report.", by="alice")) == Returned(
        note="Attach the EU report.", by="alice", at=WHEN
    )
    assert decision_from_json(
        {"kind": "failed", "note": "Vendor is sanctioned.", "by": "bo", "at": WHEN}
    ) == (Failed(note="Vendor is sanctioned.", by="bo", at=WHEN))
    assert decision_from_json({"kind": "completed", "by": "cy", "at": WHEN}) == Completed(
        by="cy", at=WHEN
    )
    own = decision_from_json(
        {
            "kind": "completed",
            "by": "cy",
            "at": WHEN,
            "output": {"cleared": False},
            "summary": "Listed on OFAC.",
            "evidence": [{"kind": "file", "ref": "ofac.pdf", "url": "https://x/ofac.pdf"}],
        }
    )
    assert own == Completed(
        by="cy",
        at=WHEN,
        output={"cleared": False},
        summary="Listed on OFAC.",
        evidence=(Evidence("file", "ofac.pdf"),),
    )


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)
names = st.text(min_size=1).filter(lambda s: s.strip() != "")
times = st.datetimes(timezones=st.just(timezone.utc)).map(format_at)
decisions = st.one_of(
    st.builds(Returned, note=names, by=names, at=times),
    st.builds(Failed, note=names, by=names, at=times),
    st.builds(Completed, by=names, at=times),
    st.builds(Completed, by=names, at=times, note=names),
    st.builds(
        Completed,
        by=names,
        at=times,
        output=st.dictionaries(st.text(), json_values, max_size=3),
        summary=st.none() | st.text(),
        evidence=st.lists(
            st.builds(Evidence, st.sampled_from(["file", "link"]), st.text(min_size=1)),
            max_size=2,
        ).map(tuple),
        next=st.none() | st.text(min_size=1),
        reason=st.none() | st.text(),
        note=st.none() | names,
    ),
)


@given(decisions)
def test_a_decision_survives_a_json_round_trip(decision: Decision) -> None:
    from checkprofile._keepable import recordable_problem

    data = json.loads(json.dumps(decision.to_json()))
    if recordable_problem(data) is not None:
        # A NUL or a lone surrogate in any text: no audit record could hold it (issue 34).
        with pytest.raises(DecisionRequiredError, match="must be recordable before it is applied"):
            decision_from_json(data)
        return
    assert decision_from_json(data) == decision
    assert decision_from_json(data).to_json() == data


# --- applying decisions ------------------------------------------------------------------------

# "When the same attempt continues, after a `fail` or a `returned`, the previous check travels in
#  `handoff.check` and the agent's `handoff.issues` carries the same lines."


def test_returned_gives_the_handoff_with_who_returned_it_when_and_why() -> None:
    # core-2: "After a person's returned decision on an unsure step, the note travels in
    # handoff.returned, and the profile adds the check and its lines".
    decision = Returned(note="Attach the EU list report too.", by="alice@ops", at=WHEN)
    resolution = apply_decision(ESCALATION, decision)
    assert resolution.handoff == Handoff(
        returned=ReturnNote(note=decision.note, by="alice@ops", at=WHEN),
        issues=issue_lines(ESCALATION.check),
        check=ESCALATION.check,
    )
    assert resolution.output is None
    assert resolution.check is None  # it no longer waits on a person as steps.<id>.check
    data = resolution.to_json()
    assert data == {
        "decision": {
            "kind": "returned",
            "note": "Attach the EU list report too.",
            "by": "alice@ops",
            "at": WHEN,
        },
        "handoff": {
            "returned": {"note": "Attach the EU list report too.", "by": "alice@ops", "at": WHEN},
            "issues": list(issue_lines(ESCALATION.check)),
            "check": ESCALATION.check.to_json(),
        },
    }
    assert_resolution_is_core_2(resolution)


# "`completed` with the candidate or their own output ... A person completing an escalated step
#  is not checked again"


def test_completed_with_the_candidate_completes_with_the_held_submission() -> None:
    resolution = apply_decision(ESCALATION, Completed(by="alice@ops", at=WHEN))
    assert resolution.output is ESCALATION.candidate
    assert resolution.handoff is None
    assert resolution.check == ESCALATION.check
    assert resolution.to_json() == {
        "decision": {"kind": "completed", "by": "alice@ops", "at": WHEN},
        "output": ESCALATION.candidate.to_json(),
        "steps": {STEP: {"check": ESCALATION.check.to_json()}},
    }
    assert_resolution_is_core_2(resolution)


def test_a_completed_decision_may_carry_a_note() -> None:
    # core-2: "A person's completed decision carries the same fields, all optional, and a note."
    decision = decision_from_json(
        {"kind": "completed", "by": "alice@ops", "at": WHEN, "note": "Checked the EU list by hand."}
    )
    assert decision == Completed(by="alice@ops", at=WHEN, note="Checked the EU list by hand.")
    assert decision.with_candidate
    resolution = apply_decision(ESCALATION, decision)
    assert resolution.output is ESCALATION.candidate
    assert resolution.to_json()["decision"]["note"] == "Checked the EU list by hand."
    assert_resolution_is_core_2(resolution)


def test_completed_with_their_own_output_completes_with_it() -> None:
    decision = Completed(
        by="alice@ops",
        at=WHEN,
        output={"cleared": False},
        summary="Listed on the EU list.",
        evidence=(Evidence("file", "eu.pdf"),),
    )
    resolution = apply_decision(ESCALATION, decision)
    assert resolution.output == Submission(
        {"cleared": False}, "Listed on the EU list.", [{"kind": "file", "ref": "eu.pdf"}]
    )
    assert resolution.output != ESCALATION.candidate
    assert not decision.with_candidate
    assert_resolution_is_core_2(resolution)


def test_failed_ends_the_step_with_its_note_and_keeps_the_check() -> None:
    decision = Failed(note="The vendor is on the OFAC list.", by="alice@ops", at=WHEN)
    resolution = apply_decision(ESCALATION, decision)
    assert (resolution.handoff, resolution.output) == (None, None)
    assert resolution.check == ESCALATION.check
    assert resolution.to_json()["decision"] == {
        "kind": "failed",
        "note": "The vendor is on the OFAC list.",
        "by": "alice@ops",
        "at": WHEN,
    }
    assert_resolution_is_core_2(resolution)


@pytest.mark.parametrize(
    "decision",
    [
        Returned(note="n", by="a", at=WHEN),
        Completed(by="a", at=WHEN),
        Completed(by="a", at=WHEN, output={"a": 1}, next="sign_off", reason="r"),
        Failed(note="n", by="a", at=WHEN),
    ],
    ids=["returned", "completed", "completed-own", "failed"],
)
def test_apply_decision_changes_nothing_it_is_given(decision: Decision) -> None:
    escalation_json, decision_json = ESCALATION.to_json(), decision.to_json()
    copies = (attrs.evolve(ESCALATION), attrs.evolve(decision))
    apply_decision(ESCALATION, decision)
    assert (ESCALATION, decision) == copies
    assert (ESCALATION.to_json(), decision.to_json()) == (escalation_json, decision_json)


def test_apply_decision_needs_an_escalation() -> None:
    with pytest.raises(TypeError, match="takes an Escalation, got a dict"):
        apply_decision(ESCALATION.to_json(), Completed(by="a", at=WHEN))  # type: ignore[arg-type]


def test_nan_in_a_person_s_own_output_is_refused_when_the_decision_is_made() -> None:
    # It used to be accepted, and to fail only when the output was shown or recorded.
    import math

    with pytest.raises(DecisionRequiredError, match="output must be JSON data") as caught:
        Completed(by="ana", at="2026-10-06T10:15:00Z", output={"score": math.nan})
    assert "nan" in str(caught.value) and "score" in str(caught.value)


def test_an_approvers_natural_kind_is_refused_naming_the_mapping() -> None:
    # Issue 40, item 7: "approved" is what an approver says; the error says what it is here.
    for kind in ("approved", "approve", "rejected"):
        with pytest.raises(DecisionRequiredError) as caught:
            decision_from_json({"kind": kind, "by": "ana", "at": "2026-10-06T10:15:00Z"})
        message = str(caught.value)
        assert "an approval is completed" in message
        assert "a rejection is returned" in message and "or failed" in message
