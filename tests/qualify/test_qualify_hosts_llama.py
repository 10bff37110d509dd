"""The battery against llama-cpp-python's server (llama.cpp) 0.3.36, run for real
(tests/llamahost.py), through the real chat fallback (``ChatEvaluator``, ``openai-chat``).

The server serves a tiny Llama with random weights (tests/hosts/tiny_gguf.py, a fixed seed),
wired only so far as to answer each question with its own labels, which the chat fallback
reads from the first token's logprobs. Which label it gives is up to the random weights, and
does not follow what an option says: it answers a choice by where the option stands, so
listing the options in another order changes its choice, and it must not qualify. The report
says so, and which probes failed. ``CHECKPROFILE_TEST_LLAMA_PYTHON`` names the server's
Python; without it the test skips, and with ``CI`` set it fails, like
tests/qualify/test_qualify_hosts_jev.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai")

import llamahost
import qualify_fakes as fakes
from test_qualify_cli import make_cases

from checkprofile import parse_check
from checkprofile.adapters.openai_chat import ChatEvaluator
from checkprofile.human import QualificationRecord
from checkprofile.qualify import Qualification, qualification_text, qualify_sync
from support import SPEC_CHOICE_ASK, SPEC_ONE_OF, unavailable

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "expense-report"

# A yes/no question and a choice of three answers: the battery asks the yes/no question as a
# two-way choice too (form) and the choice with its options in two other orders (order).
CHECK = parse_check(
    [
        {"ask": "The report is correct and complete.", "pass": 0.8, "fail": 0.3},
        {"ask": SPEC_CHOICE_ASK, "one_of": dict(SPEC_ONE_OF), "pass": ["states"]},
    ]
)
# Twenty cases, the fewest the default thresholds judge on: 160 battery requests, 300 chat
# requests (about 10 s on a two-core machine).
CASES = 20

NO_HOST = (
    f"no llama-cpp-python server: set {llamahost.ENV} to the Python of a virtual environment"
    " that has it (tests/llamahost.py says how; .ci/run makes one)"
)


@pytest.fixture(scope="module")
def host() -> Iterator[llamahost.LlamaHost]:
    python = os.environ.get(llamahost.ENV)
    if not python:
        unavailable(NO_HOST, "run the real-host tests")
    llamahost.wait_for_build()
    with llamahost.LlamaHost(python) as running:
        yield running


def chat_requests(record: QualificationRecord, cases: int) -> int:
    """The chat requests a battery makes: the chat fallback asks each question of a check in a
    request of its own, and every check the battery asks has all the questions of ``CHECK``
    but the form probe's, which has the yes/no question only (one per case)."""
    return len(CHECK) * record.requests - (len(CHECK) - 1) * cases


def failing(found: Qualification) -> list[str]:
    return [p.probe for p in found.record.probes if p.status in ("failed", "too_few")]


def test_a_model_with_random_weights_is_not_qualified_and_the_report_says_why(
    host: llamahost.LlamaHost,
) -> None:
    evaluator = ChatEvaluator(llamahost.MODEL, base_url=f"{host.url}/v1", api_key="unused")
    before = host.requests()
    found = qualify_sync(CHECK, fakes.cases(CASES, cut=False), evaluator, step="assemble")
    record = found.record
    # Every request the battery stated before asking (per case: 2 repeat, 2 order, 1 form and
    # 3 injection) was made, and reached the server through the adapter, one chat request per
    # question.
    assert record.requests == found.planned == 8 * CASES
    expected = chat_requests(record, CASES)
    assert host.served(before, expected) == expected
    # The server echoes the name it was asked for; it is all there is to record.
    assert record.model == llamahost.MODEL
    assert not found.qualified
    # llama.cpp gave the logprobs of every answer, and every one was read:
    assert found.failures == {}
    assert record.probe("reliability").status == "passed"
    # the same request asked twice is answered alike (the server is deterministic at
    # temperature 0), and every yes/no answer was compared with its two-way choice (form);
    assert record.probe("repeat").status == "passed"
    assert record.probe("form").compared == CASES
    # but the model picks a letter, not an answer: reordered, the same letter names another.
    order = record.probe("order")
    assert order.status == "failed"
    assert order.compared == 2 * CASES and order.figure is not None and order.figure > 0.5
    assert "listing the options in another order changed the choice on" in order.why
    # What the answers say of the work is judged on every case, accepted and refused; how is
    # not asserted: a function of the text drawn at random may rank these cases by the word
    # their outputs differ in ("good", "bad") as well as any judge (for this seed, it does).
    assert record.probe("knowledge").compared == CASES
    text = qualification_text(found)
    assert text.startswith(f"NOT QUALIFIED: {llamahost.MODEL} for step assemble\n")
    assert "  order        FAIL" in text
    assert f"Not qualified because of: {', '.join(failing(found))}." in text


def test_the_cli_qualifies_through_the_chat_fallback_and_exits_1(
    host: llamahost.LlamaHost, tmp_path: Path
) -> None:
    # The example's check: a yes/no question, a choice of three and a rubric of three levels,
    # every kind the chat fallback asks. A local server takes no key: its base URL is enough.
    cases = make_cases(tmp_path / "cases", CASES)
    env = {**os.environ, "OPENAI_BASE_URL": f"{host.url}/v1", "PYTHONPATH": str(ROOT)}
    env.pop("OPENAI_API_KEY", None)
    spec = f"openai-chat:{llamahost.MODEL}"
    command = [sys.executable, "-m", "checkprofile", "qualify", str(EXAMPLE / "PROCESS.md")]
    command += ["--step", "assemble", "--evaluator", spec, "--cases", str(cases)]
    before = host.requests()
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=600, check=False
    )
    assert done.returncode == 1, done.stderr
    # per case: 2 repeat, 2 order (three options), 1 form, 3 injection; 3 questions each but
    # the form's one
    assert f"160 requests to {spec} on {CASES} cases" in done.stderr
    assert host.served(before, 3 * 160 - 2 * CASES) == 3 * 160 - 2 * CASES
    assert done.stdout.startswith(f"NOT QUALIFIED: {llamahost.MODEL} for step assemble\n")
    assert "0 of 160 (0%) requests not answered" in done.stdout
    assert "  order        FAIL" in done.stdout
    assert "Not qualified because of: " in done.stdout
