"""The battery against jev-compatible-server 0.1.1, run for real (tests/jevhost.py), through
the real SystemOne adapter.

The host serves a tiny Llama with random weights (a fixed seed): it answers every kind of
question, from its logits, and answers alike whatever it is shown. Such a model passes every
invariance probe (nothing it is shown moves it) and must not qualify: the knowledge probe
refuses it, and the report says so. ``CHECKPROFILE_TEST_JEV_PYTHON`` names the host's Python;
without it the test skips, and with ``CI`` set it fails, like tests/test_hosts_jev.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest.importorskip("typesafe_sdk")

import jevhost
import qualify_fakes as fakes

from checkprofile import parse_check
from checkprofile.adapters.systemone import SystemOneEvaluator
from checkprofile.qualify import qualification_text, qualify_sync
from support import SPEC_CHOICE_ASK, SPEC_ONE_OF, unavailable

# A yes/no question and a choice among names the tiny model has label tokens for.
CHECK = parse_check(
    [
        {"ask": "The report is correct and complete.", "pass": 0.8, "fail": 0.3},
        {"ask": SPEC_CHOICE_ASK, "one_of": dict(SPEC_ONE_OF), "pass": ["states"]},
    ]
)
# Twenty cases, the fewest the default thresholds judge on: 160 requests, about two minutes
# on a loaded two-core machine.
CASES = 20

NO_HOST = (
    f"no jev-compatible-server: set {jevhost.ENV} to the Python of a virtual environment"
    " that has it (tests/jevhost.py says how; .ci/run makes one)"
)


@pytest.fixture(scope="module")
def host() -> Iterator[jevhost.JevHost]:
    python = os.environ.get(jevhost.ENV)
    if not python:
        unavailable(NO_HOST, "run the real-host tests")
    with jevhost.JevHost(python) as running:
        yield running


def test_a_model_with_random_weights_is_not_qualified_and_the_report_says_why(
    host: jevhost.JevHost,
) -> None:
    evaluator = SystemOneEvaluator(jevhost.MODEL, base_url=host.url, api_key="unused", timeout=60)
    before = host.requests()
    found = qualify_sync(
        CHECK,
        fakes.cases(CASES, cut=False),
        evaluator,
        step="assemble",
    )
    record = found.record
    # Every request reached the host through the adapter, and the host's model answered.
    assert host.served(before) == record.requests == found.planned
    assert record.model == jevhost.MODEL_NAME
    assert not found.qualified
    # It answers alike whenever it is asked alike, and every request it can answer is answered:
    assert record.probe("repeat").status == "passed"
    # but its two-way choice of yes and no is one it has no label tokens for (HTTP 422):
    assert record.probe("form").status == "too_few"
    assert "20 of 20 not answered: see reliability" in record.probe("form").why
    knowledge = record.probe("knowledge")
    assert knowledge.status == "failed"
    assert knowledge.low is not None and knowledge.low <= 0.5
    text = qualification_text(found)
    assert "NOT QUALIFIED: tiny-llama-seed20" in text
    assert "the answers do not tell them apart" in text
    failing = [p.probe for p in record.probes if p.status in ("failed", "too_few")]
    assert f"Not qualified because of: {', '.join(failing)}." in text
