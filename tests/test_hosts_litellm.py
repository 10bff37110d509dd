"""Both decision adapters through LiteLLM's proxy 1.104.3, run for real (tests/litellmhost.py),
routed with its ``typesafe/`` provider to jev-compatible-server 0.1.1 and its tiny model
(tests/jevhost.py), with a recording relay between the two so every number the adapter reads
can be compared with the one the host itself sent.

System One goes through the proxy's ``/v1/systemone``, OpenAI Decisions through its
``/v1/decisions`` with the material as an ``input_text`` part (the proxy refuses
``input_json``); the proxy translates the latter into a System One request whose state is
that text. Known limits of the pair, each read by the adapters' rules: the proxy's response
model wants a ``score`` answer's ``legend`` as a map, and jev-compatible-server writes a list,
so a check with a rubric question is a 500 for every question; it cannot pass on an
``unsupported`` answer either (a 500).

Both hosts' Pythons come from ``CHECKPROFILE_TEST_LITELLM_PYTHON`` and
``CHECKPROFILE_TEST_JEV_PYTHON`` (``.ci/run`` makes both environments). Without them the tests
skip, saying why; with ``CI`` set they fail instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

import jevhost
import litellmhost
from loopback import VENDOR_SUMMARY, run_example_check, vendor_material

from checkprofile import (
    ChoiceAnswer,
    Evaluator,
    Limits,
    Outcome,
    YesNoAnswer,
    build_bundle,
    parse_check,
    run_check,
)
from checkprofile.adapters._common import material_text
from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from support import spec_full_form, unavailable

ROOT = Path(__file__).resolve().parent.parent

NO_HOST = (
    f"no LiteLLM proxy or jev-compatible-server: set {litellmhost.ENV} and {jevhost.ENV} to"
    " the Pythons of virtual environments that have them (tests/litellmhost.py says how;"
    " .ci/run makes both)"
)

YES_NO, CHOICE, RUBRIC = spec_full_form()


class Hosts:
    def __init__(self, proxy: litellmhost.LiteLLMHost, relay: litellmhost.Relay) -> None:
        self.proxy = proxy
        self.relay = relay


@pytest.fixture(scope="module")
def hosts() -> Iterator[Hosts]:
    proxy_python = os.environ.get(litellmhost.ENV)
    jev_python = os.environ.get(jevhost.ENV)
    if not proxy_python or not jev_python:
        unavailable(NO_HOST, "run LiteLLM's proxy in front of jev-compatible-server")
    with (
        jevhost.JevHost(jev_python) as jev,
        litellmhost.Relay(jev.url) as relay,
        litellmhost.LiteLLMHost(proxy_python, relay.url) as proxy,
    ):
        yield Hosts(proxy, relay)


ROUTES = ["systemone", "decisions"]


def evaluator(
    hosts: Hosts, route: str, model: str = litellmhost.MODEL, *, key: str = litellmhost.KEY
) -> Evaluator:
    if route == "systemone":
        return SystemOneEvaluator(model, base_url=hosts.proxy.url, api_key=key, timeout=60)
    return DecisionsEvaluator(
        model,
        base_url=f"{hosts.proxy.url}/v1",
        api_key=key,
        timeout=60,
        material_part="input_text",
    )


def ask(hosts: Hosts, route: str, check: list[dict[str, Any]], **options: Any) -> Outcome:
    return run_example_check(evaluator(hosts, route, **options), parse_check(check))


def upstream(hosts: Hosts, since: int) -> list[tuple[Any, int, Any]]:
    """What the jev server was sent and answered, through the relay, after ``since``."""
    return hosts.relay.exchanges[since:]


def assert_the_hosts_own_numbers(outcome: Outcome, answered: dict[str, Any]) -> None:
    yes_no, choice = outcome.answers
    assert type(yes_no) is YesNoAnswer and yes_no.p == answered["q0"]["noul"]
    assert type(choice) is ChoiceAnswer and choice.name == answered["q1"]["choice"]
    assert choice.confidence == answered["q1"]["confidence"]
    assert dict(choice.distribution or ()) == answered["q1"]["probabilities"]


# --- What passes -------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_a_check_gets_a_verdict_with_the_hosts_own_numbers(hosts: Hosts, route: str) -> None:
    since = len(hosts.relay.exchanges)
    outcome = ask(hosts, route, [YES_NO, CHOICE])
    assert outcome.failures == ()
    assert outcome.verdict.verdict in ("pass", "fail", "unsure")
    assert outcome.verdict.model == jevhost.MODEL_NAME  # the host's name, through the proxy
    assert outcome.attempts == 1
    ((_, status, answered),) = upstream(hosts, since)
    assert status == 200
    assert_the_hosts_own_numbers(outcome, answered["answers"])
    (call,) = outcome.calls
    assert call.usage is None  # the proxy reports the host's zeros: nothing was measured


def test_decisions_sends_the_material_as_the_same_canonical_json_text(hosts: Hosts) -> None:
    since = len(hosts.relay.exchanges)
    ask(hosts, "decisions", [YES_NO])
    ((sent, _, _),) = upstream(hosts, since)
    bundle = build_bundle(
        parse_check([YES_NO]), vendor_material(), state_bytes=Limits().check_state_bytes
    )
    # The proxy hands the input_text part on as the System One state, as it came.
    assert sent["state"] == material_text(bundle)
    assert json.loads(sent["state"])["submission"]["summary"] == VENDOR_SUMMARY


def test_the_same_question_through_either_route_reads_the_same_way(hosts: Hosts) -> None:
    # System One sends the material as a JSON value, Decisions as its text: the model sees
    # different prompts, so the numbers differ a little, but each is the host's own.
    since = len(hosts.relay.exchanges)
    first = ask(hosts, "systemone", [YES_NO, CHOICE])
    second = ask(hosts, "decisions", [YES_NO, CHOICE])
    (_, _, by_state), (_, _, by_text) = upstream(hosts, since)
    assert_the_hosts_own_numbers(first, by_state["answers"])
    assert_the_hosts_own_numbers(second, by_text["answers"])


@pytest.mark.parametrize("route", ROUTES)
def test_eight_concurrent_checks_each_get_the_hosts_answer(hosts: Hosts, route: str) -> None:
    check = parse_check([YES_NO, CHOICE])
    alone = ask(hosts, route, [YES_NO, CHOICE])
    used = evaluator(hosts, route)

    async def together() -> list[Outcome]:
        runs = [run_check(check, vendor_material(), used, limits=Limits()) for _ in range(8)]
        return await asyncio.gather(*runs)

    outcomes = asyncio.run(together())
    assert all(outcome.failures == () for outcome in outcomes)
    assert all(outcome.answers == alone.answers for outcome in outcomes)


PROCESS = """---
name: vendor-check
description: A vendor is screened against the sanctions lists.
inputs: { vendor: string }
steps:
  - id: screen
    agent: Check the vendor against the OFAC and EU lists.
    output: { cleared: boolean }
    evidence: [file]
    check:
      - ask: The cleared verdict matches what the attached report says.
        pass: 0.9
        fail: 0.1
      - ask: What does the summary do?
        one_of:
          states: States the verdict and the lists checked.
          hedges: Avoids a verdict or qualifies it heavily.
        pass: [states]
---
# Vendor check
"""


@pytest.mark.parametrize("route", ROUTES)
def test_the_command_line_gets_a_verdict_through_the_proxy(
    hosts: Hosts, route: str, tmp_path: Path
) -> None:
    (tmp_path / "PROCESS.md").write_text(PROCESS)
    submission = {
        "output": {"cleared": True},
        "summary": VENDOR_SUMMARY,
        "evidence": [{"kind": "file", "ref": "r.pdf"}],
    }
    (tmp_path / "submission.json").write_text(json.dumps(submission))
    (tmp_path / "run-data.json").write_text(
        json.dumps({"inputs": {"vendor": "Acme GmbH"}, "steps": {}})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TYPESAFE_"))}
    env["PYTHONPATH"] = str(ROOT)
    if route == "systemone":
        spec = f"systemone:{litellmhost.MODEL}"
        env.update(TYPESAFE_API_KEY=litellmhost.KEY, TYPESAFE_BASE_URL=hosts.proxy.url)
    else:
        spec = f"openai-decisions:{litellmhost.MODEL}"
        env.update(
            OPENAI_API_KEY=litellmhost.KEY,
            OPENAI_BASE_URL=f"{hosts.proxy.url}/v1",
            CHECKPROFILE_DECISIONS_MATERIAL_PART="input_text",
        )
    command = [sys.executable, "-m", "checkprofile", "run", str(tmp_path / "PROCESS.md")]
    command += ["--step", "screen", "--submission", str(tmp_path / "submission.json")]
    command += ["--run-data", str(tmp_path / "run-data.json"), "--evaluator", spec]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1, 3), done.stdout + done.stderr  # pass, fail or unsure
    assert jevhost.MODEL_NAME in done.stdout


# --- What the proxy adds, read by the adapters' rules ------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_a_rubric_is_an_error_as_the_proxy_refuses_the_hosts_list_legend(
    hosts: Hosts, route: str
) -> None:
    since = len(hosts.relay.exchanges)
    outcome = ask(hosts, route, [YES_NO, CHOICE, RUBRIC])
    assert outcome.verdict.verdict == "error"
    assert outcome.attempts == 2  # a 500 may pass: it is asked once more
    exchanges = upstream(hosts, since)
    assert len(exchanges) == 2  # the proxy's own retries are off for this model
    for _, status, answered in exchanges:
        assert status == 200 and isinstance(answered["answers"]["q2"]["legend"], list)
    reasons = {failure.reason for _, failure in outcome.failures}
    assert reasons == {"server_error"}  # every question: the proxy answers 500 for them all
    (_, failure), *_ = outcome.failures
    assert "litellm.InternalServerError" in failure.detail


@pytest.mark.parametrize("route", ROUTES)
def test_an_unsupported_answer_is_a_server_error_through_the_proxy(
    hosts: Hosts, route: str
) -> None:
    since = len(hosts.relay.exchanges)
    outcome = ask(hosts, route, [YES_NO, CHOICE], model=litellmhost.LIMITED)
    assert outcome.verdict.verdict == "error"
    for _, status, answered in upstream(hosts, since):
        assert status == 200 and answered["answers"]["q1"]["type"] == "unsupported"
    assert {failure.reason for _, failure in outcome.failures} == {"server_error"}


@pytest.mark.parametrize("route", ROUTES)
def test_a_host_that_has_stopped_is_unavailable(hosts: Hosts, route: str) -> None:
    # The proxy answers 500 "litellm.APIConnectionError" after its own two retries.
    outcome = ask(hosts, route, [YES_NO], model=litellmhost.DOWN)
    assert outcome.verdict.verdict == "error"
    ((_, failure),) = outcome.failures
    assert failure.reason == "unavailable", failure
    assert "APIConnectionError" in failure.detail


@pytest.mark.parametrize("route", ROUTES)
def test_a_key_the_proxy_does_not_know_is_auth(hosts: Hosts, route: str) -> None:
    # Without a database of keys, the proxy takes its master key only: any other is 400
    # "No connected db.", of its key check's type no_db_connection.
    since = len(hosts.relay.exchanges)
    outcome = ask(hosts, route, [YES_NO], key="sk-not-the-master-key")
    ((_, failure),) = outcome.failures
    assert failure.reason == "auth", failure
    assert upstream(hosts, since) == []


def test_input_json_is_refused_before_routing_without_quoting_the_submission(
    hosts: Hosts,
) -> None:
    since = len(hosts.relay.exchanges)
    used = DecisionsEvaluator(
        litellmhost.MODEL, base_url=f"{hosts.proxy.url}/v1", api_key=litellmhost.KEY, timeout=60
    )
    outcome = run_example_check(used, parse_check([YES_NO]))
    assert outcome.verdict.verdict == "error"
    assert upstream(hosts, since) == []  # refused with 400 before any host was asked
    ((_, failure),) = outcome.failures
    assert failure.reason == "unknown"
    assert "Invalid Decisions request" in failure.detail
    # The proxy's message quotes the request, the submission among it: none of it is kept.
    assert "Acme" not in failure.detail and "input_value" not in failure.detail
