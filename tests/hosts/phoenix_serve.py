"""Start Arize Phoenix's server on loopback only, run by the Python of Phoenix's own virtual
environment (tests/phoenixhost.py starts it).

Phoenix's web server and OTLP/HTTP receiver bind ``PHOENIX_HOST`` (127.0.0.1 here), but its
OTLP/gRPC receiver binds every interface (``[::]``), with no setting to change that. This
launcher narrows that one address to 127.0.0.1, then runs Phoenix's own entry point
(``python -m phoenix.server.main serve``) unchanged.

    python tests/hosts/phoenix_serve.py
"""

from __future__ import annotations

import runpy
import sys
from typing import Any


def _loopback_only() -> None:
    from grpc.aio import _server  # type: ignore[import-not-found,import-untyped,unused-ignore]

    bind = _server.Server.add_insecure_port

    def on_loopback(self: Any, address: str) -> Any:
        return bind(self, address.replace("[::]:", "127.0.0.1:", 1))

    _server.Server.add_insecure_port = on_loopback


if __name__ == "__main__":
    _loopback_only()
    sys.argv = ["phoenix", "serve"]
    runpy.run_module("phoenix.server.main", run_name="__main__", alter_sys=True)
