"""Attaching ``strace`` to an adapter that started plainly: the probe and the handshake.

A kill check starts one adapter per kill moment. Started *under* strace, the interpreter's whole
start-up runs under ptrace, a stop at every one of its thousands of system calls: most of each
check's time. Started plainly and attached with ``strace -p PID -f`` once it has greeted, only
what its requests make it do is traced.

Rule 1: the counts agree. ``when=N`` of a killing run counts from the attach, and so does the
recording whose N-th call it names, because both attach at the same point of the adapter's life:
after its hello, idle, blocked reading its first request (``SubprocessAdapter.attached``).

Rule 2: no request before the attach is complete. strace says ``Process PID attached`` on its
standard error once it has seized *and* interrupted every thread of the process (the message
comes after both, for all threads of ``/proc/PID/task``); from then on no system call of the
adapter escapes it. :func:`attach_strace` returns only after that line.

Rule 3: attach only where it works. Attaching to a process that is not one's descendant needs
Yama ``ptrace_scope`` 0 (or ``CAP_SYS_PTRACE``), which CI runners often lack; a probe
(:func:`attach_permitted`) proves it once per process by killing a plain child through an
attached strace, and where it fails the checks start their adapters under strace as before.
"""

from __future__ import annotations

import functools
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

__all__ = ["ATTACH_ENV", "AttachFailed", "StraceAttach", "attach_permitted", "attach_strace"]

# "0" keeps every crash check on the start-under-strace path (tests run both paths).
ATTACH_ENV = "PERSYK_CONFORMANCE_STRACE_ATTACH"
# Attach and detach messages on, the rest of -qq off (Rule 2 reads the attach message).
_QUIET = "quiet=exit,personality,thread-execve"
# What is kept of strace's standard error for a failure's message.
_KEPT = 4096
# How long a tracer gets to end after its tracee did before it is killed.
_FINISH_GRACE = 10.0


class AttachFailed(Exception):
    """strace could not attach to the adapter (says what strace said)."""


@dataclass(slots=True)
class _Tracer:
    """A running ``strace -p`` and the thread that drains its standard error."""

    process: subprocess.Popen[bytes]
    drain: threading.Thread | None = None
    said: bytearray = field(default_factory=bytearray)

    def finish(self) -> None:
        """Wait for strace to end (its tracee has: it writes the rest of its trace and
        exits), killing it after a grace period."""
        try:
            self.process.wait(_FINISH_GRACE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.drain is not None:
            self.drain.join(_FINISH_GRACE)
        if self.process.stderr is not None:
            self.process.stderr.close()


def _drain(tracer: _Tracer) -> None:
    stream = tracer.process.stderr
    assert stream is not None
    while chunk := os.read(stream.fileno(), 65536):
        if len(tracer.said) < _KEPT:
            tracer.said += chunk[: _KEPT - len(tracer.said)]


def attach_strace(strace: str, pid: int, options: tuple[str, ...], timeout: float) -> _Tracer:
    """``strace -f -p PID OPTIONS``, returned once strace says it is attached (Rule 2);
    raises AttachFailed (strace killed) when it ends first or says nothing in ``timeout``."""
    process = subprocess.Popen(
        [strace, "-f", "-e", _QUIET, "-p", str(pid), *options],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    tracer = _Tracer(process)
    assert process.stderr is not None
    fd = process.stderr.fileno()
    wanted = f"Process {pid} attached".encode()
    deadline = time.monotonic() + timeout
    while wanted not in tracer.said:
        remaining = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(remaining, 0.0))
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:  # ended, or silent until the deadline
            process.kill()
            process.wait()
            process.stderr.close()
            said = tracer.said.decode("utf-8", "replace").strip()
            raise AttachFailed(f"strace did not attach to the adapter (pid {pid}): "
                               f"{said or 'no answer within the timeout'}")
        tracer.said += chunk
    del tracer.said[_KEPT:]
    tracer.drain = threading.Thread(target=_drain, args=(tracer,), daemon=True)
    tracer.drain.start()
    return tracer


@dataclass(frozen=True, slots=True)
class StraceAttach:
    """The attach hook of one traced adapter: strace at ``strace`` with ``options`` (what the
    start-under-strace path puts between ``strace -f -qq`` and ``--``)."""

    strace: str
    options: tuple[str, ...]

    def __call__(self, pid: int, timeout: float) -> _Tracer:
        return attach_strace(self.strace, pid, self.options, timeout)


def attach_permitted(strace: str) -> bool:
    """Whether crash checks attach strace here (Rule 3): not when ``ATTACH_ENV`` is "0", else
    what the probe found (run once per process)."""
    if os.environ.get(ATTACH_ENV) == "0":
        return False
    return _probe(strace)


# The probe's child: says it is ready, reads one byte, then writes it back. Attached after the
# ready byte and killed on its first write from the attach, it echoes nothing.
ECHO = "import os; os.write(1, b'r'); os.write(1, os.read(0, 1))"
_PROBE_TIMEOUT = 10.0


@functools.cache
def _probe(strace: str) -> bool:
    """Start a plain child, wait until it is ready (blocked on its stdin), attach strace to it
    with a kill at its first write from the attach, then feed it: attach works here when the
    child dies of SIGKILL without echoing (ptrace of a non-child permitted, the count starting
    at the attach, the handshake complete before the byte was sent)."""
    child = subprocess.Popen([sys.executable, "-I", "-S", "-c", ECHO],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    assert child.stdin is not None and child.stdout is not None
    tracer: _Tracer | None = None
    try:
        if child.stdout.read(1) != b"r":
            return False
        tracer = attach_strace(strace, child.pid, (
            "-o", os.devnull, "-e", "trace=?write", "-e", "inject=?write:signal=KILL:when=1",
        ), _PROBE_TIMEOUT)
        child.stdin.write(b"x")
        child.stdin.close()
        status = child.wait(_PROBE_TIMEOUT)
        return status == -signal.SIGKILL and child.stdout.read() == b""
    except (AttachFailed, OSError, subprocess.TimeoutExpired):
        return False
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
        if tracer is not None:
            tracer.finish()
