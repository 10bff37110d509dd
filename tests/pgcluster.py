"""A throwaway PostgreSQL cluster for the tests, and for ``.ci/run``.

``initdb`` into a new directory, run by a user that is not root (PostgreSQL refuses to run as
root: when the tests run as root, the cluster belongs to the ``postgres`` system user, or to
``nobody``), listening on a Unix socket in that directory only (no TCP port), started and
stopped with ``pg_ctl``. Durability is off: the cluster lives for one test run.

    python tests/pgcluster.py start DIR    # prints the conninfo to give CHECKPROFILE_TEST_PG
    python tests/pgcluster.py stop DIR

The test fixture (``tests/human/audit/test_human_postgres.py``) does the same when
``CHECKPROFILE_TEST_PG`` is not set and PostgreSQL's programs are installed.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

#: The variable that gives the tests a PostgreSQL server (a libpq conninfo).
ENV = "CHECKPROFILE_TEST_PG"
PORT = 5432  # names the socket file only: the socket directory is the cluster's own


def binaries() -> Path | None:
    """The directory of PostgreSQL's server programs (the newest installed), or ``None``."""
    found = [Path(path).parent for path in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    found.sort(key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0)
    if found:
        return found[-1]
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _owner() -> str | None:
    """Who runs the server: the current user, or a system user when that is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise RuntimeError("running as root, with no postgres or nobody user to run PostgreSQL")


def _run(owner: str | None, *command: str) -> None:
    prefix = [] if owner is None else ["runuser", "-u", owner, "--"]
    done = subprocess.run(
        [*prefix, *command], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip() or done.stdout}")


def start(root: Path) -> str:
    """Make and start a cluster under ``root`` (a new, empty directory); its conninfo."""
    bindir = binaries()
    if bindir is None:
        raise RuntimeError("PostgreSQL's programs (initdb, pg_ctl) are not installed")
    owner = _owner()
    root.mkdir(parents=True, exist_ok=True)
    if owner is not None:
        record = pwd.getpwnam(owner)
        os.chown(root, record.pw_uid, record.pw_gid)
    root.chmod(0o700)
    data = root / "data"
    _run(
        owner,
        str(bindir / "initdb"),
        "--pgdata",
        str(data),
        "--username",
        "postgres",
        "--auth",
        "trust",
        "--encoding",
        "UTF8",
        "--no-sync",
    )
    options = (
        f"-c listen_addresses='' -c unix_socket_directories='{root}' -c port={PORT}"
        " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    )
    _run(
        owner,
        str(bindir / "pg_ctl"),
        "--pgdata",
        str(data),
        "--log",
        str(root / "server.log"),
        "--options",
        options,
        "--wait",
        "start",
    )
    return f"host={root} port={PORT} dbname=postgres user=postgres"


def stop(root: Path) -> None:
    """Stop the cluster under ``root`` (the directory is left for the caller to remove)."""
    bindir = binaries()
    if bindir is None or not (root / "data" / "postmaster.pid").exists():
        return
    _run(_owner(), str(bindir / "pg_ctl"), "--pgdata", str(root / "data"), "-m", "fast", "stop")


if __name__ == "__main__":
    action, where = sys.argv[1], Path(sys.argv[2])
    if action == "start":
        print(start(where))
    elif action == "stop":
        stop(where)
    else:
        raise SystemExit(f"usage: {sys.argv[0]} start|stop DIR")
