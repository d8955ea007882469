"""The reference adapter with one sync taken away: the broken fakes of the power-loss checks.

Each fake names the fsyncs it drops (or delays) by the operation that makes them and the file
they sync; everything else is the reference's, so a power-loss check that fails on a fake
fails for that one missing sync, and for no other reason.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections.abc import Callable

import persyk_session.adapter as reference

# (op, profile, path of the descriptor, is a directory, descriptor) -> True when the fake has
# dealt with this fsync itself (dropped it, or put it off).
Override = Callable[[str, str, str, bool, int], bool]
_REAL_FSYNC = os.fsync
_current: list[tuple[str, str]] = []


def _path(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def later(fd: int, delay: float = 1.0) -> None:
    """The fsync of ``fd``, done on another thread after ``delay``: after the reply (a second
    leaves room for a loaded machine to write the reply first)."""
    copy = os.dup(fd)

    def sync() -> None:
        _REAL_FSYNC(copy)
        os.close(copy)

    threading.Timer(delay, sync).start()


def serve(override: Override) -> None:
    real_dispatch = reference.dispatch

    def dispatch(op: str, args: object, profile: str = "v1") -> dict[str, object]:
        _current.append((op, profile))
        try:
            return real_dispatch(op, args, profile)
        finally:
            _current.pop()

    def fsync(fd: int) -> None:
        if _current:
            op, profile = _current[-1]
            if override(op, profile, _path(fd), stat.S_ISDIR(os.fstat(fd).st_mode), fd):
                return
        _REAL_FSYNC(fd)

    reference.dispatch = dispatch
    os.fsync = fsync  # type: ignore[assignment]
    os.fdatasync = fsync  # type: ignore[assignment]
    sys.exit(reference.main())
