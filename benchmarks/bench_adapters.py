"""Benchmark: the cost around each model call, for every adapter, against the SDKs alone.

    python benchmarks/bench_adapters.py [--checks 50] [--latency 0.1] [--repeat 5] [--spread 1]

The host (tests/loopback.py, a real HTTP server on 127.0.0.1) runs in its own process, as a
real host would, and speaks System One, OpenAI Decisions and chat completions. Rows (issue
13), each printed with "before" (the old way, rebuilt here in the same run) and the goal:

* building one adapter (System One, Decisions, chat), after the first: before, every client
  loaded the CA certificates into a TLS context of its own; now the process shares one;
* ``run_check_sync``, per call, against a host that answers at once (so all of it is beyond
  the model's own time): before, every call ran ``asyncio.run`` on a new loop, with a new
  client, a new TLS context and a new connection;
* ``--checks`` checks at once against a host answering after ``--latency`` seconds: wall time
  as a ratio to the same SDK sending the same requests without the library (for chat, before
  is the SDK's ``create`` per question, as the adapter used to call it); the best of
  ``--repeat`` rounds of each, the rounds taking turns; with ``--spread N``, that whole measure
  N times, and the row gives the median ratio with its range over them;
* library CPU per check, without the network: bundle, request, strict reading, combine.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import openai
import typesafe_sdk
from bench_core import CHECK, FITS, make_run
from loopback import (
    LoopbackServer,
    Recorded,
    Scripted,
    decisions,
    decisions_answers,
    systemone,
    systemone_answers,
)
from pydantic import BaseModel

from checkprofile import (
    Answer,
    Bundle,
    Evaluator,
    Failure,
    Limits,
    Material,
    Question,
    Submission,
    build_bundle,
    combine,
    run_check,
    run_check_sync,
)
from checkprofile.adapters import _common
from checkprofile.adapters import openai_decisions as decisions_module
from checkprofile.adapters._common import material_state
from checkprofile.adapters.openai_chat import (
    SYSTEM_MESSAGE,
    ChatEvaluator,
    material_message,
    question_message,
    read_response,
    request_head,
)
from checkprofile.adapters.openai_decisions import DecisionsEvaluator, decisions_question
from checkprofile.adapters.systemone import SystemOneEvaluator, _read, system_one_question

LABELS = {"yes or no": "yes", "letter": "B", "digit": "2"}


def chat(delay: float) -> Callable[[Recorded], Scripted]:
    """A chat completions host: a confident first-token label for whatever is asked."""

    def respond(request: Recorded) -> Scripted:
        asked = request.json["messages"][-1]["content"]
        label = next(label for words, label in LABELS.items() if words in asked)
        top = [
            {"token": label, "logprob": math.log(0.97)},
            {"token": "x", "logprob": math.log(0.03)},
        ]
        body = {
            "id": "c-1",
            "object": "chat.completion",
            "created": 0,
            "model": "local-model-1",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "message": {"role": "assistant", "content": label},
                    "logprobs": {"content": [{**top[0], "top_logprobs": top}]},
                }
            ],
        }
        return Scripted(json=body, delay=delay)

    return respond


def host(delay: float) -> Callable[[Recorded], Scripted]:
    by_path = {
        "/v1/systemone": systemone(delay=delay),
        "/v1/decisions": decisions(delay=delay),
        "/v1/chat/completions": chat(delay),
    }
    return lambda request: by_path[request.path](request)


def serve(latency: float, urls: multiprocessing.Queue[Any], stop: Event) -> None:
    """The hosts, in their own process: their work does not share this process's interpreter.
    One answers at once, one after ``latency``."""
    with LoopbackServer(default=host(0.0)) as quick, LoopbackServer(default=host(latency)) as slow:
        urls.put((quick.url, slow.url))
        stop.wait()


def material(index: int) -> Material:
    """The same fits size as bench_core (about 29 KB of run data)."""
    return Material(
        instructions="Check the vendor against the OFAC and EU lists. Attach the report.",
        body="# Vendor onboarding\n",
        run_data=make_run(*FITS[0]) | {"inputs": {"vendor": f"Vendor {index}"}},
        submission=Submission({"cleared": True}, summary=f"Vendor {index} is cleared."),
    )


Make = Callable[[str], Any]


def makers() -> dict[str, Make]:
    return {
        "System One": lambda url: SystemOneEvaluator("jev", base_url=url, api_key="b", timeout=10),
        "Decisions": lambda url: DecisionsEvaluator("o", base_url=url + "/v1", api_key="b"),
        "chat": lambda url: ChatEvaluator("m", base_url=url + "/v1", api_key="b", timeout=10),
    }


class LegacyChat(ChatEvaluator):
    """The chat adapter as it asked before: the SDK's ``create`` for each question, which
    checks, copies and writes the whole material again for every request."""

    async def answer(self, bundle: Bundle) -> Any:
        client = self._clients.get()
        prefix = [
            {"role": "system", "content": SYSTEM_MESSAGE},
            {"role": "user", "content": material_message(bundle)},
        ]
        results = await asyncio.gather(*(self._legacy(client, prefix, q) for q in bundle.check))
        from checkprofile import Reply

        return Reply("local-model-1", [entry for _, entry in results])

    async def _legacy(self, client: Any, prefix: list[Any], question: Question) -> Any:
        messages = [*prefix, {"role": "user", "content": question_message(question)}]
        raw = await client.chat.completions.with_raw_response.create(
            model=self._model,
            messages=messages,
            max_tokens=1,
            logprobs=True,
            top_logprobs=self._top_logprobs,
            temperature=0,
        )
        return read_response(json.loads(raw.content), question)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def building(url: str, repeat: int) -> dict[str, tuple[float, float]]:
    """Per adapter: ms to build one, before (a TLS context each) and after (shared)."""
    result = {}
    for name, make in makers().items():
        make(url)  # the first: SDK imported, the shared context loaded
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(repeat):
            for shared in (False, True):
                if not shared:
                    _common._ssl_context = None  # as before: every client loads its own
                start = time.perf_counter()
                make(url)
                times[shared].append(time.perf_counter() - start)
        result[name] = (median_ms(times[False]), median_ms(times[True]))
    return result


def sync_calls(url: str, repeat: int) -> dict[str, tuple[float, float, float]]:
    """Per adapter: ms per run_check_sync call, before (asyncio.run, new loop, new client, new
    TLS context, new connection) and after, against a host that answers at once; and ms for
    the SDK alone to send the same requests one check at a time on a loop it keeps (the
    model's own time here: the host's, the HTTP stack's and the SDK's)."""
    result = {}
    limits = Limits()
    chosen = material(0)
    bundle = build_bundle(CHECK, chosen, state_bytes=limits.check_state_bytes)
    for name, make in makers().items():
        evaluator = make(url)
        run_check_sync(CHECK, chosen, evaluator, limits=limits)  # warm
        before, after, alone = [], [], []
        loop = asyncio.new_event_loop()
        client, requests = loop.run_until_complete(_sdk_on_loop(name, url))

        async def send() -> None:
            await asyncio.gather(*requests(bundle))  # noqa: B023 (run in this iteration)

        loop.run_until_complete(send())  # warm
        for _ in range(repeat):
            _common._ssl_context = None
            start = time.perf_counter()
            asyncio.run(run_check(CHECK, chosen, evaluator, limits=limits))
            before.append(time.perf_counter() - start)
            start = time.perf_counter()
            outcome = run_check_sync(CHECK, chosen, evaluator, limits=limits)
            after.append(time.perf_counter() - start)
            assert outcome.verdict.verdict != "error", outcome.failures
            start = time.perf_counter()
            loop.run_until_complete(send())
            alone.append(time.perf_counter() - start)
        close = getattr(client, "aclose", None) or client.close
        loop.run_until_complete(close())
        loop.close()
        result[name] = (median_ms(before), median_ms(after), median_ms(alone))
    return result


async def _sdk_on_loop(name: str, url: str) -> tuple[Any, Callable[[Bundle], list[Awaitable[Any]]]]:
    return sdk_requests(name, url)


async def library_round(evaluator: Evaluator, checks: int) -> float:
    materials = [material(i) for i in range(checks)]
    start = time.perf_counter()
    outcomes = await asyncio.gather(
        *(run_check(CHECK, m, evaluator, limits=Limits()) for m in materials)
    )
    wall = time.perf_counter() - start
    assert {o.verdict.verdict for o in outcomes} <= {"pass", "fail", "unsure"}
    return wall


def sdk_requests(name: str, url: str) -> tuple[Any, Callable[[Bundle], list[Awaitable[Any]]]]:
    """The SDK alone: a client, and the requests the adapter sends for one bundle."""
    if name == "System One":
        one = typesafe_sdk.AsyncTypeSafeClient(
            api_key="b", base_url=url, retry=typesafe_sdk.RetryPolicy(max_retries=0), timeout=10
        )
        questions = {f"q{i}": system_one_question(q) for i, q in enumerate(CHECK)}
        return one, lambda b: [one.system_one(state=material_state(b), questions=questions)]
    client = openai.AsyncOpenAI(api_key="b", base_url=url + "/v1", max_retries=0, timeout=10)
    if name == "Decisions":
        asked = [decisions_question(q, f"q{i}") for i, q in enumerate(CHECK)]

        def decide(b: Bundle) -> list[Awaitable[Any]]:
            message: Any = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_json", "data": material_state(b)}],
            }
            create = client.decisions.with_raw_response.create
            return [create(model="o", input=[message], questions=asked)]

        return client, decide

    def ask(b: Bundle) -> list[Awaitable[Any]]:
        prefix: list[Any] = [
            {"role": "system", "content": SYSTEM_MESSAGE},
            {"role": "user", "content": material_message(b)},
        ]
        create = client.chat.completions.with_raw_response.create
        return [
            create(
                model="m",
                messages=[*prefix, {"role": "user", "content": question_message(q)}],
                max_tokens=1,
                logprobs=True,
                top_logprobs=20,
                temperature=0,
            )
            for q in CHECK
        ]

    return client, ask


async def sdk_round(requests: Callable[[Bundle], list[Awaitable[Any]]], checks: int) -> float:
    bundles = [build_bundle(CHECK, material(i), state_bytes=65536) for i in range(checks)]
    start = time.perf_counter()
    await asyncio.gather(*(call for b in bundles for call in requests(b)))
    return time.perf_counter() - start


class Together(NamedTuple):
    """One measure of many checks at once, in seconds: walls, and this process's CPU."""

    before: float | None
    library: float
    alone: float
    library_cpu: float
    alone_cpu: float


async def concurrent(url: str, checks: int, repeat: int) -> dict[str, Together]:
    """Per adapter: the best wall of ``checks`` checks at once, before (chat only), library,
    SDK alone, in seconds; and the best CPU time of this process (the host's is not in it)
    for the library's rounds and the SDK's.

    The rounds take turns (library, SDK alone, library, ...), so a busy moment of this shared
    machine falls on both sides alike; and the best round of each side is its figure, as in
    bench_core: the machine's noise only ever adds time. Both sides are CPU-bound here (50
    requests whose SDK work outlasts the latency), so a ratio of medians moves by a fifth
    from run to run."""
    result: dict[str, Together] = {}
    for name, make in makers().items():
        evaluator = make(url)
        client, requests = sdk_requests(name, url)
        legacy = LegacyChat("m", base_url=url + "/v1", api_key="b", timeout=10)
        await library_round(evaluator, checks)  # warm: connections open, code loaded
        await sdk_round(requests, checks)
        if name == "chat":
            await library_round(legacy, checks)
        library: list[float] = []
        alone: list[float] = []
        before: list[float] = []
        cpu: dict[str, list[float]] = {"library": [], "alone": []}
        for _ in range(repeat):
            start = time.process_time()
            library.append(await library_round(evaluator, checks))
            cpu["library"].append(time.process_time() - start)
            start = time.process_time()
            alone.append(await sdk_round(requests, checks))
            cpu["alone"].append(time.process_time() - start)
            if name == "chat":
                before.append(await library_round(legacy, checks))
        await legacy.aclose()
        await evaluator.aclose()
        close = getattr(client, "aclose", None) or client.close
        await close()
        result[name] = Together(
            before=min(before) if before else None,
            library=min(library),
            alone=min(alone),
            library_cpu=min(cpu["library"]),
            alone_cpu=min(cpu["alone"]),
        )
    return result


def library_cpu(repeat: int) -> dict[str, float]:
    """Per adapter: seconds checkprofile spends on one check without the network: the bundle,
    the request as the adapter gives it (the state for the SDK to write; the chat bodies,
    written by the adapter), the strict reading of a valid reply, combine."""
    yes, letter, digit = (
        {
            "model": "m",
            "choices": [
                {"logprobs": {"content": [{"token": t, "logprob": -0.01, "top_logprobs": []}]}}
            ],
        }
        for t in ("yes", "B", "2")
    )
    questions = {f"q{i}": system_one_question(q) for i, q in enumerate(CHECK)}
    asked = {
        "questions": {
            name: q.model_dump(exclude_none=True) if isinstance(q, BaseModel) else dict(q)
            for name, q in questions.items()
        }
    }
    fake = Recorded(method="POST", path="/", headers={}, body=b"", json=asked, at=0.0)
    # The answers as the host writes them: the adapter reads each one raw.
    s1_answers = systemone_answers(fake)
    named = [decisions_question(q, f"q{i}") for i, q in enumerate(CHECK)]
    fake = Recorded(
        method="POST", path="/", headers={}, body=b"", json={"questions": named}, at=0.0
    )
    decided = json.dumps({"model": "m", "answers": decisions_answers(fake)})
    chat_evaluator = ChatEvaluator("m", base_url="http://127.0.0.1:9/v1", api_key="b")

    def one_check(name: str, index: int) -> None:
        bundle = build_bundle(CHECK, material(index), state_bytes=65536)
        entries: list[Answer | Failure]
        if name == "chat":
            # The adapter's own writing: the head once per check, a body per question.
            head = request_head(bundle)
            for q in CHECK:
                chat_evaluator._body(head, question_message(q))
            entries = [
                read_response(r, q)[1] for r, q in zip((yes, letter, digit), CHECK, strict=True)
            ]
        else:
            material_state(bundle)  # the SDK writes it, alone as with the library
            if name == "System One":
                [system_one_question(q) for q in CHECK]
                entries = [_read(q, s1_answers[f"q{j}"]) for j, q in enumerate(CHECK)]
            else:
                [decisions_question(q, f"q{j}") for j, q in enumerate(CHECK)]
                _, found = decisions_module._decision(json.loads(decided))
                by = decisions_module._by_question(found, len(CHECK))
                entries = [decisions_module._read(q, by[j]) for j, q in enumerate(CHECK)]
        answers = [a for a in entries if not isinstance(a, Failure)]
        if len(answers) == len(CHECK):
            combine(CHECK, answers, model="m", at="2026-10-06T09:04:20Z")

    # The adapters take turns, round after round, and each keeps its best round: a busy
    # stretch of this shared machine falls on all of them alike, and only ever adds time.
    result = dict.fromkeys(makers(), math.inf)
    gc.collect()  # what the rounds before left behind is not collected during these
    for _ in range(repeat):
        for name in result:
            start = time.perf_counter()
            for i in range(20):
                one_check(name, i)
            result[name] = min(result[name], (time.perf_counter() - start) / 20)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--checks", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--spread", type=int, default=1, help="how many times to take the checks-at-once measure"
    )
    options = parser.parse_args()
    load = os.getloadavg()
    urls: multiprocessing.Queue[Any] = multiprocessing.Queue()
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(options.latency, urls, stop), daemon=True)
    server.start()
    try:
        quick, slow = urls.get(timeout=30)
        built = building(quick, max(options.repeat, 5))
        calls = sync_calls(quick, max(options.repeat, 5))
        runs = [
            asyncio.run(concurrent(slow, options.checks, options.repeat))
            for _ in range(max(options.spread, 1))
        ]
    finally:
        stop.set()
        server.join(timeout=10)
    cpu = library_cpu(options.repeat)

    def row(what: str, before: str, after: float, goal: str) -> None:
        print(f"{what:58} {before:>9} {after:9.2f} {goal:>9}")

    print(f"{'what':58} {'before':>9} {'after':>9} {'goal':>9}")
    for name, (before, after) in built.items():
        row(f"building one {name} adapter, after the first (ms)", f"{before:.2f}", after, "1")
    for name, (before, after, alone) in calls.items():
        what = f"run_check_sync per call beyond the model's time, {name} (ms)"
        row(what, f"{before - alone:.2f}", after - alone, "5")
        print(f"{'':58}   per call {after:.2f} ms; the SDK alone {alone:.2f} ms")
    latency = options.latency
    for name in makers():
        measures = [run[name] for run in runs]
        ratios = [m.library / m.alone for m in measures]
        # The measure whose ratio is the median speaks for the row.
        middle = sorted(range(len(ratios)), key=ratios.__getitem__)[(len(ratios) - 1) // 2]
        chosen = measures[middle]
        before_text = f"{chosen.before / chosen.alone:.2f}" if chosen.before is not None else "-"
        what = f"{options.checks} checks at once, {name}, wall / SDK alone"
        row(what, before_text, ratios[middle], "1.1")
        print(
            f"{'':58}   wall {chosen.library * 1000:.0f} ms = {chosen.library / latency:.2f}x"
            f" latency; SDK alone {chosen.alone * 1000:.0f} ms = {chosen.alone / latency:.2f}x;"
            f" CPU {chosen.library_cpu * 1000:.0f} / {chosen.alone_cpu * 1000:.0f} ms"
            f" = {chosen.library_cpu / chosen.alone_cpu:.2f}"
        )
        if len(ratios) > 1:
            print(
                f"{'':58}   over {len(ratios)} measures: median {ratios[middle]:.2f},"
                f" range {min(ratios):.2f} to {max(ratios):.2f}"
                f" ({', '.join(f'{r:.2f}' for r in ratios)})"
            )
    for name, seconds in cpu.items():
        row(f"library CPU per check, {name}, no network (ms)", "-", seconds * 1000, "0.5")
    end = os.getloadavg()
    print(
        f"load average (1, 5, 15 min) at the start {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f};"
        f" at the end {end[0]:.2f}, {end[1]:.2f}, {end[2]:.2f}"
        f" ({os.cpu_count()} CPUs)"
    )


if __name__ == "__main__":
    main()
