"""Confirmed whole-session deletion (docs/spec.md CAP-9, CAP-10, CAP-28..CAP-30).

Deletion names a location, never a header id, so a copy of the session elsewhere is untouched.
The order: refuse without confirmation; stop this process's captures of the session and revoke
their handles; take the asset lock of every ``assets/*.wav`` without waiting (another process's
live capture is ``ASSET_LOCKED``, nothing touched); take the session lock; revalidate that the
path still names the directory opened (AST-19); rename the directory to
``<parent>/.persyk-deleted/<name>.<32 hex digits>`` (one atomic step that takes it out of
discovery, which looks only at direct children of a root); fsync both directories; only then
remove the staged tree. A deletion killed after the rename is finished by the next deletion of
the same path (``resumed``).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from .._errors import Code, ContractError, Diagnostic, UsageError, io_failures
from ..read._store import SESSION_FILE
from ..write._lock import session_lock
from ._assets import ASSETS_DIR, identity
from ._capture import stop_captures_of, try_asset_lock

__all__ = ["STAGING_DIR", "delete_session"]

STAGING_DIR: Final = ".persyk-deleted"
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)


def _staged_name(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(name) + r"\.[0-9a-f]{32}")


def delete_session(session: str, *, confirm: bool, timeout: float | None = None) -> dict[str, Any]:
    """Delete the session directory ``session`` (CAP-28..CAP-30): ``{"action": "deleted"}``, or
    ``{"action": "resumed"}`` when only staged trees of an interrupted deletion were left."""
    if confirm is not True:
        raise ContractError([Diagnostic(
            Code.DELETE_NOT_CONFIRMED, detail="deletion needs confirm: true; nothing was touched")])
    path = Path(session)
    if path.name == SESSION_FILE:
        path = path.parent
    path = Path(os.path.abspath(path))
    staging = path.parent / STAGING_DIR
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if _remove_staged(staging, path.name):
            return {"action": "resumed"}
        raise UsageError(Code.PATH_NOT_FOUND, "no session directory at the path") from None
    if stat.S_ISLNK(info.st_mode):
        raise UsageError(Code.USAGE, "the session path is a symbolic link; name the directory")
    if not stat.S_ISDIR(info.st_mode) or not (path / SESSION_FILE).is_file():
        raise UsageError(Code.PATH_NOT_FOUND, "no session directory at the path")
    stop_captures_of(identity(info))
    with _asset_locks(path), session_lock(path, timeout=timeout):
        # AST-19: the name still holds the directory looked at, else nothing is touched.
        try:
            now = os.lstat(path)
        except OSError:
            now = None
        if now is None or identity(now) != identity(info):
            raise ContractError([Diagnostic(
                Code.ASSET_IDENTITY_CHANGED,
                detail="the path no longer names the session directory; nothing was touched")])
        target = staging / f"{path.name}.{secrets.token_hex(16)}"
        with io_failures("moving the session out of discovery failed"):  # APP-19, CAP-30
            os.makedirs(staging, exist_ok=True)
            os.rename(path, target)
            _fsync_dir(staging)
            _fsync_dir(path.parent)
    # The locks were released with their descriptors (inside the staged tree); clean up.
    _remove_staged(staging, path.name)
    return {"action": "deleted"}


@contextlib.contextmanager
def _asset_locks(path: Path) -> Iterator[None]:
    """CAP-29: the asset lock of every WAV, none waited for; all released on the way out."""
    held: list[int] = []
    try:
        session_fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
        try:
            assets_fd = os.open(ASSETS_DIR, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                                dir_fd=session_fd)
        except OSError:
            assets_fd = -1  # no assets/ (or not a real directory): no capture can live there
        finally:
            os.close(session_fd)
        if assets_fd >= 0:
            try:
                for name in sorted(os.listdir(assets_fd)):
                    if not name.endswith(".wav"):
                        continue
                    try:
                        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | _CLOEXEC,
                                     dir_fd=assets_fd)
                    except OSError:
                        continue  # a link or a special file is no capture's asset
                    held.append(fd)
                    try_asset_lock(fd)
            finally:
                os.close(assets_fd)
        yield
    finally:
        for fd in held:
            os.close(fd)


def _remove_staged(staging: Path, name: str) -> bool:
    """Remove every staged tree of ``name``; True if there was one. ``.persyk-deleted`` itself
    goes when it is empty."""
    try:
        entries = os.listdir(staging)
    except OSError:
        return False
    pattern = _staged_name(name)
    found = [entry for entry in entries if pattern.fullmatch(entry)]
    for entry in found:
        shutil.rmtree(staging / entry, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.rmdir(staging)
    if found:
        _fsync_dir(staging.parent)
    return bool(found)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
