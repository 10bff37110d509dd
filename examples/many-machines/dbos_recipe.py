"""A check inside a durable engine: DBOS workflows on PostgreSQL.

The check is a DBOS step; the wait for the person is DBOS's durable ``recv``, on the checkpoint's
reference as its topic, with a timeout whose default (a week) leaves the step escalated: a wait
that runs out never completes the step, the checkpoint still waits in the escalation store. The
decision is delivered to the workflow by the reference (``send``, with the reference as the
idempotency key), and applied once by the escalation store: a second decision, or the same one
delivered again, finds the first and goes on with it.

Why it survives a killed worker: DBOS records each step's result in its system database before
the workflow goes on, and a restarted worker recovers every workflow left pending. A worker
killed while the check waits on the model runs the check again (the model is asked once more;
``run_check`` itself asks at most twice per run); one killed while the workflow waits on the
person replays the recorded check (the model is not asked again) and waits again. The audit
trail and the store keep what is written twice once.

Run it (``CHECKPROFILE_PG``: a libpq conninfo for the audit trail and the store;
``CHECKPROFILE_DBOS_URL``: DBOS's system database URL; ``CHECKPROFILE_MODEL_URL``: the model)::

    python examples/many-machines/dbos_recipe.py start run-1 0.5   # check, wait for a person
    python examples/many-machines/dbos_recipe.py serve             # a worker (recovers work)
    python examples/many-machines/dbos_recipe.py send REFERENCE '{"kind": "failed", ...}'
    python examples/many-machines/dbos_recipe.py result run-1      # prints the step's end

Tested by ``tests/test_recipe_dbos.py`` against real PostgreSQL, with SIGKILL.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

from common import STEP, LoopbackEvaluator, checked, stores
from dbos import DBOS, DBOSClient, DBOSConfig, SetWorkflowID

from checkprofile.human import AlreadyDecidedError, resolution_record

#: How long a step waits on its person by default: the wait ends with the step escalated.
DECISION_WAIT = float(os.environ.get("CHECKPROFILE_DECISION_WAIT", 7 * 24 * 3600))
AUDIT_TABLE = os.environ.get("CHECKPROFILE_AUDIT_TABLE", "checkprofile_audit")
STORE_TABLE = os.environ.get("CHECKPROFILE_STORE_TABLE", "checkprofile_escalations")


def workflow_id(run_id: str) -> str:
    """The workflow of a step: the same run and step is the same workflow, started once."""
    return f"checkprofile:{run_id}:{STEP}"


_opened: dict[str, Any] = {}
_lock = threading.Lock()


def shared() -> tuple[Any, Any, LoopbackEvaluator]:
    """This process's audit trail, store and evaluator (opened on first use)."""
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


@DBOS.step()
def check_step(run_id: str, output: dict[str, Any]) -> dict[str, Any]:
    """The check, its verdict recorded, its checkpoint put when it escalates (all JSON)."""
    audit, store, evaluator = shared()
    return checked(run_id, output, evaluator=evaluator, audit=audit, store=store)


@DBOS.step()
def decide_step(reference: str, decision: dict[str, Any]) -> dict[str, Any]:
    """Apply the person's decision once; the step's next state. A decision already kept (by
    another reviewer first, or by this step before a crash) is the one that stands."""
    audit, store, _ = shared()
    try:
        decided = store.decide(reference, decision)
    except AlreadyDecidedError as error:
        decided = error.decided
    audit.record(resolution_record(decided.resolution))  # kept once, however often
    return {"action": "decided", "reference": reference, "state": decided.state.to_json()}


@DBOS.workflow()
def checked_step(run_id: str, output: dict[str, Any], wait: float) -> dict[str, Any]:
    result = check_step(run_id, output)
    if result["action"] != "escalate":
        return result
    decision = DBOS.recv(topic=result["reference"], timeout_seconds=wait)
    if decision is None:
        return result  # no one decided in time: the step stays escalated
    return decide_step(result["reference"], decision)


def config() -> DBOSConfig:
    return {
        "name": "checkprofile-recipe",
        "system_database_url": os.environ["CHECKPROFILE_DBOS_URL"],
        "notification_listener_polling_interval_sec": 0.1,
    }


def serve() -> None:
    """Be a worker until killed: DBOS recovers the workflows left pending."""
    threading.Event().wait()


def main(argv: list[str]) -> int:
    command, *rest = argv
    if command in ("send", "result"):
        client = DBOSClient(system_database_url=os.environ["CHECKPROFILE_DBOS_URL"])
        try:
            if command == "send":
                reference, decision = rest
                _, store, _ = shared()
                checkpoint = store.get(reference)
                client.send(
                    workflow_id(checkpoint.run_id),
                    json.loads(decision),
                    topic=reference,
                    idempotency_key=reference,
                )
            else:
                (run_id,) = rest
                print(json.dumps(client.retrieve_workflow(workflow_id(run_id)).get_result()))
        finally:
            client.destroy()
        return 0
    DBOS(config=config())
    DBOS.launch()
    if command == "start":
        run_id, score = rest
        with SetWorkflowID(workflow_id(run_id)):
            output = {"score": float(score), "run": run_id}
            DBOS.start_workflow(checked_step, run_id, output, DECISION_WAIT)
    print("ready", flush=True)
    serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
