"""Many rows into a PostgreSQL table at once, each kept once, in their order: the bulk write the
audit trail's ``record_many`` and the escalation store's ``put_many`` share.

One ``INSERT`` per row (``executemany``, which psycopg pipelines) makes the server parse, plan
and run a statement for each row, several times what PostgreSQL's bulk load costs. A batch of
:data:`COPY_FROM` rows or more is therefore sent with ``COPY`` into a temporary table of the
target's own columns, then moved by one ``INSERT ... SELECT ... ORDER BY ... ON CONFLICT (key)
DO NOTHING``: the same statement semantics (a row whose key is there already, or earlier in the
batch, is kept once), the same order of arrival, inside the caller's transaction. A smaller
batch keeps the plain statements, where the temporary table would cost more than it saves
(``benchmarks/bench_many_machines.py`` measures both).

The temporary table lives as long as the connection, empties itself at each commit
(``ON COMMIT DELETE ROWS``, which PostgreSQL does only for a transaction that used a temporary
table: a later one-row write pays nothing for it) and is only ever seen by its own session (a
second batch in one transaction would find the first's rows there, and skip them as rows
already kept). Table and column names come from the caller's own code (a table name the store
has checked to be a plain SQL name), never from a record; every value travels as data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

__all__ = ["COPY_FROM", "insert_many"]

#: The smallest batch sent by COPY. Emptying the temporary table at commit costs about what
#: 30 to 60 rows' INSERTs do, so the two ways cost the same near 128 rows (measured: 1.07 at
#: 96, 1.05 at 128, 0.79 at 192, 0.46 at 2,000 rows of 1.5 KB); from 160, COPY costs less.
COPY_FROM: Final = 160


def insert_many(
    cursor: psycopg.Cursor[Any],
    table: str,
    columns: Sequence[str],
    key: str,
    rows: Sequence[Sequence[object]],
) -> None:
    """Insert ``rows`` (values of ``columns``, in order) into ``table``, skipping each row whose
    ``key`` is already there or earlier in the batch, in the caller's transaction."""
    from psycopg import sql

    target = sql.Identifier(*table.split("."))
    names = sql.SQL(", ").join(sql.Identifier(name) for name in columns)
    if len(rows) < COPY_FROM:
        marks = sql.SQL(", ").join(sql.Placeholder() * len(columns))
        cursor.executemany(
            sql.SQL("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) DO NOTHING").format(
                target, names, marks, sql.Identifier(key)
            ),
            rows,
        )
        return
    # One temporary table per target table and its columns, named by their hash (a temporary
    # table's name has no schema and at most 63 bytes).
    digest = hashlib.sha256(f"{table} {' '.join(columns)}".encode()).hexdigest()[:24]
    batch = sql.Identifier(f"checkprofile_copy_{digest}")
    cursor.execute(
        sql.SQL(
            "CREATE TEMPORARY TABLE IF NOT EXISTS {} ON COMMIT DELETE ROWS"
            " AS SELECT 0::bigint AS checkprofile_n, {} FROM {} WITH NO DATA"
        ).format(batch, names, target)
    )
    with cursor.copy(
        sql.SQL("COPY {} (checkprofile_n, {}) FROM STDIN").format(batch, names)
    ) as copy:
        for n, row in enumerate(rows):
            copy.write_row((n, *row))
    cursor.execute(
        sql.SQL(
            "INSERT INTO {} ({}) SELECT {} FROM {} ORDER BY checkprofile_n"
            " ON CONFLICT ({}) DO NOTHING"
        ).format(target, names, names, batch, sql.Identifier(key))
    )
