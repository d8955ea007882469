"""Live session state: appends in a long-lived process stay incremental (APP-5, APP-7).

APP-7 asks every mutation to validate the committed file under the lock. Re-reading the whole
file each time makes an append cost grow with the session, so this module keeps, per process,
what the last mutation validated -- the index builder (never built, so it can keep going), the
validated byte length and the final bytes of the last record -- keyed by the file's
``(st_dev, st_ino)``, with the file's descriptor held open so that the inode cannot be freed and
its number reused by another file while the state is cached (at most MAX_LIVE_SESSIONS
descriptors per process). Under the session lock the state is checked against a fresh ``fstat``:

* same identity, same size, same ``ctime`` and the same last-record bytes: reuse it;
* the file grew (another process appended under the lock): validate and index only the new
  bytes, with the same record, schema and graph rules, continuing the builder;
* anything else (shrunk, other inode, changed bytes, no state): validate the whole file again.

A state is taken out of the cache while a mutation uses it and put back only after that mutation
succeeded (its write fsynced, or nothing to write), so any failure -- a write or fsync error, a
fault, an exception -- drops it. The cache never acknowledges anything: acknowledgement still
follows the fsync of this append (APP-11).

The cache serves every engine (``_engine``): it is an algorithm (validate only what another
writer appended), not a faster way to do the same work, and without it the readable engine's
python-jsonschema (about a millisecond an entry) makes every append cost a full validation, so
concurrent writers time out on the lock (harness case H-102). A state validated through one
engine is the same state through another (the engines agree), so the cache is keyed by file
only.
"""

from __future__ import annotations

import enum
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from .. import _fsutil
from .._errors import Code, Diagnostic, UsageError
from ._engine import Engine, ParseRecord
from ._feed import feed_lines
from ._index import EntryMeta, IndexBuilder
from ._records import parse_record
from ._store import index_stream

__all__ = [
    "MAX_LIVE_SESSIONS",
    "TAIL_PROBE_BYTES",
    "LiveFile",
    "LiveSession",
    "Refresh",
    "forget_live_sessions",
    "index_more",
    "open_live",
    "plan_refresh",
]

# How many sessions one process keeps state for; the least recently used is dropped first.
MAX_LIVE_SESSIONS: Final = 32
# The external-rewrite probe compares at most this many final bytes of the last record.
TAIL_PROBE_BYTES: Final = 64 * 1024

Identity = tuple[int, int]


@dataclass(frozen=True, slots=True)
class LiveSession:
    """The validated state of one session file, as this process last left it.

    ``size`` ends right after an LF and every line before it is valid (APP-7); ``tail`` is the
    final bytes of the last record (at most TAIL_PROBE_BYTES, LF included); ``builder`` holds
    the committed graph and is advanced by the planner.
    """

    fd: int  # held open while cached, so the inode (and the key) cannot be reused
    identity: Identity
    size: int
    ctime_ns: int
    tail: bytes
    builder: IndexBuilder

    @property
    def next_line(self) -> int:
        # Blank lines (REC-15) count as lines but hold no entry.
        return self.builder.lines + 1


class Refresh(enum.Enum):
    REUSE = "reuse"
    EXTEND = "extend"
    FULL = "full"


class Cached(Protocol):
    """What :func:`plan_refresh` needs of a cached state (this module's and ``_read_cache``'s)."""

    @property
    def identity(self) -> Identity: ...
    @property
    def size(self) -> int: ...
    @property
    def ctime_ns(self) -> int: ...


def plan_refresh(
    cached: Cached | None, identity: Identity, size: int, ctime_ns: int
) -> Refresh:
    """What a cached state is still good for, given a fresh ``fstat`` (the probes follow)."""
    if cached is None or cached.identity != identity or size < cached.size:
        return Refresh.FULL
    if size == cached.size:
        # ctime cannot be set by a caller: a change at equal size is a rewrite in place.
        return Refresh.REUSE if ctime_ns == cached.ctime_ns else Refresh.FULL
    return Refresh.EXTEND


def index_more(
    builder: IndexBuilder,
    read: Callable[[int], bytes],
    *,
    first_line: int,
    start_offset: int,
    parse: ParseRecord = parse_record,
) -> Diagnostic | None:
    """Feed the lines ``read(n)`` yields into ``builder`` as lines ``first_line``... starting at
    byte ``start_offset``; stop at and return the first finding.

    The same per-line rules as a full read (``_feed.feed_lines`` serves both).
    """
    for found in feed_lines(builder, read, parse=parse, first_line=first_line,
                            start_offset=start_offset):
        if found:
            return found[0]
    return None


# --- the per-process cache ---------------------------------------------------------------------

_guard = threading.Lock()
_states: dict[Identity, LiveSession] = {}


def _take(identity: Identity) -> LiveSession | None:
    with _guard:
        return _states.pop(identity, None)


def _keep(state: LiveSession) -> None:
    with _guard:
        replaced = _states.pop(state.identity, None)
        _states[state.identity] = state  # insertion order is recency
        evicted = [replaced] if replaced is not None and replaced.fd != state.fd else []
        while len(_states) > MAX_LIVE_SESSIONS:
            evicted.append(_states.pop(next(iter(_states))))
    for old in evicted:
        os.close(old.fd)


def forget_live_sessions() -> None:
    """Drop every cached state and close its descriptor (the next mutation of each session
    validates the whole file again)."""
    with _guard:
        dropped = list(_states.values())
        _states.clear()
    for state in dropped:
        os.close(state.fd)


# --- the I/O shell -----------------------------------------------------------------------------


class _Reader:
    """``read(n)`` over a descriptor from a position, by ``pread`` (the offset is never shared)."""

    def __init__(self, fd: int, position: int) -> None:
        self._fd = fd
        self.position = position

    def __call__(self, size: int) -> bytes:
        data = os.pread(self._fd, size, self.position)
        self.position += len(data)
        return data


class LiveFile:
    """A session file opened for a mutation under the session lock.

    ``state`` is the validated live state, or None when the committed file breaks a read-phase
    rule; then ``fault_line`` is the line of its first fault (APP-7). Only :meth:`keep` and
    :meth:`after_write` put a state back into the cache; otherwise the descriptor is closed when
    the mutation ends.
    """

    def __init__(self, fd: int, cached: LiveSession | None, engine: Engine) -> None:
        self.fd = fd
        self._cached = cached
        self._engine = engine
        self.state: LiveSession | None = None
        self.fault_line = 1
        self.kept = False

    def load(self, entry: EntryMeta) -> dict[str, Any]:
        """The committed body of ``entry``, read by its indexed position (one ``pread``)."""
        return self._engine.parse_record(self.load_bytes(entry), line=entry.line)

    def load_bytes(self, entry: EntryMeta) -> bytes:
        """The committed bytes of ``entry`` (its LF excluded), by one ``pread``."""
        data = os.pread(self.fd, entry.length, entry.offset)
        if len(data) != entry.length:
            raise UsageError(Code.PATH_NOT_FOUND, "the session file shrank while being read")
        return data

    def keep(self, state: LiveSession) -> None:
        """Cache ``state``: the file holds exactly what it describes."""
        self.state = state
        self.kept = True
        _keep(state)

    def after_write(self, state: LiveSession, data: bytes) -> None:
        """Keep ``state`` advanced past ``data``, which this mutation wrote and fsynced."""
        try:
            stat = os.fstat(self.fd)
        except OSError:
            return  # the write is acknowledged regardless; the next mutation validates all
        size = state.size + len(data)
        if stat.st_size != size:
            return  # someone wrote without the lock: trust nothing, validate all next time
        last = data.rfind(b"\n", 0, len(data) - 1) + 1
        tail = data[max(last, len(data) - TAIL_PROBE_BYTES):]
        self.keep(LiveSession(self.fd, state.identity, size, stat.st_ctime_ns, tail, state.builder))

    def refresh(self) -> None:
        """Bring ``state`` up to date with the file (see the module docstring)."""
        stat = os.fstat(self.fd)
        identity = (stat.st_dev, stat.st_ino)
        cached = self._cached if self._cached is not None and self._cached.fd == self.fd else None
        decision = plan_refresh(cached, identity, stat.st_size, stat.st_ctime_ns)
        if cached is not None and decision is not Refresh.FULL and not self._tail_matches(cached):
            decision = Refresh.FULL
        if cached is not None and decision is Refresh.REUSE:
            self.state = cached
        elif cached is not None and decision is Refresh.EXTEND:
            self._extend(cached, stat.st_ctime_ns)
        else:
            self._validate_all(identity, stat.st_ctime_ns)

    def _tail_matches(self, cached: LiveSession) -> bool:
        start = cached.size - len(cached.tail)
        return os.pread(self.fd, len(cached.tail), start) == cached.tail

    def _extend(self, cached: LiveSession, ctime_ns: int) -> None:
        # Only the bytes another writer appended since our last mutation (APP-7, incrementally).
        read = _Reader(self.fd, cached.size)
        fault = index_more(
            cached.builder, read, first_line=cached.next_line, start_offset=cached.size,
            parse=self._engine.parse_record,
        )
        if fault is not None:
            self.fault_line = fault.line if fault.line is not None else 1
            return
        self.state = self._settled(cached.identity, read.position, ctime_ns, cached.builder)

    def _validate_all(self, identity: Identity, ctime_ns: int) -> None:
        read = _Reader(self.fd, 0)
        index = index_stream(read, engine=self._engine)
        if not index.valid:
            first = index.diagnostics[0] if index.diagnostics else None
            self.fault_line = first.line if first is not None and first.line is not None else 1
            return
        builder = IndexBuilder.from_index(index, schema=self._engine.schema)
        self.state = self._settled(identity, read.position, ctime_ns, builder)

    def _settled(
        self, identity: Identity, size: int, ctime_ns: int, builder: IndexBuilder
    ) -> LiveSession:
        last = builder.get(builder.last_entry_id) if builder.last_entry_id is not None else None
        record = (last.length + 1) if last is not None else size  # else the header is the file
        probe = min(record, TAIL_PROBE_BYTES)
        tail = os.pread(self.fd, probe, size - probe)
        return LiveSession(self.fd, identity, size, ctime_ns, tail, builder)


def _open(file: Path) -> int:
    try:
        return _fsutil.open_read_append(file)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be opened") from None


@contextmanager
def open_live(file: Path, engine: Engine) -> Iterator[LiveFile]:
    """Open ``file`` for a mutation and bring its live state up to date. Call under the lock.

    A cached state is used only if ``file`` still names the inode it holds open; holding it
    open is what makes ``(st_dev, st_ino)`` a safe key (an inode in use is never reused).
    """
    try:
        named = os.stat(file)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be opened") from None
    cached = _take((named.st_dev, named.st_ino))
    live = LiveFile(cached.fd if cached is not None else _open(file), cached, engine)
    try:
        live.refresh()
        yield live
    finally:
        if not live.kept:
            os.close(live.fd)
