"""One audit trail for many servers: the audit records in a PostgreSQL table.

:class:`PostgresRecorder` has the interface of :class:`~checkprofile.human.JsonLinesRecorder`
(``record``), and reads the records back typed (``read``, by window) for
:func:`~checkprofile.human.calibrate`. It needs psycopg 3 (``pip install
'checkprofile[postgres]'``), imported only here and only when a recorder is made.

The table (``checkprofile_audit`` unless told otherwise) is made on first use, with its
indexes, by idempotent statements taken under a transaction-level advisory lock, so replicas
that start at once do not trip over each other::

    seq       bigint identity primary key   the order records arrived in (reading order)
    sha256    text unique                   of the line: the record's identity
    record    text                          "verdict", "decision" or "qualification"
    key       text                          the submission key (joins the two)
    run, step text                          as in the record
    at        text                          the verdict's or the decision's time, as recorded
    at_order  text collate "C"              the same, sortable (windows are read on it)
    line      text                          the record exactly as a JSON Lines file has it

A record is one row, inserted with ``ON CONFLICT (sha256) DO NOTHING``: two replicas that
record the same record keep one row, and concurrent writers never block each other for long
or lose a row. ``line::jsonb`` gives the record to SQL.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from ..._pg_copy import insert_many
from ..._shown import show
from ..._time import at_order
from ...errors import CheckprofileError
from ._fast._reader import DecisionFacts, VerdictFacts, _Reader
from ._kinds import AuditRecord
from ._qualification import QualificationRecord
from ._recorders import record_line
from ._records import DecisionRecord, VerdictRecord
from ._sources import Read, Window
from ._spot import SpotCheckRecord

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

__all__ = ["DEFAULT_TABLE", "PostgresRecorder", "StoreError"]

#: The table a recorder uses unless told otherwise.
DEFAULT_TABLE: Final = "checkprofile_audit"

# A table name, optionally with its schema: plain SQL identifiers, nothing to quote.
_TABLE = re.compile(r"(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}")
# Rows fetched at a time when reading: memory holds this many lines, not the table.
_BATCH = 5000
# The lock that makes the first use's statements one at a time across replicas.
_LOCK_SALT = "checkprofile.human audit table"


class StoreError(CheckprofileError, OSError):
    """The audit store could not be reached or refused a statement. The message names the
    store without its password."""


class PostgresRecorder:
    """Records audit records in a PostgreSQL table, and reads them back typed.

    ``conninfo`` is a libpq connection string or ``postgresql://`` URI; an empty one takes
    everything from libpq's environment (``PGHOST``, ``PGDATABASE``, ``PGUSER``,
    ``PGPASSWORD``, ``PGSERVICE``...), and a password is best kept there or in ``~/.pgpass``.
    ``table`` may name a schema (``audit.records``). A connection is opened on first use and
    kept (one per process: a forked child opens its own); :meth:`close` closes it. Safe to
    share between threads.
    """

    def __init__(
        self, conninfo: str = "", *, table: str = DEFAULT_TABLE, connect_timeout: float = 10
    ) -> None:
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
        except ImportError:
            raise StoreError(
                "PostgresRecorder needs psycopg 3: pip install 'checkprofile[postgres]'"
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
            # libpq's message quotes the text around the fault, which may be a password.
            raise StoreError(
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
        self._ready = False

    # --- naming and connecting ------------------------------------------------------------

    @property
    def name(self) -> str:
        """The store as reports name it, without its password: ``postgresql host=... port=...
        dbname=... user=... table=...``, as the server that answers says (so this connects)."""
        with self._lock:
            info = self._shared().info
        return (
            f"postgresql host={info.host} port={info.port} dbname={info.dbname}"
            f" user={info.user} table={self.table}"
        )

    def __repr__(self) -> str:
        return f"PostgresRecorder({self._where()!r})"

    def _where(self) -> str:
        """The store as its connection string names it, without the password."""
        return " ".join(["postgresql", *filter(None, [self._shown]), f"table={self.table}"])

    def _error(self, doing: str, error: BaseException) -> StoreError:
        text = " ".join(str(error).split())
        if self._password:
            text = text.replace(self._password, "***")
        return StoreError(f"{self._where()}: cannot {doing}: {text}")

    def _open(self) -> psycopg.Connection[Any]:
        """A new connection (autocommit), the table made on this recorder's first use."""
        import psycopg

        try:
            connection = psycopg.connect(
                self._conninfo, autocommit=True, connect_timeout=max(1, round(self._timeout))
            )
        except psycopg.Error as error:
            raise self._error("connect", error) from None
        if not self._ready:
            try:
                self._create(connection)
            except BaseException:
                connection.close()
                raise
            self._ready = True
        return connection

    def _shared(self) -> psycopg.Connection[Any]:
        """This process's kept connection, for writing (call with the lock held)."""
        connection = self._connection
        if connection is not None and self._pid == os.getpid():
            if not connection.closed and not connection.broken:
                return connection
            connection.close()
        self._connection, self._pid = self._open(), os.getpid()
        return self._connection

    def _create(self, connection: psycopg.Connection[Any]) -> None:
        from psycopg import sql

        table = sql.Identifier(*self.table.split("."))
        base = self.table.rsplit(".", 1)[-1]
        statements = [
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} ("
                " seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                " sha256 text NOT NULL,"
                " record text NOT NULL CONSTRAINT {} CHECK (record IN {}),"
                " key text NOT NULL,"
                " run text NOT NULL,"
                " step text NOT NULL,"
                " at text NOT NULL,"
                ' at_order text COLLATE "C" NOT NULL,'
                " line text NOT NULL,"
                " CONSTRAINT {} UNIQUE (sha256))"
            ).format(
                table,
                sql.Identifier(f"{base}_record_check"),
                _kinds_sql(),
                sql.Identifier(f"{base}_sha256"),
            ),
            sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (record, at_order)").format(
                sql.Identifier(f"{base}_at"), table
            ),
            sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (key)").format(
                sql.Identifier(f"{base}_key"), table
            ),
        ]
        import psycopg

        try:
            with connection.transaction():
                # Two replicas creating the same table at once would both try to create it;
                # the lock lets one finish before the other looks.
                connection.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"{_LOCK_SALT} {self.table}"]
                )
                for statement in statements:
                    connection.execute(statement)
                _take_every_kind(connection, table, base)
        except psycopg.Error as error:
            raise self._error(f"create the table {self.table}", error) from None

    def close(self) -> None:
        """Close this process's connection (a later call opens a new one)."""
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None

    def __enter__(self) -> PostgresRecorder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- writing --------------------------------------------------------------------------

    def record(self, record: AuditRecord) -> None:
        """Store ``record`` (once: the same record stored again, by any replica, is kept
        once). Raises :class:`StoreError` when the store cannot take it."""
        self.record_many((record,))

    def record_many(self, records: Iterable[AuditRecord]) -> None:
        """Store ``records`` in one transaction (all or none), each once."""
        rows = [_row(record) for record in records]  # refuses a non-record before writing
        if not rows:
            return
        import psycopg

        with self._lock:
            connection = self._shared()
            try:
                with connection.transaction(), connection.cursor() as cursor:
                    insert_many(cursor, self.table, _COLUMNS, "sha256", rows)
            except psycopg.Error as error:
                raise self._error("record", error) from None

    # --- reading --------------------------------------------------------------------------

    def read(
        self, *, since: str | datetime | None = None, until: str | datetime | None = None
    ) -> Iterator[AuditRecord]:
        """The records of the window, typed, in the order they arrived: every verdict whose
        ``at`` is at or after ``since`` and before ``until`` with the decisions on its
        submission whenever made, and each decision on a submission with no verdict at all
        whose own ``at`` is in the window (all records when neither is given). Read in
        batches: memory holds a batch, not the table. A row that is not a record raises
        :class:`~checkprofile.human.AuditError` naming ``STORE:SEQ``."""
        for item, _ in self.stream(Window.of(since, until)):
            if isinstance(item, (VerdictFacts, DecisionFacts)):
                yield item.record()
            elif isinstance(
                item, (VerdictRecord, DecisionRecord, SpotCheckRecord, QualificationRecord)
            ):
                yield item

    def stream(self, window: Window) -> Iterator[Read]:
        """What :func:`~checkprofile.human.calibrate` reads: each record of ``window`` with a
        fingerprint of its line (as a file's line has it)."""
        import psycopg
        from psycopg import sql

        table = sql.Identifier(*self.table.split("."))
        since, until = window.bounds
        bounds, values = _window_sql(since, until)
        # The line comes as its UTF-8 bytes, as a file's line does (and as it is hashed).
        if bounds is None:
            query = sql.SQL("SELECT seq, convert_to(line, 'UTF8') FROM {} ORDER BY seq").format(
                table
            )
        else:
            query = sql.SQL(
                "SELECT seq, convert_to(line, 'UTF8') FROM {t} AS d WHERE"
                " (d.record = 'verdict' AND {inside})"
                " OR (d.record IN ('decision', 'spot_check') AND ("
                "  EXISTS (SELECT 1 FROM {t} AS v WHERE v.record = 'verdict'"
                "   AND v.key = d.key AND {inside_v})"
                "  OR ({inside} AND NOT EXISTS (SELECT 1 FROM {t} AS v"
                "   WHERE v.record = 'verdict' AND v.key = d.key))))"
                " ORDER BY seq"
            ).format(t=table, inside=bounds("d"), inside_v=bounds("v"))
            values = values * 3
        reader = _Reader()
        connection = self._open()  # its own: a reader may record while it reads
        try:
            info = connection.info
            name = (
                f"postgresql host={info.host} port={info.port} dbname={info.dbname}"
                f" user={info.user} table={self.table}"
            )
            with (
                connection.transaction(),
                connection.cursor(name="checkprofile_read", binary=True) as rows,
            ):
                rows.itersize = _BATCH
                rows.execute(query, values)
                for seq, line in rows:
                    yield reader.read(name, seq, line), hash(line)
        except psycopg.Error as error:
            raise self._error("read", error) from None
        finally:
            connection.close()

    def count(self) -> int:
        """How many records the table holds."""
        import psycopg
        from psycopg import sql

        query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(*self.table.split(".")))
        with self._lock:
            connection = self._shared()
            try:
                row = connection.execute(query).fetchone()
            except psycopg.Error as error:
                raise self._error("count", error) from None
        return int(row[0]) if row else 0


#: Every kind of record the table takes.
_KINDS: Final = ("verdict", "decision", "spot_check", "qualification")


def _kinds_sql() -> Any:
    from psycopg import sql

    return sql.SQL("({})").format(sql.SQL(", ").join(map(sql.Literal, _KINDS)))


def _take_every_kind(connection: psycopg.Connection[Any], table: Any, base: str) -> None:
    """A table made before a kind of record existed refuses it by its check on ``record``:
    that check is replaced by one naming every kind (only when it names fewer)."""
    from psycopg import sql

    name = f"{base}_record_check"
    row = connection.execute(
        "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint AS c"
        " WHERE c.conrelid = %s::regclass AND c.contype = 'c'"
        " AND pg_get_constraintdef(c.oid) LIKE '%%record%%'",
        [table.as_string(connection)],
    ).fetchall()
    if len(row) == 1 and all(f"'{kind}'" in row[0][0] for kind in _KINDS):
        return
    found = connection.execute(
        "SELECT c.conname FROM pg_constraint AS c WHERE c.conrelid = %s::regclass"
        " AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%%record%%'",
        [table.as_string(connection)],
    ).fetchall()
    for (old,) in found:
        connection.execute(
            sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(table, sql.Identifier(old))
        )
    connection.execute(
        sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} CHECK (record IN {})").format(
            table, sql.Identifier(name), _kinds_sql()
        )
    )


#: The columns :func:`_row` gives, in its order.
_COLUMNS: Final = ("sha256", "record", "key", "run", "step", "at", "at_order", "line")


def _row(record: AuditRecord) -> tuple[str, ...]:
    line = record_line(record)[:-1].decode("ascii")
    at = record.at
    return (
        hashlib.sha256(line.encode("ascii")).hexdigest(),
        record.record,
        record.key,
        record.run,
        record.step,
        at,
        at_order(at),
        line,
    )


def _window_sql(since: str | None, until: str | None) -> tuple[Any, list[str]]:
    """A function of a table alias giving the SQL test that a row is in the window, and the
    values it takes; ``(None, [])`` when there is no window."""
    from psycopg import sql

    if since is None and until is None:
        return None, []
    values = [bound for bound in (since, until) if bound is not None]

    def inside(alias: str) -> Any:
        at = sql.Identifier(alias, "at_order")
        tests = []
        if since is not None:
            tests.append(sql.SQL("{} >= %s").format(at))
        if until is not None:
            tests.append(sql.SQL("{} < %s").format(at))
        return sql.SQL("(") + sql.SQL(" AND ").join(tests) + sql.SQL(")")

    return inside, values
