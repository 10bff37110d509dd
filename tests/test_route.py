"""A routed submission (design decision 16): its ``next`` and ``reason`` kept from the submit
to the held candidate to a person's decision, and shown to the evaluator only when the host
opts in (``Material(show_route=True)``).

core-2: "on a step whose `next` is a list of routes, `next` (the chosen step id) and `reason`
(string, at most 4000 characters)". "The evaluator is shown the output, the summary and the
evidence references; the profile does not list `next` and `reason` among what it sees".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from core2 import assert_shape
from loopback import (
    LoopbackServer,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    systemone,
)
from test_human_records import CHECK, ROUTED, RUN, STEP, UNSURE, make_outcome, round_trip

from checkprofile import Limits, Material, Submission, build_bundle, parse_check, run_check_sync
from checkprofile.adapters.cache import cache_key
from checkprofile.human import (
    Completed,
    Escalation,
    JsonLinesRecorder,
    Receipt,
    Returned,
    apply_decision,
    read_records,
    receipt_for,
    records_for,
    resolution_record,
    verdict_record,
)
from checkprofile.testing import ScriptedEvaluator
from support import material, spec_full_form

WHEN = "2026-10-06T10:15:00Z"
ROUTE = {"next": ROUTED["next"], "reason": ROUTED["reason"]}


def test_a_routed_submission_keeps_its_route_from_submit_to_candidate_to_decision(
    tmp_path: Path,
) -> None:
    # Submit: the agent's JSON, read as core-2's submission.
    submitted = Submission.from_json(json.loads(json.dumps(ROUTED)))
    assert (submitted.next, submitted.reason) == (ROUTE["next"], ROUTE["reason"])

    # The check is unsure: the submission is held as the candidate, route and all.
    outcome = make_outcome(UNSURE, submission=ROUTED)
    assert outcome.action == "escalate"
    records = records_for(outcome, run_id=RUN, step_id=STEP, submitted_by="agent:screener")
    escalation_json = round_trip(records.to_json()["escalation"])
    assert {key: escalation_json["candidate"][key] for key in ROUTE} == ROUTE
    assert_shape("escalation", escalation_json)

    # The receipt the person reads shows the route, and its JSON keeps it.
    receipt = receipt_for(outcome, run_id=RUN, step_id=STEP)
    receipt_json = round_trip(receipt.to_json())
    assert {key: receipt_json["candidate"][key] for key in ROUTE} == ROUTE
    assert Receipt.from_json(receipt_json).candidate == submitted
    text = receipt.render_text()
    assert f"  next: {ROUTE['next']}\n" in text
    assert f"  reason: {ROUTE['reason']}\n" in text

    # The escalation waits (as JSON) and is read back; the person completes with the
    # candidate: the step completes with the route the agent chose.
    escalation = Escalation.from_json(escalation_json, run_id=RUN, step_id=STEP, check=CHECK)
    resolution = apply_decision(escalation, Completed(by="alice@ops", at=WHEN))
    assert resolution.output == submitted
    assert resolution.output is not None
    assert (resolution.output.next, resolution.output.reason) == (ROUTE["next"], ROUTE["reason"])
    output_json = round_trip(resolution.to_json())["output"]
    assert {key: output_json[key] for key in ROUTE} == ROUTE
    assert_shape("candidate", output_json)

    # The audit trail joins the verdict and the decision on the same (routed) submission.
    recorder = JsonLinesRecorder(tmp_path / "audit.jsonl")
    asked = verdict_record(outcome, run_id=RUN, step_id=STEP)
    decided = resolution_record(resolution)
    recorder.record(asked)
    recorder.record(decided)
    assert read_records(tmp_path / "audit.jsonl") == (asked, decided)
    assert asked.key == decided.key and decided.accepted


def test_a_person_completing_with_their_own_output_chooses_the_route() -> None:
    outcome = make_outcome(UNSURE, submission=ROUTED)
    escalation = records_for(outcome, run_id=RUN, step_id=STEP).escalation
    assert escalation is not None
    own = Completed(
        by="alice@ops",
        at=WHEN,
        output={"cleared": False},
        summary="Listed on the EU list.",
        next="reject_vendor",
        reason="The EU list has a match.",
    )
    resolution = apply_decision(escalation, own)
    assert resolution.output == Submission(
        {"cleared": False},
        "Listed on the EU list.",
        next="reject_vendor",
        reason="The EU list has a match.",
    )
    assert_shape("candidate", round_trip(resolution.to_json())["output"])


def test_a_routed_submission_returned_to_the_agent_hands_off_the_persons_note() -> None:
    outcome = make_outcome(UNSURE, submission=ROUTED)
    escalation = records_for(outcome, run_id=RUN, step_id=STEP).escalation
    assert escalation is not None
    resolution = apply_decision(
        escalation, Returned(note="Route it to sign_off only after the EU check.", by="a", at=WHEN)
    )
    handoff = round_trip(resolution.to_json())["handoff"]
    assert handoff["returned"] == {
        "note": "Route it to sign_off only after the EU check.",
        "by": "a",
        "at": WHEN,
    }
    assert_shape("handoff", handoff)


# --- what the evaluator sees -------------------------------------------------------------------


def shown(show_route: bool) -> Material:
    return attrs.evolve(material(), submission=Submission.from_json(ROUTED), show_route=show_route)


def test_the_bundle_shows_the_route_only_when_the_host_opts_in() -> None:
    hidden = build_bundle(CHECK, shown(False), state_bytes=65536)
    opted = build_bundle(CHECK, shown(True), state_bytes=65536)
    assert '"next"' not in hidden.submission_json and '"reason"' not in hidden.submission_json
    assert json.loads(opted.submission_json) == ROUTED
    # What the evaluator was shown is what a cache keys on: the two must not share answers.
    evaluator = ScriptedEvaluator({})
    assert cache_key(evaluator, hidden) != cache_key(evaluator, opted)
    # And what a receipt says was shown.
    outcome_hidden = make_outcome(UNSURE, submission=ROUTED)
    outcome_opted = make_outcome(UNSURE, submission=ROUTED, show_route=True)
    hidden_receipt = receipt_for(outcome_hidden, run_id=RUN, step_id=STEP)
    opted_receipt = receipt_for(outcome_opted, run_id=RUN, step_id=STEP)
    assert hidden_receipt.bundle_sha256 != opted_receipt.bundle_sha256
    assert hidden_receipt.candidate == opted_receipt.candidate  # the candidate is the same


@pytest.mark.parametrize("show_route", [False, True], ids=["default", "opted-in"])
def test_a_model_host_is_sent_the_route_only_when_the_host_opts_in(
    loopback: LoopbackServer, show_route: bool
) -> None:
    pytest.importorskip("typesafe_sdk")
    from checkprofile.adapters.systemone import SystemOneEvaluator

    loopback.default = systemone()
    evaluator = SystemOneEvaluator("jev-latest", base_url=loopback.url, api_key="k", timeout=5.0)
    outcome = run_check_sync(
        parse_check(spec_full_form()),
        shown(show_route),
        evaluator,
        limits=Limits(),
        now="2026-10-06T09:04:20Z",
        max_retry_wait=0.05,
    )
    assert outcome.action == "complete"
    sent: dict[str, Any] = loopback.last().json["state"]["submission"]
    expected = (
        dict(ROUTED) if show_route else {k: ROUTED[k] for k in ("output", "summary", "evidence")}
    )
    assert sent == expected
    # Nothing of the route slips in anywhere else in the request.
    assert (ROUTE["reason"] in json.dumps(loopback.last().json)) is show_route
