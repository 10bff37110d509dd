"""The Celery recipe (examples/many-machines/celery_recipe.py), for real, under chaos: a real Redis
broker, several prefork workers checking against a slow model on loopback, one PostgreSQL audit
trail and one escalation store, and workers killed at random (SIGKILL, a whole worker or one of
its pool's children) while they work.

Every submission ends with exactly one verdict record, and every escalated one with exactly one
decision (two reviewers decide each, racing): none lost, none twice. The run's kills are
printed (``-s`` shows them); ``CHECKPROFILE_CHAOS_RUNS`` runs it again that many times.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redisserver
from recipes import RECIPES, Worker, environment, host_python, rows, slow_model, wait_for
from test_human_postgres import server  # noqa: F401 - the session's PostgreSQL fixture

from checkprofile.human import PostgresEscalationStore
from support import unavailable

REQUESTS = 45
WORKERS = 3
SCORES = (0.5, 0.9, 0.1)  # unsure (a person decides), pass, fail
RUNS = int(os.environ.get("CHECKPROFILE_CHAOS_RUNS", "1"))


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    given = os.environ.get(redisserver.ENV)
    if given:
        yield given
        return
    import shutil

    if shutil.which("redis-server") is None:
        unavailable(
            f"no Redis: set {redisserver.ENV} to a broker URL, or install redis-server"
            " (.ci/run does)",
            "run the Celery recipe's tests",
        )
    root = tmp_path_factory.mktemp("redis")
    url = redisserver.start(root / "server")
    try:
        yield url
    finally:
        redisserver.stop(root / "server")


def submit(python: str, env: dict[str, str], tasks: list[tuple[str, str, list[Any]]]) -> None:
    lines = "".join(json.dumps(task) + "\n" for task in tasks)
    subprocess.run(
        [python, str(RECIPES / "celery_recipe.py"), "submit"],
        input=lines,
        text=True,
        env=env,
        cwd=RECIPES,
        check=True,
        timeout=120,
        capture_output=True,
    )


@pytest.mark.parametrize("run", range(RUNS))
def test_killed_workers_lose_nothing_and_do_nothing_twice(
    run: int,
    server: str,  # noqa: F811
    broker: str,
    tmp_path: Path,
) -> None:
    python = host_python("CHECKPROFILE_TEST_CELERY_PYTHON", "Celery")
    name = uuid.uuid4().hex[:10]
    queue = f"checks_{name}"
    tables = {"audit": f"audit_{name}", "store": f"escalations_{name}", "ledger": f"ledger_{name}"}
    with slow_model(delay=0.3) as model:
        env = environment(
            CHECKPROFILE_PG=server,
            CHECKPROFILE_REDIS=broker,
            CHECKPROFILE_MODEL_URL=model.url,
            CHECKPROFILE_AUDIT_TABLE=tables["audit"],
            CHECKPROFILE_STORE_TABLE=tables["store"],
            CHECKPROFILE_LEDGER_TABLE=tables["ledger"],
            CHECKPROFILE_VT="4",
        )

        def start(index: int) -> Worker:
            log = tmp_path / f"worker-{index}-{uuid.uuid4().hex[:4]}.log"
            argv = ["-m", "celery", "-A", "celery_recipe", "worker", "--pool", "prefork"]
            argv += ["--concurrency", "2", "-n", f"w{index}-{uuid.uuid4().hex[:4]}@%h"]
            argv += ["-Q", queue, "--without-gossip", "--without-mingle", "-l", "WARNING"]
            return Worker(python, *argv, env=env, log=log)

        env["CHECKPROFILE_QUEUE"] = queue
        workers = [start(i) for i in range(WORKERS)]
        kills = Counter[str]()
        done = threading.Event()
        chaos_random = random.Random(run)

        def chaos() -> None:
            while not done.wait(chaos_random.uniform(0.8, 2.0)):
                index = chaos_random.randrange(WORKERS)
                children = workers[index].children()
                if children and chaos_random.random() < 0.5:
                    os.kill(chaos_random.choice(children), 9)  # one pool child, mid-task
                    kills["pool child"] += 1
                else:
                    workers[index].kill()  # the whole worker
                    kills["whole worker"] += 1
                    workers[index] = start(index)

        requests = {f"req-{name}-{i}": SCORES[i % len(SCORES)] for i in range(REQUESTS)}
        store = PostgresEscalationStore(server, table=tables["store"])
        killer = threading.Thread(target=chaos)
        try:
            killer.start()
            submit(
                python,
                env,
                [("check", rid, [{"score": score, "run": rid}]) for rid, score in requests.items()],
            )
            escalated = sum(1 for score in requests.values() if score == 0.5)
            sent: set[str] = set()
            swept, resent = [time.monotonic()], list[int]()

            def all_decided() -> bool:
                fresh = [w.reference for w in store.waiting(limit=1000) if w.reference not in sent]
                if fresh:
                    at = "2026-10-06T10:00:00Z"
                    tasks: list[tuple[str, str, list[Any]]] = []
                    for reference in fresh:
                        for who in ("ana@example.com", "bo@example.com"):  # two, racing
                            decision = {"kind": "failed", "note": "No.", "by": who, "at": at}
                            key = f"decide:{reference}:{who}"
                            tasks.append(("decide", key, [reference, decision]))
                    submit(python, env, tasks)
                    sent.update(fresh)
                if time.monotonic() > swept[0] + 6:  # what the broker lost, sent again
                    swept[0] = time.monotonic()
                    resent.append(sweep(python, env))
                verdicts, decisions = counts(server, tables["audit"])
                pending = rows(
                    server, f"SELECT count(*) FROM {tables['ledger']}_accepted WHERE NOT done"
                )[0][0]
                return (verdicts, decisions, len(sent), pending) == (
                    REQUESTS,
                    escalated,
                    escalated,
                    0,
                )

            wait_for("every request checked and every escalation decided", all_decided, timeout=240)
            time.sleep(5)  # deliveries still under way finish, or are redelivered, meanwhile
        finally:
            done.set()
            killer.join()
            for worker in workers:
                worker.kill()
        print(f"\nchaos run {run}: {dict(kills)} kills, {REQUESTS} requests, model asked"
              f" {sum(model.counts.values())} times, {sum(resent)} tasks swept back")  # fmt: skip

    audit = tables["audit"]
    per_run = dict(
        rows(server, f"SELECT run, count(*) FROM {audit} WHERE record = 'verdict' GROUP BY run")
    )
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.glob("worker-*.log"))
    failures = [line for line in logs.splitlines() if "ERROR" in line or "raised" in line]
    assert per_run == dict.fromkeys(requests, 1), failures[:20]  # none lost, none twice
    per_key = dict(
        rows(server, f"SELECT key, count(*) FROM {audit} WHERE record = 'decision' GROUP BY key")
    )
    escalations = rows(
        server, f"SELECT reference, run, decision IS NOT NULL FROM {tables['store']}"
    )
    assert sorted(run_id for _, run_id, _ in escalations) == sorted(
        rid for rid, score in requests.items() if score == 0.5
    )
    assert all(decided for _, _, decided in escalations)
    assert len(per_key) == len(escalations) and set(per_key.values()) == {1}
    verdict_keys = dict(rows(server, f"SELECT run, key FROM {audit} WHERE record = 'verdict'"))
    assert set(per_key) == {verdict_keys[run_id] for _, run_id, _ in escalations}
    assert sum(kills.values()) > 0
    assert rows(server, f"SELECT count(*) FROM {tables['ledger']}_accepted WHERE NOT done") == [
        (0,)
    ]
    for table in [*tables.values(), f"{tables['ledger']}_accepted"]:
        rows(server, f"DROP TABLE IF EXISTS {table}")


def sweep(python: str, env: dict[str, str]) -> int:
    done = subprocess.run(
        [python, str(RECIPES / "celery_recipe.py"), "sweep", "8"],
        env=env,
        cwd=RECIPES,
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.split()[-1])


def counts(conninfo: str, audit: str) -> tuple[int, int]:
    """How many runs have a verdict, and how many submissions a decision, in the trail."""
    if not rows(conninfo, "SELECT to_regclass(%s)", audit)[0][0]:
        return 0, 0
    found = rows(
        conninfo,
        f"SELECT count(DISTINCT run) FILTER (WHERE record = 'verdict'),"
        f" count(DISTINCT key) FILTER (WHERE record = 'decision') FROM {audit}",
    )
    return int(found[0][0]), int(found[0][1])
