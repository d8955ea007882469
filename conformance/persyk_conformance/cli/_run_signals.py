"""How ``persyk-conformance run`` ends on a signal: SIGINT (Ctrl-C), SIGTERM (a CI job cancelled,
``kill``, a container stopped) and SIGHUP (the terminal gone) all end it the same way.

Rule 1, the first signal: no case or check starts any more; every process of every adapter is
killed at once (process groups, cgroups, marked processes: adapters/_processes.py) and so are
the lane processes' (each is sent SIGTERM, run/_lane_process.py); the cases those were running
are abandoned, not reported (a case cut short proves nothing); every sandbox is removed; the
reports hold every case that finished before the signal, their ``aborted`` says
``interrupted by SIGTERM`` (the signal's name); the exit status is 128 + the signal's number,
as the shell reports a process the signal killed: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP).

Rule 2, a second signal (of any of the three) ends the runner at once: no report is written,
but every adapter and lane is still killed and every sandbox still removed; the exit status is
128 + the second signal's number. The same signal again within :data:`SAME_STOP_SECONDS` of the
first being handled is not a second one: ``timeout(1)`` and process managers send the runner
its signal twice at once (to its pid, then to its process group).

Python delivers a signal to the main thread: the handler raises :class:`RunStopped` there (a
``KeyboardInterrupt``, so every ``finally`` and every Ctrl-C path of the run applies to it).
Once the run is over and its reports are being written, a first signal is remembered rather
than raised, so that the reports are still written whole.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from ..adapters._processes import end_every_adapter
from ..run._lane_process import end_every_lane
from ..run._workspace import remove_every_sandbox

__all__ = ["STOP_SIGNALS", "RunStopped", "SignalWatch", "interrupted_by", "watching_signals"]

# The signals that stop a run (Rule 1), each ending it with status 128 + its number.
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How long a second signal waits for the lane processes to remove their sandboxes.
LANE_GRACE_SECONDS = 2.0
# Rule 2: the first signal, sent again this soon after it was handled, is the same stop.
SAME_STOP_SECONDS = 0.5


class RunStopped(KeyboardInterrupt):
    """The run was stopped by ``signum`` (Rule 1)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def interrupted_by(stop: KeyboardInterrupt) -> str:
    """The record's ``aborted`` for a run that ``stop`` ended: a plain KeyboardInterrupt (a
    library caller's, with Python's own handler) is SIGINT's."""
    signum = stop.signum if isinstance(stop, RunStopped) else signal.SIGINT
    return f"interrupted by {signal.Signals(signum).name}"


class SignalWatch:
    """The signals received so far; ``first`` is the one whose status the run exits with."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.raising = True  # Rule 1 while the run runs; only remembered while it reports
        self._same_until = 0.0

    def receive(self, signum: int, frame: FrameType | None) -> None:
        if self.first is not None:
            if signum == self.first and time.monotonic() < self._same_until:
                return  # the same stop, delivered twice (Rule 2)
            _end_at_once(signum)
        self.first = signum
        end_every_adapter()
        self._same_until = time.monotonic() + SAME_STOP_SECONDS  # from the end of the kills
        if self.raising:
            raise RunStopped(signum)

    def after_stop(self, previous: Any) -> Callable[[int, FrameType | None], None]:
        """The handler of the first signal once the block is left: the same stop within the
        window is ignored; later, the handler the block replaced runs as it would have."""
        def handle(signum: int, frame: FrameType | None) -> None:
            if time.monotonic() < self._same_until:
                return
            signal.signal(signum, previous)
            if callable(previous):
                previous(signum, frame)
            elif previous == signal.SIG_DFL:
                os.kill(os.getpid(), signum)
        return handle

    @property
    def exit_status(self) -> int | None:
        return None if self.first is None else 128 + self.first


def _end_at_once(signum: int) -> None:
    """Rule 2: kill what is left, remove the sandboxes, exit without a report."""
    try:
        print(f"persyk-conformance: {signal.Signals(signum).name} again: stopped at once, "
              "no report", file=sys.stderr)
        end_every_adapter()
        end_every_lane(LANE_GRACE_SECONDS)
        remove_every_sandbox()
    finally:
        os._exit(128 + signum)


@contextmanager
def watching_signals() -> Iterator[SignalWatch]:
    """Rule 1 and 2 for the run inside the block (the main thread only: elsewhere a signal
    handler cannot be installed, and Python's own SIGINT handling stays)."""
    watch = SignalWatch()
    try:
        previous = {signum: signal.signal(signum, watch.receive) for signum in STOP_SIGNALS}
    except ValueError:  # not the main thread
        yield watch
        return
    try:
        yield watch
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if watch.first is not None:
            # Rule 2 outlasts the block: the same stop delivered again while the process
            # finishes its reports and exits (timeout(1) signals the runner, then its group)
            # must not end it with the default action instead of its own status.
            signal.signal(watch.first, watch.after_stop(previous[signal.Signals(watch.first)]))
            # Python's finalization puts SIG_DFL back for every signal with a Python handler,
            # so the group's copy arriving while the interpreter shuts down would still end
            # the process by the default action (status -15, not 143): the process is on its
            # way out with its own status, so the first signal is ignored from then on.
            atexit.register(signal.signal, watch.first, signal.SIG_IGN)
