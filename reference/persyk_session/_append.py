"""Creating sessions and appending records (docs/spec.md, section APP).

The decision of what a batch writes is :func:`plan_append`: pure, fed the index builder of the
committed session and a loader for committed bodies (the identical-retry check reads one record
by its indexed position, so its cost does not grow with the session). The I/O shell
(:func:`append_records`, :func:`remove_entry`, :func:`create_session`) takes the lock, brings the
session's live state up to date (``_live``: in a long-lived process only bytes appended by other
writers are validated again, APP-7), runs the planner on that state's builder and writes the
planned bytes with one ``O_APPEND`` write and an fsync before acknowledging anything.

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
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson

from . import _fsutil
from ._context import LeafSelector
from ._errors import Code, ContractError, Diagnostic, UsageError
from ._lines import split_lines
from ._live import LiveFile, LiveSession, open_live
from ._lock import session_lock
from ._records import encode_record, parse_record
from ._schema import validate_header
from ._session import EntryMeta, IndexBuilder
from ._store import SESSION_FILE, resolve_session_file_for_mutation
from ._versions import refuse_other_version

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

# APP-8: a batch holds at most 256 records and 4 MiB of records as written, LFs included.
MAX_BATCH_RECORDS: Final = 256
MAX_BATCH_BYTES: Final = 4 * 1024 * 1024


# --- batch items -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One record of a batch, prepared: its value as a reader would see it and the bytes to write.

    ``fault`` is set when the record cannot be a record at all (a parse or encoding fault); its
    ``line`` is filled in by the planner with the line the record would have occupied (APP-9).
    ``size`` is what the record counts against the 4 MiB batch limit.
    """

    value: dict[str, Any] | None
    data: bytes  # encoded record with its LF; empty when ``fault`` is set
    size: int
    fault: Diagnostic | None = None


def _item_from_object(obj: Any) -> BatchItem:
    try:
        data = encode_record(obj)
    except ContractError as error:
        return BatchItem(None, b"", _encoded_size(obj), error.diagnostics[0])
    except UsageError:
        return BatchItem(None, b"", 0, _not_json())
    # Parse our own bytes back: the value compared and indexed is the one a reader will see.
    return BatchItem(parse_record(data[:-1], line=1), data, len(data))


def _encoded_size(obj: Any) -> int:
    try:
        return len(orjson.dumps(obj)) + 1
    except (TypeError, orjson.JSONEncodeError):
        return 0


def _not_json() -> Diagnostic:
    return Diagnostic(Code.RECORD_NOT_OBJECT, detail="the record has no JSON object form")


def items_from_objects(records: Sequence[Any]) -> list[BatchItem]:
    """Prepare records given as JSON values (the protocol's ``records`` argument)."""
    return [_item_from_object(obj) for obj in records]


def items_from_jsonl(data: bytes) -> list[BatchItem]:
    """Prepare records given as raw JSONL bytes (``recordsFile``): each line is parsed strictly,
    so byte-level faults surface with the read-phase code of the line (APP-9)."""
    items: list[BatchItem] = []
    for raw in split_lines(data):
        if not raw.terminated:
            fault = Diagnostic(Code.RECORD_UNTERMINATED, detail="the last record has no LF")
            items.append(BatchItem(None, b"", len(raw.data) + 1, fault))
            continue
        try:
            value = parse_record(raw.data, line=1)
        except ContractError as error:
            items.append(BatchItem(None, b"", len(raw.data) + 1, error.diagnostics[0]))
            continue
        items.append(_item_from_object(value))
    return items


def items_from_jsonl_stream(read: Callable[[int], bytes]) -> list[BatchItem]:
    """Prepare raw JSONL given as a byte stream ``read(n)`` (a file, a pipe, stdin) without
    holding more than the batch limit in memory.

    APP-8 counts raw input by its bytes, so input longer than 4 MiB is over the limit whatever
    it holds: reading stops one byte past the limit, and the batch becomes a single item of that
    size, which the planner refuses whole in its turn (after PATH_NOT_FOUND, the lock and
    SESSION_BLOCKED). A stream without end (``/dev/zero``) is refused the same way.
    """
    parts: list[bytes] = []
    held = 0
    while held <= MAX_BATCH_BYTES and (chunk := read(MAX_BATCH_BYTES + 1 - held)):
        parts.append(chunk)
        held += len(chunk)
    if held > MAX_BATCH_BYTES:
        oversized = Diagnostic(Code.APPEND_BATCH_TOO_LARGE, detail="the batch is larger than 4 MiB")
        return [BatchItem(None, b"", held, oversized)]
    return items_from_jsonl(b"".join(parts))


def read_records_file(name: str | os.PathLike[str]) -> list[BatchItem]:
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
            return items_from_jsonl_stream(_read_or_fail(stream.read))
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


# --- results -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What an append acknowledged. ``leaf`` is set only when the whole batch is in the file
    (APP-17); ``error`` names the record or condition that stopped the batch."""

    committed: tuple[str, ...] = ()
    already_present: tuple[str, ...] = ()
    leaf: str | None = None
    error: Diagnostic | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "committed": list(self.committed),
            "alreadyPresent": list(self.already_present),
        }
        if self.error is not None:
            out["error"] = self.error.to_json()
        else:
            out["leaf"] = self.leaf
        return out


@dataclass(frozen=True, slots=True)
class AppendPlan:
    """The planner's decision: bytes to append and what they acknowledge once fsynced."""

    data: bytes
    committed: tuple[str, ...]
    already_present: tuple[str, ...]
    # Ids reported as present only because an earlier record of this batch carries them.
    present_in_batch: tuple[str, ...] = ()
    leaf: str | None = None
    error: Diagnostic | None = None

    def result(self) -> AppendResult:
        return AppendResult(self.committed, self.already_present, self.leaf, self.error)


# --- the planner (pure) ------------------------------------------------------------------------


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values (APP-12): 1 equals 1.0, but true is not 1 and member order is
    irrelevant. Python's ``==`` alone would take ``True == 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _refuse(code: Code, line: int | None, detail: str, pointer: str | None = None) -> Diagnostic:
    return Diagnostic(code, line=line, pointer=pointer, detail=detail)


def plan_append(
    builder: IndexBuilder,
    items: Sequence[BatchItem],
    *,
    leaf: LeafSelector,
    end_offset: int,
    next_line: int,
    load_committed: Callable[[EntryMeta], dict[str, Any]],
) -> AppendPlan:
    """Decide what a batch writes, in batch order, against the committed session in ``builder``.

    ``end_offset`` is the committed file size and ``next_line`` the line the first new record
    would occupy. ``builder`` is advanced with each accepted record (so later records of the
    batch may reference earlier ones) and then describes the file as it will be once
    ``plan.data`` is written: the caller keeps it only if that write is fsynced.
    """
    # APP-8: refused whole, before anything else is looked at.
    if len(items) > MAX_BATCH_RECORDS:
        return AppendPlan(b"", (), (), error=_refuse(
            Code.APPEND_BATCH_TOO_LARGE, None, "the batch has more than 256 records"))
    if sum(item.size for item in items) > MAX_BATCH_BYTES:
        return AppendPlan(b"", (), (), error=_refuse(
            Code.APPEND_BATCH_TOO_LARGE, None, "the batch is larger than 4 MiB"))

    # APP-16: a continuation proves where it stands; nothing is written if it stands elsewhere.
    if leaf.kind != "default" and items:
        first = items[0].value
        if first is not None and "parentId" in first:
            parent = first["parentId"]
            if not (parent is None and leaf.kind == "null") and not (
                leaf.kind == "id" and isinstance(parent, str) and parent == leaf.id
            ):
                return AppendPlan(b"", (), (), error=_refuse(
                    Code.APPEND_LEAF_MISMATCH, next_line,
                    "the first record's parent is not the continuation leaf", "/parentId"))

    parts: list[bytes] = []
    committed: list[str] = []
    present: list[str] = []
    present_in_batch: list[str] = []
    in_batch: dict[str, dict[str, Any]] = {}
    last_id: str | None = None
    line = next_line
    offset = end_offset
    error: Diagnostic | None = None
    for item in items:
        if item.fault is not None or item.value is None:
            fault = item.fault or _not_json()
            error = replace(fault, line=line)
            break
        value = item.value
        entry_id = value.get("id")
        if isinstance(entry_id, str) and entry_id in builder:
            earlier = in_batch.get(entry_id)
            meta = builder.get(entry_id)
            stored = earlier if earlier is not None else load_committed(meta)  # type: ignore[arg-type]
            if not json_equal(stored, value):
                # APP-13: the same id with other content is never written.
                error = _refuse(Code.APPEND_ID_CONFLICT, line,
                                "an entry with this id and different content exists", "/id")
                break
            # APP-12: an identical retry is acknowledged without writing.
            present.append(entry_id)
            if earlier is not None:
                present_in_batch.append(entry_id)
            last_id = entry_id
            continue
        # APP-9: every read-phase rule, as if the record were the next line.
        found = builder.check_entry(value, line=line)
        if found:
            error = found[0]
            break
        builder.commit_checked(value, line=line, offset=offset, length=len(item.data) - 1)
        assert isinstance(entry_id, str)  # the schema guarantees an Id
        in_batch[entry_id] = value
        parts.append(item.data)
        committed.append(entry_id)
        last_id = entry_id
        line += 1
        offset += len(item.data)

    if error is None:
        if not items:
            new_leaf = leaf.id if leaf.kind == "id" else (
                None if leaf.kind == "null" else builder.last_entry_id)
        else:
            new_leaf = last_id
    else:
        new_leaf = None
    return AppendPlan(
        data=b"".join(parts),
        committed=tuple(committed),
        already_present=tuple(present),
        present_in_batch=tuple(present_in_batch),
        leaf=new_leaf,
        error=error,
    )


# --- the I/O shell -----------------------------------------------------------------------------


def _blocked(line: int) -> AppendResult:
    # APP-7: a session breaking any read-phase MUST is never mutated.
    return AppendResult(error=Diagnostic(
        Code.SESSION_BLOCKED, line=line,
        detail="the committed session is invalid; nothing was written"))


def _io_failed() -> Diagnostic:
    return Diagnostic(Code.IO_FAILED, detail="writing or syncing the session file failed")


def _write_plan(live: LiveFile, state: LiveSession, plan: AppendPlan) -> AppendResult:
    """Append ``plan.data`` and fsync; acknowledge only after the fsync (APP-11).

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


def _append_locked(
    live: LiveFile, state: LiveSession, items: Sequence[BatchItem], leaf: LeafSelector
) -> AppendResult:
    plan = plan_append(
        state.builder,  # handed over, not copied: the live state is this mutation's alone
        items,
        leaf=leaf,
        end_offset=state.size,
        next_line=state.next_line,
        load_committed=live.load,
    )
    return _write_plan(live, state, plan)


def append_records(
    path: str | os.PathLike[str],
    items: Sequence[BatchItem],
    *,
    leaf: LeafSelector | None = None,
    timeout: float | None = None,
) -> AppendResult:
    """Append a prepared batch (see :func:`items_from_objects`) under the session lock.

    ``leaf`` is the caller's continuation (APP-16); None or the default selector takes parents
    as supplied. Raises UsageError(PATH_NOT_FOUND) when there is no session (APP-21) and
    ContractError(LOCK_UNAVAILABLE) when the lock cannot be had.
    """
    file = resolve_session_file_for_mutation(path)
    refuse_other_version(file)  # APP-24: before the lock, so nothing is created
    with session_lock(file.parent, timeout=timeout, file=file), open_live(file) as live:
        if live.state is None:
            return _blocked(live.fault_line)
        return _append_locked(live, live.state, items, leaf or LeafSelector.default())


def remove_entry(
    path: str | os.PathLike[str],
    target_id: str,
    *,
    id: str | None = None,
    timestamp: str | None = None,
    leaf: LeafSelector,
    timeout: float | None = None,
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
    entry_id = id or str(uuid.uuid4())
    file = resolve_session_file_for_mutation(path)
    refuse_other_version(file)  # APP-24: before the lock, so nothing is created
    with session_lock(file.parent, timeout=timeout, file=file), open_live(file) as live:
        state = live.state
        if state is None:
            return _blocked(live.fault_line)
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
        return _append_locked(live, state, items_from_objects([record]), LeafSelector.default())


def append_built(
    path: str | os.PathLike[str],
    build: Callable[[IndexBuilder], Sequence[dict[str, Any]]],
    *,
    timeout: float | None = None,
) -> AppendResult:
    """Append the records ``build`` makes from the committed, validated state, under the
    session lock: for writers whose record depends on that state (the default leaf as parent,
    whether a recording already ended: CAP-22, CAP-26). ``build`` may raise ContractError;
    it returns no record when there is nothing to append."""
    file = resolve_session_file_for_mutation(path)
    refuse_other_version(file)  # APP-24: before the lock, so nothing is created
    with session_lock(file.parent, timeout=timeout), open_live(file) as live:
        state = live.state
        if state is None:
            return _blocked(live.fault_line)
        records = build(state.builder)
        return _append_locked(live, state, items_from_objects(records), LeafSelector.default())


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
) -> dict[str, Any]:
    """Create a session with exclusive creation and return its header (APP-2, APP-3, APP-4).

    The header is written to a temporary file in the same directory, fsynced, and published
    with ``os.link`` (EEXIST means a session exists: ``SESSION_EXISTS``, nothing changes); the
    directory, and the parent of each directory created here, are fsynced before returning.
    """
    header = {
        "type": "session",
        "version": 1,
        "id": id if id is not None else str(uuid.uuid4()),
        "timestamp": timestamp if timestamp is not None else now_timestamp(),
    }
    problems = validate_header(header)
    if problems:
        # APP-23: a given id or timestamp that breaks HDR-5/HDR-6.
        raise ContractError([replace(problems[0], line=1)])
    data = encode_record(header)
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
