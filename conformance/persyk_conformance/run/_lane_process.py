"""A lane of ``run -j N`` as a process of its own: its own sandbox, adapter process
and Runner, fed one fixture case at a time over a pipe, answering each with its CaseResult as
plain data (pickled frames, ``multiprocessing.connection``).

Why a process: the runner's own work per case (the workspace, the snapshots around each step,
hashing, matching) is Python and holds the interpreter's lock, so lanes that are threads of one
process take turns at it while their adapters wait. A lane process has an interpreter of its
own: ``python -m persyk_conformance.run._lane_process`` started with ``subprocess``, never a
``fork`` (the parent has threads, pipe readers and the trash, whose locks a forked child would
inherit held) and not through ``multiprocessing`` (whose spawn re-runs the caller's main script
and leaves a resource-tracker process behind).

Rule 1: a lane decides nothing about the run. The schedule, the order of results, progress and
the exit status stay in the parent (run/_parallel.py); a lane runs the case it is given and says
whether its Runner gave up on the adapter, which the parent then tells every lane.

Rule 2: a lane is stopped only by the parent. It runs in a process group of its own, so a
terminal's Ctrl-C reaches the parent alone; a lane ends at the end of its pipe (the parent
stopped or died), then closes its adapter, or on SIGTERM (the parent was stopped by a signal,
cli/_run_signals.py), then kills every process of its adapters at once, abandons the case it
runs and removes its sandbox; a second SIGTERM does not interrupt that.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from types import FrameType

from .._profiles import Profile
from ..adapters._processes import end_every_adapter, wait_exit
from ..adapters._subprocess import SubprocessAdapter
from ._outcomes import CaseResult
from ._runner import Planned, Runner, RunOptions
from ._workspace import Sandbox

__all__ = ["AdapterSpec", "LaneDied", "LaneProcess", "end_every_lane", "serve_lane"]

# How long a lane may take, past its case's own deadline, to finish the case it runs and stop.
STOP_GRACE_SECONDS = 5.0


class LaneDied(RuntimeError):
    """The lane process ended without answering: a fault of the runner, not of the adapter."""


@dataclass(frozen=True, slots=True)
class AdapterSpec:
    """How to start the implementation's adapter in a sandbox: what a lane needs to start its
    own (plain data, so it crosses to the lane process)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    strict: bool
    profile: str
    confine: bool

    def start_in(self, sandbox: Sandbox) -> SubprocessAdapter:
        return SubprocessAdapter(
            self.argv, env=sandbox.adapter_env(self.env), strict=self.strict,
            profile=self.profile, confine_to=sandbox.root if self.confine else None,
        )


@dataclass(frozen=True, slots=True)
class _LaneSettings:
    adapter: AdapterSpec
    options: RunOptions
    profile: Profile


# One request: the case, its expected failure (or None) and why the run gave up on the adapter
# (or None); None alone ends the lane. One answer: the result, and why this lane gave up.
_Request = tuple[Planned, str | None, str | None] | None
_Answer = tuple[CaseResult, str | None]
_READY = "ready"


_stopping = threading.Event()


def _stop(signum: int, frame: FrameType | None) -> None:
    end_every_adapter()
    if not _stopping.is_set():  # the first SIGTERM only: never inside the cleanup it starts
        _stopping.set()
        raise SystemExit(128 + signum)


def serve_lane(requests: Connection, answers: Connection) -> None:
    """The lane process: its settings first, then one case per request until the pipe ends."""
    signal.signal(signal.SIGTERM, _stop)
    settings: _LaneSettings = requests.recv()
    sandbox = Sandbox.create()
    runner = Runner(settings.adapter.start_in(sandbox), sandbox, settings.options,
                    settings.profile)
    try:
        # The adapter starts now, while the parent plans and runs its first case; the lane's
        # first case takes the start's outcome, as a serial run's first case does.
        runner.start_early()
        answers.send(_READY)
        while True:
            try:
                request: _Request = requests.recv()
            except (EOFError, OSError):
                return
            if request is None:
                return
            planned, expected, gave_up = request
            if gave_up is not None and runner.gave_up is None:
                runner.gave_up = gave_up
            result = runner.run_case(planned).with_expectation(expected)
            answer: _Answer = (result, runner.gave_up)
            answers.send(answer)
    finally:
        try:
            runner.close()
        finally:
            sandbox.remove()


# The lane processes of this process that have not been closed (end_every_lane).
_live_lock = threading.RLock()  # re-entrant: the signal handler may run while its thread holds it
_live: dict[int, LaneProcess] = {}


def end_every_lane(grace: float) -> None:
    """SIGTERM every lane process (each kills its adapters and removes its sandbox at once),
    wait up to ``grace`` seconds in all, then SIGKILL those left: a run's second signal."""
    with _live_lock:
        lanes = list(_live.values())
    for lane in lanes:
        lane.stop_now()
    deadline = time.monotonic() + grace
    for lane in lanes:
        lane.wait_or_kill(max(deadline - time.monotonic(), 0.0))


class LaneProcess:
    """The parent's handle on one lane process, started at once. ``run_case`` is called by one
    lane thread at a time; ``close`` may come from another thread while a case runs."""

    def __init__(self, adapter: AdapterSpec, options: RunOptions, profile: Profile) -> None:
        from_parent, to_lane = os.pipe()  # (read end, write end)
        from_lane, to_parent = os.pipe()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(from_parent), str(to_parent)],
                stdin=subprocess.DEVNULL, pass_fds=(from_parent, to_parent),
                process_group=0,  # Rule 2: Ctrl-C of the terminal does not reach it
            )
        except BaseException:
            for fd in (to_lane, from_lane):
                os.close(fd)
            raise
        finally:
            os.close(from_parent)
            os.close(to_parent)
        self._send_conn = Connection(to_lane, readable=False)
        self._conn = Connection(from_lane, writable=False)
        self._deadline = options.timeout + STOP_GRACE_SECONDS
        self._sending = threading.Lock()
        self._stopping = False
        with _live_lock:
            _live[id(self)] = self
        self._send(_LaneSettings(adapter, options, profile))

    def _send(self, message: object) -> None:
        with self._sending:
            self._send_conn.send(message)

    def wait_ready(self, timeout: float) -> None:
        """Until the lane has its interpreter, sandbox and Runner (a spawned interpreter takes
        about a second to import the runner): all lanes then start their cases together."""
        try:
            ready = self._conn.poll(timeout) and self._conn.recv() == _READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            raise LaneDied(f"a lane process did not start within {timeout:g} s "
                           f"(exit status {self._process.poll()})")

    def run_case(self, planned: Planned, expected: str | None,
                 gave_up: str | None) -> _Answer:
        try:
            self._send((planned, expected, gave_up))
            answer: _Answer = self._conn.recv()
        except (EOFError, OSError):
            raise LaneDied(f"the lane process running {planned.case.id} ended without an "
                           f"answer (exit status {self._process.poll()})") from None
        return answer

    def begin_close(self) -> None:
        """Tell the lane to stop after the case it runs, without waiting: the parent closes its
        own adapter meanwhile, and ``close`` then waits for the lane."""
        if not self._stopping:
            self._stopping = True
            with contextlib.suppress(OSError):
                self._send(None)

    def stop_now(self) -> None:
        """SIGTERM the lane without waiting: it abandons its case (Rule 2)."""
        self._stopping = True
        with contextlib.suppress(OSError):
            self._process.terminate()

    def wait_or_kill(self, timeout: float) -> None:
        try:
            wait_exit(self._process, timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                self._process.kill()
            self._process.wait()

    def close(self) -> None:
        """Let the running case finish, then stop the lane; past the grace, terminate it."""
        self.begin_close()
        for stop in (None, self._process.terminate, self._process.kill):
            if stop is not None:
                stop()  # SIGTERM first: the lane still closes its adapter (Rule 2)
            try:
                # woken the moment the lane exits (Popen.wait polls, sleeping up to 50 ms)
                wait_exit(self._process, self._deadline if stop is None else STOP_GRACE_SECONDS)
                break
            except subprocess.TimeoutExpired:
                continue
        self._send_conn.close()
        self._conn.close()
        with _live_lock:
            _live.pop(id(self), None)


if __name__ == "__main__":
    from persyk_conformance.run._lane_process import serve_lane as _serve  # not this __main__

    _serve(Connection(int(sys.argv[1]), writable=False),
           Connection(int(sys.argv[2]), readable=False))
