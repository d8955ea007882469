"""The fast engine: the same results as the readable core, through faster twins of its hot steps.

Each module here implements one Protocol of ``read/_engine.py``, and :data:`FAST_ENGINE` bundles
them; the core never imports this package (tests/reference/core/test_core_purity.py), the edge
(``operations``) passes the engine in. Read them beside their readable twins:

* ``_records_fast`` (orjson with equivalence proofs) beside ``read/_records``; ``_json_fast``
  for protocol messages;
* ``_schema_fast`` (jsonschema-rs for the common "valid") beside ``read/_schema``;
* ``_entries_fast`` (a column-wise entry table) beside ``read/_entries.EntryList``;
* ``_feed_fast`` beside ``read/_feed``, through ``_lanes`` with ``_messages_typed``,
  ``_messages_block`` (msgspec) and ``_blocks`` (beside ``_lines``), and ``_tapped_blocks`` for
  search's tapping builder;
* ``_bodies_fast`` (bodies kept from the validating pass) beside ``read/_feed.NoBodies``;
* ``_batch`` with ``_items_fast`` beside the append planner's careful path;
* ``_fanout`` (search over worker processes) beside the serial scan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from ..read._engine import (
    BatchLane,
    DumpsJson,
    EncodeRecord,
    Engine,
    KeepBodies,
    LineFeeder,
    LoadsJson,
    NewEntryTable,
    ParseRecord,
    SchemaRules,
    SearchFanOut,
)
from . import _feed_fast, _records_fast, _schema_fast
from ._batch import ProvenBatch
from ._bodies_fast import keep_bodies
from ._entries_fast import ColumnTable
from ._json_fast import loads_json

__all__ = ["FAST_ENGINE"]

# Each twin typed as the Protocol it implements, so that mypy checks it structurally.
_PARSE: ParseRecord = _records_fast.parse_record
_ENCODE: EncodeRecord = _records_fast.encode_record
_DUMPS: DumpsJson = _records_fast.dumps_json
_LOADS: LoadsJson = loads_json
_SCHEMA: SchemaRules = _schema_fast
_TABLE: NewEntryTable = ColumnTable
_FEED: LineFeeder = _feed_fast.feed_lines
_KEEP: KeepBodies = keep_bodies
_BATCH: BatchLane = ProvenBatch()


def _parallel_scan(
    work: Callable[[tuple[Any, ...]], list[Any]], items: Sequence[Any], sizes: Sequence[int]
) -> Iterator[Any]:
    # Imported by the first search: the worker pool's modules cost every other command nothing.
    from ._fanout import ParallelScan

    return ParallelScan()(work, items, sizes)


_FAN_OUT: SearchFanOut = _parallel_scan

FAST_ENGINE: Final = Engine(
    name="fast",
    parse_record=_PARSE,
    encode_record=_ENCODE,
    dumps_json=_DUMPS,
    loads_json=_LOADS,
    schema=_SCHEMA,
    new_table=_TABLE,
    feed_lines=_FEED,
    keep_bodies=_KEEP,
    batch=_BATCH,
    fan_out=_FAN_OUT,
)
