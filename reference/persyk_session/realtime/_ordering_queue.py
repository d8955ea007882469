"""The observation queue (CAP-11, CAP-12): work waiting for the writer, bounded. Sans-IO.

Observations are persisted in arrival order (RT-5); while the writer is blocked (a stalled disk)
they wait here. At most 512 observation jobs and 8 MiB of observation bytes wait at once; an
observation that would exceed either bound is a backpressure failure that halts capture visibly
(CAP-12) instead of being dropped (RT-37). Other work (publication, capture frames, finishing)
waits in the same line, in order, but only observations count against the bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ._ordering_model import OBSERVATION_BYTES, OBSERVATION_JOBS

__all__ = ["ObservationQueue"]

T = TypeVar("T")


@dataclass
class ObservationQueue(Generic[T]):
    """Work waiting while the writer is stalled, and the most it ever held (its peaks)."""

    stalled: bool = False
    held: list[T] = field(default_factory=list)
    jobs: int = 0
    bytes: int = 0
    peak_jobs: int = 0
    peak_bytes: int = 0

    def offer(self, work: T, size: int | None) -> list[T] | None:
        """Queue ``work`` (an observation of ``size`` bytes, or other work when None): what the
        writer may do now, in order, or None when an observation does not fit (CAP-11)."""
        if size is not None:
            if self.jobs + 1 > OBSERVATION_JOBS or self.bytes + size > OBSERVATION_BYTES:
                return None
            self.jobs += 1
            self.bytes += size
            self.peak_jobs = max(self.peak_jobs, self.jobs)
            self.peak_bytes = max(self.peak_bytes, self.bytes)
        self.held.append(work)
        return [] if self.stalled else self.resume()

    def stall(self) -> None:
        self.stalled = True

    def resume(self) -> list[T]:
        """The writer runs again: everything held is written, in order."""
        self.stalled = False
        held, self.held = self.held, []
        self.jobs = self.bytes = 0
        return held
