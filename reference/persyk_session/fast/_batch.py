"""The fast engine's batch lane: what the append planner is spared for plain message entries.

``_items_fast`` proves a record's encoding equal to the careful encode-and-parse-back
(:meth:`ProvenBatch.prepare`) and proves, batch-wise, which records are schema-valid plain
message entries (:meth:`ProvenBatch.prove`); for those the planner checks only ID-3 and TREE-1
(:meth:`ProvenBatch.commit_proven`). A record proven nothing takes the careful path, so both
engines plan the same bytes and acknowledgements (tests/reference/fast/test_items_fast.py,
tests/reference/fast/test_batch_plain_lane.py). msgspec and ``_items_fast`` load on the first batch,
never for a command that appends nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..read._index import IndexBuilder
from ._lanes import add_plain_message

__all__ = ["ProvenBatch"]


class ProvenBatch:
    """``read/_engine.BatchLane`` through ``_items_fast``'s proofs."""

    def prepare(self, obj: Any) -> tuple[bytes, dict[str, Any]] | None:
        from ._items_fast import encode_and_read_back

        return encode_and_read_back(obj)

    def prove(self, records: Sequence[tuple[bytes, dict[str, Any]] | None]) -> list[bool]:
        if not any(records):  # a retry of committed records alone: nothing to prove
            return [False] * len(records)
        from ._items_fast import plain_messages

        return plain_messages(records)

    def commit_proven(
        self, builder: IndexBuilder, value: dict[str, Any], *, line: int, offset: int,
        length: int,
    ) -> bool:
        # Of the read-phase rules only TREE-1 is left to check (ID-3: the planner saw the id
        # is new); a parent that is not committed is for check_entry to report.
        parent = value["parentId"]
        if parent is not None and parent not in builder:
            return False
        found = add_plain_message(builder, value["id"], parent, line=line, offset=offset,
                                  length=length)
        if found:  # the two lookups above are the rules add_plain_message applies
            raise AssertionError(f"a plain message refused after its checks: {found}")
        return True
