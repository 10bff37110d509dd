"""The escalation store for many replicas: :class:`PostgresEscalationStore`, in one PostgreSQL
table.

Every replica and every reviewer's server opens the same table; a decision is one ``UPDATE``
whose ``WHERE decision IS NULL`` only the first can meet (PostgreSQL locks the row, and a
second writer re-reads it once the first commits, finds it decided, and changes nothing). It
needs psycopg 3 (``pip install 'checkprofile[postgres]'``), imported only here and only when a
store is made. The table (``checkprofile_escalations`` unless told otherwise) is made on first
use under a transaction-level advisory lock, so replicas that start at once do not trip over
each other.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..._pg_copy import insert_many
from ..._shown import show
from ._store import (
    DEFAULT_ESCALATION_TABLE,
    EscalationStore,
    EscalationStoreError,
    _schema,
    _Tx,
)

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

__all__ = ["PostgresEscalationStore"]

# A table name, optionally with its schema: plain SQL identifiers, nothing to quote.
_TABLE = re.compile(r"(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}")
_LOCK_SALT = "checkprofile.human escalation table"


class _PostgresTx:
    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self._cursor = cursor

    def run(self, statement: str, values: Sequence[object] = ()) -> int:
        self._cursor.execute(statement.replace("?", "%s").encode(), values)
        return self._cursor.rowcount

    def rows(self, statement: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        self._cursor.execute(statement.replace("?", "%s").encode(), values)
        return list(self._cursor.fetchall())

    def insert_many(
        self, table: str, columns: Sequence[str], key: str, rows: Sequence[Sequence[object]]
    ) -> None:
        insert_many(self._cursor, table, columns, key, rows)


class PostgresEscalationStore(EscalationStore):
    """An escalation store in a PostgreSQL table, for hosts with many replicas.

    ``conninfo`` is a libpq connection string or ``postgresql://`` URI (an empty one takes
    everything from libpq's environment); ``table`` may name a schema. A connection is opened
    on first use and kept (one per process: a forked child opens its own); safe to share
    between threads. See :class:`EscalationStore` for ``separate_duties`` and ``clock``.
    """

    def __init__(
        self,
        conninfo: str = "",
        *,
        table: str = DEFAULT_ESCALATION_TABLE,
        separate_duties: bool = False,
        clock: Callable[[], float] = time.time,
        connect_timeout: float = 10,
    ) -> None:
        super().__init__(separate_duties=separate_duties, clock=clock)
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
        except ImportError:
            raise EscalationStoreError(
                "PostgresEscalationStore needs psycopg 3: pip install 'checkprofile[postgres]'"
            ) from None
        if not isinstance(conninfo, str):
            raise TypeError(f"conninfo must be a string, got {show(conninfo)}")
        if not isinstance(table, str) or not _TABLE.fullmatch(table):
            raise ValueError(
                "table must be a lowercase SQL name (letters, digits, _), optionally with its"
                f" schema, got {show(table)}"
            )
        try:
            parts = conninfo_to_dict(conninfo)
        except psycopg.ProgrammingError:
            raise EscalationStoreError(
                "the connection string is not one libpq reads (it is not shown: it may hold a"
                " password)"
            ) from None
        self._conninfo = conninfo
        self._password = str(parts.pop("password", "") or "")
        self._shown = " ".join(f"{key}={value}" for key, value in parts.items())
        self.table = table
        self._timeout = connect_timeout
        self._lock = threading.Lock()
        self._connection: psycopg.Connection[Any] | None = None
        self._pid = 0

    def __repr__(self) -> str:
        return f"PostgresEscalationStore({str(self)!r})"

    def __str__(self) -> str:
        return " ".join(["postgresql", *filter(None, [self._shown]), f"table={self.table}"])

    @property
    def _table(self) -> str:
        return self.table

    def _error(self, doing: str, error: BaseException) -> EscalationStoreError:
        text = " ".join(str(error).split())
        if self._password:
            text = text.replace(self._password, "***")
        return EscalationStoreError(f"{self}: cannot {doing}: {text}")

    def _connect(self) -> psycopg.Connection[Any]:
        """This process's kept connection (call with the lock held)."""
        import psycopg

        connection = self._connection
        if connection is not None and self._pid == os.getpid():
            if not connection.closed and not connection.broken:
                return connection
            connection.close()
        try:
            connection = psycopg.connect(
                self._conninfo, autocommit=True, connect_timeout=max(1, round(self._timeout))
            )
        except psycopg.Error as error:
            raise self._error("connect", error) from None
        try:
            with connection.transaction():
                connection.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"{_LOCK_SALT} {self.table}"]
                )
                for statement in _schema(
                    self.table,
                    identity="bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
                    real="double precision",
                ):
                    connection.execute(statement.encode())
        except psycopg.Error as error:
            connection.close()
            raise self._error(f"create the table {self.table}", error) from None
        self._connection, self._pid = connection, os.getpid()
        return connection

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[_Tx]:
        import psycopg

        with self._lock:
            connection = self._connect()
            try:
                with connection.transaction(), connection.cursor() as cursor:
                    yield _PostgresTx(cursor)
            except psycopg.Error as error:
                raise self._error("use the store", error) from None

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None
