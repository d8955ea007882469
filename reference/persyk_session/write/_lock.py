"""The session mutation lock (docs/spec.md APP-5, APP-6, RCV-2).

Two layers, both held from validation of the committed file to the last fsync:

* an in-process :class:`threading.Lock` per session directory, so threads of one process never
  race on one session even before they reach the OS;
* ``fcntl.flock(LOCK_EX)`` on ``session.lock`` beside ``session.jsonl``. ``flock`` locks belong
  to the open file description, so they survive a library closing some other descriptor of the
  file (POSIX ``lockf``/``F_SETLK`` locks would be silently dropped) and the kernel frees a dead
  holder's lock. The lock file is created by the first mutation and never deleted: deleting it
  would let two writers lock two different inodes under the same name.

Given the session file, the mutation also holds ``flock(LOCK_EX)`` on ``session.jsonl`` itself
(APP-26): the lock file belongs to a directory, the session file's identity to its inode, so two
names of one file (a hard link in another directory) never mutate it at once.

The wait is bounded (``DEFAULT_LOCK_TIMEOUT`` seconds, or ``PERSYK_LOCK_TIMEOUT`` from the
environment, or the caller's value; at most ``MAX_LOCK_TIMEOUT``, and a value that is not a
number of seconds in that range is ``USAGE``), then ``LOCK_UNAVAILABLE``. Where the file
system cannot lock (ENOLCK, ENOSYS, EOPNOTSUPP) the mutation fails closed with the same code.
Read paths never call this module, so reading never creates the lock file (CTX-19).
"""

from __future__ import annotations

import errno
import fcntl
import math
import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from .. import _fsutil
from .._errors import Code, ContractError, Diagnostic, UsageError

__all__ = [
    "DEFAULT_LOCK_TIMEOUT", "LOCK_FILE", "MAX_LOCK_TIMEOUT", "check_lock_timeout", "lock_timeout",
    "session_lock",
]

LOCK_FILE: Final = "session.lock"
DEFAULT_LOCK_TIMEOUT: Final = 10.0
# An hour: longer than any writer holds the lock, and far below what a thread lock or a clock
# can represent (inf or 1e10 overflowed them).
MAX_LOCK_TIMEOUT: Final = 3600.0
_TIMEOUT_ENV: Final = "PERSYK_LOCK_TIMEOUT"

# Errors meaning "this file system cannot lock at all": fail closed (APP-6).
_UNSUPPORTED: Final = frozenset({errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL})
# Errors meaning "someone else holds it": wait and retry.
_HELD: Final = frozenset({errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES})

# Descriptors never leak into child processes (adapters spawn them).
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)

_registry_guard = threading.Lock()
# Keyed by the session directory's (st_dev, st_ino): every spelling of one directory (relative,
# through symlinks, bind mounts) meets the same lock, at the cost of one stat (realpath walks
# every component).
_thread_locks: dict[tuple[int, int], threading.Lock] = {}


def check_lock_timeout(value: float, source: str) -> float:
    """``value`` if it is a number of seconds from 0 to MAX_LOCK_TIMEOUT, else USAGE."""
    # NaN fails both comparisons; a huge integer is compared exactly, never converted.
    if not 0 <= value <= MAX_LOCK_TIMEOUT:
        raise UsageError(Code.USAGE, f"{source} must be a number of seconds from 0 to 3600")
    return float(value)


def lock_timeout(timeout: float | None = None) -> float:
    """The wait bound: the caller's, else ``PERSYK_LOCK_TIMEOUT``, else the default.

    A negative argument means no wait; an environment value that is not a number of seconds
    from 0 to MAX_LOCK_TIMEOUT, or an argument above it, is a UsageError (USAGE).
    """
    if timeout is not None:
        return check_lock_timeout(max(0.0, timeout), "the lock timeout")
    raw = os.environ.get(_TIMEOUT_ENV)
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        return check_lock_timeout(value, _TIMEOUT_ENV)
    return DEFAULT_LOCK_TIMEOUT


# No room for the lock file: out of space or inodes, over a quota (APP-19, not APP-6).
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT})


def _unavailable(detail: str) -> ContractError:
    return ContractError([Diagnostic(Code.LOCK_UNAVAILABLE, detail=detail)])


def _thread_lock(directory: Path) -> threading.Lock:
    try:
        info = os.stat(directory)
    except OSError:
        raise _unavailable("the session lock file cannot be opened") from None
    key = (info.st_dev, info.st_ino)
    with _registry_guard:
        lock = _thread_locks.get(key)
        if lock is None:
            lock = _thread_locks[key] = threading.Lock()
        return lock


@contextmanager
def session_lock(
    directory: Path, *, timeout: float | None = None, file: Path | None = None
) -> Iterator[None]:
    """Hold the mutation lock of the session in ``directory`` for the ``with`` body; given the
    session ``file``, hold its identity lock too (APP-26).

    Raises ContractError(LOCK_UNAVAILABLE) when the wait bound passes or locking is unsupported.
    """
    bound = lock_timeout(timeout)
    deadline = time.monotonic() + bound
    thread_lock = _thread_lock(directory)
    if not thread_lock.acquire(timeout=bound):
        raise _unavailable("another writer in this process holds the session lock")
    try:
        fd = _open_lock_file(os.path.join(directory, LOCK_FILE))
        try:
            _flock_until(fd, deadline)
            if file is None:
                yield
            else:
                with _identity_lock(file, deadline):
                    yield
        finally:
            os.close(fd)  # closing the description releases the flock
    finally:
        thread_lock.release()


@contextmanager
def _identity_lock(file: Path, deadline: float) -> Iterator[None]:
    """APP-26: ``flock`` on the session file itself, through a description of our own (closing
    it releases only this lock), opened without following a link and without blocking."""
    try:
        fd = _fsutil.open_regular(file)
    except _fsutil.NotRegularFile:
        raise ContractError([Diagnostic(
            Code.SESSION_PATH_REFUSED, detail="the session file is a symbolic link; not mutated",
        )]) from None
    except OSError:  # no permission, gone: as for every other operation
        raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be opened") from None
    try:
        _flock_until(fd, deadline)
        yield
    finally:
        os.close(fd)


def _open_lock_file(path: str) -> int:
    # O_NOFOLLOW: a session.lock that is a symlink would make the lock (and, when dangling, a
    # new file) live outside the session directory, so two writers could lock different
    # inodes; fail closed instead (APP-5, APP-6, APP-25). So does anything but a regular file
    # (a FIFO, a directory), checked on the descriptor; O_NONBLOCK so that opening never waits.
    try:
        fd = os.open(
            path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, 0o644
        )
    except OSError as error:
        if error.errno in _NO_ROOM:  # APP-19 rev. 2: creating the lock file is a write
            raise ContractError([Diagnostic(
                Code.IO_FAILED, detail="the session lock file cannot be created")]) from None
        raise _unavailable("the session lock file cannot be opened") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _unavailable("the session lock file is not a regular file")
    return fd


def _flock_until(fd: int, deadline: float) -> None:
    pause = 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno in _UNSUPPORTED:
                raise _unavailable("the file system does not support locking") from None
            if error.errno not in _HELD:
                raise _unavailable("the session lock cannot be taken") from None
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _unavailable("the session lock is held by another writer")
        # Back off gently: a holder normally finishes within one fsync.
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, 0.05)
