"""The example review queue drops a client that stalls (issue 34, finding 14).

examples/review-queue/serve.py answers each connection on a thread of its own; without a
socket timeout a client that opened a connection and sent nothing more held that thread for
good. Against the real server on loopback: a stalled request line, a stalled post body and a
client dripping a byte at a time are each dropped (the connection closed by the server, its
thread gone), a post cut short decides nothing, and the queue goes on serving.
"""

from __future__ import annotations

import http.client
import importlib.util
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "review-queue"
IDLE = 0.5
LIFETIME = 2.0


def example_server() -> ModuleType:
    spec = importlib.util.spec_from_file_location("review_queue_stalls", EXAMPLE / "serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(name="queue")
def queue_fixture(tmp_path: Path) -> Iterator[Any]:
    folder = tmp_path / "checkpoints"
    shutil.copytree(EXAMPLE / "checkpoints", folder)
    queue = example_server().ReviewQueue(
        folder, reviewer="ana@example.com", idle=IDLE, lifetime=LIFETIME
    )
    threading.Thread(target=queue.serve_forever, daemon=True).start()
    try:
        yield queue
    finally:
        queue.shutdown()
        queue.server_close()


def handlers() -> int:
    """The threads answering a connection now (socketserver's, named for their target)."""
    return sum("process_request_thread" in thread.name for thread in threading.enumerate())


def closed_within(connection: socket.socket, seconds: float) -> float:
    """Seconds until the server closes ``connection`` (reading what it sends first); fails
    past ``seconds``."""
    start = time.monotonic()
    connection.settimeout(seconds)
    while True:
        try:
            data = connection.recv(65536)
        except ConnectionResetError:
            data = b""
        except TimeoutError:
            pytest.fail(f"the server kept a stalled connection open past {seconds} s")
        if not data:
            return time.monotonic() - start


def connect(queue: Any) -> socket.socket:
    return socket.create_connection(("127.0.0.1", queue.server_address[1]), timeout=10)


def settled(before: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if handlers() <= before:
            return True
        time.sleep(0.05)
    return False


def still_serves(queue: Any) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", queue.server_address[1], timeout=10)
    connection.request("GET", "/")
    assert connection.getresponse().status == 200
    connection.close()


def host(queue: Any) -> bytes:
    return f"Host: 127.0.0.1:{queue.server_address[1]}\r\n".encode()


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET / HT", b"GET / HTTP/1.1\r\n"],
    ids=["nothing", "half a request line", "no end of headers"],
)
def test_a_stalled_connection_is_dropped_and_its_thread_ends(queue: Any, sent: bytes) -> None:
    before = handlers()
    connections = [connect(queue) for _ in range(8)]
    for connection in connections:
        connection.sendall(sent)
    for connection in connections:
        assert closed_within(connection, IDLE + 3) < IDLE + 3
        connection.close()
    assert settled(before), "a stalled connection still holds a thread"
    still_serves(queue)


def test_a_client_dripping_a_byte_at_a_time_is_dropped_at_the_lifetime(queue: Any) -> None:
    before = handlers()
    connection = connect(queue)
    start = time.monotonic()
    request = b"GET / HTTP/1.1\r\n" + host(queue) + b"X-Slow: " + b"a" * 1000
    try:
        for byte in request:  # each byte well within the idle time: only the lifetime ends it
            connection.sendall(bytes([byte]))
            time.sleep(IDLE / 5)
            if time.monotonic() - start > LIFETIME + 3:
                pytest.fail("a dripping client was not dropped at the connection's lifetime")
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert time.monotonic() - start < LIFETIME + 3
    closed_within(connection, 3)
    connection.close()
    assert settled(before)
    still_serves(queue)


@pytest.mark.parametrize("how", ["stalls", "drips"])
def test_a_post_cut_short_decides_nothing(queue: Any, how: str) -> None:
    reference = next(iter(queue.checkpoints()[0]))
    body = (
        f"checkpoint={reference}&token={queue.token(reference)}&decision=failed&note=late"
    ).encode()
    head = (
        f"POST /checkpoints/{reference}/decision HTTP/1.1\r\n".encode()
        + host(queue)
        + b"Content-Type: application/x-www-form-urlencoded\r\n"
        + f"Content-Length: {len(body) + 40}\r\n\r\n".encode()
    )
    connection = connect(queue)
    connection.sendall(head + body)  # all but the last 40 bytes it promised
    if how == "drips":
        try:
            for _ in range(40):  # 4 s of it: whole, past the lifetime
                time.sleep(IDLE / 5)
                connection.sendall(b"x")  # the note goes on: a whole post would be taken
        except (BrokenPipeError, ConnectionResetError):
            pass
    closed_within(connection, LIFETIME + 3)
    connection.close()
    assert not queue.decision_path(reference).exists()
    assert not (queue.folder / "audit.jsonl").exists()
    still_serves(queue)
