"""llama-cpp-python's OpenAI-compatible server (``llama_cpp.server``), run for real on loopback
with a tiny model made at test time, for the real-host tests of the chat fallback.

The server runs in a virtual environment of its own (``ENV`` names its Python): pip compiles
llama.cpp when it installs llama-cpp-python, so the environment takes minutes to make.
:class:`LlamaHost` writes the tiny model (``tests/hosts/tiny_gguf.py``: random weights from a
fixed seed, its tokenizer and chat template in the file) into a temporary folder, and starts
the server on 127.0.0.1 with it. It is stopped, and its files removed, when the ``with`` block
ends.

Make the environment once (``.ci/run`` does the same, in the background)::

    python3.11 -m venv /work/venvs/llama
    /work/venvs/llama/bin/pip install -r tests/hosts/llama-cpp-requirements.txt
    CHECKPROFILE_TEST_LLAMA_PYTHON=/work/venvs/llama/bin/python \\
        python -m pytest tests/qualify/test_qualify_hosts_llama.py

``.ci/run`` starts the tests while that environment is still being built: it also sets
``READY_ENV`` to a file the build makes when it has succeeded (and ``llama.failed`` beside it,
holding the build's output, when it has failed), and :func:`wait_for_build` waits for one of
them before the host is started.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from jevhost import HOSTS, HostProcess

__all__ = [
    "BUILD_TIMEOUT",
    "CONTEXT",
    "ENV",
    "MODEL",
    "READY_ENV",
    "VERSION",
    "LlamaHost",
    "wait_for_build",
]

#: The environment variable naming the Python of the server's virtual environment.
ENV = "CHECKPROFILE_TEST_LLAMA_PYTHON"

#: The environment variable naming the file the environment's build makes when it is done.
READY_ENV = "CHECKPROFILE_TEST_LLAMA_READY"

#: The server's version, as tests/hosts/llama-cpp-requirements.txt pins it.
VERSION = "0.3.36"

#: The model name the tests ask for. The server has one model and answers any name with it,
#: echoing the name it was asked for as the response's ``model``.
MODEL = "tiny-llama-gguf-seed20"

#: The server's context, in tokens: tests/hosts/tiny_gguf.py's (it says why it is so long).
CONTEXT = 8192

#: Seconds to wait for the environment's build: .ci/run starts the tests about when it starts
#: the build, which compiles llama.cpp (about 9 minutes on an idle two-core machine).
BUILD_TIMEOUT = 20 * 60.0


def wait_for_build(timeout: float = BUILD_TIMEOUT) -> None:
    """When ``READY_ENV`` names a file, wait until it exists, for at most ``timeout`` seconds.
    Raises ``RuntimeError`` with the build's output when the build failed (``llama.failed``
    beside the ready file), and when the wait runs out; does nothing without ``READY_ENV``."""
    named = os.environ.get(READY_ENV)
    if not named:
        return
    ready = Path(named)
    failed = ready.with_name("llama.failed")
    deadline = time.monotonic() + timeout
    while not ready.exists():
        if failed.exists():
            output = failed.read_text(errors="replace")[-4000:]
            raise RuntimeError(f"the llama-cpp-python environment's build failed:\n{output}")
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the llama-cpp-python environment was not built within {timeout:.0f} s"
                f" ({ready} is not there)"
            )
        time.sleep(2)


class LlamaHost(HostProcess):
    """A running ``llama_cpp.server`` serving the tiny model; ``url`` is its root (without
    ``/v1``)."""

    NAME = "llama-cpp-python's server"
    #: Seconds the server may take to start (it loads llama.cpp and a 0.3 MB model).
    START_TIMEOUT = 120.0

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("PYTHONPATH", None)  # the server's environment is its own
        return env

    def start(self) -> LlamaHost:
        model = self.root / "tiny.gguf"
        subprocess.run(
            [self.python, str(HOSTS / "tiny_gguf.py"), str(model)],
            env=self._environment(),
            check=True,
            capture_output=True,
            timeout=self.START_TIMEOUT,
        )
        command = [
            self.python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(CONTEXT),
            # llama.cpp's own logging is a page per request; the access log stays.
            "--verbose",
            "False",
        ]
        self.launch(command, self._environment(), "/v1/models")
        return self

    def requests(self, path: str = "/v1/chat/completions") -> int:
        """How many POSTs to ``path`` the server has logged."""
        line = f'"POST {path} HTTP/1.1"'
        return sum(1 for text in self.output().splitlines() if line in text)

    def served(self, before: int, expected: int, path: str = "/v1/chat/completions") -> int:
        """How many POSTs to ``path`` arrived after a count of ``before``, once the server has
        logged ``expected`` of them or two seconds have passed (it logs a response just after
        sending it, so the last may not be logged yet when its answer is read)."""
        deadline = time.monotonic() + 2
        count = self.requests(path)
        while count < before + expected and time.monotonic() < deadline:
            time.sleep(0.05)
            count = self.requests(path)
        return count - before
