"""The per-line read rules: one physical line in, its findings out, the clean ones committed.

Rule: this is the one place that says what a line goes through, in this order: REC-11 size,
REC-16 terminating LF, REC-15 blank line, the strict record parser, then the builder's header,
entry and graph rules (``_index``). Whoever feeds lines -- a whole read (``_store``), an append
continuing a validated prefix (``_live``), a paged read's cache (``_read_cache``), search --
feeds them here or through an engine's :class:`~._engine.LineFeeder`, which must yield the
same findings and commit the same entries. No I/O: ``read(n)`` is the caller's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Final

from .._errors import Code, ContractError, Diagnostic
from .._lines import split_stream
from ._records import MAX_RECORD_BYTES, is_blank

if TYPE_CHECKING:
    from ._engine import KeptBodies, ParseRecord, Read
    from ._index import IndexBuilder

__all__ = ["CHUNK_SIZE", "NO_BODIES", "NoBodies", "feed_lines", "line_findings"]

CHUNK_SIZE: Final = 1 << 20


class NoBodies:
    """A body store that keeps nothing: a projection reads every body again by position."""

    def offer(self, obj: dict[str, Any], offset: int, length: int) -> None:
        return None

    def get(self, offset: int) -> dict[str, Any] | None:
        return None

    def holding(self) -> AbstractContextManager[None]:
        return nullcontext()

    def __len__(self) -> int:
        return 0


NO_BODIES: Final = NoBodies()


def feed_lines(
    builder: IndexBuilder,
    read: Read,
    *,
    parse: ParseRecord,
    chunk_size: int = CHUNK_SIZE,
    first_line: int = 1,
    start_offset: int = 0,
    kept: KeptBodies = NO_BODIES,
) -> Iterator[list[Diagnostic]]:
    """Apply the per-line read rules to each line ``read(n)`` yields and commit the clean ones.

    The lines are numbered from ``first_line`` and placed from byte ``start_offset`` (an append
    continues a validated prefix). Yields each line's findings, empty when the line was
    committed; every finding is also in the builder, so reading to the end leaves them all in
    ``build()``. ``kept`` is offered every committed record (the header too, which it never
    keeps)."""
    for line, offset, length, data, terminated in split_stream(
        read, chunk_size=chunk_size, limit=MAX_RECORD_BYTES, first_line=first_line,
        first_offset=start_offset,
    ):
        builder.note_line(line)
        yield line_findings(builder, parse, kept, line, offset, length, data, terminated)


def line_findings(
    builder: IndexBuilder, parse: ParseRecord, kept: KeptBodies, line: int, offset: int,
    length: int, data: bytes | None, terminated: bool,
) -> list[Diagnostic]:
    """The per-line rules of :func:`feed_lines` for one line: its findings, empty when it was
    committed (or is blank)."""
    if length > MAX_RECORD_BYTES:
        # REC-11: over the limit, whether terminated or not (a limit is never a torn tail).
        found = [
            Diagnostic(Code.RECORD_TOO_LARGE, line=line, detail="the record is larger than 1 MiB")
        ]
    elif not terminated or data is None:
        # REC-16, RCV-1: a final record without LF is reported, never parsed or repaired.
        found = [
            Diagnostic(
                Code.RECORD_UNTERMINATED, line=line, detail="the last record has no terminating LF"
            )
        ]
    elif is_blank(data):
        # REC-15 (rev. 2): a blank line is no record; it keeps its physical line number.
        return []
    else:
        try:
            obj = parse(data, line=line)
        except ContractError as error:
            found = list(error.diagnostics)
        else:
            found = builder.add_record(obj, line=line, offset=offset, length=length)
            if not found:
                kept.offer(obj, offset, length)
            return found
    builder.report(found)
    return found
