"""Reading a whole file, with a bound: regular files, devices and pipes alike.

Every file checkprofile reads whole (a process file, a data file or standard input given to the
command line, a case file of a corpus) is read through :func:`read_bounded`: at most
:data:`MAX_FILE_BYTES`, and past that an :class:`OSError` (``EFBIG``) whose ``strerror`` says
so, which every reader already reports as a file it cannot read. A file that never ends
(``/dev/zero``, a pipe fed for ever) is stopped at the bound, not read until memory runs out.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

__all__ = ["MAX_FILE_BYTES", "read_bounded", "read_stream"]

#: The most checkprofile reads of one file: far above any process file or submission, and
#: above the 100 MB run data the resource tests bundle (docs/security.md).
MAX_FILE_BYTES: Final = 256 * 1024 * 1024

# A file that is not regular (a device, a pipe) is read this much at a time.
_CHUNK: Final = 1024 * 1024


def _too_large(limit: int) -> OSError:
    return OSError(
        errno.EFBIG, f"larger than {limit:,} bytes, the most checkprofile reads of a file"
    )


def read_stream(stream: BinaryIO, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """All of ``stream``, or an :class:`OSError` once it has given more than ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)


def read_bounded(path: str | Path, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the file at ``path``: a regular file larger than ``limit`` is refused by
    its size before it is read; anything else is read until it ends or passes ``limit``."""
    with open(path, "rb") as file:
        info = os.fstat(file.fileno())
        if stat.S_ISREG(info.st_mode):
            if info.st_size > limit:
                raise _too_large(limit)
            # One read of its size (no copy); a file that grew meanwhile is read on, bounded.
            data = file.read(info.st_size + 1)
            if len(data) <= info.st_size:
                return data
            if len(data) > limit:
                raise _too_large(limit)
            return data + read_stream(file, limit=limit - len(data))
        return read_stream(file, limit=limit)
