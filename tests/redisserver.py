"""A throwaway Redis server for the Celery recipe's tests, and for ``.ci/run``.

Debian's ``redis-server``, run by a user that is not root (as PostgreSQL is: the ``redis`` or
``nobody`` system user when the tests run as root), listening on a Unix socket in its own
directory only (no TCP port), nothing saved to disk. Stopped by its pid file.

    python tests/redisserver.py start DIR    # prints the broker URL to give CHECKPROFILE_TEST_REDIS
    python tests/redisserver.py stop DIR
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

#: The variable that gives the tests a Redis server (a Celery broker URL).
ENV = "CHECKPROFILE_TEST_REDIS"


def _owner() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("redis", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise RuntimeError("running as root, with no redis or nobody user to run Redis")


def start(root: Path) -> str:
    """Start a server with its socket under ``root``; its broker URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
    owner = _owner()
    root.mkdir(parents=True, exist_ok=True)
    if owner is not None:
        record = pwd.getpwnam(owner)
        os.chown(root, record.pw_uid, record.pw_gid)
    root.chmod(0o755)
    socket = root / "redis.sock"
    prefix = [] if owner is None else ["runuser", "-u", owner, "--"]
    command = [
        *prefix,
        binary,
        "--port", "0",
        "--unixsocket", str(socket),
        "--unixsocketperm", "777",
        "--dir", str(root),
        "--save", "",
        "--appendonly", "no",
        "--daemonize", "yes",
        "--pidfile", str(root / "redis.pid"),
        "--logfile", str(root / "redis.log"),
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    end = time.monotonic() + 30
    while not socket.exists():
        if time.monotonic() > end:
            raise RuntimeError(f"redis-server did not start: see {root / 'redis.log'}")
        time.sleep(0.05)
    return f"redis+socket://{socket}"


def stop(root: Path) -> None:
    pidfile = root / "redis.pid"
    if not pidfile.exists():
        return
    pid = int(pidfile.read_text().strip())
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


if __name__ == "__main__":
    action, where = sys.argv[1], Path(sys.argv[2])
    if action == "start":
        print(start(where))
    elif action == "stop":
        stop(where)
    else:
        raise SystemExit(f"usage: {sys.argv[0]} start|stop DIR")
