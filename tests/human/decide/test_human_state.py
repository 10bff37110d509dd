"""checkprofile.human.StepState and its events: the next state after each event of a check.

Each rule is the profile's own (check-1 section 3, quoted above each test), or a choice the
module docstring names. Every state written is checked against core-2's shapes, and every
input is left as it was.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from core2 import assert_shape
from test_human_records import CHECK, ROUTED, RUN, SCRIPTS, STEP, make_outcome, outcome_of

from checkprofile import Outcome, issue_lines
from checkprofile.human import (
    Completed,
    DecisionRequiredError,
    Escalation,
    Handoff,
    ReturnNote,
    StateError,
    StepState,
    after_check,
    after_decision,
    after_rework,
    decision_from_json,
    escalate_error,
    records_for,
    replayable,
)

AT = "2026-10-06T09:04:20Z"
SUBMITTED_AT = "2026-10-06T09:04:12Z"
DECIDED_AT = "2026-10-06T10:15:00Z"
AGENT = "agent:screener"
PERSON = "ana@example.com"
LEVEL_LINE = "check: How complete is the screening? → level 1: One list is covered. (0.9)"


def fresh() -> StepState:
    return StepState(run_id=RUN, step_id=STEP)


def assert_core_2(state: StepState) -> None:
    """Every piece of ``state`` (as JSON, after a round trip) is in core-2's shape, and the
    state reads back equal."""
    data = json.loads(json.dumps(state.to_json()))
    if data["record"] is not None:
        assert_shape("run-data", {"inputs": {}, "steps": {STEP: data["record"]}})
    if data["handoff"] is not None:
        assert_shape("handoff", data["handoff"])
    if data["escalation"] is not None:
        assert_shape("escalation", data["escalation"])
    assert StepState.from_json(data, check=CHECK) == state


def checked(state: StepState, outcome: Outcome, **options: Any) -> StepState:
    """``after_check``, with the input's JSON unchanged by it and the result core-2."""
    before = copy.deepcopy(state.to_json())
    after = after_check(state, outcome, **options)
    assert state.to_json() == before
    assert_core_2(after)
    return after


def decided(state: StepState, decision: dict[str, Any]) -> StepState:
    before = copy.deepcopy(state.to_json())
    given = copy.deepcopy(decision)
    after = after_decision(state, decision, at=DECIDED_AT)
    assert state.to_json() == before and decision == given
    assert_core_2(after)
    return after


def passed() -> StepState:
    return checked(fresh(), outcome_of("pass"), submitted_by=AGENT, submitted_at=SUBMITTED_AT)


def waiting(state: StepState | None = None) -> StepState:
    return checked(
        state or fresh(), outcome_of("unsure"), submitted_by=AGENT, submitted_at=SUBMITTED_AT
    )


RETURNED = {"kind": "returned", "note": "Name both lists.", "by": PERSON}
COMPLETED = {"kind": "completed", "by": PERSON}
FAILED = {"kind": "failed", "note": "The report is for another vendor.", "by": PERSON}


# --- after a check ----------------------------------------------------------------------------


def test_a_pass_completes_the_step_with_its_check_and_who_submitted_when() -> None:
    # "pass: The step completes as usual." "Pass ... verdicts are recorded in run data as
    # steps.<id>.check."
    state = passed()
    assert state.record == {
        "output": {"cleared": True},
        "evidence": [],
        "summary": "done",
        "check": outcome_of("pass").verdict.to_json(),
        "by": AGENT,
        "at": SUBMITTED_AT,
        "history": [],
    }
    assert state.handoff is None and state.escalation is None


def test_a_pass_keeps_the_route_and_defaults_its_time_to_the_verdicts() -> None:
    outcome = make_outcome(SCRIPTS["pass"], submission=ROUTED)
    state = checked(fresh(), outcome)
    assert state.record is not None
    assert (state.record["next"], state.record["reason"]) == (ROUTED["next"], ROUTED["reason"])
    assert state.record["at"] == AT and "by" not in state.record


def test_a_pass_clears_the_handoff_of_the_attempt() -> None:
    refused = checked(fresh(), outcome_of("fail"))
    assert refused.handoff is not None
    assert checked(refused, outcome_of("pass")).handoff is None


@pytest.mark.parametrize("verdict", ["pass", "fail", "unsure", "error"])
def test_every_advisory_verdict_is_recorded_and_completes_the_step(verdict: str) -> None:
    # "With advisory: true, every verdict is recorded and none blocks."
    outcome = outcome_of(verdict, advisory=True)
    state = checked(fresh(), outcome)
    assert state.record is not None
    assert state.record["check"] == outcome.verdict.to_json()
    assert state.record["check"]["advisory"] is True
    assert state.escalation is None and state.handoff is None


def test_a_blocking_fail_goes_to_the_handoff_and_run_data_does_not_change() -> None:
    # "Run data does not change; the verdict and the issues go to handoff so the next
    # attempt sees them." "a blocking fail is recorded in handoff.check instead"
    earlier = passed()
    outcome = outcome_of("fail")
    state = checked(earlier, outcome)
    assert state.record == earlier.record
    assert state.handoff == Handoff(issues=outcome.issues, check=outcome.verdict)
    assert state.handoff.issues == (LEVEL_LINE,)
    assert state.escalation is None


def test_a_fail_carries_the_agents_progress_and_a_persons_earlier_note() -> None:
    returned = decided(waiting(), RETURNED)
    with_progress = StepState(
        run_id=RUN,
        step_id=STEP,
        handoff=Handoff(progress="two of three lists", returned=returned.handoff.returned),  # type: ignore[union-attr]
    )
    state = checked(with_progress, outcome_of("fail"))
    assert state.handoff is not None
    assert state.handoff.progress == "two of three lists"
    assert state.handoff.returned == ReturnNote(note="Name both lists.", by=PERSON, at=DECIDED_AT)
    assert state.handoff.check == outcome_of("fail").verdict


def test_an_unsure_verdict_holds_the_candidate_and_shows_the_check_while_it_waits() -> None:
    # "the submission is held as the step's candidate and the step is escalated ... the
    # questions and answers in the work item's escalation.check and the candidate in
    # escalation.candidate." "While an unsure verdict waits on a person, run data shows it
    # as steps.<id>.check"
    outcome = outcome_of("unsure")
    state = waiting()
    expected = records_for(
        outcome, run_id=RUN, step_id=STEP, submitted_by=AGENT, submitted_at=SUBMITTED_AT
    )
    assert state.escalation == expected.escalation
    assert state.record == {"check": outcome.verdict.to_json(), "history": []}
    assert state.previous is None and state.waiting


def test_the_waiting_check_shows_even_if_the_step_completed_before() -> None:
    earlier = passed()
    state = waiting(earlier)
    assert state.record is not None and earlier.record is not None
    assert state.record["check"] == outcome_of("unsure").verdict.to_json()
    assert {k: v for k, v in state.record.items() if k != "check"} == {
        k: v for k, v in earlier.record.items() if k != "check"
    }
    assert state.previous == earlier.record


def test_an_unsure_verdict_leaves_the_handoff_of_the_attempt_as_it_was() -> None:
    refused = checked(fresh(), outcome_of("fail"))
    assert waiting(refused).handoff == refused.handoff


def test_a_blocking_error_changes_nothing() -> None:
    # "error: The evaluator did not answer. ... then the agent gets retry"
    refused = checked(passed(), outcome_of("fail"))
    assert after_check(refused, outcome_of("error")) == refused


def test_a_held_step_takes_no_submission() -> None:
    state = waiting()
    before = state.to_json()
    with pytest.raises(StateError, match="waits on a person's decision"):
        after_check(state, outcome_of("pass"))
    assert state.to_json() == before


# --- after a decision -------------------------------------------------------------------------


def test_returned_restores_the_steps_earlier_check_entry_and_drops_the_candidate() -> None:
    # "then returned ... restores what must be": the verdict no longer waits on a person.
    earlier = passed()
    state = decided(waiting(earlier), RETURNED)
    assert state.record == earlier.record
    assert state.escalation is None and state.previous is None


def test_returned_on_a_step_without_a_record_leaves_it_without_one() -> None:
    state = decided(waiting(), RETURNED)
    assert state.record is None


def test_returned_hands_the_note_the_verdict_and_its_lines_to_the_same_attempt() -> None:
    # "When the same attempt continues, after a fail or a returned, the previous check
    # travels in handoff.check and the agent's handoff.issues carries the same lines."
    unsure = outcome_of("unsure")
    refused = checked(fresh(), outcome_of("fail"))
    with_progress = StepState(
        run_id=RUN,
        step_id=STEP,
        handoff=Handoff(progress="p", issues=refused.handoff.issues),  # type: ignore[union-attr]
    )
    state = decided(waiting(with_progress), RETURNED)
    assert state.handoff == Handoff(
        progress="p",
        returned=ReturnNote(note="Name both lists.", by=PERSON, at=DECIDED_AT),
        issues=issue_lines(unsure.verdict),
        check=unsure.verdict,
    )
    assert LEVEL_LINE in state.handoff.issues  # type: ignore[operator]


def test_completed_with_the_candidate_records_who_submitted_it_and_when() -> None:
    # "completed with the candidate ... A person completing an escalated step is not checked
    # again."
    earlier = passed()
    state = decided(waiting(earlier), {**COMPLETED, "note": "Fine."})
    assert earlier.record is not None
    history_entry = {k: v for k, v in earlier.record.items() if k != "history"}
    assert state.record == {
        "output": {"cleared": True},
        "evidence": [],
        "summary": "done",
        "note": "Fine.",
        "check": outcome_of("unsure").verdict.to_json(),
        "by": AGENT,
        "at": SUBMITTED_AT,
        "history": [history_entry],
    }
    assert state.handoff is None and state.escalation is None


def test_completed_with_the_persons_own_output_records_them() -> None:
    own = {
        **COMPLETED,
        "output": {"cleared": False},
        "summary": "Listed on the EU list.",
        "evidence": [{"kind": "link", "ref": "https://example.com/eu"}],
    }
    state = decided(waiting(), own)
    assert state.record is not None
    assert state.record["output"] == {"cleared": False}
    assert state.record["evidence"] == [{"kind": "link", "ref": "https://example.com/eu"}]
    assert (state.record["by"], state.record["at"]) == (PERSON, DECIDED_AT)
    assert state.record["check"] == outcome_of("unsure").verdict.to_json()


def test_completed_keeps_the_route_the_agent_chose() -> None:
    outcome = make_outcome(SCRIPTS["unsure"], submission=ROUTED)
    state = decided(checked(fresh(), outcome), COMPLETED)
    assert state.record is not None and state.record["next"] == ROUTED["next"]


def test_failed_ends_the_step_with_the_note_and_keeps_the_verdict() -> None:
    earlier = passed()
    state = decided(waiting(earlier), FAILED)
    assert earlier.record is not None
    assert state.record == {
        "decision": "failed",
        "note": FAILED["note"],
        "check": outcome_of("unsure").verdict.to_json(),
        "by": PERSON,
        "at": DECIDED_AT,
        "history": [{k: v for k, v in earlier.record.items() if k != "history"}],
    }
    assert state.handoff is None and state.escalation is None


def test_unsure_returned_unsure_completed_in_a_row() -> None:
    state = decided(waiting(), RETURNED)
    state = waiting(state)
    assert state.handoff is not None and state.handoff.returned is not None
    state = decided(state, COMPLETED)
    assert state.record is not None and state.record["history"] == []
    assert state.handoff is None


def test_no_decision_waits_on_a_step_that_is_not_escalated() -> None:
    with pytest.raises(StateError, match="no decision waits"):
        after_decision(passed(), {**RETURNED, "at": DECIDED_AT})


@pytest.mark.parametrize(
    "decision", ["returned", None, {"kind": "approved"}, {"kind": "returned", "by": PERSON}]
)
def test_anything_but_a_decision_is_refused_and_nothing_changes(decision: Any) -> None:
    state = waiting()
    before = state.to_json()
    with pytest.raises(DecisionRequiredError):
        after_decision(state, decision, at=DECIDED_AT)
    assert state.to_json() == before


def test_a_decision_without_its_time_takes_the_hosts() -> None:
    decision = decision_from_json(COMPLETED, at=DECIDED_AT)
    assert decision == Completed(by=PERSON, at=DECIDED_AT)
    own = decision_from_json({**COMPLETED, "at": "2026-10-06T11:00:00Z"}, at=DECIDED_AT)
    assert own.at == "2026-10-06T11:00:00Z"
    with pytest.raises(DecisionRequiredError, match="needs at"):
        decision_from_json(COMPLETED)
    with pytest.raises(DecisionRequiredError, match="RFC 3339"):
        decision_from_json(COMPLETED, at="yesterday")


# --- rework -----------------------------------------------------------------------------------


def test_rework_starts_an_empty_handoff_with_the_earlier_verdict_in_history() -> None:
    # "Rework through on_reject is a fresh attempt: the handoff starts empty and the earlier
    # verdict is in the step's history."
    completed = decided(waiting(), RETURNED)
    completed = decided(waiting(completed), COMPLETED)
    before = completed.to_json()
    state = after_rework(completed)
    assert completed.to_json() == before
    assert_core_2(state)
    assert state.handoff is None
    assert completed.record is not None
    entry = {k: v for k, v in completed.record.items() if k != "history"}
    assert state.record == {"history": [entry]}
    assert state.record["history"][0]["check"]["verdict"] == "unsure"
    again = checked(state, outcome_of("pass"))
    assert again.record is not None and again.record["history"] == [entry]


def test_rework_of_a_held_step_is_refused() -> None:
    with pytest.raises(StateError, match="decide it before"):
        after_rework(waiting())


# --- errors, repeated ------------------------------------------------------------------------


def test_an_escalated_error_holds_the_candidate_for_a_person() -> None:
    # "A server MAY instead escalate after repeated errors."
    outcome = escalate_error(outcome_of("error"))
    assert outcome.action == "escalate" and outcome.verdict.verdict == "error"
    state = checked(fresh(), outcome)
    assert state.escalation is not None and state.escalation.check.verdict == "error"
    assert "no answer" in state.escalation.note
    assert escalate_error(outcome_of("pass")) == outcome_of("pass")
    advisory = outcome_of("error", advisory=True)
    assert escalate_error(advisory) is advisory


def test_only_a_retry_is_not_replayable_for_its_request_id() -> None:
    assert [replayable(outcome_of(v)) for v in ("pass", "fail", "unsure", "error")] == [
        True,
        True,
        True,
        False,
    ]
    with pytest.raises(TypeError):
        replayable("retry")  # type: ignore[arg-type]


# --- reading a state --------------------------------------------------------------------------


def test_a_state_given_as_json_is_read_first() -> None:
    data = json.loads(json.dumps(passed().to_json()))
    given = copy.deepcopy(data)
    state = after_check(data, outcome_of("fail"))
    assert data == given
    assert state.record == passed().record


def test_a_waiting_state_needs_its_check_to_be_read() -> None:
    data = waiting().to_json()
    with pytest.raises(StateError, match="check="):
        StepState.from_json(data)
    with pytest.raises(StateError, match="check="):
        after_decision(data, {**RETURNED, "at": DECIDED_AT})
    state = after_decision(data, {**RETURNED, "at": DECIDED_AT}, check=CHECK)
    assert LEVEL_LINE in state.handoff.issues  # type: ignore[union-attr, operator]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(state=2), '"state" must be 1'),
        (lambda d: d.pop("handoff"), "needs handoff"),
        (lambda d: d.update(extra=None), 'no key "extra"'),
        (lambda d: d.update(run=""), "run must be a non-blank string"),
        (lambda d: d.update(step=5), "step must be a non-blank string"),
        (lambda d: d.update(record={"output": {}}), "/record"),
        (lambda d: d.update(record={"chek": {}, "history": []}), 'did you mean "check"'),
        (lambda d: d.update(record=[]), "/record"),
        (lambda d: d["record"].update(check={"verdict": "pass"}), "/record/check"),
        (lambda d: d.update(handoff={"issues": "one"}), "/handoff"),
        (lambda d: d.update(handoff={"returned": {"note": "x"}}), "/handoff"),
        (lambda d: d.update(previous=None), "previous only while"),
    ],
)
def test_a_state_that_is_not_one_is_refused_by_where(change: Any, message: str) -> None:
    data = json.loads(json.dumps(passed().to_json()))
    change(data)
    kept = copy.deepcopy(data)
    with pytest.raises(StateError, match=message):
        StepState.from_json(data, check=CHECK)
    with pytest.raises(StateError, match=message):
        after_check(data, outcome_of("pass"))
    assert data == kept


def test_a_waiting_state_that_is_not_one_is_refused() -> None:
    data = json.loads(json.dumps(waiting().to_json()))
    data.pop("previous")
    with pytest.raises(StateError, match="needs previous"):
        StepState.from_json(data, check=CHECK)
    data = json.loads(json.dumps(waiting().to_json()))
    data["escalation"]["check"]["questions"][2]["answer"] = 9
    with pytest.raises(StateError, match="/escalation"):
        StepState.from_json(data, check=CHECK)


@pytest.mark.parametrize(
    "change",
    [
        # the record shows another verdict than the one waiting
        lambda d: d["record"].update(check=outcome_of("pass").verdict.to_json()),
        # the record is not the previous one (which returned would put back)
        lambda d: d["record"].update(summary="Screened again."),
        lambda d: d.update(previous={"output": {"cleared": False}, "history": []}),
        # a record of history alone where the escalation's verdict should show
        lambda d: d.update(record={"history": []}),
        lambda d: d.update(record=None),
    ],
)
def test_a_waiting_record_is_previous_showing_the_escalations_verdict(change: Any) -> None:
    # "While an unsure verdict waits on a person, run data shows it as steps.<id>.check": a
    # state whose record is anything else would be put back wrong by returned.
    data = json.loads(json.dumps(waiting(passed()).to_json()))
    StepState.from_json(data, check=CHECK)  # as written, it is one
    change(data)
    with pytest.raises(StateError, match="previous record with the escalation's verdict"):
        StepState.from_json(data, check=CHECK)
    state = waiting(passed())
    with pytest.raises(StateError, match="previous record with the escalation's verdict"):
        StepState(
            run_id=RUN,
            step_id=STEP,
            record=data["record"],
            escalation=state.escalation,
            previous=data["previous"],
        )


@pytest.mark.parametrize("data", [None, "state", 3, [1], {1: 1}, {"state": float("inf")}])
def test_anything_else_is_a_state_error(data: object) -> None:
    with pytest.raises(StateError):
        StepState.from_json(data)


def test_a_huge_record_is_refused_in_bounded_words() -> None:
    data = passed().to_json()
    data["record"]["summary"] = 5  # and a big value beside it
    data["record"]["output"] = {"x": "y" * 10_000_000}
    with pytest.raises(StateError) as caught:
        StepState.from_json(data)
    assert len(str(caught.value)) < 1000


def test_a_state_is_built_checked() -> None:
    with pytest.raises(TypeError, match="run_id"):
        StepState(run_id=" ", step_id=STEP)
    with pytest.raises(StateError, match="at /record: expected a step record"):
        StepState(run_id=RUN, step_id=STEP, record=[])
    with pytest.raises(StateError, match="at /record/history"):
        StepState(run_id=RUN, step_id=STEP, record={"history": 5})
    with pytest.raises(StateError, match="at /record/output"):
        StepState(run_id=RUN, step_id=STEP, record={"output": {"x": {1, 2}}, "history": []})
    with pytest.raises(TypeError, match="handoff"):
        StepState(run_id=RUN, step_id=STEP, handoff={})  # type: ignore[arg-type]
    escalation = waiting().escalation
    with pytest.raises(StateError, match="not step"):
        StepState(run_id=RUN, step_id="other", escalation=escalation)
    with pytest.raises(StateError, match="previous"):
        StepState(run_id=RUN, step_id=STEP, previous={"history": []})
    assert escalation is not None
    unknowing = Escalation.from_json(escalation.to_json(), run_id=RUN, step_id=STEP)
    with pytest.raises(StateError, match="does not know its check"):
        StepState(run_id=RUN, step_id=STEP, escalation=unknowing)
    with pytest.raises(TypeError):
        after_check(fresh(), "pass")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        after_check(7, outcome_of("pass"))  # type: ignore[arg-type]


def test_what_to_json_gave_can_be_changed_without_changing_the_state() -> None:
    state = passed()
    data = state.to_json()
    data["record"]["output"]["cleared"] = False
    data["record"]["history"].append({})
    assert state.record is not None and state.record["output"] == {"cleared": True}
    assert state.check is not None and state.check["verdict"] == "pass"
    read = state.record
    assert read is not None
    read["output"]["cleared"] = False
    given: dict[str, Any] = {"output": {"cleared": True}, "history": []}
    built = StepState(run_id=RUN, step_id=STEP, record=given)
    given["output"]["cleared"] = False
    assert state.record["output"] == built.record["output"] == {"cleared": True}  # type: ignore[index]
