"""The read side's I/O shell: find the session file, stream it into an index, read bodies.

Reading never modifies anything: files are opened read-only, no lock file is created, and a
damaged file is reported, never repaired (READ-1). The file is streamed in fixed-size chunks and
an over-limit line is skipped up to its LF without being accumulated, so memory stays bounded by
the record limit plus the index, whatever the file size.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ._errors import Code, ContractError, Diagnostic, UsageError
from ._records import MAX_RECORD_BYTES, parse_record
from ._session import EntryMeta, IndexBuilder, SessionIndex

__all__ = [
    "CHUNK_SIZE",
    "SESSION_FILE",
    "BodyReader",
    "OpenSession",
    "StreamedLine",
    "index_stream",
    "iter_lines",
    "open_session",
    "resolve_session_file",
]

SESSION_FILE = "session.jsonl"
CHUNK_SIZE = 1 << 20


def resolve_session_file(path: str | os.PathLike[str]) -> Path:
    """``path`` itself if it is a file, ``path/session.jsonl`` if it is a session directory."""
    candidate = Path(path)
    if candidate.is_dir():
        candidate = candidate / SESSION_FILE
    if candidate.is_file():
        return candidate
    raise UsageError(Code.PATH_NOT_FOUND, "no session file or session directory at the path")


@dataclass(frozen=True, slots=True)
class StreamedLine:
    """One physical line. ``data`` is None when the line was over the limit (not kept)."""

    line: int
    offset: int
    length: int  # bytes without the LF
    data: bytes | None
    terminated: bool


def iter_lines(
    read: Callable[[int], bytes], *, chunk_size: int = CHUNK_SIZE, limit: int = MAX_RECORD_BYTES
) -> Iterator[StreamedLine]:
    """Split the byte stream given by ``read(n)`` into LF-terminated lines.

    REC-3: a line longer than ``limit`` is counted but never held: its bytes are dropped as they
    arrive until its LF. A final piece without an LF comes out with ``terminated=False``.
    """
    line_no = 1
    start = 0  # file offset of the current line's first byte
    base = 0  # file offset of the current chunk's first byte
    parts: list[bytes] = []
    held = 0  # length of the current line so far, held or not
    over = False
    while chunk := read(chunk_size):
        pos = 0
        while True:
            nl = chunk.find(b"\n", pos)
            if nl < 0:
                rest = len(chunk) - pos
                if not over and held + rest > limit:
                    over = True
                    parts.clear()
                if not over and rest:
                    parts.append(chunk[pos:])
                held += rest
                break
            total = held + (nl - pos)
            if over or total > limit:
                yield StreamedLine(line_no, start, total, None, True)
            else:
                data = b"".join([*parts, chunk[pos:nl]]) if parts else chunk[pos:nl]
                yield StreamedLine(line_no, start, total, data, True)
            parts = []
            held = 0
            over = False
            line_no += 1
            start = base + nl + 1
            pos = nl + 1
        base += len(chunk)
    if held:
        yield StreamedLine(line_no, start, held, None if over else b"".join(parts), False)


def index_stream(read: Callable[[int], bytes], *, chunk_size: int = CHUNK_SIZE) -> SessionIndex:
    """Index the session whose bytes ``read(n)`` yields, applying every read-phase rule."""
    builder = IndexBuilder()
    seen_bytes = False
    for raw in iter_lines(read, chunk_size=chunk_size):
        seen_bytes = True
        if raw.length > MAX_RECORD_BYTES:
            # REC-3: over the limit, whether terminated or not (a limit is never a torn tail).
            builder.report(
                [
                    Diagnostic(
                        Code.RECORD_TOO_LARGE,
                        line=raw.line,
                        detail="the record is larger than 1 MiB",
                    )
                ]
            )
            continue
        if not raw.terminated or raw.data is None:
            # REC-1 / READ-1: a final record without LF is reported, never parsed or repaired.
            builder.report(
                [
                    Diagnostic(
                        Code.RECORD_UNTERMINATED,
                        line=raw.line,
                        detail="the last record has no terminating LF",
                    )
                ]
            )
            continue
        try:
            obj = parse_record(raw.data, line=raw.line)
        except ContractError as error:
            builder.report(list(error.diagnostics))
            continue
        builder.add_record(obj, line=raw.line, offset=raw.offset, length=raw.length)
    return builder.build(empty=not seen_bytes)


class BodyReader:
    """Reads entry bodies by position from one read-only descriptor; use as a context manager."""

    def __init__(self, path: Path) -> None:
        self._file: IO[bytes] = _open_read_only(path)

    def __call__(self, entry: EntryMeta) -> dict[str, Any]:
        self._file.seek(entry.offset)
        data = self._file.read(entry.length)
        if len(data) != entry.length:
            raise UsageError(Code.PATH_NOT_FOUND, "the session file shrank while being read")
        return parse_record(data, line=entry.line)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> BodyReader:
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

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.index.diagnostics

    @property
    def valid(self) -> bool:
        return self.index.valid

    def bodies(self) -> BodyReader:
        """A body loader with one open descriptor, for reading many entries."""
        return BodyReader(self.path)

    def read_entry(self, entry: EntryMeta) -> dict[str, Any]:
        with self.bodies() as load:
            return load(entry)


def open_session(path: str | os.PathLike[str], *, chunk_size: int = CHUNK_SIZE) -> OpenSession:
    """Resolve ``path``, stream its session file into an index, and keep the index only."""
    file_path = resolve_session_file(path)
    with _open_read_only(file_path) as stream:
        index = index_stream(stream.read, chunk_size=chunk_size)
    return OpenSession(path=file_path, index=index)


def _open_read_only(path: Path) -> IO[bytes]:
    try:
        return open(path, "rb")  # the caller closes it
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be opened") from None
