"""The fast engine's line feeder (``read/_engine.LineFeeder``): which lanes a read takes.

``read/_feed.feed_lines`` feeds every line through ``parse_record`` and the schema. Here a read
that keeps no body and feeds a plain index builder takes both typed lanes (``_lanes``) once it
is large enough for them to pay; search's tapping builder takes the block lane alone
(``_tapped_blocks``); anything else takes the readable rules. The findings and the committed
entries are the same whichever runs (tests/reference/fast/test_messages_typed.py,
tests/reference/fast/test_messages_block.py, tests/reference/fast/test_search_block_tap.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from .._errors import Diagnostic
from ..read._engine import KeptBodies, ParseRecord, Read
from ..read._feed import NO_BODIES
from ..read._feed import feed_lines as feed_each_line
from ..read._index import IndexBuilder
from ._lanes import BlockCommits, ReadAhead, feed_blocks, typed_message_lane

__all__ = ["feed_lines"]


def feed_lines(
    builder: IndexBuilder, read: Read, *, parse: ParseRecord, chunk_size: int,
    first_line: int, start_offset: int, kept: KeptBodies,
) -> Iterator[list[Diagnostic]]:
    """``read/_feed.feed_lines`` with both lanes, when they can serve and pay: no body is kept
    (the lanes build no dict), the builder is a plain :class:`IndexBuilder` (they never call
    ``add_record``; search's gets the block lane through ``_tapped_blocks``) and the read is
    worth the import (``_lanes.ReadAhead``). A proven block yields one empty list for all its
    lines."""
    if kept is not NO_BODIES:
        return feed_each_line(builder, read, parse=parse, chunk_size=chunk_size,
                              first_line=first_line, start_offset=start_offset, kept=kept)
    if type(builder).add_record is not IndexBuilder.add_record:
        # A builder that sees every record: search's, whose module the first search imports.
        from ._tapped_blocks import feed_tapped

        return feed_tapped(builder, read, parse=parse, chunk_size=chunk_size,
                           first_line=first_line, start_offset=start_offset)
    return _feed_if_paying(builder, read, parse, chunk_size, first_line, start_offset)


def _feed_if_paying(
    builder: IndexBuilder, read: Read, parse: ParseRecord, chunk_size: int, first_line: int,
    start_offset: int,
) -> Iterator[list[Diagnostic]]:
    ahead = ReadAhead(read, chunk_size)
    if ahead.ended:
        yield from feed_each_line(builder, ahead, parse=parse, chunk_size=chunk_size,
                                  first_line=first_line, start_offset=start_offset)
    else:
        yield from feed_blocks(builder, ahead, parse, chunk_size, first_line, start_offset,
                               typed_message_lane(), BlockCommits(builder))
