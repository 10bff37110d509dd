"""Headless Chromium driven over the DevTools protocol on a pipe, for the tests of the pages
the library writes (the calibration report, the reviewer's page): no websocket and no Python
dependency. Without Chromium a browser test is skipped, except on CI (``CI`` set), where
``.ci/run`` installs it and a skip would hide a missing install step: there it fails.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

from support import unavailable

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # containers often have a small /dev/shm
    "--remote-debugging-pipe",
)
NO_CHROMIUM = "Chromium is not installed (apt-get install chromium; .ci/run installs it)"


def need_chromium() -> str:
    """Chromium's path; the test is skipped without it, except on CI, where .ci/run installs
    it and a skip would hide a missing install step."""
    if CHROMIUM is None:
        unavailable(NO_CHROMIUM, "run the browser tests")
    return CHROMIUM


class Browser:
    """Chromium driven over the DevTools protocol on a pipe (fd 3 in, fd 4 out, messages
    ending in NUL): no websocket and no Python dependency."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_chromium, self._commands = os.pipe()
        self._replies, from_chromium = os.pipe()

        def as_fds_3_and_4() -> None:
            os.dup2(to_chromium, 3)
            os.dup2(from_chromium, 4)

        self.process = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=as_fds_3_and_4,
            pass_fds=(3, 4),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chromium)
        os.close(from_chromium)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        reply = self.wait(lambda m: m.get("id") == self._next_id)
        assert "error" not in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    def wait(self, wanted: Any, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message: dict[str, Any] = json.loads(raw)
                if wanted(message):
                    return message
                self.events.append(message)
            ready, _, _ = select.select([self._replies], [], [], deadline - time.monotonic())
            if not ready:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self._buffer += chunk

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (OSError, EOFError, TimeoutError):
            pass
        finally:
            os.close(self._commands)
            os.close(self._replies)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def complaints(events: list[dict[str, Any]]) -> list[str]:
    """Console errors and warnings, uncaught exceptions, and log entries at warning or error
    (a load the page's policy refused is one)."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            found.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            found.append(f"exception: {params.get('exceptionDetails')}")
        elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
            found.append(f"{params['entry'].get('source')}: {params['entry'].get('text')}")
    return found
