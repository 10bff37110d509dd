"""Files a caller names, and reading a whole file with a bound: regular files, devices and
pipes alike.

A name a caller gives is read by :func:`file_name`: text, bytes or a path, refused before any
file is opened when no file can have it.

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
from pathlib import Path, PurePath
from typing import BinaryIO, Final, cast

from ._shown import bare, show

__all__ = ["MAX_FILE_BYTES", "file_name", "read_bounded", "read_stream"]

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


def file_name(value: object) -> str:
    """The name of a file a caller gives: a str (a subclass read as its text), bytes (decoded
    as the file system does) or a pathlib path. Raises :class:`TypeError` for anything else,
    named without running its own code, and :class:`FileNotFoundError` for a name no file can
    have (a NUL, a lone surrogate), so that opening it is an ``OSError`` like any other."""
    kind = type(value)
    if issubclass(kind, str):
        name = str.__str__(value)
    elif issubclass(kind, bytes):
        name = os.fsdecode(b"".join([value]))  # type: ignore[list-item]
    elif issubclass(kind, PurePath):
        name = str(PurePath(cast("PurePath", value)))
    else:
        raise TypeError(f"a path is a string or a pathlib path, got {show(value)}")
    try:
        if "\0" in name:
            raise ValueError
        os.fsencode(name)
    except (UnicodeEncodeError, ValueError):
        raise FileNotFoundError(errno.ENOENT, "no file can have this name", bare(name)) from None
    # A name longer than any the system opens is refused here, named by its head: the OS's
    # own error would quote all of it (a message of a million characters for a path of as
    # many). Below this bound, an OSError quotes at most this many characters of the name.
    if len(name) > (_LONGEST_NAME_NT if os.name == "nt" else _LONGEST_NAME):
        raise OSError(
            errno.ENAMETOOLONG, f"File name too long ({len(name)} characters)", bare(name, 200)
        )
    return name


# The longest path a system opens: PATH_MAX on Linux (less elsewhere on POSIX), and Windows'
# extended-length paths.
_LONGEST_NAME: Final = 4096
_LONGEST_NAME_NT: Final = 32767
