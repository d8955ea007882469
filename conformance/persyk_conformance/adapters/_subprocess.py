"""The subprocess adapter: an implementation reached as a process over JSON Lines pipes.

The subprocess client is the only place where the runner talks to adapter processes. It owns
every process an adapter starts (``_processes.Owner``: a mark in the environment, the runner as
child subreaper, a cgroup where there is one) and kills them all when the adapter is killed. It
talks JSON Lines over pipes it made itself and reads them with deadlines: a request is written
without blocking (an adapter that reads nothing cannot hold the runner), and every pipe is read
by a thread that owns its descriptor, so a grandchild that keeps a pipe open can never block
the runner. stderr is a pipe too, read as it arrives: the runner scans it for canaries and keeps
a bounded tail; the adapter has no file it could rewrite afterwards.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from .._protocol import (
    Hello,
    NotJson,
    Reply,
    check_request,
    decode_hello,
    decode_reply,
    encode_hello,
    encode_run,
    encode_stop,
)
from ._interface import (
    AdapterCrashed,
    AdapterTimedOut,
    StartInBackground,
    StrictModeViolation,
    file_size_limiter,
)
from ._pipes import LineTooLong, StderrSeen, StderrWatch, pump_lines, widen
from ._processes import Confinement, Owner, run_is_ending, wait_exit

__all__ = ["Attached", "SubprocessAdapter"]

# How long a stopped adapter gets to exit on its own before it is killed.
STOP_GRACE_SECONDS = 2.0
# The longest stdout line the runner reads from an adapter (LF excluded). A reply of protocol 1
# is at most a few MiB (records are at most 1 MiB); a longer line, or a stream with no LF at
# all, is a crash, never a reason to hold gigabytes in memory.
MAX_LINE_BYTES = 64 << 20
# Lines read ahead of the runner; the reader thread waits when this many are pending, so an
# adapter flooding stdout is held back by its own pipe instead of filling the runner's memory.
MAX_PENDING_LINES = 4


class Attached(Protocol):
    """A helper process the runner attached to a started adapter (the crash checks' ``strace
    -p``): :meth:`finish` waits for it to end once the adapter has, then kills what is left."""

    def finish(self) -> None: ...


# Attaches to the adapter process (its pid) within the timeout, after its hello and before its
# first request; raises when it cannot (the adapter is killed then).
Attach = Callable[[int, float], Attached]


class SubprocessAdapter:
    """One adapter process at a time; :meth:`start` again after a crash or timeout.

    ``confine_to``: where the kernel has Landlock, the adapter may write only beneath this
    directory (the run's sandbox); see ``_processes``.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        strict: bool = False,
        file_size_limit: int | None = None,
        profile: str = "v1",
        confine_to: Path | None = None,
        _stderr: StderrWatch | None = None,
        _attach: Attach | None = None,
    ) -> None:
        self._argv = list(argv)
        self._attach = _attach
        self._attached: Attached | None = None
        self.profile = profile  # the format profile named in every run request
        self._file_size_limit = file_size_limit
        self._env = dict(env)
        self._cwd = cwd
        self._strict = strict
        self._confine_to = confine_to
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner: Owner | None = None
        self._stdin = -1
        self._stderr_fd = -1
        self._lines: queue.Queue[bytes | LineTooLong | None] = queue.Queue()
        self._pump_stop = threading.Event()
        self._seq = 0
        self._hello: Hello | None = None
        self._watch = _stderr if _stderr is not None else StderrWatch()
        self.starts = 0  # processes started so far (tests count them)
        # One-shot adapters started ahead of the steps that need them: (limit, adapter, start).
        self._prepared: list[tuple[int, SubprocessAdapter, StartInBackground]] = []
        # Seconds from the last request's first byte to its reply line, decoding and schema
        # checks excluded: what `persyk-conformance bench` times.
        self.last_round_trip = 0.0
        # The status the last process exited with of its own accord before it was killed or
        # closed; None when it was still running and had to be killed.
        self.exit_status: int | None = None

    @property
    def hello(self) -> Hello:
        if self._hello is None:
            raise RuntimeError("the adapter has not been started")
        return self._hello

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """The adapter process's id while it runs (the bench reads its peak memory)."""
        return self._proc.pid if self._proc is not None else None

    def start(self, timeout: float = 10.0) -> Hello:
        """Start the process and shake hands.

        Raises AdapterCrashed, AdapterTimedOut or ProtocolViolation.
        """
        self.kill()
        self._spawn()
        self._seq = 0
        self._send(encode_hello(), timeout)
        line = self._receive(timeout, "the hello reply")
        try:
            self._hello = decode_hello(line)
        except NotJson as exc:
            raise AdapterCrashed(str(exc)) from None
        if self._attach is not None and self._proc is not None:
            # After the hello the adapter is idle, blocked reading its next request: what the
            # helper sees from here on is what the requests make it do.
            proc = self._proc
            try:
                self._attached = self._attach(proc.pid, timeout)
            except BaseException:
                status = proc.poll()
                self.kill()
                if status is not None:
                    # It ended on its own before the helper could attach: the adapter's fault.
                    raise AdapterCrashed(f"the adapter exited with status {status} after its "
                                         "hello, before the runner could attach to it") from None
                raise
        return self._hello

    def _spawn(self) -> None:
        if run_is_ending():
            raise AdapterCrashed("the run is being stopped: no adapter starts")
        owner = Owner()
        confinement = None
        if self._confine_to is not None:
            with contextlib.suppress(OSError):
                confinement = Confinement(self._confine_to)
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        for fd in (stdout_r, stderr_r):
            widen(fd)
        self.starts += 1
        try:
            proc = subprocess.Popen(
                self._argv,
                stdin=stdin_r,
                stdout=stdout_w,
                stderr=stderr_w,
                env=owner.environment(self._env),
                cwd=self._cwd,
                start_new_session=True,  # its own process group and session
                preexec_fn=_before_exec(owner, self._file_size_limit, confinement),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            owner.kill_all()
            raise AdapterCrashed(f"cannot start the adapter {self._argv!r}: {exc}") from None
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):
                os.close(fd)
            if confinement is not None:
                confinement.close()
        owner.started(proc.pid)
        self._proc, self._owner = proc, owner
        os.set_blocking(stdin_w, False)
        os.set_blocking(stdout_r, False)
        self._stdin, self._stderr_fd = stdin_w, stderr_r
        self._watch.attach(stderr_r)
        self._lines = queue.Queue(MAX_PENDING_LINES)
        self._pump_stop = threading.Event()
        threading.Thread(
            target=pump_lines, args=(stdout_r, self._lines, self._pump_stop, MAX_LINE_BYTES),
            daemon=True,
        ).start()

    def run(self, op: str, args: Mapping[str, Any], timeout: float) -> Reply:
        self._seq += 1
        seq = self._seq
        deadline = time.monotonic() + timeout
        request = encode_run(seq, op, args, self.profile)
        began = time.perf_counter()
        self._send(request, timeout)
        what = f"the reply to {op} (seq {seq})"
        line = self._receive(max(deadline - time.monotonic(), 0.0), what, timeout)
        self.last_round_trip = time.perf_counter() - began
        try:
            return decode_reply(line, seq=seq, op=op, profile=self.profile)
        except NotJson as exc:
            raise AdapterCrashed(str(exc)) from None

    def prepare_file_size_limits(self, limits: Sequence[int], timeout: float) -> None:
        """Start the one-shot adapters of the case's ``fileSizeLimit`` steps now, each in a
        thread: a start (about 0.1 s of an interpreter) then overlaps the steps before it.
        ``run_with_file_size_limit`` takes them in order; ``end_case`` closes those left."""
        for limit in limits:
            one_shot = self._one_shot(limit)
            self._prepared.append((limit, one_shot, StartInBackground(one_shot, timeout)))

    def run_with_file_size_limit(
        self, op: str, args: Mapping[str, Any], timeout: float, limit: int
    ) -> Reply:
        """Run one step in a fresh, one-shot adapter process whose file size limit is ``limit``.

        A limit must be set before the process starts, so the long-lived adapter cannot be
        reused; its stderr is read into the same window so the runner still sees every byte.
        A one-shot prepared for this limit is used (its failed start raises here, as a start
        made now would).
        """
        prepared = next((p for p in self._prepared if p[0] == limit), None)
        try:
            if prepared is None:
                one_shot = self._one_shot(limit)
                one_shot.start(timeout)
            else:
                self._prepared.remove(prepared)
                one_shot = prepared[1]
                prepared[2].outcome()
            return one_shot.run(op, args, timeout)
        finally:
            one_shot.close()
            self.starts += one_shot.starts

    def _one_shot(self, limit: int) -> SubprocessAdapter:
        return SubprocessAdapter(
            self._argv,
            env=self._env,
            cwd=self._cwd,
            strict=self._strict,
            file_size_limit=limit,
            profile=self.profile,
            confine_to=self._confine_to,
            _stderr=self._watch,
        )

    def _drop_prepared(self) -> None:
        """Close the one-shots no step took (the case ended before them)."""
        while self._prepared:
            _, one_shot, starting = self._prepared.pop()
            with contextlib.suppress(Exception):
                starting.outcome()
            one_shot.close()
            self.starts += one_shot.starts

    def wrapped(self, prefix: Sequence[str]) -> SubprocessAdapter:
        """A new, not yet started adapter whose command is ``prefix`` followed by this one's
        (H-104 runs the adapter under ``strace``); same environment and confinement."""
        return self._like([*prefix, *self._argv])

    def attached(self, attach: Attach) -> SubprocessAdapter:
        """A new, not yet started adapter like this one that calls ``attach(pid, timeout)``
        once it has greeted (the crash checks attach ``strace -p`` there); the helper
        is finished whenever the adapter is killed or closed."""
        return self._like(self._argv, attach)

    def _like(self, argv: Sequence[str], attach: Attach | None = None) -> SubprocessAdapter:
        return SubprocessAdapter(
            argv,
            env=self._env,
            cwd=self._cwd,
            strict=self._strict,
            file_size_limit=self._file_size_limit,
            profile=self.profile,
            confine_to=self._confine_to,
            _attach=attach,
        )

    def stderr_begin(self, canaries: Mapping[str, str]) -> None:
        self._watch.begin(canaries)

    def stderr_end(self) -> StderrSeen:
        return self._watch.end()

    def end_case(self) -> None:
        """Kill what the adapter left running outside its own session during the case."""
        self._drop_prepared()
        if self._owner is not None:
            self._owner.kill_escaped()

    def close(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Say stop and let the adapter exit within ``grace`` seconds (an adapter under valgrind
        writes its counts as it exits, and needs longer); then kill whatever of it is left."""
        self._drop_prepared()
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None and not run_is_ending():
            try:
                self._send(encode_stop(), grace)
                os.close(self._stdin)
                self._stdin = -1
                wait_exit(proc, grace)
            except (AdapterCrashed, AdapterTimedOut, OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        """Kill every process of the adapter (escaped ones too) and release its pipes."""
        proc, owner = self._proc, self._owner
        if proc is None or owner is None:
            return
        self._proc = self._owner = None
        owner.kill_all()
        exited = proc.poll()  # before the kill: None while it still runs
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        self.exit_status = exited
        attached, self._attached = self._attached, None
        if attached is not None:
            attached.finish()  # after the adapter's end: a tracer has written all it saw
        self._pump_stop.set()
        if self._stdin >= 0:
            with contextlib.suppress(OSError):
                os.close(self._stdin)
            self._stdin = -1
        self._watch.detach(self._stderr_fd)
        self._stderr_fd = -1

    def _send(self, line: bytes, timeout: float) -> None:
        if self._strict:
            problems = check_request(line)
            if problems:
                raise StrictModeViolation(
                    "strict mode: the runner's own request breaks the protocol schemas: "
                    + "; ".join(problems)
                )
        if self._proc is None or self._stdin < 0:
            raise AdapterCrashed("the adapter is not running")
        deadline = time.monotonic() + timeout
        view = memoryview(line)
        poller = select.poll()
        poller.register(self._stdin, select.POLLOUT)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AdapterTimedOut(
                    f"the adapter did not read the request within {timeout:g} s "
                    f"({len(line) - len(view)} of {len(line)} bytes taken)"
                )
            poller.poll(max(int(remaining * 1000), 1))
            try:
                written = os.write(self._stdin, view)
            except BlockingIOError:
                continue
            except OSError:
                raise AdapterCrashed(self._exit_detail("its stdin was closed")) from None
            view = view[written:]

    def _receive(self, timeout: float, what: str, budget: float | None = None) -> bytes:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AdapterTimedOut(
                f"no answer within {budget if budget is not None else timeout:g} s "
                f"while waiting for {what}"
            ) from None
        if line is None:
            raise AdapterCrashed(
                self._exit_detail(f"its stdout closed while the runner waited for {what}")
            )
        if isinstance(line, LineTooLong):
            raise AdapterCrashed(
                f"the adapter wrote a stdout line longer than {MAX_LINE_BYTES} bytes "
                f"while the runner waited for {what}"
            )
        return line

    def _exit_detail(self, what: str) -> str:
        proc = self._proc
        status: int | None = None
        if proc is not None:
            try:
                status = wait_exit(proc, 0.5)
            except subprocess.TimeoutExpired:
                status = None
        if status is None:
            return f"the adapter failed: {what}"
        return f"the adapter exited with status {status}: {what}"


def _before_exec(
    owner: Owner, file_size_limit: int | None, confinement: Confinement | None
) -> Callable[[], None]:
    """The adapter process's first steps, in the child between fork and exec: join the
    adapter's cgroup, set the file size limit, then confine its writes."""

    def apply() -> None:
        owner.join()
        if file_size_limit is not None:
            file_size_limiter(file_size_limit)()
        if confinement is not None:
            confinement.apply()

    return apply
