"""Cutting a byte stream into physical lines at each LF (REC-1): the one line splitter.

Used by every reader: the full read and the live index (``read/_feed.feed_lines``), batches given
as raw JSONL (``_append.items_from_jsonl``) and buffers already in memory (:func:`split_lines`).
Sans-IO: it pulls bytes through a ``read(n)`` callback and never opens anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Line", "RawLine", "split_lines", "split_stream"]

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
