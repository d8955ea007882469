"""The typed lanes: plain message entries committed without building their dicts.

The common record of a session is a plain message entry. When a lane proves a line is one --
schema-valid, with no rule beyond the schema left to apply (``_messages_typed`` record by
record, ``_messages_block`` a read chunk at once, both msgspec) -- the index builder needs only
its id and parentId, and of the read-phase rules only ID-3 and TREE-1 are left
(:func:`add_plain_message`; ``graph_findings`` looks at nothing else of a message, and
committing one touches no global field). A line no lane proves takes the readable path
(``read/_feed.line_findings``: ``parse_record`` and the schema), so a read gives the same
findings and the same index either way (tests/reference/fast/test_messages_typed.py,
tests/reference/fast/test_messages_block.py).

The lanes build no dict, so they serve only a read that keeps no body and a builder that needs
no record (``_feed_fast.feed_lines``); search's tapping builder gets the block lane alone, a
proven block committed unseen only where its text tap can do without the records
(``_tapped_blocks``).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Final

from .._errors import Diagnostic
from .._lines import Line
from ..read._engine import ParseRecord, Read
from ..read._feed import NO_BODIES, line_findings
from ..read._graph import graph_findings
from ..read._index import IndexBuilder
from ..read._records import MAX_RECORD_BYTES
from ._blocks import Block, lines_of_block, split_blocks
from ._entries_fast import add_linked_message, add_linked_messages

if TYPE_CHECKING:
    from ._messages_block import MessageBlock

__all__ = [
    "TYPED_LANE_MIN_BYTES",
    "BlockCommits",
    "ReadAhead",
    "add_plain_message",
    "add_plain_messages",
    "feed_blocks",
    "typed_lane_pays",
]

# ``_messages_typed.plain_message_ids``: (id, parentId) of a record proven to be a valid plain
# message entry, or None (the record then takes parse_record and the schema).
PlainMessageIds = Callable[[bytes], "tuple[str, str | None] | None"]
# ``_messages_block.plain_message_block``: the ids, parentIds and lengths of a chunk's whole
# lines, each proven a valid plain message entry, or None (its lines then go one by one).
PlainMessageBlock = Callable[[bytes, list[bytes]], "MessageBlock | None"]
# ``add_plain_messages`` bound to a builder: (ids, parents, lengths, line, offset) -> taken.
# (_tapped_blocks puts its own say before the commit.)
CommitBlock = Callable[[list[str], list["str | None"], list[int], int, int], bool]

# Blocks the block lane may decline in a row before a read goes on line by line.
_BLOCKS_DECLINED_BEFORE_LINES: Final = 4


@functools.cache
def typed_message_lane() -> PlainMessageIds:
    """``_messages_typed.plain_message_ids``, imported on the first read that asks: msgspec is
    never loaded by a command that reads no large session."""
    from ._messages_typed import plain_message_ids

    return plain_message_ids


@functools.cache
def typed_block_lane() -> PlainMessageBlock:
    """``_messages_block.plain_message_block``, imported on first use as
    :func:`typed_message_lane`."""
    from ._messages_block import plain_message_block

    return plain_message_block


# The typed lane's value is throughput: importing msgspec and the lane costs about 10 ms, and
# the lane saves about 3 us of a plain message entry of 650 bytes (4-5 ns a byte), so it pays for
# itself from about 2 MiB. A smaller read takes parse_record and the schema, with the same results,
# so that a small validate never imports msgspec (tests/reference/cli/test_import_pins.py).
TYPED_LANE_MIN_BYTES: Final = 2 << 20


def typed_lane_pays(size: int) -> bool:
    """Whether a read of ``size`` bytes should take the typed lane: from TYPED_LANE_MIN_BYTES,
    or at any size once an earlier read of this process has imported it (a long-lived reader
    pays for the import once)."""
    return size >= TYPED_LANE_MIN_BYTES or typed_message_lane.cache_info().currsize > 0


class ReadAhead:
    """``read`` with its first chunks read ahead until :func:`typed_lane_pays` for the bytes
    held (or the stream ends), so that whether the lanes pay is known before the first line;
    the chunks held are given again first, each cut to the size asked."""

    def __init__(self, read: Read, chunk_size: int) -> None:
        self._read = read
        self._chunks: deque[bytes] = deque()
        self.ended = False
        held = 0
        while not typed_lane_pays(held):
            chunk = read(chunk_size)
            if not chunk:
                self.ended = True
                break
            self._chunks.append(chunk)
            held += len(chunk)

    def __call__(self, size: int) -> bytes:
        if self._chunks:
            chunk = self._chunks.popleft()
            if len(chunk) > size:
                self._chunks.appendleft(chunk[size:])
                chunk = chunk[:size]
            return chunk
        return b"" if self.ended else self._read(size)


# --- committing proven entries ---------------------------------------------------------------


def add_plain_message(
    builder: IndexBuilder, entry_id: str, parent_id: str | None, *, line: int, offset: int,
    length: int,
) -> list[Diagnostic]:
    """``builder.add_entry`` for a ``message`` entry already proven schema-valid with no rule
    beyond the schema to apply, given only its id and parentId: for such an entry
    ``check_entry`` reduces to ID-3 and TREE-1, and committing it touches no global field."""
    if not builder.built and add_linked_message(
        builder.table, entry_id, parent_id, line=line, offset=offset, length=length
    ):
        builder.note_line(line)
        return []
    entry = {"type": "message", "id": entry_id, "parentId": parent_id}
    found = graph_findings(entry, line, builder.table, builder.recordings)
    if not found:  # as in IndexBuilder._commit: a built index is never extended
        raise RuntimeError("IndexBuilder.build() was called; use from_index() to continue")
    builder.report(found)
    return found


class BlockCommits:
    """:func:`add_plain_messages` over one read: after the first refused block every later one
    is refused unseen and goes line by line, which keeps a refusal's cost (the table may
    rebuild its id lookup) to once per read. A refused block holds a finding, so the session
    is invalid whatever follows."""

    def __init__(self, builder: IndexBuilder) -> None:
        self.builder = builder
        self.refused = False

    def __call__(
        self, ids: list[str], parents: list[str | None], lengths: list[int], line: int,
        offset: int,
    ) -> bool:
        if self.refused:
            return False
        taken = add_plain_messages(self.builder, ids, parents, lengths, line=line, offset=offset)
        self.refused = not taken
        return taken


def add_plain_messages(
    builder: IndexBuilder, ids: list[str], parents: list[str | None], lengths: list[int], *,
    line: int, offset: int,
) -> bool:
    """:func:`add_plain_message` for consecutive lines proven by the block lane, all or
    nothing: True if every one was committed; False, with nothing committed or reported, if
    ID-3 or TREE-1 fails for any (the caller then feeds the lines one by one, which reports
    each finding at its line)."""
    if builder.built:
        return False
    if not add_linked_messages(builder.table, ids, parents, lengths, line=line, offset=offset):
        return False
    builder.note_line(line + len(ids) - 1)
    return True


# --- feeding ---------------------------------------------------------------------------------


def feed_blocks(
    builder: IndexBuilder, read: Read, parse: ParseRecord, chunk_size: int, first_line: int,
    start_offset: int, record_lane: PlainMessageIds | None, commit: CommitBlock,
) -> Iterator[list[Diagnostic]]:
    """The lines ``read(n)`` yields, a chunk's whole lines as one block for the block lane
    (``commit`` takes a proven block or refuses it), other lines one by one through
    ``record_lane`` (if any) or the readable rules."""
    block_lane = typed_block_lane()
    # A block the lane declines has cost a copy and a split for nothing; after a few in a row
    # (a session of realtime events, say) the rest comes line by line, as without the lane.
    declined = [0]  # in a row; read by want() before each chunk
    for piece in split_blocks(
        read, chunk_size=chunk_size, limit=MAX_RECORD_BYTES, first_line=first_line,
        first_offset=start_offset, want=lambda: declined[0] < _BLOCKS_DECLINED_BEFORE_LINES,
    ):
        if isinstance(piece, Block):
            taken = yield from _block_findings(builder, parse, piece, record_lane, block_lane,
                                               commit)
            declined[0] = 0 if taken else declined[0] + 1
        else:
            builder.note_line(piece[0])
            yield _typed_line_findings(builder, parse, record_lane, piece)


def _block_findings(
    builder: IndexBuilder, parse: ParseRecord, block: Block, record_lane: PlainMessageIds | None,
    block_lane: PlainMessageBlock, commit: CommitBlock,
) -> Generator[list[Diagnostic], None, bool]:
    """The findings of a block's lines: none, once, if the block lane proved them all and the
    index took them; else each line's, fed one by one. Returns whether the lane took them
    (a block that is only the header counts as taken: nothing was declined)."""
    rest: Block | None = block
    if not builder.first_seen:
        rest = yield from _header_findings(builder, parse, block)
    if rest is None:
        return True
    proven = block_lane(rest.data, rest.lines)
    if proven is not None and commit(proven.ids, proven.parents, proven.lengths, rest.line,
                                     rest.offset):
        yield []
        return True
    for line in lines_of_block(rest, limit=MAX_RECORD_BYTES):
        builder.note_line(line[0])
        yield _typed_line_findings(builder, parse, record_lane, line)
    return False


def _header_findings(builder: IndexBuilder, parse: ParseRecord, block: Block) -> Generator[
        list[Diagnostic], None, Block | None]:
    """Feed the lines of ``block`` up to the first record (the header, HDR-2, which takes no
    lane); return the lines after it as a block, None if none are left."""
    lines = lines_of_block(block, limit=MAX_RECORD_BYTES)
    used = 0
    for line in lines:
        builder.note_line(line[0])
        used += line[2] + 1
        yield line_findings(builder, parse, NO_BODIES, *line)
        if builder.first_seen:
            break
    fed = line[0] - block.line + 1
    if fed == block.count:
        return None
    return Block(block.line + fed, block.offset + used, block.data[used:], block.lines[fed:])


def _typed_line_findings(
    builder: IndexBuilder, parse: ParseRecord, record_lane: PlainMessageIds | None, piece: Line
) -> list[Diagnostic]:
    """``line_findings``, through the per-record lane (if any) for a terminated entry line."""
    line, offset, length, data, terminated = piece
    if record_lane is not None and terminated and data is not None and builder.first_seen:
        ids = record_lane(data)
        if ids is not None:
            return add_plain_message(builder, ids[0], ids[1], line=line, offset=offset,
                                     length=length)
    return line_findings(builder, parse, NO_BODIES, line, offset, length, data, terminated)
