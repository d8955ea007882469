"""What the core asks of an implementation of its hot steps, and the readable one it ships.

Rule: the core has no mode. Every step a faster twin may take over -- reading and writing a
record, checking it against the schemas, keeping the entry table, feeding a session's lines to
the index builder, keeping parsed bodies for a projection, preparing a batch for the append
planner, spreading a search over processes -- is declared here as a ``typing.Protocol``, and an
:class:`Engine` bundles one implementation of each. The core takes an engine as a parameter
(``engine: Engine = READABLE_ENGINE``) and never looks at which one it got; it never imports a
faster implementation either. The edge (``operations``, the CLI, the adapter) chooses one from
``PERSYK_SESSION_MODE`` and passes it in; ``persyk_session.fast`` builds ``FAST_ENGINE``.

Every engine gives the same results for the same input: an implementation may decline the
work of a faster lane (a lane that proves nothing commits nothing), never answer differently.
The agreement tests hold the fast engine to :data:`READABLE_ENGINE`.

:data:`READABLE_ENGINE` is built from the readable modules alone: ``_records`` (the strict
grammar), ``_schema`` (python-jsonschema), ``_entries.EntryList`` and ``_feed`` (every line
through ``parse_record`` and the schema); it keeps no body, takes no lane and scans serially.

Extension points: besides these Protocols, a faster :class:`LineFeeder` reads two things of
the core that the readable path only writes, both read-only views:

* ``_index.IndexBuilder.table``, ``.built`` and ``.recordings``: a feeder that proved a line a
  plain message entry, for which only ID-3 and TREE-1 are left, commits it to the table
  itself (``fast/_lanes.add_plain_message``);
* ``search/_judge.TappedBuilder.tap`` and its ``TextTap.screened`` (the latest whole lines the
  byte screen judged, with their bytes): a feeder that commits such lines without handing
  their records to the tap matches them from those bytes (``fast/_tapped_blocks``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from .._errors import Diagnostic
from . import _records, _schema
from ._entries import EntryList, EntryTable
from ._feed import NO_BODIES, feed_lines

if TYPE_CHECKING:
    from ._index import IndexBuilder

__all__ = [
    "READABLE_ENGINE",
    "BatchLane",
    "DumpsJson",
    "EncodeRecord",
    "Engine",
    "KeepBodies",
    "KeptBodies",
    "LineFeeder",
    "LoadsJson",
    "NewEntryTable",
    "ParseRecord",
    "Read",
    "SchemaRules",
    "SearchFanOut",
]

# ``read(n)``: at most n further bytes of a stream, empty at its end.
Read = Callable[[int], bytes]


# --- records and JSON texts (REC) ------------------------------------------------------------


class ParseRecord(Protocol):
    """One record's bytes (no LF) to its object, or ContractError with the REC-19 fault."""

    def __call__(self, data: bytes, *, line: int) -> dict[str, Any]: ...


class EncodeRecord(Protocol):
    """An object to the bytes a writer emits for it, LF included (REC-22)."""

    def __call__(self, obj: dict[str, Any]) -> bytes: ...


class DumpsJson(Protocol):
    """A result's JSON bytes (compact, or indented by two spaces); integers keep their digits."""

    def __call__(self, value: object, *, indent: bool = False, sort_keys: bool = False) -> bytes:
        ...


class LoadsJson(Protocol):
    """A JSON text that is not a record (a protocol message) to its value."""

    def __call__(self, data: bytes) -> Any: ...


# --- schemas (ENV, HDR) and the entry table --------------------------------------------------


class SchemaRules(Protocol):
    """The header and entry checks (ENV-7, ENV-8): the findings, in order, without a line."""

    def validate_header(self, obj: dict[str, Any]) -> list[Diagnostic]: ...

    def validate_entry(self, obj: dict[str, Any]) -> list[Diagnostic]: ...


class NewEntryTable(Protocol):
    """An empty entry table for an index builder."""

    def __call__(self) -> EntryTable: ...


# --- feeding lines to the index builder ------------------------------------------------------


class KeptBodies(Protocol):
    """Parsed bodies a read keeps from its validating pass, by the record's byte offset, for a
    projection that reads them next (CTX-20 validates everything before projecting)."""

    def offer(self, obj: dict[str, Any], offset: int, length: int) -> None:
        """A committed entry's parsed record, to keep or not."""
        ...

    def get(self, offset: int) -> dict[str, Any] | None: ...

    def holding(self) -> AbstractContextManager[None]:
        """The span in which the bodies are held (an implementation may tune the runtime)."""
        ...


class KeepBodies(Protocol):
    """A body store for a read whose caller is about to read entries of ``types``."""

    def __call__(self, types: frozenset[str]) -> KeptBodies: ...


class LineFeeder(Protocol):
    """Feed the lines ``read(n)`` yields to ``builder`` and yield each line's findings (empty
    once committed), as ``_feed.feed_lines`` does: the same findings, the same committed
    entries, whatever the builder (search's hands every record it commits to its text tap,
    ``search/_judge.TappedBuilder``). ``kept`` is offered every committed record."""

    def __call__(
        self, builder: IndexBuilder, read: Read, *, parse: ParseRecord, chunk_size: int,
        first_line: int, start_offset: int, kept: KeptBodies,
    ) -> Iterator[list[Diagnostic]]: ...


# --- appending (APP) -------------------------------------------------------------------------


class BatchLane(Protocol):
    """What the append planner may be spared for records of a batch, with the same outcome."""

    def prepare(self, obj: Any) -> tuple[bytes, dict[str, Any]] | None:
        """The bytes to write for ``obj`` (LF included) and the value a reader will see, when
        proven equal to the careful encode-and-parse-back; None: the planner does that."""
        ...

    def prove(self, records: Sequence[tuple[bytes, dict[str, Any]] | None]) -> list[bool]:
        """For each record (None: not a candidate), whether it is proven a schema-valid entry
        with no read-phase rule left but ID-3 and TREE-1."""
        ...

    def commit_proven(
        self, builder: IndexBuilder, value: dict[str, Any], *, line: int, offset: int,
        length: int,
    ) -> bool:
        """Commit a proven record whose id is new; False (nothing committed) when TREE-1 fails,
        which ``check_entry`` then reports."""
        ...


# --- searching (SRCH) ------------------------------------------------------------------------


class SearchFanOut(Protocol):
    """``work(run)`` over consecutive runs of ``items``, the outcomes yielded in the items'
    order whatever runs where (SRCH-15, SRCH-16); ``sizes`` are the items' byte sizes."""

    def __call__(
        self, work: Callable[[tuple[Any, ...]], list[Any]], items: Sequence[Any],
        sizes: Sequence[int],
    ) -> Iterator[Any]: ...


@dataclass(frozen=True, slots=True)
class Engine:
    """One implementation of every step the core lets a faster twin take over."""

    name: str
    parse_record: ParseRecord
    encode_record: EncodeRecord
    dumps_json: DumpsJson
    loads_json: LoadsJson
    schema: SchemaRules
    new_table: NewEntryTable
    feed_lines: LineFeeder
    keep_bodies: KeepBodies
    batch: BatchLane
    fan_out: SearchFanOut


# --- the readable engine ---------------------------------------------------------------------


def _keep_no_body(types: frozenset[str]) -> KeptBodies:
    # Every body a projection asks for is read again, by position.
    return NO_BODIES


class _CarefulBatch:
    """Nothing is spared: every record is encoded, parsed back and checked (APP-9)."""

    def prepare(self, obj: Any) -> tuple[bytes, dict[str, Any]] | None:
        return None

    def prove(self, records: Sequence[tuple[bytes, dict[str, Any]] | None]) -> list[bool]:
        return [False] * len(records)

    def commit_proven(
        self, builder: IndexBuilder, value: dict[str, Any], *, line: int, offset: int,
        length: int,
    ) -> bool:
        return False


def _serial_scan(
    work: Callable[[tuple[Any, ...]], list[Any]], items: Sequence[Any], sizes: Sequence[int]
) -> Iterator[Any]:
    # One session at a time in this process: the plain reference of what search does.
    for item in items:
        yield from work((item,))


READABLE_ENGINE: Final = Engine(
    name="readable",
    parse_record=_records.parse_record,
    encode_record=_records.encode_record,
    dumps_json=_records.dumps_json,
    loads_json=_records.loads_json,
    schema=_schema,
    new_table=EntryList,
    feed_lines=feed_lines,
    keep_bodies=_keep_no_body,
    batch=_CarefulBatch(),
    fan_out=_serial_scan,
)
