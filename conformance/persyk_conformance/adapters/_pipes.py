"""The pipes between the runner and an adapter process, read as the bytes arrive.

Each pipe is read by a thread that owns its descriptor and polls with a stop flag, so a process
that keeps the other end open (an escaped grandchild) can never block the runner. stdout is cut
into bounded lines for the runner (``pump_lines``); stderr goes to a ``StderrWatch`` that scans
it for canaries and keeps a bounded tail (there is no file the adapter could rewrite).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import select
import threading
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["LINE_TOO_LONG", "STDERR_TAIL_BYTES", "LineTooLong", "StderrSeen", "StderrWatch",
           "pump_lines", "widen"]

# The end of an adapter's stderr kept per case (the rest is scanned for canaries, then dropped).
STDERR_TAIL_BYTES = 8192
# At a case's end the runner reads what the stderr pipe holds now; an adapter writing faster
# than that can be read is cut off at this many bytes (the next case sees the rest).
_DRAIN_LIMIT = 16 << 20
_CHUNK = 1 << 16
_PIPE_BYTES = 1 << 20
_POLL_MS = 100


class LineTooLong:
    """What the reader thread queues when a line passes its bound (then it stops reading)."""


LINE_TOO_LONG = LineTooLong()


@dataclass(frozen=True, slots=True)
class StderrSeen:
    """What the adapter wrote to stderr during one window (a case, or a start)."""

    leaked: tuple[str, ...] = ()  # where each canary found in it was planted
    tail: str = ""  # the last STDERR_TAIL_BYTES, decoded
    total: int = 0  # bytes in the window


class StderrWatch:
    """The stderr pipes of an adapter's processes, read as the bytes arrive.

    Each pipe has a thread that waits for bytes and reads them under the watch's lock; at the
    end of a window the runner reads what every pipe holds under the same lock. An adapter
    writes its stderr before its reply, so once the reply is in, every byte of that step is in
    the pipe or already read: the window is exact without trusting any file.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pipes: dict[int, bool] = {}  # fd -> detached (its thread closes it and leaves)
        self._tokens: dict[bytes, str] = {}
        self._overlap = 0
        self._carry = b""
        self._tail = bytearray()
        self._total = 0
        self._leaked: dict[str, None] = {}

    def attach(self, fd: int) -> None:
        os.set_blocking(fd, False)
        with self._lock:
            self._pipes[fd] = False
        threading.Thread(target=self._pump, args=(fd,), daemon=True).start()

    def detach(self, fd: int) -> None:
        """Read what the pipe holds (its writers are dead), then let its thread close it."""
        with self._lock:
            if fd in self._pipes:
                self._drain(fd)
                self._pipes[fd] = True

    def begin(self, canaries: Mapping[str, str]) -> None:
        with self._lock:
            for fd in list(self._pipes):
                self._drain(fd)
            self._tokens = {token.encode(): where for token, where in canaries.items()}
            self._overlap = max((len(t) for t in self._tokens), default=1) - 1
            self._carry, self._tail, self._total, self._leaked = b"", bytearray(), 0, {}

    def end(self) -> StderrSeen:
        with self._lock:
            for fd in list(self._pipes):
                self._drain(fd)
            seen = StderrSeen(tuple(self._leaked), self._tail.decode("utf-8", "replace"),
                              self._total)
            self._tokens, self._carry, self._tail, self._total = {}, b"", bytearray(), 0
            self._leaked = {}
            return seen

    def _pump(self, fd: int) -> None:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        try:
            while True:
                ready = poller.poll(_POLL_MS)
                with self._lock:
                    if self._pipes.get(fd, True):
                        return
                    if ready and self._drain(fd):
                        return
        finally:
            with self._lock:
                self._pipes.pop(fd, None)
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _drain(self, fd: int) -> bool:
        """Read what is there now (lock held); True at end of file."""
        read = 0
        while read < _DRAIN_LIMIT:
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                return False
            except OSError:
                return True
            if not data:
                return True
            read += len(data)
            self._feed(data)
        return False

    def _feed(self, data: bytes) -> None:
        self._total += len(data)
        if self._tokens:
            window = self._carry + data
            for token, where in self._tokens.items():
                if where not in self._leaked and token in window:
                    self._leaked[where] = None
            self._carry = window[-self._overlap :] if self._overlap else b""
        self._tail += data[-STDERR_TAIL_BYTES:]
        del self._tail[:-STDERR_TAIL_BYTES]


def pump_lines(
    fd: int, sink: queue.Queue[bytes | LineTooLong | None], stop: threading.Event, max_line: int
) -> None:
    """Read the adapter's stdout into lines, in a thread that owns (and closes) ``fd``.

    Each line is bounded (``max_line`` bytes, LF excluded); the thread ends at end of file, at
    an over-long line, or when ``stop`` is set (the adapter was killed and nobody reads any
    more) -- even if an escaped process still holds the pipe's other end.
    """

    def put(item: bytes | LineTooLong | None) -> bool:
        while not stop.is_set():
            try:
                sink.put(item, timeout=0.1)
            except queue.Full:
                continue
            return True
        return False

    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    pending = bytearray()
    try:
        while not stop.is_set():
            if not poller.poll(_POLL_MS):
                continue
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                break
            if not data:
                break
            searched = len(pending)
            pending += data
            while (end := pending.find(b"\n", searched)) >= 0:
                if end > max_line:
                    put(LINE_TOO_LONG)
                    return
                line = bytes(pending[: end + 1])
                del pending[: end + 1]
                searched = 0
                if not put(line):
                    return
            if len(pending) > max_line:
                put(LINE_TOO_LONG)
                return
        else:
            return
        put(None)
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def widen(fd: int) -> None:
    """Give a pipe 1 MiB of buffer where Linux allows it: an adapter that writes a lot waits
    less often for the runner's reader threads to be scheduled."""
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
