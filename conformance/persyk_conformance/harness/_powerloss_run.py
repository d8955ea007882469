"""The I/O edge of the power-loss harness: trace an adapter, lay out crash states, observe them.

Everything that touches a process or a file for ``_powerloss`` is here; the trace parser
(``_trace``), the persistence model (``_fsmodel``) and the sync-order analysis (``_syncorder``)
stay sans-IO.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._protocol import Result
from ..adapters._interface import Adapter
from ..run._workspace import remove_tree
from ._crash import CrashCheckUnsupported, Tracing
from ._fsmodel import CrashState
from ._trace import TRACED_SYSCALLS

__all__ = ["Traced", "lay_out", "snapshot", "trace_steps"]

# Big enough for every write of the scenarios (strace marks a cut string; the parser refuses it).
_STRING_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class Traced:
    """One traced run: the trace text, the workspace's real path, each step's reply, and
    whether the trace holds the reply to the hello (not when strace attached after it)."""

    text: str
    root: str
    replies: tuple[Mapping[str, Any], ...]
    greeted: bool = True


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
) -> Traced:
    """Run ``steps`` (op, args, arguments taken from the replies so far) in one adapter
    process under strace, recording every call that changes a file with the bytes it writes.
    Raises CrashCheckUnsupported where strace or ptrace is missing, or for an in-process
    adapter. Attached after the hello where permitted (``Tracing``): the interpreter's start-up
    is not traced, and its thousands of opens are not in the trace."""
    tracing = Tracing.for_factory(factory)
    traced_calls = ",".join(f"?{name}" for name in TRACED_SYSCALLS)
    # --seccomp-bpf where the adapter starts under strace: this trace injects nothing (the kill
    # checks' ``when=k`` needs plain ptrace), so only the traced calls stop it (a third less
    # time a check). An attached strace cannot install the filter; it traces after the hello.
    adapter = tracing.adapter(["-o", str(trace), "-X", "raw", "-x", "-yy",
                               "-s", str(_STRING_LIMIT), "-e", f"trace={traced_calls}"],
                              started_only=["--seccomp-bpf"])
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
    finally:
        adapter.close()
    text = trace.read_text("utf-8", "surrogateescape")
    return Traced(text, os.path.realpath(workspace), tuple(replies), not tracing.attach)


def lay_out(state: CrashState, where: Path) -> None:
    """Build ``state`` afresh at ``where`` (removed first)."""
    remove_tree(where)
    where.mkdir(parents=True)
    for directory in sorted(state.directories):
        if directory:
            (where / directory).mkdir(parents=True, exist_ok=True)
    for name, data in state.files.items():
        (where / name).write_bytes(data)
