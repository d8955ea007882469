"""The read side's I/O shell: find the session file, stream it into an index, read bodies.

Rule: reading never modifies anything (CTX-19, APP-1): files are opened read-only, no lock
file is created, and a damaged file is reported, never repaired (RCV-1). The file is streamed
in fixed-size chunks and an over-limit line is skipped up to its LF without being accumulated,
so memory stays bounded by the record limit plus the index, whatever the file size. The
per-line rules are ``_feed``'s; the engine passed in (``_engine``) parses, checks and feeds.
"""

from __future__ import annotations

import io
import os
import stat
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .. import _fsutil
from .._errors import Code, ContractError, Diagnostic, UsageError
from ._engine import READABLE_ENGINE, Engine, KeptBodies, ParseRecord, Read
from ._feed import CHUNK_SIZE, NO_BODIES
from ._index import EntryMeta, IndexBuilder, SessionIndex
from ._records import parse_record

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


def resolve_session_file(path: str | os.PathLike[str]) -> Path:
    """``path`` itself if it is a file, ``path/session.jsonl`` if it is a session directory."""
    # os.stat rather than Path.is_dir/is_file: this runs on every append (one or two stats).
    candidate = os.fspath(path)
    mode = _stat_mode(candidate)
    if mode is not None and stat.S_ISDIR(mode):
        candidate = os.path.join(candidate, SESSION_FILE)
        mode = _stat_mode(candidate)
    if mode is not None and stat.S_ISREG(mode):
        return Path(candidate)
    raise UsageError(Code.PATH_NOT_FOUND, "no session file or session directory at the path")


def _stat_mode(path: str) -> int | None:
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
    mode = _stat_mode(candidate)
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


def index_stream(
    read: Read, *, engine: Engine = READABLE_ENGINE, chunk_size: int = CHUNK_SIZE,
    kept: KeptBodies = NO_BODIES,
) -> SessionIndex:
    """Index the session whose bytes ``read(n)`` yields, applying every read-phase rule through
    ``engine`` (and offering ``kept`` every committed record)."""
    builder = IndexBuilder(engine.new_table(), schema=engine.schema)
    for _ in engine.feed_lines(
        builder, read, parse=engine.parse_record, chunk_size=chunk_size, first_line=1,
        start_offset=0, kept=kept,
    ):
        pass
    # HDR-1 (rev. 2): no line but blank ones (zero bytes included) is SESSION_EMPTY.
    return builder.build(empty=not builder.first_seen)


class BodyReader:
    """Reads entry bodies by position from one read-only descriptor; use as a context manager."""

    def __init__(
        self, path: Path, kept: KeptBodies = NO_BODIES, parse: ParseRecord = parse_record
    ) -> None:
        self._file: IO[bytes] = _open_read_only(path)
        self._kept = kept
        self._parse = parse
        self._holding = ExitStack()
        self.reads = 0  # bodies read and parsed again (the kept ones are not)

    def __call__(self, entry: EntryMeta) -> dict[str, Any]:
        body = self._kept.get(entry.offset)
        if body is not None:
            return body
        self.reads += 1
        self._file.seek(entry.offset)
        data = self._file.read(entry.length)
        if len(data) != entry.length:
            raise UsageError(Code.PATH_NOT_FOUND, "the session file shrank while being read")
        return self._parse(data, line=entry.line)

    def close(self) -> None:
        self._file.close()
        self._holding.close()

    def __enter__(self) -> BodyReader:
        # The kept bodies are held while the projection reads them (KeptBodies.holding).
        self._holding.enter_context(self._kept.holding())
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
    """A session file and its index. Bodies are read on demand, by position, unless ``kept``
    holds them from the validating pass."""

    path: Path
    index: SessionIndex
    kept: KeptBodies = NO_BODIES
    parse: ParseRecord = parse_record

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.index.diagnostics

    @property
    def valid(self) -> bool:
        return self.index.valid

    def bodies(self) -> BodyReader:
        """A body loader with one open descriptor, for reading many entries (the bodies kept
        from the validating pass are served without reading)."""
        return BodyReader(self.path, self.kept, self.parse)

    def read_entry(self, entry: EntryMeta) -> dict[str, Any]:
        with self.bodies() as load:
            return load(entry)


def open_session(
    path: str | os.PathLike[str], *, chunk_size: int = CHUNK_SIZE,
    keep: frozenset[str] = frozenset(), engine: Engine = READABLE_ENGINE,
) -> OpenSession:
    """Resolve ``path``, stream its session file into an index, and keep the index only --
    and whatever ``engine`` keeps of the bodies of entries of the ``keep`` types, which the
    caller is about to read (:class:`~._engine.KeepBodies`).

    Read-only: the file is opened for reading and nothing is created (APP-1, CTX-19); only
    session.jsonl is opened, never an asset, so an absent or different asset file never makes
    a session invalid (AST-8)."""
    file_path = resolve_session_file(path)
    kept = engine.keep_bodies(keep) if keep else NO_BODIES
    with _open_read_only(file_path) as stream, kept.holding():
        index = index_stream(stream.read, engine=engine, chunk_size=chunk_size, kept=kept)
    return OpenSession(path=file_path, index=index, kept=kept, parse=engine.parse_record)


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
