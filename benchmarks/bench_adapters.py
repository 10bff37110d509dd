"""Benchmark: 50 checks at once through SystemOneEvaluator against a loopback System One host.

    python benchmarks/bench_adapters.py [--checks 50] [--latency 0.1] [--repeat 5]

The host (tests/loopback.py, a real HTTP server on 127.0.0.1) runs in its own process, as a
real host would, and answers every request after ``--latency`` seconds. All checks run
concurrently through ``run_check`` with one evaluator, so the wall time is one latency plus
what the client side adds. Three figures, each the median of ``--repeat`` rounds after one
warm-up round (connections pooled, as a host would run it):

* library: the 50 checks through run_check and SystemOneEvaluator, as wall time / latency
  (the target is close to 1);
* SDK alone: the same 50 requests sent straight through typesafe-sdk, with the same state and
  questions -- the floor the HTTP stack sets on this machine;
* library CPU: what checkprofile itself spends per check without the network (bundle, state,
  questions, strict reading, combine).

The library adds almost nothing when "library" is close to "SDK alone".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import time
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import typesafe_sdk

# The same three-question check as the core benchmark.
from bench_core import CHECK
from loopback import LoopbackServer, Recorded, systemone, systemone_answers
from pydantic import BaseModel

from checkprofile import (
    Answer,
    Failure,
    Limits,
    Material,
    Submission,
    build_bundle,
    combine,
    run_check,
)
from checkprofile.adapters._common import material_state
from checkprofile.adapters.systemone import SystemOneEvaluator, _read, system_one_question


def material(index: int) -> Material:
    steps: dict[str, Any] = {
        f"step_{i:02}": {"output": {"note": "Screened; no match on name or alias. " * 10}}
        for i in range(20)
    }
    return Material(
        instructions="Check the vendor against the OFAC and EU lists. Attach the report.",
        body="# Vendor onboarding\n",
        run_data={"inputs": {"vendor": f"Vendor {index}"}, "steps": steps},
        submission=Submission({"cleared": True}, summary=f"Vendor {index} is cleared."),
    )


async def one_round(evaluator: SystemOneEvaluator, checks: int) -> float:
    materials = [material(i) for i in range(checks)]
    start = time.perf_counter()
    outcomes = await asyncio.gather(
        *(run_check(CHECK, m, evaluator, limits=Limits()) for m in materials)
    )
    wall = time.perf_counter() - start
    verdicts = {outcome.verdict.verdict for outcome in outcomes}
    if verdicts != {"pass"}:
        raise SystemExit(f"expected every check to pass, got {sorted(verdicts)}")
    return wall


async def sdk_round(client: typesafe_sdk.AsyncTypeSafeClient, checks: int) -> float:
    bundles = [build_bundle(CHECK, material(i), state_bytes=65536) for i in range(checks)]
    questions = {f"q{i}": system_one_question(q) for i, q in enumerate(CHECK)}
    states = [material_state(bundle) for bundle in bundles]
    start = time.perf_counter()
    await asyncio.gather(*(client.system_one(state=s, questions=questions) for s in states))
    return time.perf_counter() - start


async def measure(url: str, checks: int, repeat: int) -> tuple[list[float], list[float]]:
    evaluator = SystemOneEvaluator("jev-latest", base_url=url, api_key="bench", timeout=10)
    try:
        await one_round(evaluator, checks)  # warm-up: connections opened, code paths loaded
        library = [await one_round(evaluator, checks) for _ in range(repeat)]
    finally:
        await evaluator.aclose()
    client = typesafe_sdk.AsyncTypeSafeClient(
        api_key="bench", base_url=url, retry=typesafe_sdk.RetryPolicy(max_retries=0), timeout=10
    )
    try:
        await sdk_round(client, checks)
        alone = [await sdk_round(client, checks) for _ in range(repeat)]
    finally:
        await client.aclose()
    return library, alone


def library_cpu(repeat: int) -> float:
    """Seconds checkprofile spends on one check without the network, median of ``repeat``."""
    questions = {f"q{i}": system_one_question(q) for i, q in enumerate(CHECK)}
    body = {
        "questions": {
            name: q.model_dump(exclude_none=True) if isinstance(q, BaseModel) else dict(q)
            for name, q in questions.items()
        }
    }
    fake = Recorded(method="POST", path="/", headers={}, body=b"", json=body, at=0.0)
    wire = typesafe_sdk.SystemOneResponse.model_validate_json(
        json.dumps(
            {
                "model": "m",
                "answers": systemone_answers(fake),
                "usage": {"input_tokens": 1, "output_tokens": 0},
            }
        )
    )
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(100):
            bundle = build_bundle(CHECK, material(i), state_bytes=65536)
            material_state(bundle)
            {f"q{j}": system_one_question(q) for j, q in enumerate(CHECK)}
            read: list[Answer | Failure] = [
                _read(q, wire.answers[f"q{j}"]) for j, q in enumerate(CHECK)
            ]
            answers = [a for a in read if not isinstance(a, Failure)]
            combine(CHECK, answers, model="m", at="2026-10-06T09:04:20Z")
        times.append((time.perf_counter() - start) / 100)
    return statistics.median(times)


def serve(latency: float, urls: multiprocessing.Queue[Any], stop: Event) -> None:
    """The host, in its own process: its work does not share this process's interpreter."""
    with LoopbackServer(default=systemone(delay=latency)) as server:
        urls.put(server.url)
        stop.wait()
        urls.put(server.count())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--checks", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    urls: multiprocessing.Queue[Any] = multiprocessing.Queue()
    stop = multiprocessing.Event()
    host = multiprocessing.Process(target=serve, args=(options.latency, urls, stop), daemon=True)
    host.start()
    try:
        url = urls.get(timeout=30)
        library, alone = asyncio.run(measure(url, options.checks, options.repeat))
    finally:
        stop.set()
    requests = urls.get(timeout=30)
    host.join(timeout=10)
    expected = 2 * options.checks * (options.repeat + 1)
    if requests != expected:
        raise SystemExit(f"expected {expected} requests (one per check), got {requests}")
    cpu = library_cpu(options.repeat)
    latency = options.latency
    print(
        f"{options.checks} concurrent checks, {latency * 1000:.0f} ms host latency,"
        f" median of {options.repeat} rounds"
    )
    for name, walls in (("library", library), ("SDK alone", alone)):
        median = statistics.median(walls)
        print(
            f"  {name:<10} {median * 1000:7.1f} ms   {median / latency:5.2f}x latency"
            f"   (rounds: {', '.join(f'{w * 1000:.0f}' for w in walls)} ms)"
        )
    added = statistics.median(library) - statistics.median(alone)
    print(f"  library minus SDK alone: {added * 1000:+.1f} ms for {options.checks} checks")
    print(f"  library CPU per check, no network: {cpu * 1000:.2f} ms")


if __name__ == "__main__":
    main()
