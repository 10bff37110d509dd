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
    "LEGEND_MAP",
    "LIMITED",
    "MODEL",
    "VERSION",
    "LiteLLMHost",
    "Relay",
    "legend_as_map",
]

#: The environment variable naming the Python of the proxy's virtual environment.
ENV = "CHECKPROFILE_TEST_LITELLM_PYTHON"

#: The proxy's version, as tests/hosts/litellm-requirements.txt pins it.
VERSION = "1.104.3"

#: The proxy's master key: the only key it takes (it has no database of keys).
KEY = "sk-checkprofile-test"

#: The proxy's model names: each routed to the jev model of the same name; ``DOWN`` to a port
#: where nothing listens (a host that has stopped); ``LEGEND_MAP`` (when the host is given a
#: ``legend_as_map`` root) to ``MODEL`` through the relay's rewrite of a list ``legend`` into
#: the map form (:class:`Relay`), as a host that writes the map form would answer.
MODEL = jevhost.MODEL
LIMITED = jevhost.LIMITED
DOWN = "tiny-down"
LEGEND_MAP = "tiny-legend-map"


class Relay:
    """A recording relay on 127.0.0.1 between the proxy and ``target`` (the jev server's
    root): each request is sent on as it came and answered with what ``target`` answered, and
    both are kept in :attr:`exchanges` (request body, status, response body, all parsed), so a
    test can compare what the adapter read with the upstream host's own numbers. Threaded: the
    proxy's concurrent requests are relayed concurrently.

    One explicit mode changes an answer, and only for requests under :attr:`legend_as_map_url`
    (the path :data:`LEGEND_AS_MAP` before the host's own): a ``score`` answer's ``legend``
    given as a list (as jev-compatible-server 0.1.1 always writes it, ``list[Content]``) is
    handed on as the map System One documents, the same texts keyed by level index (``"0"``,
    ``"1"``, ..., the keys of its ``probabilities``). LiteLLM's response model takes only that
    map (its ``ScoreAnswer.legend`` is a required ``Mapping[str, ...]``), so the relay stands in
    for an upstream host that writes the map form; nothing else of the answer changes, and
    :attr:`exchanges` keeps what the host itself answered. Every other path is relayed as it
    came."""

    #: The path prefix under which the relay rewrites a list ``legend`` into the map form.
    LEGEND_AS_MAP = "/legend-as-map"

    def __init__(self, target: str) -> None:
        self.target = target
        self.exchanges: list[tuple[Any, int, Any]] = []
        lock = threading.Lock()
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.removeprefix(Relay.LEGEND_AS_MAP)
                rewrite = path != self.path
                forward = urllib.request.Request(
                    relay.target + path,
                    data=body,
                    method="POST",
                    headers={"Content-Type": "application/json"},
                )
                try:
                    with urllib.request.urlopen(forward, timeout=120) as response:
                        status, answer = response.status, response.read()
                except urllib.error.HTTPError as error:
                    status, answer = error.code, error.read()
                answered = json.loads(answer)
                with lock:
                    relay.exchanges.append((json.loads(body), status, answered))
                if rewrite and status == 200:
                    answer = json.dumps(legend_as_map(answered)).encode()
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

    @property
    def legend_as_map_url(self) -> str:
        """The root under which a list ``legend`` is handed on as the map form."""
        return self.url + Relay.LEGEND_AS_MAP

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


def legend_as_map(response: Any) -> Any:
    """``response`` (a System One response) with each ``score`` answer's list ``legend`` as
    the map form: the same texts, keyed ``"0"``, ``"1"``, ... by level index. A copy; any other
    answer, and a legend that is already a map, is as it came."""
    answers = response.get("answers") if isinstance(response, dict) else None
    if not isinstance(answers, dict):
        return response
    mapped = {}
    for name, answer in answers.items():
        legend = answer.get("legend") if isinstance(answer, dict) else None
        if isinstance(legend, list) and answer.get("type") == "score":
            answer = {**answer, "legend": {str(level): text for level, text in enumerate(legend)}}
        mapped[name] = answer
    return {**response, "answers": mapped}


class LiteLLMHost(jevhost.HostProcess):
    """A running LiteLLM proxy in front of ``upstream`` (the root of a running
    jev-compatible-server, or a :class:`Relay` to one); ``url`` is its root (without ``/v1``).

    ``MODEL`` and ``LIMITED`` are routed with the proxy's own retries off (``num_retries: 0``:
    a deterministic failure is asked upstream once per attempt, not three times, which would
    only cost the suite time); ``DOWN``, a port where nothing listens, keeps LiteLLM's default
    retries (two), as a user's proxy has them. With ``legend_as_map`` (a
    :attr:`Relay.legend_as_map_url`), ``LEGEND_MAP`` is routed there, as ``MODEL`` is."""

    NAME = "LiteLLM's proxy"

    def __init__(self, python: str, upstream: str, *, legend_as_map: str | None = None) -> None:
        super().__init__(python)
        self.upstream = upstream
        self.legend_as_map = legend_as_map

    def _config(self) -> str:
        down = f"http://127.0.0.1:{jevhost.free_port()}"
        models = [
            (MODEL, f"typesafe/{jevhost.MODEL}", self.upstream, {"num_retries": 0}),
            (LIMITED, f"typesafe/{jevhost.LIMITED}", self.upstream, {"num_retries": 0}),
            (DOWN, f"typesafe/{jevhost.MODEL}", down, {}),
        ]
        if self.legend_as_map is not None:
            mapped = (LEGEND_MAP, f"typesafe/{jevhost.MODEL}", self.legend_as_map)
            models.append((*mapped, {"num_retries": 0}))
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
