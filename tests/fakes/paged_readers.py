"""Read caches (``persyk_session.read._read_cache``) each lacking exactly one guarantee, so that
tests/reference/fast/test_read_cache.py can show every one of its checks fails without the guarantee
it pins.
"""

from __future__ import annotations

import os

from persyk_session.read._read_cache import (
    CachedSession,
    Identity,
    ReadCache,
    Refresh,
    _Lease,
)


class TrustsGrowth(ReadCache):
    """Serves a grown file from the cached index without validating the appended bytes."""

    def _extend(self, cached: CachedSession, ctime_ns: int) -> _Lease:
        return _Lease(cached.fd, cached.index, cached)


class TakesAnyState(ReadCache):
    """Keys nothing by the file's identity: any cached state serves any path (a replaced
    file is read through the old inode's descriptor)."""

    def _take(self, identity: Identity) -> CachedSession | None:
        with self._guard:
            if not self._states:
                return None
            return self._states.pop(next(iter(self._states)))


class SkipsProbes(ReadCache):
    """Never compares the head and tail bytes: a file rewritten in place that grew is taken
    for a grown one."""

    def probes_match(self, cached: CachedSession) -> bool:
        return True


class KeepsTornTail(ReadCache):
    """Counts appended bytes as validated even when they end in a torn record, so the
    record's completion is validated from its middle."""

    def _extend(self, cached: CachedSession, ctime_ns: int) -> _Lease:
        lease = super()._extend(cached, ctime_ns)
        if lease.index.valid:
            return lease
        end = os.fstat(cached.fd).st_size
        torn = CachedSession(cached.fd, cached.identity, end, ctime_ns, cached.head,
                             os.pread(cached.fd, min(end, len(cached.tail)),
                                      end - min(end, len(cached.tail))), cached.index)
        return _Lease(cached.fd, lease.index, torn)


class RevalidatesEveryPage(ReadCache):
    """Correct, but validates the whole file for every read: a walk costs O(N^2 / P)."""

    def decide(
        self, cached: CachedSession, identity: Identity, size: int, ctime_ns: int
    ) -> Refresh:
        return Refresh.FULL


__all__ = [
    "KeepsTornTail",
    "RevalidatesEveryPage",
    "SkipsProbes",
    "TakesAnyState",
    "TrustsGrowth",
]
