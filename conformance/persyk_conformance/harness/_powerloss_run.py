"""The I/O edge of the power-loss harness: trace an adapter, lay out crash states, observe them.

Everything that touches a process or a file for ``_powerloss`` is here; the trace parser
(``_trace``), the persistence model (``_fsmodel``) and the sync-order analysis (``_syncorder``)
stay sans-IO.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._protocol import Result
from ..adapters._interface import Adapter, AdapterCrashed, AdapterTimedOut
from ..run._workspace import remove_tree
from ._crash import CrashCheckUnsupported, Tracing
from ._fsmodel import CrashState
from ._trace import (
    TRACED_SYSCALLS,
    UNVERIFIABLE_SYSCALLS,
    Op,
    TraceBudget,
    TraceError,
    TraceReader,
)

__all__ = ["Traced", "lay_out", "on_the_same_file_system", "snapshot", "trace_steps"]

# Big enough for every write of the scenarios (strace marks a cut string; the parser refuses it).
_STRING_LIMIT = 1 << 20
# How long the trace reader may take to see strace's end once the adapter has gone.
_DRAIN_GRACE = 10.0


@dataclass(frozen=True, slots=True)
class Traced:
    """One traced run: its operations, the workspace's real path, each step's reply, and
    whether the trace holds the reply to the hello (not when strace attached after it)."""

    ops: tuple[Op, ...]
    root: str
    replies: tuple[Mapping[str, Any], ...]
    greeted: bool = True


class _TraceTap:
    """strace's output, read from a FIFO while the steps run: parsed as it comes (the runner
    holds operations, never the text), under a per-step budget. Past the budget the adapter's
    process group is killed at once and the rest is drained unread, so a flood costs seconds
    and no memory; :attr:`error` then says which budget."""

    def __init__(self, fifo: Path, budget: TraceBudget, root: str) -> None:
        os.mkfifo(fifo, 0o600)
        self.reader = TraceReader(budget, root=root)
        self.error: TraceError | None = None
        self.victim: Adapter | None = None
        self._read_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        # Our own writer keeps the FIFO from reading as ended before strace opens it.
        self._own_writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while True:
            ready, _, _ = select.select([self._read_end], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(self._read_end, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                return
            if self.error is not None:
                continue  # past the budget: drained, unread
            try:
                self.reader.feed(chunk)
            except TraceError as exc:
                self.error = exc
                self._kill()
            except Exception as exc:  # a fault of the reader: no verdict from a partial trace
                self.error = TraceError(f"the trace reader failed: {exc!r}", self.reader.line)
                self._kill()

    def _kill(self) -> None:
        pid = getattr(self.victim, "pid", None)
        if isinstance(pid, int):
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)

    def finish(self) -> list[Op]:
        """Once strace has ended: the operations (raises what the reader raised)."""
        os.close(self._own_writer)
        self._thread.join(_DRAIN_GRACE)
        os.close(self._read_end)
        if self.error is not None:
            raise self.error
        if self._thread.is_alive():
            raise TraceError("strace did not end after the adapter", 0)
        return self.reader.end()


def snapshot(root: Path) -> tuple[dict[str, bytes], list[str]]:
    """The workspace's files and directories, relative to ``root``."""
    files: dict[str, bytes] = {}
    dirs: list[str] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_dir() and not path.is_symlink():
            dirs.append(rel)
        elif path.is_file() and not path.is_symlink():
            files[rel] = path.read_bytes()
    return files, dirs


Follow = Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]] | None


def trace_steps(
    factory: Callable[[], Adapter], workspace: Path,
    steps: Sequence[tuple[str, dict[str, Any], Follow]], trace: Path, timeout: float,
    budget: TraceBudget | None = None,
) -> Traced:
    """Run ``steps`` (op, args, arguments taken from the replies so far) in one adapter
    process under strace, recording every call that changes a file with the bytes it writes.
    Raises CrashCheckUnsupported where strace or ptrace is missing, or for an in-process
    adapter. Attached after the hello where permitted (``Tracing``): the interpreter's start-up
    is not traced, and its thousands of opens are not in the trace. ``trace`` is a FIFO made
    here, read while the steps run; past ``budget`` in one step the adapter is ended and
    TraceTooLarge raised."""
    tracing = Tracing.for_factory(factory)
    root = os.path.realpath(workspace)
    traced_calls = ",".join(f"?{name}" for name in (*TRACED_SYSCALLS, *UNVERIFIABLE_SYSCALLS))
    # --seccomp-bpf where the adapter starts under strace: this trace injects nothing (the kill
    # checks' ``when=k`` needs plain ptrace), so only the traced calls stop it (a third less
    # time a check). An attached strace cannot install the filter; it traces after the hello.
    adapter = tracing.adapter(["-o", str(trace), "-X", "raw", "-xx", "-yy",
                               "-s", str(_STRING_LIMIT), "-e", f"trace={traced_calls}"],
                              started_only=["--seccomp-bpf"])
    tap = _TraceTap(trace, budget or TraceBudget(), root)
    tap.victim = adapter
    replies: list[Mapping[str, Any]] = []
    try:
        adapter.start(timeout)
        for op, args, follow in steps:
            if follow is not None:
                args = {**args, **follow(replies)}
            reply = adapter.run(op, args, timeout)
            if not isinstance(reply, Result):
                raise CrashCheckUnsupported(
                    f"{op}: the traced adapter did not return a result ({type(reply).__name__})")
            replies.append(dict(reply.value))
    except (AdapterCrashed, AdapterTimedOut):
        if tap.error is None:
            raise
    finally:
        adapter.close()
        ops = tap.finish()  # the budget's TraceTooLarge wins over the crash it caused
    return Traced(tuple(ops), root, tuple(replies), not tracing.attach)


def on_the_same_file_system(root: str, paths: Iterable[str]) -> frozenset[str]:
    """Of ``paths`` (outside the workspace), those on the workspace's file system now: a
    ``syncfs`` through them syncs the workspace. /proc and what no longer exists never are."""
    device = os.stat(root).st_dev
    same = set()
    for path in paths:
        if not path.startswith("/") or path == "/proc" or path.startswith("/proc/"):
            continue
        with contextlib.suppress(OSError):
            if os.stat(path).st_dev == device:
                same.add(path)
    return frozenset(same)


def lay_out(state: CrashState, where: Path) -> None:
    """Build ``state`` afresh at ``where`` (removed first)."""
    remove_tree(where)
    where.mkdir(parents=True)
    for directory in sorted(state.directories):
        if directory:
            (where / directory).mkdir(parents=True, exist_ok=True)
    for name, data in state.files.items():
        (where / name).write_bytes(data)
