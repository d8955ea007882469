"""H-104: recovery killed at every step, then run again (RCV-18, RCV-19).

A crash in the middle of ``recover`` must never block a session: whatever an interrupted
attempt left behind, the next ``recover`` finishes the job. This check proves it for any
implementation, in any language, without its cooperation, by killing the adapter process with
SIGKILL on entry to each system call that changes a file (as a power cut or ``kill -9`` would),
one call per attempt:

1. a *recording* run traces the mutating system calls of one ``recover`` under ``strace``;
2. for every recorded call (the k-th ``write``, the k-th ``fsync``, ...), or, where the
   recordings make more than ``--crash-moments`` calls, for the first and last call of each
   kind (system call and file role, ``_moments``) and a seeded sample of the rest, a fresh
   copy of the torn session is recovered by a fresh adapter process that ``strace`` kills on
   entry to exactly that call (``-e inject=SYSCALL:signal=KILL:when=k``); the kill happens
   before the call runs, so every state between two calls is reached, and killing at the reply
   covers the state after the last one;
3. a clean adapter then runs ``recover`` again. It must succeed, and the session must end exactly
   as one uninterrupted recovery leaves it: the committed records byte for byte (or, for a file
   without a complete record, no ``session.jsonl``), the fragment preserved under ``recovery/``
   exactly once (one file, holding exactly its bytes), nothing else left in the session
   directory, the session valid and a further ``recover`` a no-op.

Two torn sessions are used: a torn last record after committed ones (``truncated``, RCV-5) and a
torn header alone (``removed``, RCV-16). The counting is per system call and per traced thread
(strace's rule), so a multi-threaded implementation is killed at each thread's k-th call: still a
crash at a real step, if not always the recorded one. Where ``strace`` is missing or ptrace is
not permitted, and for an in-process adapter, the check is reported unsupported with the reason.

Every recording and killing run starts its adapter plainly and attaches strace once it has
greeted where that is permitted (``_attach``, :class:`Tracing`), so both count from the same
point; elsewhere both start under strace, which counts from the start.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .. import records as kit
from .._protocol import Result
from ..adapters._interface import Adapter, AdapterCrashed, AdapterTimedOut
from ._attach import StraceAttach, attach_permitted
from ._moments import KillPoint, choose_moments, kill_points

__all__ = [
    "MUTATING_SYSCALLS",
    "WORKERS",
    "CheckCannotRunHere",
    "CheckReport",
    "CrashCheckUnsupported",
    "Problems",
    "Tracing",
    "call",
    "each_moment",
    "killing_options",
    "recording_options",
    "recovery_killed_at_every_step",
    "strace_prefix",
    "trace_points",
    "workers_for",
    "wrapper",
]

# System calls that change a file or a directory. Opening with O_CREAT is not in the list
# (strace cannot select it by flag without killing at every open of the interpreter); the state
# it leaves is reached by killing at the next call of the list.
MUTATING_SYSCALLS: tuple[str, ...] = (
    "write", "pwrite64", "writev", "pwritev", "pwritev2", "fsync", "fdatasync",
    "sync_file_range", "ftruncate", "truncate", "rename", "renameat", "renameat2", "link",
    "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "rmdir", "mkdir", "mkdirat",
    "fallocate", "copy_file_range", "sendfile",
)
# "?" lets strace ignore a name this architecture lacks (no rename on aarch64, say).
_SYSCALL_SET = ",".join(f"?{name}" for name in MUTATING_SYSCALLS)
# The strace probe's bound, and the step bound when a caller gives none; a run passes its own
# --timeout (harness checks honour the run's timeout).
STEP_TIMEOUT = 30.0
TS = "2026-01-01T00:00:00.000Z"


class CrashCheckUnsupported(Exception):
    """The check does not apply to this adapter (it does not speak the profile, it answered
    ``unsupported``); says why. Outcome ``unsupported``."""


class CheckCannotRunHere(CrashCheckUnsupported):
    """The check applies to the adapter, but this machine cannot run it (no strace, no ptrace
    permission, no WAV oracle, an in-process adapter where processes are killed); says what is
    missing. Outcome ``unverified``: never a pass (run/_outcomes.py)."""


class _Wrappable(Protocol):
    def wrapped(self, prefix: Sequence[str]) -> Adapter: ...

    def attached(self, attach: StraceAttach) -> Adapter: ...


def strace_prefix() -> list[str]:
    """``strace`` as a command prefix, after proving that it can trace and inject here."""
    strace = shutil.which("strace")
    if strace is None:
        raise CheckCannotRunHere("needs strace (Linux) to trace or kill the adapter at its "
                                 "system calls; strace is not on PATH")
    probe = subprocess.run(
        [strace, "-f", "-qq", "-o", os.devnull, "-e", "trace=?write",
         "-e", "inject=?getpid:error=ENOSYS", "--", "true"],
        capture_output=True, timeout=STEP_TIMEOUT, check=False,
    )
    if probe.returncode != 0:
        raise CheckCannotRunHere("strace cannot trace processes here (ptrace not permitted)")
    # Not --seccomp-bpf: with it, strace 6.1 does not fire ``when=k`` injections for k > 1.
    return [strace, "-f", "-qq"]


def wrapper(factory: Callable[[], Adapter]) -> Callable[[Sequence[str]], Adapter]:
    sample = factory()
    if not hasattr(sample, "wrapped"):
        raise CheckCannotRunHere("needs an adapter process (not the in-process adapter)")

    def make(prefix: Sequence[str]) -> Adapter:
        adapter: _Wrappable = factory()  # type: ignore[assignment]
        return adapter.wrapped(prefix)

    return make


@dataclass(frozen=True, slots=True)
class Tracing:
    """How a crash check starts the adapters strace records or kills: plainly, with strace
    attached once each has greeted, where the probe found that permitted (``attach``); else
    under strace. Either way the recording and the killing runs count from the same point."""

    strace: tuple[str, ...]  # strace_prefix(): the program and its options for both paths
    factory: Callable[[], Adapter]
    attach: bool

    @classmethod
    def for_factory(cls, factory: Callable[[], Adapter]) -> Tracing:
        """Raises CrashCheckUnsupported without strace, ptrace or an adapter process."""
        strace = strace_prefix()
        wrapper(factory)  # an adapter process, or unsupported
        attach = hasattr(factory(), "attached") and attach_permitted(strace[0])
        return cls(tuple(strace), factory, attach)

    def adapter(self, options: Sequence[str], started_only: Sequence[str] = ()) -> Adapter:
        """A new adapter traced with ``options`` (a recording's or a kill's, below), and
        ``started_only`` too where it starts under strace (options an attach cannot take)."""
        adapter: _Wrappable = self.factory()  # type: ignore[assignment]
        if self.attach:
            return adapter.attached(StraceAttach(self.strace[0], tuple(options)))
        return adapter.wrapped([*self.strace, *started_only, *options, "--"])


# --- the torn sessions -------------------------------------------------------------------------

HEADER = {"type": "session", "version": 1, "id": "harness-crash", "timestamp": TS}


def _scenarios() -> list[tuple[str, bytes, bytes]]:
    """(name, committed bytes, fragment): the file is committed + fragment."""
    committed = kit.jsonl(
        HEADER,
        kit.user("k0", None, "first"),
        kit.user("k1", "k0", "second"),
    )
    torn = kit.line(kit.user("k2", "k1", "a record cut by a crash, " + "x" * 3000))
    return [
        ("truncated", committed, torn[: len(torn) // 2]),  # RCV-5
        ("removed", b"", kit.line(HEADER)[:-9]),  # RCV-16: a torn header alone
    ]


# --- the check ---------------------------------------------------------------------------------


class Problems:
    """At most fifty problems: enough to see a pattern, never a flood."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        if len(self.items) < 50:
            self.items.append(text)

    def check(self, condition: bool, text: str) -> None:
        if not condition:
            self.add(text)

    def report(self, explored: str | None) -> CheckReport:
        return CheckReport(tuple(self.items), explored)


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What a check that chooses its moments found, and which moments it explored (the
    report carries ``explored`` beside the verdict)."""

    problems: tuple[str, ...]
    explored: str | None = None


def call(adapter: Adapter, op: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One operation's result; a reply that is no result (internal, unsupported) raises."""
    reply = adapter.run(op, args, timeout)
    if not isinstance(reply, Result):
        raise AdapterCrashed(f"{op}: the adapter did not return a result ({type(reply).__name__})")
    return dict(reply.value)


T = TypeVar("T")

# Killed runs are independent (each in its own session directory, each adapter its own
# process), so a check runs a few at once: most of a run is the adapter's start under ptrace.
# A run passes its -j instead (``run -j 1`` runs one killed adapter at a time).
MOST_WORKERS = 4


def workers_for(jobs: int) -> int:
    """How many killed adapters a crash check runs at once in a run of ``-j jobs``."""
    return max(1, min(MOST_WORKERS, jobs))


WORKERS = workers_for(os.cpu_count() or 1)


def each_moment(
    factory: Callable[[], Adapter], timeout: float, moments: Sequence[T],
    run: Callable[[int, T, Adapter], bool], workers: int = WORKERS,
) -> int:
    """``run(number, moment, clean)`` for every moment (numbered from 1), on up to ``workers``
    threads, each with a clean adapter of its own for the judging; returns how many runs were
    killed. The first exception of any thread is raised once all have stopped."""
    numbered = list(enumerate(moments, start=1))
    workers = max(1, workers)
    lanes = [numbered[lane::workers] for lane in range(workers) if numbered[lane::workers]]
    fired = [0] * len(lanes)
    failures: list[BaseException] = []

    def work(lane: int) -> None:
        clean = factory()
        try:
            clean.start(timeout)
            for number, moment in lanes[lane]:
                if failures:
                    return
                fired[lane] += run(number, moment, clean)
        except BaseException as exc:  # re-raised below, in the check's own thread
            failures.append(exc)
        finally:
            clean.close()

    threads = [threading.Thread(target=work, args=(lane,)) for lane in range(len(lanes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return sum(fired)


def recovery_killed_at_every_step(
    factory: Callable[[], Adapter], workdir: Path, timeout: float = STEP_TIMEOUT,
    moments: int | None = None, workers: int = WORKERS,
) -> CheckReport:
    """H-104, each adapter step bounded by the run's ``timeout``, killed at ``moments`` of the
    recorded calls at most beyond coverage (None: every one), ``workers`` killed adapters at
    once; raises CrashCheckUnsupported when it cannot run here."""
    tracing = Tracing.for_factory(factory)
    problems = Problems()
    points: list[tuple[str, tuple[bytes, bytes], KillPoint]] = []
    for name, committed, fragment in _scenarios():
        recorded = _kill_points(tracing, workdir / name / "record", committed + fragment,
                                timeout)
        if not recorded:
            problems.add(f"{_action(committed)}: the recording run made no mutating system call")
            return problems.report(None)
        points += [(name, (committed, fragment), point) for point in recorded]
    choice = choose_moments(points, lambda at: (at[0], at[2].syscall, at[2].role),
                            len(points) if moments is None else moments, SEED)
    fired: dict[str, int] = dict.fromkeys((name for name, _torn, _point in points), 0)
    lock = threading.Lock()

    def run(number: int, at: tuple[str, tuple[bytes, bytes], KillPoint], clean: Adapter) -> bool:
        name, torn, point = at
        killed = _kill_and_rerun(tracing, clean, workdir / name / f"kill-{number}", torn,
                                 point, problems, timeout)
        with lock:
            fired[name] += killed
        return killed

    each_moment(factory, timeout, choice.chosen, run, workers)
    for name, count in fired.items():
        chosen = sum(1 for at in choice.chosen if at[0] == name)
        if chosen and not count:
            # Then nothing was proven: say so rather than pass.
            problems.add(f"{name}: strace killed the adapter at none of the {chosen} points")
    return problems.report(choice.describe())


# The moments are chosen by a seeded generator when there are more than the budget: a run is
# reproducible, and a failure's moment is killed again by the next run.
SEED = 20261203


def _action(committed: bytes) -> str:
    return "truncated" if committed else "removed"


def _lay_out(session: Path, data: bytes) -> None:
    session.mkdir(parents=True)
    (session / "session.jsonl").write_bytes(data)


def _kill_points(tracing: Tracing, case: Path, data: bytes, timeout: float) -> list[KillPoint]:
    """Record one uninterrupted recovery: its mutating calls, as (syscall, k-th of its thread)
    with the role of the file each changes."""
    session = case / "session"
    _lay_out(session, data)
    trace = case / "trace.txt"
    adapter = tracing.adapter(recording_options(trace))
    try:
        adapter.start(timeout)
        call(adapter, "recover", {"session": str(session)}, timeout)
    finally:
        adapter.close()
    points = kill_points(trace.read_bytes())
    shutil.rmtree(case, ignore_errors=True)
    return points


def trace_points(trace: bytes) -> list[tuple[str, int]]:
    """The mutating calls of an ``strace -o`` file, in order, each as (syscall, k-th of that
    syscall in its thread), once each: the points a killing run can name with ``when=k``."""
    return [point.point for point in kill_points(trace)]


def recording_options(trace: Path) -> list[str]:
    """The strace options of a run that records its mutating calls into ``trace`` (``-yy``:
    each descriptor with its path, for the role of the file a call changes)."""
    return ["-yy", "-o", str(trace), "-e", f"trace={_SYSCALL_SET}"]


def killing_options(point: tuple[str, int], trace: Path | None = None) -> list[str]:
    """The strace options of a run killed (SIGKILL) on entry to the ``point``-th call; with
    ``trace``, the calls of that system call up to the kill are written there as a recording
    writes them (the tests compare the two)."""
    syscall, nth = point
    where = ["-yy", "-o", str(trace)] if trace is not None else ["-o", os.devnull]
    return [*where, "-e", f"trace={syscall}", "-e", f"inject={syscall}:signal=KILL:when={nth}"]


def _kill_and_rerun(
    tracing: Tracing, clean: Adapter, base: Path, torn: tuple[bytes, bytes], point: KillPoint,
    problems: Problems, timeout: float,
) -> bool:
    """One moment: a fresh copy of the torn session recovered by an adapter killed on entry to
    ``point``, then recovered again by ``clean``; True if the kill fired."""
    committed, fragment = torn
    where = f"{_action(committed)}: killed at {point.syscall} #{point.nth} ({point.role})"
    session = base / "session"
    _lay_out(session, committed + fragment)
    adapter = tracing.adapter(killing_options(point.point))
    killed = False
    try:
        adapter.start(timeout)
        call(adapter, "recover", {"session": str(session)}, timeout)
    except (AdapterCrashed, AdapterTimedOut):
        killed = True  # killed, as intended (or hung: the rerun below must cope either way)
    finally:
        adapter.kill()
    _check_rerun(clean, session, torn, where, problems, timeout)
    shutil.rmtree(base, ignore_errors=True)
    return killed


def _check_rerun(
    clean: Adapter, session: Path, torn: tuple[bytes, bytes], where: str,
    problems: Problems, timeout: float,
) -> None:
    committed, fragment = torn
    file = session / "session.jsonl"
    try:
        result = call(clean, "recover", {"session": str(session)}, timeout)
    except (AdapterCrashed, AdapterTimedOut) as exc:
        problems.add(f"{where}: the rerun failed: {exc}")
        clean.start(timeout)
        return
    if "error" in result and committed:
        problems.add(f"{where}: the rerun was refused: {result['error']}")
        return
    if committed:
        if not file.is_file() or file.read_bytes() != committed:
            problems.add(f"{where}: after the rerun the file is not exactly the committed records")
    elif file.exists():
        problems.add(f"{where}: after the rerun session.jsonl still exists (RCV-16)")
    recovery = session / "recovery"
    kept = sorted(p for p in recovery.rglob("*")) if recovery.is_dir() else []
    files = [p for p in kept if p.is_file() and not p.is_symlink()]
    if len(kept) != 1 or len(files) != 1:
        names = [str(p.relative_to(session)) for p in kept]
        problems.add(f"{where}: recovery/ must hold exactly the preserved fragment, holds {names}")
    elif files[0].read_bytes() != fragment:
        problems.add(f"{where}: the preserved file does not hold the fragment's exact bytes")
    preserved = result.get("preserved")
    if isinstance(preserved, str) and not (session / preserved).is_file():
        problems.add(f"{where}: the rerun names {preserved!r}, which is not a file")
    others = sorted(
        p.name for p in session.iterdir() if p.name not in ("session.jsonl", "session.lock",
                                                            "recovery")
    )
    if others:
        problems.add(f"{where}: the interrupted attempt left {others} in the session directory")
    if committed:
        valid = call(clean, "validate", {"session": str(session)}, timeout)
        if valid.get("valid") is not True:
            problems.add(f"{where}: the session is not valid after the rerun")
        again = call(clean, "recover", {"session": str(session)}, timeout)
        if again.get("action") != "none":
            problems.add(f"{where}: a further recover is not a no-op: {again}")
