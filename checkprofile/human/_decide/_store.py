"""An escalation store: the checkpoints waiting on people, each decided once, everywhere.

A host puts each escalated step's :class:`~checkprofile.human.Checkpoint` in a store; reviewers
list what waits (oldest first, by process and step), claim one for a while (a lease, so two
people do not read the same case at once), and decide it. :meth:`EscalationStore.decide` is
atomic: the first decision for a checkpoint's reference is kept with the step's next state, and
every later one, from any process or replica, is refused with :class:`AlreadyDecidedError`
naming the decision already taken. There is never a second state.

A decision is checked against the checkpoint (:meth:`Checkpoint.decide`) before the store is
touched, so a decision the profile refuses changes nothing. A store made with
``separate_duties=True`` refuses a decision by whoever submitted the candidate
(:class:`SameDeciderError`), and refuses to keep a checkpoint that does not say who did.

:class:`SqliteEscalationStore` is the embedded default (one file, the standard library's
``sqlite3``; every process on one machine may share the file); :class:`PostgresEscalationStore`
(``checkprofile.human``, the ``postgres`` extra) is the same store for many replicas. The same
tests run against both.

A checkpoint too large for a queue's message can travel by reference: :meth:`~EscalationStore.
to_parcel` keeps it in the store and gives its reference when its JSON is past the host's size,
and :meth:`~EscalationStore.from_parcel` reads either form back.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final, Protocol

import attrs

from ..._convert import NotJson, plain, plain_text
from ..._files import file_name
from ..._shown import is_blank, show
from ..._types import of_type
from ...errors import CheckprofileError
from ._checkpoint import Checkpoint, reference_of
from ._decisions import Decision, Resolution, apply_decision, decision_from_json
from ._state import StepState

__all__ = [
    "DEFAULT_ESCALATION_TABLE",
    "AlreadyDecidedError",
    "Claim",
    "ClaimedError",
    "Decided",
    "EscalationStore",
    "EscalationStoreError",
    "NoSuchEscalationError",
    "SameDeciderError",
    "SqliteEscalationStore",
    "Waiting",
]

#: The table an escalation store keeps its checkpoints in unless told otherwise.
DEFAULT_ESCALATION_TABLE: Final = "checkprofile_escalations"

# A checkpoint's reference: what Checkpoint.reference gives.
_REFERENCE = re.compile(r"[0-9a-f]{32}")
# The longest lease a claim may take, in seconds (a week): a lease is for a while.
MAX_LEASE: Final = 7 * 24 * 3600.0
# Tries of a decision whose refusal found nothing to refuse (a lease that ran out meanwhile).
_TRIES = 3


class EscalationStoreError(CheckprofileError, OSError):
    """The escalation store could not be reached or refused a statement. The message names the
    store without its password."""


class NoSuchEscalationError(CheckprofileError, KeyError):
    """No checkpoint with that reference is in the store."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class AlreadyDecidedError(CheckprofileError, ValueError):
    """The escalation was decided already: the first decision stands. ``decided`` is it."""

    def __init__(self, message: str, *, decided: Decided) -> None:
        super().__init__(message)
        self.decided = decided


class ClaimedError(CheckprofileError, PermissionError):
    """Another reviewer holds the escalation's lease: ``by`` until ``until`` (seconds since
    the epoch, the store's clock)."""

    def __init__(self, message: str, *, by: str, until: float) -> None:
        super().__init__(message)
        self.by = by
        self.until = until


class SameDeciderError(CheckprofileError, PermissionError):
    """The store separates duties, and the person deciding is the one who submitted (or the
    checkpoint does not say who submitted)."""


@attrs.frozen(kw_only=True)
class Waiting:
    """One escalation waiting on a decision, as :meth:`EscalationStore.waiting` lists it
    (the checkpoint itself is read with :meth:`EscalationStore.get`)."""

    reference: str
    process: str
    run_id: str
    step_id: str
    submitted_by: str | None
    put_at: str
    claimed_by: str | None
    claimed_until: str | None


@attrs.frozen(kw_only=True)
class Claim:
    """A reviewer's lease on an escalation: no one else may claim or decide it until
    ``until`` (seconds since the epoch, the store's clock)."""

    reference: str
    by: str
    until: float


@attrs.frozen(kw_only=True)
class Decided:
    """The decision an escalation store kept for a checkpoint, and the step's next state."""

    reference: str
    checkpoint: Checkpoint
    decision: Decision
    state: StepState

    @property
    def resolution(self) -> Resolution:
        """What the decision records on the escalation: ``resolution_record(decided.
        resolution)`` is its audit record (recorded twice, it is kept once)."""
        return apply_decision(self.checkpoint.escalation, self.decision)


class _Tx(Protocol):
    """One transaction of a store's database, its statements written with ``?``."""

    def run(self, statement: str, values: Sequence[object] = ()) -> int: ...

    def rows(self, statement: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]: ...

    def insert_many(
        self, table: str, columns: Sequence[str], key: str, rows: Sequence[Sequence[object]]
    ) -> None:
        """Insert ``rows`` into ``table``, each whose ``key`` is there already skipped."""


def _text(what: str, value: object) -> str:
    text = plain_text(value)  # a subclass's own methods never run
    if type(text) is not str or is_blank(text):
        raise ValueError(f"{what} must be a non-blank string, got {show(value)}")
    return _kept(what, text)


def _kept(what: str, value: str) -> str:
    """``value`` as a plain ``str`` a database column keeps as it is: no U+0000 (NUL), which
    PostgreSQL's text refuses, and no lone surrogate, which no database's UTF-8 encodes (the
    same in every store, named with what it is)."""
    text = str.__str__(value)
    if "\x00" in text:
        raise ValueError(f"{what} holds U+0000 (NUL), which a store cannot keep: {show(text)}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"{what} holds a lone surrogate, which a store cannot keep: {show(text)}"
        ) from None
    return text


def _reference(value: object) -> str:
    value = plain_text(value)
    if type(value) is not str or not _REFERENCE.fullmatch(value):
        raise ValueError(
            f"a checkpoint's reference is 32 lowercase hex digits (Checkpoint.reference), got"
            f" {show(value)}"
        )
    return value


def _json_text(data: object) -> str:
    """The JSON text a store keeps: ASCII (any text survives any database), in the value's own
    key order (a check's choices keep theirs)."""
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _same_person(one: str, other: str) -> bool:
    return one.strip().casefold() == other.strip().casefold()


class EscalationStore:
    """What every escalation store does; :class:`SqliteEscalationStore` and
    :class:`PostgresEscalationStore` keep it in their databases.

    ``separate_duties``: refuse a decision by whoever submitted the candidate (compared
    without case or surrounding spaces), and a checkpoint that does not say who submitted.
    ``clock``: seconds since the epoch, for leases and the time a checkpoint was put (every
    replica's clock should agree to within the leases' slack).
    """

    def __init__(
        self, *, separate_duties: bool = False, clock: Callable[[], float] = time.time
    ) -> None:
        if type(separate_duties) is not bool:
            raise TypeError(f"separate_duties must be a bool, got {show(separate_duties)}")
        if not callable(clock):
            raise TypeError(f"clock must be callable, got {show(clock)}")
        self.separate_duties = separate_duties
        self._clock = clock

    # --- what a database gives ------------------------------------------------------------

    def _transaction(self) -> contextlib.AbstractContextManager[_Tx]:
        """A transaction that writes (one at a time with other writers of the row)."""
        raise NotImplementedError  # pragma: no cover

    @property
    def _table(self) -> str:
        raise NotImplementedError  # pragma: no cover

    def close(self) -> None:
        """Close this process's connection (a later call opens a new one)."""

    def __enter__(self) -> EscalationStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- putting --------------------------------------------------------------------------

    def put(self, checkpoint: Checkpoint, *, process: str = "") -> str:
        """Keep ``checkpoint`` until a person decides it; its reference. Putting the same
        checkpoint again (a retried task, another replica) keeps it once and changes nothing,
        its claim and decision included. ``process`` names the process it belongs to, for
        :meth:`waiting`."""
        return self.put_many([checkpoint], process=process)[0]

    def put_many(self, checkpoints: Iterable[Checkpoint], *, process: str = "") -> list[str]:
        """:meth:`put` for many checkpoints, in one transaction (all or none); their
        references, in order."""
        rows = [self._row(checkpoint, process) for checkpoint in checkpoints]
        if rows:
            now = self._clock()
            with self._transaction() as tx:
                tx.insert_many(
                    self._table,
                    ("reference", "process", "run", "step", "submitted_by", "put_at", "checkpoint"),
                    "reference",
                    [(*row[:5], now, row[5]) for row in rows],
                )
        return [row[0] for row in rows]

    def _row(self, checkpoint: object, process: object) -> tuple[str, str, str, str, Any, str]:
        if type(checkpoint) is not Checkpoint:
            raise TypeError(f"an escalation store keeps Checkpoints, got {show(checkpoint)}")
        if not isinstance(process, str):
            raise TypeError(f"process must be a string, got {show(process)}")
        submitted_by = checkpoint.escalation.submitted_by
        if self.separate_duties and (submitted_by is None or is_blank(submitted_by)):
            raise SameDeciderError(
                f"this store separates duties, and the checkpoint of step"
                f" {show(checkpoint.step_id)} of run {show(checkpoint.run_id)} does not say"
                " who submitted (checkpoint_for(..., submitted_by=...))"
            )
        data = checkpoint.to_json()  # once: the reference is of the same JSON
        return (
            reference_of(data),
            _kept("process", process),
            _kept("the run id", checkpoint.run_id),
            _kept("the step id", checkpoint.step_id),
            None if submitted_by is None else _kept("who submitted", submitted_by),
            _json_text(data),
        )

    # --- reading --------------------------------------------------------------------------

    def get(self, reference: str) -> Checkpoint:
        """The checkpoint of ``reference``, decided or not. Raises
        :class:`NoSuchEscalationError`."""
        reference = _reference(reference)
        with self._transaction() as tx:
            rows = tx.rows(f"SELECT checkpoint FROM {self._table} WHERE reference = ?", [reference])
        if not rows:
            raise NoSuchEscalationError(f"no checkpoint {reference} in {self}")
        return Checkpoint.from_json(json.loads(rows[0][0]))

    def waiting(
        self, *, process: str | None = None, step: str | None = None, limit: int = 100
    ) -> list[Waiting]:
        """The escalations no one has decided, oldest first (in the order they were put), of
        ``process`` and ``step`` when given; at most ``limit``. Claimed ones are listed with
        who holds them and until when."""
        if process is not None and not isinstance(process, str):
            raise TypeError(f"process must be a string or None, got {show(process)}")
        if step is not None and not isinstance(step, str):
            raise TypeError(f"step must be a string or None, got {show(step)}")
        if type(limit) is not int or limit < 1:
            raise ValueError(f"limit must be a positive int, got {show(limit)}")
        tests, values = ["decision IS NULL"], []
        if process is not None:
            tests.append("process = ?")
            values.append(_kept("process", process))
        if step is not None:
            tests.append("step = ?")
            values.append(_kept("step", step))
        now = self._clock()
        with self._transaction() as tx:
            rows = tx.rows(
                "SELECT reference, process, run, step, submitted_by, put_at, claimed_by,"
                f" claimed_until FROM {self._table} WHERE {' AND '.join(tests)}"
                f" ORDER BY seq LIMIT {limit}",
                values,
            )
        found = []
        for reference, process_, run, step_, submitted_by, put_at, by, until in rows:
            live = by is not None and until is not None and until > now
            found.append(
                Waiting(
                    reference=reference,
                    process=process_,
                    run_id=run,
                    step_id=step_,
                    submitted_by=submitted_by,
                    put_at=_iso(put_at),
                    claimed_by=by if live else None,
                    claimed_until=_iso(until) if live else None,
                )
            )
        return found

    def decided(self, reference: str) -> Decided | None:
        """The decision kept for ``reference``, or ``None`` while it waits. Raises
        :class:`NoSuchEscalationError`."""
        reference = _reference(reference)
        with self._transaction() as tx:
            row = self._state_of(tx, reference)
        return None if row[0] is None else self._decided(reference, row)

    def _state_of(self, tx: _Tx, reference: str) -> tuple[Any, ...]:
        rows = tx.rows(
            "SELECT decision, state, claimed_by, claimed_until, checkpoint"
            f" FROM {self._table} WHERE reference = ?",
            [reference],
        )
        if not rows:
            raise NoSuchEscalationError(f"no checkpoint {reference} in {self}")
        return rows[0]

    def _decided(self, reference: str, row: tuple[Any, ...]) -> Decided:
        checkpoint = Checkpoint.from_json(json.loads(row[4]))
        return Decided(
            reference=reference,
            checkpoint=checkpoint,
            decision=decision_from_json(json.loads(row[0])),
            state=StepState.from_json(json.loads(row[1]), check=checkpoint.check),
        )

    # --- claiming -------------------------------------------------------------------------

    def claim(self, reference: str, *, by: str, seconds: float, exclusive: bool = False) -> Claim:
        """Lease ``reference`` to ``by`` for ``seconds``: until then no one else may claim or
        decide it. Claiming again by the same person renews the lease, unless ``exclusive``:
        then a lease that has not run out refuses everyone, its holder's own name included
        (a server that claims, records, then decides uses it, so that one person deciding on
        two replicas at once cannot write two records before one decision wins). Raises
        :class:`ClaimedError` (another holds it, or anyone does with ``exclusive``),
        :class:`AlreadyDecidedError`, :class:`NoSuchEscalationError`, and
        :class:`SameDeciderError` when the store separates duties and ``by`` submitted it."""
        reference = _reference(reference)
        by = _text("by", by)
        if not of_type(seconds, int, float):  # a subclass's own comparisons never run
            raise TypeError(f"seconds must be a number (an int or a float), got {show(seconds)}")
        if not 0 < seconds <= MAX_LEASE:  # exact for any int; false for NaN
            raise ValueError(
                f"seconds must be above 0 and at most {MAX_LEASE:g}, got {show(seconds)}"
            )
        if type(exclusive) is not bool:
            raise TypeError(f"exclusive must be a bool, got {show(exclusive)}")
        for _ in range(_TRIES):
            now = self._clock()
            until = now + float(seconds)
            with self._transaction() as tx:
                row = self._state_of(tx, reference)
                self._refuse_separation(reference, row, by)
                # With exclusive, no name matches the holder's (NULL = ? is never true).
                holder = None if exclusive else by
                changed = tx.run(
                    f"UPDATE {self._table} SET claimed_by = ?, claimed_until = ?"
                    " WHERE reference = ? AND decision IS NULL AND (claimed_by IS NULL"
                    " OR claimed_by = ? OR claimed_until <= ?)",
                    [by, until, reference, holder, now],
                )
                if changed == 1:
                    return Claim(reference=reference, by=by, until=until)
                self._refusal(tx, reference, holder, now)
        raise EscalationStoreError(  # pragma: no cover - a lease expiring at every try
            f"{self}: the claim on {reference} was neither made nor refused in {_TRIES} tries"
        )

    def release(self, reference: str, *, by: str) -> None:
        """Give up ``by``'s lease on ``reference`` (nothing happens when ``by`` holds none)."""
        reference = _reference(reference)
        by = _text("by", by)
        with self._transaction() as tx:
            tx.run(
                f"UPDATE {self._table} SET claimed_by = NULL, claimed_until = NULL"
                " WHERE reference = ? AND claimed_by = ?",
                [reference, by],
            )

    # --- deciding -------------------------------------------------------------------------

    def decide(
        self,
        reference: str,
        decision: Decision | Mapping[str, Any],
        *,
        at: str | datetime | None = None,
    ) -> Decided:
        """Apply ``decision`` (typed, or its JSON, ``at`` the host's time when it has none) to
        the checkpoint of ``reference``, once: the step's next state is kept with it, in one
        statement that only the first decision can make. Raises :class:`AlreadyDecidedError`
        (naming the decision that stands; ``error.decided`` is it), :class:`ClaimedError`
        (another reviewer's lease is live), :class:`SameDeciderError`,
        :class:`NoSuchEscalationError`, and what :meth:`Checkpoint.decide` raises for a
        decision the checkpoint refuses. Nothing changes when it raises.

        A retried task that finds its own decision kept (``error.decided.decision ==
        decision``) knows it was applied."""
        reference = _reference(reference)
        typed = decision_from_json(decision, at=at)
        checkpoint = self.get(reference)
        state = checkpoint.decide(typed)  # what the profile refuses is refused before writing
        decided_by = _kept("the decision's by", typed.by)
        decision_text = _json_text(typed.to_json())
        state_text = _json_text(state.to_json())
        for _ in range(_TRIES):
            now = self._clock()
            with self._transaction() as tx:
                row = self._state_of(tx, reference)
                self._refuse_separation(reference, row, typed.by)
                changed = tx.run(
                    f"UPDATE {self._table} SET decision = ?, decided_by = ?, state = ?,"
                    " claimed_by = NULL, claimed_until = NULL WHERE reference = ?"
                    " AND decision IS NULL AND (claimed_by IS NULL OR claimed_by = ?"
                    " OR claimed_until <= ?)",
                    [decision_text, decided_by, state_text, reference, decided_by, now],
                )
                if changed == 1:
                    return Decided(
                        reference=reference, checkpoint=checkpoint, decision=typed, state=state
                    )
                self._refusal(tx, reference, decided_by, now)
        raise EscalationStoreError(  # pragma: no cover - a lease expiring at every try
            f"{self}: the decision on {reference} was neither kept nor refused in {_TRIES} tries"
        )

    def _refuse_separation(self, reference: str, row: tuple[Any, ...], by: str) -> None:
        if not self.separate_duties:
            return
        submitted_by = Checkpoint.from_json(json.loads(row[4])).escalation.submitted_by
        if submitted_by is None or _same_person(submitted_by, by):
            raise SameDeciderError(
                f"{show(by)} submitted the candidate of checkpoint {reference}, and this store"
                " separates duties: someone else must decide it"
                if submitted_by is not None
                else f"checkpoint {reference} does not say who submitted, and this store"
                " separates duties"
            )

    def _refusal(self, tx: _Tx, reference: str, by: str | None, now: float) -> None:
        """Raise why a claim or decision on ``reference`` by ``by`` was refused (``None``: by
        anyone, an exclusive claim); return when nothing refuses it any more (a lease ran out
        meanwhile: the caller tries again)."""
        row = self._state_of(tx, reference)
        if row[0] is not None:
            decided = self._decided(reference, row)
            taken = decided.decision
            raise AlreadyDecidedError(
                f"checkpoint {reference} was decided already: {taken.kind} by {show(taken.by)}"
                f" at {taken.at}; that decision stands",
                decided=decided,
            )
        holder, until = row[2], row[3]
        if holder is not None and holder != by and until is not None and until > now:
            raise ClaimedError(
                f"checkpoint {reference} is claimed by {show(holder)} until {_iso(until)}",
                by=holder,
                until=until,
            )

    # --- by value or by reference ---------------------------------------------------------

    def to_parcel(
        self, checkpoint: Checkpoint, *, max_bytes: int, process: str = ""
    ) -> dict[str, Any]:
        """What a queue or an engine carries for ``checkpoint``: ``{"checkpoint": <its
        JSON>}`` when that JSON's UTF-8 is at most ``max_bytes``, else ``{"reference": ...}``
        with the checkpoint put in this store (Temporal's payload limit is 2 MB)."""
        if type(max_bytes) is not int or max_bytes < 0:
            raise ValueError(f"max_bytes must be an int at least 0, got {show(max_bytes)}")
        if type(checkpoint) is not Checkpoint:
            raise TypeError(f"a Checkpoint is needed, got {show(checkpoint)}")
        data = checkpoint.to_json()
        if len(_json_text(data)) <= max_bytes:
            return {"checkpoint": data}
        return {"reference": self.put(checkpoint, process=process)}

    def from_parcel(self, parcel: Mapping[str, Any]) -> Checkpoint:
        """The checkpoint a parcel of :meth:`to_parcel` carries, or names."""
        try:
            data = plain(parcel)  # read as JSON data: a value's own code never runs
        except NotJson as error:
            raise ValueError(f"a parcel must be JSON data: {error}") from None
        if type(data) is not dict or len(data) != 1:
            raise ValueError(
                f'a parcel is {{"checkpoint": ...}} or {{"reference": ...}}, got {show(data)}'
            )
        parcel = data
        if "checkpoint" in parcel:
            return Checkpoint.from_json(parcel["checkpoint"])
        if "reference" in parcel:
            return self.get(parcel["reference"])
        raise ValueError(
            f'a parcel is {{"checkpoint": ...}} or {{"reference": ...}}, got {show(parcel)}'
        )


# --- SQLite ---------------------------------------------------------------------------------


class _SqliteTx:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def run(self, statement: str, values: Sequence[object] = ()) -> int:
        return self._connection.execute(statement, values).rowcount

    def rows(self, statement: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return list(self._connection.execute(statement, values).fetchall())

    def insert_many(
        self, table: str, columns: Sequence[str], key: str, rows: Sequence[Sequence[object]]
    ) -> None:
        self._connection.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES"
            f" ({', '.join('?' * len(columns))}) ON CONFLICT ({key}) DO NOTHING",
            rows,
        )


def _schema(table: str, *, identity: str, real: str) -> list[str]:
    """The statements that make a store's table (idempotent)."""
    return [
        f"CREATE TABLE IF NOT EXISTS {table} ("
        f" seq {identity},"
        " reference text NOT NULL UNIQUE,"
        " process text NOT NULL,"
        " run text NOT NULL,"
        " step text NOT NULL,"
        " submitted_by text,"
        f" put_at {real} NOT NULL,"
        " checkpoint text NOT NULL,"
        " claimed_by text,"
        f" claimed_until {real},"
        " decided_by text,"
        " decision text,"
        " state text,"
        " CHECK ((decision IS NULL) = (state IS NULL)))",
        f"CREATE INDEX IF NOT EXISTS {table.rsplit('.', 1)[-1]}_waiting"
        f" ON {table} (process, step, seq) WHERE decision IS NULL",
    ]


class SqliteEscalationStore(EscalationStore):
    """An escalation store in one SQLite file (made on first use), the embedded default.

    Every process on the machine may open the same file: writes are serialised by SQLite's
    lock (in WAL mode, waiting up to ``timeout`` seconds for it), so a decision is applied once
    across them. Not for a file on a network share (SQLite's locks do not hold there): many
    machines share a :class:`PostgresEscalationStore`. A connection is opened per process
    (a forked child opens its own); safe to share between threads.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        separate_duties: bool = False,
        clock: Callable[[], float] = time.time,
        timeout: float = 30.0,
    ) -> None:
        super().__init__(separate_duties=separate_duties, clock=clock)
        try:  # a path's own code never runs; anything else is a TypeError
            self.path = Path(file_name(path))
        except OSError as error:  # a NUL, a lone surrogate, a name too long
            raise ValueError(
                f"path names no file a system can have ({error.strerror}): {show(path)}"
            ) from None
        self._timeout = float(timeout)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0

    def __repr__(self) -> str:
        return f"SqliteEscalationStore({str(self.path)!r})"

    def __str__(self) -> str:
        return f"sqlite {self.path}"

    @property
    def _table(self) -> str:
        return DEFAULT_ESCALATION_TABLE

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        try:
            connection = sqlite3.connect(
                self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("BEGIN IMMEDIATE")
            try:
                for statement in _schema(
                    self._table, identity="INTEGER PRIMARY KEY AUTOINCREMENT", real="REAL"
                ):
                    connection.execute(statement)
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        except sqlite3.Error as error:
            raise EscalationStoreError(f"{self}: cannot open the store: {error}") from None
        self._connection, self._pid = connection, os.getpid()
        return connection

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[_Tx]:
        with self._lock:
            connection = self._connect()
            try:
                connection.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise EscalationStoreError(f"{self}: cannot write: {error}") from None
            try:
                yield _SqliteTx(connection)
            except sqlite3.Error as error:
                connection.execute("ROLLBACK")
                raise EscalationStoreError(f"{self}: {error}") from None
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            try:
                connection.execute("COMMIT")
            except sqlite3.Error as error:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise EscalationStoreError(f"{self}: cannot commit: {error}") from None

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None
