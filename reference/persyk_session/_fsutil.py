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
import errno
import os
import stat
from pathlib import Path

__all__ = [
    "NotRegularFile",
    "append_all",
    "fsync_directory",
    "link_new",
    "make_directory",
    "make_directory_at",
    "open_append",
    "open_directory",
    "open_directory_at",
    "open_read_append",
    "open_regular",
    "truncate_durably",
    "unlink_quietly",
    "write_all",
    "write_new_file",
]

# Descriptors never leak into child processes (adapters spawn them).
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def _at(dir_fd: int | None) -> dict[str, int]:
    """``dir_fd=`` only when there is one: tests wrap ``os`` functions with plain signatures."""
    return {} if dir_fd is None else {"dir_fd": dir_fd}


class NotRegularFile(OSError):
    """The name holds something other than a regular file (a FIFO, device, socket, directory)
    or is a symbolic link where none is followed."""


def open_regular(
    path: str | os.PathLike[str], flags: int = os.O_RDONLY, *, dir_fd: int | None = None,
    follow: bool = False,
) -> int:
    """Open a regular file without blocking and without following a final symbolic link
    (unless ``follow``); its type is checked with ``fstat`` on the descriptor before a byte is
    read, so a FIFO never hangs the caller and a device is never read. ``O_NONBLOCK`` stays
    set: it changes nothing for a regular file, and a file that only claims to be one
    (``/proc/kmsg``) then fails a read with EAGAIN instead of blocking for ever. Raises
    NotRegularFile (a symlink gives ELOOP), or OSError from ``open``."""
    extra = _CLOEXEC | _NONBLOCK | (0 if follow else _NOFOLLOW)
    try:
        fd = os.open(path, flags | extra, **_at(dir_fd))
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotRegularFile(errno.ELOOP, "a symbolic link") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_directory_at(name: str, dir_fd: int) -> int:
    """Open the directory ``name`` inside ``dir_fd`` without following a symbolic link.
    Raises NotRegularFile when ``name`` is a symlink or not a directory."""
    try:
        return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotRegularFile(error.errno, "not a directory") from None
        raise


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
    """A write-only ``O_APPEND`` descriptor of an existing regular file, never through a
    symbolic link (APP-25; never creates it: APP-21)."""
    return open_regular(path, os.O_WRONLY | os.O_APPEND)


def open_read_append(path: Path) -> int:
    """A read-write ``O_APPEND`` descriptor of an existing regular file, never through a
    symbolic link (APP-25): one descriptor validates the committed bytes (``pread``), appends
    and fsyncs (never creates the file: APP-21)."""
    return open_regular(path, os.O_RDWR | os.O_APPEND)


def append_all(fd: int, data: bytes) -> None:
    """Write ``data`` at the end and fsync; only then may the caller acknowledge (APP-11,
    DUR-1, DUR-5: durable means an fsync of this file returned before the reply). The
    descriptor is ``O_APPEND``, so the write lands after the last byte and never changes a byte
    already in the file (APP-10; the caller has checked that the file ends with its LF)."""
    write_all(fd, data)
    os.fsync(fd)


def truncate_durably(fd: int, size: int) -> None:
    """Cut the file to ``size`` bytes and fsync: the cut is durable before anyone is told."""
    os.ftruncate(fd, size)
    os.fsync(fd)


def link_new(
    source: str | os.PathLike[str], name: str | os.PathLike[str], *, dir_fd: int | None = None
) -> None:
    """Publish ``source`` under ``name`` (both relative to ``dir_fd`` if given);
    FileExistsError instead of replacing what is there. A link at ``source`` is not followed."""
    if dir_fd is None:
        os.link(source, name)
    else:
        os.link(source, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)


def make_directory(path: Path) -> bool:
    """Create ``path`` (its parent must exist); False if it already existed."""
    try:
        os.mkdir(path)
    except FileExistsError:
        return False
    return True


def make_directory_at(name: str, dir_fd: int) -> bool:
    """Create the directory ``name`` inside ``dir_fd``; False if the name already existed
    (whatever it holds: the caller opens it without following links and checks)."""
    try:
        os.mkdir(name, dir_fd=dir_fd)
    except FileExistsError:
        return False
    return True


def open_directory(path: str | os.PathLike[str]) -> int:
    """A descriptor of the directory ``path`` (links in the path followed: the caller named
    it), for ``*at`` calls that then never leave it."""
    return os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)


def fsync_directory(path: Path | int) -> None:
    """Make the directory's entries (new, linked or unlinked names) durable (DUR-3: a file's
    own fsync does not make its name durable); ``path`` may be
    an open descriptor of the directory."""
    if isinstance(path, int):
        os.fsync(path)
        return
    fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new_file(
    path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644, dir_fd: int | None = None
) -> None:
    """Create ``path`` exclusively (``O_EXCL``; relative to ``dir_fd`` if given), write
    ``data`` and fsync it.

    Raises FileExistsError if the name exists (a symbolic link included: ``O_EXCL`` never
    follows one): an existing file is never truncated. On any other failure the partial file
    is removed, so no half-written name is left behind.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, mode, **_at(dir_fd))
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        unlink_quietly(path, dir_fd=dir_fd)
        raise
    os.close(fd)


def unlink_quietly(path: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
    """Remove ``path`` if it is there; a failure to remove is not the caller's concern."""
    with contextlib.suppress(OSError):
        os.unlink(path, **_at(dir_fd))
