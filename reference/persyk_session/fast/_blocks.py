"""Read chunks cut into blocks of whole lines, for the block lane (``_lanes``, ``_messages_block``).

The lines, numbers, offsets and limit (REC-21) are ``_lines.split_stream``'s, which the readable
path uses; only their grouping differs: the complete lines of one chunk come out as one
:class:`Block`, which the block lane proves at once. Sans-IO, as ``_lines``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .._lines import Line

__all__ = ["Block", "lines_of_block", "split_blocks"]


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
    """``split_stream``'s lines, those a chunk holds whole as one :class:`Block` each.

    The same lines, numbers, offsets and limit (REC-21) as ``split_stream``: a line
    carried over from the last chunk comes out as a :class:`Line` when its LF arrives, then the
    chunk's complete lines as a block (the block lane reads them at once; a block it declines
    is cut by :func:`lines_of_block`), and the piece after its last LF is carried.
    Once ``want()`` says False (asked before each chunk), the chunks' lines come out one by one
    as ``split_stream`` cuts them, without the copies a block costs.
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
    """The lines of ``block``, as ``split_stream`` gives them (a line over ``limit``, which
    a chunk larger than the limit may hold, without its bytes)."""
    line_no, offset = block.line, block.offset
    for data in block.lines:
        length = len(data)
        yield line_no, offset, length, data if length <= limit else None, True
        line_no += 1
        offset += length + 1
