"""What the many-machines recipe tests share: their real hosts' Pythons, the slow model, a
worker process started and killed, and PostgreSQL looked into.

DBOS and Celery each run in a virtual environment of their own (``.ci/run`` makes them from
``tests/hosts/dbos-requirements.txt`` and ``tests/hosts/celery-requirements.txt``), named by
``CHECKPROFILE_TEST_DBOS_PYTHON`` and ``CHECKPROFILE_TEST_CELERY_PYTHON``. Without one, its
tests skip, saying why; under ``CI`` they fail.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "examples" / "many-machines"
sys.path.insert(0, str(RECIPES))

from common import SlowModel  # noqa: E402

from support import unavailable  # noqa: E402


def host_python(env: str, what: str) -> str:
    """The Python of the virtual environment ``env`` names (skips, or fails under CI)."""
    python = os.environ.get(env)
    if not python or not Path(python).exists():
        unavailable(
            f"no {what}: set {env} to the Python of a virtual environment made from"
            f" tests/hosts/ (.ci/run makes one)",
            f"run the {what} recipe's tests",
        )
    return python


@contextmanager
def slow_model(delay: float) -> Iterator[SlowModel]:
    model = SlowModel(delay=delay)
    thread = threading.Thread(target=model.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        model.shutdown()
        model.server_close()


def wait_for(what: str, test: Callable[[], Any], *, timeout: float = 60) -> Any:
    """Poll ``test`` until it gives something true; that. Fails naming ``what``."""
    end = time.monotonic() + timeout
    while True:
        found = test()
        if found:
            return found
        if time.monotonic() > end:
            raise AssertionError(f"waited {timeout:g} s for {what}")
        time.sleep(0.1)


class Worker:
    """A worker process of a recipe, its output in a file."""

    def __init__(self, python: str, *argv: str, env: dict[str, str], log: Path):
        self.log = log
        self.out = open(log, "ab")  # noqa: SIM115 - closed when the worker is
        self.process = subprocess.Popen(
            [python, *argv],
            cwd=RECIPES,
            env=env,
            stdout=self.out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def children(self) -> list[int]:
        """The worker's child processes (a pool's)."""
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [int(pid) for pid in path.read_text().split()]
        except OSError:
            return []

    def kill(self) -> None:
        """SIGKILL the worker and every process of its session (a pool's children)."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.out.close()


def environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(RECIPES)])
    env.update(extra)
    return env


def sqlalchemy_url(conninfo: str, dbname: str) -> str:
    """A SQLAlchemy URL for database ``dbname`` on the server of libpq ``conninfo``."""
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(conninfo)
    query: dict[str, str] = {key: str(parts[key]) for key in ("host", "port") if key in parts}
    user = urllib.parse.quote(str(parts.get("user", "postgres")))
    return f"postgresql://{user}@/{dbname}?{urllib.parse.urlencode(query)}"


def rows(conninfo: str, query: str, *values: object) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as connection:
        cursor = connection.execute(query.encode(), values)
        return cursor.fetchall() if cursor.description is not None else []
