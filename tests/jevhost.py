"""jev-compatible-server, run for real on loopback, for the real-host tests and the recorder.

The host runs in a virtual environment of its own (torch, transformers): ``ENV`` names that
environment's Python. :class:`JevHost` makes the tiny model (``tests/hosts/tiny_model.py``,
a fixed seed), writes a model registry naming it twice -- once able to answer every kind of
question, once limited to ``noul`` through ``decision.question_types`` -- and starts
``uvicorn`` on 127.0.0.1 only (the server's own command binds every interface), with the
hub offline. It is stopped, and its files removed, when the ``with`` block ends.

Make the environment once (``.ci/run`` does the same)::

    python3.11 -m venv /work/venvs/jev
    /work/venvs/jev/bin/pip install torch==2.13.0 -r tests/hosts/jev-requirements.txt
    CHECKPROFILE_TEST_JEV_PYTHON=/work/venvs/jev/bin/python python -m pytest tests/test_hosts_jev.py
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "ENV",
    "LIMITED",
    "LIMITED_NAME",
    "MODEL",
    "MODEL_NAME",
    "VERSION",
    "HostProcess",
    "JevHost",
    "free_port",
]

#: The environment variable naming the Python of the host's virtual environment.
ENV = "CHECKPROFILE_TEST_JEV_PYTHON"

#: The host's version, as tests/hosts/jev-requirements.txt pins it.
VERSION = "0.1.1"

HOSTS = Path(__file__).resolve().parent / "hosts"

#: The registry's models: one that answers every kind, one that answers ``noul`` only.
MODEL = "tiny-all"
LIMITED = "tiny-noul"
#: The names each reports as the model that answered (its registry ``model`` metadata).
MODEL_NAME = "tiny-llama-seed20"
LIMITED_NAME = "tiny-llama-seed20-noul"

#: Seconds the host may take to start (it loads torch) and to make the model.
START_TIMEOUT = 180.0


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class HostProcess:
    """A real host run as a subprocess on 127.0.0.1 from the Python of its own virtual
    environment, with its files in a temporary directory removed when it stops; a ``with``
    block starts and stops it. A subclass's ``start`` launches it with :meth:`launch`."""

    NAME = "the host"
    #: Seconds the host may take to start.
    START_TIMEOUT = START_TIMEOUT

    def __init__(self, python: str) -> None:
        self.python = python
        self.root = Path(tempfile.mkdtemp(prefix=f"checkprofile-{type(self).__name__.lower()}-"))
        self.log = self.root / "server.log"
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> HostProcess:
        raise NotImplementedError

    def launch(self, command: list[str], env: dict[str, str], health: str) -> None:
        """Start ``command`` (its output to :attr:`log`) and wait until ``health`` (a path)
        answers 200, for at most :attr:`START_TIMEOUT` seconds."""
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                command,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.root,
            )
        deadline = time.monotonic() + self.START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"{self.NAME} exited at start: {self.output()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}{health}", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        raise RuntimeError(f"{self.NAME} did not start: {self.output()[-4000:]}")

    def output(self) -> str:
        """What the server printed so far (its access log among it)."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=20)
            self._process = None
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class JevHost(HostProcess):
    """A running jev-compatible-server; ``url`` is its API root (without ``/v1``)."""

    NAME = "jev-compatible-server"

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            HF_HOME=str(self.root / "hf"),
            PYTHONUNBUFFERED="1",
            DECISION_REGISTRY=str(self.root / "registry.json"),
        )
        env.pop("PYTHONPATH", None)  # the host's environment is its own
        return env

    def start(self) -> JevHost:
        checkpoint = self.root / "tiny-model"
        subprocess.run(
            [self.python, str(HOSTS / "tiny_model.py"), str(checkpoint)],
            env=self._environment(),
            check=True,
            capture_output=True,
            timeout=START_TIMEOUT,
        )
        registry = {
            "default": MODEL,
            "models": {
                MODEL: {
                    "backend": "transformers",
                    "model": str(checkpoint),
                    "config": {"model": MODEL_NAME},
                },
                LIMITED: {
                    "backend": "transformers",
                    "model": str(checkpoint),
                    "config": {"model": LIMITED_NAME, "decision.question_types": ["noul"]},
                },
            },
        }
        (self.root / "registry.json").write_text(json.dumps(registry))
        command = [
            self.python,
            "-m",
            "uvicorn",
            "--factory",
            "jev_compatible_server.app:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        self.launch(command, self._environment(), "/health")
        return self

    def requests(self, path: str = "/v1/systemone") -> int:
        """How many POSTs to ``path`` the server has logged."""
        line = f'"POST {path} HTTP/1.1"'
        return sum(1 for text in self.output().splitlines() if line in text)

    def served(self, before: int, path: str = "/v1/systemone") -> int:
        """How many POSTs to ``path`` arrived after a count of ``before``, once the server has
        logged them (it logs a response just after sending it)."""
        deadline = time.monotonic() + 2
        count = self.requests(path)
        while count <= before and time.monotonic() < deadline:
            time.sleep(0.05)
            count = self.requests(path)
        return count - before
