"""PostgresRecorder against a real PostgreSQL server: records read back typed, several
processes writing at once, a record written twice kept once, windows, the figures the same as
from files, and ``checkprofile calibrate --db`` in a subprocess.

The server is ``CHECKPROFILE_TEST_PG`` (a libpq conninfo; ``.ci/run`` starts a throwaway
cluster and sets it), or else a throwaway cluster this module starts and stops itself when
PostgreSQL's programs are installed. Without either the tests skip, saying why; with ``CI`` set
they fail instead, so a missing server cannot pass for a green run.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pgcluster
import pytest
from test_human_audit import SUBMISSION, WHEN
from test_human_calibrate import EXAMPLE, figures, split, window_records
from test_human_records import RUN, STEP, outcome_of

from checkprofile._pg_copy import COPY_FROM
from checkprofile.human import (
    AuditError,
    AuditRecord,
    Completed,
    DecisionRecord,
    PostgresRecorder,
    Recorder,
    StoreError,
    calibrate,
    calibration_text,
    decision_record,
    read_records,
    record_from_json,
    verdict_record,
)
from support import unavailable

ROOT = Path(__file__).resolve().parents[3]
NO_SERVER = (
    f"no PostgreSQL server: set {pgcluster.ENV} to a conninfo, or install PostgreSQL"
    " (apt-get install postgresql; .ci/run does)"
)


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """A conninfo of a PostgreSQL server the tests may make tables in."""
    try:
        import psycopg  # noqa: F401
    except ImportError:  # pragma: no cover - the test extra installs it
        missing = "psycopg is not installed (pip install -e '.[test]')"
        unavailable(missing, "run the PostgreSQL tests")
    given = os.environ.get(pgcluster.ENV)
    if given is not None:
        yield given
        return
    if pgcluster.binaries() is None:
        unavailable(NO_SERVER, "run the PostgreSQL tests")
    root = Path(tempfile.mkdtemp(prefix="checkprofile-pg-"))  # handed to the server's user
    try:
        yield pgcluster.start(root)
    finally:
        pgcluster.stop(root)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def table(server: str) -> Iterator[str]:
    """A table name of this test's own, dropped after it."""
    import psycopg

    name = f"audit_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"DROP TABLE IF EXISTS {name}")


@pytest.fixture
def store(server: str, table: str) -> Iterator[PostgresRecorder]:
    with PostgresRecorder(server, table=table) as recorder:
        yield recorder


def rows(server: str, query: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        return connection.execute(query).fetchall()


# --- recording and reading back ---------------------------------------------------------------


def some_records() -> list[AuditRecord]:
    written: list[AuditRecord] = [
        verdict_record(outcome_of(verdict, advisory=advisory), run_id=RUN, step_id=STEP)
        for verdict in ("pass", "fail", "unsure", "error")
        for advisory in (False, True)
    ]
    own = Completed(by="zoë", at=WHEN, output={"name": "Zoë\u2028", "n": [1, 2.5]}, summary="ok")
    written.append(decision_record(own, run_id=RUN, step_id=STEP, submission=SUBMISSION))
    return written


def test_records_read_back_typed_and_equal(store: PostgresRecorder, server: str) -> None:
    assert isinstance(store, Recorder)
    written = some_records()
    for record in written:
        store.record(record)
    assert tuple(store.read()) == tuple(written)
    assert store.count() == len(written)
    # The line a row keeps is the line a JSON Lines file holds, and SQL can read it.
    (kind, line, model), *_ = rows(
        server, f"SELECT record, line, line::jsonb #>> '{{verdict,model}}' FROM {store.table}"
    )
    assert (kind, model) == ("verdict", "example-evaluator-1")
    assert record_from_json(json.loads(line)) == written[0]


def test_the_store_is_named_without_its_password(server: str, table: str) -> None:
    store = PostgresRecorder(f"{server} password=s3cr3t-pw", table=table)
    try:
        name = store.name
    finally:
        store.close()
    assert name.startswith("postgresql host=") and name.endswith(f"table={table}")
    assert "s3cr3t" not in name and "s3cr3t" not in repr(store)


# --- many writers -----------------------------------------------------------------------------

PROCESSES = 4
PER_PROCESS = 200


def write_records(conninfo: str, table: str, process: int, same: bool) -> None:
    """One replica: PER_PROCESS records of 5 KB and more, its own or the same as the others'."""
    with PostgresRecorder(conninfo, table=table) as recorder:
        for n in range(PER_PROCESS):
            decision = Completed(by="p", at=WHEN, output={"n": n, "pad": "x" * (5000 + n)})
            run = "run-shared" if same else f"run-{process}"
            recorder.record(
                decision_record(decision, run_id=run, step_id=f"s{n}", submission=SUBMISSION)
            )


def run_replicas(conninfo: str, table: str, *, same: bool) -> None:
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context: Any = multiprocessing.get_context(method)
    workers = [
        context.Process(target=write_records, args=(conninfo, table, process, same))
        for process in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0


def test_replicas_writing_at_once_lose_nothing(server: str, table: str) -> None:
    # Four replicas start at once on a table none has made yet, and each records 200 records.
    run_replicas(server, table, same=False)
    store = PostgresRecorder(server, table=table)
    records = list(store.read())
    store.close()
    assert len(records) == PROCESSES * PER_PROCESS
    seen: dict[str, list[int]] = {}
    for record in records:
        assert isinstance(record, DecisionRecord) and isinstance(record.decision, Completed)
        seen.setdefault(record.run, []).append(record.decision.output["n"])
    # Nothing lost, and each replica's records in the order it wrote them.
    assert seen == {f"run-{p}": list(range(PER_PROCESS)) for p in range(PROCESSES)}
    query = f"SELECT indexname FROM pg_indexes WHERE tablename = '{table}'"
    indexes = {name for (name,) in rows(server, query)}
    assert {f"{table}_at", f"{table}_key", f"{table}_sha256"} <= indexes


def test_a_record_written_twice_is_kept_once(store: PostgresRecorder, server: str) -> None:
    # Four replicas record the same 200 records at once: 200 rows.
    run_replicas(server, store.table, same=True)
    assert store.count() == PER_PROCESS
    # And one record recorded again later, by another recorder, changes nothing.
    record = next(iter(store.read()))
    with PostgresRecorder(server, table=store.table) as other:
        other.record(record)
        other.record_many([record, record])
    assert store.count() == PER_PROCESS


@pytest.mark.parametrize("size", [COPY_FROM - 1, COPY_FROM, 3 * COPY_FROM])
def test_a_batch_keeps_its_order_and_each_record_once_whether_or_not_it_is_copied(
    store: PostgresRecorder, size: int
) -> None:
    # Below COPY_FROM a batch is one INSERT a row, from it COPY through a temporary table:
    # both keep the order of arrival, and a record already stored or twice in the batch once.
    made = [
        verdict_record(outcome_of(verdict), run_id=f"run-{n}", step_id=STEP)
        for n, verdict in zip(range(size), itertools.cycle(("pass", "fail", "unsure")))
    ]
    store.record(made[2])
    store.record_many([*made, made[0], made[2]])
    assert [record.run for record in store.read()] == [
        "run-2",
        *(f"run-{n}" for n in range(size) if n != 2),
    ]
    # A second batch in the same recorder (the same connection, the temporary table reused).
    store.record_many(made[::-1])
    assert store.count() == size
    with pytest.raises(TypeError, match="an audit record is a"):
        store.record_many([*made[:3], "not a record"])  # type: ignore[list-item]
    assert store.count() == size


def test_a_recorder_used_in_a_forked_child_opens_its_own_connection(
    store: PostgresRecorder,
) -> None:
    store.record(some_records()[0])  # the parent's connection is open
    if "fork" not in multiprocessing.get_all_start_methods():  # pragma: no cover
        pytest.skip("no fork on this platform")
    child: Any = multiprocessing.get_context("fork").Process(
        target=store.record, args=(some_records()[1],)
    )
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    store.record(some_records()[2])  # and the parent's still works
    assert store.count() == 3


# --- windows and calibration ------------------------------------------------------------------


def load(store: PostgresRecorder, *paths: Path) -> None:
    for path in paths:
        store.record_many(read_records(path))


def test_a_window_reads_verdicts_with_their_decisions(
    store: PostgresRecorder, tmp_path: Path
) -> None:
    path = tmp_path / "records.jsonl"
    window_records(path)
    load(store, path)
    since, until = "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"
    read = [(record.record, record.run) for record in store.read(since=since, until=until)]
    assert read == [
        ("verdict", "first"),
        ("decision", "first"),
        ("verdict", "last"),
        ("decision", "last"),  # made after the window: its verdict is in it
        ("verdict", "blocking"),
        ("decision", "blocking"),
        ("decision", "orphan-in"),  # no verdict anywhere, made in the window
    ]
    assert len(list(store.read())) == len(read_records(path))
    windows: list[tuple[str | None, str | None]] = [
        (since, until),
        (since, None),
        (None, until),
        (None, None),
    ]
    for start, end in windows:
        assert figures(calibrate(store, min_cases=1, since=start, until=end)) == figures(
            calibrate(path, min_cases=1, since=start, until=end)
        )


def test_the_figures_from_postgresql_are_the_files_figures(
    store: PostgresRecorder, tmp_path: Path
) -> None:
    # A month recorded by three replicas, each to its own file, some records by two of them;
    # the same records in PostgreSQL, by the same replicas.
    files = split(EXAMPLE, tmp_path / "replicas")
    with files[0].open("ab") as out:
        out.write(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[10:20]))
    load(store, *files)
    from_files, from_db = calibrate(*files), calibrate(store)
    assert from_files.checks and figures(from_db) == figures(from_files)
    assert (from_files.duplicates, from_db.duplicates) == (10, 0)  # the table kept them once
    assert from_db.sources == (store.name,)
    for window in (("2026-11-09", "2026-11-23"), ("2026-11-16T12:00:00+01:00", None)):
        since, until = window
        assert figures(calibrate(store, since=since, until=until)) == figures(
            calibrate(*files, since=since, until=until)
        )
    # Files and the database read together: every record is in both, so all count once.
    both = calibrate(*files, store)
    assert figures(both) == figures(from_files)
    assert both.duplicates == from_files.duplicates + store.count()


def test_a_row_that_is_not_a_record_is_named_by_its_seq(
    store: PostgresRecorder, server: str
) -> None:
    store.record(some_records()[0])
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(
            f"INSERT INTO {store.table} (sha256, record, key, run, step, at, at_order, line)"
            " VALUES ('x', 'decision', 'k', 'r', 's', 'a', 'a', '{\"record\": \"decision\"}')"
        )
    with pytest.raises(AuditError, match=r'table=audit_\w+:2: a decision record needs "format"'):
        list(store.read())


# --- the command line -------------------------------------------------------------------------


def run_cli(*args: str | Path, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "checkprofile", "calibrate", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def test_cli_calibrates_from_the_database(
    store: PostgresRecorder, server: str, tmp_path: Path
) -> None:
    load(store, EXAMPLE)
    done = run_cli("--db", server, "--db-table", store.table)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == calibration_text(calibrate(store))
    assert f"Sources: {store.name}." in done.stdout
    # With files too, a window, and JSON.
    window = ("--since", "2026-11-09", "--until", "2026-11-23")
    done = run_cli(EXAMPLE, "--db", server, "--db-table", store.table, "--json", *window)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    expected = calibrate(store, since="2026-11-09", until="2026-11-23")
    assert {key: data[key] for key in ("checks", "skipped")} == {
        key: expected.to_json()[key] for key in ("checks", "skipped")
    }
    assert data["sources"] == [str(EXAMPLE), store.name]
    # Each record the database gave for the window is also in the file: read twice.
    assert data["duplicates"] == len(list(store.read(since="2026-11-09", until="2026-11-23")))


@pytest.mark.parametrize(
    ("conninfo", "message"),
    [
        (
            "host=/nonexistent-checkprofile port=1 password=s3cr3t",
            "checkprofile: postgresql host=/nonexistent-checkprofile port=1"
            " table=checkprofile_audit: cannot connect: ",
        ),
        (
            "host=x password=s3 cr3t",
            "checkprofile: --db: the connection string is not one libpq reads (it is not"
            " shown: it may hold a password)",
        ),
        (
            "postgresql://me:s3cr3t@/db?host=/nonexistent-checkprofile",
            "checkprofile: postgresql user=me dbname=db host=/nonexistent-checkprofile",
        ),
    ],
    ids=["unreachable", "unreadable", "uri"],
)
def test_cli_a_store_it_cannot_use_is_one_line_without_the_password(
    conninfo: str, message: str
) -> None:
    done = run_cli("--db", conninfo)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1
    assert "cr3t" not in done.stderr


def test_cli_refuses_a_table_name_it_would_have_to_quote(server: str) -> None:
    done = run_cli("--db", server, "--db-table", "audit; DROP TABLE x")
    assert done.returncode == 2
    assert done.stderr == (
        "checkprofile: --db: table must be a lowercase SQL name (letters, digits, _), optionally"
        ' with its schema, got "audit; DROP TABLE x"\n'
    )


def test_a_store_it_cannot_reach_raises_store_error() -> None:
    store = PostgresRecorder("host=/nonexistent-checkprofile port=1 connect_timeout=2")
    with pytest.raises(StoreError, match="cannot connect") as caught:
        store.record(some_records()[0])
    assert isinstance(caught.value, OSError)


def test_importing_the_human_side_does_not_import_psycopg() -> None:
    code = "import sys, checkprofile.human, checkprofile.cli; print('psycopg' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False"


# --- every store takes or refuses the same records (issue 21, finding 8) ------------------------


def records_with(text: str) -> dict[str, AuditRecord]:
    """A record with ``text`` in each kind of text field a record has."""
    from checkprofile import YesNoAnswer, combine, outcome_for, parse_check
    from checkprofile.human import Returned

    check = parse_check([{"ask": f"Is it {text}?"}])
    verdict = combine(check, [YesNoAnswer(0.99)], model=f"m{text}", at=WHEN)
    plain = combine(parse_check("Is it?"), [YesNoAnswer(0.99)], model="m", at=WHEN)

    def made(outcome: Any = plain, run: str = RUN, step: str = STEP) -> AuditRecord:
        return verdict_record(outcome_for(outcome), run_id=run, step_id=step, submission=SUBMISSION)

    return {
        "run id": made(run=f"run{text}"),
        "step id": made(step=f"step{text}"),
        "ask and model": made(verdict),
        "note": decision_record(
            Returned(note=f"fix {text}", by="zoë", at=WHEN),
            run_id=RUN,
            step_id=STEP,
            submission=SUBMISSION,
        ),
        "output and by": decision_record(
            Completed(by=f"zoë{text}", at=WHEN, output={"n": f"x{text}"}, summary=f"ok{text}"),
            run_id=RUN,
            step_id=STEP,
            submission=SUBMISSION,
        ),
    }


@pytest.mark.parametrize("field", list(records_with("")))
def test_a_record_no_store_can_keep_is_refused_alike_by_every_store(
    store: PostgresRecorder, tmp_path: Path, field: str
) -> None:
    from checkprofile.human import JsonLinesRecorder

    record = records_with("\x00")[field]
    trail = tmp_path / "trail.jsonl"
    refused = []
    for recorder in (JsonLinesRecorder(trail), store):
        with pytest.raises(ValueError) as caught:
            recorder.record(record)
        refused.append(str(caught.value))
    assert refused[0] == refused[1]
    assert "holds U+0000 (NUL)" in refused[0] and refused[0].endswith("nothing was written")
    assert not trail.exists() or trail.read_bytes() == b""
    assert store.count() == 0


@pytest.mark.parametrize("field", list(records_with("")))
def test_a_record_any_store_can_keep_is_taken_alike_by_every_store(
    store: PostgresRecorder, tmp_path: Path, field: str
) -> None:
    from checkprofile.human import JsonLinesRecorder

    # Every other character a text may hold, and a backslash before "u0000" (not a NUL).
    record = records_with("\x01\x1b\x7f\u202e\ufeff\uffff\U0010ffff\\u0000")[field]
    trail = tmp_path / "trail.jsonl"
    JsonLinesRecorder(trail).record(record)
    store.record(record)
    assert tuple(read_records(trail)) == tuple(store.read()) == (record,)
