"""Durable-write primitives: the only place the write path touches ``os`` for data.

Every helper looks ``os.write``/``os.fsync``/... up at call time, so tests inject faults (short
writes, ENOSPC, EIO on fsync) by wrapping those functions, as the crash-consistency notes
suggest. Nothing here decides *what* to write; the planners in ``_append``/``_recovery`` do.

Facts relied on (docs/spec.md APP-3, APP-4, RCV-6):

* a new file's directory entry is durable only after an fsync of its directory;
* ``os.link`` publishes a complete file under its final name and fails with EEXIST instead of
  replacing it (``os.rename`` would replace silently);
* ``O_APPEND`` writes land at the end even if another descriptor grew the file.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = [
    "append_all",
    "fsync_directory",
    "link_new",
    "make_directory",
    "open_append",
    "open_read_append",
    "truncate_durably",
    "unlink_quietly",
    "write_all",
    "write_new_file",
]

# Descriptors never leak into child processes (adapters spawn them).
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data``; loop on short writes, raise OSError on failure."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            # A zero-length write with bytes pending would loop forever; treat it as ENOSPC.
            raise OSError(28, "write made no progress")
        view = view[written:]


def open_append(path: Path) -> int:
    """A write-only ``O_APPEND`` descriptor of an existing file (never creates it: APP-21)."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | _CLOEXEC)


def open_read_append(path: Path) -> int:
    """A read-write ``O_APPEND`` descriptor of an existing file: one descriptor validates the
    committed bytes (``pread``), appends and fsyncs (never creates the file: APP-21)."""
    return os.open(path, os.O_RDWR | os.O_APPEND | _CLOEXEC)


def append_all(fd: int, data: bytes) -> None:
    """Write ``data`` at the end and fsync; only then may the caller acknowledge (APP-11). The
    descriptor is ``O_APPEND``, so the write lands after the last byte and never changes a byte
    already in the file (APP-10; the caller has checked that the file ends with its LF)."""
    write_all(fd, data)
    os.fsync(fd)


def truncate_durably(fd: int, size: int) -> None:
    """Cut the file to ``size`` bytes and fsync: the cut is durable before anyone is told."""
    os.ftruncate(fd, size)
    os.fsync(fd)


def link_new(source: Path, name: Path) -> None:
    """Publish ``source`` under ``name``; FileExistsError instead of replacing what is there."""
    os.link(source, name)


def make_directory(path: Path) -> bool:
    """Create ``path`` (its parent must exist); False if it already existed."""
    try:
        os.mkdir(path)
    except FileExistsError:
        return False
    return True


def fsync_directory(path: Path) -> None:
    """Make the directory's entries (new, linked or unlinked names) durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new_file(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Create ``path`` exclusively (``O_EXCL``), write ``data`` and fsync it.

    Raises FileExistsError if the name exists: an existing file is never truncated. On any
    other failure the partial file is removed, so no half-written name is left behind.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, mode)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        unlink_quietly(path)
        raise
    os.close(fd)


def unlink_quietly(path: Path) -> None:
    """Remove ``path`` if it is there; a failure to remove is not the caller's concern."""
    with contextlib.suppress(OSError):
        os.unlink(path)
