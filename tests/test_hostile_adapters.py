"""Hostile text through the model backends, against real HTTP servers on loopback.

A lone surrogate (half of a UTF-16 pair: JSON lets it through, UTF-8 cannot write it) in a
submission, in run data or in an ask used to make the System One and Decisions adapters fail
every request, so an agent could force endless retries. Every text an adapter sends is now
written with its lone surrogates escaped (``\\ud800``): the request goes out, the model
answers, the check has a verdict.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

from loopback import (
    LoopbackServer,
    decisions,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    systemone,
    vendor_material,
)

from checkprofile import Evaluator, Limits, Submission, parse_check, run_check_sync
from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from support import spec_full_form

LONE = "\ud800 and \udfff"


def _evaluator(backend: str, server: LoopbackServer) -> Evaluator:
    if backend == "systemone":
        server.default = systemone()
        return SystemOneEvaluator("jev-latest", base_url=server.url, api_key="k", timeout=5)
    server.default = decisions()
    return DecisionsEvaluator("gpt-6-luna", base_url=f"{server.url}/v1", api_key="k", timeout=5)


@pytest.mark.parametrize("backend", ["systemone", "decisions"])
@pytest.mark.parametrize("where", ["summary", "output", "run data", "ask", "choice name"])
def test_a_lone_surrogate_anywhere_is_sent_escaped_and_the_check_has_a_verdict(
    loopback: LoopbackServer, backend: str, where: str
) -> None:
    evaluator = _evaluator(backend, loopback)
    key: list[dict[str, Any]] = spec_full_form()
    material = vendor_material(LONE if where == "summary" else "Cleared.")
    if where == "output":
        material = vendor_material()
        material = type(material)(
            material.instructions,
            material.body,
            material.run_data,
            Submission({"note": LONE}),
        )
    if where == "run data":
        material = vendor_material(notes=LONE)
    if where == "ask":
        key[0]["ask"] = f"Is it {LONE}?"
    if where == "choice name":
        key[1]["one_of"] = {LONE: "Odd.", **key[1]["one_of"]}
    outcome = run_check_sync(
        parse_check(key), material, evaluator, limits=Limits(), max_retry_wait=0.05
    )
    assert outcome.attempts == 1, outcome.failures
    assert outcome.verdict.verdict != "error", outcome.failures
    assert len(loopback.requests) == 1
    body = loopback.last().body
    assert b"\\\\ud800" in body  # the escape, as text: the body is UTF-8
    body.decode("utf-8")
