"""``run -j N``: the scheduling of a parallel run, apart from what the jobs do.

Rule 1: a run's results, progress and exit status are a serial run's. Jobs start in the order
:func:`start_order` gives, but each result is handed on in plan order (:class:`InOrder`), so a
report, a progress line and a verdict never depend on which job finished first.

Rule 2: an exclusive job runs alone. It starts only when nothing else runs, and nothing starts
while it runs (:class:`Board`); a harness check whose processes race says so in its registry
row. An *apart* job runs beside ordinary jobs but never beside another apart job: a fixture
case whose step waits on a clock or limits a resource (:func:`case_is_apart`). Its verdict
cannot depend on a neighbour: the runner holds the lock for the whole step, the file size
limit is the adapter process's own, each lane has its own sandbox; and its lock wait sleeps,
so the other lanes keep the cores busy meanwhile (running such cases alone left a core idle
for 5 s of a 10 s run at -j 2). One at a time keeps the sleeping lanes to one.

Rule 3: longest first. Exclusive jobs go first (they hold the whole machine, so they are
cheapest before the long checks start), then the rest by expected cost, most expensive first
(run/_shards.expected_cost), apart jobs first among equal costs (their waits then overlap the
others' work rather than the end of the run), then plan order: a list schedule by longest
processing time.

:class:`Board` and :class:`InOrder` are plain state; :func:`run_jobs` is the edge that drives
them from ``lanes`` threads; a lane thread may hand its jobs on to a lane process of its own
(run/_lane_process.py), which is how the runner's own work per case runs on several cores.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..cases._load import Case

__all__ = [
    "APART_ARGS",
    "APART_CONDITIONS",
    "Board",
    "InOrder",
    "Job",
    "case_is_apart",
    "default_jobs",
    "run_jobs",
    "start_order",
]

R = TypeVar("R")

# The step conditions (docs/implementers/fixtures.md, "Harness conditions") that wait on a clock or
# limit a resource: a held lock is waited for until a deadline (APP-5, APP-6, CAP-19), a file size
# limit (RLIMIT_FSIZE) gives a real EFBIG. Each makes its case apart (Rule 2).
APART_CONDITIONS: frozenset[str] = frozenset({"holdLock", "fileSizeLimit"})
# Step arguments that set a deadline inside the implementation (lockTimeout, APP-5).
APART_ARGS: frozenset[str] = frozenset({"lockTimeout"})


def case_is_apart(case: Case) -> bool:
    """Whether a fixture case runs apart from the others of its kind (Rule 2): derived from its
    manifest, which is the only way a case can hold a lock, limit a file size or set a
    deadline."""
    return any(
        APART_CONDITIONS & (step.harness or {}).keys() or APART_ARGS & step.args.keys()
        for step in case.steps
    )


def default_jobs() -> int:
    """The CPUs this process may use (its affinity mask), else the machine's, else 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class Job:
    """One case or check of the plan: ``index`` is its place in plan order (0-based)."""

    index: int
    key: str
    cost: float
    exclusive: bool = False  # runs alone (Rule 2)
    apart: bool = False  # never beside another apart job (Rule 2)


def start_order(jobs: Sequence[Job]) -> list[Job]:
    """Rule 3: exclusive jobs first, then longest first, apart ones first among equal costs;
    then plan order."""
    return sorted(jobs, key=lambda job: (not job.exclusive, -job.cost, not job.apart, job.index))


class Board:
    """Which job may start now (Rule 2). In start order, with one exception: while an apart job
    runs, a later ordinary job may overtake an apart job that waits (which is then first again
    once the running one is done, so it is never starved). An exclusive job is never
    overtaken."""

    def __init__(self, order: Sequence[Job]) -> None:
        self._pending = deque(order)
        self._running = 0
        self._exclusive_running = False
        self._apart_running = False
        self.stopped = False  # stop(): the results of the running jobs are not wanted

    @property
    def empty(self) -> bool:
        return not self._pending

    def take(self) -> Job | None:
        """The next job, now started; None while it has to wait (or when none is left)."""
        if self._exclusive_running:
            return None
        for position, job in enumerate(self._pending):
            if job.exclusive and self._running:
                return None  # nothing behind an exclusive job starts before it
            if job.apart and self._apart_running:
                continue
            del self._pending[position]
            self._running += 1
            self._exclusive_running = job.exclusive
            self._apart_running = self._apart_running or job.apart
            return job
        return None

    def done(self, job: Job) -> None:
        self._running -= 1
        if job.exclusive:
            self._exclusive_running = False
        if job.apart:
            self._apart_running = False

    def drop(self) -> None:
        """Start nothing more (a fault): what runs finishes."""
        self._pending.clear()

    def stop(self) -> None:
        """Start nothing more (a signal): what runs is cut short, its results are not wanted."""
        self._pending.clear()
        self.stopped = True


class InOrder(Generic[R]):
    """Rule 1: results in, handed on in plan order. ``reached(index)`` is told when the plan
    reaches a job whose result is not there yet or is about to be handed on (the progress
    line's "running"), ``deliver(index, result)`` then gets each result in order."""

    def __init__(self, size: int, deliver: Callable[[int, R], None],
                 reached: Callable[[int], None] | None = None, first: int = 0) -> None:
        self._size = size
        self._deliver = deliver
        self._reached = reached
        self._waiting: dict[int, R] = {}
        self._next = first  # the results before it were handed on already
        self._announced = -1

    @property
    def handed_on(self) -> int:
        return self._next

    def begin(self) -> None:
        """Before any result: the plan reaches its first job."""
        self._announce()

    def add(self, index: int, result: R) -> None:
        self._waiting[index] = result
        while self._next in self._waiting:
            self._announce()
            self._deliver(self._next, self._waiting.pop(self._next))
            self._next += 1
            self._announce()

    def _announce(self) -> None:
        if (self._reached is not None and self._announced < self._next < self._size):
            self._announced = self._next
            self._reached(self._next)


def run_jobs(
    jobs: Sequence[Job],
    lanes: int,
    work: Callable[[int, Job], R],
    deliver: Callable[[int, R], None],
    reached: Callable[[int], None] | None = None,
    stop_running: Callable[[], None] | None = None,
) -> None:
    """Run ``work(lane, job)`` for every job on ``lanes`` threads (lane 0..lanes-1: a caller can
    keep one adapter per lane); results go to ``deliver`` in plan order. Job indexes are
    consecutive, possibly past 0 (the first jobs of the plan ran already).

    The first exception of a job stops the run: nothing more starts, what runs finishes, the
    exception is raised here. A KeyboardInterrupt of the waiting thread (a signal,
    cli/_run_signals.py) starts nothing more, calls ``stop_running`` to cut the running jobs
    short, hands on none of their results (a job cut short proves nothing) and is raised once
    the lanes have ended."""
    board = Board(start_order(jobs))
    changed = threading.Condition()
    first = min((job.index for job in jobs), default=0)
    ordered: InOrder[R] = InOrder(first + len(jobs), deliver, reached, first)
    failures: list[BaseException] = []

    def lane_loop(lane: int) -> None:
        while True:
            with changed:
                while (job := board.take()) is None and not board.empty:
                    changed.wait()
                if job is None:
                    return
            try:
                result = work(lane, job)
            except BaseException as exc:  # handed to the waiting thread, which raises it
                with changed:
                    failures.append(exc)
                    board.drop()
                    board.done(job)
                    changed.notify_all()
                return
            with changed:
                board.done(job)
                if not board.stopped:
                    ordered.add(job.index, result)
                changed.notify_all()

    with changed:
        ordered.begin()
    threads = [threading.Thread(target=lane_loop, args=(lane,), name=f"persyk-lane-{lane}",
                                daemon=True) for lane in range(max(1, min(lanes, len(jobs))))]
    for thread in threads:
        thread.start()
    try:
        _join(threads)
    except KeyboardInterrupt:
        _cut_short(board, changed, threads, stop_running)
        raise
    if failures:
        raise failures[0]


def _cut_short(board: Board, changed: threading.Condition, threads: Sequence[threading.Thread],
               stop_running: Callable[[], None] | None) -> None:
    """A signal: nothing more starts, the running jobs are cut short, their lanes end."""
    with changed:
        board.stop()
        changed.notify_all()
    if stop_running is not None:
        stop_running()
    _join(threads)


def _join(threads: Sequence[threading.Thread]) -> None:
    for thread in threads:
        while thread.is_alive():
            thread.join(0.2)  # a timed join, so that Ctrl-C reaches this thread
