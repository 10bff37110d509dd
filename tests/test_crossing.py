"""What crosses a process boundary: every public value pickles and reads back equal, and every
one with a JSON form reads back equal from its JSON text.

A host hands the library's values to a task queue (Celery pickles or sends JSON), a durable
engine (DBOS pickles a step's result and error; Temporal wants JSON payloads) or
``multiprocessing``. Every public class of the package faces is here with a sample, or is
named as a handle with its reason (a store, a recorder, an evaluator: each process opens its
own). A new public class with neither fails the first test.
"""

from __future__ import annotations

import functools
import inspect
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from test_human_records import CHECK, RUN, SCRIPTS, STEP, make_outcome

import checkprofile
import checkprofile.errors
import checkprofile.human
from checkprofile import (
    AnswerError,
    CheckError,
    EvaluatorError,
    Failure,
    Limits,
    LimitsError,
    MaterialError,
    ModelCall,
    Problem,
    ProcessError,
    ProcessProblem,
    Reply,
    Usage,
    VerdictError,
    load_process,
)
from checkprofile.human import (
    AlreadyDecidedError,
    AuditError,
    Case,
    CheckCases,
    CheckpointError,
    Claim,
    ClaimedError,
    Completed,
    Decided,
    DecisionRequiredError,
    EscalationStoreError,
    Failed,
    FormRefusedError,
    NoSuchEscalationError,
    Provenance,
    ReceiptError,
    Returned,
    ReturnNote,
    SameDeciderError,
    StateError,
    StepState,
    StoreError,
    TornLine,
    TornLineWarning,
    Waiting,
    calibrate,
    checkpoint_for,
    records_for,
    resolution_record,
    verdict_record,
)
from support import material

MATERIAL = material(None)
ROOT = Path(__file__).resolve().parents[1]
AT = "2026-10-06T10:15:00Z"
FACES = (checkprofile, checkprofile.human, checkprofile.errors)

#: Public classes that are handles, not values: each process makes its own.
HANDLES = {
    "Evaluator": "a protocol: the host's model client, made in each worker",
    "Recorder": "a protocol: an audit trail's writer, opened in each worker",
    "JsonLinesRecorder": "an open file's writer: each process opens its own",
    "PostgresRecorder": "a database connection: each process opens its own",
    "EscalationStore": "a database connection: each process opens its own",
    "SqliteEscalationStore": "a database connection: each process opens its own",
    "PostgresEscalationStore": "a database connection: each process opens its own",
}


@functools.cache
def samples() -> dict[str, list[Any]]:
    """One or more instances of every public value class, by name."""
    outcomes = {verdict: make_outcome(script) for verdict, script in SCRIPTS.items()}
    unsure = outcomes["unsure"]
    checkpoint = checkpoint_for(
        unsure, state=StepState(run_id=RUN, step_id=STEP), submitted_by="agent:screener"
    )
    returned = Returned(note="Name both lists.", by="ana@example.com", at=AT)
    completed = Completed(by="bo", at=AT, output={"cleared": False}, summary="Own work.")
    failed = Failed(note="Not cleared.", by="cy", at=AT)
    resolution = checkpoint.resolve(returned)
    decided = Decided(
        reference=checkpoint.reference,
        checkpoint=checkpoint,
        decision=returned,
        state=checkpoint.decide(returned),
    )
    records = records_for(unsure, run_id=RUN, step_id=STEP)
    vrecord = verdict_record(unsure, run_id=RUN, step_id=STEP)
    drecord = resolution_record(resolution)
    calibration = calibrate(ROOT / "examples" / "advisory_records.jsonl")
    check_calibration = calibration.checks[0]
    question = check_calibration.questions[0]
    cost = calibration.cost
    assert cost is not None
    case = Case(key="k1", answers=tuple(unsure.answers), person="accepted")
    process = load_process(ROOT / "examples" / "expense-report" / "PROCESS.md")
    material = MATERIAL
    usage = Usage(input_tokens=120, output_tokens=8, request_ids=("req-1",))
    fail_records = records_for(outcomes["fail"], run_id=RUN, step_id=STEP)
    verdict = unsure.verdict
    torn = TornLine(path="trail.jsonl", line=3)
    problem = Problem(("questions", 0, "ask"), "must be a string")
    return {
        "Bundle": [unsure.bundle],
        "Check": [CHECK],
        "ChoiceAnswer": [checkprofile.ChoiceAnswer("states", 0.9)],
        "RubricAnswer": [checkprofile.RubricAnswer(1, 0.85)],
        "YesNoAnswer": [checkprofile.YesNoAnswer(0.62)],
        "ChoiceQuestion": [q for q in CHECK.questions if type(q).__name__ == "ChoiceQuestion"],
        "RubricQuestion": [q for q in CHECK.questions if type(q).__name__ == "RubricQuestion"],
        "YesNoQuestion": [q for q in CHECK.questions if type(q).__name__ == "YesNoQuestion"],
        "Evidence": [checkprofile.Evidence(kind="file", ref="report.pdf")],
        "Failure": [Failure("timeout", "no answer in 30 s")],
        "Limits": [Limits(), Limits(check_state_bytes=200)],
        "Material": [material],
        "ModelCall": [*unsure.calls, ModelCall(seconds=0.5, questions=3, model="m", usage=usage)],
        "Outcome": list(outcomes.values()),
        "Process": [process],
        "ProcessStep": list(process.steps)[:1],
        "ProcessProblem": [ProcessProblem(path=("steps", 0), message="no id", line=3, column=1)],
        "QuestionResult": list(verdict.questions),
        "Reply": [
            Reply("m", (checkprofile.YesNoAnswer(0.5), Failure("timeout", "late")), usage=usage)
        ],
        "Submission": [material.submission],
        "Usage": [usage],
        "Verdict": [outcome.verdict for outcome in outcomes.values()],
        "Problem": [problem],
        # checkprofile.human
        "Calibration": [calibration],
        "CheckCalibration": [check_calibration],
        "CallCost": [calibration.cost, check_calibration.cost],
        "Case": [case],
        "CheckCases": [CheckCases(name="r", check=CHECK, cases=(case,))],
        "Confusion": [check_calibration.at_current.confusion],
        "CurvePoint": list(question.curve[:3]),
        "Figure": [check_calibration.at_current.agreement],
        "Figures": [check_calibration.at_current],
        "QuestionCalibration": list(check_calibration.questions),
        "Thresholds": [question.current, question.suggested],
        "TokenTotal": [cost.input_tokens, cost.cached_tokens],
        "ShownPiece": list(checkpoint.receipt.shown),
        "ReturnNote": [ReturnNote(note="n", by="b", at=AT)],
        "Checkpoint": [checkpoint],
        "Claim": [Claim(reference=checkpoint.reference, by="ana", until=1.8e9)],
        "Completed": [completed],
        "Decided": [decided],
        "DecisionRecord": [drecord],
        "Escalation": [checkpoint.escalation],
        "Failed": [failed],
        "Handoff": [fail_records.handoff, checkpoint.decide(returned).handoff],
        "Provenance": [Provenance(source="logprobs", distribution=(("yes", 0.7), ("no", 0.3)))],
        "Receipt": [checkpoint.receipt],
        "Records": [records],
        "Resolution": [resolution],
        "Returned": [returned],
        "StepState": [checkpoint.state, StepState(run_id=RUN, step_id=STEP)],
        "TornLine": [torn],
        "VerdictRecord": [vrecord],
        "Waiting": [
            Waiting(
                reference=checkpoint.reference,
                process="p",
                run_id=RUN,
                step_id=STEP,
                submitted_by=None,
                put_at=AT,
                claimed_by=None,
                claimed_until=None,
            )
        ],
        # errors, each made as the library makes it
        "CheckprofileError": [checkprofile.CheckprofileError("x")],
        "AnswerError": [AnswerError("not a number")],
        "CheckError": [CheckError([problem])],
        "EvaluatorError": [EvaluatorError("down")],
        "LimitsError": [LimitsError("too small")],
        "MaterialError": [MaterialError("no body")],
        "VerdictError": [VerdictError("not a verdict")],
        "ProcessError": [process_error()],
        "AlreadyDecidedError": [AlreadyDecidedError("decided already", decided=decided)],
        "AuditError": [AuditError("trail.jsonl", 3, "not JSON")],
        "CheckpointError": [CheckpointError("not a checkpoint")],
        "ClaimedError": [ClaimedError("claimed", by="ana", until=1.8e9)],
        "DecisionRequiredError": [decision_error()],
        "EscalationStoreError": [EscalationStoreError("unreachable")],
        "FormRefusedError": [FormRefusedError("token", "a forged post")],
        "NoSuchEscalationError": [NoSuchEscalationError("no checkpoint")],
        "ReceiptError": [ReceiptError("not a receipt")],
        "SameDeciderError": [SameDeciderError("the submitter")],
        "StateError": [StateError("not a state")],
        "StoreError": [StoreError("unreachable")],
        "TornLineWarning": [TornLineWarning(torn)],
        **_trust_samples(),
    }


def process_error() -> ProcessError:
    with pytest.raises(ProcessError) as raised:
        checkprofile.read_process("not a process", source="PROCESS.md")
    return raised.value


def decision_error() -> DecisionRequiredError:
    with pytest.raises(DecisionRequiredError) as raised:
        checkprofile.human.decision_from_json({"kind": "returned", "by": "ana", "at": AT})
    return raised.value


def public_classes() -> dict[str, type]:
    found = {}
    for face in FACES:
        for name in face.__all__:
            value = getattr(face, name)
            if inspect.isclass(value):
                found[name] = value
    return found


def test_every_public_class_has_a_sample_or_is_a_handle() -> None:
    made = samples()
    missing = sorted(
        name for name in public_classes() if name not in HANDLES and not any(made.get(name, []))
    )
    assert missing == []


def same(one: Any, other: Any) -> bool:
    """Equal as values; errors and warnings by type, message, args and attributes."""
    if isinstance(one, BaseException):
        return (
            type(one) is type(other)
            and str(one) == str(other)
            and one.args == other.args
            and vars(one).keys() == vars(other).keys()
            and all(same(vars(one)[key], vars(other)[key]) for key in vars(one))
        )
    return bool(one == other)


VALUES = sorted(name for name in public_classes() if name not in HANDLES)


@pytest.mark.parametrize("name", VALUES)
def test_a_public_value_pickles_and_reads_back_equal(name: str) -> None:
    for value in samples()[name]:
        assert isinstance(value, public_classes()[name])
        back = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        assert type(back) is type(value)
        assert same(back, value), name


JSON_FORMS = [
    name
    for name in VALUES
    if hasattr(public_classes()[name], "to_json") and hasattr(public_classes()[name], "from_json")
]


@pytest.mark.parametrize("name", JSON_FORMS)
def test_a_value_with_a_json_form_reads_back_from_its_text(name: str) -> None:
    kind = public_classes()[name]
    for value in samples()[name]:
        text = json.dumps(value.to_json())
        back = read_json(kind, json.loads(text), value)
        assert back == value, name


def read_json(kind: Any, data: Any, value: Any) -> Any:
    """``kind.from_json``, with the context some forms take (a state its check)."""
    parameters = inspect.signature(kind.from_json).parameters
    options = {}
    if "check" in parameters:
        options["check"] = CHECK
    if "run_id" in parameters:
        options["run_id"] = value.run_id
    if "step_id" in parameters:
        options["step_id"] = value.step_id
    return kind.from_json(data, **options)


def _trust_samples() -> dict[str, list[Any]]:
    """The monitor's, the spot checks' and the qualification's values (issues 36 and 37), made
    as those rooms' own tests make them."""
    import asyncio

    import qualify_fakes as fakes
    import test_human_monitor as monitored

    from checkprofile.human import monitor
    from checkprofile.qualify import qualify

    records = monitored.trail(400, 0.02, seed=5)
    report = monitor(records, settings=monitored.SETTINGS)
    spot = next(record for record in records if type(record).__name__ == "SpotCheckRecord")
    qualification = asyncio.run(
        qualify(fakes.CHECK, fakes.cases(), fakes.well_behaved(), step="assemble", now=AT)
    )
    return {
        "MonitorReport": [report],
        "MonitorSettings": [monitored.SETTINGS],
        "SpotPlan": [monitored.PLAN],
        "StepWatch": list(report.watches),
        "SpotCheckRecord": [spot],
        "QualificationRecord": [qualification.record],
        "ProbeResult": list(qualification.record.probes),
    }
