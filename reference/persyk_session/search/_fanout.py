"""Spreading a search over the machine's cores: sessions scanned by worker processes, the
outcomes handed back in the order a serial scan yields them (SRCH-15, SRCH-16).

The order is the contract, not a detail: a page's results, its cursor and its diagnostics are
decided by consuming outcomes in sort order (:func:`._discovery.search`), so the workers' outcomes
are yielded strictly in submission order, never in completion order. Memory stays bounded: at
most ``2 * workers`` batches are in flight, each a few sessions, and every worker holds one
session's index at a time. Below a threshold (few sessions or few bytes), with one usable CPU,
in the readable mode, or with ``PERSYK_SEARCH_WORKERS=1``, the scan stays in this process.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

from .._mode_name import MODE

__all__ = ["SERIAL", "FanOut", "batches", "fan_out_from_env", "ordered_map"]

WORKERS_ENV: Final = "PERSYK_SEARCH_WORKERS"
# A worker pool costs a fork per worker and a round trip per batch: worth it only for a scan
# of many sessions or many bytes (measured: docs/results/2026-12-03-search-profile.md).
MIN_SESSIONS: Final = 32
MIN_BYTES: Final = 4 << 20
BATCH_SESSIONS: Final = 16
BATCH_BYTES: Final = 2 << 20

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class FanOut:
    """How many workers a scan may use, and from which size on it uses them."""

    workers: int
    min_sessions: int = MIN_SESSIONS
    min_bytes: int = MIN_BYTES
    batch_sessions: int = BATCH_SESSIONS
    batch_bytes: int = BATCH_BYTES

    def parallel(self, sessions: int, total_bytes: int) -> bool:
        return self.workers > 1 and sessions >= self.min_sessions and (
            total_bytes >= self.min_bytes
        )


SERIAL: Final = FanOut(1)


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def fan_out_from_env() -> FanOut:
    """``PERSYK_SEARCH_WORKERS`` (a positive count; 1 forces the serial scan), else the usable
    CPUs. The readable mode is always serial: it is the plain reference of what search does."""
    if MODE == "readable":
        return SERIAL
    given = os.environ.get(WORKERS_ENV)
    if given:
        try:
            count = int(given)
        except ValueError:
            count = 1
        return FanOut(max(1, count))
    return FanOut(_usable_cpus())


def batches(
    items: Sequence[T], sizes: Sequence[int], plan: FanOut
) -> Iterator[tuple[T, ...]]:
    """Consecutive runs of ``items``, each of at most ``plan.batch_sessions`` items or about
    ``plan.batch_bytes``: few round trips, yet work for every worker."""
    run: list[T] = []
    run_bytes = 0
    for item, size in zip(items, sizes, strict=True):
        run.append(item)
        run_bytes += size
        if len(run) >= plan.batch_sessions or run_bytes >= plan.batch_bytes:
            yield tuple(run)
            run, run_bytes = [], 0
    if run:
        yield tuple(run)


def ordered_map(
    work: Callable[[tuple[T, ...]], list[R]], runs: Iterator[tuple[T, ...]], workers: int
) -> Iterator[R]:
    """``work(run)`` for every run in worker processes, the outcomes in submission order.

    Closing the iterator early (a page is full) cancels the batches not yet started."""
    # Imported here: a serial scan (and every other command) never loads multiprocessing.
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    # A forked worker flushes the standard streams it inherited when it ends: nothing the
    # parent has buffered (the adapter's replies) may be in them, or it would be written twice.
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    context = multiprocessing.get_context("fork")  # the workers inherit the imported package
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    in_flight: deque[Future[list[R]]] = deque()
    try:
        for run in runs:
            in_flight.append(pool.submit(work, run))
            if len(in_flight) >= 2 * workers:
                yield from in_flight.popleft().result()
        while in_flight:
            yield from in_flight.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
