"""The adversarial suite over the public API: hostile values (``tests/hostile.py``) in every
argument of every public function.

Each call either returns or raises an error the function documents: a
:class:`~checkprofile.CheckprofileError` subclass, or :class:`TypeError` (a wrong Python type)
or :class:`ValueError` where its docstring says so. Never anything else: not the hostile
value's own exception, not an ``AttributeError``, not a ``RecursionError``. And a malformed
value never becomes a pass or a fail: an answer is judged by its plain value alone, so a value
whose comparisons lie grades as its real value, and anything that is not a number or a name
is not an answer.

Every public name of ``checkprofile`` and ``checkprofile.human`` is either called here (see
``CALLS``) or listed in ``NOT_CALLED`` with the reason; a test keeps the two complete. The
audit trail and calibration (``checkprofile.human._audit_*``, ``_calibrate``) are being changed
on another branch; their names are listed as such, to be called here once it has landed.
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable, Sequence
from typing import Any, cast

import attrs
import pytest
from hostile import Boom, Hostile, hostile, odd_numbers, odd_objects, odd_texts, with_hostile_part
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import checkprofile
import checkprofile.human
from checkprofile import (
    Answer,
    AnswerError,
    CheckError,
    CheckprofileError,
    ChoiceAnswer,
    ChoiceQuestion,
    Evidence,
    Failure,
    Limits,
    LimitsError,
    MaterialError,
    ProcessError,
    Reply,
    RubricAnswer,
    Submission,
    Verdict,
    VerdictError,
    YesNoAnswer,
    answer_problem,
    answer_text,
    ask_evaluator,
    build_bundle,
    canonical_json,
    check_run_data,
    combine,
    core_schema,
    describe_fragment,
    error_verdict,
    format_at,
    grade,
    issue_lines,
    js_number,
    lint_process,
    load_process,
    material_for,
    objective_problems,
    outcome_for,
    parse_check,
    pointer_token,
    process_problems,
    publication_problems,
    read_process,
    run_check_sync,
    run_data_problems,
    submission_problems,
    validate_check,
)
from checkprofile._shown import is_blank
from checkprofile.human import (
    AuditError,
    Checkpoint,
    CheckpointError,
    Completed,
    DecisionRequiredError,
    Escalation,
    Failed,
    FormRefusedError,
    Handoff,
    Receipt,
    ReceiptError,
    Returned,
    ReturnNote,
    StateError,
    StepState,
    after_check,
    after_decision,
    after_rework,
    apply_decision,
    bundle_bytes,
    bundle_sha256,
    calibrate,
    checkpoint_for,
    decision_from_form,
    decision_from_json,
    distance_from_passing,
    drivers,
    escalate_error,
    form_post,
    iter_records,
    read_records,
    receipt_for,
    receipt_headers,
    receipt_html,
    records_for,
    replayable,
    shown_pieces,
    threshold_text,
)
from checkprofile.testing import ScriptedEvaluator, Step
from support import AT, SPEC_ASK, SPEC_CHOICE_ASK, SPEC_RUBRIC_ASK, material, spec_full_form

CHECK = parse_check(spec_full_form())
YES_NO = CHECK.questions[0]
CHOICE = cast(ChoiceQuestion, CHECK.questions[1])
RUBRIC = CHECK.questions[2]
MATERIAL = material()
BUNDLE = build_bundle(CHECK, MATERIAL, state_bytes=65536)
ANSWERS: list[Answer] = [YesNoAnswer(0.62), ChoiceAnswer("states", 0.91), RubricAnswer(2, 0.9)]
VERDICT = combine(CHECK, ANSWERS, model="m", at=AT)
SCRIPT: dict[str, Step | Sequence[Step]] = {
    SPEC_ASK: ANSWERS[0],
    SPEC_CHOICE_ASK: ANSWERS[1],
    SPEC_RUBRIC_ASK: ANSWERS[2],
}
OUTCOME = run_check_sync(CHECK, MATERIAL, ScriptedEvaluator(SCRIPT), limits=Limits(), now=AT)
RECORDS = records_for(OUTCOME, run_id="run-1", step_id="screen")
_ESCALATION = RECORDS.escalation
assert _ESCALATION is not None
ESCALATION: Escalation = _ESCALATION
RECEIPT = receipt_for(OUTCOME, run_id="run-1", step_id="screen")
STATE = StepState(run_id="run-1", step_id="screen")
WAITING = after_check(STATE, OUTCOME)
CHECKPOINT = checkpoint_for(OUTCOME, state=STATE)
ACTION = "http://127.0.0.1:8025/decide"
FORM = {"checkpoint": "r", "token": "t", "decision": "returned", "note": "Name both lists."}
OWN_FORM = {
    "checkpoint": "r",
    "token": "t",
    "decision": "own",
    'output."cleared"': "false",
    "evidence": '[{"kind": "file", "ref": "a.pdf"}]',
}
FAILED = Failed(note="No.", by="ana", at=AT)
SUBMISSION_JSON = {
    "output": {"cleared": True, "lists": ["OFAC", "EU"]},
    "summary": "Cleared.",
    "evidence": [{"kind": "file", "ref": "report.pdf", "url": "https://x/1"}],
}
RUN_DATA_JSON = {
    "inputs": {"vendor": "ACME"},
    "steps": {
        "intake": {
            "output": {"complete": True},
            "evidence": [{"kind": "link", "ref": "HRB 1"}],
            "at": "2026-10-06T08:00:00Z",
            "check": VERDICT.to_json(),
            "history": [{"at": "2026-10-05T08:00:00Z", "note": "first try"}],
        }
    },
}
DECISION_JSON = {
    "kind": "completed",
    "by": "ana",
    "at": AT,
    "output": {"cleared": False},
    "summary": "Not cleared.",
    "evidence": [{"kind": "file", "ref": "mine.pdf"}],
    "note": "The report misses the EU list.",
}
PROCESS_TEXT = """\
---
name: vendor-check
description: A vendor is screened.
steps:
  - id: screen
    agent: Screen the vendor.
    check:
      - ask: "ASK"
        pass: 0.9
---
# Vendor check
"""
PROCESS = read_process(PROCESS_TEXT.replace("ASK", "Is it done?"))

T, V, D = TypeError, ValueError, DecisionRequiredError
Call = Callable[[Any], object]

#: Each public call, with one argument hostile, and the errors it documents.
CALLS: dict[str, tuple[Call, tuple[type[BaseException], ...]]] = {
    # describe.limits
    "Limits(check_pass)": (lambda v: Limits(check_pass=v), (LimitsError,)),
    "Limits(check_fail)": (lambda v: Limits(check_fail=v), (LimitsError,)),
    "Limits(check_confidence)": (lambda v: Limits(check_confidence=v), (LimitsError,)),
    "Limits(check_state_bytes)": (lambda v: Limits(check_state_bytes=v), (LimitsError,)),
    "Limits.from_json": (Limits.from_json, (LimitsError,)),
    "Limits.from_json(checkPass)": (lambda v: Limits.from_json({"checkPass": v}), (LimitsError,)),
    "Limits.from_json(checkStateBytes)": (
        lambda v: Limits.from_json({"checkStateBytes": v}),
        (LimitsError,),
    ),
    # check keys
    "validate_check": (validate_check, ()),
    "validate_check(question)": (lambda v: validate_check([v]), ()),
    "validate_check(limits)": (lambda v: validate_check("Done?", limits=v), (T,)),
    "parse_check": (parse_check, (CheckError,)),
    "parse_check(limits)": (lambda v: parse_check("Done?", limits=v), (T,)),
    # the submission and what the evaluator sees
    "Submission(output)": (Submission, (MaterialError,)),
    "Submission(output member)": (lambda v: Submission({"a": v}), (MaterialError,)),
    "Submission(summary)": (lambda v: Submission({}, v), (MaterialError,)),
    "Submission(evidence)": (lambda v: Submission({}, evidence=v), (MaterialError,)),
    "Submission(evidence item)": (lambda v: Submission({}, evidence=[v]), (MaterialError,)),
    "Submission(next)": (lambda v: Submission({}, next=v), (MaterialError,)),
    "Submission(reason)": (lambda v: Submission({}, reason=v), (MaterialError,)),
    "Submission.from_json": (Submission.from_json, (MaterialError,)),
    "Submission.from_json(agent)": (lambda v: Submission.from_json({"output": {}}, agent=v), (T,)),
    "Evidence(kind)": (lambda v: Evidence(v, "r"), (MaterialError,)),
    "Evidence(ref)": (lambda v: Evidence("file", v), (MaterialError,)),
    "submission_problems": (submission_problems, ()),
    "run_data_problems": (run_data_problems, ()),
    "check_run_data": (check_run_data, (MaterialError,)),
    "canonical_json": (canonical_json, (V,)),
    "build_bundle(check)": (lambda v: build_bundle(v, MATERIAL, state_bytes=100), (T,)),
    "build_bundle(material)": (lambda v: build_bundle(CHECK, v, state_bytes=100), (T,)),
    "build_bundle(state_bytes)": (
        lambda v: build_bundle(CHECK, MATERIAL, state_bytes=v),
        (LimitsError,),
    ),
    "build_bundle(run_data)": (
        lambda v: build_bundle(CHECK, attrs.evolve(MATERIAL, run_data=v), state_bytes=300),
        (MaterialError,),
    ),
    "build_bundle(instructions)": (
        lambda v: build_bundle(CHECK, attrs.evolve(MATERIAL, instructions=v), state_bytes=300),
        (MaterialError,),
    ),
    "build_bundle(body)": (
        lambda v: build_bundle(CHECK, attrs.evolve(MATERIAL, body=v), state_bytes=300),
        (MaterialError,),
    ),
    "build_bundle(submission)": (
        lambda v: build_bundle(CHECK, attrs.evolve(MATERIAL, submission=v), state_bytes=300),
        (T,),
    ),
    "build_bundle(show_route)": (
        lambda v: build_bundle(CHECK, attrs.evolve(MATERIAL, show_route=v), state_bytes=300),
        (T,),
    ),
    # answers, grading and the verdict
    "grade(yes/no)": (lambda v: grade(YES_NO, YesNoAnswer(v)), (AnswerError,)),
    "grade(choice name)": (lambda v: grade(CHOICE, ChoiceAnswer(v, 0.9)), (AnswerError,)),
    "grade(choice confidence)": (
        lambda v: grade(CHOICE, ChoiceAnswer("states", v)),
        (AnswerError,),
    ),
    "grade(choice distribution)": (
        lambda v: grade(CHOICE, ChoiceAnswer("states", 0.9, distribution=v)),
        (AnswerError,),
    ),
    "grade(rubric level)": (lambda v: grade(RUBRIC, RubricAnswer(v, 0.9)), (AnswerError,)),
    "grade(rubric distribution)": (
        lambda v: grade(RUBRIC, RubricAnswer(2, 0.9, distribution=v)),
        (AnswerError,),
    ),
    "grade(answer)": (lambda v: grade(YES_NO, v), (AnswerError,)),
    "grade(question)": (lambda v: grade(v, ANSWERS[0]), (T,)),
    "answer_problem": (lambda v: answer_problem(CHOICE, v), ()),
    "answer_problem(question)": (lambda v: answer_problem(v, ANSWERS[0]), (T,)),
    "combine(check)": (lambda v: combine(v, ANSWERS, model="m", at=AT), (T,)),
    "combine(answers)": (lambda v: combine(CHECK, v, model="m", at=AT), (AnswerError, T)),
    "combine(answer list)": (
        lambda v: combine(CHECK, [v, *ANSWERS[1:]], model="m", at=AT),
        (AnswerError,),
    ),
    "combine(answers by ask)": (
        lambda v: combine(CHECK, _keyed(v), model="m", at=AT),
        (AnswerError,),
    ),
    "combine(model)": (lambda v: combine(CHECK, ANSWERS, model=v, at=AT), (V,)),
    "combine(at)": (lambda v: combine(CHECK, ANSWERS, model="m", at=v), (V,)),
    "combine(advisory)": (lambda v: combine(CHECK, ANSWERS, model="m", at=AT, advisory=v), (T,)),
    "error_verdict(check)": (lambda v: error_verdict(v, model="m", at=AT), (T,)),
    "error_verdict(model)": (lambda v: error_verdict(CHECK, model=v, at=AT), (V,)),
    "format_at": (format_at, (V,)),
    # what a call cost: a count that is not a whole number in range is refused, or not reported
    "Usage(input_tokens)": (lambda v: checkprofile.Usage(input_tokens=v), (V,)),
    "Usage(output_tokens)": (lambda v: checkprofile.Usage(output_tokens=v), (V,)),
    "Usage(cached_tokens)": (lambda v: checkprofile.Usage(cached_tokens=v), (V,)),
    "Usage(request_ids item)": (lambda v: checkprofile.Usage(request_ids=[v]), (V,)),
    "reported_usage(input_tokens)": (lambda v: checkprofile.reported_usage(input_tokens=v), ()),
    "reported_usage(request_ids item)": (
        lambda v: checkprofile.reported_usage(input_tokens=5, request_ids=[v]),
        (),
    ),
    "Verdict.from_json": (Verdict.from_json, (VerdictError,)),
    "Verdict.from_json(check)": (lambda v: Verdict.from_json(VERDICT.to_json(), check=v), (T,)),
    "issue_lines": (issue_lines, (T,)),
    "answer_text": (answer_text, (T,)),
    "js_number": (js_number, (T,)),
    "pointer_token": (pointer_token, (T, V)),
    "outcome_for": (outcome_for, (T,)),
    # running a check
    # not an evaluator: a TypeError before any attempt, never an error verdict
    "run_check_sync(evaluator)": (
        lambda v: run_check_sync(CHECK, MATERIAL, v, limits=Limits(), now=AT),
        (T,),
    ),
    "run_check_sync(limits)": (
        lambda v: run_check_sync(CHECK, MATERIAL, ScriptedEvaluator(SCRIPT), limits=v, now=AT),
        (T,),
    ),
    "run_check_sync(advisory)": (
        lambda v: run_check_sync(
            CHECK, MATERIAL, ScriptedEvaluator(SCRIPT), limits=Limits(), now=AT, advisory=v
        ),
        (T,),
    ),
    "run_check_sync(now)": (
        lambda v: run_check_sync(
            CHECK, MATERIAL, ScriptedEvaluator(SCRIPT), limits=Limits(), now=v
        ),
        (V,),
    ),
    "run_check_sync(max_retry_wait)": (
        lambda v: run_check_sync(
            CHECK, MATERIAL, ScriptedEvaluator(SCRIPT), limits=Limits(), now=AT, max_retry_wait=v
        ),
        (V,),
    ),
    "ask_evaluator(bundle)": (lambda v: _sync(ask_evaluator(ScriptedEvaluator(SCRIPT), v)), (T,)),
    "ask_evaluator(quiet)": (
        lambda v: _sync(ask_evaluator(ScriptedEvaluator(SCRIPT), BUNDLE, quiet=v)),
        (T,),
    ),
    # process files
    "read_process": (read_process, (ProcessError, T)),
    "read_process(ask)": (lambda v: read_process(_process_with(v)), (ProcessError, T)),
    "lint_process(ask)": (
        lambda v: lint_process(_process_with(v), profiles=["check-1"]),
        (ProcessError, T),
    ),
    "lint_process(profiles)": (lambda v: lint_process(PROCESS_TEXT, profiles=v), (T,)),
    "lint_process(limits)": (
        lambda v: lint_process(PROCESS_TEXT, profiles=["check-1"], limits=v),
        (T,),
    ),
    "load_process": (load_process, (ProcessError, T)),
    "process_problems": (lambda v: process_problems(v, profiles=["check-1"]), ()),
    "process_problems(step)": (
        lambda v: process_problems(
            {"name": "vendor-check", "description": "d", "steps": [v]}, profiles=["check-1"]
        ),
        (),
    ),
    "process_problems(profiles)": (lambda v: process_problems({}, profiles=v), (T,)),
    # the audit trail and calibration
    "iter_records": (lambda v: list(iter_records(v)), (T, AuditError, OSError)),
    "read_records": (read_records, (T, AuditError, OSError)),
    "calibrate": (calibrate, (T, AuditError, OSError)),
    "calibrate(records)": (lambda v: calibrate([v]), (T, AuditError)),
    "calibrate(since)": (lambda v: calibrate([], since=v), (T, V)),
    "calibrate(target)": (lambda v: calibrate([], target=v), (T, V)),
    "publication_problems(process)": (
        lambda v: publication_problems(v, profiles=["check-1"]),
        (T,),
    ),
    "publication_problems(profiles)": (lambda v: publication_problems(PROCESS, profiles=v), (T,)),
    "describe_fragment(run_data_bytes)": (
        lambda v: describe_fragment(evaluator_configured=True, run_data_bytes=v),
        (V,),
    ),
    "describe_fragment(evaluator_configured)": (
        lambda v: describe_fragment(evaluator_configured=v, run_data_bytes=1),
        (T,),
    ),
    "describe_fragment(profiles)": (
        lambda v: describe_fragment(evaluator_configured=True, run_data_bytes=1, profiles=v),
        (T,),
    ),
    "describe_fragment(limits)": (
        lambda v: describe_fragment(evaluator_configured=True, run_data_bytes=1, limits=v),
        (T,),
    ),
    "material_for(step_id)": (
        lambda v: material_for(PROCESS, v, submission=MATERIAL.submission, run_data={}),
        (ProcessError, T),
    ),
    "material_for(submission)": (
        lambda v: material_for(PROCESS, "screen", submission=v, run_data={}),
        (T,),
    ),
    "material_for(show_route)": (
        lambda v: material_for(
            PROCESS, "screen", submission=MATERIAL.submission, run_data={}, show_route=v
        ),
        (T,),
    ),
    "objective_problems(step)": (lambda v: objective_problems(v, MATERIAL.submission), (T,)),
    "objective_problems(submission)": (
        lambda v: objective_problems(PROCESS.step("screen"), v),
        (T,),
    ),
    "Process.check_for(limits)": (lambda v: PROCESS.check_for("screen", limits=v), (T,)),
    "core_schema": (core_schema, (V,)),
    # the human side
    "records_for(outcome)": (lambda v: records_for(v, run_id="r", step_id="s"), (T,)),
    "records_for(run_id)": (lambda v: records_for(OUTCOME, run_id=v, step_id="s"), (V,)),
    "records_for(by)": (lambda v: records_for(OUTCOME, run_id="r", step_id="s", by=v), (V,)),
    "records_for(note)": (lambda v: records_for(OUTCOME, run_id="r", step_id="s", note=v), (V,)),
    "records_for(submitted_by)": (
        lambda v: records_for(OUTCOME, run_id="r", step_id="s", submitted_by=v),
        (V,),
    ),
    "records_for(submitted_at)": (
        lambda v: records_for(OUTCOME, run_id="r", step_id="s", submitted_at=v),
        (V,),
    ),
    "Handoff.from_json": (Handoff.from_json, (VerdictError,)),
    "Handoff(progress)": (lambda v: Handoff(progress=v), (T,)),
    "Handoff(issues)": (lambda v: Handoff(issues=v), (T,)),
    "ReturnNote(note)": (lambda v: ReturnNote(note=v, by="ana", at=AT), (T,)),
    "Escalation.from_json": (
        lambda v: Escalation.from_json(v, run_id="r", step_id="s"),
        (VerdictError,),
    ),
    "Escalation.from_json(run_id)": (
        lambda v: Escalation.from_json(ESCALATION.to_json(), run_id=v, step_id="s"),
        (V,),
    ),
    "Escalation.from_json(check)": (
        lambda v: Escalation.from_json(ESCALATION.to_json(), run_id="r", step_id="s", check=v),
        (T,),
    ),
    "decision_from_json": (decision_from_json, (D,)),
    "Returned(note)": (lambda v: Returned(note=v, by="ana", at=AT), (D,)),
    "Failed(by)": (lambda v: Failed(note="No.", by=v, at=AT), (D,)),
    "Completed(at)": (lambda v: Completed(by="ana", at=v), (D,)),
    "Completed(output)": (lambda v: Completed(by="ana", at=AT, output=v), (D,)),
    "Completed(evidence)": (lambda v: Completed(by="ana", at=AT, output={}, evidence=v), (D,)),
    "apply_decision(decision)": (lambda v: apply_decision(ESCALATION, v), (D,)),
    "apply_decision(escalation)": (
        lambda v: apply_decision(v, Failed(note="No.", by="ana", at=AT)),
        (T,),
    ),
    "StepState.from_json": (StepState.from_json, (StateError,)),
    "StepState(record)": (lambda v: StepState(run_id="r", step_id="s", record=v), (StateError,)),
    "StepState(run_id)": (lambda v: StepState(run_id=v, step_id="s"), (T,)),
    "StepState(escalation)": (
        lambda v: StepState(run_id="run-1", step_id="screen", escalation=v),
        (T,),
    ),
    "after_check(state)": (lambda v: after_check(v, OUTCOME), (T, StateError)),
    "after_check(outcome)": (lambda v: after_check(STATE, v), (T,)),
    "after_check(submitted_by)": (lambda v: after_check(STATE, OUTCOME, submitted_by=v), (V,)),
    "after_check(submitted_at)": (lambda v: after_check(STATE, OUTCOME, submitted_at=v), (V,)),
    "after_decision(state)": (lambda v: after_decision(v, FAILED), (T, StateError)),
    "after_decision(decision)": (lambda v: after_decision(WAITING, v), (D,)),
    "after_decision(at)": (
        lambda v: after_decision(WAITING, {"kind": "failed", "note": "n", "by": "a"}, at=v),
        (D,),
    ),
    "after_decision(check)": (
        lambda v: after_decision(WAITING.to_json(), FAILED, check=v),
        (T, StateError),
    ),
    "after_rework": (after_rework, (T, StateError)),
    "escalate_error": (escalate_error, (T,)),
    "replayable": (replayable, (T,)),
    "checkpoint_for(outcome)": (lambda v: checkpoint_for(v, state=STATE), (T,)),
    "checkpoint_for(state)": (lambda v: checkpoint_for(OUTCOME, state=v), (T, StateError)),
    "checkpoint_for(submitted_by)": (
        lambda v: checkpoint_for(OUTCOME, state=STATE, submitted_by=v),
        (V,),
    ),
    "Checkpoint.from_json": (Checkpoint.from_json, (CheckpointError,)),
    "Checkpoint.decide": (CHECKPOINT.decide, (D,)),
    "Checkpoint.resolve": (CHECKPOINT.resolve, (D,)),
    "Checkpoint.decide(at)": (
        lambda v: CHECKPOINT.decide({"kind": "completed", "by": "ana"}, at=v),
        (D,),
    ),
    "receipt_html": (receipt_html, (T,)),
    "receipt_html(action)": (
        lambda v: receipt_html(RECEIPT, action=v, token="t", reference="r"),
        (V,),
    ),
    "receipt_html(token)": (
        lambda v: receipt_html(RECEIPT, action=ACTION, token=v, reference="r"),
        (V,),
    ),
    "receipt_html(reference)": (
        lambda v: receipt_html(RECEIPT, action=ACTION, token="t", reference=v),
        (V,),
    ),
    "receipt_headers": (lambda v: receipt_headers(action=v), (V,)),
    "form_post": (lambda v: form_post(v, reference="r", token="t"), (V,)),
    "decision_from_form": (
        lambda v: decision_from_form(v, by="ana", at=AT, reference="r", token="t"),
        (D, FormRefusedError),
    ),
    "decision_from_form(by)": (
        lambda v: decision_from_form(FORM, by=v, at=AT, reference="r", token="t"),
        (D,),
    ),
    "decision_from_form(at)": (
        lambda v: decision_from_form(FORM, by="ana", at=v, reference="r", token="t"),
        (D,),
    ),
    "decision_from_form(reference)": (
        lambda v: decision_from_form(FORM, by="ana", at=AT, reference=v, token="t"),
        (V, FormRefusedError),
    ),
    "decision_from_form(token)": (
        lambda v: decision_from_form(FORM, by="ana", at=AT, reference="r", token=v),
        (V, FormRefusedError),
    ),
    "receipt_for(outcome)": (lambda v: receipt_for(v, run_id="r", step_id="s"), (T,)),
    "receipt_for(step_id)": (lambda v: receipt_for(OUTCOME, run_id="r", step_id=v), (V,)),
    "Receipt.from_json": (Receipt.from_json, (ReceiptError,)),
    "drivers(check)": (lambda v: drivers(v, VERDICT), (T,)),
    "drivers(verdict)": (lambda v: drivers(CHECK, v), (T,)),
    "distance_from_passing": (lambda v: distance_from_passing(YES_NO, v), (T,)),
    "threshold_text": (threshold_text, (T,)),
    "shown_pieces": (shown_pieces, (T,)),
    "bundle_bytes": (bundle_bytes, (T,)),
    "bundle_sha256": (bundle_sha256, (T,)),
}


def _adapters() -> dict[str, tuple[Call, tuple[type[BaseException], ...]]]:
    """The backends' constructors (each SDK may be missing: then they are left out) and the
    conformance loader."""
    import tempfile
    from pathlib import Path

    from checkprofile.adapters import evaluator_from_spec
    from checkprofile.adapters.cache import CachingEvaluator
    from checkprofile.conformance import Case, CorpusError, load_cases, run_case
    from checkprofile.testing import replay_evaluator

    folder = Path(tempfile.mkdtemp())
    calls: dict[str, tuple[Call, tuple[type[BaseException], ...]]] = {
        "CachingEvaluator(inner)": (lambda v: CachingEvaluator(v, folder), (T,)),
        "CachingEvaluator(store)": (
            lambda v: CachingEvaluator(ScriptedEvaluator(SCRIPT), v),
            (T, V, OSError),
        ),
        "evaluator_from_spec": (lambda v: evaluator_from_spec(v, environ={}), (V,)),
        "replay_evaluator(answers)": (lambda v: replay_evaluator(v, check=CHECK), (V,)),
        "replay_evaluator(check)": (lambda v: replay_evaluator({}, check=v), (T, V)),
        "load_cases": (load_cases, (T, CorpusError)),
        "run_case": (
            lambda v: _check_case_result(
                run_case(
                    Case(
                        id="check_keys/x",
                        stage="check_keys",
                        rule="x",
                        decisions=(1,),
                        data=v,
                        source="x",
                        index=0,
                    )
                )
            ),
            (),
        ),
    }
    constructors: list[tuple[str, str, str]] = [
        ("systemone", "SystemOneEvaluator", "typesafe_sdk"),
        ("openai_decisions", "DecisionsEvaluator", "openai"),
        ("openai_chat", "ChatEvaluator", "openai"),
    ]
    import importlib
    import importlib.util

    for module, name, sdk in constructors:
        if importlib.util.find_spec(sdk) is None:  # pragma: no cover - extras installed here
            continue
        cls: Callable[..., object] = getattr(
            importlib.import_module(f"checkprofile.adapters.{module}"), name
        )
        calls[f"{name}(model)"] = (_made(cls, "model"), (V,))
        calls[f"{name}(timeout)"] = (_made(cls, "timeout"), (V,))
    chat = importlib.import_module("checkprofile.adapters.openai_chat").ChatEvaluator
    calls["ChatEvaluator(top_logprobs)"] = (lambda v: chat("m", api_key="k", top_logprobs=v), (V,))
    calls["ChatEvaluator(min_label_mass)"] = (
        lambda v: chat("m", api_key="k", min_label_mass=v),
        (V,),
    )
    return calls


def _made(cls: Callable[..., object], argument: str) -> Call:
    """A call of the backend ``cls`` with ``argument`` hostile."""
    if argument == "model":
        return lambda value: cls(value, api_key="k")
    return lambda value: cls("m", api_key="k", **{argument: value})


def _check_case_result(result: Any) -> None:
    # run_case never raises: a case it cannot run is a failed case, with a one-line diff.
    assert "\n" not in result.diff and len(result.diff) <= 200, result.diff[:300]


CALLS.update(_adapters())


def _store_calls() -> dict[str, tuple[Call, tuple[type[BaseException], ...]]]:
    """The escalation store's calls, on a SQLite store of the session's own (one checkpoint
    put; a hostile value that is a decision may decide it, and every later one is refused)."""
    import tempfile
    from pathlib import Path

    from test_human_store import checkpoint

    from checkprofile.human import (
        AlreadyDecidedError,
        CheckpointError,
        ClaimedError,
        NoSuchEscalationError,
        SameDeciderError,
        SqliteEscalationStore,
    )

    folder = Path(tempfile.mkdtemp(prefix="checkprofile-hostile-store-"))
    store = SqliteEscalationStore(folder / "store.sqlite")
    made = checkpoint("run-hostile")
    reference = store.put(made)
    refused = (T, V, D, AlreadyDecidedError, ClaimedError, NoSuchEscalationError)
    return {
        "SqliteEscalationStore(path)": (SqliteEscalationStore, (T, V)),
        "SqliteEscalationStore(separate_duties)": (
            lambda v: SqliteEscalationStore(folder / "s.sqlite", separate_duties=v),
            (T,),
        ),
        "EscalationStore.put": (store.put, (T, SameDeciderError)),
        "EscalationStore.put(process)": (lambda v: store.put(made, process=v), (T, V)),
        "EscalationStore.put_many": (store.put_many, (T,)),
        "EscalationStore.get": (store.get, (V, NoSuchEscalationError)),
        "EscalationStore.decided": (store.decided, (V, NoSuchEscalationError)),
        "EscalationStore.waiting(process)": (lambda v: store.waiting(process=v), (T, V)),
        "EscalationStore.waiting(step)": (lambda v: store.waiting(step=v), (T, V)),
        "EscalationStore.waiting(limit)": (lambda v: store.waiting(limit=v), (V,)),
        "EscalationStore.claim(by)": (lambda v: store.claim(reference, by=v, seconds=1), refused),
        "EscalationStore.claim(seconds)": (
            lambda v: store.claim(reference, by="ana", seconds=v),
            refused,
        ),
        "EscalationStore.release(by)": (lambda v: store.release(reference, by=v), (V,)),
        "EscalationStore.decide": (lambda v: store.decide(reference, v), refused),
        "EscalationStore.decide(at)": (
            lambda v: store.decide(reference, {"kind": "completed", "by": "bo"}, at=v),
            refused,
        ),
        "EscalationStore.to_parcel(max_bytes)": (
            lambda v: store.to_parcel(made, max_bytes=v),
            (V,),
        ),
        "EscalationStore.from_parcel": (
            store.from_parcel,
            (V, CheckpointError, NoSuchEscalationError),
        ),
    }


CALLS.update(_store_calls())

#: Parts of valid documents, each made hostile in one place at a time.
DOCUMENTS: dict[str, tuple[Call, Any, tuple[type[BaseException], ...]]] = {
    "validate_check": (validate_check, spec_full_form(), ()),
    "parse_check": (parse_check, spec_full_form(), (CheckError,)),
    "Submission.from_json": (Submission.from_json, SUBMISSION_JSON, (MaterialError,)),
    "submission_problems": (submission_problems, SUBMISSION_JSON, ()),
    "run_data_problems": (run_data_problems, RUN_DATA_JSON, ()),
    "build_bundle(run_data)": (
        lambda v: build_bundle(CHECK, attrs.evolve(MATERIAL, run_data=v), state_bytes=400),
        RUN_DATA_JSON,
        (MaterialError,),
    ),
    "Verdict.from_json": (Verdict.from_json, VERDICT.to_json(), (VerdictError,)),
    "Verdict.from_json(check)": (
        lambda v: Verdict.from_json(v, check=CHECK),
        VERDICT.to_json(),
        (VerdictError,),
    ),
    "Limits.from_json": (Limits.from_json, Limits().to_json(), (LimitsError,)),
    "decision_from_json": (decision_from_json, DECISION_JSON, (D,)),
    "decision_from_form": (
        lambda v: decision_from_form(v, by="ana", at=AT, reference="r", token="t"),
        OWN_FORM,
        (D, FormRefusedError),
    ),
    "Escalation.from_json": (
        lambda v: Escalation.from_json(v, run_id="r", step_id="s", check=CHECK),
        ESCALATION.to_json(),
        (VerdictError,),
    ),
    "Handoff.from_json": (
        Handoff.from_json,
        {
            "returned": {"note": "n", "by": "b", "at": AT},
            "issues": ["x"],
            "check": VERDICT.to_json(),
        },
        (VerdictError,),
    ),
    "Receipt.from_json": (Receipt.from_json, RECEIPT.to_json(), (ReceiptError,)),
    "StepState.from_json": (
        lambda v: StepState.from_json(v, check=CHECK),
        WAITING.to_json(),
        (StateError,),
    ),
    "Checkpoint.from_json": (Checkpoint.from_json, CHECKPOINT.to_json(), (CheckpointError,)),
    "Submission.from_record": (
        Submission.from_record,
        RUN_DATA_JSON["steps"]["intake"],  # type: ignore[index]
        (MaterialError,),
    ),
}

#: Public names not called above, and why.
NOT_CALLED: dict[str, str] = {
    # The monitor and spot checks: their hostile inputs (forged probabilities, another
    # secret, records without their verdict, repeats) are the whole of
    # tests/human/calibration/test_human_monitor.py and tests/human/audit/test_human_spot.py.
    **dict.fromkeys(
        [
            "MonitorReport",
            "MonitorSettings",
            "SpotCheckRecord",
            "SpotPlan",
            "StepWatch",
            "monitor",
            "monitor_html",
            "monitor_text",
            "monitor_update",
            "sample_tag",
            "spot_check_record",
        ],
        "hostile trails and arguments in test_human_monitor.py and test_human_spot.py",
    ),
    **dict.fromkeys(
        [
            "Action",
            "Answer",
            "Kind",
            "Question",
            "Result",
            "Source",
            "VerdictName",
            "FailureReason",
            "DecisionKind",
            "AuditRecord",
            "Decision",
            "Evaluator",
            "Recorder",
            "PROFILE",
            "AUDIT_FORMAT",
            "MIN_CASES",
            "RECEIPT_FORMAT",
            "SHOWN_PIECES",
            "MAX_LINE_BYTES",
            "CHECKPOINT_FORMAT",
            "STATE_FORMAT",
            "FORM_CHOICES",
            "__version__",
        ],
        "a type, a protocol or a constant: nothing to call",
    ),
    **dict.fromkeys(
        [
            "AnswerError",
            "CheckError",
            "CheckprofileError",
            "EvaluatorError",
            "LimitsError",
            "MaterialError",
            "ProcessError",
            "VerdictError",
            "AuditError",
            "ReceiptError",
            "DecisionRequiredError",
            "StoreError",
            "TornLineWarning",
            "StateError",
            "CheckpointError",
            "FormRefusedError",
        ],
        "an exception class",
    ),
    **dict.fromkeys(
        [
            "Bundle",
            "Check",
            "ChoiceQuestion",
            "RubricQuestion",
            "YesNoQuestion",
            "Outcome",
            "Problem",
            "ProcessProblem",
            "ProcessStep",
            "Process",
            "QuestionResult",
            "Verdict",
            "Reply",
            "Failure",
            "Material",
            "Records",
            "Resolution",
            "ShownPiece",
            "Provenance",
            "Receipt",
            "Escalation",
            "TornLine",
        ],
        "a value the library builds (from_json, parse_check, run_check...) and checks where"
        " it is taken (its type, and its parts where they came from outside)",
    ),
    **dict.fromkeys(
        ["check_schema", "verdict_schema", "process_schema", "schema_registry"],
        "takes no argument",
    ),
    **dict.fromkeys(
        [
            "JsonLinesRecorder",
            "DecisionRecord",
            "VerdictRecord",
            "QualificationRecord",
            "ProbeResult",
            "check_key",
            "decision_record",
            "record_from_json",
            "resolution_record",
            "submission_key",
            "submission_sha256",
            "verdict_record",
            "Calibration",
            "CallCost",
            "Case",
            "CheckCalibration",
            "CheckCases",
            "Confusion",
            "CurvePoint",
            "Figure",
            "Figures",
            "QuestionCalibration",
            "Thresholds",
            "TokenTotal",
            "calibrate_cases",
            "calibration_html",
            "calibration_text",
        ],
        "the audit trail's and calibration's records and reports: values the library builds,"
        " read by iter_records, read_records and calibrate, which are called (a"
        " qualification's hostile lines: tests/qualify/test_qualify_record.py)",
    ),
    "run_check": "async twin of run_check_sync, which is called",
    "PostgresEscalationStore": "needs a PostgreSQL server: its methods are the SQLite store's"
    " (called here); tests/human/decide/test_human_store.py runs both",
    **dict.fromkeys(
        [
            "AlreadyDecidedError",
            "ClaimedError",
            "EscalationStoreError",
            "NoSuchEscalationError",
            "SameDeciderError",
            "Claim",
            "Decided",
            "Waiting",
            "DEFAULT_ESCALATION_TABLE",
        ],
        "the escalation store's errors, answers and default: made by the store, which is called",
    ),
    "PostgresRecorder": "needs a PostgreSQL server: tests/test_postgres.py gives it bad records"
    " and a store that is not one",
    "ChoiceAnswer": "called through grade(choice ...)",
    "RubricAnswer": "called through grade(rubric ...)",
    "YesNoAnswer": "called through grade(yes/no)",
    "Evidence": "called as Evidence(kind) and Evidence(ref)",
    "Submission": "called as Submission(...) and Submission.from_json",
    "Limits": "called as Limits(...) and Limits.from_json",
    "ModelCall": "a record run_check makes of each attempt, never taken from a caller",
    "Completed": "called as Completed(...)",
    "Returned": "called as Returned(...)",
    "Failed": "called as Failed(...)",
    "Handoff": "called as Handoff(...) and Handoff.from_json",
    "ReturnNote": "called as ReturnNote(...)",
}


def _keyed(key: Any) -> dict[Any, Any]:
    """``{key: an answer}`` when ``key`` can be a key (its hash may be its own code, which the
    test runs, not the library), else the answers by ask with ``key`` among the answers."""
    try:
        return {key: ANSWERS[0]}
    except Exception:
        return {SPEC_ASK: key, SPEC_CHOICE_ASK: ANSWERS[1], SPEC_RUBRIC_ASK: ANSWERS[2]}


def _process_with(text: Any) -> Any:
    if type(text) is not str:
        return text
    return PROCESS_TEXT.replace("ASK", text.replace("\\", "\\\\").replace('"', '\\"'))


def _sync(awaitable: Any) -> Any:
    import asyncio

    return asyncio.run(awaitable)


def _called_name(name: str) -> str:
    return name.split("(")[0].split(".")[0]


def test_every_public_name_is_called_or_said_why_not() -> None:
    public = set(checkprofile.__all__) | set(checkprofile.human.__all__)
    called = {_called_name(name) for name in (*CALLS, *DOCUMENTS)}
    left = public - called - set(NOT_CALLED)
    assert not left, f"call these in CALLS or say why not in NOT_CALLED: {sorted(left)}"
    assert not set(NOT_CALLED) - public, "NOT_CALLED names what is not public"


def _documented(call: str, allowed: tuple[type[BaseException], ...], error: BaseException) -> None:
    # Boom is the hostile value's own exception: it must never get out.
    assert not isinstance(error, Boom), f"{call}: the value's own code ran and raised"
    assert isinstance(error, (CheckprofileError, *allowed)), (
        f"{call} raised {type(error).__name__}: {error}"
    )
    if isinstance(error, CheckprofileError) and allowed:
        assert isinstance(error, allowed), f"{call} raised {type(error).__name__}: {error}"
    text = str(error)
    assert len(text) < 20_000, f"{call}: a message of {len(text)} characters"


hostile_suite = settings(
    # HOSTILE_EXAMPLES=2000 for a hunt; the suite's default keeps it to a minute.
    max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # No explain phase: it prints the values it varies, and these print badly by design.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)


@pytest.mark.parametrize("call", sorted(CALLS))
@hostile_suite
@given(value=hostile)
def test_a_hostile_argument_gets_a_documented_error_or_a_result(call: str, value: Hostile) -> None:
    function, allowed = CALLS[call]
    try:
        function(value.value)
    except Exception as error:  # the test is that it is one of the documented ones
        _documented(call, allowed, error)


@pytest.mark.parametrize("call", sorted(DOCUMENTS))
@hostile_suite
@given(part=hostile, place=st.integers(min_value=0))
def test_a_document_hostile_in_one_place_gets_a_documented_error_or_a_result(
    call: str, part: Hostile, place: int
) -> None:
    function, document, allowed = DOCUMENTS[call]
    value = with_hostile_part(document, place, part.value)
    try:
        function(value)
    except Exception as error:
        _documented(call, allowed, error)


def test_the_checks_that_never_raise_say_so() -> None:
    # validate_check, run_data_problems and submission_problems promise to never raise.
    for name in ("validate_check", "run_data_problems", "submission_problems"):
        assert "never raises" in inspect.getdoc(getattr(checkprofile, name)).lower()  # type: ignore[union-attr]


# --- a malformed value never becomes a pass or a fail -----------------------------------------


def _plain_number(value: Any) -> float | None:
    """What a number is as plain data: its base type's value; None for anything else."""
    kind = type(value)
    if kind is bool or getattr(kind, "__name__", "") == "ScalarBoolean":
        return None
    if issubclass(kind, int):
        return int.__int__(value)
    if issubclass(kind, float):
        number = float.__float__(value)
        return number if math.isfinite(number) else None
    return None


@hostile_suite
@given(drawn=(odd_numbers | odd_objects | odd_texts).map(lambda value: Hostile(value)))
def test_a_probability_is_judged_by_its_plain_value_alone(drawn: Hostile) -> None:
    value = drawn.value
    plain = _plain_number(value)
    try:
        result = grade(YES_NO, YesNoAnswer(value))
    except AnswerError:
        assert plain is None or not 0 <= plain <= 1
        return
    assert plain is not None and 0 <= plain <= 1
    assert result == grade(YES_NO, YesNoAnswer(plain))


@hostile_suite
@given(
    name_drawn=(odd_texts | odd_objects | odd_numbers).map(lambda value: Hostile(value)),
    confidence_drawn=odd_numbers.map(lambda value: Hostile(value)),
)
def test_a_choice_is_judged_by_its_plain_name_and_confidence(
    name_drawn: Hostile, confidence_drawn: Hostile
) -> None:
    name, confidence = name_drawn.value, confidence_drawn.value
    plain_name = str.__str__(name) if issubclass(type(name), str) else None
    plain_confidence = _plain_number(confidence)
    try:
        result = grade(CHOICE, ChoiceAnswer(name, confidence))
    except AnswerError:
        return
    assert plain_name in CHOICE.names
    assert plain_confidence is not None
    assert result == grade(CHOICE, ChoiceAnswer(plain_name, plain_confidence))


class _Replying:
    """An evaluator that replies ``reply`` (anything at all), or raises it."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.model = "hostile"

    async def answer(self, bundle: Any) -> Any:
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply


@hostile_suite
@given(
    drawn=hostile,
    shape=st.sampled_from(["reply", "entry", "model", "failure-reason", "failure-detail"]),
)
def test_a_hostile_evaluator_never_makes_a_pass_or_a_fail(drawn: Hostile, shape: str) -> None:
    entry = drawn.value
    replies: dict[str, Any] = {
        "reply": entry,
        "entry": Reply("m", [cast(Answer, entry), *ANSWERS[1:]]),
        "model": Reply(entry, ANSWERS),
        "failure-reason": Reply("m", [Failure(entry, "x"), *ANSWERS[1:]]),
        "failure-detail": Reply("m", [Failure("timeout", entry), *ANSWERS[1:]]),
    }
    reply = replies[shape]
    outcome = run_check_sync(
        CHECK, MATERIAL, _Replying(reply), limits=Limits(), now=AT, max_retry_wait=0
    )
    if shape == "model" and issubclass(type(entry), str) and not is_blank(str.__str__(entry)):
        return  # a real model name (a str subclass is read as its text): the answers are real
    assert outcome.verdict.verdict == "error", (shape, outcome.verdict.to_json())
    assert outcome.action == "retry"
    for _, failure in outcome.failures:
        assert type(failure.reason) is str and type(failure.detail) is str
        assert len(failure.detail) <= 1000


@pytest.mark.parametrize(
    "error",
    [Boom("x" * 1_000_000), Boom("\ud800\n\x1b[31m"), RecursionError()],
    ids=["long", "control", "recursion"],
)
def test_an_evaluator_that_raises_anything_is_an_error_with_a_short_detail(error: Any) -> None:
    outcome = run_check_sync(CHECK, MATERIAL, _Replying(error), limits=Limits(), now=AT)
    assert outcome.verdict.verdict == "error"
    for _, failure in outcome.failures:
        assert len(failure.detail) <= 1000
        assert "\n" not in failure.detail


def test_every_call_listed_is_a_callable() -> None:
    for name, (function, _) in CALLS.items():
        assert callable(function), name


def test_the_security_page_names_tests_that_exist() -> None:
    # docs/security.md proves each guarantee by a test's name: each name must be a test.
    import re
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    page = (tests.parent / "docs" / "security.md").read_text(encoding="utf-8")
    named = re.findall(r"`(test_\w+\.py)?::(test_\w+)", page)
    assert len(named) > 30
    # A module is named by its file's name, wherever in the rooms of tests/ it stands.
    modules = {path.name: path for path in tests.rglob("test_*.py")}
    module = ""
    for file, name in named:
        module = file or module
        source = modules[module].read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.MULTILINE), f"{module}::{name}"


# Types are judged by identity (checkprofile._types) ------------------------------------------
#
# ``type(value) in (str, int)``, ``==`` on a type and a set of types all run the code of the
# value's metaclass (its ``__eq__``, its ``__hash__``): a hostile value's own code, which may
# raise or say yes. Only ``is`` judges a type without it (``_convert.of_type``).


def _metaclass_calls() -> list[tuple[str, Callable[[], object], tuple[type[BaseException], ...]]]:
    from hostile import OfLyingType

    from checkprofile import Material, parse_check, process_problems
    from checkprofile.human import (
        DecisionRequiredError,
        Escalation,
        apply_decision,
        decision_from_json,
        distance_from_passing,
        record_from_json,
    )

    evil = OfLyingType()
    check = parse_check(
        [
            {"ask": "Done?", "fail": 0.5},
            {"ask": "Which?", "one_of": {"a": "A.", "b": "B."}, "pass": ["a"]},
        ]
    )
    stamp = "2026-10-06T09:04:20Z"

    def bundle(run: object, budget: int = 80) -> object:
        material = Material("Check.", "# B\n", cast(Any, run), Submission({}))
        return build_bundle(check, material, state_bytes=budget)

    many = {f"s{i:03d}": {"at": stamp, "output": "x" * 40} for i in range(100)}
    choice = ChoiceAnswer("a", 0.9, distribution=(("b", 0.5), ("a", 0.5)))
    object.__setattr__(choice, "distribution", ((evil, 0.5), ("a", 0.5)))  # past its checks
    frontmatter = {
        "name": "p",
        "steps": [{"id": "a", "agent": "Do it.", "check": [{"ask": "Done?", "fail": evil}]}],
    }
    return [
        (
            "build_bundle(history of a lying type)",
            lambda: bundle({"steps": {**many, "x": {"at": stamp, "history": evil}}}),
            (MaterialError,),
        ),
        (
            "build_bundle(at of a lying type)",
            lambda: bundle({"steps": {**many, "x": {"at": evil}}}),
            (MaterialError,),
        ),
        (
            "build_bundle(a history entry of a lying type)",
            lambda: bundle(
                {
                    "steps": {
                        **{k: {**v, "history": [{"at": stamp}]} for k, v in many.items()},
                        "x": {"at": stamp, "history": [evil]},
                    }
                }
            ),
            (MaterialError,),
        ),
        (
            "build_bundle(input of a lying type)",
            lambda: bundle({"inputs": {"a": evil}}),
            (MaterialError,),
        ),
        ("answer_problem(option of a lying type)", lambda: answer_problem(check[1], choice), ()),
        (
            "answer_problem(question of a lying type)",
            lambda: answer_problem(cast(Any, evil), YesNoAnswer(0.5)),
            (TypeError,),
        ),
        (
            "distance_from_passing(question of a lying type)",
            lambda: distance_from_passing(cast(Any, evil), cast(Any, evil)),
            (TypeError,),
        ),
        ("decision_from_json(a lying type)", lambda: decision_from_json(evil), ()),
        (
            "apply_decision(a lying type)",
            lambda: apply_decision(cast(Escalation, evil), cast(Any, evil)),
            (TypeError, DecisionRequiredError),
        ),
        (
            "record_from_json(record of a lying type)",
            lambda: record_from_json({"record": evil}),
            (ValueError,),
        ),
        (
            "process_problems(a threshold of a lying type)",
            lambda: process_problems(frontmatter, profiles=["check-1"]),
            (),
        ),
    ]


@pytest.mark.parametrize(
    "call, run, allowed",
    _metaclass_calls(),
    ids=[name for name, _, _ in _metaclass_calls()],
)
def test_a_type_is_judged_by_identity_never_by_its_metaclass(
    call: str, run: Callable[[], object], allowed: tuple[type[BaseException], ...]
) -> None:
    from hostile import METACLASS_CALLS

    METACLASS_CALLS.clear()
    try:
        run()
    except Exception as error:  # what it raises must be documented, never the value's own
        _documented(call, allowed, error)
    assert not METACLASS_CALLS, f"{call}: the metaclass's code ran (and was swallowed)"


def test_no_module_judges_a_type_by_equality() -> None:
    # The rule, kept everywhere: no `type(x) in (...)`, no set of types.
    import pathlib
    import re

    package = pathlib.Path(checkprofile.__file__).parent
    # Code only: what a comment or a docstring's ``quote`` says is not run.
    pattern = re.compile(
        r"type\([^()]*\)\)? (not )?in [(\[{A-Z_]|set\(map\(type"
        r"|(isinstance|issubclass)\([^)]*\b(Mapping|Sequence|Iterable|Sized|Collection)\)"
    )
    found = [
        f"{path.relative_to(package)}:{number}: {line.strip()}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "_types.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(re.sub(r"``.*?``", "", line.split("#")[0]))
    ]
    assert not found, "judge a type by identity (checkprofile._types):\n" + "\n".join(found)


class _Claims:
    """An object that says, through ``__class__``, that it is an answer, with every field an
    answer of that kind would have, each one passing."""

    def __init__(self, kind: type) -> None:
        self._kind = kind

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return self._kind

    p = 0.99
    name = "a"
    level = 1
    confidence = 0.99
    distribution = None
    source = None


@pytest.mark.parametrize("kind", [YesNoAnswer, ChoiceAnswer, RubricAnswer])
def test_an_object_that_only_claims_to_be_an_answer_is_not_one(kind: type) -> None:
    # Judged by its type, never by its own __class__: it is malformed, never a pass.
    from checkprofile import Limits, Material, grade, parse_check, run_check_sync

    check = parse_check(
        [
            {"ask": "Done?", "fail": 0.5},
            {"ask": "Which?", "one_of": {"a": "A.", "b": "B."}, "pass": ["a"]},
            {"ask": "How far?", "levels": ["None.", "All."], "pass": 1},
        ]
    )
    question = check[[YesNoAnswer, ChoiceAnswer, RubricAnswer].index(kind)]
    claim = _Claims(kind)
    assert isinstance(claim, kind)  # what isinstance would have believed
    assert answer_problem(question, claim) is not None
    with pytest.raises(AnswerError):
        grade(question, cast(Any, claim))

    asked = check.select([check.index(question)])
    material = Material("Check.", "# B\n", {}, Submission({}))

    class One:
        model = "m"

        async def answer(self, bundle: Any) -> Reply:
            return Reply("m", [cast(Any, _Claims(kind))])

    outcome = run_check_sync(asked, material, One(), limits=Limits())
    assert outcome.verdict.verdict == "error"
