"""The DBOS recipe (examples/many-machines/dbos_recipe.py), for real: DBOS's workflows on the
PostgreSQL server ``.ci/run`` starts, a slow model on loopback, and workers killed with SIGKILL.

A worker killed while the check waits on its model, and the next one killed while the step
waits on its person: after a restart the step ends decided as the person decided, the model
was asked no more than twice (the killed call and one more), and the audit trail and the store
hold one verdict and one decision. A wait that runs out leaves the step escalated.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recipes import Worker, environment, host_python, rows, slow_model, sqlalchemy_url, wait_for
from test_human_postgres import server  # noqa: F401 - the session's PostgreSQL fixture

from checkprofile.human import AlreadyDecidedError, PostgresEscalationStore, PostgresRecorder

DECISION = {"kind": "failed", "note": "No report.", "by": "ana@example.com"}
AT = "2026-10-06T10:00:00Z"


@pytest.fixture
def dbos(server: str, tmp_path: Path) -> Iterator[dict[str, Any]]:  # noqa: F811
    """A DBOS system database, tables and a slow model of this test's own."""
    python = host_python("CHECKPROFILE_TEST_DBOS_PYTHON", "DBOS")
    name = uuid.uuid4().hex[:10]
    database = f"dbos_{name}"
    with slow_model(delay=3.0) as model:
        env = environment(
            CHECKPROFILE_PG=server,
            CHECKPROFILE_DBOS_URL=sqlalchemy_url(server, database),
            CHECKPROFILE_MODEL_URL=model.url,
            CHECKPROFILE_AUDIT_TABLE=f"audit_{name}",
            CHECKPROFILE_STORE_TABLE=f"escalations_{name}",
        )
        yield {
            "python": python,
            "env": env,
            "model": model,
            "server": server,
            "database": database,
            "audit": PostgresRecorder(server, table=f"audit_{name}"),
            "store": PostgresEscalationStore(server, table=f"escalations_{name}"),
            "logs": tmp_path,
        }
    for table in (f"audit_{name}", f"escalations_{name}"):
        rows(server, f"DROP TABLE IF EXISTS {table}")
    rows(server, f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


def worker(dbos: dict[str, Any], *args: str, env: dict[str, str] | None = None) -> Worker:
    log = dbos["logs"] / f"worker-{uuid.uuid4().hex[:6]}.log"
    return Worker(dbos["python"], "dbos_recipe.py", *args, env=env or dbos["env"], log=log)


def command(dbos: dict[str, Any], *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [dbos["python"], "dbos_recipe.py", *args],
        cwd=Path(__file__).resolve().parents[1] / "examples" / "many-machines",
        env=env or dbos["env"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def asked(dbos: dict[str, Any], run_id: str) -> int:
    from common import submission_key

    key = submission_key({"score": 0.5, "run": run_id})
    with dbos["model"].lock:
        return int(dbos["model"].counts.get(key, 0))


def check_recorded(dbos: dict[str, Any], run_id: str) -> bool:
    """DBOS has recorded the check step's result (the workflow waits on its person)."""
    url = dbos["server"].replace("dbname=postgres", f"dbname={dbos['database']}")
    return bool(
        rows(
            url,
            "SELECT 1 FROM dbos.operation_outputs WHERE workflow_uuid = %s"
            " AND function_name = 'check_step'",
            f"checkprofile:{run_id}:review",
        )
    )


def test_a_step_survives_a_worker_killed_on_the_model_and_one_killed_on_the_person(
    dbos: dict[str, Any],
) -> None:
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    first = worker(dbos, "start", run_id, "0.5")
    try:
        wait_for("the model to be asked", lambda: asked(dbos, run_id) == 1)
    finally:
        first.kill()  # while the model is thinking
    assert dbos["store"].waiting() == [] and dbos["audit"].count() == 0

    second = worker(dbos, "serve")  # recovers the workflow: the check runs again
    try:
        waiting = wait_for("the checkpoint", dbos["store"].waiting, timeout=90)
        wait_for("the check step recorded", lambda: check_recorded(dbos, run_id))
    finally:
        second.kill()  # while the step waits on its person
    (escalation,) = waiting
    assert asked(dbos, run_id) == 2  # the killed call, and the one that answered

    third = worker(dbos, "serve")  # recovers it again: the check is replayed, not rerun
    try:
        wait_for("the worker", lambda: "ready" in third.text())
        decision = {**DECISION, "at": AT}
        command(dbos, "send", escalation.reference, json.dumps(decision))
        # A second reviewer's decision arrives too: the first one stands.
        command(dbos, "send", escalation.reference, json.dumps({**decision, "by": "bo"}))
        result = json.loads(command(dbos, "result", run_id))
    finally:
        third.kill()
    assert result["action"] == "decided"
    record = result["state"]["record"]
    assert (record["decision"], record["by"], record["note"]) == (
        "failed",
        "ana@example.com",
        "No report.",
    )
    assert asked(dbos, run_id) == 2
    kept = dbos["store"].decided(escalation.reference)
    assert kept is not None and kept.decision.by == "ana@example.com"
    assert kept.state.to_json() == result["state"]
    with pytest.raises(AlreadyDecidedError):
        dbos["store"].decide(escalation.reference, {**decision, "by": "cy"})
    records = list(dbos["audit"].read())
    assert [r.record for r in records] == ["verdict", "decision"]
    assert {r.key for r in records} == {records[0].key}


def test_a_wait_that_runs_out_leaves_the_step_escalated(dbos: dict[str, Any]) -> None:
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    env = {**dbos["env"], "CHECKPROFILE_DECISION_WAIT": "1"}
    started = worker(dbos, "start", run_id, "0.5", env=env)
    try:
        wait_for("the worker", lambda: "ready" in started.text())
        result = json.loads(command(dbos, "result", run_id))
    finally:
        started.kill()
    assert result["action"] == "escalate"
    assert result["state"]["escalation"] is not None
    (waiting,) = dbos["store"].waiting()
    assert waiting.reference == result["reference"]
    assert dbos["store"].decided(waiting.reference) is None
