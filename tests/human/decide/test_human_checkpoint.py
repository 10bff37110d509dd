"""checkprofile.human.Checkpoint: one JSON value to decide an escalation later, elsewhere.

"To decide later, in another process, the host stored the escalation, the check, the receipt
and the run and step ids ... Forgetting check= changes the agent's issue lines from
``level 1: some (0.9)`` to ``level 1 (0.9)``, silently" (issue 22). A checkpoint is read back
with no other argument, and a decision on it is the same as on the checkpoint that wrote it.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from core2 import assert_shape
from test_human_records import CHECK, RUN, SCRIPTS, STEP, make_outcome

from checkprofile.human import (
    Checkpoint,
    CheckpointError,
    Receipt,
    StateError,
    StepState,
    after_check,
    after_decision,
    checkpoint_for,
    escalate_error,
)

ROOT = Path(__file__).resolve().parents[3]
LEVEL_LINE = "check: How complete is the screening? → level 1: One list is covered. (0.9)"
RETURNED = {"kind": "returned", "note": "Name both lists.", "by": "ana@example.com"}
DECIDED_AT = "2026-10-06T10:15:00Z"


def fresh() -> StepState:
    return StepState(run_id=RUN, step_id=STEP)


def made() -> Checkpoint:
    return checkpoint_for(
        make_outcome(SCRIPTS["unsure"]),
        state=fresh(),
        submitted_by="agent:screener",
        submitted_at="2026-10-06T09:04:12Z",
    )


def stored(checkpoint: Checkpoint) -> Any:
    return json.loads(json.dumps(checkpoint.to_json()))


def test_a_checkpoint_reads_back_equal_with_no_other_argument() -> None:
    checkpoint = made()
    again = Checkpoint.from_json(stored(checkpoint))
    assert again == checkpoint
    assert again.to_json() == checkpoint.to_json()
    assert (again.run_id, again.step_id) == (RUN, STEP)
    assert again.escalation == checkpoint.escalation
    assert type(again.receipt) is Receipt and again.receipt == checkpoint.receipt
    assert again.check == CHECK
    assert again.candidate.output == {"cleared": True}


def test_its_state_is_what_after_check_gives() -> None:
    outcome = make_outcome(SCRIPTS["unsure"])
    checkpoint = checkpoint_for(outcome, state=fresh(), submitted_by="agent:screener")
    assert checkpoint.state == after_check(fresh(), outcome, submitted_by="agent:screener")
    assert checkpoint.state.waiting


def test_the_issue_lines_survive_the_round_trip() -> None:
    # The trap: an escalation read without its check names no rubric level.
    again = Checkpoint.from_json(stored(made()))
    state = again.decide(RETURNED, at=DECIDED_AT)
    assert state.handoff is not None and state.handoff.issues is not None
    assert LEVEL_LINE in state.handoff.issues
    assert state.to_json() == made().decide(RETURNED, at=DECIDED_AT).to_json()


def test_a_decision_in_another_process_is_the_same_as_here(tmp_path: Path) -> None:
    checkpoint = made()
    (tmp_path / "checkpoint.json").write_text(json.dumps(checkpoint.to_json()), "utf-8")
    script = (
        "import json, sys\n"
        "from checkprofile.human import Checkpoint\n"
        "data = json.load(open(sys.argv[1], encoding='utf-8'))\n"
        "checkpoint = Checkpoint.from_json(data)\n"
        "decision = json.loads(sys.argv[2])\n"
        "state = checkpoint.decide(decision, at=sys.argv[3])\n"
        "print(json.dumps({'reference': checkpoint.reference, 'state': state.to_json()}))\n"
    )
    path = str(tmp_path / "checkpoint.json")
    done = subprocess.run(
        [sys.executable, "-c", script, path, json.dumps(RETURNED), DECIDED_AT],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    there = json.loads(done.stdout)
    assert there["reference"] == checkpoint.reference
    assert there["state"] == checkpoint.decide(RETURNED, at=DECIDED_AT).to_json()
    assert LEVEL_LINE in there["state"]["handoff"]["issues"]


def test_the_reference_is_stable_opaque_and_follows_the_content() -> None:
    one, two = made(), made()
    assert one.reference == two.reference
    assert len(one.reference) == 32 and set(one.reference) <= set("0123456789abcdef")
    other = checkpoint_for(
        make_outcome(SCRIPTS["unsure"]), state=fresh(), submitted_by="agent:other"
    )
    assert other.reference != one.reference
    assert "agent" not in one.reference


def test_the_pieces_inside_are_core_2() -> None:
    data = stored(made())
    assert_shape("escalation", data["state"]["escalation"])
    assert_shape("step-record", data["state"]["record"])
    assert data["state"]["previous"] is None


def test_an_escalated_error_makes_a_checkpoint() -> None:
    outcome = make_outcome(SCRIPTS["error"])
    with pytest.raises(ValueError, match="nothing waits on a person"):
        checkpoint_for(outcome, state=fresh())
    checkpoint = checkpoint_for(escalate_error(outcome), state=fresh())
    assert checkpoint.verdict.verdict == "error"
    assert Checkpoint.from_json(stored(checkpoint)) == checkpoint
    done = checkpoint.decide({"kind": "completed", "by": "ana@example.com", "at": DECIDED_AT})
    assert done.record is not None and done.record["check"]["verdict"] == "error"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("receipt"), "needs receipt"),
        (lambda d: d.update(extra=1), 'no key "extra"'),
        (lambda d: d.update(checkpoint=2), '"checkpoint" must be 1'),
        (lambda d: d.update(checkpoint=True), '"checkpoint" must be 1'),
        (lambda d: d["receipt"].update(receipt=9), "receipt"),
        (lambda d: d["state"].update(escalation=None), "previous only while"),
        (lambda d: d["state"]["escalation"].update(note=""), "escalation note"),
        (lambda d: d["state"].update(run="run-8"), "run"),
        (lambda d: d["state"]["escalation"]["candidate"].update(summary="changed"), "candidate"),
        (lambda d: d["state"]["escalation"]["check"]["questions"][0].update(answer=0.7), "verdict"),
        (lambda d: d["state"]["record"].pop("history"), "/record"),
        (lambda d: d["state"]["escalation"]["check"]["questions"][2].update(answer=7), "answer"),
    ],
)
def test_a_checkpoint_that_is_not_one_is_refused_by_name(change: Any, message: str) -> None:
    data = stored(made())
    change(data)
    kept = copy.deepcopy(data)
    with pytest.raises(CheckpointError, match=message) as caught:
        Checkpoint.from_json(data)
    assert isinstance(caught.value, StateError) and isinstance(caught.value, ValueError)
    assert data == kept


@pytest.mark.parametrize(
    "data", [None, [], "checkpoint", 7, {"checkpoint": float("nan")}, {1: 2}, {"a": {1}}]
)
def test_anything_else_is_a_checkpoint_error(data: object) -> None:
    with pytest.raises(CheckpointError):
        Checkpoint.from_json(data)


def test_a_deep_hostile_value_is_refused_without_a_traceback() -> None:
    deep: Any = {}
    for _ in range(100_000):
        deep = {"a": deep}
    with pytest.raises(CheckpointError):
        Checkpoint.from_json({"checkpoint": 1, "state": deep, "receipt": {}})


def test_a_decided_checkpoint_leaves_the_checkpoint_as_it_was() -> None:
    checkpoint = made()
    before = checkpoint.to_json()
    after_decision(checkpoint.state, {**RETURNED, "at": DECIDED_AT})
    checkpoint.decide({"kind": "failed", "note": "No.", "by": "ana", "at": DECIDED_AT})
    assert checkpoint.to_json() == before


def test_a_checkpoint_holds_a_waiting_state_only() -> None:
    checkpoint = made()
    with pytest.raises(CheckpointError, match="wait on a decision"):
        Checkpoint(state=fresh(), receipt=checkpoint.receipt)
    with pytest.raises(TypeError):
        Checkpoint(state=checkpoint.to_json(), receipt=checkpoint.receipt)  # type: ignore[arg-type]


def test_a_checkpoints_resolution_joins_the_verdict_in_the_audit_trail() -> None:
    from checkprofile.human import resolution_record, verdict_record

    outcome = make_outcome(SCRIPTS["unsure"])
    checkpoint = Checkpoint.from_json(stored(checkpoint_for(outcome, state=fresh())))
    resolution = checkpoint.resolve({"kind": "completed", "by": "ana"}, at=DECIDED_AT)
    assert resolution.output == checkpoint.candidate
    record = resolution_record(resolution)
    assert record.key == verdict_record(outcome, run_id=RUN, step_id=STEP).key
    assert record.decision.at == DECIDED_AT


# --- recordable before applied (issue 34, finding 3) ------------------------------------------

NINE_MB = "x" * (9 * 1024 * 1024)

# What the audit trail refuses, in every text a decision carries, as a form posts it and as
# JSON gives it.
UNRECORDABLE: dict[str, tuple[dict[str, str], dict[str, Any]]] = {
    "a NUL in a note": ({"decision": "completed", "note": "ok\x00"}, {"note": "ok\x00"}),
    "a NUL in an output": (
        {"decision": "own", 'output."n"': '"a\\u0000"'},
        {"output": {"n": "a\x00"}},
    ),
    "a NUL in an output key": (
        {"decision": "own", 'output."n\\u0000"': "1"},
        {"output": {"n\x00": 1}},
    ),
    "a NUL in a summary": (
        {"decision": "own", 'output."n"': "1", "summary": "s\x00"},
        {"output": {"n": 1}, "summary": "s\x00"},
    ),
    "a NUL in evidence": (
        {"decision": "own", 'output."n"': "1", "evidence": '[{"kind":"file","ref":"a\\u0000"}]'},
        {"output": {"n": 1}, "evidence": [{"kind": "file", "ref": "a\x00"}]},
    ),
    "a lone surrogate in an output": (
        {"decision": "own", 'output."n"': '"\\ud800"'},
        {"output": {"n": "\ud800"}},
    ),
    "a lone surrogate in a note": (
        {"decision": "completed", "note": "\ud800"},
        {"note": "\ud800"},
    ),
    "a 9 MB output": (
        {"decision": "own", 'output."n"': f'"{NINE_MB}"'},
        {"output": {"n": NINE_MB}},
    ),
}


@pytest.mark.parametrize("case", list(UNRECORDABLE))
def test_a_decision_the_trail_would_refuse_is_refused_before_anything_changes(
    case: str, tmp_path: Path
) -> None:
    from checkprofile.human import (
        Completed,
        DecisionRequiredError,
        JsonLinesRecorder,
        decision_from_form,
        decision_from_json,
        resolution_record,
    )

    checkpoint = made()
    form, data = UNRECORDABLE[case]
    fields = {"checkpoint": checkpoint.reference, "token": "t", **form}
    with pytest.raises(DecisionRequiredError, match="recordable before it is applied"):
        decision_from_form(
            fields, by="ana", at=DECIDED_AT, reference=checkpoint.reference, token="t"
        )
    decision = {"kind": "completed", "by": "ana", "at": DECIDED_AT, **data}
    with pytest.raises(DecisionRequiredError, match="recordable before it is applied"):
        decision_from_json(decision)
    for apply in (checkpoint.decide, checkpoint.resolve):
        with pytest.raises(DecisionRequiredError, match="recordable before it is applied"):
            apply(decision)
    # A typed decision a host built itself is held to the same rule where it is applied.
    typed = Completed(
        by="ana",
        at=DECIDED_AT,
        note=data.get("note"),
        output=data.get("output"),
        summary=data.get("summary"),
    )
    if "evidence" not in data:
        for apply in (checkpoint.decide, checkpoint.resolve):
            with pytest.raises(DecisionRequiredError, match="recordable before it is applied"):
                apply(typed)
    assert checkpoint == made()  # nothing changed
    # And what the rule lets through, the trail keeps.
    fine = {"kind": "completed", "by": "ana", "at": DECIDED_AT, "output": {"n": "x" * 1_000_000}}
    JsonLinesRecorder(tmp_path / "audit.jsonl").record(resolution_record(checkpoint.resolve(fine)))


def test_an_error_about_an_unrecordable_decision_names_where_never_what() -> None:
    from checkprofile.human import DecisionRequiredError, decision_from_json

    with pytest.raises(DecisionRequiredError) as caught:
        decision_from_json(
            {"kind": "returned", "by": "ana", "at": DECIDED_AT, "note": "hunter2\x00"}
        )
    assert "/note" in str(caught.value) and "hunter2" not in str(caught.value)


# --- values compared as JSON, by type (issue 34, finding 5) -----------------------------------


def with_candidate(data: Any, output: dict[str, Any]) -> Any:
    """Checkpoint JSON ``data`` whose held candidate (in the state's escalation) has ``output``,
    the receipt left as it was."""
    changed = copy.deepcopy(data)
    changed["state"]["escalation"]["candidate"]["output"] = output
    return changed


def test_a_held_candidate_that_differs_from_the_receipt_by_type_is_refused() -> None:
    checkpoint = checkpoint_for(
        make_outcome(SCRIPTS["unsure"], submission={"output": {"approved": True, "amount": 100}}),
        state=fresh(),
    )
    data = stored(checkpoint)
    assert Checkpoint.from_json(data) == checkpoint
    # The page shows `true` and `100`; a held 1 and 100.0 would be what completing writes.
    for output in (
        {"approved": 1, "amount": 100},
        {"approved": True, "amount": 100.0},
        {"approved": 1, "amount": 100.0},
    ):
        with pytest.raises(CheckpointError, match="another candidate than its receipt"):
            Checkpoint.from_json(with_candidate(data, output))
    # Python's == alone would have taken them: the comparison is by JSON type.
    assert {"approved": 1, "amount": 100.0} == {"approved": True, "amount": 100}


def test_json_values_are_compared_by_their_json_type() -> None:
    from checkprofile._json_text import same_json

    assert not same_json(True, 1) and not same_json(100, 100.0) and same_json({"a": 1}, {"a": 1})
    assert not same_json([1], [True]) and same_json({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_a_checkpoint_carries_the_audit_record_s_check_key() -> None:
    from checkprofile.human import verdict_record

    outcome = make_outcome(SCRIPTS["unsure"])
    checkpoint = checkpoint_for(outcome, state=fresh())
    record = verdict_record(outcome, run_id=RUN, step_id=STEP)
    assert checkpoint.check_key == record.check_key
    assert Checkpoint.from_json(stored(checkpoint)).check_key == record.check_key


def test_a_checkpoint_whose_verdict_was_graded_under_another_check_is_refused() -> None:
    import attrs

    from checkprofile import parse_check

    checkpoint = made()
    other = parse_check([{"ask": q.ask} for q in checkpoint.check])
    escalation = attrs.evolve(
        checkpoint.escalation, check=attrs.evolve(checkpoint.verdict, check=other)
    )
    state = attrs.evolve(checkpoint.state, escalation=escalation)
    with pytest.raises(CheckpointError, match="another check"):
        Checkpoint(state=state, receipt=checkpoint.receipt)


def test_a_decision_dated_before_its_escalation_is_refused() -> None:
    from checkprofile.human import DecisionRequiredError

    checkpoint = made()
    escalated = checkpoint.escalation.at
    before = "2000-01-01T00:00:00Z"
    assert before < escalated
    for apply in (checkpoint.decide, checkpoint.resolve):
        with pytest.raises(DecisionRequiredError, match="before its escalation"):
            apply({**RETURNED, "at": before})
        with pytest.raises(DecisionRequiredError, match="before its escalation"):
            apply(RETURNED, at=before)
    # The same instant, or any later, is a decision.
    assert checkpoint.decide(RETURNED, at=escalated).escalation is None
    assert checkpoint.decide(RETURNED, at=DECIDED_AT).escalation is None
