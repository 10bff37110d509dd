"""The transport's bounds cover codings and completeness (issue 34, findings 10 and 11).

Against a real HTTP server on loopback, through each of the four adapters (System One,
OpenAI Decisions, chat completions, sglang): a response whose ``Content-Encoding`` lists
``gzip`` 20,000 times is refused, naming the count, before any inflater is made; a gzip or
deflate body cut before its trailer, with a wrong trailer, with trailing bytes or a second
gzip member, or a raw deflate body that never reaches its final block, ends as an ``error``
verdict (``malformed``), never as the pass its JSON alone would give. Each hostile body here
wraps an answer that passes, so only the transport's rule stands between it and a pass; the
same answer compressed whole passes, in every coding the transport reads.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Callable

import pytest

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

import sglangproto
from loopback import (
    LoopbackServer,
    Recorded,
    Scripted,
    chat,
    decisions,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
    systemone,
)
from test_adapters_sglang_decisions import MODEL as SGLANG_MODEL
from test_adapters_sglang_decisions import NO_WHEEL, sglang_host
from test_provider_boundary import MB, peak_memory

from checkprofile import Evaluator, Outcome
from checkprofile.adapters._transport import MAX_CODINGS
from checkprofile.adapters.openai_chat import ChatEvaluator
from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.sglang_decisions import SglangDecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from support import unavailable

BACKENDS = ["systemone", "decisions", "chat", "sglang"]


def answering(backend: str) -> Callable[[Recorded], Scripted]:
    """A responder of ``backend``'s wire format that answers every question well enough to
    pass."""
    if backend == "sglang":
        if not os.environ.get(sglangproto.ENV):
            unavailable(NO_WHEEL, "test the sglang dialect")
        return sglang_host(sglangproto.protocol())
    return {"systemone": systemone, "decisions": decisions, "chat": chat}[backend]()


def evaluator(backend: str, url: str) -> Evaluator:
    if backend == "systemone":
        return SystemOneEvaluator("jev-latest", base_url=url, api_key="k", timeout=5)
    if backend == "decisions":
        return DecisionsEvaluator("gpt-6-luna", base_url=f"{url}/v1", api_key="k", timeout=5)
    if backend == "sglang":
        return SglangDecisionsEvaluator(SGLANG_MODEL, base_url=f"{url}/v1", timeout=5)
    return ChatEvaluator("judge-latest", base_url=f"{url}/v1", api_key="k", timeout=5)


def packed(
    server: LoopbackServer, backend: str, coding: str, pack: Callable[[bytes], bytes]
) -> None:
    """Every request answered with ``backend``'s passing answer, packed by ``pack`` and sent
    as ``Content-Encoding: coding``."""
    answer = answering(backend)

    def respond(request: Recorded) -> Scripted:
        body = json.dumps(answer(request).json).encode()
        return Scripted(
            body=pack(body),
            headers={"Content-Type": "application/json", "Content-Encoding": coding},
        )

    server.default = respond


def malformed(outcome: Outcome) -> list[str]:
    """The details of an outcome that is an ``error`` whose every failure is ``malformed``."""
    assert outcome.verdict.verdict == "error", outcome
    assert {failure.reason for _, failure in outcome.failures} == {"malformed"}
    return [failure.detail for _, failure in outcome.failures]


def zlib_deflate(body: bytes) -> bytes:
    return zlib.compress(body)


def raw_deflate(body: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(body) + packer.flush()


# --- Whole bodies are read, in every coding the transport reads ---------------------------------

WHOLE: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": ("gzip", gzip.compress),
    "x-gzip": ("x-gzip", gzip.compress),
    "zlib deflate": ("deflate", zlib_deflate),
    "raw deflate": ("deflate", raw_deflate),
    "gzip then deflate": ("gzip, deflate", lambda body: zlib_deflate(gzip.compress(body))),
    "identity listed too": ("identity, gzip", gzip.compress),
}


@pytest.mark.parametrize("case", list(WHOLE))
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_whole_compressed_answer_is_read(
    loopback: LoopbackServer, backend: str, case: str
) -> None:
    coding, pack = WHOLE[case]
    packed(loopback, backend, coding, pack)
    outcome = run_example_check(evaluator(backend, loopback.url))
    assert outcome.verdict.verdict == "pass", outcome.failures


# --- Finding 10: a limit on the listed codings -------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_gzip_listed_20000_times_is_refused_naming_the_count_before_any_inflater(
    loopback: LoopbackServer, backend: str
) -> None:
    # The body is a real answer gzipped once: read with one inflater, it would pass.
    packed(loopback, backend, ", ".join(["gzip"] * 20_000), gzip.compress)
    outcome, peak = peak_memory(lambda: run_example_check(evaluator(backend, loopback.url)))
    details = malformed(outcome)
    assert all("20000 content codings" in detail for detail in details), details
    assert all(f"more than {MAX_CODINGS}" in detail for detail in details), details
    # One inflater per listed coding held 160-200 MB a check; none is made now.
    assert peak < 20 * MB, peak


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_coding_more_than_the_limit_is_refused(loopback: LoopbackServer, backend: str) -> None:
    def pack(body: bytes) -> bytes:
        for _ in range(MAX_CODINGS + 1):
            body = gzip.compress(body)
        return body

    packed(loopback, backend, ", ".join(["gzip"] * (MAX_CODINGS + 1)), pack)
    details = malformed(run_example_check(evaluator(backend, loopback.url)))
    assert all(f"{MAX_CODINGS + 1} content codings" in detail for detail in details), details


# --- Finding 11: a compressed body must end properly, and nothing may follow ---------------------


def _second_member(body: bytes) -> bytes:
    return gzip.compress(body) + gzip.compress(b" ")


def _wrong_crc(body: bytes) -> bytes:
    whole = bytearray(gzip.compress(body))
    whole[-8] ^= 0xFF  # the CRC-32's first byte
    return bytes(whole)


def _wrong_length(body: bytes) -> bytes:
    whole = bytearray(gzip.compress(body))
    whole[-4] ^= 0x01  # ISIZE, the length mod 2**32
    return bytes(whole)


def _wrong_adler(body: bytes) -> bytes:
    whole = bytearray(zlib_deflate(body))
    whole[-1] ^= 0xFF
    return bytes(whole)


def _raw_not_final(body: bytes) -> bytes:
    # Every byte of the body inflates, but the stream never reaches its final block.
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(body) + packer.flush(zlib.Z_SYNC_FLUSH)


# name: (coding, packer, a word of the detail)
BROKEN: dict[str, tuple[str, Callable[[bytes], bytes], str]] = {
    "gzip cut before its trailer": ("gzip", lambda b: gzip.compress(b)[:-8], "cut short"),
    "gzip cut in its trailer": ("gzip", lambda b: gzip.compress(b)[:-3], "cut short"),
    "gzip with a wrong CRC-32": ("gzip", _wrong_crc, "incorrect data check"),
    "gzip with a wrong length": ("gzip", _wrong_length, "incorrect length check"),
    "gzip with trailing bytes": ("gzip", lambda b: gzip.compress(b) + b"garbage", "goes on"),
    "gzip with a second member": ("gzip", _second_member, "second member"),
    "zlib deflate cut before its Adler-32": ("deflate", lambda b: zlib_deflate(b)[:-4], "cut"),
    "zlib deflate with a wrong Adler-32": ("deflate", _wrong_adler, "incorrect data check"),
    "zlib deflate with trailing bytes": ("deflate", lambda b: zlib_deflate(b) + b"\0", "goes on"),
    "raw deflate without its final block": ("deflate", _raw_not_final, "final block"),
    "raw deflate with trailing bytes": ("deflate", lambda b: raw_deflate(b) + b"}", "goes on"),
    "the inner of two codings cut short": (
        "gzip, deflate",
        lambda b: zlib_deflate(gzip.compress(b)[:-8]),
        "cut short",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compressed_body_that_does_not_end_properly_is_an_error(
    loopback: LoopbackServer, backend: str, case: str
) -> None:
    coding, pack, said = BROKEN[case]
    packed(loopback, backend, coding, pack)
    details = malformed(run_example_check(evaluator(backend, loopback.url)))
    assert all(said in detail for detail in details), details


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_trailing_flood_after_a_gzip_body_is_refused_as_it_arrives(
    loopback: LoopbackServer, backend: str
) -> None:
    # 3 MB of bytes after the trailer: refused at the first of them, never held.
    packed(loopback, backend, "gzip", lambda b: gzip.compress(b) + bytes(3 * MB))
    outcome, peak = peak_memory(lambda: run_example_check(evaluator(backend, loopback.url)))
    assert all("goes on" in detail for detail in malformed(outcome))
    assert peak < 40 * MB, peak


@pytest.mark.parametrize("coding", ["gzip", "deflate", "gzip, deflate"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_body_under_a_coding_is_not_a_pass(
    loopback: LoopbackServer, backend: str, coding: str
) -> None:
    # No bytes at all (as a HEAD or a 204 has): nothing to end, and no answer to read.
    answering(backend)  # the same preconditions as the others (the sglang wheel)
    loopback.default = Scripted(body=b"", headers={"Content-Encoding": coding})
    outcome = run_example_check(evaluator(backend, loopback.url))
    assert outcome.verdict.verdict == "error", outcome


def test_an_error_answer_cut_before_its_trailer_is_malformed_not_read(
    loopback: LoopbackServer,
) -> None:
    # A host's error body is read under the same rule: a cut one is not the host's word.
    loopback.default = Scripted(
        status=500,
        body=gzip.compress(b'{"error": {"message": "down"}}')[:-8],
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    details = malformed(run_example_check(evaluator("chat", loopback.url)))
    assert all("cut short" in detail for detail in details), details
