"""Cutting a byte stream into physical lines at each LF (REC-1): the one line splitter.

Used by every reader: the full read and the live index (``read/_feed.feed_lines``), batches given
as raw JSONL (``_append.items_from_jsonl``) and buffers already in memory (:func:`split_lines`).
Sans-IO: it pulls bytes through a ``read(n)`` callback and never opens anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Block", "Line", "RawLine", "lines_of_block", "split_blocks", "split_lines",
           "split_stream"]

# One physical line: (line number, offset of its first byte, length without the LF, the bytes
# or None when over the limit, whether an LF ended it). A plain tuple: one is made per line of
# every read.
Line = tuple[int, int, int, bytes | None, bool]


def split_stream(
    read: Callable[[int], bytes], *, chunk_size: int, limit: int, first_line: int = 1,
    first_offset: int = 0,
) -> Iterator[Line]:
    """The lines of the byte stream ``read(n)`` yields, numbered from ``first_line`` and placed
    from byte ``first_offset``.

    REC-21: only a line still open at the end of a chunk is carried over; once it grows past
    ``limit`` its bytes are dropped and only its length is kept, so memory stays within the
    limit plus a chunk whatever the stream holds. Lines are cut with ``find`` (memchr) rather
    than ``bytes.split``: as fast for short lines, several times faster for long ones. A final
    piece without an LF comes out with ``terminated`` False.
    """
    line_no = first_line
    offset = first_offset  # offset of line ``line_no``
    open_parts: list[bytes] = []  # bytes of the line still open after the last chunk
    open_length = 0  # its length so far; over ``limit`` its bytes are no longer held
    while chunk := read(chunk_size):
        pos = 0
        while (nl := chunk.find(b"\n", pos)) >= 0:
            length = open_length + nl - pos
            if length > limit:
                data = None
            elif open_parts:
                data = b"".join([*open_parts, chunk[pos:nl]])
            else:
                data = chunk[pos:nl]
            yield line_no, offset, length, data, True
            line_no += 1
            offset += length + 1
            open_parts = []
            open_length = 0
            pos = nl + 1
        open_length += len(chunk) - pos
        if open_length > limit:
            open_parts = []
        elif pos < len(chunk):
            open_parts.append(chunk[pos:] if pos else chunk)
    if open_length:
        data = b"".join(open_parts) if open_length <= limit else None
        yield line_no, offset, open_length, data, False


@dataclass(frozen=True, slots=True)
class Block:
    """The whole lines of one chunk: ``data`` holds the ``lines`` (without their LF), each
    ending in LF, the first numbered ``line`` and starting at byte ``offset``."""

    line: int
    offset: int
    data: bytes
    lines: list[bytes]

    @property
    def count(self) -> int:
        return len(self.lines)


def split_blocks(
    read: Callable[[int], bytes], *, chunk_size: int, limit: int, first_line: int = 1,
    first_offset: int = 0, want: Callable[[], bool] = lambda: True,
) -> Iterator[Line | Block]:
    """:func:`split_stream`'s lines, those a chunk holds whole as one :class:`Block` each.

    The same lines, numbers, offsets and limit (REC-21) as :func:`split_stream`: a line
    carried over from the last chunk comes out as a :class:`Line` when its LF arrives, then the
    chunk's complete lines as a block (the fast engine's block lane reads them at once; a block
    it declines is cut by :func:`lines_of_block`), and the piece after its last LF is carried.
    Once ``want()`` says False (asked before each chunk), the chunks' lines come out one by one
    as :func:`split_stream` cuts them, without the copies a block costs.
    """
    line_no = first_line
    offset = first_offset
    open_parts: list[bytes] = []
    open_length = 0  # bytes of the line still open; over ``limit`` they are not held
    while chunk := read(chunk_size):
        pos = 0
        if open_length:
            nl = chunk.find(b"\n")
            if nl >= 0:
                length = open_length + nl
                data = None if length > limit else b"".join([*open_parts, chunk[:nl]])
                yield line_no, offset, length, data, True
                line_no += 1
                offset += length + 1
                open_parts = []
                open_length = 0
                pos = nl + 1
        if not open_length and not want():
            while (nl := chunk.find(b"\n", pos)) >= 0:
                length = nl - pos
                yield line_no, offset, length, chunk[pos:nl] if length <= limit else None, True
                line_no += 1
                offset += length + 1
                pos = nl + 1
        elif not open_length and (last := chunk.rfind(b"\n", pos)) >= 0:
            whole = chunk if pos == 0 and last == len(chunk) - 1 else chunk[pos:last + 1]
            lines = whole.split(b"\n")
            lines.pop()  # the empty piece after the last LF
            yield Block(line_no, offset, whole, lines)
            line_no += len(lines)
            offset += len(whole)
            pos = last + 1
        open_length += len(chunk) - pos
        if open_length > limit:
            open_parts = []
        elif pos < len(chunk):
            open_parts.append(chunk[pos:] if pos else chunk)
    if open_length:
        data = b"".join(open_parts) if open_length <= limit else None
        yield line_no, offset, open_length, data, False


def lines_of_block(block: Block, *, limit: int) -> Iterator[Line]:
    """The lines of ``block``, as :func:`split_stream` gives them (a line over ``limit``, which
    a chunk larger than the limit may hold, without its bytes)."""
    line_no, offset = block.line, block.offset
    for data in block.lines:
        length = len(data)
        yield line_no, offset, length, data if length <= limit else None, True
        line_no += 1
        offset += length + 1


@dataclass(frozen=True, slots=True)
class RawLine:
    """One physical line of a buffer: ``data`` excludes the LF; ``offset`` is where it starts."""

    line: int
    offset: int
    data: bytes
    terminated: bool


def split_lines(buf: bytes, *, first_line: int = 1, first_offset: int = 0) -> Iterator[RawLine]:
    """The lines of a buffer already in memory (no limit: every line keeps its bytes)."""
    chunks = iter((buf,))
    lines = split_stream(
        lambda _size: next(chunks, b""), chunk_size=len(buf), limit=len(buf),
        first_line=first_line, first_offset=first_offset,
    )
    for line, offset, _length, data, terminated in lines:
        assert data is not None  # within the limit by construction
        yield RawLine(line, offset, data, terminated)
