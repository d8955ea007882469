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
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from . import _fsutil
from ._errors import Code, ContractError, Diagnostic
from ._lock import session_lock
from ._records import MAX_RECORD_BYTES
from ._recovery_plan import (
    FragmentVerdict,
    RecoveryPlan,
    TailInfo,
    classify_fragment,
    plan_recovery,
)
from ._session import IndexBuilder, SessionIndex
from ._store import open_session, resolve_session_file_for_mutation
from ._versions import refuse_other_version

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


def _tail_info(index: SessionIndex, fd: int, size: int) -> TailInfo:
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
    builder = IndexBuilder.from_index(index)

    def check_record(value: dict[str, Any], line: int) -> list[Diagnostic]:
        if tail_line == 1:
            return IndexBuilder().add_header(value, line=line)
        return builder.check_entry(value, line=line)

    verdict = classify_fragment(fragment, line=tail_line, check_record=check_record)
    return TailInfo(size, None, offset, tail_line, fragment, verdict)


def _io_failed() -> Diagnostic:
    return Diagnostic(Code.IO_FAILED, detail="writing or syncing during recovery failed")


def _preserve(directory: Path, name: str, fragment: bytes) -> None:
    """RCV-6: an exclusive, fsynced copy of the fragment, its directory entry fsynced too."""
    target = directory / name
    folder = target.parent
    if not folder.is_dir():
        _fsutil.make_directory(folder)
        _fsutil.fsync_directory(directory)
    try:
        _fsutil.write_new_file(target, fragment)
    except FileExistsError:
        # A rerun after a crash between preserving and truncating: keep the first copy, but
        # only if it really holds these bytes.
        if target.read_bytes() != fragment:
            raise OSError("a different file has the fragment's name") from None
    _fsutil.fsync_directory(folder)


def _execute(file: Path, plan: RecoveryPlan) -> RecoveryResult:
    if plan.action == "refused":
        return RecoveryResult(error=plan.error)
    if plan.action == "none":
        return RecoveryResult("none")
    if plan.action == "removed":
        if plan.fragment is not None and plan.preserve_as is not None:
            _preserve(file.parent, plan.preserve_as, plan.fragment)  # RCV-6 before any change
        os.unlink(file)
        _fsutil.fsync_directory(file.parent)
        return RecoveryResult("removed", plan.preserve_as)
    fd = _fsutil.open_append(file)
    try:
        if plan.action == "newline-added":
            _fsutil.append_all(fd, b"\n")
            return RecoveryResult("newline-added")
        assert plan.preserve_as is not None and plan.fragment is not None
        assert plan.truncate_to is not None
        _preserve(file.parent, plan.preserve_as, plan.fragment)
        # RCV-7: cut exactly after the last LF, durable before success is reported.
        _fsutil.truncate_durably(fd, plan.truncate_to)
        return RecoveryResult("truncated", plan.preserve_as)
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


def _inspect(file: Path, fd: int, size: int) -> TailInfo:
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
    return _tail_info(open_session(file).index, fd, size)


def recover(path: str | os.PathLike[str], *, timeout: float | None = None) -> RecoveryResult:
    """Explicitly repair an unterminated last line of the session at ``path`` (RCV-1..RCV-15).

    Raises UsageError(PATH_NOT_FOUND) without a session and ContractError(LOCK_UNAVAILABLE)
    when the lock cannot be had.
    """
    file = resolve_session_file_for_mutation(path)
    try:
        refuse_other_version(file)  # RCV-17: before the lock, so nothing is created
    except ContractError as refused:
        return RecoveryResult(error=refused.diagnostics[0])
    with session_lock(file.parent, timeout=timeout):
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            size = os.fstat(fd).st_size
            plan = plan_recovery(_inspect(file, fd, size))
        finally:
            os.close(fd)
        try:
            return _execute(file, plan)
        except OSError:
            return RecoveryResult(error=_io_failed())
