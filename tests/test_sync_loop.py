"""run_check_sync on one long-lived loop: clients reused, safe from many threads, closed at exit.

Against the real SDKs and a real HTTP server on loopback (tests/loopback.py).
"""

from __future__ import annotations

import contextvars
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")

from loopback import (
    LoopbackServer,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
    systemone,
)

from checkprofile import Bundle, Limits, Reply, YesNoAnswer, parse_check, run_check_sync
from checkprofile.adapters._common import shared_ssl_context
from checkprofile.adapters.systemone import SystemOneEvaluator
from support import material

TESTS = Path(__file__).resolve().parent


def evaluator(server: LoopbackServer) -> SystemOneEvaluator:
    return SystemOneEvaluator("jev-latest", base_url=server.url, api_key="test-key", timeout=5)


def test_calls_share_one_client_and_its_connections(loopback: LoopbackServer) -> None:
    loopback.default = systemone()
    model = evaluator(loopback)
    verdicts = {run_example_check(model).verdict.verdict for _ in range(3)}
    assert "error" not in verdicts
    assert loopback.count() == 3
    # Each call used to run on a loop of its own, with a new client (and TLS context) each.
    assert len(model._clients.current()) == 1


def test_calls_from_many_threads_run_side_by_side(loopback: LoopbackServer) -> None:
    loopback.default = systemone(delay=0.05)
    model = evaluator(loopback)
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda _: run_example_check(model), range(16)))
    assert {outcome.verdict.verdict for outcome in outcomes} <= {"pass", "fail", "unsure"}
    assert loopback.count() == 16
    assert len(model._clients.current()) == 1


REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")


class Tracing:
    """An evaluator that reads the host's context variable, as a tracing library would."""

    model = "tracing-1"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def answer(self, bundle: Bundle) -> Reply:
        self.seen.append(REQUEST_ID.get("unset"))
        return Reply("tracing-1", [YesNoAnswer(0.99)] * len(bundle.check))


def test_the_evaluator_sees_the_callers_context_variables() -> None:
    check = parse_check("The summary names the vendor.")
    tracing = Tracing()

    def call(request: str) -> None:
        REQUEST_ID.set(request)
        run_check_sync(check, material(), tracing, limits=Limits())

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(call, ["a", "b", "c", "d"]))
    assert sorted(tracing.seen) == ["a", "b", "c", "d"]
    assert REQUEST_ID.get("unset") == "unset"


def test_every_client_shares_one_tls_context(loopback: LoopbackServer) -> None:
    from checkprofile.adapters.openai_chat import ChatEvaluator

    chat = ChatEvaluator("m", base_url=loopback.url + "/v1", api_key="k")
    one = evaluator(loopback)
    context = shared_ssl_context()
    assert shared_ssl_context() is context
    clients: list[Any] = [
        chat._clients.current()[0]._client,
        one._clients.current()[0]._http_client,
    ]
    for client in clients:
        assert client._transport._pool._ssl_context is context


EXIT_SCRIPT = """
import atexit, logging, sys, threading
sys.path.insert(0, {tests!r})
# asyncio's debug mode (-X dev) warns of every step slower than 0.1 s: on a loaded machine that
# says how busy the machine is, not what the library left open. Everything else it reports
# (a task destroyed while pending, a callback's exception) still reaches stderr and fails.
logging.getLogger("asyncio").addFilter(
    lambda record: not (str(record.msg).startswith("Executing ") and " took " in str(record.msg))
)
from loopback import LoopbackServer, decisions, run_example_check, systemone

def survivors():
    names = [t.name for t in threading.enumerate() if t.name.startswith("checkprofile")]
    print("threads at exit:", names)

atexit.register(survivors)  # runs after checkprofile's own exit handler (last in, first out)

from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator

with LoopbackServer(default=systemone()) as one, LoopbackServer(default=decisions()) as dec:
    models = [
        SystemOneEvaluator("jev-latest", base_url=one.url, api_key="k", timeout=5),
        DecisionsEvaluator("o-1", base_url=dec.url + "/v1", api_key="k", timeout=5),
    ]
    for model in models:
        for _ in range(2):
            print(run_example_check(model).verdict.verdict)
    # The servers stop while the clients still hold open connections to them.
"""


def test_the_loop_and_its_connections_close_cleanly_at_exit() -> None:
    script = textwrap.dedent(EXIT_SCRIPT.format(tests=str(TESTS)))
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no ResourceWarning, no "Exception ignored", no traceback
    lines = done.stdout.splitlines()
    assert "error" not in lines[:4]
    assert lines[-1] == "threads at exit: []"


STUCK_AT_EXIT_SCRIPT = """
import asyncio, atexit, sys, threading
sys.path.insert(0, {tests!r})
from support import material
from checkprofile import Limits, Reply, YesNoAnswer, parse_check, run_check_sync

def survivors():
    names = [t.name for t in threading.enumerate() if t.name.startswith("checkprofile")]
    print("threads at exit:", names, flush=True)

atexit.register(survivors)  # runs after checkprofile's own exit handler (last in, first out)
inside = threading.Event()

class Stubborn:
    model = "stubborn-1"

    async def answer(self, bundle):
        inside.set()
        while True:  # a client that swallows its cancellation and goes on waiting
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                pass

check = parse_check("The summary names the vendor.")
threading.Thread(
    target=run_check_sync, args=(check, material(), Stubborn()),
    kwargs={{"limits": Limits()}}, daemon=True,
).start()
assert inside.wait(10)
print("exiting", flush=True)
"""


def test_exit_goes_on_past_an_evaluator_that_will_not_stop() -> None:
    # The loop's closing waits a bounded time for what runs on it; past that, exit goes on
    # quietly and the loop's thread still stops, rather than a traceback at exit.
    script = textwrap.dedent(STUCK_AT_EXIT_SCRIPT.format(tests=str(TESTS)))
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.stdout.splitlines() == ["exiting", "threads at exit: []"]
    assert time.monotonic() - began < 60


class Blocking:
    """An evaluator that blocks the loop inside its async answer, as a synchronous client in
    async code does."""

    model = "blocking-1"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.inside = threading.Event()

    async def answer(self, bundle: Bundle) -> Reply:
        self.inside.set()
        time.sleep(self.seconds)  # holds the loop's thread
        return Reply("blocking-1", [YesNoAnswer(0.99)] * len(bundle.check))


def test_an_evaluator_that_blocks_the_loop_stalls_only_its_own_check(
    loopback: LoopbackServer,
) -> None:
    # Issue 21, finding 11: another thread's fast check waited 2.7 s behind it.
    check = parse_check("The summary names the vendor.")
    blocking = Blocking(3.0)
    loopback.default = systemone()
    model = evaluator(loopback)
    run_example_check(model)  # the model's client lives on the shared loop
    with ThreadPoolExecutor(2) as pool:
        held = pool.submit(run_check_sync, check, material(), blocking, limits=Limits())
        assert blocking.inside.wait(5)
        fast: list[float] = []
        for _ in range(3):
            began = time.monotonic()
            outcome = run_example_check(model)
            fast.append(time.monotonic() - began)
            assert outcome.verdict.verdict != "error"
        # The first waits at most the stall (0.25 s) and a new loop; the others none.
        assert fast[0] < 1.0, fast
        assert max(fast[1:]) < 0.5, fast
        assert not held.done()  # the fast checks did not wait for it
        assert held.result(timeout=10).verdict.verdict == "pass"
    # The fresh loop's client is reused from call to call, and the held loop's is closed
    # with it once its check is done.
    deadline = time.monotonic() + 5
    while len(model._clients.current()) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(model._clients.current()) == 1
    assert loopback.count() == 4


def test_checks_on_a_loop_held_by_nothing_stay_on_it() -> None:
    # No check moves while the loop is free: the clients stay the ones of the first call.
    from checkprofile._sync_loop import SYNC_LOOP

    check = parse_check("The summary names the vendor.")
    before = SYNC_LOOP.loop()
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(
                lambda _: run_check_sync(check, material(), Tracing(), limits=Limits()), range(32)
            )
        )
    assert SYNC_LOOP.loop() is before
