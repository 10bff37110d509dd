"""LiteLLM's proxy, run for real on loopback in front of jev-compatible-server, for the
real-host tests and the recorder.

The proxy runs in a virtual environment of its own (``ENV`` names its Python; LiteLLM pins
``openai<3``, the project's ``openai`` extra needs ``>=3.57``, so they cannot share one).
:class:`LiteLLMHost` writes a proxy config whose models are routed with LiteLLM's ``typesafe/``
provider to a running :class:`~jevhost.JevHost` (``api_base`` is the jev server's root), and
starts ``litellm`` on 127.0.0.1 with a master key, no database, the model cost map read from
the wheel (no fetch) and nothing sent anywhere but to the jev server. It is stopped, and its
files removed, when the ``with`` block ends.

Make the environment once (``.ci/run`` does the same)::

    python3.11 -m venv /work/venvs/litellm
    /work/venvs/litellm/bin/pip install -r tests/hosts/litellm-requirements.txt
    export CHECKPROFILE_TEST_LITELLM_PYTHON=/work/venvs/litellm/bin/python
    export CHECKPROFILE_TEST_JEV_PYTHON=/work/venvs/jev/bin/python
    python -m pytest tests/test_hosts_litellm.py
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import jevhost

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "DOWN",
    "ENV",
    "KEY",
    "LIMITED",
    "MODEL",
    "VERSION",
    "LiteLLMHost",
    "Relay",
]

#: The environment variable naming the Python of the proxy's virtual environment.
ENV = "CHECKPROFILE_TEST_LITELLM_PYTHON"

#: The proxy's version, as tests/hosts/litellm-requirements.txt pins it.
VERSION = "1.104.3"

#: The proxy's master key: the only key it takes (it has no database of keys).
KEY = "sk-checkprofile-test"

#: The proxy's model names: each routed to the jev model of the same name; ``DOWN`` to a port
#: where nothing listens (a host that has stopped).
MODEL = jevhost.MODEL
LIMITED = jevhost.LIMITED
DOWN = "tiny-down"


class Relay:
    """A recording relay on 127.0.0.1 between the proxy and ``target`` (the jev server's
    root): each request is sent on as it came and answered with what ``target`` answered, and
    both are kept in :attr:`exchanges` (request body, status, response body, all parsed), so a
    test can compare what the adapter read with the upstream host's own numbers. Threaded: the
    proxy's concurrent requests are relayed concurrently."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.exchanges: list[tuple[Any, int, Any]] = []
        lock = threading.Lock()
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                forward = urllib.request.Request(
                    relay.target + self.path,
                    data=body,
                    method="POST",
                    headers={"Content-Type": "application/json"},
                )
                try:
                    with urllib.request.urlopen(forward, timeout=120) as response:
                        status, answer = response.status, response.read()
                except urllib.error.HTTPError as error:
                    status, answer = error.code, error.read()
                with lock:
                    relay.exchanges.append((json.loads(body), status, json.loads(answer)))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


class LiteLLMHost(jevhost.HostProcess):
    """A running LiteLLM proxy in front of ``upstream`` (the root of a running
    jev-compatible-server, or a :class:`Relay` to one); ``url`` is its root (without ``/v1``).

    ``MODEL`` and ``LIMITED`` are routed with the proxy's own retries off (``num_retries: 0``:
    a deterministic failure is asked upstream once per attempt, not three times, which would
    only cost the suite time); ``DOWN``, a port where nothing listens, keeps LiteLLM's default
    retries (two), as a user's proxy has them."""

    NAME = "LiteLLM's proxy"

    def __init__(self, python: str, upstream: str) -> None:
        super().__init__(python)
        self.upstream = upstream

    def _config(self) -> str:
        down = f"http://127.0.0.1:{jevhost.free_port()}"
        models = [
            (MODEL, f"typesafe/{jevhost.MODEL}", self.upstream, {"num_retries": 0}),
            (LIMITED, f"typesafe/{jevhost.LIMITED}", self.upstream, {"num_retries": 0}),
            (DOWN, f"typesafe/{jevhost.MODEL}", down, {}),
        ]
        config = {
            "model_list": [
                {
                    "model_name": name,
                    "litellm_params": {
                        "model": model,
                        "api_base": base,
                        "api_key": "unused",
                        **more,
                    },
                }
                for name, model, base, more in models
            ],
            "general_settings": {"master_key": KEY},
            "litellm_settings": {"telemetry": False},
        }
        # JSON is YAML: the proxy reads it as its config file.
        path = self.root / "config.yaml"
        path.write_text(json.dumps(config, indent=1))
        return str(path)

    def start(self) -> LiteLLMHost:
        env = dict(os.environ)
        env.update(
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            LITELLM_TELEMETRY="False",
            HF_HUB_OFFLINE="1",
            HOME=str(self.root),
            PYTHONUNBUFFERED="1",
        )
        env.pop("PYTHONPATH", None)  # the proxy's environment is its own
        for name in ("DATABASE_URL", "OPENAI_API_KEY", "TYPESAFE_API_KEY", "TYPESAFE_API_BASE"):
            env.pop(name, None)
        litellm = str(Path(self.python).parent / "litellm")
        command = [litellm, "--config", self._config(), "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--num_workers", "1"]
        self.launch(command, env, "/health/liveliness")
        return self

    def requests(self, path: str = "/v1/decisions") -> int:
        """How many POSTs to ``path`` the proxy has logged."""
        line = f'"POST {path} HTTP/1.1"'
        return sum(1 for text in self.output().splitlines() if line in text)
