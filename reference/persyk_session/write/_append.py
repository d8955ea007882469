"""Creating sessions and appending records: the I/O edge (docs/spec.md, section APP).

The decision of what a batch writes is ``_append_plan.plan_append`` (pure). This edge
(:func:`append_records`, :func:`remove_entry`, :func:`create_session`) takes the lock, brings the
session's live state up to date (``read/_live``: in a long-lived process only bytes appended by
other writers are validated again, APP-7), runs the planner on that state's builder and writes
the planned bytes with one ``O_APPEND`` write and an fsync before acknowledging anything. The
engine passed in (``read/_engine``) reads, checks and encodes; the outcome is the same whichever.

Prefix commit (APP-14): records are checked in batch order; the first refused record stops the
batch, and the records before it are written and acknowledged. A write or fsync failure
acknowledges nothing of that write and truncates the file back to its size before the append
(APP-19, APP-20), so the file holds exactly the records acknowledged so far.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import _fsutil
from .._errors import Code, ContractError, Diagnostic, UsageError
from ..read._context import LeafSelector
from ..read._engine import READABLE_ENGINE, Engine
from ..read._index import IndexBuilder
from ..read._live import LiveFile, LiveSession, open_live
from ..read._store import SESSION_FILE
from ._append_plan import (
    MAX_BATCH_BYTES,
    MAX_BATCH_RECORDS,
    AppendPlan,
    AppendResult,
    BatchItem,
    items_from_jsonl,
    items_from_jsonl_stream,
    items_from_objects,
    json_equal,
    plan_append,
)
from ._prologue import locked_session_file

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_BATCH_RECORDS",
    "AppendPlan",
    "AppendResult",
    "BatchItem",
    "append_built",
    "append_records",
    "create_session",
    "items_from_jsonl",
    "items_from_jsonl_stream",
    "items_from_objects",
    "json_equal",
    "plan_append",
    "read_records_file",
    "remove_entry",
]

# --- batches from files ----------------------------------------------------------------------


def read_records_file(
    name: str | os.PathLike[str], *, engine: Engine = READABLE_ENGINE
) -> list[BatchItem]:
    """Prepare the raw JSONL batch in the file ``name`` (bounded: :func:`items_from_jsonl_stream`).

    A file that cannot be opened or read (absent, a directory, no permission), and anything but
    a regular file (a FIFO, whose open would wait for a writer for ever; a device such as
    ``/dev/zero``; a ``/proc`` file that fails or blocks on read), is the caller's fault,
    UsageError(PATH_NOT_FOUND): exit status 2, like every path that names nothing usable. The
    type is checked on a descriptor opened without blocking, before a byte is read; a stream
    is given as ``-`` (standard input) instead.
    """
    try:
        fd = _fsutil.open_regular(name, follow=True)
        with os.fdopen(fd, "rb") as stream:  # non-blocking: /proc/kmsg fails, never waits
            return items_from_jsonl_stream(_read_or_fail(stream.read), engine=engine)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the records file cannot be read") from None


def _read_or_fail(read: Callable[[int], bytes | None]) -> Callable[[int], bytes]:
    """A reader that treats "no data yet" (None, from a non-blocking descriptor) as an error:
    a regular file never has it, a file that pretends to be one may."""

    def checked(size: int) -> bytes:
        data = read(size)
        if data is None:
            raise BlockingIOError("the file would block")
        return data

    return checked


# --- the I/O shell -----------------------------------------------------------------------------


def _blocked(line: int) -> AppendResult:
    # APP-7: a session breaking any read-phase MUST is never mutated.
    return AppendResult(error=Diagnostic(
        Code.SESSION_BLOCKED, line=line,
        detail="the committed session is invalid; nothing was written"))


def _io_failed() -> Diagnostic:
    return Diagnostic(Code.IO_FAILED, detail="writing or syncing the session file failed")


def _write_plan(live: LiveFile, state: LiveSession, plan: AppendPlan) -> AppendResult:
    """Append ``plan.data`` and fsync; acknowledge only after the fsync (APP-11). Until the
    fsync a power cut may keep any prefix of the bytes, torn (DUR-2): the records' LFs let
    recovery cut back to whole records, so no state is locked out or invents a record (DUR-6).

    The live state (whose builder the planner advanced) is kept for the next mutation only
    when the file holds exactly what it describes: after a successful fsync, or when nothing
    was to be written. After a failure it is dropped with the rest of this attempt.
    """
    if not plan.data:
        live.keep(state)
        return plan.result()
    try:
        _fsutil.append_all(live.fd, plan.data)
    except OSError:
        _roll_back(live.fd, state.size)
        # APP-19: nothing of this write is acknowledged; identical retries of records already
        # in the file before this append stay acknowledged.
        in_batch = set(plan.present_in_batch)
        before = tuple(i for i in plan.already_present if i not in in_batch)
        return AppendResult(already_present=before, error=_io_failed())
    live.after_write(state, plan.data)
    return plan.result()


def _roll_back(fd: int, size: int) -> None:
    # APP-20: still under the lock, cut our own partial write back to the acknowledged prefix.
    # If this fails too, the tail stays unterminated or invalid: later appends are SESSION_BLOCKED.
    with contextlib.suppress(OSError):
        _fsutil.truncate_durably(fd, size)


def _mutate(
    path: str | os.PathLike[str],
    timeout: float | None,
    body: Callable[[LiveFile, LiveSession], AppendResult],
    engine: Engine,
) -> AppendResult:
    """Every append's prologue: both mutation locks (``_prologue``), then the live state brought
    up to date and revalidated; a session breaking a read-phase MUST is never mutated (APP-7)."""
    with locked_session_file(path, timeout=timeout) as file, open_live(file, engine) as live:
        if live.state is None:
            return _blocked(live.fault_line)
        return body(live, live.state)


def _append_locked(
    live: LiveFile, state: LiveSession, items: Sequence[BatchItem], leaf: LeafSelector,
    engine: Engine,
) -> AppendResult:
    plan = plan_append(
        state.builder,  # handed over, not copied: the live state is this mutation's alone
        items,
        leaf=leaf,
        end_offset=state.size,
        next_line=state.next_line,
        load_committed=live.load,
        load_committed_bytes=live.load_bytes,
        engine=engine,
    )
    return _write_plan(live, state, plan)


def append_records(
    path: str | os.PathLike[str],
    items: Sequence[BatchItem],
    *,
    leaf: LeafSelector | None = None,
    timeout: float | None = None,
    engine: Engine = READABLE_ENGINE,
) -> AppendResult:
    """Append a prepared batch (see :func:`items_from_objects`) under the session lock.

    ``leaf`` is the caller's continuation (APP-16); None or the default selector takes parents
    as supplied. Raises UsageError(PATH_NOT_FOUND) when there is no session (APP-21) and
    ContractError(LOCK_UNAVAILABLE) when the lock cannot be had.
    """
    selector = leaf or LeafSelector.default()
    return _mutate(path, timeout,
                   lambda live, state: _append_locked(live, state, items, selector, engine),
                   engine)


def remove_entry(
    path: str | os.PathLike[str],
    target_id: str,
    *,
    id: str | None = None,
    timestamp: str | None = None,
    leaf: LeafSelector,
    timeout: float | None = None,
    engine: Engine = READABLE_ENGINE,
) -> AppendResult:
    """Append a ``message.removed`` of ``target_id`` whose parent is the caller's leaf (APP-18).

    The leaf must be explicit (an id or null): the default leaf would put the removal on
    whatever branch another writer appended last, a silent rebase (APP-18, rev. 2), so it is a
    UsageError. The leaf is resolved under the lock; a retry with the same ``id`` and leaf
    finds the committed removal already present (APP-12).
    """
    if leaf.kind == "default":
        raise UsageError(Code.USAGE, "remove needs an explicit leaf (an entry id, or null)")
    selector = leaf
    entry_id = id or str(uuid.uuid4())  # ID-5: 122 random bits

    def remove_locked(live: LiveFile, state: LiveSession) -> AppendResult:
        builder = state.builder
        if selector.kind == "id" and selector.id not in builder:
            live.keep(state)
            return AppendResult(error=Diagnostic(
                Code.LEAF_NOT_FOUND, detail="the selected leaf is not an entry"))
        parent = selector.id if selector.kind == "id" else None
        record = {
            "type": "message.removed",
            "id": entry_id,
            "parentId": parent,
            "timestamp": timestamp or now_timestamp(),
            "targetId": target_id,
        }
        return _append_locked(live, state, items_from_objects([record], engine=engine),
                              LeafSelector.default(), engine)

    return _mutate(path, timeout, remove_locked, engine)


def append_built(
    path: str | os.PathLike[str],
    build: Callable[[IndexBuilder], Sequence[dict[str, Any]]],
    *,
    timeout: float | None = None,
    engine: Engine = READABLE_ENGINE,
) -> AppendResult:
    """Append the records ``build`` makes from the committed, validated state, under both
    mutation locks (APP-5, APP-26, as every append): for writers whose record depends on that
    state (the default leaf as parent, whether a recording already ended: CAP-22, CAP-26).
    ``build`` may raise ContractError; it returns no record when there is nothing to append."""

    def append_locked(live: LiveFile, state: LiveSession) -> AppendResult:
        records = build(state.builder)
        return _append_locked(live, state, items_from_objects(records, engine=engine),
                              LeafSelector.default(), engine)

    return _mutate(path, timeout, append_locked, engine)


# --- create ------------------------------------------------------------------------------------


def now_timestamp() -> str:
    """The current time as an envelope Timestamp with milliseconds and ``Z`` (ENV-4)."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _make_directories(directory: Path) -> list[Path]:
    """Create ``directory`` and missing parents; return the created ones, outermost first."""
    missing: list[Path] = []
    probe = directory
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    return [path for path in reversed(missing) if _fsutil.make_directory(path)]


def create_session(
    directory: str | os.PathLike[str],
    *,
    id: str | None = None,
    timestamp: str | None = None,
    engine: Engine = READABLE_ENGINE,
) -> dict[str, Any]:
    """Create a session with exclusive creation and return its header (APP-2, APP-3, APP-4).

    The header is written to a temporary file in the same directory, fsynced, and published
    with ``os.link`` (EEXIST means a session exists: ``SESSION_EXISTS``, nothing changes); the
    directory, and the parent of each directory created here, are fsynced before returning.
    """
    header = {
        "type": "session",
        "version": 1,
        "id": id if id is not None else str(uuid.uuid4()),  # ID-5: 122 random bits
        "timestamp": timestamp if timestamp is not None else now_timestamp(),
    }
    problems = engine.schema.validate_header(header)
    if problems:
        # APP-23: a given id or timestamp that breaks HDR-5/HDR-6.
        raise ContractError([replace(problems[0], line=1)])
    data = engine.encode_record(header)
    target_dir = Path(directory)
    if target_dir.name == SESSION_FILE:
        target_dir = target_dir.parent
    final = target_dir / SESSION_FILE
    if final.exists():
        raise _exists()
    try:
        _publish(target_dir, final, data)
    except OSError:
        raise ContractError([_io_failed()]) from None
    return header


def _publish(target_dir: Path, final: Path, data: bytes) -> None:
    created = _make_directories(target_dir)
    try:
        _publish_in(target_dir, final, data)
    except BaseException:
        # APP-27: a create that fails leaves no directory it made (innermost first; rmdir
        # removes only empty ones, so nothing that another writer put there is lost).
        for path in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise
    for path in reversed(created):
        _fsutil.fsync_directory(path.parent)


def _publish_in(target_dir: Path, final: Path, data: bytes) -> None:
    temp = target_dir / f".{SESSION_FILE}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
    try:
        _fsutil.write_new_file(temp, data)
        try:
            _fsutil.link_new(temp, final)  # never replaces: EEXIST if a session appeared
        except FileExistsError:
            raise _exists() from None
    finally:
        _fsutil.unlink_quietly(temp)
    _fsutil.fsync_directory(target_dir)


def _exists() -> ContractError:
    return ContractError([Diagnostic(Code.SESSION_EXISTS, detail="a session file already exists")])
