"""A person's decision: typed records, refused when they are anything else, and applied purely.

The profile (``check-1`` section 3): "The person decides `returned` with a note, `completed`
with the candidate or their own output, or `failed`. A person completing an escalated step is
not checked again". Every wrong shape raises DecisionRequiredError, whose message names the
shape received (types and keys) and never the contents, and nothing changes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from core2 import assert_shape
from hypothesis import given
from hypothesis import strategies as st
from test_human_records import RUN, STEP, outcome_of

from checkprofile import CheckprofileError, Evidence, Submission, format_at, issue_lines
from checkprofile._bundle import MAX_REASON
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
from checkprofile.human._decide._decisions import plain_decision, plain_decision_of
from support import Hostile, SaysItIsText, stamp

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
    data = json.loads(json.dumps(decision.to_json()))
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


# Found by mutation runs, each under its draw's seed (docs/mutation-results.md) --------------------


AT = "2026-11-02T09:00:00Z"


LATER = "2026-11-02T15:30:00Z"


# found by a mutation draw (seed 27): an own field without an output; MAX_REASON's bound
@pytest.mark.parametrize(
    "own",
    [
        {"summary": "Fixed."},
        {"next": "sign_off"},
        {"reason": "The amounts were wrong."},
    ],
)
def test_a_completed_decision_with_its_own_fields_needs_its_own_output(own: Any) -> None:
    # Dropping this check survived: a summary without an output would mix two submissions.
    (name,) = own
    with pytest.raises(DecisionRequiredError, match=f"with {name} needs its own output"):
        Completed(by="pat", at=AT, **own)
    with pytest.raises(DecisionRequiredError, match=f"with {name} needs its own output"):
        decision_from_json({"kind": "completed", "by": "pat", "at": AT, **own})
    assert Completed(by="pat", at=AT, output={"fixed": True}, **own).own_output() is not None


def test_a_completed_decision_with_evidence_but_no_output_is_refused() -> None:
    evidence = [{"kind": "file", "ref": "receipts.pdf"}]
    with pytest.raises(DecisionRequiredError, match="with evidence needs its own output"):
        decision_from_json({"kind": "completed", "by": "pat", "at": AT, "evidence": evidence})


@pytest.mark.parametrize(("length", "kept"), [(MAX_REASON - 1, True), (MAX_REASON, True)])
def test_a_reason_of_up_to_max_reason_characters_is_kept(length: int, kept: bool) -> None:
    # The bound off by one survived: a reason of exactly MAX_REASON characters is allowed.
    decision = Completed(by="pat", at=AT, output={"ok": True}, next="b", reason="r" * length)
    assert decision.reason == "r" * length


def test_a_reason_over_max_reason_characters_is_refused() -> None:
    with pytest.raises(DecisionRequiredError, match=f"at most {MAX_REASON} characters"):
        Completed(by="pat", at=AT, output={"ok": True}, next="b", reason="r" * (MAX_REASON + 1))


class Raises(dict[str, Any]):
    """A host's mapping whose own comparison raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("the host's __eq__ ran")

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("the host's __ne__ ran")

    __hash__ = None


@pytest.mark.parametrize("field", ["evidence", "summary", "next", "reason", "note"])
def test_a_decisions_fields_are_judged_without_the_hosts_own_comparison(field: str) -> None:
    # The defect issue 27 found: `value not in (None, ())` ran the value's __eq__, so the
    # host's exception came out. A field that is not what it must be is a DecisionRequiredError.
    with pytest.raises(DecisionRequiredError):
        Completed(by="pat", at=AT, **{field: Raises(a=1)})  # type: ignore[arg-type]


def test_the_first_own_field_given_is_the_one_named() -> None:
    with pytest.raises(DecisionRequiredError, match="with summary needs its own output"):
        Completed(by="pat", at=AT, summary="Fixed.", reason="Wrong amounts.")


class Route(metaclass=SaysItIsText):
    """A value whose type says it is no different from str."""


def test_a_next_whose_type_only_claims_to_be_str_is_refused() -> None:
    with pytest.raises(DecisionRequiredError, match="next must be a step id"):
        Completed(by="pat", at=AT, output={"ok": True}, next=Route())


# found by a mutation draw (seed 27): the quick reading of a plain decision
@pytest.mark.parametrize(
    ("data", "read"),
    [
        (
            {"kind": "returned", "note": "fix", "by": "pat", "at": AT},
            ("returned", "pat", AT, "fix"),
        ),
        ({"kind": "failed", "note": "gone", "by": "pat", "at": AT}, ("failed", "pat", AT, "gone")),
        (
            {"kind": "completed", "note": "ok", "by": "pat", "at": AT},
            ("completed", "pat", AT, "ok"),
        ),
        ({"kind": "completed", "by": "pat", "at": AT}, ("completed", "pat", AT, None)),
    ],
    ids=["returned", "failed", "completed-with-note", "completed"],
)
def test_the_plain_decisions_people_make_most_take_the_quick_reading(
    data: dict[str, Any], read: tuple[str, ...]
) -> None:
    # `type(note) is not str` -> `== str` survived: every note sent its decision down the
    # slow reading. The quick reading gives what decision_from_json gives.
    assert plain_decision(data) == read
    assert plain_decision_of(*read) == decision_from_json(data)


@pytest.mark.parametrize("note", ["", " ", 7, None])
def test_a_return_without_a_note_takes_no_quick_reading(note: object) -> None:
    assert plain_decision({"kind": "returned", "note": note, "by": "pat", "at": AT}) is None


# found by a mutation draw (seed 2027): the first own field named, hostile types, long names
def test_a_completed_decision_with_own_fields_but_no_output_names_the_first_of_them() -> None:
    data = {"kind": "completed", "by": "ana", "at": AT, "summary": "Mine.", "evidence": []}
    with pytest.raises(DecisionRequiredError, match="a completed decision with summary needs"):
        decision_from_json(data)


def test_a_decision_whose_time_is_of_a_hostile_type_is_not_plain_and_runs_nothing() -> None:
    # The type of `at` is compared by identity: a metaclass's own == and != never run
    # (Hostile, below).
    assert plain_decision({"kind": "returned", "by": "ana", "at": stamp(), "note": "n"}) is None


def test_a_value_of_a_long_type_name_is_named_in_forty_characters() -> None:
    long_named = type("T" * 60, (), {})
    with pytest.raises(DecisionRequiredError) as error:
        decision_from_json({"kind": "returned", "by": "ana", "at": AT, "note": long_named()})
    # The shape received names the value's type in at most forty characters, the last a mark.
    assert error.value.received.endswith("note (" + "T" * 38 + "…)")


@pytest.mark.parametrize(
    "output", [{1, 2}, float("nan"), [1], "text"], ids=["set", "nan", "list", "text"]
)
def test_a_persons_output_that_is_no_map_is_refused_as_no_map(output: object) -> None:
    # Not a map is the first thing said of it, whether or not it is JSON data too.
    with pytest.raises(DecisionRequiredError, match="output must be a map"):
        Completed(by="ana", at=AT, output=output)


# found by a mutation draw (seed 2028): human/_decisions, its checks and messages
@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: Returned(note="n", by=stamp(), at=AT), "by must be a string"),
        (lambda: Returned(note="n", by="pat", at=stamp()), "at must be an RFC 3339 time"),
        (lambda: Returned(note=stamp(), by="pat", at=AT), "note must be a string"),
        (lambda: Failed(note="n", by="pat", at=stamp()), "at must be an RFC 3339 time"),
        (lambda: Completed(by="pat", at=stamp()), "at must be an RFC 3339 time"),
        (lambda: Completed(by="pat", at=AT, note=stamp()), "note must be a string"),
        (lambda: Completed(by="pat", at=AT, output=stamp()), "output must be a map"),
        (lambda: Completed(by="pat", at=AT, output={}, summary=stamp()), "summary must be a"),
        (lambda: Completed(by="pat", at=AT, output={}, next=stamp()), "next must be a step id"),
        (lambda: Completed(by="pat", at=AT, output={}, reason=stamp()), "reason must be a"),
        (lambda: Completed(by="pat", at=AT, output={}, evidence=stamp()), "evidence must be a"),
    ],
    ids=[
        "by",
        "at",
        "note",
        "failed-at",
        "completed-at",
        "completed-note",
        "output",
        "summary",
        "next",
        "reason",
        "evidence",
    ],
)
def test_a_decision_holding_a_value_of_a_hostile_type_is_refused_running_none_of_its_code(
    make: Any, said: str
) -> None:
    # `type(at) is not str` and `type(evidence) is not tuple` -> `!=` survived: the type's
    # own comparison ran, and its exception came out instead of the decision's error.
    with pytest.raises(DecisionRequiredError, match=said):
        make()


def test_a_decision_changed_to_hold_a_hostile_value_is_refused_where_it_is_acted_on() -> None:
    decision = Completed(by="pat", at=AT, output={"ok": True})
    for field in ("at", "evidence"):
        changed = Completed(by="pat", at=AT, output={"ok": True})
        object.__setattr__(changed, field, stamp())
        with pytest.raises(DecisionRequiredError, match=f"{field} must be"):
            decision_from_json(changed)
    assert decision_from_json(decision) is decision  # a sound typed decision is taken as it is


def test_a_decisions_error_says_the_problem_the_shape_received_and_what_is_allowed() -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json({})
    assert str(caught.value) == (
        "a decision needs a kind; received an empty map (a decision is returned (note, by, at),"
        " completed (by, at, and optionally note, output, summary, evidence, next, reason) or"
        " failed (note, by, at))"
    )
    assert (caught.value.problem, caught.value.received) == (
        "a decision needs a kind",
        "an empty map",
    )


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"kind": "completed"}, "a completed decision needs by, at"),
        ({"kind": "failed", "by": "pat"}, "a failed decision needs note, at"),
        (
            {"kind": "completed", "by": "pat", "at": AT, "extra": 1},
            "a completed decision has only the keys kind, by, at, note, output, summary,"
            " evidence, next, reason",
        ),
        (
            {"kind": "returned", "note": "n", "by": "pat", "at": AT, "extra": 1},
            "a returned decision has only the keys kind, note, by, at",
        ),
    ],
)
def test_a_decision_missing_a_key_or_with_one_too_many_names_them_all(
    data: dict[str, Any], problem: str
) -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(data)
    assert caught.value.problem == problem


def _keys(count: int) -> dict[str, int]:
    return {f"k{n:02d}": n for n in range(count)}


@pytest.mark.parametrize(
    ("count", "more"), [(11, None), (12, None), (13, "and 1 more"), (40, "and 28 more")]
)
def test_a_shape_names_twelve_keys_and_then_how_many_more(count: int, more: str | None) -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(_keys(count))
    named = [f"k{n:02d} (int)" for n in range(min(count, 12))]
    assert caught.value.received == "a map with keys " + ", ".join(named + ([more] if more else []))


class Many(Mapping[str, int]):
    """A map of one's own with more keys than a message reads."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __getitem__(self, key: str) -> int:
        return 0

    def __iter__(self) -> Iterator[str]:
        return (f"key{n:05d}" for n in range(self.size))

    def __len__(self) -> int:
        return self.size


class Unreadable(Many):
    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("cannot list itself")


def test_a_map_of_ones_own_is_read_only_so_far_for_its_shape() -> None:
    # Not a dict, so not JSON data; its shape is read from its first 10,000 items only.
    with pytest.raises(DecisionRequiredError, match="a decision is JSON data") as caught:
        decision_from_json(Many(25_000))
    assert caught.value.received.endswith("key00011 (int), and 9988 more")
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(Unreadable(3))
    assert caught.value.received == "a Unreadable that cannot be read"


class Disguised(str):
    def __str__(self) -> str:
        return "what the key says of itself"


@pytest.mark.parametrize(
    ("value", "received"),
    [
        (("returned", "n"), "a tuple of 2 items"),
        ([], "a list of 0 items"),
        ({Disguised("kind"): 1}, "a map with keys kind (int)"),
        ({"k" * 40: 1}, "a map with keys " + "k" * 31 + "… (int)"),
        ({"kind": "returned", "note": None}, "a map with keys kind (str), note (null)"),
    ],
    ids=["tuple", "list", "key-of-a-str-type", "long-key", "null"],
)
def test_a_shape_names_what_arrived_by_its_own_base_type(value: object, received: str) -> None:
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(value)
    assert caught.value.received == received


def test_a_tampered_typed_decision_is_named_as_such() -> None:
    decision = Returned(note="n", by="pat", at=AT)
    object.__setattr__(decision, "note", " ")
    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(decision)
    assert caught.value.received == "a Returned decision"


def test_the_hosts_time_is_a_decisions_time_only_when_it_carries_none() -> None:
    data = {"kind": "failed", "note": "gone", "by": "pat"}
    assert decision_from_json(data, at=LATER).at == LATER
    aware = datetime(2026, 11, 2, 17, 30, tzinfo=timezone(timedelta(hours=2)))
    assert decision_from_json(data, at=aware).at == LATER
    assert decision_from_json({**data, "at": AT}, at=LATER).at == AT
    with pytest.raises(DecisionRequiredError, match="at must be an RFC 3339 time string"):
        decision_from_json(data, at=1_764_000_000)  # type: ignore[arg-type]
    with pytest.raises(DecisionRequiredError, match="needs at"):
        decision_from_json(data)


def test_a_decision_that_is_no_json_data_is_refused_as_such() -> None:
    with pytest.raises(DecisionRequiredError, match=r"a decision is JSON data \(") as caught:
        decision_from_json({"kind": "failed", "note": {1, 2}, "by": "pat", "at": AT})
    assert caught.value.received == "a map with keys at (str), by (str), kind (str), note (set)"


def test_a_persons_own_output_and_everything_with_it_is_kept() -> None:
    data = {
        "kind": "completed",
        "by": "pat",
        "at": AT,
        "note": "Redone by hand.",
        "output": {"total": 12},
        "summary": "Twelve.",
        "evidence": [{"kind": "link", "ref": "https://x/y"}],
        "next": "sign_off",
        "reason": "The sums were wrong.",
    }
    decision = decision_from_json(data)
    assert decision.to_json() == data
    own = Completed(
        by="pat",
        at=AT,
        note="Redone by hand.",
        output={"total": 12},
        summary="Twelve.",
        evidence=[Evidence("link", "https://x/y")],
        next="sign_off",
        reason="The sums were wrong.",
    )
    assert decision == own and own.evidence == (Evidence("link", "https://x/y"),)
    assert own.own_output() == Submission(
        {"total": 12},
        "Twelve.",
        (Evidence("link", "https://x/y"),),
        next="sign_off",
        reason="The sums were wrong.",
    )


PLAIN = {"kind": "returned", "note": "fix", "by": "pat", "at": AT}


@pytest.mark.parametrize(
    "data",
    [
        PLAIN,
        {**PLAIN, "kind": "failed"},
        {"kind": "completed", "by": "pat", "at": AT},
        {"kind": "completed", "by": "pat", "at": AT, "note": "ok"},
        {"kind": "completed", "by": "pat", "at": AT, "note": None},
        {"kind": "completed", "by": "pat", "at": AT, "note": " "},
        {"kind": "completed", "by": "pat", "at": AT, "note": 3},
        {"kind": "completed", "by": "pat", "at": AT, "output": {}},
        {"kind": "completed", "by": "pat"},
        {**PLAIN, "note": None},
        {**PLAIN, "by": ""},
        {**PLAIN, "by": " \t"},
        {**PLAIN, "by": 7},
        {**PLAIN, "at": "2026-11-02"},
        {**PLAIN, "at": "2026-11-02T09:00:00"},
        {**PLAIN, "at": 7},
        {**PLAIN, "kind": "approved"},
        {**PLAIN, "kind": ["returned"]},
        {**PLAIN, "extra": 1},
        {"note": "fix", "by": "pat", "at": AT},
        {"kind": "failed", "by": "pat", "at": AT},
    ],
)
def test_the_quick_reading_of_a_decision_agrees_with_the_full_one(data: dict[str, Any]) -> None:
    # plain_decision checks what decision_from_json checks: it reads a plain decision the
    # full reading takes, and nothing the full reading refuses.
    try:
        full: Any = decision_from_json(data)
    except DecisionRequiredError:
        full = None
    quick = plain_decision(data)
    if quick is not None:
        assert plain_decision_of(*quick) == full
    plain_shape = set(data) - {"note"} == {"kind", "by", "at"} and "output" not in data
    assert (quick is not None) == (full is not None and plain_shape)


# found by a mutation draw (seed 2029): the quick reading's type checks by identity
class HostileDict(dict[str, Any], metaclass=Hostile):
    """A decision read from JSON whose type's own comparison raises."""


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "returned", "note": "n", "by": stamp(), "at": AT},
        {"kind": "returned", "note": stamp(), "by": "pat", "at": AT},
        {"kind": "completed", "note": stamp(), "by": "pat", "at": AT},
        {"kind": stamp(), "note": "n", "by": "pat", "at": AT},
        HostileDict(kind="returned", note="n", by="pat", at=AT),
    ],
    ids=["by", "note", "completed-note", "kind", "the-map"],
)
def test_the_quick_reading_runs_none_of_a_hostile_values_code(data: Any) -> None:
    # Each of its type checks is by identity: a value of a hostile type is no plain decision.
    assert plain_decision(data) is None


# found by a mutation draw (seed 2030): Returned.kind's init=False -> True; keyword-only
@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda **kw: Returned(note="n", by="pat", at=AT, **kw), "returned"),
        (lambda **kw: Completed(by="pat", at=AT, **kw), "completed"),
        (lambda **kw: Failed(note="n", by="pat", at=AT, **kw), "failed"),
    ],
    ids=["returned", "completed", "failed"],
)
def test_a_decisions_kind_is_its_class_and_no_argument(make: Any, kind: str) -> None:
    # `init=False` -> `True` on Returned.kind survived: a Returned(kind="failed") could be
    # made, a return that says it is a failure.
    assert make().kind == kind
    assert make().to_json()["kind"] == kind
    with pytest.raises(TypeError):
        make(kind="failed" if kind != "failed" else "returned")


def test_decisions_and_resolutions_are_made_by_keyword_only() -> None:
    from checkprofile.human import Resolution

    for make in (
        lambda: Returned("n", "pat", AT),  # type: ignore[call-arg]
        lambda: Failed("n", "pat", AT),  # type: ignore[call-arg]
        lambda: Completed("pat", AT),  # type: ignore[call-arg]
        lambda: Resolution(None, Completed(by="pat", at=AT)),  # type: ignore[call-arg, arg-type]
    ):
        with pytest.raises(TypeError):
            make()


# found by a mutation draw (seed 2031): decision_from_json's `*` -> `/`
def test_the_hosts_time_for_a_decision_is_given_by_keyword_only() -> None:
    # `*` -> `/` survived: a time given by position was taken as the host's clock.
    data = {"kind": "failed", "note": "gone", "by": "pat"}
    assert decision_from_json(data=data, at=LATER).at == LATER
    with pytest.raises(TypeError):
        decision_from_json(data, LATER)  # type: ignore[call-arg]
