"""Report files written whole or not at all: a temporary file in the target's own folder, every
byte written and fsynced, then renamed over the target (one system call, so a reader sees the
old file or the new one, never half of one) and the folder fsynced (the new name is durable).

A write that fails (no space, no inodes, a file size limit, no permission, a read-only file
system, a folder at the path, a folder that is not there) leaves no file and no temporary file
behind and raises :class:`WriteFailed`: ``IO_FAILED``, the path and the system's reason, one
line. The runner does not import the reference (``persyk_session._fsutil``), so this is its own.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

__all__ = ["WriteFailed", "write_whole_file"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class WriteFailed(OSError):
    """A file could not be written whole: nothing of it is left (``IO_FAILED``)."""

    def __init__(self, path: Path, error: OSError) -> None:
        reason = error.strerror or str(error)
        super().__init__(error.errno, reason)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"IO_FAILED: cannot write {self.path}: {self.reason}"


def write_whole_file(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all. Raises WriteFailed."""
    data = text.encode("utf-8")
    folder = path.parent
    temporary = folder / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.lstat(path).st_mode):  # os.replace would say less clearly
                raise IsADirectoryError(errno.EISDIR, "a folder is at this path")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o666)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException as error:  # a signal's exception too: no temporary file is left
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise WriteFailed(path, error) from None
        raise
    _fsync_folder(folder)


def _write_all(fd: int, data: bytes) -> None:
    """Every byte, looping on short writes (``os.write`` looked up at call time, so a test
    can make it fail as a full disk does)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # no progress with bytes pending: as good as a full disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _fsync_folder(folder: Path) -> None:
    """Make the new name durable; a file system that cannot fsync a folder (EINVAL) has
    nothing to make durable, and the file itself is whole either way."""
    try:
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
