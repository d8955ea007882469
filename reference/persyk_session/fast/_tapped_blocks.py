"""The block lane for search's tapping builder: proven blocks committed without their records.

Search validates and searches a session in one pass: its builder (``search/_judge.TappedBuilder``)
hands every record it commits to a text tap, whose byte screen has judged the lines of each
chunk before their records arrive (``TextTap.screened``). The readable path parses every line
and hands each record over. Here a block of lines the block lane proved to be plain message
entries (``_lanes``) is committed without its records when the tap can do without them:

* the screen cleared the block's lines: none can hold the query, so the tap only learns where
  the last record lies;
* the screen did not clear them: each line the screen cannot clear alone is parsed and handed
  to the tap, the others need no parse (none of their strings can fold to hold the query).

A block outside the latest screened lines, or one the index refuses, goes line by line through
``add_record``, so the page is the page of the readable path, pins included
(tests/reference/fast/test_search_block_tap.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from .._errors import Diagnostic
from ..read._engine import ParseRecord, Read
from ..read._feed import NO_BODIES
from ..read._feed import feed_lines as feed_each_line
from ..read._index import IndexBuilder
from ..search._judge import Screened, TappedBuilder, TextTap
from ._lanes import BlockCommits, feed_blocks

__all__ = ["feed_tapped"]


def feed_tapped(
    builder: IndexBuilder, read: Read, *, parse: ParseRecord, chunk_size: int, first_line: int,
    start_offset: int,
) -> Iterator[list[Diagnostic]]:
    """``read/_feed.feed_lines`` for a builder that sees every record: search's gets the block
    lane, any other every line through ``add_record``."""
    if not isinstance(builder, TappedBuilder):
        return feed_each_line(builder, read, parse=parse, chunk_size=chunk_size,
                              first_line=first_line, start_offset=start_offset, kept=NO_BODIES)
    tap = builder.tap
    commits = BlockCommits(builder)

    def offer(ids: list[str], parents: list[str | None], lengths: list[int], line: int,
              offset: int) -> bool:
        end = offset + sum(lengths) + len(lengths)
        screened = tap.screened
        if screened is None or not (screened.start <= offset and end <= _end(screened)):
            return False
        if not commits(ids, parents, lengths, line, offset):
            return False
        if screened.cleared:
            tap.last = (end - 1 - lengths[-1], lengths[-1])
        else:
            _match_lines(tap, screened, parse, offset, lengths, line)
        return True

    return feed_blocks(builder, read, parse, chunk_size, first_line, start_offset, None, offer)


def _end(screened: Screened) -> int:
    return screened.start + len(screened.data)


def _match_lines(
    tap: TextTap, screened: Screened, parse: ParseRecord, offset: int, lengths: list[int],
    line: int,
) -> None:
    """``tap.record`` for the lines of a committed block the screen did not clear, from the
    screened bytes: a line the screen cannot clear alone is parsed and matched, the others
    need no parse."""
    assert tap.screen is not None  # a tap without a screen screens nothing
    start, data, _cleared = screened
    at = offset - start
    may_hold = tap.screen.may_hold
    for number, length in enumerate(lengths, line):
        piece = data[at:at + length]
        if may_hold(piece):
            tap.record(parse(piece, line=number), start + at, length)
        at += length + 1
    tap.last = (start + at - 1 - lengths[-1], lengths[-1])
