"""Writing the audit trail: where records go, and the JSON Lines file that takes them.

Appending is safe from several processes at once: each record is one ``write()`` to a file
opened with ``O_APPEND``, under an exclusive ``flock`` where the platform has one, so lines
never interleave. (A network file system that ignores both is the exception.) A writer that
dies mid-line leaves a fragment; the next record starts on a fresh line, and the reader skips
the fragment, reporting it by ``FILE:LINE`` (:class:`TornLine`), and reads on.

A line is written only when the reader takes it back (:func:`record_line`): a recorder writes
nothing the reader refuses.
"""

from __future__ import annotations

import json
import os
from typing import Any, Protocol, runtime_checkable

import attrs

from ..._files import file_name
from ..._keepable import unkeepable
from ..._log import logger
from ..._shown import show
from ..._types import of_type
from ._fast._reader import _Reader
from ._kinds import AuditRecord
from ._qualification import QualificationRecord
from ._records import DecisionRecord, VerdictRecord
from ._spot import SpotCheckRecord
from ._strict import MAX_LINE_BYTES, AuditError

try:  # POSIX; elsewhere O_APPEND alone keeps a single write() whole on local files
    import fcntl
except ImportError:  # pragma: no cover, no mutate - Windows only: fcntl is on every POSIX system
    fcntl = None  # type: ignore[assignment]

__all__ = ["JsonLinesRecorder", "Recorder", "record_line"]

_log = logger("human")


@runtime_checkable
class Recorder(Protocol):
    """Where audit records go. ``record`` must keep each record whole, or raise."""

    def record(self, record: AuditRecord) -> None: ...


def _line(record: AuditRecord) -> bytes:
    return _line_of(record.to_json())


def _line_of(data: dict[str, Any]) -> bytes:
    text = json.dumps(
        data,
        ensure_ascii=True,
        separators=(",", ":"),
        allow_nan=False,  # pragma: no mutate - a belt: no record holds a NaN (each is checked)
    )
    return text.encode("ascii")


# Reads back every line before it is written (thread-safe: its cache is a dict).
_WRITER_CHECK = _Reader()


def record_line(record: AuditRecord) -> bytes:
    """The bytes of one audit line: ASCII JSON of ``record.to_json()`` and a newline.

    Raises :class:`ValueError` for a record that would not read back (a lone surrogate in its
    text, a line over :data:`MAX_LINE_BYTES`), or that some store could not keep (a NUL in any
    text: :mod:`._keepable`): a recorder writes nothing the reader refuses, and every recorder
    takes or refuses the same records.
    """
    if not of_type(record, VerdictRecord, DecisionRecord, SpotCheckRecord, QualificationRecord):
        raise TypeError(
            "an audit record is a VerdictRecord, DecisionRecord, SpotCheckRecord or"
            " QualificationRecord,"
            f" got {show(record)}"
        )
    data = record.to_json()
    line = _line_of(data)
    if len(line) >= MAX_LINE_BYTES:
        raise ValueError(
            f"this record is {len(line)} bytes as a line, over the {MAX_LINE_BYTES} an audit"
            " line may have; nothing was written"
        )
    try:
        _WRITER_CHECK.line("record", 1, line)
    except AuditError as error:
        reason = str(error).removeprefix("record:1: ")
        raise ValueError(
            f"this record would not read back ({reason}); nothing was written"
        ) from None
    why = unkeepable(data, line)  # what one store could keep, every store must
    if why is not None:
        raise ValueError(f"this record cannot be kept by every store: {why}; nothing was written")
    return line + b"\n"


@attrs.frozen
class JsonLinesRecorder:
    """Appends each record to the JSON Lines file ``path`` (created when missing).

    Safe when several processes (or threads) append to the same file: the file is opened with
    ``O_APPEND`` for each record, locked with ``flock`` where the platform has it, and the
    line is written with one ``write()`` (continued under the lock on a short write), so lines
    never interleave. Keeps no file open between records.

    When a writer died in the middle of a line, the next record starts on a fresh line, so
    only the fragment is lost: the reader skips it and reports it (:class:`TornLine`).
    """

    path: str = attrs.field(converter=file_name)

    def record(self, record: AuditRecord) -> None:
        line = record_line(record)
        # The default is never read where the tests run (Linux and macOS have O_CLOEXEC).
        cloexec = getattr(os, "O_CLOEXEC", 0)  # pragma: no mutate
        try:  # read access to see how the file ends
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | cloexec, 0o644)
            readable = True
        except PermissionError:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | cloexec, 0o644)
            readable = False
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            if readable and _ends_mid_line(fd):
                line = b"\n" + line  # a writer died mid-line: leave its fragment alone
                _log.warning(
                    "%s ends in the middle of a line (a writer that died); the record starts"
                    " on a new line and readers skip the fragment",
                    self.path,
                )
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)  # closing releases the lock


def _ends_mid_line(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if not size:
        return False
    os.lseek(fd, size - 1, os.SEEK_SET)  # O_APPEND still writes at the end
    return os.read(fd, 1) != b"\n"
