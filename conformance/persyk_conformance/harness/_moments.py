"""Which kill moments a crash check explores: strace text in, the chosen points out.

Rule: this module never opens a file or starts a process. A recording run lists every mutating
call an operation makes; killing at each costs one adapter start under ptrace, the bulk of a
crash check's time. So the moments are chosen in two tiers, and the report says which:

1. *coverage*, always: for every distinct kind of call, the first and the last occurrence.
   A kind is the check's own label (the torn session, the capture's format) with the system
   call and the *role* of the file it changes (``session.jsonl``, the WAV, a file under
   ``recovery/``, the reply pipe, ...): so the first fsync of the WAV, the last write of a
   reply, the one rename are each killed at, whatever the sample draws;
2. a *sample* of the remaining calls drawn by a seeded generator, up to the budget
   (``--crash-moments``): reproducible, and exhaustive when the budget covers every call.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["KillPoint", "MomentChoice", "choose_moments", "file_role", "kill_points"]

T = TypeVar("T")

# ``PID name(first-argument, ...``: strace -f -o writes the pid first; -yy annotates descriptors.
_TRACE_LINE = re.compile(rb"^(?:\[pid\s+)?(\d+)\]?\s+(\w+)\((.*)$")
_ANNOTATED = re.compile(r"^-?\d+<(?P<path>[^>]*)>")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
# Numbers and hex digests in names (a fragment's offset and hash, a temporary suffix) vary by
# run and by input; the role is the name with them folded.
_VARYING = re.compile(r"[0-9a-f]{8,}|\d+")


@dataclass(frozen=True, slots=True)
class KillPoint:
    """One mutating call of a recording: the ``nth`` call of ``syscall`` in its thread (what
    ``strace -e inject=SYSCALL:when=N`` names) and the role of the file it changes."""

    syscall: str
    nth: int
    role: str

    @property
    def point(self) -> tuple[str, int]:
        return (self.syscall, self.nth)


# Calls that name the file they change by path (the first string), not by descriptor; the
# ``*at`` ones after a directory descriptor, which is not the file.
_BY_PATH = frozenset({
    "truncate", "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
    "unlink", "unlinkat", "rmdir", "mkdir", "mkdirat",
})


def file_role(syscall: str, arguments: str) -> str:
    """The role of the file a call changes, from its arguments as ``strace -yy`` prints them:
    ``reply`` for a pipe or socket (the adapter's standard output), else the file's name with
    its numbers folded (``session.jsonl``, ``harness-rec.wav``, ``.session.jsonl.#.tmp``)."""
    annotated = _ANNOTATED.match(arguments)
    quoted = _QUOTED.search(arguments)
    if syscall in _BY_PATH and quoted is not None:
        path = quoted.group(1)
    elif annotated is not None:
        path = annotated.group("path")
    else:
        return "?"
    if path.startswith(("pipe:", "socket:")):
        return "reply"
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return _VARYING.sub("#", name) or "/"


def kill_points(trace: bytes) -> list[KillPoint]:
    """The mutating calls of an ``strace -f -yy -o`` file, in order, each once, as the points a
    killing run can name with ``when=N`` (the count is per system call and per thread)."""
    seen: dict[tuple[bytes, bytes], int] = {}
    points: list[KillPoint] = []
    named: set[tuple[str, int]] = set()
    for line in trace.splitlines():
        match = _TRACE_LINE.match(line)
        if match is None:
            continue  # "<... resumed>", "+++ exited", signals
        key = (match.group(1), match.group(2))
        seen[key] = seen.get(key, 0) + 1
        syscall = match.group(2).decode("ascii")
        if (syscall, seen[key]) in named:
            continue  # another thread's n-th call of it: one point names both
        named.add((syscall, seen[key]))
        role = file_role(syscall, match.group(3).decode("utf-8", "surrogateescape"))
        points.append(KillPoint(syscall, seen[key], role))
    return points


@dataclass(frozen=True, slots=True)
class MomentChoice(Generic[T]):
    """The moments a check kills at, in recording order, and how they were chosen."""

    chosen: tuple[T, ...]
    total: int  # moments the recordings offered
    kinds: int  # distinct kinds of call among them
    covering: int  # chosen for coverage (first and last of each kind)
    seed: int

    def describe(self) -> str:
        """``explored 24 of 312 kill moments: ...``, for the report."""
        head = f"explored {len(self.chosen)} of {self.total} kill moments"
        if len(self.chosen) == self.total:
            return f"{head} (every one; {self.kinds} distinct kinds of call)"
        sampled = len(self.chosen) - self.covering
        return (f"{head}: the first and last of each of {self.kinds} distinct kinds of call "
                f"({self.covering}), then {sampled} sampled, seed {self.seed}")


def choose_moments(
    points: Sequence[T], kind: Callable[[T], Hashable], budget: int, seed: int
) -> MomentChoice[T]:
    """Coverage first (the first and last point of every ``kind``), then a seeded sample of
    the rest until ``budget`` points are chosen; every point when there are no more than
    ``budget``. Coverage is never cut by the budget: it is what the check proves at least."""
    first: dict[Hashable, int] = {}
    last: dict[Hashable, int] = {}
    for index, point in enumerate(points):
        first.setdefault(kind(point), index)
        last[kind(point)] = index
    covering = set(first.values()) | set(last.values())
    if len(points) <= budget:
        chosen = set(range(len(points)))
    else:
        rest = [index for index in range(len(points)) if index not in covering]
        room = max(0, budget - len(covering))
        chosen = covering | set(random.Random(seed).sample(rest, min(room, len(rest))))
    return MomentChoice(tuple(points[index] for index in sorted(chosen)), len(points),
                        len(first), len(covering & chosen), seed)
