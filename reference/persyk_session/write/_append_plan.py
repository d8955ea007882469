"""The append planner (docs/spec.md, section APP): a batch and the committed session in, the
bytes to write and what they acknowledge out. No I/O.

Records arrive as :class:`BatchItem` values: prepared from JSON values (the protocol's
``records``) or from raw JSONL (``recordsFile``, stdin), each with the bytes a writer emits
(REC-22) and the value a reader will see. :func:`plan_append` checks them in batch order
against the index builder of the committed session, and a loader for committed bodies (the
identical-retry check reads one record by its indexed position, so its cost does not grow with
the session). ``_append`` runs it under the session lock and writes what it planned.

Prefix commit (APP-14): the first refused record stops the batch, and the records before it
are planned and acknowledged. The engine passed in (``read/_engine``) encodes and parses; its
batch lane may spare the careful path for records it proves, with the same plan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from .._errors import Code, ContractError, Diagnostic, UsageError
from .._lines import split_lines
from ..read._context import LeafSelector
from ..read._engine import READABLE_ENGINE, BatchLane, Engine
from ..read._entries import EntryMeta
from ..read._index import IndexBuilder

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_BATCH_RECORDS",
    "AppendPlan",
    "AppendResult",
    "BatchItem",
    "items_from_jsonl",
    "items_from_jsonl_stream",
    "items_from_objects",
    "json_equal",
    "plan_append",
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


def _item_from_object(obj: Any, engine: Engine) -> BatchItem:
    # APP-15, BLK-11: the record is written as given: its parentId and every block, unknown
    # ones included, reach the file unchanged (only the spelling is canonical, REC-22).
    proven = engine.batch.prepare(obj)  # the same item, when the engine can prove it
    if proven is not None:
        return BatchItem(proven[1], proven[0], len(proven[0]))
    try:
        data = engine.encode_record(obj)
    except ContractError as error:
        return BatchItem(None, b"", _encoded_size(obj, engine), error.diagnostics[0])
    except UsageError:
        return BatchItem(None, b"", 0, _not_json())
    # Parse our own bytes back: the value compared and indexed is the one a reader will see.
    return BatchItem(engine.parse_record(data[:-1], line=1), data, len(data))


def _encoded_size(obj: Any, engine: Engine) -> int:
    try:
        return len(engine.dumps_json(obj)) + 1
    except (TypeError, ValueError):
        return 0


def _not_json() -> Diagnostic:
    return Diagnostic(Code.RECORD_NOT_OBJECT, detail="the record has no JSON object form")


def items_from_objects(
    records: Sequence[Any], *, engine: Engine = READABLE_ENGINE
) -> list[BatchItem]:
    """Prepare records given as JSON values (the protocol's ``records`` argument)."""
    return [_item_from_object(obj, engine) for obj in records]


def items_from_jsonl(data: bytes, *, engine: Engine = READABLE_ENGINE) -> list[BatchItem]:
    """Prepare records given as raw JSONL bytes (``recordsFile``): each line is parsed strictly,
    so byte-level faults surface with the read-phase code of the line (APP-9)."""
    items: list[BatchItem] = []
    for raw in split_lines(data):
        if not raw.terminated:
            fault = Diagnostic(Code.RECORD_UNTERMINATED, detail="the last record has no LF")
            items.append(BatchItem(None, b"", len(raw.data) + 1, fault))
            continue
        try:
            value = engine.parse_record(raw.data, line=1)
        except ContractError as error:
            items.append(BatchItem(None, b"", len(raw.data) + 1, error.diagnostics[0]))
            continue
        items.append(_item_from_object(value, engine))
    return items


def items_from_jsonl_stream(
    read: Callable[[int], bytes], *, engine: Engine = READABLE_ENGINE
) -> list[BatchItem]:
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
    return items_from_jsonl(b"".join(parts), engine=engine)


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
    load_committed_bytes: Callable[[EntryMeta], bytes] | None = None,
    engine: Engine = READABLE_ENGINE,
) -> AppendPlan:
    """Decide what a batch writes, in batch order, against the committed session in ``builder``.

    ``end_offset`` is the committed file size and ``next_line`` the line the first new record
    would occupy. ``load_committed_bytes``, when given, reads a committed record's bytes: a
    retry whose bytes are the committed ones is identical without parsing or comparing values
    (APP-12; other bytes are still compared as values, APP-13). ``builder`` is advanced with
    each accepted record (so later records of the batch may reference earlier ones) and then
    describes the file as it will be once ``plan.data`` is written: the caller keeps it only if
    that write is fsynced.
    """
    refusal = _refuse_whole_batch(items, leaf, next_line)
    if refusal is not None:
        return AppendPlan(b"", (), (), error=refusal)
    batch = _Batch(builder, load_committed, load_committed_bytes, engine.batch, line=next_line,
                   offset=end_offset)
    for item, proven in zip(items, _proofs(builder, items, engine.batch), strict=True):
        if not batch.take(item, proven=proven):
            break
    if batch.error is not None:
        new_leaf = None
    elif items:
        new_leaf = batch.last_id
    elif leaf.kind == "id":
        new_leaf = leaf.id
    else:
        new_leaf = None if leaf.kind == "null" else builder.last_entry_id
    return AppendPlan(
        data=b"".join(batch.parts),
        committed=tuple(batch.committed),
        already_present=tuple(batch.present),
        present_in_batch=tuple(batch.present_in_batch),
        leaf=new_leaf,
        error=batch.error,
    )


def _proofs(builder: IndexBuilder, items: Sequence[BatchItem], lane: BatchLane) -> list[bool]:
    """Which records the engine's batch lane proves need no read-phase rule but ID-3 and TREE-1
    (asked once per batch). A record whose id is committed is a retry (APP-12, APP-13): it is
    compared, never checked, so it is no candidate."""
    return lane.prove([
        (item.data, item.value)
        if item.fault is None and item.value is not None and not _committed_id(builder, item.value)
        else None
        for item in items
    ])


def _committed_id(builder: IndexBuilder, value: dict[str, Any]) -> bool:
    entry_id = value.get("id")
    return isinstance(entry_id, str) and entry_id in builder


def _refuse_whole_batch(
    items: Sequence[BatchItem], leaf: LeafSelector, next_line: int
) -> Diagnostic | None:
    """The faults that refuse a batch before any of its records is looked at."""
    # APP-8: too many records, or too many bytes.
    if len(items) > MAX_BATCH_RECORDS:
        return _refuse(Code.APPEND_BATCH_TOO_LARGE, None, "the batch has more than 256 records")
    if sum(item.size for item in items) > MAX_BATCH_BYTES:
        return _refuse(Code.APPEND_BATCH_TOO_LARGE, None, "the batch is larger than 4 MiB")
    # APP-16: a continuation proves where it stands; nothing is written if it stands elsewhere.
    first = items[0].value if items else None
    if leaf.kind == "default" or first is None or "parentId" not in first:
        return None
    parent = first["parentId"]
    continues_null = parent is None and leaf.kind == "null"
    continues_leaf = leaf.kind == "id" and isinstance(parent, str) and parent == leaf.id
    if continues_null or continues_leaf:
        return None
    return _refuse(
        Code.APPEND_LEAF_MISMATCH, next_line,
        "the first record's parent is not the continuation leaf", "/parentId")


class _Batch:
    """The records of one batch taken so far, and where the next one would go."""

    def __init__(
        self,
        builder: IndexBuilder,
        load_committed: Callable[[EntryMeta], dict[str, Any]],
        load_committed_bytes: Callable[[EntryMeta], bytes] | None,
        lane: BatchLane,
        *,
        line: int,
        offset: int,
    ) -> None:
        self.builder = builder
        self.lane = lane
        self.load_committed = load_committed
        self.load_committed_bytes = load_committed_bytes
        self.line = line
        self.offset = offset
        self.parts: list[bytes] = []
        self.committed: list[str] = []
        self.present: list[str] = []
        self.present_in_batch: list[str] = []
        self.in_batch: dict[str, dict[str, Any]] = {}
        self.last_id: str | None = None
        self.error: Diagnostic | None = None

    def take(self, item: BatchItem, *, proven: bool = False) -> bool:
        """Plan one record; False (with ``error`` set) when it stops the batch (APP-14).
        ``proven``: the batch lane proved the record (:func:`_proofs`)."""
        if item.fault is not None or item.value is None:
            self.error = replace(item.fault or _not_json(), line=self.line)  # APP-9
            return False
        value = item.value
        entry_id = value.get("id")
        if isinstance(entry_id, str) and entry_id in self.builder:
            return self.take_retry(entry_id, value, item.data)
        length = len(item.data) - 1
        if not (proven and self.lane.commit_proven(
                self.builder, value, line=self.line, offset=self.offset, length=length)):
            # APP-9: every read-phase rule, as if the record were the next line.
            found = self.builder.check_entry(value, line=self.line)
            if found:
                self.error = found[0]
                return False
            self.builder.commit_checked(value, line=self.line, offset=self.offset, length=length)
        assert isinstance(entry_id, str)  # the schema guarantees an Id
        self.in_batch[entry_id] = value
        self.parts.append(item.data)
        self.committed.append(entry_id)
        self.last_id = entry_id
        self.line += 1
        self.offset += len(item.data)
        return True

    def take_retry(self, entry_id: str, value: dict[str, Any], data: bytes) -> bool:
        """A record whose id is committed, or earlier in this batch."""
        earlier = self.in_batch.get(entry_id)
        if earlier is not None:
            identical = json_equal(earlier, value)
        else:
            meta = self.builder.get(entry_id)
            assert meta is not None
            identical = self.same_bytes_committed(meta, data) or json_equal(
                self.load_committed(meta), value)
        if not identical:
            # APP-13: the same id with other content is never written.
            self.error = _refuse(
                Code.APPEND_ID_CONFLICT, self.line,
                "an entry with this id and different content exists", "/id")
            return False
        # APP-12: an identical retry is acknowledged without writing; APP-22: so a retried
        # batch reports its committed prefix here and commits the rest.
        self.present.append(entry_id)
        if earlier is not None:
            self.present_in_batch.append(entry_id)
        self.last_id = entry_id
        return True

    def same_bytes_committed(self, meta: EntryMeta, data: bytes) -> bool:
        """APP-12 by bytes: the committed record is these very bytes (LF aside), so its value
        is this record's value (one parse of the same bytes). A difference proves nothing
        (member order, number spelling): then the values are compared."""
        if self.load_committed_bytes is None or meta.length != len(data) - 1:
            return False
        return self.load_committed_bytes(meta) == data[:-1]
