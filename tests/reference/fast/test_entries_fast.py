"""The fast engine's entry table (``fast/_entries_fast.ColumnTable``): columns of machine
integers instead of a tuple per entry, so a large session's index stays small. The readable
core's ``EntryList`` keeps a tuple per entry and makes no such promise."""

from __future__ import annotations

import gc
import tracemalloc

from persyk_conformance.records import header, user
from persyk_session import IndexBuilder
from persyk_session.fast import FAST_ENGINE


def test_the_column_table_keeps_many_small_entries_compact() -> None:
    # The index keeps columns of machine integers, not an object per entry: ids, the id table
    # and ~40 bytes of columns per entry. One tuple per entry took over 300 bytes here.
    count = 20_000
    builder = IndexBuilder(FAST_ENGINE.new_table(), schema=FAST_ENGINE.schema)
    builder.add_header(header(), line=1)
    gc.collect()
    tracemalloc.start()
    try:
        for i in range(count):
            # Each record is made and dropped here, as the reader does, so its id is counted.
            record = user(f"m{i}", f"m{i - 1}" if i else None)
            builder.add_entry(record, line=i + 2, offset=i * 700, length=699)
            del record
        index = builder.build()
        gc.collect()
        retained, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(index.entries) == count
    assert retained / count < 250, f"{retained / count:.0f} bytes an entry"
