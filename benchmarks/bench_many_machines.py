"""Many machines, measured: writing a batch to PostgreSQL against COPY, and checks per second
with several worker processes against the same workers doing only the model call.

    python benchmarks/bench_many_machines.py [--db CONNINFO] [--batch 2000] [--checks 200]
                                             [--delay 0.02]

``--db`` is a libpq conninfo (or ``CHECKPROFILE_TEST_PG``; without either a throwaway cluster
is started, as the tests do). In the same run:

* **batch**: ``PostgresRecorder.record_many`` of ``--batch`` verdict records, and
  ``PostgresEscalationStore.put_many`` of as many checkpoints, each against **COPY** of the
  same rows, made beforehand, into a table of the same columns (the floor: PostgreSQL's bulk
  load). Printed: rows per second, the ratio to COPY, and the same without the time the
  library takes to make the rows (the audit line is written and read back before it is
  stored; a checkpoint is written as JSON and named by its hash).
* **workers**: 1, 2 and 4 processes, each running ``--checks`` checks one after another
  (``run_check_sync`` against the slow model on loopback, ``--delay`` seconds a call; the
  verdict recorded and each escalation put, as the recipes do), against the same processes
  only calling the model as often. Printed: checks per second and the ratio to model calls per
  second (1.0: the library costs nothing beside the model).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "examples" / "many-machines"), str(ROOT / "tests")]

import pgcluster  # noqa: E402
from common import STEP, LoopbackEvaluator, SlowModel, check_once, checked  # noqa: E402

from checkprofile.human import (  # noqa: E402
    PostgresEscalationStore,
    PostgresRecorder,
    StepState,
    checkpoint_for,
    verdict_record,
)
from checkprofile.human._audit._postgres import _row  # noqa: E402


def timed(work: object) -> float:
    start = time.perf_counter()
    work()  # type: ignore[operator]
    return time.perf_counter() - start


def batch(conninfo: str, size: int, model_url: str) -> None:
    import psycopg

    evaluator = LoopbackEvaluator(model_url)
    outcomes = [check_once(evaluator, {"score": 0.5, "n": n}) for n in range(20)]
    records = [
        verdict_record(outcomes[n % 20], run_id=f"run-{n}", step_id=STEP) for n in range(size)
    ]
    checkpoints = [
        checkpoint_for(outcomes[n % 20], state=StepState(run_id=f"run-{n}", step_id=STEP))
        for n in range(size)
    ]
    name = uuid.uuid4().hex[:8]
    audit = PostgresRecorder(conninfo, table=f"bench_audit_{name}")
    store = PostgresEscalationStore(conninfo, table=f"bench_store_{name}")
    audit.count()
    store.waiting()
    with psycopg.connect(conninfo, autocommit=True) as connection:
        for table in (f"bench_audit_{name}", f"bench_store_{name}"):
            connection.execute(f"CREATE TABLE {table}_copy (LIKE {table} INCLUDING ALL)".encode())
        rows = [_row(record) for record in records]
        put_rows = [store._row(checkpoint, "bench") for checkpoint in checkpoints]

        def copy_audit() -> None:
            with connection.cursor().copy(
                f"COPY bench_audit_{name}_copy (sha256, record, key, run, step, at, at_order,"
                " line) FROM STDIN".encode()
            ) as copy:
                for row in rows:
                    copy.write_row(row)

        def copy_store() -> None:
            with connection.cursor().copy(
                f"COPY bench_store_{name}_copy (reference, process, run, step, submitted_by,"
                " put_at, checkpoint) FROM STDIN".encode()
            ) as copy:
                for row in put_rows:
                    copy.write_row((*row[:5], time.time(), row[5]))

        results = {
            "making audit rows": timed(lambda: [_row(record) for record in records]),
            "making store rows": timed(lambda: [store._row(c, "bench") for c in checkpoints]),
            "record_many": timed(lambda: audit.record_many(records)),
            "COPY (audit rows)": timed(copy_audit),
            "put_many": timed(lambda: store.put_many(checkpoints)),
            "COPY (store rows)": timed(copy_store),
        }
        for table in (f"bench_audit_{name}", f"bench_store_{name}"):
            connection.execute(f"DROP TABLE {table}, {table}_copy".encode())
    print(f"batch of {size}:")
    for label, seconds in results.items():
        print(f"  {label:18} {size / seconds:10.0f} rows/s")
    for name, copy, making in (
        ("record_many", "COPY (audit rows)", "making audit rows"),
        ("put_many", "COPY (store rows)", "making store rows"),
    ):
        whole = results[name] / results[copy]
        database = (results[name] - results[making]) / results[copy]
        print(f"  {name} / COPY: {whole:.2f}x (the database's part alone: {database:.2f}x)")


def _worker(kind: str, conninfo: str, model_url: str, table: str, checks: int, seed: int) -> None:
    evaluator = LoopbackEvaluator(model_url)
    if kind == "model":
        for n in range(checks):
            body = f'{{"output": {{"score": 0.5, "n": {n}, "w": {seed}}}}}'.encode()
            request = urllib.request.Request(model_url, data=body)
            with urllib.request.urlopen(request, timeout=60) as response:
                response.read()
        return
    audit = PostgresRecorder(conninfo, table=f"{table}_audit")
    store = PostgresEscalationStore(conninfo, table=f"{table}_store")
    for n in range(checks):
        output = {"score": (0.5, 0.9, 0.1)[n % 3], "n": n, "w": seed}
        checked(f"run-{seed}-{n}", output, evaluator=evaluator, audit=audit, store=store)


def workers(conninfo: str, checks: int, model_url: str) -> None:
    context = multiprocessing.get_context("fork")
    table = f"bench_{uuid.uuid4().hex[:8]}"
    # The tables made once, before the workers race to make them.
    PostgresRecorder(conninfo, table=f"{table}_audit").count()
    PostgresEscalationStore(conninfo, table=f"{table}_store").waiting()
    print(f"workers, {checks} checks each:")
    for count in (1, 2, 4):
        rates = {}
        for kind in ("model", "check"):
            processes = [
                context.Process(
                    target=_worker,
                    args=(kind, conninfo, model_url, table, checks, 1000 * count + i),
                )
                for i in range(count)
            ]
            start = time.perf_counter()
            for process in processes:
                process.start()
            for process in processes:
                process.join()
            rates[kind] = count * checks / (time.perf_counter() - start)
        print(
            f"  {count} process(es): {rates['check']:8.1f} checks/s, {rates['model']:8.1f} model"
            f" calls/s, ratio {rates['check'] / rates['model']:.2f}"
        )
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f"DROP TABLE {table}_audit, {table}_store".encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--db", default=os.environ.get(pgcluster.ENV))
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--checks", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.02)
    args = parser.parse_args(argv)
    model = SlowModel(delay=args.delay)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    root = None
    conninfo = args.db
    if not conninfo:
        root = Path(tempfile.mkdtemp(prefix="checkprofile-bench-pg-"))
        conninfo = pgcluster.start(root)
    try:
        batch(conninfo, args.batch, model.url)
        workers(conninfo, args.checks, model.url)
    finally:
        model.shutdown()
        if root is not None:
            pgcluster.stop(root)
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
