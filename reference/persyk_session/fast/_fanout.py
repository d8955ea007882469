"""Spreading a search over the machine's cores: sessions scanned by worker processes, the
outcomes handed back in the order a serial scan yields them (SRCH-15, SRCH-16).

The order is the contract, not a detail: a page's results, its cursor and its diagnostics are
decided by consuming outcomes in sort order (:func:`._discovery.search`), so the workers' outcomes
are yielded strictly in submission order, never in completion order. Memory stays bounded: at
most ``2 * workers`` batches are in flight, each a few sessions, and every worker holds one
session's index at a time. Below a threshold (few sessions or few bytes), with one usable CPU,
or with ``PERSYK_SEARCH_WORKERS=1``, the scan stays in this process. :class:`ParallelScan` is the
fast engine's ``fan_out`` (``read/_engine.SearchFanOut``); the readable engine always scans
serially, the plain reference of what search does.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

__all__ = ["SERIAL", "FanOut", "ParallelScan", "batches", "fan_out_from_env", "ordered_map"]

WORKERS_ENV: Final = "PERSYK_SEARCH_WORKERS"
# A worker pool costs a fork per worker and a round trip per batch: worth it only for a scan
# of many sessions or many bytes (measured: below 32 sessions or 4 MiB the forks cost more
# than they save).
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
    CPUs."""
    given = os.environ.get(WORKERS_ENV)
    if given:
        try:
            count = int(given)
        except ValueError:
            count = 1
        return FanOut(max(1, count))
    return FanOut(_usable_cpus())


@dataclass(frozen=True, slots=True)
class ParallelScan:
    """``work`` over runs of the items on ``plan``'s workers (None: :func:`fan_out_from_env` at
    each search), the outcomes in the items' order; serial below the plan's threshold."""

    plan: FanOut | None = None

    def __call__(
        self, work: Callable[[tuple[Any, ...]], list[Any]], items: Sequence[Any],
        sizes: Sequence[int],
    ) -> Iterator[Any]:
        plan = self.plan or fan_out_from_env()
        if not plan.parallel(len(items), sum(sizes)):
            return (outcome for item in items for outcome in work((item,)))
        return ordered_map(work, batches(items, sizes, plan), plan.workers)


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
    """``work(run)`` for every run on ``workers`` processes, the outcomes in submission order.

    This process is one of them: ``workers - 1`` are forked, and run ``i`` goes to worker
    ``i % workers``, the last share being this process's own, scanned while the forked workers
    scan theirs (a fork fewer, and no process idle waiting for answers). Each forked worker
    answers its runs in the order it got them, so the answers are read back in submission
    order, never in completion order. At most ``2 * workers`` runs are in flight, two per
    forked worker. Plain pipes and ``os.fork``, no semaphores or files: a confined adapter
    (Landlock, docs/maintainers/runner-isolation.md) may create neither. Closing the iterator early
    (a page is full) kills the workers; they only ever read.
    """
    for stream in (sys.stdout, sys.stderr):
        # A forked child starts with a copy of these buffers; nothing may be pending in them.
        if stream is not None:
            stream.flush()
    pool: list[_Worker] = []
    for _ in range(workers - 1):
        pool.append(_Worker.start(work, pool))
    pending: deque[_Worker | list[R]] = deque()
    try:
        for number, run in enumerate(runs):
            slot = number % workers
            if slot < len(pool):
                pool[slot].send(run)
                pending.append(pool[slot])
            else:
                pending.append(_own_share(work, run))
            if len(pending) >= 2 * workers:
                yield from _answer(pending.popleft())
        while pending:
            yield from _answer(pending.popleft())
    finally:
        for worker in pool:
            worker.stop(kill=bool(pending))


def _own_share(work: Callable[[tuple[T, ...]], list[R]], run: tuple[T, ...]) -> list[R]:
    # A bug fails the search as it does in a forked worker (_serve), whoever scanned the run.
    try:
        return work(run)
    except Exception as error:
        raise RuntimeError(f"a search worker failed: {type(error).__name__}: {error}") from error


def _answer(source: _Worker | list[R]) -> list[R]:
    if isinstance(source, _Worker):
        answer: list[R] = source.receive()
        return answer
    return source


_LENGTH = struct.Struct("<Q")


def _write_message(fd: int, value: object) -> None:
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(body)) + body)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, size: int) -> bytes:
    parts = []
    while size:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _read_message(fd: int) -> Any:
    (size,) = _LENGTH.unpack(_read_exactly(fd, _LENGTH.size))
    return pickle.loads(_read_exactly(fd, size))


@dataclass(frozen=True, slots=True)
class _Worker:
    pid: int
    tasks: int  # the parent's end of the worker's task pipe
    answers: int  # the parent's end of its answer pipe

    @classmethod
    def start(cls, work: Callable[[Any], Any], started: Sequence[_Worker]) -> _Worker:
        task_read, task_write = os.pipe()
        answer_read, answer_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            code = 0
            try:
                # Only the parent may hold the other workers' pipes: a copy here would keep
                # their task pipes open, and they would wait for more work forever.
                for fd in (task_write, answer_read, *(f for w in started for f in (
                        w.tasks, w.answers))):
                    os.close(fd)
                _serve(work, task_read, answer_write)
            except BaseException:
                code = 1
            finally:
                os._exit(code)  # no atexit handlers, no flush of inherited buffers
        os.close(task_read)
        os.close(answer_write)
        return cls(pid, task_write, answer_read)

    def send(self, run: object) -> None:
        _write_message(self.tasks, run)

    def receive(self) -> list[Any]:
        try:
            ok, value = _read_message(self.answers)
        except EOFError:
            raise RuntimeError("a search worker ended without answering") from None
        if not ok:
            raise RuntimeError(f"a search worker failed: {value}")
        answer: list[Any] = value
        return answer

    def stop(self, *, kill: bool) -> None:
        os.close(self.tasks)  # end of input: an idle worker exits
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        os.close(self.answers)
        os.waitpid(self.pid, 0)


def _serve(work: Callable[[Any], Any], tasks: int, answers: int) -> None:
    """The worker's loop: a run in, its outcomes out, until the parent closes the task pipe."""
    with contextlib.suppress(OSError):  # the standard streams are the parent's, not ours
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
    while True:
        try:
            run = _read_message(tasks)
        except EOFError:
            return
        try:
            answer = (True, work(run))
        except Exception as error:  # a bug, not a session's fault: _scan reports those
            answer = (False, f"{type(error).__name__}: {error}")
        _write_message(answers, answer)
