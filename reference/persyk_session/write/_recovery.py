"""Explicit recovery of an unterminated last line: the I/O edge (docs/spec.md, section RCV).

:func:`recover` takes the session lock (RCV-2), reads what the decision needs, asks the sans-IO
planner in ``_recovery_plan`` what to do, and executes the plan: preserve the fragment (RCV-6),
then add the LF, truncate after the last LF (RCV-7, RCV-14) or remove a file without a complete
record (RCV-16). A refusal changes nothing.

What is read (RCV-15)
---------------------
A tail that is incomplete, definitely broken or over the limits is judged from its own bytes,
read backwards from the end: recovery then costs time proportional to the tail, whatever the
size of the file, and interior damage (if any) stays where it is for ``validate`` to report.
Only a file that ends with LF and a tail that is one complete JSON value are judged against the
whole session (a record needs the graph of the committed lines); then interior faults win.

Restartable and confined (RCV-18, RCV-19, APP-25)
-------------------------------------------------
Every step leaves a state the next ``recover`` can finish: the fragment goes to a temporary file
with a random name (fsynced), is published by ``link`` under a random final name (``recovery/``
fsynced), and only then is the session file truncated or removed (fsynced). A rerun removes
temporaries of dead attempts and reuses a published copy of the same fragment. Everything inside
the session directory is reached through its descriptor (``mkdirat``, ``openat`` with
``O_NOFOLLOW``, ``linkat``, ``unlinkat``): a ``recovery`` that is a symlink or not a directory is
refused, and a file in ``recovery/`` is read only after ``fstat`` says it is a regular file.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .. import _fsutil
from .._errors import Code, ContractError, Diagnostic, UsageError
from ..read._engine import READABLE_ENGINE, Engine
from ..read._index import IndexBuilder, SessionIndex
from ..read._records import MAX_RECORD_BYTES
from ..read._store import open_session
from ._prologue import OtherVersion, locked_session_file
from ._recovery_plan import (
    RECOVERY_DIR,
    FragmentVerdict,
    RecoveryPlan,
    TailInfo,
    classify_fragment,
    plan_recovery,
)

__all__ = ["RecoveryResult", "recover"]


# --- the I/O shell -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecoveryResult:
    action: str | None = None
    preserved: str | None = None
    error: Diagnostic | None = None

    def to_json(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error.to_json()}
        return {"action": self.action, "preserved": self.preserved}


_TAIL_CODES: Final = frozenset({Code.RECORD_UNTERMINATED, Code.RECORD_TOO_LARGE})
_BACK_CHUNK: Final = 1 << 16


def _read_tail(fd: int, size: int) -> tuple[int, bytes | None]:
    """(offset after the last LF, the bytes after it), reading backwards from the end: the cost
    is proportional to the tail. The bytes are None when more than the record limit."""
    end = size
    pieces: list[bytes] = []
    held = 0
    while end > 0 and held <= MAX_RECORD_BYTES:
        start = max(0, end - _BACK_CHUNK)
        chunk = os.pread(fd, end - start, start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            pieces.append(chunk[newline + 1 :])
            return start + newline + 1, b"".join(reversed(pieces))
        pieces.append(chunk)
        held += len(chunk)
        end = start
    if end == 0 and held <= MAX_RECORD_BYTES:
        return 0, b"".join(reversed(pieces))
    return -1, None


def _tail_info(index: SessionIndex, fd: int, size: int, engine: Engine) -> TailInfo:
    diagnostics = index.diagnostics
    ends_with_lf = size > 0 and os.pread(fd, 1, size - 1) == b"\n"
    if size == 0 or ends_with_lf:
        first = diagnostics[0] if diagnostics else None
        return TailInfo(size, first, size, 0, None, None)
    # The store reports the unterminated last line exactly once (UNTERMINATED or TOO_LARGE);
    # any other finding lies on a complete line.
    tail = diagnostics[-1] if diagnostics else None
    if (
        tail is None
        or tail.code not in _TAIL_CODES
        or index.diagnostic_count != 1
        or tail.line is None
    ):
        first = diagnostics[0] if diagnostics else None
        return TailInfo(size, first, size, 0, None, None)
    tail_line = tail.line
    offset, fragment = _read_tail(fd, size)
    if fragment is None:
        return TailInfo(size, None, offset, tail_line, b"", FragmentVerdict.LIMIT)
    builder = IndexBuilder.from_index(index, schema=engine.schema)

    def check_record(value: dict[str, Any], line: int) -> list[Diagnostic]:
        if tail_line == 1:
            return IndexBuilder(schema=engine.schema).add_header(value, line=line)
        return builder.check_entry(value, line=line)

    verdict = classify_fragment(fragment, line=tail_line, check_record=check_record)
    return TailInfo(size, None, offset, tail_line, fragment, verdict)


def _io_failed() -> Diagnostic:
    return Diagnostic(Code.IO_FAILED, detail="writing or syncing during recovery failed")


def _refused(detail: str) -> ContractError:
    return ContractError([Diagnostic(Code.SESSION_PATH_REFUSED, detail=detail)])


# RCV-19: a fragment is written under a temporary name of this shape, then published by link
# under ``<stem>.<random>.fragment``. Both names hold a random part, so nobody can plant a file
# at the name recovery is about to use; the stem (from the planner: offset and digest) lets a
# rerun recognise a copy published by an interrupted attempt.
_TEMP_PREFIX: Final = ".session.jsonl."
_TEMP_SUFFIX: Final = ".tmp"
_PUBLISHED_SUFFIX: Final = ".fragment"


def _recovery_directory(session_fd: int) -> int:
    """``recovery/`` inside the session directory, created if missing (and the session
    directory fsynced), opened without following a link: a symlink or a non-directory there
    is refused (APP-25), so nothing is ever written outside the session directory."""
    _fsutil.make_directory_at(RECOVERY_DIR, session_fd)
    # Even when it existed: an attempt killed between its mkdir and this fsync left the new
    # entry not yet durable (RCV-18).
    _fsutil.fsync_directory(session_fd)
    try:
        return _fsutil.open_directory_at(RECOVERY_DIR, session_fd)
    except _fsutil.NotRegularFile:
        raise _refused("recovery/ is a symbolic link or not a directory") from None


def _holds(directory_fd: int, name: str, fragment: bytes) -> bool:
    """Whether ``name`` is a regular file (checked with fstat, opened without following a link
    and without blocking) holding exactly ``fragment``; anything else is not ours."""
    try:
        fd = _fsutil.open_regular(name, dir_fd=directory_fd)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_size != len(fragment):
            return False
        return os.pread(fd, len(fragment) + 1, 0) == fragment
    except OSError:
        return False
    finally:
        os.close(fd)


def _finish_earlier_attempts(directory_fd: int, stem: str, fragment: bytes) -> str | None:
    """RCV-18: under the lock no other recovery runs, so a temporary file in ``recovery/`` is
    the leftover of an interrupted attempt: remove it. Return the name of a copy of this very
    fragment that an interrupted attempt already published (it is reused: preserved once)."""
    found: str | None = None
    for name in sorted(os.listdir(directory_fd)):
        if name.startswith(_TEMP_PREFIX) and name.endswith(_TEMP_SUFFIX):
            _fsutil.unlink_quietly(name, dir_fd=directory_fd)
        elif (
            found is None
            and name.startswith(stem + ".")
            and name.endswith(_PUBLISHED_SUFFIX)
            and _holds(directory_fd, name, fragment)
        ):
            found = name
    return found


def _preserve(session_fd: int, name: str, fragment: bytes) -> str:
    """RCV-6, RCV-18, RCV-19: a durable copy of the fragment under ``recovery/``; returns its
    path relative to the session directory.

    The bytes go to a new temporary file (exclusive creation, random name), are fsynced, and
    the file is published by ``link`` under a random final name (never replacing anything),
    then the temporary name is removed and ``recovery/`` fsynced. Killed at any step, the next
    run removes the temporary file, or finds the published copy and reuses it.
    """
    folder, _, planned = name.rpartition("/")
    stem = planned.removesuffix(_PUBLISHED_SUFFIX)
    directory_fd = _recovery_directory(session_fd)
    try:
        published = _finish_earlier_attempts(directory_fd, stem, fragment)
        if published is None:
            token = secrets.token_hex(8)
            temp = f"{_TEMP_PREFIX}{token}{_TEMP_SUFFIX}"
            published = f"{stem}.{token}{_PUBLISHED_SUFFIX}"
            _fsutil.write_new_file(temp, fragment, dir_fd=directory_fd)
            _fsutil.link_new(temp, published, dir_fd=directory_fd)
            _fsutil.unlink_quietly(temp, dir_fd=directory_fd)
        _fsutil.fsync_directory(directory_fd)  # also when reused: its attempt may have died first
    finally:
        os.close(directory_fd)
    return f"{folder}/{published}"


def _execute(session_fd: int, file: Path, plan: RecoveryPlan) -> RecoveryResult:
    if plan.action == "refused":
        return RecoveryResult(error=plan.error)
    if plan.action == "none":
        return RecoveryResult("none")
    preserved: str | None = None
    if plan.fragment is not None and plan.preserve_as is not None:
        preserved = _preserve(session_fd, plan.preserve_as, plan.fragment)  # RCV-6 first
    if plan.action == "removed":
        os.unlink(file.name, dir_fd=session_fd)
        _fsutil.fsync_directory(session_fd)
        return RecoveryResult("removed", preserved)
    fd = _fsutil.open_append(file)
    try:
        if plan.action == "newline-added":
            _fsutil.append_all(fd, b"\n")
            return RecoveryResult("newline-added")
        assert preserved is not None and plan.truncate_to is not None
        # RCV-7: cut exactly after the last LF, durable before success is reported.
        # DUR-4: the fragment and its names were synced above; only now the cut (RCV-6).
        _fsutil.truncate_durably(fd, plan.truncate_to)
        return RecoveryResult("truncated", preserved)
    finally:
        os.close(fd)


class _CompleteTail(Exception):
    """The last line is one complete JSON value: judging it needs the whole session."""


def _refuse_complete(value: dict[str, Any], line: int) -> list[Diagnostic]:
    raise _CompleteTail


def _count_lines_before(fd: int, offset: int) -> int:
    """1 + the number of LFs before ``offset``: the line number of the tail, for a refusal.

    A byte count at memory speed, no parsing: it does not make recovery validate the file.
    """
    lines = 1
    position = 0
    while position < offset:
        chunk = os.pread(fd, min(_COUNT_CHUNK, offset - position), position)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        position += len(chunk)
    return lines


_COUNT_CHUNK: Final = 1 << 22
_BLANK_BYTES: Final = b" \t\r\n"


def _only_blank_before(fd: int, offset: int) -> bool:
    """Whether the bytes before ``offset`` are blank lines only (REC-15): no record starts there.
    Stops at the first other byte, so a normal session costs one small read."""
    position = 0
    while position < offset:
        chunk = os.pread(fd, min(_BACK_CHUNK, offset - position), position)
        if not chunk:
            break
        if chunk.strip(_BLANK_BYTES):
            return False
        position += len(chunk)
    return True


def _inspect(file: Path, fd: int, size: int, engine: Engine) -> TailInfo:
    """What recovery must know, reading as little as the decision needs (RCV-15).

    A tail that is incomplete, definitely broken or over the limits is judged from its own
    bytes: the cost is proportional to the tail. Only a file that ends with LF (nothing to
    repair, so: is it valid?) and a tail that is complete JSON (a record needs the graph of the
    committed lines) are validated whole, and then interior faults win.
    """
    ends_with_lf = size > 0 and os.pread(fd, 1, size - 1) == b"\n"
    if ends_with_lf or size == 0:
        if _only_blank_before(fd, size):  # RCV-16: zero bytes or blank lines only
            return TailInfo(size, None, 0, 1, os.pread(fd, size, 0), None, no_record=True)
    else:
        offset, fragment = _read_tail(fd, size)
        if fragment is None:
            line = _count_lines_before(fd, size)  # no LF in the last MiB: every LF is before it
            return TailInfo(size, None, offset, line, b"", FragmentVerdict.LIMIT)
        try:
            verdict = classify_fragment(fragment, line=1, check_record=_refuse_complete)
        except _CompleteTail:
            pass  # judged below, against the whole session
        else:
            # The line only appears in a refusal; a truncation needs none.
            line = 1 if offset == 0 else (
                0 if verdict is FragmentVerdict.INCOMPLETE else _count_lines_before(fd, offset)
            )
            if verdict is FragmentVerdict.INCOMPLETE and _only_blank_before(fd, offset):
                # RCV-16: a torn first record (after blank lines at most): nothing committed.
                whole = os.pread(fd, size, 0)
                return TailInfo(size, None, 0, line, whole, verdict, no_record=True)
            return TailInfo(size, None, offset, line, fragment, verdict)
    return _tail_info(open_session(file, engine=engine).index, fd, size, engine)


def recover(
    path: str | os.PathLike[str], *, timeout: float | None = None,
    engine: Engine = READABLE_ENGINE,
) -> RecoveryResult:
    """Explicitly repair an unterminated last line of the session at ``path`` (RCV-1..RCV-15).

    Raises UsageError(PATH_NOT_FOUND) without a session and ContractError(LOCK_UNAVAILABLE)
    when the lock cannot be had.
    """
    try:
        with locked_session_file(path, timeout=timeout) as file:
            return _recover_locked(file, engine)
    except OtherVersion as refused:  # RCV-17: refused before the lock, so nothing is created
        return RecoveryResult(error=refused.diagnostics[0])


def _recover_locked(file: Path, engine: Engine) -> RecoveryResult:
    """Recovery under both mutation locks: judge the tail on what the file holds now."""
    fd = _open_session_file(file)
    try:
        size = os.fstat(fd).st_size
        plan = plan_recovery(_inspect(file, fd, size, engine))
    finally:
        os.close(fd)
    try:
        session_fd = _fsutil.open_directory(file.parent)
    except OSError:
        raise UsageError(
            Code.PATH_NOT_FOUND, "the session directory cannot be opened") from None
    try:
        return _execute(session_fd, file, plan)
    except OSError:
        return RecoveryResult(error=_io_failed())
    finally:
        os.close(session_fd)


def _open_session_file(file: Path) -> int:
    """The session file, read-only: a regular file, never a link (APP-25), or PATH_NOT_FOUND
    when it cannot be read (no permission, gone), as for every other operation."""
    try:
        return _fsutil.open_regular(file)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be opened") from None
