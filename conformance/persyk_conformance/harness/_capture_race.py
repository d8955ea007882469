"""H-152 and H-153: the locks of a live capture against other processes, and a deletion killed
in the middle.

* H-152 runs three adapter processes on one session: A captures, B appends, C recovers (and
  tries to delete). First, while the harness itself holds ``session.lock``, A's ``captureStart``
  must create and lock its WAV before it waits for the session lock (CAP-4, CAP-20); C's
  ``recoverRecording`` and ``deleteSession`` must be refused with ``ASSET_LOCKED`` at once,
  never wait for the session lock (CAP-27, CAP-29). Then A writes and finishes, B appends and C
  tries recovery, all at once: no step may hang (a deadlock), every append commits, every
  recovery sent while the capture lives is ``ASSET_LOCKED`` (CAP-3), and the session ends valid
  with every message, one ``recording.finished`` and no ``recording.interrupted``, the WAV
  holding exactly the frames sent.
* H-153 lays out a session with assets and a fragment beside another session and a copy of it
  in one root, and a same-named copy in a second root. A recording run lists the mutating system
  calls of one ``deleteSession``; at the first and last call of each kind and a seeded sample of
  the rest up to ``moments`` (all when there are no more, ``_moments``) a fresh layout is
  deleted by an adapter killed on entry to that call. At that moment the session is either whole
  at its place or gone from it, never partly removed there, and nothing new is a direct
  child of the root but ``.persyk-deleted`` (CAP-29); with the ``search`` capability,
  ``discover`` finds it exactly when it is at its place (CAP-30). A retry by a fresh adapter
  then finishes the deletion; the other session and both copies are untouched (CAP-10).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import records as kit
from ..adapters._interface import Adapter, AdapterCrashed, AdapterTimedOut
from ..adapters._subprocess import SubprocessAdapter
from ..run._conditions import held_lock, is_locked, wav_fields
from ..run._workspace import remove_tree
from ._capture_kit import (
    LEAF,
    RECORDING,
    SEED,
    AudioFormat,
    HarnessOptions,
    Problems,
    Strace,
    b64,
    call,
    each_moment,
    entries_after,
    lay_out_session,
    pcm_stream,
    tree_bytes,
    wav_bytes,
)
from ._crash import CheckCannotRunHere, CheckReport
from ._moments import KillPoint, choose_moments

__all__ = ["capture_against_append_and_recovery", "deletion_killed_in_the_middle"]

FORMAT = AudioFormat(16000, 1)
WRITES = 40
WRITE_BYTES = 322  # 161 frames a write
APPENDS = 20
# How long a step may wait for a lock the harness holds: long enough to see what it does while
# it waits, short enough to keep the check quick.
LOCK_WAIT = 2.0
STAGING = ".persyk-deleted"


def _processes(factory: Callable[[], Adapter]) -> None:
    if not isinstance(factory(), SubprocessAdapter):
        raise CheckCannotRunHere("needs an adapter process (not the in-process adapter)")


# --- H-152 -------------------------------------------------------------------------------------


def capture_against_append_and_recovery(
    factory: Callable[[], Adapter], workdir: Path, options: HarnessOptions
) -> list[str]:
    """H-152; raises CheckCannotRunHere for the in-process adapter."""
    _processes(factory)
    timeout = max(options.timeout, LOCK_WAIT * 2)
    session = workdir / "session"
    before = lay_out_session(session)
    stream = pcm_stream(WRITES * WRITE_BYTES, SEED + 2)
    problems = Problems()
    capture, appender, recovery = factory(), factory(), factory()
    try:
        for adapter in (capture, appender, recovery):
            adapter.start(timeout)
        handle = _start_under_held_lock(capture, session, problems, timeout)
        if handle is None:
            return problems.items
        _refused_under_held_lock(recovery, session, problems, timeout)
        _race(capture, appender, recovery, (session, handle, stream), problems, timeout)
    finally:
        for adapter in (capture, appender, recovery):
            adapter.kill()
    _judge_race(session, before, stream, problems)
    return problems.items


def _start_under_held_lock(
    capture: Adapter, session: Path, problems: Problems, timeout: float
) -> str | None:
    """captureStart while the harness holds the session lock: the WAV must exist and be locked
    while the start waits; released, the start must succeed."""
    wav = session / "assets" / f"{RECORDING}.wav"
    answer: list[dict[str, Any]] = []
    failure: list[str] = []

    def start() -> None:
        try:
            answer.append(call(capture, "captureStart", {
                "session": str(session), "recordingId": RECORDING, "leaf": LEAF,
                "rate": FORMAT.rate, "channels": FORMAT.channels, "lockTimeout": LOCK_WAIT * 2},
                timeout))
        except (AdapterCrashed, AdapterTimedOut) as exc:
            failure.append(str(exc))

    with held_lock(session, ["session.lock", "session.jsonl"]):
        thread = threading.Thread(target=start)
        thread.start()
        locked = _seen_locked(wav, thread, time.monotonic() + LOCK_WAIT)
    thread.join(timeout + 1)
    problems.check(locked, "while captureStart waited for the session lock, its WAV was not "
                   "created and locked: the asset lock must come before the session lock "
                   "(CAP-4, CAP-20)")
    started = answer[0] if answer else {}
    if failure or "error" in started or not isinstance(started.get("handle"), str):
        problems.add(f"captureStart did not start once the session lock was free: "
                     f"{failure or started}")
        return None
    return str(started["handle"])


def _seen_locked(wav: Path, waiting: threading.Thread, deadline: float) -> bool:
    """Whether ``wav`` is seen held by another process while ``waiting`` still waits. Linux
    lists every flock in /proc/locks, which is read without taking one; elsewhere a probe of our
    own, only after the file has existed a while, so that it never meets the creator's first
    lock."""
    while time.monotonic() < deadline and waiting.is_alive():
        if wav.exists():
            listed = _flocked(wav)
            if listed is None:
                time.sleep(0.3)
                return waiting.is_alive() and is_locked(wav) is True
            if listed:
                return waiting.is_alive()
        time.sleep(0.02)
    return False


def _flocked(path: Path) -> bool | None:
    """Whether /proc/locks lists a flock on ``path``'s inode; None without /proc/locks."""
    try:
        info = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return None
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    return any(" FLOCK " in line and device in line.split() for line in lines)


def _refused_under_held_lock(
    recovery: Adapter, session: Path, problems: Problems, timeout: float
) -> None:
    """While the capture lives and the harness holds the session lock: recovery and deletion
    take the asset lock first, so they are refused with ASSET_LOCKED, and touch nothing."""
    tree = tree_bytes(session)
    with held_lock(session, ["session.lock", "session.jsonl"]):
        for op, extra in (("recoverRecording", {"recordingId": RECORDING}),
                          ("deleteSession", {"confirm": True})):
            result = call(recovery, op, {"session": str(session), **extra,
                                         "lockTimeout": LOCK_WAIT / 3}, timeout)
            code = result.get("error", {}).get("code") if "error" in result else None
            problems.check(code == "ASSET_LOCKED", f"{op} during a live capture, with the "
                           f"session lock held elsewhere, answered {code or result}: it must "
                           "take the asset lock first and refuse (CAP-4, CAP-27, CAP-29)")
    problems.check(tree_bytes(session) == tree, "a refused recovery or deletion changed the "
                   "session directory (CAP-3)")


def _race(
    capture: Adapter, appender: Adapter, recovery: Adapter, target: tuple[Path, str, bytes],
    problems: Problems, timeout: float,
) -> None:
    session, handle, stream = target
    finishing = threading.Event()
    lines: list[str] = []

    def write_and_finish() -> None:
        for offset in range(0, len(stream), WRITE_BYTES):
            chunk = stream[offset:offset + WRITE_BYTES]
            wrote = call(capture, "captureWrite", {"handle": handle, "pcm": b64(chunk)}, timeout)
            if "error" in wrote:
                lines.append(f"captureWrite answered {wrote['error']}")
        finishing.set()
        done = call(capture, "captureFinish", {"handle": handle, "lockTimeout": LOCK_WAIT * 2},
                    timeout)
        if done.get("frames") != len(stream) // FORMAT.frame or done.get("outcome") != "complete":
            lines.append(f"captureFinish answered {done}")

    def append() -> None:
        for n in range(APPENDS):
            # B's own branch from m1: valid wherever the capture's entries land meanwhile.
            parent = f"during-{n - 1}" if n else LEAF
            record = kit.user(f"during-{n}", parent, f"appended during the capture {n}")
            result = call(appender, "append", {"session": str(session), "records": [record],
                                               "lockTimeout": LOCK_WAIT * 2}, timeout)
            if result.get("committed") != [f"during-{n}"]:
                lines.append(f"append {n} during the capture answered {result}")

    def recover() -> None:
        while not finishing.is_set():
            result = call(recovery, "recoverRecording", {
                "session": str(session), "recordingId": RECORDING, "lockTimeout": LOCK_WAIT},
                timeout)
            code = result.get("error", {}).get("code") if "error" in result else None
            if code != "ASSET_LOCKED" and not finishing.is_set():
                lines.append(f"recoverRecording during the live capture answered "
                             f"{code or result}, not ASSET_LOCKED (CAP-3, CAP-27)")

    _together((write_and_finish, append, recover), lines, timeout * 4)
    for line in lines:
        problems.add(line)


def _together(steps: tuple[Callable[[], None], ...], lines: list[str], bound: float) -> None:
    """Run the steps at once; a step that raises or is still running after ``bound`` seconds
    (a deadlock: every step has its deadline) is reported."""

    def guarded(step: Callable[[], None]) -> None:
        try:
            step()
        except (AdapterCrashed, AdapterTimedOut) as exc:
            lines.append(f"{step.__name__}: {type(exc).__name__}: {exc} (a deadlock?)")

    threads = [threading.Thread(target=guarded, args=(step,), daemon=True) for step in steps]
    for thread in threads:
        thread.start()
    end = time.monotonic() + bound
    for thread, step in zip(threads, steps, strict=True):
        thread.join(max(end - time.monotonic(), 0.0))
        if thread.is_alive():
            lines.append(f"{step.__name__} did not end within {bound:.0f} s: a deadlock")


def _judge_race(session: Path, before: bytes, stream: bytes, problems: Problems) -> None:
    appended = entries_after(session, before)
    if isinstance(appended, str):
        problems.add(appended)
        return
    types = [entry.get("type") for entry in appended]
    ids = [entry.get("id") for entry in appended]
    problems.check(types.count("recording.started") == 1 and types.count("recording.finished")
                   == 1 and "recording.interrupted" not in types,
                   f"the session gained {types.count('recording.started')} recording.started, "
                   f"{types.count('recording.finished')} recording.finished and "
                   f"{types.count('recording.interrupted')} recording.interrupted; expected one, "
                   "one and none")
    missing = [f"during-{n}" for n in range(APPENDS) if ids.count(f"during-{n}") != 1]
    problems.check(not missing, f"appended messages missing or repeated: {missing}")
    wav = session / "assets" / f"{RECORDING}.wav"
    data = wav.read_bytes() if wav.is_file() else b""
    fields = wav_fields(data[:1 << 16], len(data))
    problems.check(fields is not None and fields.get("dataSize") == len(stream)
                   and data[fields["dataOffset"]:] == stream,
                   "the finished WAV does not hold exactly the frames sent, with their size")


# --- H-153 -------------------------------------------------------------------------------------

VICTIM, OTHER, COPY = "doomed", "other", "copy"


def _lay_out_roots(base: Path) -> tuple[Path, Path]:
    """root/{doomed, other, copy} and elsewhere/doomed; returns the two roots."""
    root, elsewhere = base / "root", base / "elsewhere"
    doomed = root / VICTIM
    lay_out_session(doomed, "harness-delete")
    audio = pcm_stream(3200, SEED + 3)
    with (doomed / "session.jsonl").open("ab") as file:
        file.write(kit.jsonl(
            kit.entry("recording.started", "rs", LEAF, recordingId="r1", asset={
                "status": "available", "path": "assets/r1.wav", "mimeType": "audio/wav"}),
            kit.entry("recording.finished", "rf", "rs", recordingId="r1", durationMs=100,
                      outcome="complete")))
    (doomed / "assets").mkdir()
    (doomed / "assets" / "r1.wav").write_bytes(wav_bytes(FORMAT, audio))
    (doomed / "assets" / "protocol-0b6f3c1e-5f0e-4a59-9a53-6c1f1ad0e001.bin").write_bytes(audio)
    (doomed / "recovery").mkdir()
    (doomed / "recovery" / "session.jsonl.1-fragment").write_bytes(b'{"type":"mess')
    lay_out_session(root / OTHER, "harness-other")
    for copy in (root / COPY, elsewhere / VICTIM):
        copy.mkdir(parents=True)
        for rel, data in tree_bytes(doomed).items():
            target = copy / rel
            if data is None:
                target.mkdir()
            else:
                target.write_bytes(data)
    return root, elsewhere


def _deleting(session: Path, timeout: float) -> Callable[[Adapter], object]:
    def drive(adapter: Adapter) -> object:
        adapter.start(timeout)
        return call(adapter, "deleteSession", {"session": str(session), "confirm": True},
                    timeout)

    return drive


def deletion_killed_in_the_middle(
    factory: Callable[[], Adapter], workdir: Path, options: HarnessOptions
) -> CheckReport:
    """H-153; raises CrashCheckUnsupported when it cannot run here."""
    strace = Strace.for_factory(factory)
    timeout = options.timeout
    root, _ = _lay_out_roots(workdir / "record")
    points = strace.record_points(workdir / "trace.txt", _deleting(root / VICTIM, timeout))
    choice = choose_moments(points, lambda point: (point.syscall, point.role), options.moments,
                            SEED + 4)
    problems = Problems()

    def run(moment: int, point: KillPoint, clean: Adapter) -> bool:
        where = f"moment {moment} (killed on entry to {point.syscall} #{point.nth}, {point.role})"
        base = workdir / f"kill-{moment}"
        root, elsewhere = _lay_out_roots(base)
        want = {name: tree_bytes(root / name) for name in (VICTIM, OTHER, COPY)}
        want_elsewhere = tree_bytes(elsewhere)
        killed = strace.kill_at(point.point, _deleting(root / VICTIM, timeout))
        discovers = "search" in clean.hello.capabilities
        _judge_moment(clean, root, want, where, problems, discovers, timeout)
        _judge_retry(clean, root, want, where, problems, discovers, timeout)
        problems.check(tree_bytes(elsewhere) == want_elsewhere,
                       f"{where}: the same-named session in another root changed (CAP-10)")
        remove_tree(base)
        return killed

    fired = each_moment(factory, timeout, choice.chosen, run, options.workers)
    problems.check(fired > 0 or not choice.chosen,
                   f"strace killed the deletion at none of the {len(choice.chosen)} moments")
    return problems.report(choice.describe())


def _discovered(clean: Adapter, root: Path, timeout: float) -> set[str] | None:
    result = call(clean, "discover", {"roots": [str(root)]}, timeout)
    sessions = result.get("sessions")
    if not isinstance(sessions, list):
        return None
    return {os.path.basename(str(s.get("location"))) for s in sessions if isinstance(s, dict)}


def _judge_moment(
    clean: Adapter, root: Path, want: dict[str, dict[str, bytes | None]], where: str,
    problems: Problems, discovers: bool, timeout: float,
) -> None:
    """The state the kill left: the session whole at its place, or gone from it."""
    present = (root / VICTIM).exists()
    whole = present and tree_bytes(root / VICTIM) == want[VICTIM]
    problems.check(whole or not present,
                   f"{where}: the session is partly removed at its place: deletion must move "
                   "it out before removing anything (CAP-29)")
    extra = sorted({p.name for p in root.iterdir()} - {VICTIM, OTHER, COPY, STAGING})
    problems.check(not extra, f"{where}: new direct children of the root: {extra} (CAP-29)")
    if discovers:
        found = _discovered(clean, root, timeout)
        want_found = {OTHER, COPY} | ({VICTIM} if whole else set())
        problems.check(found == want_found, f"{where}: discover finds {sorted(found or ())}, "
                       f"expected {sorted(want_found)} (CAP-30)")


def _judge_retry(
    clean: Adapter, root: Path, want: dict[str, dict[str, bytes | None]], where: str,
    problems: Problems, discovers: bool, timeout: float,
) -> None:
    staged = root / STAGING
    leftovers = sorted(p.name for p in staged.iterdir()) if staged.is_dir() else []
    result = call(clean, "deleteSession", {"session": str(root / VICTIM), "confirm": True},
                  timeout)
    code = result["error"].get("code") if isinstance(result.get("error"), dict) else None
    if code is not None:
        # Only a deletion that had finished leaves nothing to retry.
        problems.check(code == "PATH_NOT_FOUND" and not (root / VICTIM).exists()
                       and not leftovers,
                       f"{where}: the retry answered {code} (CAP-30)")
    else:
        problems.check(result.get("action") in ("deleted", "resumed"),
                       f"{where}: the retry answered {result}")
    children = sorted(p.name for p in root.iterdir())
    staged_left = sorted(p.name for p in staged.iterdir()) if staged.is_dir() else []
    problems.check(set(children) <= {OTHER, COPY, STAGING} and not staged_left,
                   f"{where}: after the retry the root holds {children}, staged {staged_left}")
    for name in (OTHER, COPY):
        problems.check(tree_bytes(root / name) == want[name],
                       f"{where}: the session {name!r} beside it changed (CAP-10)")
    if discovers:
        found = _discovered(clean, root, timeout)
        problems.check(found == {OTHER, COPY}, f"{where}: after the retry discover finds "
                       f"{sorted(found or ())} (CAP-30)")
