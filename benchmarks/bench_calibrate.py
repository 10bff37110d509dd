"""Calibration at the scale of a busy month: ``calibrate`` against the floor of reading the
same records at all, measured in the same run.

    python benchmarks/bench_calibrate.py [--lines 10000,100000,1000000] [--replicas 4]
                                         [--dir DIR] [--month] [--db CONNINFO]

For each size, the records of a generated month (advisory verdicts of a three-question check,
each with its provenance, and the decisions of the people who saw the same submissions) are
written to ``--replicas`` JSON Lines files, as several servers would write them: a verdict goes
to the file of the replica that ran the check, its decision to the file of whichever replica
took it, and a few records are written by two replicas. Then, in the same run:

* **floor**: ``json.loads`` of every line of the same files, read line by line;
* **calibrate**: ``calibrate(*files)``, the whole report (reading, joining, the figures).

Printed: each time, the ratio calibrate / floor (the target, issue 24: at most 3 at a million
lines), and the cost per line at each size against the smallest (linear: about 1), and the peak
memory of a process that only calibrates (the target: at most 400 MB at a million lines).

``--sizes-db`` (with ``--db``) also loads each size into PostgreSQL once (one COPY of the rows
``record_many`` would store) and, in the same run, times the **db floor** (fetching the same
rows with the same named cursor and query, and ``json.loads`` of each line) and calibrating
from there, both as elapsed time (the server's work included, which no CPU clock of this
process counts); then the ratio, the peak memory of a process that calibrates from there, and
whether the figures are the files'.

``--calls`` gives each verdict record the ``calls`` the library keeps of each attempt (its
wall time, the tokens the host reported and its request id), as a trail written by a check
that ran against a provider holds them.

``--month`` times a month of a busy process (10,000 checks a day: 300,000 verdicts and as many
decisions) read from the replicas' files and, with ``--db`` (a libpq conninfo; or the
``CHECKPROFILE_TEST_PG`` environment variable), loaded once into PostgreSQL and calibrated from
there; the two reports' figures are compared.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from bench_core import CHECK

from checkprofile import (
    Answer,
    ChoiceAnswer,
    ModelCall,
    RubricAnswer,
    Submission,
    Usage,
    YesNoAnswer,
    combine,
    error_verdict,
    outcome_for,
)
from checkprofile.human import calibrate, iter_records, verdict_record

STEP = "screen_vendor"
START = datetime(2026, 11, 1, tzinfo=timezone.utc)
MONTH = timedelta(days=30)


def _answers(rng: random.Random) -> tuple[Answer, ...]:
    """Answers as a model with native probabilities gives them: six decimals, so that every
    case has answers of its own (nothing is graded once for many cases)."""
    level = rng.choices((2, 1, 0), (80, 15, 5))[0]
    name = rng.choices(("states", "hedges"), (85, 15))[0]
    level_p = round(rng.uniform(0.55, 1.0), 6)
    name_p = round(rng.uniform(0.6, 1.0), 6)
    rest = (1 - level_p) / 2
    return (
        YesNoAnswer(round(rng.betavariate(8, 1.5), 6), source="native"),
        ChoiceAnswer(
            name,
            name_p,
            source="native",
            distribution=((name, name_p), ("hedges" if name == "states" else "states", 1 - name_p)),
        ),
        RubricAnswer(
            level,
            level_p,
            source="native",
            distribution=tuple((n, level_p if n == level else rest) for n in range(3)),
        ),
    )


def _calls(rng: random.Random, attempts: int) -> tuple[ModelCall, ...]:
    """What each attempt cost, as a provider reports it: tokens (the cached ones not always)
    and one request id."""
    return tuple(
        ModelCall(
            seconds=round(rng.uniform(0.2, 4.0), 6),
            questions=3,
            usage=Usage(
                input_tokens=rng.randint(800, 4000),
                output_tokens=rng.randint(5, 60),
                cached_tokens=rng.choice((None, 0, 512, 1024)),
                request_ids=(f"req_{rng.getrandbits(96):024x}",),
            ),
        )
        for _ in range(attempts)
    )


def _verdict(rng: random.Random, at: datetime, *, calls: bool = False) -> dict[str, Any]:
    """A verdict record made by the library itself (to be keyed for its case); with
    ``calls``, it keeps what each attempt cost."""
    if rng.random() < 0.015:  # the evaluator did not answer
        outcome = outcome_for(
            error_verdict(CHECK, model="example-evaluator-1", at=at, advisory=True),
            attempts=2,
            calls=_calls(rng, 2) if calls else (),
        )
    else:
        answers = _answers(rng)
        verdict = combine(CHECK, answers, model="example-evaluator-1", at=at, advisory=True)
        outcome = outcome_for(verdict, answers=answers, calls=_calls(rng, 1) if calls else ())
    submission = Submission({"vendor": "any"})
    record = verdict_record(outcome, run_id="any", step_id=STEP, submission=submission)
    return record.to_json()


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=True, separators=(",", ":")) + "\n"


def generate(folder: Path, lines: int, replicas: int, *, calls: bool = False) -> list[Path]:
    """About ``lines`` records in ``replicas`` files under ``folder`` (made once, then kept);
    with ``calls``, each verdict keeps its calls."""
    files = [folder / f"replica-{r}.jsonl" for r in range(replicas)]
    done = folder / "done"
    made = f"{lines} {replicas}" + (" calls" if calls else "")
    if done.exists() and done.read_text() == made:
        return files
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(lines)
    outs = [path.open("w", encoding="ascii") for path in files]
    cases = lines // 2
    step = MONTH / cases
    written = 0
    for n in range(cases):
        run = f"vendor-{n:08d}"
        digest = _sha(f"submission {n}")
        key = _sha(json.dumps([run, STEP, digest], separators=(",", ":")))
        at = START + n * step
        record = {
            **_verdict(rng, at.replace(microsecond=0), calls=calls),
            "key": key,
            "run": run,
            "submission_sha256": digest,
            "bundle_sha256": _sha(f"bundle {n}"),
        }
        replica = n % replicas
        outs[replica].write(_dump(record))
        written += 1
        if n % 500 == 0 and replicas > 1:  # a record that two replicas both wrote
            outs[(replica + 1) % replicas].write(_dump(record))
            written += 1
        if rng.random() < 0.03:  # nobody decided it yet
            continue
        kept = rng.random() < 0.8
        decided = _at(at + timedelta(hours=rng.randint(1, 30)))
        decision: dict[str, Any] = (
            {"kind": "completed", "by": f"reviewer-{n % 7}", "at": decided}
            if kept
            else {
                "kind": "returned",
                "note": "The sanctions list report is not attached.",
                "by": f"reviewer-{n % 7}",
                "at": decided,
            }
        )
        outs[rng.randrange(replicas)].write(
            _dump(
                {
                    "record": "decision",
                    "format": 1,
                    "key": key,
                    "run": run,
                    "step": STEP,
                    "submission_sha256": digest,
                    "escalated_at": None,
                    "accepted": kept,
                    "decision": decision,
                }
            )
        )
        written += 1
    for out in outs:
        out.close()
    # The generator writes what the reader reads: check the first records of each file.
    for path in files:
        for number, _ in zip(range(50), iter_records(path), strict=False):
            assert number >= 0
    done.write_text(made)
    return files


def floor(files: Sequence[Path]) -> int:
    """json.loads of every line, read as calibrate reads them; returns the line count."""
    count = 0
    for path in files:
        with path.open("rb") as file:
            for line in file:
                json.loads(line)
                count += 1
    return count


def timed(*fns: Callable[[], object], repeat: int) -> list[float]:
    """The CPU time of each of ``fns`` in this process, the least of ``repeat`` runs taken in
    turn: both sides of a ratio are single-threaded and CPU-bound; CPU time leaves out what
    other processes took, and the least of several runs what they still disturbed."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for index, fn in enumerate(fns):
            start = time.process_time()
            fn()
            best[index] = min(best[index], time.process_time() - start)
    return best


def peak_memory(files: Sequence[Path], *, db: tuple[str, str] | None = None) -> float:
    """The peak resident memory, in MB, of a fresh process that calibrates ``files``, or,
    with ``db`` (a conninfo and a table), the records a PostgresRecorder keeps there."""
    code = (
        "import resource, sys\n"
        "from checkprofile.human import PostgresRecorder, calibrate\n"
        "if sys.argv[1] == '--db':\n"
        "    calibrate(PostgresRecorder(sys.argv[2], table=sys.argv[3]))\n"
        "else:\n"
        "    calibrate(*sys.argv[1:])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    given = ["--db", *db] if db is not None else list(map(str, files))
    done = subprocess.run(
        [sys.executable, "-c", code, *given],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout) / 1024  # ru_maxrss is in KB on Linux


def _figures(report: Any) -> Any:
    data = report.to_json()
    return {"checks": data["checks"], "skipped": data["skipped"]}


def wall(fn: Callable[[], object]) -> float:
    """The elapsed time of ``fn``: what a person waiting for the report sees (reading from
    PostgreSQL spends time in the server too, which no CPU clock of this process counts)."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _rows(path: Path) -> Any:
    """The rows ``record_many`` would store for the records of ``path``, read from its lines
    (the generator writes each record's line as the library does: the first lines are checked
    against the rows of their typed records)."""
    from checkprofile._time import at_order
    from checkprofile.human._audit._postgres import _row

    with path.open("rb") as file:
        checked = zip(range(200), iter_records(path), strict=False)
        for number, line in enumerate(file):
            text = line[:-1].decode("ascii")
            data = json.loads(text)
            at = data["verdict" if data["record"] == "verdict" else "decision"]["at"]
            row = (
                hashlib.sha256(line[:-1]).hexdigest(),
                data["record"],
                data["key"],
                data["run"],
                data["step"],
                at,
                at_order(at),
                text,
            )
            if number < 200:
                _, record = next(checked)
                assert row == _row(record), f"{path}:{number + 1} is not as the library writes it"
            yield row


def load(store: Any, conninfo: str, table: str, files: Sequence[Path], records: int) -> None:
    """Load the records of ``files`` into ``store`` (its ``table``) unless it holds them: the
    rows ``record_many`` would store (each record once), written with one COPY."""
    import psycopg
    from psycopg import sql

    if store.count() == records:
        return
    start = time.perf_counter()
    columns = "sha256, record, key, run, step, at, at_order, line"
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(sql.SQL("TRUNCATE {}").format(sql.Identifier(table)))
        seen: set[str] = set()
        with (
            connection.transaction(),
            connection.cursor() as cursor,
            cursor.copy(
                sql.SQL("COPY {} (" + columns + ") FROM STDIN").format(sql.Identifier(table))
            ) as copy,
        ):
            for path in files:
                for row in _rows(path):
                    if row[0] not in seen:
                        seen.add(row[0])
                        copy.write_row(row)
    print(f"  loaded {records:,} records into PostgreSQL in {time.perf_counter() - start:.1f} s")


def db_floor(conninfo: str, table: str) -> int:
    """The floor of reading the same rows from PostgreSQL: fetching them as calibrate does
    (the same named cursor, query and batch size), and ``json.loads`` of each line."""
    import psycopg
    from psycopg import sql

    count = 0
    with (
        psycopg.connect(conninfo) as connection,
        connection.transaction(),
        connection.cursor(name="bench_floor", binary=True) as rows,
    ):
        rows.itersize = 5000  # as PostgresRecorder.stream reads
        rows.execute(
            sql.SQL("SELECT seq, convert_to(line, 'UTF8') FROM {} ORDER BY seq").format(
                sql.Identifier(table)
            )
        )
        for _, line in rows:
            json.loads(line)
            count += 1
    return count


def from_db(conninfo: str, lines: int, files: Sequence[Path], memory: bool, repeat: int) -> str:
    """The elapsed seconds of the floor of fetching the same rows and of calibrating them from
    PostgreSQL (the least of ``repeat`` runs taken in turn), their ratio, the peak memory,
    and whether the figures are the files'."""
    from checkprofile.human import PostgresRecorder

    table = f"bench_{lines}"
    store = PostgresRecorder(conninfo, table=table)
    try:
        report = calibrate(*files)
        load(store, conninfo, table, files, sum(1 for _ in iter_lines(files)) - report.duplicates)
        base = cost = float("inf")
        for _ in range(repeat):
            base = min(base, wall(functools.partial(db_floor, conninfo, table)))
            cost = min(cost, wall(functools.partial(calibrate, store)))
        same = _figures(calibrate(store)) == _figures(report)
    finally:
        store.close()
    peak = f" {peak_memory(files, db=(conninfo, table)):8.0f}" if memory else ""
    return f" {base:8.2f} {cost:7.2f} {cost / base:6.2f}{peak}  same figures: {same}"


def iter_lines(files: Sequence[Path]) -> Any:
    for path in files:
        with path.open("rb") as file:
            yield from file


def month(folder: Path, replicas: int, conninfo: str | None) -> None:
    files = generate(folder / "month", 600_000, replicas)
    lines = floor(files)
    base, cost = timed(
        functools.partial(floor, files), functools.partial(calibrate, *files), repeat=1
    )
    elapsed = wall(functools.partial(calibrate, *files))
    report = calibrate(*files)
    cases = sum(check.at_current.cases for check in report.checks)
    print(
        f"\nA month (300,000 verdicts and their decisions, {lines:,} lines in {replicas} files,"
        f" {sum(f.stat().st_size for f in files) / 1e6:.0f} MB; {cases:,} cases):"
    )
    print(
        f"  from files:       {elapsed:6.1f} s elapsed, {cost:.1f} s CPU"
        f" ({cost / base:.2f}x the json.loads floor)"
    )
    if conninfo is None:
        print("  from PostgreSQL:  not measured (give --db or set CHECKPROFILE_TEST_PG)")
        return

    from checkprofile.human import PostgresRecorder

    store = PostgresRecorder(conninfo, table="bench_month")
    try:
        load(store, conninfo, "bench_month", files, lines - report.duplicates)
        elapsed_db = wall(functools.partial(calibrate, store))
        same = _figures(calibrate(store)) == _figures(report)
    finally:
        store.close()
    print(
        f"  from PostgreSQL:  {elapsed_db:6.1f} s elapsed (figures identical to the files': {same})"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", default="10000,100000,1000000")
    parser.add_argument("--replicas", type=int, default=4)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/checkprofile-bench-calibrate"))
    parser.add_argument("--month", action="store_true")
    parser.add_argument(
        "--calls", action="store_true", help="verdict records keep each attempt's calls"
    )
    parser.add_argument("--db", default=os.environ.get("CHECKPROFILE_TEST_PG"))
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument(
        "--sizes-db",
        action="store_true",
        help="with --db: also calibrate each size from PostgreSQL (elapsed s, peak MB)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs of each (a third at 1M)")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.lines.split(",") if size]
    print(
        f"{'lines':>10} {'MB':>6} {'floor s':>8} {'calibrate s':>12} {'ratio':>6}"
        f" {'us/line':>8} {'growth':>7} {'peak MB':>8}"
        + (
            f" {'db floor':>8} {'db s':>7} {'ratio':>6} {'db MB':>8}"
            if args.db and args.sizes_db
            else ""
        )
    )
    first: float | None = None
    for lines in sizes:
        folder = args.dir / (f"{lines}-calls" if args.calls else str(lines))
        files = generate(folder, lines, args.replicas, calls=args.calls)
        count = floor(files)  # warm the page cache
        repeat = args.repeat if lines <= 100_000 else max(1, args.repeat // 3)
        base, cost = timed(
            functools.partial(floor, files), functools.partial(calibrate, *files), repeat=repeat
        )
        per_line = cost / count
        first = per_line if first is None else first
        memory = "" if args.no_memory else f"{peak_memory(files):8.0f}"
        size = sum(path.stat().st_size for path in files) / 1e6
        db = (
            from_db(args.db, lines, files, not args.no_memory, repeat)
            if args.db and args.sizes_db
            else ""
        )
        print(
            f"{count:>10,} {size:6.0f} {base:8.2f} {cost:12.2f} {cost / base:6.2f}"
            f" {per_line * 1e6:8.1f} {per_line / first:7.2f} {memory}{db}"
        )
    if args.month:
        month(args.dir, args.replicas, args.db)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
