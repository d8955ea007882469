"""What a long-lived reader keeps between reads of a session (CTX-20, CTX-24).

The contract demands the whole session be valid before anything is projected (CTX-20), so a
reader that validated the file from scratch for every page made a walk of N entries in pages
of P cost O(N^2 / P). A :class:`ReadCache` keeps, per process, what the last read validated --
the built index (entry offsets included), the validated byte length and the first and final
bytes of that prefix -- keyed by the file's ``(st_dev, st_ino)``, with a read-only descriptor
held open so the inode (and so the key) cannot be reused by another file while cached. Each
read checks the state against a fresh ``fstat`` and two bounded probes:

* same identity, same size, same ``ctime``, same head and tail bytes: reuse the index;
* the file grew and the head and tail bytes are unchanged: validate only the new bytes, with
  the same per-line rules (``_feed.feed_lines``), continuing the index (as ``_live`` does for
  appends). Findings there (a torn tail, a bad record) make the session invalid exactly as a
  full validation would; the valid prefix stays cached, so a tail being written is validated
  again from where the prefix ends once it is complete;
* anything else (another inode at the path, a shrunk file, a changed head or tail byte, a
  rewrite at equal size, which changes ``ctime``): validate the whole file again.

Only a valid session is cached: an invalid one is validated again on every read (its first
fault is the answer, CTX-20). A fresh process validates once, fully. What is not detected:
a rewrite in place that keeps the same inode, the same head and tail bytes at the same
positions and grows or keeps the size while changing only bytes between them -- the same limit
as ``_live``; writers append, or replace the file (a new inode), and both are detected.

The cache is an algorithm, not a faster twin of a readable one, so it serves every engine
(``_engine``): a state remembers the engine that validated it and is extended through it;
tests/reference/fast/test_read_cache.py holds it to the pages and errors of a fresh reader.
:class:`ReadCounters` counts the bytes each read validated, probed and loaded, so that tests
prove the cost of a page by counting, never by timing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from .. import _fsutil
from .._errors import Code, ContractError, UsageError
from ._engine import READABLE_ENGINE, Engine
from ._feed import CHUNK_SIZE, NO_BODIES
from ._index import EntryMeta, IndexBuilder, SessionIndex

# One refresh plan for both caches: what an fstat says a cached state is still good for.
from ._live import Identity, Refresh, plan_refresh
from ._store import index_stream, resolve_session_file

__all__ = [
    "HEAD_PROBE_BYTES",
    "MAX_CACHED_SESSIONS",
    "TAIL_PROBE_BYTES",
    "CachedSession",
    "ReadCache",
    "ReadCounters",
    "Refresh",
    "Snapshot",
    "plan_refresh",
]

# How many sessions one cache keeps (one descriptor each); the least recently read goes first.
MAX_CACHED_SESSIONS: Final = 16
# The probes that tell a grown file from a rewritten one: the first bytes (the header) and the
# final bytes of the validated prefix (the last record), each bounded, so a page costs them at
# most whatever the session's size.
HEAD_PROBE_BYTES: Final = 4096
TAIL_PROBE_BYTES: Final = 64 * 1024

@dataclass(frozen=True, slots=True)
class CachedSession:
    """The validated state of one session file, as a read last left it.

    ``size`` ends right after an LF and every line before it is valid; ``head`` and ``tail``
    are the first and final bytes of that prefix (at most the probe sizes).
    """

    fd: int  # held open while cached, so the inode (and the key) cannot be reused
    identity: Identity
    size: int
    ctime_ns: int
    head: bytes
    tail: bytes
    index: SessionIndex
    engine: Engine = READABLE_ENGINE  # the one that validated it, which extends it


@dataclass(slots=True)
class ReadCounters:
    """What the reads of one cache cost, in units a test can bound (mutable on purpose: an
    instrument, not a value)."""

    full_validations: int = 0
    extensions: int = 0
    reuses: int = 0
    bytes_validated: int = 0  # bytes fed through the read rules (REC, HDR, ENV, TREE ...)
    bytes_probed: int = 0  # head and tail bytes compared with the cached state
    bytes_loaded: int = 0  # entry bodies read and parsed for the caller


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A session as one read sees it: its index, and a loader of entry bodies by position."""

    index: SessionIndex
    load: Callable[[EntryMeta], dict[str, Any]]


@dataclass(slots=True)
class _Lease:
    """One read's use of a descriptor and, when the session is valid, the state to keep."""

    fd: int
    index: SessionIndex
    # Put back into the cache once the read succeeded (its descriptor is ``fd``); without
    # it, or when the read fails, ``fd`` is closed.
    keep: CachedSession | None
    # Set by the body loader when a body no longer reads as validated (changed underneath).
    spoiled: bool = False


class ReadCache:
    """A per-process cache of validated sessions; see the module docstring.

    Thread-safe: a read takes its session's state out of the cache and puts it back when it
    is done, so two threads never share a state (the second validates on its own).
    """

    def __init__(self, capacity: int = MAX_CACHED_SESSIONS) -> None:
        self.capacity = capacity
        self.counters = ReadCounters()
        self._guard = threading.Lock()
        self._states: dict[Identity, CachedSession] = {}

    # --- the cache -----------------------------------------------------------------------------

    def _take(self, identity: Identity) -> CachedSession | None:
        with self._guard:
            return self._states.pop(identity, None)

    def _keep(self, state: CachedSession) -> None:
        with self._guard:
            evicted = []
            replaced = self._states.pop(state.identity, None)
            if replaced is not None and replaced.fd != state.fd:
                evicted.append(replaced)
            self._states[state.identity] = state  # insertion order is recency
            while len(self._states) > self.capacity:
                evicted.append(self._states.pop(next(iter(self._states))))
        for old in evicted:
            os.close(old.fd)

    def forget(self) -> None:
        """Drop every cached state and close its descriptor."""
        with self._guard:
            dropped = list(self._states.values())
            self._states.clear()
        for state in dropped:
            os.close(state.fd)

    def __len__(self) -> int:
        return len(self._states)

    # --- a read --------------------------------------------------------------------------------

    @contextmanager
    def session(
        self, path: str | os.PathLike[str], engine: Engine = READABLE_ENGINE
    ) -> Iterator[Snapshot]:
        """The session at ``path``, validated through ``engine`` (from the cache where it still
        holds), with a body loader valid inside the ``with`` block. Reading never writes
        (CTX-19)."""
        file = resolve_session_file(path)
        try:
            named = os.stat(file)
        except OSError:
            raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be opened") from None
        lease = self._refresh(file, self._take((named.st_dev, named.st_ino)), engine)
        try:
            yield Snapshot(lease.index, self._loader(lease, engine))
        except ContractError:
            # An answer about a file that is what the state says (the session's first fault,
            # a cursor that is not ours): the state still holds, unless a body said otherwise.
            if lease.spoiled:
                os.close(lease.fd)
            else:
                self._settle(lease)
            raise
        except BaseException:
            os.close(lease.fd)  # a failed read (a file that shrank, say) keeps nothing
            raise
        self._settle(lease)

    def _settle(self, lease: _Lease) -> None:
        if lease.keep is not None:
            self._keep(lease.keep)
        else:
            os.close(lease.fd)

    def _loader(self, lease: _Lease, engine: Engine) -> Callable[[EntryMeta], dict[str, Any]]:
        counters = self.counters

        def load(entry: EntryMeta) -> dict[str, Any]:
            data = _pread(lease.fd, entry.length, entry.offset)
            counters.bytes_loaded += len(data)
            if len(data) != entry.length:
                raise UsageError(Code.PATH_NOT_FOUND, "the session file shrank while being read")
            try:
                return engine.parse_record(data, line=entry.line)
            except ContractError:
                lease.spoiled = True  # the bytes changed since they were validated
                raise

        return load

    def _refresh(
        self, file: os.PathLike[str], cached: CachedSession | None, engine: Engine
    ) -> _Lease:
        if cached is not None:
            try:
                stat = os.fstat(cached.fd)
                decision = self.decide(cached, (stat.st_dev, stat.st_ino), stat.st_size,
                                       stat.st_ctime_ns)
                if decision is Refresh.EXTEND:
                    return self._extend(cached, stat.st_ctime_ns)
            except BaseException:
                os.close(cached.fd)  # taken out of the cache: nobody else closes it
                raise
            if decision is Refresh.REUSE:
                self.counters.reuses += 1
                return _Lease(cached.fd, cached.index, cached)
            os.close(cached.fd)
        return self._validate_all(file, engine)

    def decide(
        self, cached: CachedSession, identity: Identity, size: int, ctime_ns: int
    ) -> Refresh:
        """:func:`plan_refresh`, then the head and tail probes for a state it would keep."""
        decision = plan_refresh(cached, identity, size, ctime_ns)
        if decision is not Refresh.FULL and not self.probes_match(cached):
            return Refresh.FULL
        return decision

    def probes_match(self, cached: CachedSession) -> bool:
        """Whether the first and final bytes of the validated prefix are still the same."""
        head = _pread(cached.fd, len(cached.head), 0)
        tail = _pread(cached.fd, len(cached.tail), cached.size - len(cached.tail))
        self.counters.bytes_probed += len(head) + len(tail)
        return head == cached.head and tail == cached.tail

    def _extend(self, cached: CachedSession, ctime_ns: int) -> _Lease:
        # Only the bytes appended since the validated prefix, with the rules of a full read.
        self.counters.extensions += 1
        read = _CountingReader(cached.fd, cached.size, self.counters)
        engine = cached.engine
        builder = IndexBuilder.from_index(cached.index, schema=engine.schema)
        for _ in engine.feed_lines(
            builder, read, parse=engine.parse_record, chunk_size=CHUNK_SIZE,
            first_line=cached.index.lines + 1, start_offset=cached.size, kept=NO_BODIES,
        ):
            pass
        index = builder.build()
        if not index.valid:
            # The prefix is still valid (the probes said so): keep it for when the appended
            # bytes are complete, and answer with the fault they hold now.
            return _Lease(cached.fd, index, cached)
        return _Lease(cached.fd, index, self._settled(cached.fd, cached.identity,
                                                      read.position, ctime_ns, index, engine))

    def _validate_all(self, file: os.PathLike[str], engine: Engine) -> _Lease:
        self.counters.full_validations += 1
        fd = _open(file)
        try:
            stat = os.fstat(fd)
            read = _CountingReader(fd, 0, self.counters)
            index = index_stream(read, engine=engine)
        except BaseException:
            os.close(fd)
            raise
        if not index.valid:
            return _Lease(fd, index, None)
        state = self._settled(fd, (stat.st_dev, stat.st_ino), read.position,
                              stat.st_ctime_ns, index, engine)
        return _Lease(fd, index, state)

    def _settled(
        self, fd: int, identity: Identity, size: int, ctime_ns: int, index: SessionIndex,
        engine: Engine,
    ) -> CachedSession:
        head = _pread(fd, min(size, HEAD_PROBE_BYTES), 0)
        probe = min(size, TAIL_PROBE_BYTES)
        tail = _pread(fd, probe, size - probe)
        return CachedSession(fd, identity, size, ctime_ns, head, tail, index, engine)


class _CountingReader:
    """``read(n)`` over a descriptor from a position, by ``pread``, counting the bytes."""

    def __init__(self, fd: int, position: int, counters: ReadCounters) -> None:
        self._fd = fd
        self._counters = counters
        self.position = position

    def __call__(self, size: int) -> bytes:
        data = _pread(self._fd, size, self.position)
        self.position += len(data)
        self._counters.bytes_validated += len(data)
        return data


def _pread(fd: int, size: int, offset: int) -> bytes:
    # A read error (EIO, EAGAIN from a file that only claims to be regular) means the path
    # names nothing that can be read as a session, as in ``_store``.
    try:
        return os.pread(fd, size, offset)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be read") from None


def _open(file: os.PathLike[str]) -> int:
    try:
        return _fsutil.open_regular(file, follow=True)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the session file cannot be opened") from None
