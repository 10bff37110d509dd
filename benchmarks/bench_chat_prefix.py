"""Benchmark: how much of the chat fallback's traffic is the prefix every request shares.

    python benchmarks/bench_chat_prefix.py [--run-kb 20] [--repeat 15]

One three-question check (yes/no, choice, rubric) over run data of about ``--run-kb`` KB goes
through ``run_check`` and ChatEvaluator to a loopback /v1/chat/completions server
(tests/loopback.py), which records the request bodies exactly as the ``openai`` SDK sent them.
Figures:

* shared-prefix share: the bytes the three bodies have in common from their first byte,
  counted in each body, as a share of all request bytes (the issue's figure);
* reusable share: the prefix bytes a provider's prompt cache can skip -- every request's
  prefix but the first -- as a share of all request bytes, and the same for the prompt text
  alone (message contents, which is what a provider tokenizes);
* render cost: the median time to render the material message for one check, against one
  ``json.dumps`` of the run data (the prefix is built once per check, not per question).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from loopback import LoopbackServer, Recorded, Scripted

from checkprofile import Limits, Material, Submission, build_bundle, parse_check, run_check
from checkprofile.adapters.openai_chat import ChatEvaluator, material_message

CHECK = parse_check(
    [
        {"ask": "The cleared verdict matches what the attached report says.", "fail": 0.5},
        {
            "ask": "What does the summary do?",
            "one_of": {"states": "States the verdict.", "hedges": "Avoids a verdict."},
            "pass": ["states"],
            "confidence": 0.5,
        },
        {
            "ask": "How complete is the screening?",
            "levels": ["Neither list.", "One list.", "Both lists, with search terms."],
            "pass": 2,
            "confidence": 0.5,
        },
    ]
)

# Each question's labels, the one its answer puts first leading (yes; A = states; 2 = both).
_LABELS = {"The cleared": ["yes", "no"], "What does": ["A", "B"], "How complete": ["2", "1", "0"]}


def run_data(kilobytes: int) -> dict[str, Any]:
    """Run data of about ``kilobytes`` KB as the evaluator sees it (compact JSON)."""
    note = "Screened against the consolidated list; no match on name, alias or address. "
    steps: dict[str, Any] = {}
    size = 0
    while size < kilobytes * 1000:
        step = {"output": {"note": note * 4, "matches": []}, "status": "done"}
        steps[f"step_{len(steps):03}"] = step
        size += len(json.dumps({f"step_{len(steps):03}": step}, separators=(",", ":")))
    return {"inputs": {"vendor": "Acme GmbH", "lists": ["OFAC", "EU"]}, "steps": steps}


def respond(request: Recorded) -> Scripted:
    question = request.json["messages"][-1]["content"]
    label, *others = next(labels for start, labels in _LABELS.items() if start in question)
    top = [{"token": label, "logprob": -0.1}]
    top += [{"token": other, "logprob": -4.0} for other in others]
    return Scripted(
        json={
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1790000000,
            "model": "bench-model-2026-09-30",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "message": {"role": "assistant", "content": label},
                    "logprobs": {
                        "content": [{"token": label, "logprob": -0.1, "top_logprobs": top}]
                    },
                }
            ],
        }
    )


def common_prefix(texts: list[bytes]) -> int:
    # The longest prefix of all texts is the longest of the (lexicographic) first and last.
    first, last = min(texts), max(texts)
    for index, byte in enumerate(first):
        if last[index] != byte:
            return index
    return len(first)


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    action()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description="the chat fallback's shared request prefix")
    parser.add_argument("--run-kb", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()

    material = Material(
        instructions="Check the vendor against the OFAC and EU lists. Attach the report.",
        body="# Vendor onboarding\n\nScreen every new vendor before the first order.\n",
        run_data=run_data(options.run_kb),
        submission=Submission(
            {"cleared": True, "lists": ["OFAC", "EU"]},
            summary="Acme GmbH is cleared: no match on the OFAC or EU list.",
            evidence=[{"kind": "file", "ref": "reports/acme.pdf"}],
        ),
    )
    limits = Limits()
    bundle = build_bundle(CHECK, material, state_bytes=limits.check_state_bytes)
    assert not bundle.truncated

    with LoopbackServer(default=respond) as server:
        chat = ChatEvaluator("bench-model", base_url=server.url + "/v1", api_key="bench")
        outcome = asyncio.run(run_check(CHECK, material, chat, limits=limits))
        bodies = [request.body for request in server.requests]
        messages = [request.json["messages"] for request in server.requests]
    assert outcome.verdict.verdict == "pass", outcome.verdict
    assert len(bodies) == 3

    total = sum(len(body) for body in bodies)
    prefix = common_prefix(bodies)
    shared = prefix * len(bodies)
    reusable = prefix * (len(bodies) - 1)
    texts = [[m["content"].encode("utf-8") for m in request] for request in messages]
    text_total = sum(len(part) for request in texts for part in request)
    text_prefix = sum(len(part) for part in texts[0][:2])
    assert all(request[:2] == texts[0][:2] for request in texts)

    render = median_seconds(lambda: material_message(bundle), options.repeat)
    dumps = median_seconds(lambda: json.dumps(material.run_data), options.repeat)

    print(
        f"check: 3 questions; run data shown: {bundle.run_data_bytes:,} bytes;"
        f" request bodies: {', '.join(f'{len(body):,}' for body in bodies)} bytes"
    )
    print(f"shared prefix per request: {prefix:,} bytes")
    print(f"shared-prefix share of request bytes: {shared / total:.1%} ({shared:,} of {total:,})")
    print(
        f"reusable by a prefix cache (all requests but the first): {reusable / total:.1%}"
        f" of request bytes; {text_prefix * 2 / text_total:.1%} of prompt text"
    )
    print(
        f"material message rendered once per check: {render * 1000:.3f} ms"
        f" ({render / dumps:.2f} x one json.dumps of the run data)"
    )


if __name__ == "__main__":
    main()
