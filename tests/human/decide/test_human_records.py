"""checkprofile.human.records_for: every record the profile asks for, built from an Outcome.

Each record's shape is checked against the profile's own words (quoted above each test, from
``check-1`` section 3). The helpers at the top make real outcomes with ``run_check_sync`` and
a scripted evaluator; the other ``test_human_*`` modules use them too.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from core2 import assert_shape, errors

from checkprofile import (
    Answer,
    ChoiceAnswer,
    Failure,
    Limits,
    Outcome,
    RubricAnswer,
    Submission,
    Verdict,
    YesNoAnswer,
    issue_lines,
    outcome_for,
    parse_check,
    run_check_sync,
)
from checkprofile.errors import VerdictError
from checkprofile.human import Escalation, Handoff, Records, ReturnNote, records_for
from checkprofile.testing import ScriptedEvaluator
from support import (
    AT,
    SPEC_ASK,
    SPEC_CHOICE_ASK,
    SPEC_RUBRIC_ASK,
    material,
    spec_full_form,
    verdict_validator,
)

# --- shared helpers --------------------------------------------------------------------------

CHECK = parse_check(spec_full_form())
MODEL = "example-evaluator-1"
RUN = "run-7"
STEP = "check_vendor"

#: Scripts for each verdict of the profile's example check (section 2).
PASSING: dict[str, Answer | Failure] = {
    SPEC_ASK: YesNoAnswer(0.97),
    SPEC_CHOICE_ASK: ChoiceAnswer("states", 0.91),
    SPEC_RUBRIC_ASK: RubricAnswer(2, 0.88),
}
FAILING: dict[str, Answer | Failure] = {**PASSING, SPEC_RUBRIC_ASK: RubricAnswer(1, 0.9)}
UNSURE: dict[str, Answer | Failure] = {**FAILING, SPEC_ASK: YesNoAnswer(0.62)}
ERROR: dict[str, Answer | Failure] = {**PASSING, SPEC_ASK: Failure("timeout", "no reply in 30s")}
SCRIPTS = {"pass": PASSING, "fail": FAILING, "unsure": UNSURE, "error": ERROR}


#: A submission on a step whose next is a list of routes, as an agent submits it.
ROUTED: dict[str, Any] = {
    "output": {"cleared": True},
    "summary": "Cleared on both lists.",
    "evidence": [{"kind": "file", "ref": "screening.pdf"}],
    "next": "sign_off",
    "reason": "Both lists are clear, so a second review is not needed.",
}


def make_outcome(
    script: dict[str, Answer | Failure],
    *,
    advisory: bool = False,
    run_data: dict[str, Any] | None = None,
    output: Any = None,
    state_bytes: int = 65536,
    submission: dict[str, Any] | None = None,
    show_route: bool = False,
) -> Outcome:
    """A real outcome of the profile's example check, answered by ``script``; ``submission``
    (JSON, read as a host reads an agent's submit) replaces the default one."""
    evaluator = ScriptedEvaluator(script, model=MODEL)
    shown = material(run_data, output=output)
    if submission is not None:
        shown = attrs.evolve(shown, submission=Submission.from_json(submission))
    return run_check_sync(
        CHECK,
        attrs.evolve(shown, show_route=show_route),
        evaluator,
        limits=Limits(check_state_bytes=state_bytes),
        advisory=advisory,
        now=AT,
        max_retry_wait=0,
    )


def outcome_of(verdict: str, *, advisory: bool = False) -> Outcome:
    outcome = make_outcome(SCRIPTS[verdict], advisory=advisory)
    assert outcome.verdict.verdict == verdict
    return outcome


def round_trip(data: Any) -> Any:
    return json.loads(json.dumps(data))


def assert_a_verdict_record(data: object) -> None:
    errors = list(verdict_validator().iter_errors(data))
    assert not errors, [error.message for error in errors]


def assert_records_are_core_2(records: Records) -> None:
    """Every record in ``records`` (as JSON, after a round trip) is in core-2's shape."""
    data = round_trip(records.to_json())
    assert set(data) <= {"handoff", "escalation", "steps"}
    if "handoff" in data:
        assert_shape("handoff", data["handoff"])
    if "escalation" in data:
        assert_shape("escalation", data["escalation"])
        assert_shape("candidate", data["escalation"]["candidate"])
    for record in data.get("steps", {}).values():
        assert list(record) == ["check"]
        assert_a_verdict_record(record["check"])
        # The entry a host merges into its step record: a step record's check.
        assert_shape("step-record", {**record, "history": []})


def test_the_public_names_are_sorted_and_all_there() -> None:
    import checkprofile.human as human

    assert human.__all__ == sorted(human.__all__)
    for name in human.__all__:
        assert getattr(human, name) is not None, name
    assert {"records_for", "receipt_for", "apply_decision", "JsonLinesRecorder"} <= set(
        human.__all__
    )


# --- pass --------------------------------------------------------------------------------------

# "Pass, unsure and advisory verdicts are recorded in run data as `steps.<id>.check`"
# "| pass | The step completes as usual. |"


def test_a_pass_is_recorded_as_the_steps_check_entry_only() -> None:
    outcome = outcome_of("pass")
    records = records_for(outcome, run_id=RUN, step_id=STEP)
    assert records == Records(step_id=STEP, action="complete", check=outcome.verdict)
    assert records.to_json() == {"steps": {STEP: {"check": outcome.verdict.to_json()}}}
    assert_a_verdict_record(records.to_json()["steps"][STEP]["check"])
    assert_records_are_core_2(records)


# --- a blocking fail ---------------------------------------------------------------------------

# "| fail | `not_accepted`. `issues` lists each failed question as `check: <ask> → <answer>`.
#  ... Run data does not change; the verdict and the issues go to `handoff` so the next attempt
#  sees them. |"
# "a blocking fail is recorded in `handoff.check` instead, since the step did not complete"


def test_a_blocking_fail_is_the_handoff_with_the_verdict_and_the_lines_and_no_run_data() -> None:
    outcome = outcome_of("fail")
    records = records_for(outcome, run_id=RUN, step_id=STEP)
    assert records.action == "not_accepted"
    assert records.check is None and records.escalation is None
    assert records.handoff == Handoff(check=outcome.verdict, issues=outcome.issues)
    data = records.to_json()
    assert data == {"handoff": {"issues": list(outcome.issues), "check": outcome.verdict.to_json()}}
    assert data["handoff"]["issues"] == [
        "check: How complete is the screening? → level 1: One list is covered. (0.9)"
    ]
    assert_a_verdict_record(data["handoff"]["check"])
    assert_records_are_core_2(records)


# --- unsure ------------------------------------------------------------------------------------

# "| unsure | The call returns `ok` with the run view: the submission is held as the step's
#  candidate and the step is escalated exactly as `escalate` does, with the questions and
#  answers in the work item's `escalation.check` and the candidate in `escalation.candidate`. |"
# "While an unsure verdict waits on a person, run data shows it as `steps.<id>.check` even if
#  the step completed before."


def test_unsure_is_the_escalation_and_the_steps_check_entry() -> None:
    outcome = make_outcome(UNSURE, output={"cleared": True, "lists": ["OFAC"]})
    records = records_for(outcome, run_id=RUN, step_id=STEP)
    assert records.action == "escalate" and records.handoff is None
    assert records.check == outcome.verdict
    data = records.to_json()
    assert set(data) == {"escalation", "steps"}
    escalation = data["escalation"]
    assert list(escalation) == ["note", "by", "at", "check", "candidate"]
    assert escalation["check"] == outcome.verdict.to_json()
    # The candidate is a step record without history; it was submitted when it was checked.
    assert escalation["candidate"] == {
        "output": {"cleared": True, "lists": ["OFAC"]},
        "summary": "done",
        "evidence": [],
        "at": AT,
    }
    assert escalation["at"] == outcome.verdict.at == AT
    assert data["steps"] == {STEP: {"check": outcome.verdict.to_json()}}
    assert_a_verdict_record(escalation["check"])
    assert_records_are_core_2(records)


def test_the_escalation_notes_why_a_person_is_asked_and_who_asked() -> None:
    # Left open by the profile: by default the check escalates, and the note is the issue lines.
    outcome = outcome_of("unsure")
    escalation = records_for(outcome, run_id=RUN, step_id=STEP).escalation
    assert escalation is not None
    assert escalation.by == "check"
    assert escalation.note.split("\n") == list(issue_lines(outcome.verdict))
    assert escalation.note == (
        "check: The cleared verdict matches what the attached report says. → no (0.62)\n"
        "check: How complete is the screening? → level 1: One list is covered. (0.9)"
    )
    chosen = records_for(
        outcome, run_id=RUN, step_id=STEP, by="agent:screener", note="Please look at the lists."
    ).escalation
    assert chosen is not None
    assert (chosen.by, chosen.note) == ("agent:screener", "Please look at the lists.")


def test_the_candidate_is_the_submission_the_evaluator_was_shown() -> None:
    outcome = outcome_of("unsure")
    escalation = records_for(outcome, run_id=RUN, step_id=STEP).escalation
    assert outcome.bundle is not None and escalation is not None
    assert escalation.candidate is outcome.bundle.submission
    assert json.dumps(escalation.candidate.to_json(), sort_keys=True, separators=(",", ":")) == (
        outcome.bundle.submission_json
    )


def test_the_candidate_says_who_submitted_it_and_when_when_the_host_says() -> None:
    outcome = outcome_of("unsure")
    escalation = records_for(
        outcome,
        run_id=RUN,
        step_id=STEP,
        submitted_by="agent:screener",
        submitted_at=datetime(2026, 10, 6, 11, 4, 19, tzinfo=timezone(timedelta(hours=2))),
    ).escalation
    assert escalation is not None
    assert (escalation.submitted_by, escalation.submitted_at) == (
        "agent:screener",
        "2026-10-06T09:04:19Z",
    )
    candidate = escalation.to_json()["candidate"]
    assert (candidate["by"], candidate["at"]) == ("agent:screener", "2026-10-06T09:04:19Z")
    assert_shape("candidate", candidate)
    again = Escalation.from_json(round_trip(escalation.to_json()), run_id=RUN, step_id=STEP)
    assert (again.submitted_by, again.submitted_at) == ("agent:screener", "2026-10-06T09:04:19Z")


def test_a_routed_submission_is_held_with_its_route() -> None:
    outcome = make_outcome(UNSURE, submission=ROUTED)
    records = records_for(outcome, run_id=RUN, step_id=STEP, submitted_by="agent:screener")
    escalation = records.escalation
    assert escalation is not None
    assert (escalation.candidate.next, escalation.candidate.reason) == (
        "sign_off",
        "Both lists are clear, so a second review is not needed.",
    )
    candidate = records.to_json()["escalation"]["candidate"]
    assert candidate == {
        "output": {"cleared": True},
        "summary": "Cleared on both lists.",
        "evidence": [{"kind": "file", "ref": "screening.pdf"}],
        "next": "sign_off",
        "reason": "Both lists are clear, so a second review is not needed.",
        "by": "agent:screener",
        "at": AT,
    }
    assert_records_are_core_2(records)
    # The evaluator was not shown the route (the host did not opt in) ...
    assert outcome.bundle is not None
    assert "next" not in json.loads(outcome.bundle.submission_json)
    # ... and the escalation reads back with it.
    again = Escalation.from_json(
        round_trip(records.to_json()["escalation"]), run_id=RUN, step_id=STEP
    )
    assert again == escalation
    assert again.candidate.next == "sign_off"


def test_an_escalation_reads_back_from_json() -> None:
    escalation = records_for(outcome_of("unsure"), run_id=RUN, step_id=STEP).escalation
    assert escalation is not None
    data = round_trip(escalation.to_json())
    again = Escalation.from_json(data, run_id=RUN, step_id=STEP, check=CHECK)
    assert again == escalation
    assert again.to_json() == data
    assert issue_lines(again.check) == issue_lines(escalation.check)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(lambda d: d.pop("candidate"), "needs candidate", id="missing-candidate"),
        pytest.param(lambda d: d.update(extra=1), 'no key "extra"', id="unknown-key"),
        pytest.param(lambda d: d.update(by=" "), 'by must be a non-blank string, got " "', id="by"),
        pytest.param(lambda d: d.update(at="today"), 'got "today"', id="at"),
        pytest.param(
            lambda d: d["check"].update(verdict="pass"), "not the worst", id="check-contradicts"
        ),
        pytest.param(lambda d: d.pop("at"), "needs at", id="missing-at"),
        pytest.param(
            lambda d: d["candidate"].update(history=[]),
            'candidate has no key "history"',
            id="candidate-with-history",
        ),
        pytest.param(
            lambda d: d["candidate"].update(decision="approved"),
            "waits for a decision, so it has no decision",
            id="candidate-with-decision",
        ),
        pytest.param(
            lambda d: d["candidate"].update(note="n"),
            "waits for a decision, so it has no note",
            id="candidate-with-note",
        ),
        pytest.param(
            lambda d: d["candidate"].update(by=7),
            "candidate's by must be a string, got 7",
            id="by7",
        ),
        pytest.param(
            lambda d: d["candidate"].update(next=""),
            "/next: expected a step id",
            id="candidate-empty-next",
        ),
        pytest.param(
            lambda d: d["candidate"].update(output=[]),
            "/output: expected a map",
            id="candidate-output-not-a-map",
        ),
        pytest.param(
            lambda d: d["candidate"]["evidence"].append({"kind": "doc", "ref": "a"}),
            "/evidence/0/kind: expected file or link",
            id="candidate-evidence-kind",
        ),
        pytest.param(
            lambda d: d.update(candidate=None), "candidate must be a JSON object", id="cn"
        ),
    ],
)
def test_a_bad_escalation_record_is_refused(change: Any, message: str) -> None:
    escalation = records_for(outcome_of("unsure"), run_id=RUN, step_id=STEP).escalation
    assert escalation is not None
    data = round_trip(escalation.to_json())
    change(data)
    with pytest.raises(VerdictError, match=message):
        Escalation.from_json(data, run_id=RUN, step_id=STEP)


# --- advisory and error ------------------------------------------------------------------------

# "With `advisory: true`, every verdict is recorded and none blocks."
# "With `advisory: true` an error is recorded as `verdict: "error"` and the step completes."


@pytest.mark.parametrize("verdict", ["pass", "fail", "unsure", "error"])
def test_an_advisory_verdict_is_only_the_steps_check_entry(verdict: str) -> None:
    outcome = outcome_of(verdict, advisory=True)
    records = records_for(outcome, run_id=RUN, step_id=STEP)
    assert records.to_json() == {"steps": {STEP: {"check": outcome.verdict.to_json()}}}
    check = records.to_json()["steps"][STEP]["check"]
    assert check["advisory"] is True and check["verdict"] == verdict
    assert records.action == "complete"
    assert_records_are_core_2(records)


# "| error | The evaluator did not answer. The server retries once; then the agent gets `retry`
#  and resubmits with the same `requestId`. |" -- the profile records nothing for it.


def test_a_blocking_error_records_nothing() -> None:
    outcome = outcome_of("error")
    records = records_for(outcome, run_id=RUN, step_id=STEP)
    assert records == Records(step_id=STEP, action="retry")
    assert records.to_json() == {}
    assert_records_are_core_2(records)


# --- what the host must give -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"run_id": ""}, 'run_id must be a non-blank string, got ""', id="run"),
        pytest.param({"step_id": 5}, "step_id must be a non-blank string, got 5", id="step"),
        pytest.param({"by": " "}, 'by must be a non-blank string, got " "', id="by"),
        pytest.param({"note": ""}, 'note must be a non-blank string, got ""', id="note"),
        pytest.param(
            {"submitted_by": ""}, 'submitted_by must be a non-blank string, got ""', id="sub-by"
        ),
        pytest.param(
            {"submitted_at": "yesterday"},
            'submitted_at must be RFC 3339 in UTC ending in Z, got "yesterday"',
            id="sub-at",
        ),
        pytest.param(
            {"submitted_at": 1791000000},
            "submitted_at must be an RFC 3339 time, got 1791000000",
            id="sub-at-number",
        ),
    ],
)
def test_bad_host_arguments_are_refused_naming_the_value(
    kwargs: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {"run_id": RUN, "step_id": STEP, **kwargs}
    with pytest.raises(ValueError, match=message):
        records_for(outcome_of("unsure"), **arguments)


def test_an_outcome_is_required() -> None:
    with pytest.raises(TypeError, match="an Outcome is needed"):
        records_for({"action": "complete"}, run_id=RUN, step_id=STEP)  # type: ignore[arg-type]


def test_an_unsure_outcome_without_its_bundle_has_no_candidate() -> None:
    outcome = outcome_of("unsure")
    bare = outcome_for(outcome.verdict)
    with pytest.raises(ValueError, match="no candidate to hold"):
        records_for(bare, run_id=RUN, step_id=STEP)


def test_a_verdict_that_does_not_know_its_check_takes_it_from_the_bundle() -> None:
    outcome = outcome_of("fail")
    read = Verdict.from_json(outcome.verdict.to_json())  # no check=: rubric levels unknown
    assert read.check is None
    with pytest.raises(ValueError, match="does not know its check"):
        records_for(outcome_for(read), run_id=RUN, step_id=STEP)
    records = records_for(outcome_for(read, bundle=outcome.bundle), run_id=RUN, step_id=STEP)
    assert records.handoff is not None
    assert records.handoff.issues == outcome.issues  # the level text is named


def test_records_for_changes_nothing_it_is_given() -> None:
    outcome = outcome_of("unsure")
    before = (copy.deepcopy(outcome.verdict.to_json()), outcome)
    records_for(outcome, run_id=RUN, step_id=STEP)
    assert (outcome.verdict.to_json(), outcome) == before
    assert outcome.bundle is not None
    assert outcome.bundle.submission == Submission({"cleared": True}, "done")


# --- the handoff, read back --------------------------------------------------------------------

# core-2: "handoff (null, or a closed map with every key optional): progress, returned {note,
# by, at}, issues, check".


def test_a_handoff_reads_back_exactly() -> None:
    outcome = outcome_of("fail")
    handoff = records_for(outcome, run_id=RUN, step_id=STEP).handoff
    assert handoff is not None
    data = round_trip(handoff.to_json())
    again = Handoff.from_json(data, check=CHECK)
    assert again == handoff
    assert again.to_json() == data
    returned = Handoff(
        returned=ReturnNote(note="Attach the EU report.", by="alice@ops", at=AT),
        issues=("check: x → no (0.1)",),
        progress="Drafted; waiting for the EU list.",
    )
    assert_shape("handoff", returned.to_json())
    assert Handoff.from_json(round_trip(returned.to_json())) == returned
    assert Handoff().to_json() == {}
    assert Handoff.from_json({}) == Handoff()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param({"note": "Attach it."}, 'a handoff has no key "note"', id="old-note"),
        pytest.param(None, "a handoff must be a JSON object, got null", id="null"),
        pytest.param({"progress": 3}, "handoff progress must be a string, got 3", id="progress"),
        pytest.param(
            {"returned": {"note": "n", "by": "a"}}, "handoff returned needs at", id="returned-at"
        ),
        pytest.param(
            {"returned": {"note": "n", "by": "a", "at": AT, "kind": "returned"}},
            'handoff returned has no key "kind"',
            id="returned-kind",
        ),
        pytest.param(
            {"returned": {"note": 1, "by": "a", "at": AT}},
            "handoff returned note must be a string, got 1",
            id="returned-note",
        ),
        pytest.param({"issues": "x"}, "issues must be a list of strings", id="issues"),
        pytest.param({"check": {"verdict": "pass"}}, "not a check verdict", id="check"),
    ],
)
def test_a_handoff_not_in_core_2_s_shape_is_refused(data: object, message: str) -> None:
    # Each is refused by core-2's schema too, but null: that is no handoff, the caller's to skip.
    assert errors("handoff", data) or data is None
    with pytest.raises(VerdictError, match=message):
        Handoff.from_json(data)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param({"progress": 3}, "Handoff.progress must be a string, got 3", id="progress"),
        pytest.param({"issues": ["a", 2]}, "Handoff.issues must be strings", id="issues"),
        pytest.param(
            {"returned": {"note": "n", "by": "a", "at": AT}},
            "Handoff.returned must be a ReturnNote, got a map",
            id="returned",
        ),
        pytest.param({"check": "pass"}, 'Handoff.check must be a Verdict, got "pass"', id="check"),
    ],
)
def test_a_handoff_core_2_would_refuse_cannot_be_built(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        Handoff(**fields)
    with pytest.raises(TypeError, match=r"ReturnNote\.note must be a string, got null"):
        ReturnNote(note=None, by="a", at=AT)


def test_the_candidate_record_is_an_attribute_and_the_old_method_warns() -> None:
    outcome = outcome_of("unsure")
    escalation = records_for(outcome, run_id=RUN, step_id=STEP, submitted_by="agent:a").escalation
    assert escalation is not None
    record = escalation.candidate_record
    assert record == escalation.to_json()["candidate"]
    assert (record["by"], record["at"]) == ("agent:a", outcome.verdict.at)
    record["output"]["cleared"] = False  # a copy: the escalation keeps its own
    assert escalation.candidate_record["output"] == {"cleared": True}
    assert_shape("candidate", escalation.candidate_record)
    with pytest.warns(DeprecationWarning, match="candidate_record"):
        assert escalation.candidate_json() == escalation.candidate_record
