"""Opening assets inside a session directory without following links (AST-10, AST-15..AST-19),
verifying them (AST-17) and writing protocol assets (AST-18).

Every asset is reached from a descriptor of the session directory, one component at a time:
``assets`` with ``O_DIRECTORY | O_NOFOLLOW``, the file with ``O_NOFOLLOW | O_NONBLOCK``, and its
type is checked on the opened descriptor before a byte is read (docs/spec.md, "Decision (AST-10,
AST-15), what escapes"). ``realpath`` is never used: it races.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import hashlib
import os
import re
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from .. import _fsutil
from .._errors import Code, ContractError, Diagnostic, UsageError, io_failures
from ..read._store import SESSION_FILE

__all__ = [
    "ASSETS_DIR",
    "ByteRange",
    "check_asset_path",
    "identity",
    "open_asset",
    "open_assets_dir",
    "open_session_dir",
    "revalidate",
    "verify_asset",
    "write_protocol_asset",
]

ASSETS_DIR: Final = "assets"
# AST-3: one name directly under assets/, from the Id alphabet, starting with a letter or digit.
_ASSET_PATH: Final = re.compile(r"assets/([A-Za-z0-9][A-Za-z0-9._-]{0,131})")
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_CHUNK: Final = 1 << 20


def refused(detail: str) -> ContractError:
    return ContractError([Diagnostic(Code.ASSET_PATH_REFUSED, detail=detail)])


def not_found(detail: str = "the asset does not exist") -> ContractError:
    return ContractError([Diagnostic(Code.ASSET_NOT_FOUND, detail=detail)])


def check_asset_path(path: str) -> str:
    """AST-15: the file name of an AST-3 path, or ASSET_PATH_REFUSED before any file is touched."""
    found = _ASSET_PATH.fullmatch(path)
    if found is None:
        raise refused("the asset path is not one file name directly under assets/")
    return found.group(1)


def open_session_dir(session: str) -> int:
    """A descriptor of the session directory the caller names (a symlink *as* that path is
    resolved once, as for every operation), which must hold ``session.jsonl``."""
    path = session
    if os.path.basename(path) == SESSION_FILE:
        path = os.path.dirname(path) or "."
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except (OSError, ValueError):
        raise UsageError(Code.PATH_NOT_FOUND, "no session directory at the path") from None
    try:
        info = os.stat(SESSION_FILE, dir_fd=fd, follow_symlinks=False)
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UsageError(Code.PATH_NOT_FOUND, "no session file in the session directory")
    return fd


def open_assets_dir(session_fd: int, *, create: bool = False) -> int:
    """``assets/`` of the session, never through a symlink (AST-15); with ``create``, a missing
    one is made and the session directory fsynced (AST-18)."""
    try:
        return os.open(ASSETS_DIR, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                       dir_fd=session_fd)
    except FileNotFoundError:
        if not create:
            raise not_found("the session has no assets directory") from None
    except OSError as error:
        raise _refusal_of(error, "the assets directory") from None
    # Made by someone else meanwhile: open it below, still without following links.
    with io_failures("the assets directory cannot be made"):  # APP-19: no inode, no space
        with contextlib.suppress(FileExistsError):
            os.mkdir(ASSETS_DIR, 0o755, dir_fd=session_fd)
        os.fsync(session_fd)
    try:
        return os.open(ASSETS_DIR, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                       dir_fd=session_fd)
    except OSError as error:
        raise _refusal_of(error, "the assets directory") from None


def _refusal_of(error: OSError, what: str) -> ContractError:
    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK, errno.ENXIO, errno.EISDIR,
                       errno.EOPNOTSUPP):
        return refused(f"{what} is a symbolic link or not of the expected type")
    return ContractError([Diagnostic(Code.IO_FAILED, detail=f"{what} cannot be opened")])


def open_asset(assets_fd: int, name: str, flags: int = os.O_RDONLY) -> int:
    """Open ``name`` in ``assets/`` without following a link and without blocking, and check on
    the descriptor that it is a regular file (AST-15, AST-16)."""
    try:
        fd = os.open(name, flags | _NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=assets_fd)
    except FileNotFoundError:
        raise not_found() from None
    except OSError as error:
        raise _refusal_of(error, "the asset") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise refused("the asset is not a regular file")
    # Back to blocking I/O for a regular file (O_NONBLOCK only kept the open from hanging).
    os.set_blocking(fd, True)
    return fd


def identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def revalidate(fd: int, directory_fd: int, name: str) -> None:
    """AST-19: the name still holds the file open on ``fd`` (a fresh look-up that follows no
    link); otherwise ASSET_IDENTITY_CHANGED."""
    try:
        now = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
    except OSError:
        now = None
    if now is None or identity(now) != identity(os.fstat(fd)):
        raise ContractError([Diagnostic(
            Code.ASSET_IDENTITY_CHANGED,
            detail="the name no longer holds the file opened earlier; nothing was written")])


@contextlib.contextmanager
def _closing(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


# --- verification (AST-17) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ByteRange:
    start: int
    end: int  # exclusive (AST-5)


def byte_range_arg(value: Any) -> ByteRange | None:
    if value is None:
        return None
    ok = (isinstance(value, dict) and value.keys() == {"start", "end"}
          and all(isinstance(value[k], int) and not isinstance(value[k], bool)
                  for k in ("start", "end"))
          and 0 <= value["start"] < value["end"])
    if not ok:
        raise UsageError(Code.USAGE, "the argument 'byteRange' must be {start, end}, "
                         "integers with 0 <= start < end")
    return ByteRange(value["start"], value["end"])


def verify_asset(
    session: str, path: str, *, sha256: str | None = None, byte_range: ByteRange | None = None
) -> dict[str, Any]:
    """The size of the asset and the SHA-256 of the checked bytes (AST-17)."""
    if sha256 is not None and re.fullmatch(r"[0-9a-f]{64}", sha256) is None:
        raise UsageError(Code.USAGE, "the argument 'sha256' must be 64 lower-case hex digits")
    name = check_asset_path(path)
    with _closing(open_session_dir(session)) as session_fd, \
            _closing(open_assets_dir(session_fd)) as assets_fd, \
            _closing(open_asset(assets_fd, name)) as fd:
        size = os.fstat(fd).st_size
        start, end = (0, size) if byte_range is None else (byte_range.start, byte_range.end)
        if end > size:
            raise ContractError([Diagnostic(
                Code.ASSET_MISMATCH, detail="the byte range ends beyond the file")])
        digest = _sha256_of(fd, start, end)
    if sha256 is not None and digest != sha256:
        raise ContractError([Diagnostic(
            Code.ASSET_MISMATCH, detail="the SHA-256 of the checked bytes differs")])
    out: dict[str, Any] = {"path": path, "size": size, "sha256": digest}
    if byte_range is not None:
        out["byteRange"] = {"start": start, "end": end}
    return out


def _sha256_of(fd: int, start: int, end: int) -> str:
    digest = hashlib.sha256()
    offset = start
    while offset < end:
        chunk = os.pread(fd, min(_CHUNK, end - offset), offset)
        if not chunk:
            raise ContractError([Diagnostic(
                Code.ASSET_MISMATCH, detail="the file became shorter while it was read")])
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


# --- protocol assets (AST-14, AST-18) ----------------------------------------------------------


_MIME: Final = re.compile(r"[A-Za-z0-9!#$&^_.+-]{1,127}/[A-Za-z0-9!#$&^_.+-]{1,127}")


def data_arg(value: Any) -> bytes:
    if not isinstance(value, str):
        raise UsageError(Code.USAGE, "the argument 'data' must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise UsageError(Code.USAGE, "the argument 'data' is not valid base64") from None


def write_protocol_asset(session: str, data: bytes, mime_type: str) -> dict[str, Any]:
    """Write ``data`` as ``assets/protocol-<uuid>.bin`` by exclusive creation; the bytes and
    ``assets/`` are fsynced before the available reference is returned (AST-18)."""
    if _MIME.fullmatch(mime_type) is None:
        raise UsageError(Code.USAGE, "the argument 'mimeType' must be type/subtype (AST-4)")
    name = f"protocol-{uuid.uuid4()}.bin"
    with _closing(open_session_dir(session)) as session_fd, \
            _closing(open_assets_dir(session_fd, create=True)) as assets_fd:
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                         0o644, dir_fd=assets_fd)
        except FileExistsError:
            raise ContractError([Diagnostic(
                Code.ASSET_EXISTS, detail="exclusive creation found the name taken")]) from None
        except OSError:  # APP-19: no inode left for the file
            raise ContractError([Diagnostic(
                Code.IO_FAILED, detail="the protocol asset cannot be created")]) from None
        try:
            with io_failures("writing or syncing the protocol asset failed"):  # APP-19
                _fsutil.write_all(fd, data)
                os.fsync(fd)
                os.fsync(assets_fd)  # AST-18: the name is durable before the answer
        except BaseException:
            os.close(fd)
            # nothing is acknowledged, so nothing half-written stays under the name
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=assets_fd)
            raise
        os.close(fd)
    return {
        "status": "available",
        "path": f"{ASSETS_DIR}/{name}",
        "mimeType": mime_type,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
