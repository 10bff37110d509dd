"""A real HTTP server on 127.0.0.1 with scripted responses, for testing adapters end to end.

Adapters are tested through their real SDKs and a real socket, never with mocks of our own
code. A test scripts what the server answers, request by request, and reads back what it
received::

    with LoopbackServer() as server:
        server.script(Scripted(status=500), Scripted(json={"model": "m-1", ...}))
        ...  # point the adapter at server.url
        assert server.count("/v1/systemone") == 2

Each queued entry answers one request, in order; once the queue is empty, ``default``
answers (a 500 saying the script ran out, unless the test set one). An entry is a
:class:`Scripted` response or a function of the :class:`Recorded` request that returns one,
for answers that depend on what was asked (the question names, say).

The pytest fixture is named ``loopback``. Import it into a test module with
``from loopback import loopback_fixture  # noqa: F401 (a pytest fixture)`` and take
``loopback: LoopbackServer`` as a test argument; the server is stopped after the test.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from http import HTTPStatus
from types import TracebackType
from typing import Any

import attrs
import pytest

from checkprofile import (
    Check,
    Evaluator,
    Limits,
    Material,
    Outcome,
    Submission,
    parse_check,
    run_check_sync,
)
from support import spec_full_form

__all__ = [
    "LoopbackServer",
    "Recorded",
    "Response",
    "Scripted",
    "chat",
    "chat_completion",
    "decisions",
    "decisions_answers",
    "loopback_fixture",
    "systemone",
    "systemone_answers",
]


@attrs.frozen(kw_only=True)
class Scripted:
    """One scripted response.

    ``json`` is sent as the body (``application/json``) unless ``body`` gives the raw bytes
    (invalid JSON, say). ``delay`` seconds pass before anything is sent (longer than the
    client's timeout makes a hang). ``cut_off`` sends the headers with the full
    ``Content-Length`` but only the first half of the body, then closes the connection.

    Hostile hosts: ``drip`` sends the body one byte every ``drip`` seconds; ``endless`` sends a
    chunked body of zeros that never ends (until the client goes away).
    """

    status: int = 200
    json: Any = None
    body: bytes | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    delay: float = 0.0
    cut_off: bool = False
    drip: float = 0.0
    endless: bool = False

    def payload(self) -> bytes:
        if self.body is not None:
            return self.body
        return json.dumps(self.json).encode("utf-8") if self.json is not None else b""


@attrs.frozen(kw_only=True)
class Recorded:
    """One request as the server received it. ``headers`` have lower-case names; ``json`` is
    the parsed body, or ``None`` when the body was not JSON."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    json: Any
    at: float


#: A queued entry: a fixed response, or one made from the request.
Response = Scripted | Callable[[Recorded], Scripted]


def _decoded(headers: Mapping[str, str], body: bytes) -> bytes:
    # typesafe-sdk compresses large bodies with zstd when the codec is installed.
    if headers.get("content-encoding") != "zstd":
        return body
    try:
        from compression.zstd import decompress  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        # (import-untyped: another backports package, as twine brings, makes the namespace.)
        from backports.zstd import decompress  # type: ignore[import-not-found,import-untyped,unused-ignore]
    data: bytes = decompress(body)
    return data


class LoopbackServer:
    """An HTTP/1.1 server on an ephemeral loopback port, with keep-alive.

    It runs an asyncio loop on its own thread, so a delayed response costs a timer, not a
    thread: dozens of concurrent clients are served as a real host would serve them. The
    scripted responders run on that thread and must not block.
    """

    def __init__(self, default: Response | None = None) -> None:
        self.default: Response = default or Scripted(
            status=500, json={"error": {"message": "the loopback script ran out"}}
        )
        self.requests: list[Recorded] = []
        self._queue: deque[Response] = deque()
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._port = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, without a trailing slash."""
        return f"http://127.0.0.1:{self._port}"

    def script(self, *responses: Response) -> None:
        """Queue responses, one per coming request, after any already queued."""
        with self._lock:
            self._queue.extend(responses)

    def count(self, path: str | None = None) -> int:
        """How many requests arrived (to ``path`` only, when given)."""
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def last(self) -> Recorded:
        with self._lock:
            return self.requests[-1]

    def start(self) -> LoopbackServer:
        opened = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            # A deep backlog: the benchmark opens dozens of connections at once.
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=512)
            )
            self._port = self._server.sockets[0].getsockname()[1]
            opened.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="loopback", daemon=True)
        self._thread.start()
        opened.wait(timeout=10)
        return self

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            # Responses still waiting out a delay (a hang test) are dropped.
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _next(self, request: Recorded) -> Scripted:
        with self._lock:
            self.requests.append(request)
            entry = self._queue.popleft() if self._queue else self.default
        return entry if isinstance(entry, Scripted) else entry(request)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection: requests in turn until the client closes it (keep-alive)."""
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # Without it, a response written in two parts waits for the client's delayed ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                response = self._next(request)
                if response.delay:
                    await asyncio.sleep(response.delay)
                payload = response.payload()
                writer.write(_head(response, len(payload)))
                if response.endless:
                    await _endless(writer)
                    return
                if response.drip:
                    for index in range(len(payload)):
                        writer.write(payload[index : index + 1])
                        await writer.drain()
                        await asyncio.sleep(response.drip)
                    continue
                if response.cut_off:
                    writer.write(payload[: len(payload) // 2])
                    await writer.drain()
                    return
                writer.write(payload)
                await writer.drain()
                if request.headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return  # the client went away (a timeout test), or sent what HTTP is not
        except asyncio.CancelledError:
            # stop() cancels connections still open. Ending normally keeps asyncio's stream
            # callback (Python 3.11) from logging each cancelled connection as an error.
            return
        finally:
            writer.close()


async def _read_request(reader: asyncio.StreamReader) -> Recorded | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    raw = await reader.readexactly(length) if length else b""
    body = _decoded(headers, raw)
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    return Recorded(
        method=method,
        path=target.split("?", 1)[0],
        headers=headers,
        body=body,
        json=parsed,
        at=time.monotonic(),
    )


async def _endless(writer: asyncio.StreamWriter) -> None:
    # A chunked body of zeros, 64 KiB a chunk, for as long as the client reads.
    chunk = b"%x\r\n" % 65536 + bytes(65536) + b"\r\n"
    while True:
        writer.write(chunk)
        await writer.drain()


def _head(response: Scripted, length: int) -> bytes:
    try:
        phrase = HTTPStatus(response.status).phrase
    except ValueError:  # 529 and other unregistered codes
        phrase = "Status"
    lines = [f"HTTP/1.1 {response.status} {phrase}"]
    names = {name.lower() for name in response.headers}
    if "content-type" not in names and response.body is None:
        lines.append("Content-Type: application/json")
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    if response.endless:
        lines.append("Transfer-Encoding: chunked")
    else:
        lines.append(f"Content-Length: {length}")
    if response.cut_off:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# Named apart from the fixture, so a test argument `loopback` shadows no imported name.
@pytest.fixture(name="loopback")
def loopback_fixture() -> Iterator[LoopbackServer]:
    """A started :class:`LoopbackServer`, stopped after the test."""
    with LoopbackServer() as server:
        yield server


# --- Wire formats ----------------------------------------------------------------------------
# Responders that answer whatever was asked with a valid, confident answer, so a test scripts
# only what it is about (an override for one question) and the rest stays well-formed.


def systemone_answers(
    request: Recorded, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Valid System One answers for every question of ``request``: noul 0.95; a choice of the
    first criterion (0.8, the rest sharing 0.2); a score on the top level (0.7). ``overrides``
    replaces the answer of a named question (``None`` leaves it out)."""
    answers: dict[str, Any] = {}
    for name, question in request.json["questions"].items():
        if question["type"] == "noul":
            answer: Any = {"type": "noul", "noul": 0.95}
        elif question["type"] == "choice":
            names = list(question["criteria"])
            rest = 0.2 / (len(names) - 1)
            answer = {
                "type": "choice",
                "choice": names[0],
                "confidence": 0.9,
                "probabilities": {n: 0.8 if i == 0 else rest for i, n in enumerate(names)},
            }
        else:
            count = len(question["criteria"])
            rest = 0.3 / (count - 1)
            answer = {
                "type": "score",
                "score": 0.0,
                "confidence": 0.85,
                "legend": {str(i): text for i, text in enumerate(question["criteria"])},
                "probabilities": {str(i): 0.7 if i == count - 1 else rest for i in range(count)},
            }
        answers[name] = answer
    for name, answer in (overrides or {}).items():
        if answer is None:
            answers.pop(name, None)
        else:
            answers[name] = answer
    return answers


def systemone(
    model: str = "jev-2026-09-15",
    overrides: Mapping[str, Any] | None = None,
    *,
    delay: float = 0.0,
) -> Callable[[Recorded], Scripted]:
    """A System One host answering as :func:`systemone_answers`, reporting ``model``."""

    def respond(request: Recorded) -> Scripted:
        body = {
            "model": model,
            "answers": systemone_answers(request, overrides),
            "usage": {"input_tokens": len(request.body) // 4, "output_tokens": 0},
        }
        return Scripted(json=body, delay=delay, headers={"x-typesafe-request-id": "req-1"})

    return respond


def decisions_answers(request: Recorded, overrides: Mapping[str, Any] | None = None) -> list[Any]:
    """Valid OpenAI Decisions answers, in question order: predicate 0.95; a choice of the
    first value (0.8); a score on the top level (0.7). ``overrides`` replaces the answer of a
    named question (``None`` leaves it out)."""
    answers: list[Any] = []
    for question in request.json["questions"]:
        name = question["name"]
        if name in (overrides or {}):
            override = (overrides or {})[name]
            if override is not None:
                answers.append(override)
            continue
        if question["type"] == "predicate":
            answers.append({"type": "predicate", "name": name, "probability": 0.95})
        elif question["type"] == "choice":
            values = [choice["value"] for choice in question["choices"]]
            rest = 0.2 / (len(values) - 1)
            answers.append(
                {
                    "type": "choice",
                    "name": name,
                    "choice": values[0],
                    "confidence": 0.9,
                    "probabilities": [
                        {"value": v, "probability": 0.8 if i == 0 else rest}
                        for i, v in enumerate(values)
                    ],
                }
            )
        else:
            levels = question["levels"]
            rest = 0.3 / (len(levels) - 1)
            answers.append(
                {
                    "type": "score",
                    "name": name,
                    "score": 0.0,
                    "confidence": 0.85,
                    "probabilities": [
                        {
                            "value": i,
                            "label": level["label"],
                            "probability": 0.7 if i == len(levels) - 1 else rest,
                        }
                        for i, level in enumerate(levels)
                    ],
                }
            )
    return answers


def decisions(
    model: str = "gpt-6-luna-2026-10-01",
    overrides: Mapping[str, Any] | None = None,
    *,
    delay: float = 0.0,
) -> Callable[[Recorded], Scripted]:
    """An OpenAI Decisions host answering as :func:`decisions_answers`, reporting ``model``."""

    def respond(request: Recorded) -> Scripted:
        body = {
            "model": model,
            "answers": decisions_answers(request, overrides),
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
                "output_tokens": 0,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 10,
            },
        }
        return Scripted(json=body, delay=delay, headers={"x-request-id": "req-1"})

    return respond


def chat_completion(
    top: Sequence[tuple[str, float]],
    *,
    model: str = "judge-2026-09-30",
    sampled: tuple[str, float] | None = None,
) -> dict[str, Any]:
    """A chat completion whose first (and only) token has ``top`` (token, logprob) as its top
    logprobs; the sampled token is ``sampled``, else the first of ``top``."""
    token, logprob = sampled or top[0]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1790000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "length",
                "message": {"role": "assistant", "content": token},
                "logprobs": {
                    "content": [
                        {
                            "token": token,
                            "logprob": logprob,
                            "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
                        }
                    ]
                },
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101},
    }


def chat(model: str = "judge-2026-09-30") -> Callable[[Recorded], Scripted]:
    """A chat completions host answering every question confidently through its first token's
    logprobs: ``yes`` (0.95) for a yes/no question, the first letter (0.9) for a choice, the
    top digit (0.9) for a rubric, as the question's last message asks; reports ``model``."""

    def respond(request: Recorded) -> Scripted:
        last = request.json["messages"][-1]["content"]
        labels = last.rsplit(":", 1)[1].strip(" .").replace(" or ", ", ").split(", ")
        if "yes or no" in last:
            labels = ["yes", "no"]
        best = labels[-1] if "digit" in last else labels[0]
        top = [(best, 0.95 if best == "yes" else 0.9)]
        rest = (1 - top[0][1]) / (len(labels) - 1)
        top += [(label, rest) for label in labels if label != best]
        logprobs = [(token, math.log(p)) for token, p in top]
        return Scripted(json=chat_completion(logprobs, model=model))

    return respond


# --- Running a check against a host ------------------------------------------------------------
# The decision-backend tests share one vendor-screening material and one way to run the
# profile's example check through an evaluator pointed at a loopback host.

VENDOR_SUMMARY = "Acme GmbH is cleared on both lists."


def vendor_material(summary: str = VENDOR_SUMMARY, **run: Any) -> Material:
    """The vendor-screening material, with ``summary`` (a hostile one, in some tests) and any
    extra top-level ``run`` data."""
    return Material(
        instructions="Check the vendor against the OFAC and EU lists.",
        body="# Vendor onboarding\n",
        run_data={"inputs": {"vendor": "Acme GmbH"}, "steps": {}, **run},
        submission=Submission(
            {"cleared": True}, summary=summary, evidence=[{"kind": "file", "ref": "r.pdf"}]
        ),
    )


def run_example_check(
    evaluator: Evaluator, check: Check | None = None, *, summary: str = VENDOR_SUMMARY
) -> Outcome:
    """The profile's full-form example check (or ``check``) on :func:`vendor_material`, with a
    fixed ``at`` and a short Retry-After cap, as a host would run it."""
    return run_check_sync(
        check or parse_check(spec_full_form()),
        vendor_material(summary),
        evaluator,
        limits=Limits(),
        now="2026-10-06T09:04:20Z",
        max_retry_wait=0.05,
    )
