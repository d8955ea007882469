"""The one prologue of every mutation of a session file: append, batch, remove, recover and
capture's ``recording.*`` appends all enter through :func:`locked_session_file`, so that no
writer can skip a lock or the format-version refusal.

In this order, each step before the next:

1. resolve the session file without following it (APP-25; no session is PATH_NOT_FOUND, APP-21);
2. refuse a header of another format version before any lock, so nothing is created (APP-24,
   RCV-17): :class:`OtherVersion`, a ContractError a caller can tell apart from the body's;
3. take ``session.lock`` (APP-5) and then ``flock`` on ``session.jsonl`` itself (APP-26), both
   waited for within one bound (APP-6), held until the mutation's last fsync.

The revalidation of the committed file under those locks (APP-7) is the caller's: appends bring
their live index up to date (``_append``), recovery judges the tail (``_recovery``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..read._store import resolve_session_file_for_mutation
from ._lock import session_lock
from ._versions import OtherVersion, refuse_other_version

__all__ = ["OtherVersion", "locked_session_file"]


@contextmanager
def locked_session_file(
    path: str | os.PathLike[str], *, timeout: float | None = None
) -> Iterator[Path]:
    """Hold both mutation locks of the session at ``path`` for the ``with`` body, which gets the
    resolved session file. Raises :class:`OtherVersion` before any lock, ContractError
    (LOCK_UNAVAILABLE, SESSION_PATH_REFUSED) or UsageError (PATH_NOT_FOUND)."""
    file = resolve_session_file_for_mutation(path)
    refuse_other_version(file)
    with session_lock(file.parent, timeout=timeout, file=file):
        yield file
