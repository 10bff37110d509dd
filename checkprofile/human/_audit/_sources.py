"""Where audit records are read from: files, directories, stores and given records, and the
window of time a calibration reads.

Reading is streamed (one line in memory, at most :data:`MAX_LINE_BYTES`) and costs little more
than parsing the JSON (``_audit_fast``). A line that a writer left unfinished is skipped,
reported by ``FILE:LINE`` (:class:`TornLine`), and the reading goes on.
"""

from __future__ import annotations

import errno
import functools
import itertools
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import PurePath
from typing import NoReturn, Protocol, cast, runtime_checkable

import attrs

from ..._files import file_name
from ..._shown import show
from ..._time import at_order, instant
from ..._types import of_type
from ..._verdict import format_at
from ._fast._reader import Facts, _Reader
from ._kinds import AuditRecord
from ._qualification import QualificationRecord
from ._recorders import JsonLinesRecorder, _line
from ._records import DecisionRecord, VerdictRecord
from ._spot import SpotCheckRecord
from ._strict import MAX_LINE_BYTES, AuditError, TornLine, TornLineWarning

__all__ = [
    "Read",
    "RecordSource",
    "Window",
    "iter_records",
    "open_sources",
    "read_records",
]


def _lines(path: str | os.PathLike[str]) -> Iterator[tuple[str, int, bytes]]:
    """Each line of an audit file with its number, without its newline (a last line without
    one is given as it is). Raises :class:`AuditError` for a line over :data:`MAX_LINE_BYTES`
    as soon as it is seen: memory never holds more than one such line and a block."""
    name = file_name(path)
    with open(name, "rb") as file:
        number = 0
        rest = b""  # the start of a line the block before did not finish
        while True:
            # Read a block at a time, and split it: a third of the cost of reading line by line.
            block = file.read(_BLOCK)
            if not block:
                break
            lines = (rest + block if rest else block).split(b"\n")
            rest = lines.pop()
            for line in lines:
                number += 1
                if len(line) > MAX_LINE_BYTES:
                    _too_long(name, number)
                yield name, number, line
            if len(rest) > MAX_LINE_BYTES:
                _too_long(name, number + 1)
        if rest:
            yield name, number + 1, rest


_BLOCK = 1 << 20


def _too_long(name: str, number: int) -> NoReturn:
    raise AuditError(name, number, f"a line of over {MAX_LINE_BYTES} bytes is not an audit record")


#: What calibration reads: a record (one the fast path read comes as its facts), or a
#: fragment, each with a fingerprint of its text.
Read = tuple["AuditRecord | Facts | TornLine", int]


def _file_stream(path: str | os.PathLike[str], reader: _Reader) -> Iterator[Read]:
    """Each record of a file, or the fragment a writer left, with a fingerprint of its line
    (equal lines, equal fingerprints: the same record in two replicas' files)."""
    for name, number, line in _lines(path):
        yield reader.read(name, number, line), hash(line)


def iter_records(path: str | os.PathLike[str]) -> Iterator[AuditRecord]:
    """Every record of a JSON Lines audit file, in file order, typed, one at a time: memory
    holds one line, however long the file.

    A line that a writer left unfinished (it died mid-record, or is still writing the last
    line) is skipped with a :class:`TornLineWarning` naming ``FILE:LINE``; every record after
    it is read. Any other line that is not a record raises :class:`AuditError` naming
    ``FILE:LINE`` and what is wrong (an empty line, text that is not JSON or repeats a key,
    a record that does not hold together, a line over :data:`MAX_LINE_BYTES`).
    """
    reader = _Reader()
    for name, number, line in _lines(path):
        item = reader.line(name, number, line)
        if isinstance(item, TornLine):
            warnings.warn(TornLineWarning(item), stacklevel=2)
        else:
            yield item


def read_records(path: str | os.PathLike[str]) -> tuple[AuditRecord, ...]:
    """Every record of a JSON Lines audit file, in file order, typed (see
    :func:`iter_records`: a torn line is skipped with a :class:`TornLineWarning`; any other
    line that is not a record raises :class:`AuditError` naming ``FILE:LINE``)."""
    return tuple(iter_records(path))


# RFC 3339: a date-time in UTC (Z) or with an offset, or a date alone (midnight UTC).
_WHEN = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})"
    r"(?:[Tt]([0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2}))?"
)


def _bound(name: str, value: object) -> str | None:
    """``value`` (an RFC 3339 time, a date, or an aware datetime) as RFC 3339 in UTC, ``Z``,
    with no trailing zeros in its fraction: one text for one moment."""
    if value is None:
        return None
    if isinstance(value, datetime):
        given = value
        try:
            value = format_at(given)
        except ValueError:
            try:
                aware = given.utcoffset() is not None
            except Exception:  # a tzinfo of one's own that does not work
                aware = False
            problem = (
                f"{name} names no time in UTC's years 1 to 9999 (its offset takes it past"
                f" them), got {show(given)}"
                if aware
                else f"{name} must be a timezone-aware datetime, got {show(given)}"
            )
            raise ValueError(problem) from None
    match = _WHEN.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(
            f"{name} must be an RFC 3339 time (2026-11-01T00:00:00Z, with Z or an offset) or a"
            f" date (2026-11-01, midnight UTC), got {show(value)}"
        )
    date, clock = match.group(1, 2)
    # A time is read by the one reading of RFC 3339 (instant): its field ranges, an offset's
    # hours 00-23 and minutes 00-59, its calendar, and the moment in UTC without trailing
    # zeros in its fraction. A date alone is its midnight, UTC.
    moment = f"{date}T00:00:00" if clock is None else instant(value)
    try:
        if moment is None:
            raise ValueError(value)
        return format_at(moment + "Z")
    except ValueError:
        raise ValueError(f"{name} names no real time: {show(value)}") from None


@attrs.frozen
class Window:
    """Which records a calibration reads: verdicts whose ``at`` is at or after ``since`` and
    before ``until`` (either may be ``None``: no bound), each with the decisions on its
    submission whenever they were made. A decision on a submission with no verdict at all is
    in the window when its own ``at`` is. ``since`` and ``until`` are RFC 3339 in UTC (``Z``);
    :meth:`of` takes an offset, a date (midnight UTC) or an aware datetime too."""

    since: str | None = None
    until: str | None = None

    @classmethod
    def of(cls, since: object = None, until: object = None) -> Window:
        window = cls(_bound("since", since), _bound("until", until))
        since, until = window.bounds
        if since is not None and until is not None and since >= until:
            raise ValueError(
                f"since must be before until, got since {show(window.since)} and until"
                f" {show(window.until)}"
            )
        return window

    @property
    def bounds(self) -> tuple[str | None, str | None]:
        """``since`` and ``until`` as :func:`at_order` texts."""
        return (
            None if self.since is None else at_order(self.since),
            None if self.until is None else at_order(self.until),
        )

    def holds(self, at: str) -> bool:
        """Whether a record at ``at`` (RFC 3339, UTC) falls in the window."""
        since, until = self.bounds
        order = at_order(at)
        return (since is None or order >= since) and (until is None or order < until)


@runtime_checkable
class RecordSource(Protocol):
    """A store that :func:`~checkprofile.human.calibrate` can read: ``name`` for reports (no
    password), and ``stream(window)``: each record of the window (a superset is fine) with a
    fingerprint of its text, or a :class:`TornLine`, in the order they were recorded."""

    @property
    def name(self) -> str: ...

    def stream(self, window: Window) -> Iterator[Read]: ...


def _audit_files(path: str | bytes | os.PathLike[str]) -> list[str]:
    """``path`` if it is a file; the ``*.jsonl`` files of a directory, by name."""
    name = file_name(path)
    if not os.path.isdir(name):
        return [name]
    files = sorted(
        entry.path
        for entry in os.scandir(name)
        if entry.name.endswith(".jsonl") and entry.is_file()
    )
    if not files:
        raise FileNotFoundError(errno.ENOENT, "no audit records (*.jsonl) in this directory", name)
    return files


def open_sources(sources: Iterable[object], window: Window) -> tuple[list[str], Iterator[Read]]:
    """The names of ``sources`` and all their records, one after another, each with a
    fingerprint of its text. A source is a path (a JSON Lines file, or a directory of
    ``*.jsonl`` files), a :class:`RecordSource`, or an iterable of records. Files are listed
    (and a missing one refused) before anything is read; a file given twice is read once."""
    names: list[str] = []
    parts: list[Callable[[], Iterator[Read]]] = []
    seen: set[tuple[int, int]] = set()
    reader = _Reader()
    for source in sources:
        # Each source is judged by its type, never by what it says of itself (its __class__,
        # its own __getattr__), as every value that comes in is.
        kind = type(source)
        if issubclass(kind, JsonLinesRecorder):
            source = source.path  # type: ignore[attr-defined]
            kind = str
        if issubclass(kind, (str, bytes, PurePath)):
            for file in _audit_files(cast("str", source)):
                status = os.stat(file)
                if (status.st_dev, status.st_ino) in seen:
                    continue
                seen.add((status.st_dev, status.st_ino))
                names.append(file)
                parts.append(functools.partial(_file_stream, file, reader))
        elif callable(getattr(kind, "stream", None)) and hasattr(kind, "name"):
            store: RecordSource = source  # type: ignore[assignment]  # a RecordSource
            names.append(store.name)
            parts.append(functools.partial(store.stream, window))
        elif issubclass(kind, (list, tuple)):
            base = list if issubclass(kind, list) else tuple
            parts.append(functools.partial(_given, base.__iter__(source)))  # type: ignore[arg-type]
        elif issubclass(kind, Iterator):  # a generator, a database cursor: read as it goes
            parts.append(functools.partial(_given, source))  # type: ignore[arg-type]
        else:
            raise TypeError(
                "a source is a path, a directory, a recorder, or a list, tuple or iterator of"
                " audit records,"
                f" got {show(source)}"
            )
    return names, itertools.chain.from_iterable(part() for part in parts)


def _given(records: Iterable[object]) -> Iterator[Read]:
    for record in records:
        if type(record) is TornLine:
            yield record, 0
            continue
        if not of_type(record, VerdictRecord, DecisionRecord, SpotCheckRecord, QualificationRecord):
            raise TypeError(f"an audit record is needed (see read_records), got {show(record)}")
        known = cast("AuditRecord", record)
        yield known, hash(_line(known))
