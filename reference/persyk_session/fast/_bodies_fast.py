"""The fast path of ``context``'s body reads: the bodies on the selected path parsed once.

``context`` projects the bodies on one path after validating every record (CTX-20). The readable
twin (``_store.BodyReader`` without a store) reads and parses each of them a second time, by
position; here the validating pass keeps what it parsed for the entries the projection may ask
for (:class:`KeptBodies`), within a budget, and the cyclic collector is paused while they are
held (:func:`paused_gc`). It is the fast engine's ``keep_bodies`` (``read/_engine.KeepBodies``);
the readable engine keeps none, and tests/reference/fast/test_context_one_pass.py holds both to the
same histories. No I/O.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Final

__all__ = ["KEPT_BODY_BUDGET", "KeptBodies", "keep_bodies", "paused_gc"]

# The record bytes whose parsed bodies one read may keep from its validating pass (see
# KeptBodies): a bound on memory whatever the session's size; bodies past it are read again.
KEPT_BODY_BUDGET: Final = 64 << 20


class KeptBodies:
    """The parsed bodies of committed entries of some types, kept from the validating pass.

    ``context`` projects the bodies on one path after validating every record (CTX-20); without
    this store each body on the path is read and parsed a second time. The store keeps what the
    validating parse produced for the entries it may be asked for, keyed by the record's byte
    offset (a committed entry's offset is unique), until the kept records' bytes reach
    ``budget``; an entry beyond that is read again by position, so memory stays bounded. Only a
    record the builder committed (no finding) is kept, so a body is never one that failed a
    rule. The readable engine keeps no body and reads every one again
    (tests/reference/fast/test_context_one_pass.py holds the two to the same histories).
    """

    def __init__(self, types: frozenset[str], budget: int = KEPT_BODY_BUDGET) -> None:
        self.types = types
        self.budget = budget
        self.kept_bytes = 0
        self._bodies: dict[int, dict[str, Any]] = {}

    def offer(self, obj: dict[str, Any], offset: int, length: int) -> None:
        """Keep ``obj``, a committed entry's parsed record, if its type is asked for and the
        budget allows."""
        if obj["type"] in self.types and self.kept_bytes + length <= self.budget:
            self._bodies[offset] = obj
            self.kept_bytes += length

    def get(self, offset: int) -> dict[str, Any] | None:
        return self._bodies.get(offset)

    def __len__(self) -> int:
        return len(self._bodies)

    def holding(self) -> AbstractContextManager[None]:
        """The cyclic collector is paused while the bodies are held (:func:`paused_gc`)."""
        return paused_gc()


def keep_bodies(types: frozenset[str]) -> KeptBodies:
    """A store for the bodies of ``types`` within :data:`KEPT_BODY_BUDGET`."""
    return KeptBodies(types)


@contextmanager
def paused_gc(pause: bool = True) -> Iterator[None]:
    """Run the block without the cyclic garbage collector (when ``pause``).

    Keeping parsed bodies grows the heap by tens of thousands of containers, and each automatic
    collection walks all of them again: at 100,000 entries the collector took about half of a
    ``context`` call. Parsed JSON holds no reference cycles, so reference counting frees it all
    the same; the collector resumes afterwards (it is not re-enabled if the caller had it off)."""
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
