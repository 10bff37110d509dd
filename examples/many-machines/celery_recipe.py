"""Checks on a task queue: Celery workers (prefork) on a Redis broker, one PostgreSQL audit trail
and one escalation store.

A queue delivers a task at least once: a worker killed mid-task (or its pool's child) has its
task delivered again (``acks_late``, ``task_reject_on_worker_lost``, and Redis's visibility
timeout for a worker killed whole). So every task is idempotent, keyed by its request id:

* ``check`` asks the model, then keeps the outcome in a ledger keyed by the request id, the
  first outcome kept winning (``INSERT ... ON CONFLICT DO NOTHING``, then read back). What it
  writes next it makes from the kept outcome only: its verdict record (the audit trail keeps
  a record once) and, when it escalates, its checkpoint (the store keeps it once). A delivery
  that finds the outcome kept does not ask the model again; one killed before it was kept
  asks again, and nothing of the first ask was written anywhere.
* ``decide`` has the escalation store apply a reviewer's decision, the first one winning;
  a later decision, or the same one delivered again, goes on with the kept one, so the
  decision record it writes is the same record, kept once.

``run_check_sync`` runs in each pool process on a loop of its own (nothing of it crosses the
pool's fork). Start a worker (``CHECKPROFILE_REDIS``: the broker; ``CHECKPROFILE_PG``,
``CHECKPROFILE_MODEL_URL`` as for the DBOS recipe)::

    celery -A celery_recipe worker --pool prefork --concurrency 2

Tested by ``tests/test_recipe_celery.py``, which kills workers at random under load.
"""

from __future__ import annotations

import json
import os
import pickle
import threading
import time
from typing import Any

import psycopg
from celery import Celery
from common import STEP, LoopbackEvaluator, check_once, stores

from checkprofile import Outcome
from checkprofile.human import (
    AlreadyDecidedError,
    StepState,
    after_check,
    checkpoint_for,
    resolution_record,
    verdict_record,
)

AUDIT_TABLE = os.environ.get("CHECKPROFILE_AUDIT_TABLE", "checkprofile_audit")
STORE_TABLE = os.environ.get("CHECKPROFILE_STORE_TABLE", "checkprofile_escalations")
LEDGER_TABLE = os.environ.get("CHECKPROFILE_LEDGER_TABLE", "checkprofile_outcomes")

app = Celery("checkprofile-recipe", broker=os.environ.get("CHECKPROFILE_REDIS", "redis://"))
app.conf.update(
    task_acks_late=True,  # a task is acknowledged when it is done, not when it is taken
    task_reject_on_worker_lost=True,  # a pool child killed mid-task: the task goes back
    worker_prefetch_multiplier=1,
    task_serializer="json",
    accept_content=["json"],
    # A worker killed whole: its unacknowledged tasks are delivered again after this.
    # (and a restore's lock, held by a worker killed while restoring, expires as soon).
    broker_transport_options={
        "visibility_timeout": float(os.environ.get("CHECKPROFILE_VT", 30)),
        "unacked_mutex_expire": float(os.environ.get("CHECKPROFILE_VT", 30)),
    },
    worker_hijack_root_logger=False,
    task_default_queue=os.environ.get("CHECKPROFILE_QUEUE", "checkprofile"),
)

_opened: dict[str, Any] = {}
_lock = threading.Lock()


def shared() -> tuple[Any, Any, LoopbackEvaluator]:
    """This pool process's audit trail, store and evaluator (opened after the fork)."""
    with _lock:
        if not _opened:
            audit, store = stores(
                os.environ["CHECKPROFILE_PG"], audit_table=AUDIT_TABLE, store_table=STORE_TABLE
            )
            _opened.update(
                audit=audit,
                store=store,
                evaluator=LoopbackEvaluator(os.environ["CHECKPROFILE_MODEL_URL"]),
            )
        return _opened["audit"], _opened["store"], _opened["evaluator"]


ACCEPTED_TABLE = f"{LEDGER_TABLE}_accepted"
_made: dict[str, int] = {}


def _ledger() -> psycopg.Connection[Any]:
    """A connection to the host's own tables (made once, under a lock, by whoever is first)."""
    connection = psycopg.connect(os.environ["CHECKPROFILE_PG"], autocommit=True)
    if _made.get("pid") == os.getpid():
        return connection
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [LEDGER_TABLE])
        connection.execute(
            f"CREATE TABLE IF NOT EXISTS {LEDGER_TABLE} (request text PRIMARY KEY,"
            " outcome bytea NOT NULL)".encode()
        )
        connection.execute(
            f"CREATE TABLE IF NOT EXISTS {ACCEPTED_TABLE} (task text PRIMARY KEY,"
            " name text NOT NULL, args text NOT NULL, sent double precision NOT NULL,"
            " done boolean NOT NULL DEFAULT false)".encode()
        )
    _made["pid"] = os.getpid()
    return connection


def accept(tasks: list[tuple[str, str, list[Any]]]) -> None:
    """Accept ``(name, key, args)`` tasks: each kept first (once per key), then sent. What is
    accepted is done in the end, whatever the broker loses (see :func:`sweep`)."""
    with _ledger() as connection, connection.transaction():
        for name, key, args in tasks:
            connection.execute(
                f"INSERT INTO {ACCEPTED_TABLE} (task, name, args, sent) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (task) DO NOTHING".encode(),
                [key, name, json.dumps(args), time.time()],
            )
    for name, key, args in tasks:
        TASKS[name].apply_async(args=[key, *args])


def sweep(older_than: float) -> int:
    """Send again every accepted task not done and last sent ``older_than`` seconds ago; how
    many. Redis's transport takes a message off its list before it marks it unacknowledged:
    a worker killed whole in between loses it, and only this brings it back (run it every few
    visibility timeouts, e.g. with Celery beat). Tasks are idempotent: a second copy of one
    still running changes nothing."""
    with _ledger() as connection, connection.transaction():
        stale = connection.execute(
            f"UPDATE {ACCEPTED_TABLE} SET sent = %s WHERE NOT done AND sent < %s"
            " RETURNING task, name, args".encode(),
            [time.time(), time.time() - older_than],
        ).fetchall()
    for key, name, args in stale:
        TASKS[name].apply_async(args=[key, *json.loads(args)])
    return len(stale)


def _done(key: str) -> None:
    with _ledger() as connection:
        connection.execute(
            f"UPDATE {ACCEPTED_TABLE} SET done = true WHERE task = %s".encode(), [key]
        )


def kept_outcome(request_id: str, outcome: Outcome | None) -> Outcome | None:
    """The outcome kept for ``request_id``: ``outcome`` if it is the first, else the one kept
    before it (``None`` when ``outcome`` is ``None`` and none is kept)."""
    with _ledger() as connection:
        if outcome is not None:
            connection.execute(
                f"INSERT INTO {LEDGER_TABLE} (request, outcome) VALUES (%s, %s)"
                " ON CONFLICT (request) DO NOTHING".encode(),
                [request_id, pickle.dumps(outcome)],
            )
        row = connection.execute(
            f"SELECT outcome FROM {LEDGER_TABLE} WHERE request = %s".encode(), [request_id]
        ).fetchone()
    # The ledger is the host's own table, written only by these tasks.
    return None if row is None else pickle.loads(row[0])


# A store that cannot be reached (a database restarting, a connection cut) is tried again,
# not dropped: a task that raised is acknowledged, and a submission would be lost.
_RETRIED = {"autoretry_for": (OSError, psycopg.Error), "max_retries": None, "retry_backoff": 1}


@app.task(name="checkprofile.check", **_RETRIED)
def check(request_id: str, output: dict[str, Any]) -> dict[str, Any]:
    """Check ``output`` as step ``review`` of run ``request_id``, once however often it is
    delivered; JSON: ``{"action", "state", "reference"?}``."""
    audit, store, evaluator = shared()
    outcome = kept_outcome(request_id, None)
    if outcome is None:
        outcome = kept_outcome(request_id, check_once(evaluator, output))
    assert outcome is not None
    audit.record(verdict_record(outcome, run_id=request_id, step_id=STEP))
    state = StepState(run_id=request_id, step_id=STEP)
    result: dict[str, Any] = {"action": outcome.action}
    if outcome.action == "escalate":
        checkpoint = checkpoint_for(outcome, state=state, submitted_by="agent:clerk")
        result["reference"] = store.put(checkpoint, process="many-machines")
        result["state"] = checkpoint.state.to_json()
    else:
        result["state"] = after_check(state, outcome, submitted_by="agent:clerk").to_json()
    _done(request_id)
    return result


@app.task(name="checkprofile.decide", **_RETRIED)
def decide(key: str, reference: str, decision: dict[str, Any]) -> dict[str, Any]:
    """Apply a reviewer's decision (accepted as ``key``) once; the step's next state (the
    kept decision's)."""
    audit, store, _ = shared()
    try:
        decided = store.decide(reference, decision)
    except AlreadyDecidedError as error:
        decided = error.decided
    audit.record(resolution_record(decided.resolution))
    _done(key)
    return decided.state.to_json()


TASKS = {"check": check, "decide": decide}


def main(argv: list[str]) -> int:
    """``submit``: accept the tasks on stdin, one JSON ``[name, key, args]`` a line;
    ``sweep SECONDS``: send again what was accepted and is not done."""
    import sys

    if argv == ["submit"]:
        accept([tuple(json.loads(line)) for line in sys.stdin if line.strip()])
    elif len(argv) == 2 and argv[0] == "sweep":
        print(sweep(float(argv[1])))
    else:
        raise SystemExit("usage: celery_recipe.py submit < tasks.jsonl | sweep SECONDS")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
