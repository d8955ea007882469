"""The read side's I/O shell: find the session file, stream it into an index, read bodies.

Reading never modifies anything: files are opened read-only, no lock file is created, and a
damaged file is reported, never repaired (READ-1). The file is streamed in fixed-size chunks and
an over-limit line is skipped up to its LF without being accumulated, so memory stays bounded by
the record limit plus the index, whatever the file size.
"""

from __future__ import annotations

import gc
import io
import os
import stat
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .. import _fsutil
from .._errors import Code, ContractError, Diagnostic, UsageError
from .._lines import Block, Line, lines_of_block, split_blocks, split_stream
from ._bodies_fast import KEPT_BODY_BUDGET, KeptBodies, paused_gc
from ._index import EntryMeta, IndexBuilder, SessionIndex
from ._mode import (
    KEEP_PARSED_BODIES,
    PlainMessageBlock,
    PlainMessageIds,
    parse_record,
    typed_block_lane,
    typed_lane_pays,
    typed_message_lane,
)
from ._records import MAX_RECORD_BYTES, is_blank

__all__ = [
    "CHUNK_SIZE",
    "SESSION_FILE",
    "BodyReader",
    "OpenSession",
    "index_stream",
    "open_session",
    "resolve_session_file",
    "resolve_session_file_for_mutation",
]

SESSION_FILE = "session.jsonl"
CHUNK_SIZE = 1 << 20
# Blocks the block lane may decline in a row before a read goes on line by line (feed_lines).
_BLOCKS_DECLINED_BEFORE_LINES = 4


def resolve_session_file(path: str | os.PathLike[str]) -> Path:
    """``path`` itself if it is a file, ``path/session.jsonl`` if it is a session directory."""
    # os.stat rather than Path.is_dir/is_file: this runs on every append (one or two stats).
    candidate = os.fspath(path)
    mode = _mode(candidate)
    if mode is not None and stat.S_ISDIR(mode):
        candidate = os.path.join(candidate, SESSION_FILE)
        mode = _mode(candidate)
    if mode is not None and stat.S_ISREG(mode):
        return Path(candidate)
    raise UsageError(Code.PATH_NOT_FOUND, "no session file or session directory at the path")


def _mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):  # ValueError: an embedded NUL
        return None


def resolve_session_file_for_mutation(path: str | os.PathLike[str]) -> Path:
    """:func:`resolve_session_file` for the write path, which never follows the session file.

    APP-25: the session directory is the one the caller names (links on the way to it are
    followed: both spellings reach the same ``session.lock``); the session file inside it is
    never followed. A ``session.jsonl`` (or a file named directly) that is a symbolic link is
    refused with SESSION_PATH_REFUSED before anything is created: following it would put the
    lock, the recovery directory and the writes beside the link's target, wherever that is.
    Anything but a regular file is PATH_NOT_FOUND, as for reading.
    """
    candidate = os.fspath(path)
    mode = _mode(candidate)
    if mode is not None and stat.S_ISDIR(mode):
        candidate = os.path.join(candidate, SESSION_FILE)
    try:
        info = os.lstat(candidate)
    except (OSError, ValueError):  # ValueError: an embedded NUL
        raise UsageError(
            Code.PATH_NOT_FOUND, "no session file or session directory at the path") from None
    if stat.S_ISLNK(info.st_mode):
        raise ContractError([Diagnostic(
            Code.SESSION_PATH_REFUSED, detail="the session file is a symbolic link; not mutated")])
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(Code.PATH_NOT_FOUND, "no session file or session directory at the path")
    return Path(candidate)


def feed_lines(
    builder: IndexBuilder,
    read: Callable[[int], bytes],
    *,
    chunk_size: int = CHUNK_SIZE,
    first_line: int = 1,
    start_offset: int = 0,
    kept: KeptBodies | None = None,
    typed: bool = False,
    blocks: bool = False,
) -> Iterator[list[Diagnostic]]:
    """Apply the per-line read rules to each line ``read(n)`` yields and commit the clean ones.

    The one place that says what a line goes through: REC-11 size, REC-16 terminating LF, the
    strict record parser, then the builder's header, entry and graph rules. The lines are
    numbered from ``first_line`` and placed from byte ``start_offset`` (an append continues a
    validated prefix). Yields each line's findings, empty when the line was committed; every
    finding is also in the builder, so reading to the end leaves them all in ``build()``.
    ``kept`` is offered every committed record (the header too, which it never keeps).
    ``typed`` lets the fast mode's lanes commit plain message entries without building their
    dicts: whole chunks at once (``_messages_block``, one empty list yielded for the chunk's
    lines), else record by record (``_messages_typed``); only for a plain
    :class:`IndexBuilder` and no ``kept``, since the lanes never call ``add_record``
    (search's tapping builder needs every record). ``blocks`` asks for the block lane alone,
    for a builder that taps ``add_record`` and decides in :meth:`IndexBuilder.add_plain_messages`
    which blocks it may commit unseen (search's, for the lines its byte screen cleared); its
    other lines take ``add_record``.
    """
    # The fast mode's lanes build no dict, so they serve only a read that keeps no body; the
    # header (the first record) always takes parse_record.
    if typed and (kept is not None or type(builder).add_record is not IndexBuilder.add_record):
        raise ValueError("the typed lane hands no record to kept bodies or an add_record tap")
    record_lane = typed_message_lane() if typed else None
    block_lane = typed_block_lane() if typed or blocks else None
    if block_lane is None:
        for item in split_stream(
            read, chunk_size=chunk_size, limit=MAX_RECORD_BYTES, first_line=first_line,
            first_offset=start_offset,
        ):
            builder.note_line(item[0])
            yield _line_findings(builder, kept, *item)
        return
    # A block the lane declines has cost a copy and a split for nothing; after a few in a row
    # (a session of realtime events, say) the rest comes line by line, as without the lane.
    declined = [0]  # in a row; read by want() before each chunk
    for piece in split_blocks(
        read, chunk_size=chunk_size, limit=MAX_RECORD_BYTES, first_line=first_line,
        first_offset=start_offset, want=lambda: declined[0] < _BLOCKS_DECLINED_BEFORE_LINES,
    ):
        if isinstance(piece, Block):
            taken = yield from _block_findings(builder, piece, record_lane, block_lane)
            declined[0] = 0 if taken else declined[0] + 1
        else:
            builder.note_line(piece[0])
            yield _typed_line_findings(builder, record_lane, piece)


def _block_findings(
    builder: IndexBuilder, block: Block, record_lane: PlainMessageIds | None,
    block_lane: PlainMessageBlock,
) -> Generator[list[Diagnostic], None, bool]:
    """The findings of a block's lines: none, once, if the block lane proved them all and the
    index took them; else each line's, fed one by one. Returns whether the lane took them
    (a block that is only the header counts as taken: nothing was declined)."""
    rest: Block | None = block
    if not builder.first_seen:
        rest = yield from _header_findings(builder, block)
    if rest is None:
        return True
    proven = block_lane(rest.data, rest.lines)
    if proven is not None and builder.add_plain_messages(
        proven.ids, proven.parents, proven.lengths, line=rest.line, offset=rest.offset
    ):
        yield []
        return True
    for line in lines_of_block(rest, limit=MAX_RECORD_BYTES):
        builder.note_line(line[0])
        yield _typed_line_findings(builder, record_lane, line)
    return False


def _header_findings(builder: IndexBuilder, block: Block) -> Generator[
        list[Diagnostic], None, Block | None]:
    """Feed the lines of ``block`` up to the first record (the header, HDR-2, which takes no
    lane); return the lines after it as a block, None if none are left."""
    lines = lines_of_block(block, limit=MAX_RECORD_BYTES)
    used = 0
    for line in lines:
        builder.note_line(line[0])
        used += line[2] + 1
        yield _line_findings(builder, None, *line)
        if builder.first_seen:
            break
    fed = line[0] - block.line + 1
    if fed == block.count:
        return None
    return Block(block.line + fed, block.offset + used, block.data[used:], block.lines[fed:])


def _typed_line_findings(
    builder: IndexBuilder, record_lane: PlainMessageIds | None, piece: Line
) -> list[Diagnostic]:
    """:func:`_line_findings`, through the per-record lane (if any) for a terminated entry
    line."""
    line, offset, length, data, terminated = piece
    if record_lane is not None and terminated and data is not None and builder.first_seen:
        ids = record_lane(data)
        if ids is not None:
            return builder.add_plain_message(ids[0], ids[1], line=line, offset=offset,
                                             length=length)
    return _line_findings(builder, None, line, offset, length, data, terminated)


def _line_findings(
    builder: IndexBuilder, kept: KeptBodies | None, line: int, offset: int, length: int,
    data: bytes | None, terminated: bool,
) -> list[Diagnostic]:
    """The per-line rules of :func:`feed_lines` for a line the typed lane did not take: the
    findings of the line, empty when it was committed (or is blank)."""
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
            obj = parse_record(data, line=line)
        except ContractError as error:
            found = list(error.diagnostics)
        else:
            found = builder.add_record(obj, line=line, offset=offset, length=length)
            if kept is not None and not found:
                kept.offer(obj, offset, length)
            return found
    builder.report(found)
    return found


def index_stream(
    read: Callable[[int], bytes], *, chunk_size: int = CHUNK_SIZE, kept: KeptBodies | None = None,
    typed: bool | None = None,
) -> SessionIndex:
    """Index the session whose bytes ``read(n)`` yields, applying every read-phase rule (and
    keeping the bodies ``kept`` asks for). ``typed``: whether plain message entries may take the
    typed lane (see :func:`feed_lines`); None, whenever no body is kept. A caller that knows
    the size asks :func:`~._mode.typed_lane_pays`."""
    builder = IndexBuilder()
    lane = kept is None if typed is None else typed
    for _ in feed_lines(builder, read, chunk_size=chunk_size, kept=kept, typed=lane):
        pass
    # HDR-1 (rev. 2): no line but blank ones (zero bytes included) is SESSION_EMPTY.
    return builder.build(empty=not builder.first_seen)


class BodyReader:
    """Reads entry bodies by position from one read-only descriptor; use as a context manager."""

    def __init__(self, path: Path, kept: KeptBodies | None = None) -> None:
        self._file: IO[bytes] = _open_read_only(path)
        self._kept = kept
        self._paused_gc = False
        self.reads = 0  # bodies read and parsed again (the kept ones are not)

    def __call__(self, entry: EntryMeta) -> dict[str, Any]:
        if self._kept is not None:
            body = self._kept.get(entry.offset)
            if body is not None:
                return body
        self.reads += 1
        self._file.seek(entry.offset)
        data = self._file.read(entry.length)
        if len(data) != entry.length:
            raise UsageError(Code.PATH_NOT_FOUND, "the session file shrank while being read")
        return parse_record(data, line=entry.line)

    def close(self) -> None:
        self._file.close()
        if self._paused_gc:
            self._paused_gc = False
            gc.enable()

    def __enter__(self) -> BodyReader:
        # The fast path projects from kept bodies: pause the cyclic collector meanwhile (see
        # paused_gc); the readable twin leaves it alone.
        if self._kept is not None and gc.isenabled():
            gc.disable()
            self._paused_gc = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class OpenSession:
    """A session file and its index. Bodies are read on demand, never kept."""

    path: Path
    index: SessionIndex
    kept: KeptBodies | None = None

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.index.diagnostics

    @property
    def valid(self) -> bool:
        return self.index.valid

    def bodies(self) -> BodyReader:
        """A body loader with one open descriptor, for reading many entries (the bodies kept
        from the validating pass are served without reading)."""
        return BodyReader(self.path, self.kept)

    def read_entry(self, entry: EntryMeta) -> dict[str, Any]:
        with self.bodies() as load:
            return load(entry)


def open_session(
    path: str | os.PathLike[str], *, chunk_size: int = CHUNK_SIZE,
    keep: frozenset[str] = frozenset(), keep_budget: int = KEPT_BODY_BUDGET,
) -> OpenSession:
    """Resolve ``path``, stream its session file into an index, and keep the index only --
    and, in the fast mode, the parsed bodies of entries of the ``keep`` types (up to
    ``keep_budget`` record bytes, see :class:`KeptBodies`), which the caller is about to read.

    Read-only: the file is opened for reading and nothing is created (APP-1, CTX-19); only
    session.jsonl is opened, never an asset, so an absent or different asset file never makes
    a session invalid (AST-8)."""
    file_path = resolve_session_file(path)
    kept = KeptBodies(keep, keep_budget) if keep and KEEP_PARSED_BODIES else None
    with _open_read_only(file_path) as stream, paused_gc(kept is not None):
        typed = kept is None and typed_lane_pays(os.fstat(stream.fileno()).st_size)
        index = index_stream(stream.read, chunk_size=chunk_size, kept=kept, typed=typed)
    return OpenSession(path=file_path, index=index, kept=kept)


def _open_read_only(path: Path) -> IO[bytes]:
    """The session file for reading: a regular file, opened without blocking (a FIFO or a
    device that merely claims a name never hangs or floods a reader), else PATH_NOT_FOUND."""
    try:
        fd = _fsutil.open_regular(path, follow=True)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be opened") from None
    return _GuardedReader(io.FileIO(fd, "rb"))  # the caller closes it


class _GuardedReader(io.BufferedReader):
    """A file whose read errors (EIO from ``/proc/self/mem``, EAGAIN from ``/proc/kmsg``) are
    PATH_NOT_FOUND: the path names nothing that can be read as a session."""

    def read(self, size: int | None = -1, /) -> bytes:
        try:
            data = super().read(size)
        except OSError:
            data = None
        if data is None:  # EAGAIN on a non-blocking descriptor: not a regular file after all
            raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be read")
        return data
