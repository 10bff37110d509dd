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

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import attrs
import pytest

__all__ = ["LoopbackServer", "Recorded", "Response", "Scripted", "loopback_fixture"]


@attrs.frozen(kw_only=True)
class Scripted:
    """One scripted response.

    ``json`` is sent as the body (``application/json``) unless ``body`` gives the raw bytes
    (invalid JSON, say). ``delay`` seconds pass before anything is sent (longer than the
    client's timeout makes a hang). ``cut_off`` sends the headers with the full
    ``Content-Length`` but only the first half of the body, then closes the connection.
    """

    status: int = 200
    json: Any = None
    body: bytes | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    delay: float = 0.0
    cut_off: bool = False

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
        from backports.zstd import decompress  # type: ignore[import-not-found,unused-ignore]
    data: bytes = decompress(body)
    return data


class LoopbackServer:
    """A threaded HTTP/1.1 server on an ephemeral loopback port. Safe to use from many
    concurrent clients: each request is handled on its own thread."""

    def __init__(self, default: Response | None = None) -> None:
        self.default: Response = default or Scripted(
            status=500, json={"error": {"message": "the loopback script ran out"}}
        )
        self.requests: list[Recorded] = []
        self._queue: deque[Response] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, without a trailing slash."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

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
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

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

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real hosts do

            def log_message(self, format: str, *args: Any) -> None:
                pass  # a test's output is its assertions

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {name.lower(): value for name, value in self.headers.items()}
                body = _decoded(headers, raw)
                try:
                    parsed = json.loads(body) if body else None
                except ValueError:
                    parsed = None
                path = self.path.split("?", 1)[0]
                recorded = Recorded(
                    method=self.command,
                    path=path,
                    headers=headers,
                    body=body,
                    json=parsed,
                    at=time.monotonic(),
                )
                response = server._next(recorded)
                if response.delay:
                    time.sleep(response.delay)
                payload = response.payload()
                try:
                    self.send_response(response.status)
                    names = {name.lower() for name in response.headers}
                    if "content-type" not in names and response.body is None:
                        self.send_header("Content-Type", "application/json")
                    for name, value in response.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    if response.cut_off:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    if response.cut_off:
                        self.wfile.write(payload[: len(payload) // 2])
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (a timeout test): nothing is left to send.
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        return Handler


# Named apart from the fixture, so a test argument `loopback` shadows no imported name.
@pytest.fixture(name="loopback")
def loopback_fixture() -> Iterator[LoopbackServer]:
    """A started :class:`LoopbackServer`, stopped after the test."""
    with LoopbackServer() as server:
        yield server
