"""The provider boundary: a hostile host never passes a check, hangs it, or exhausts memory.

Each test is a finding of issue 20, reproduced on loopback against all three adapters through
their real SDKs: a redirect to a host that would answer pass; an answer dripped a byte at a
time; a chunked body that never ends; a gzip bomb; a model name of megabytes. Memory is
measured with tracemalloc inside the test process (the loopback server runs in it too).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

from loopback import (
    LoopbackServer,
    Recorded,
    Scripted,
    chat,
    decisions,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
    systemone,
    vendor_material,
)

from checkprofile import (
    Bundle,
    Evaluator,
    Limits,
    Reply,
    YesNoAnswer,
    build_bundle,
    parse_check,
    run_check_sync,
)
from checkprofile.adapters.openai_chat import ChatEvaluator
from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from checkprofile.human import JsonLinesRecorder, read_records, verdict_record
from support import spec_full_form

BACKENDS = ["systemone", "decisions", "chat"]
PATHS = {"systemone": "/v1/systemone", "decisions": "/v1/decisions", "chat": "/v1/chat/completions"}
MB = 1024 * 1024


def answering(backend: str, model: str = "judge-2026-09-30") -> Any:
    """A responder that answers every question of ``backend`` well enough to pass."""
    return {"systemone": systemone, "decisions": decisions, "chat": chat}[backend](model)


def evaluator(backend: str, url: str, *, timeout: float = 5.0, **options: Any) -> Evaluator:
    if backend == "systemone":
        return SystemOneEvaluator(
            "jev-latest", base_url=url, api_key="k", timeout=timeout, **options
        )
    if backend == "decisions":
        return DecisionsEvaluator(
            "gpt-6-luna", base_url=f"{url}/v1", api_key="k", timeout=timeout, **options
        )
    return ChatEvaluator(
        "judge-latest", base_url=f"{url}/v1", api_key="k", timeout=timeout, **options
    )


def answer_once(chosen: Evaluator) -> tuple[Reply, float]:
    """One call of ``chosen.answer`` on the example check (one attempt), and its seconds."""
    bundle = build_bundle(
        parse_check(spec_full_form()),
        vendor_material(),
        state_bytes=Limits().check_state_bytes,
    )

    async def go() -> tuple[Reply, float]:
        start = time.monotonic()
        try:
            reply = await chosen.answer(bundle)
        finally:
            elapsed = time.monotonic() - start
            await chosen.aclose()  # type: ignore[attr-defined]
        return reply, elapsed

    return asyncio.run(go())


@pytest.fixture(name="other")
def other_fixture() -> Iterator[LoopbackServer]:
    """A second host, the one a redirect points to."""
    with LoopbackServer() as server:
        yield server


# --- Finding 9: no redirect is followed -------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_redirect_to_a_host_that_would_pass_is_never_followed(
    loopback: LoopbackServer, other: LoopbackServer, backend: str, status: int
) -> None:
    other.default = answering(backend)
    # "localhost": the target is another host than the one configured (127.0.0.1).
    target = other.url.replace("127.0.0.1", "localhost") + PATHS[backend] + "?token=s3cret"
    loopback.default = Scripted(status=status, headers={"Location": target})
    outcome = run_example_check(evaluator(backend, loopback.url))
    assert outcome.verdict.verdict == "error"
    assert other.count() == 0  # the request, key and submission never reached it
    assert {failure.reason for _, failure in outcome.failures} == {"redirected"}
    detail = outcome.failures[0][1].detail
    assert f"HTTP {status}" in detail
    assert "localhost" in detail
    assert "s3cret" not in detail and "token" not in detail


# --- Finding 10: one deadline per attempt -------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_answer_dripped_a_byte_at_a_time_ends_within_the_timeout_and_a_second(
    loopback: LoopbackServer, backend: str
) -> None:
    def drip(request: Recorded) -> Scripted:
        whole = answering(backend)(request)
        return Scripted(json=whole.json, drip=0.5)

    loopback.default = drip
    reply, elapsed = answer_once(evaluator(backend, loopback.url, timeout=2))
    assert elapsed < 2 + 1
    assert {entry.reason for entry in reply.answers} == {"timeout"}  # type: ignore[union-attr]


# --- Findings 11 and 12: the body is read under a cap, inflated under the same cap ----------------


@pytest.fixture(scope="module", name="bomb")
def bomb_fixture() -> bytes:
    """About 1 MB of gzip that inflates to 1 GiB of zeros."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(MB)
    parts = [packer.compress(block) for _ in range(1024)]
    parts.append(packer.flush())
    data = b"".join(parts)
    assert len(data) < 1.5 * MB
    return data


def peak_memory(run: Any) -> tuple[Any, int]:
    """What ``run()`` returns and the most memory it held at once beyond what was held before."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak - before


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_body_that_never_ends_costs_at_most_the_cap(
    loopback: LoopbackServer, backend: str
) -> None:
    loopback.default = Scripted(endless=True)
    (reply, elapsed), peak = peak_memory(
        lambda: answer_once(evaluator(backend, loopback.url, timeout=30))
    )
    assert peak < 100 * MB
    assert elapsed < 30  # stopped by the cap, not by the deadline
    failures = {(entry.reason, entry.detail) for entry in reply.answers}
    assert {reason for reason, _ in failures} == {"malformed"}
    assert all("max_response_bytes" in detail for _, detail in failures)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gzip_bomb_is_inflated_no_further_than_the_cap(
    loopback: LoopbackServer, backend: str, bomb: bytes
) -> None:
    loopback.default = Scripted(
        body=bomb, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
    )
    (reply, _), peak = peak_memory(lambda: answer_once(evaluator(backend, loopback.url)))
    assert peak < 100 * MB
    reasons = {entry.reason for entry in reply.answers}
    assert reasons == {"malformed"}
    assert "max_response_bytes" in reply.answers[0].detail


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compressed_answer_under_the_cap_is_read(loopback: LoopbackServer, backend: str) -> None:
    def packed(request: Recorded) -> Scripted:
        body = gzip.compress(json.dumps(answering(backend)(request).json).encode())
        return Scripted(
            body=body, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
        )

    loopback.default = packed
    outcome = run_example_check(evaluator(backend, loopback.url))
    assert outcome.verdict.verdict == "pass", outcome.failures
    assert loopback.last().headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_encoding_not_asked_for_is_not_read(loopback: LoopbackServer, backend: str) -> None:
    loopback.default = Scripted(body=b"\x28\xb5\x2f\xfd", headers={"Content-Encoding": "zstd"})
    outcome = run_example_check(evaluator(backend, loopback.url))
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"malformed"}
    assert "zstd" in outcome.failures[0][1].detail


@pytest.mark.parametrize("value", [0, 1023, 1.5e6, True, "4096"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_body_cap_is_refused_naming_it(backend: str, value: object) -> None:
    with pytest.raises(ValueError, match="max_response_bytes"):
        evaluator(backend, "http://127.0.0.1:9", max_response_bytes=value)


# --- Finding 13: a provider text that reaches a record is bounded ------------------------------


@pytest.mark.parametrize("cap", [None, 32 * MB], ids=["default-cap", "cap-above-the-name"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_name_of_9_mb_never_loses_the_verdict_record(
    loopback: LoopbackServer, tmp_path: Path, backend: str, cap: int | None
) -> None:
    loopback.default = answering(backend, model="m" * (9 * 1000 * 1000))
    options = {} if cap is None else {"max_response_bytes": cap}
    outcome = run_example_check(evaluator(backend, loopback.url, **options))
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"malformed"}
    assert len(outcome.verdict.model) < 100  # the configured model, not the host's text
    trail = tmp_path / "audit.jsonl"
    JsonLinesRecorder(str(trail)).record(verdict_record(outcome, run_id="r-1", step_id="s-1"))
    (record,) = read_records(trail)
    assert record.verdict.verdict == "error"  # type: ignore[union-attr]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_name_of_the_longest_allowed_length_is_kept(
    loopback: LoopbackServer, backend: str
) -> None:
    name = "m" * 256
    loopback.default = answering(backend, model=name)
    outcome = run_example_check(evaluator(backend, loopback.url))
    assert outcome.verdict.verdict == "pass", outcome.failures
    assert outcome.verdict.model == name


# --- Finding 5: a host that echoes the model name it was sent -----------------------------------

CONFIGURED = {"systemone": "jev-latest", "decisions": "gpt-6-luna", "chat": "judge-latest"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_name_that_only_echoes_the_one_sent_is_said_in_the_answers(
    loopback: LoopbackServer, backend: str
) -> None:
    # llama-cpp-python's server names whatever model the request names (gpt-4o was recorded
    # for a 146k-parameter model): the name says nothing about what answered.
    loopback.default = answering(backend, model=CONFIGURED[backend])
    outcome = run_example_check(evaluator(backend, loopback.url))
    assert outcome.verdict.verdict == "pass", outcome.failures
    assert outcome.verdict.model == CONFIGURED[backend]
    assert [answer.model_echoed for answer in outcome.answers] == [True] * 3
    # The verdict record's shape is fixed: it does not say so.
    assert "echo" not in json.dumps(outcome.verdict.to_json())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_name_of_its_own_is_not_marked_echoed(
    loopback: LoopbackServer, backend: str
) -> None:
    loopback.default = answering(backend, model="judge-2026-09-30")
    outcome = run_example_check(evaluator(backend, loopback.url))
    assert outcome.verdict.model == "judge-2026-09-30"
    assert [answer.model_echoed for answer in outcome.answers] == [False] * 3


class _LongNamed:
    """An evaluator of a host's own code whose reply names its model with 9 MB of text."""

    model = "own-evaluator-1"

    async def answer(self, bundle: Bundle) -> Reply:
        return Reply("m" * (9 * 1000 * 1000), [YesNoAnswer(0.99)] * len(bundle.check))


def test_any_evaluator_naming_its_model_with_9_mb_never_loses_the_verdict_record(
    tmp_path: Path,
) -> None:
    outcome = run_check_sync(
        parse_check([{"ask": "Is the report attached?"}]),
        vendor_material(),
        _LongNamed(),
        limits=Limits(),
        max_retry_wait=0,
    )
    assert outcome.verdict.verdict == "error"
    ((_, failure),) = outcome.failures
    assert failure.reason == "malformed" and "more than 1000" in failure.detail
    assert outcome.verdict.model == "own-evaluator-1"
    trail = tmp_path / "audit.jsonl"
    JsonLinesRecorder(str(trail)).record(verdict_record(outcome, run_id="r-1", step_id="s-1"))
    assert len(read_records(trail)) == 1
