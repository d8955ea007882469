"""H-150 and H-151: a capture killed while it writes, and a recovery killed while it repairs.

Both kill the adapter process with SIGKILL on entry to a system call that changes a file (the
``strace`` injection of H-104, ``_crash``), so every moment is a real step of the
implementation, reproducible from the seed, and no implementation cooperates or can notice.

* H-150: a *recording* run captures a stream of noise in ``captureWrite`` requests of random
  sizes (most not whole frames), once mono at 16 kHz and once stereo at 48 kHz, and lists the
  mutating calls it makes (the WAV's creation and header, ``recording.started``, every write of
  frames, every reply). The first and last call of each kind (format, system call, file role)
  are always chosen, then a seeded sample of the rest up to ``moments`` (``--crash-moments``,
  ``_moments``); for each, a fresh session is captured into by an adapter killed on entry to that
  call. A kill on entry never tears a write, so at every second moment the harness tears one
  itself: it appends the first bytes of the next frame of the stream, as a power cut in the
  middle of that write leaves them. Then a fresh adapter runs ``recoverRecording``.
* H-151: three crashed captures (mono; mono with a torn last frame; stereo with a torn last
  frame) are each recovered once without a kill, which gives the bytes every recovery must end
  in. Then recovery is killed at the moments chosen the same way from the mutating calls of
  those recoveries (all of them when there are no more than ``moments``) and rerun by a fresh
  adapter.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..adapters._interface import Adapter, AdapterCrashed
from ..run._conditions import wav_fields
from ..run._workspace import remove_tree
from ._capture_kit import (
    LEAF,
    RECORDING,
    SEED,
    TS,
    AudioFormat,
    HarnessOptions,
    Oracle,
    Problems,
    Strace,
    b64,
    call,
    chunk_sizes,
    each_moment,
    entries_after,
    judge_recovered_wav,
    lay_out_session,
    oracle,
    pcm_stream,
    tree_bytes,
)
from ._crash import CheckReport
from ._moments import KillPoint, choose_moments

__all__ = ["capture_killed_while_writing", "recovery_killed_while_repairing"]

FORMATS = (AudioFormat(16000, 1), AudioFormat(48000, 2))
STREAM_BYTES = 32000  # per format: 1 s mono at 16 kHz, 1/6 s stereo at 48 kHz
LARGEST_WRITE = 600
INTERRUPTED = "harness-interrupted"


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one capture sends: its format, its bytes, the sizes of its writes."""

    fmt: AudioFormat
    stream: bytes
    sizes: tuple[int, ...]


def _plans() -> list[_Plan]:
    rng = random.Random(SEED)
    return [_Plan(fmt, pcm_stream(STREAM_BYTES, SEED + index),
                  tuple(chunk_sizes(STREAM_BYTES, rng, LARGEST_WRITE)))
            for index, fmt in enumerate(FORMATS)]


def _capture(adapter: Adapter, session: Path, plan: _Plan, sent: bytearray, timeout: float,
             writes: int | None = None) -> str | None:
    """Start a capture and send the plan's writes (the first ``writes`` of them); each chunk is
    counted as sent before its request goes out. Returns what refused the capture, if anything."""
    adapter.start(timeout)
    started = call(adapter, "captureStart", {
        "session": str(session), "recordingId": RECORDING, "leaf": LEAF,
        "rate": plan.fmt.rate, "channels": plan.fmt.channels}, timeout)
    if "error" in started:
        return f"captureStart answered {started['error']}"
    for size in plan.sizes[:writes]:
        chunk = plan.stream[len(sent):len(sent) + size]
        sent += chunk
        wrote = call(adapter, "captureWrite", {"handle": started.get("handle"),
                                               "pcm": b64(chunk)}, timeout)
        if "error" in wrote:
            return f"captureWrite answered {wrote['error']}"
    return None


def _wav(session: Path) -> Path:
    return session / "assets" / f"{RECORDING}.wav"


def _data_bytes(session: Path) -> int:
    """The bytes after the WAV's data header (0 without a WAV or a complete header)."""
    wav = _wav(session)
    try:
        with wav.open("rb") as file:
            fields = wav_fields(file.read(1 << 16), wav.stat().st_size)
    except OSError:
        return 0
    return 0 if fields is None else fields["dataBytes"]


def _tear(session: Path, sent: bytes, fmt: AudioFormat, size: int) -> bool:
    """Append the first ``size`` bytes of the next frame of ``sent`` to the WAV, as a write torn
    by a power cut leaves them; False when there is no WAV with whole frames or no next frame."""
    start = _data_bytes(session)
    if start % fmt.frame or start + size > len(sent) or not _wav(session).is_file():
        return False
    with _wav(session).open("ab") as file:
        file.write(sent[start:start + size])
    return True


# --- H-150 -------------------------------------------------------------------------------------


def capture_killed_while_writing(
    factory: Callable[[], Adapter], workdir: Path, options: HarnessOptions
) -> CheckReport:
    """H-150; raises CrashCheckUnsupported when it cannot run here."""
    found = oracle()
    strace = Strace.for_factory(factory)
    timeout = options.timeout
    plans = _plans()
    problems = Problems()
    points: list[tuple[int, KillPoint]] = []
    for index, plan in enumerate(plans):
        session = workdir / f"record-{index}" / "session"
        lay_out_session(session)
        refused: list[str | None] = []

        def drive(adapter: Adapter, session: Path = session, plan: _Plan = plan,
                  refused: list[str | None] = refused) -> None:
            refused.append(_capture(adapter, session, plan, bytearray(), timeout))

        recorded = strace.record_points(workdir / f"trace-{index}.txt", drive)
        remove_tree(session.parent)
        if refused != [None]:
            problems.add(f"the recording run ({plan.fmt}) could not capture: {refused}")
            return problems.report(None)
        points += [(index, point) for point in recorded]
    # A kind: the format, the call, the file it changes (the WAV, the session, a reply).
    choice = choose_moments(points, lambda at: (at[0], at[1].syscall, at[1].role),
                            options.moments, SEED)

    def run(moment: int, at: tuple[int, KillPoint], clean: Adapter) -> bool:
        return _capture_moment(strace, clean, workdir / f"kill-{moment}", plans[at[0]],
                               (moment, at[1].point), found, problems, timeout)

    fired = each_moment(factory, timeout, choice.chosen, run, options.workers)
    problems.check(fired > 0 or not choice.chosen,
                   f"strace killed the capture at none of the {len(choice.chosen)} moments")
    return problems.report(choice.describe())


def _capture_moment(
    strace: Strace, clean: Adapter, case: Path, plan: _Plan, at: tuple[int, tuple[str, int]],
    found: Oracle, problems: Problems, timeout: float,
) -> bool:
    moment, point = at
    session = case / "session"
    before = lay_out_session(session)
    sent = bytearray()
    outcome: list[str | None] = []
    killed = strace.kill_at(point, lambda adapter: outcome.append(
        _capture(adapter, session, plan, sent, timeout)))
    where = f"moment {moment} ({plan.fmt}, killed on entry to {point[0]} #{point[1]})"
    if outcome and outcome[0] is not None:
        problems.add(f"{where}: {outcome[0]}")
    elif moment % 2 == 0 and _tear(session, bytes(sent), plan.fmt, 1 + moment % (plan.fmt.frame
                                                                                  - 1)):
        where += ", then a torn frame"
    _judge_capture(clean, session, before, (plan.fmt, bytes(sent)), where, found, problems,
                   timeout)
    remove_tree(case)
    return killed


def _judge_capture(
    clean: Adapter, session: Path, before: bytes, capture: tuple[AudioFormat, bytes], where: str,
    found: Oracle, problems: Problems, timeout: float,
) -> None:
    fmt, sent = capture
    args = {"session": str(session), "recordingId": RECORDING}
    if not (session / "session.jsonl").read_bytes().endswith(b"\n"):
        # The kill tore the append of recording.started: the session's own repair comes first.
        call(clean, "recover", {"session": str(session)}, timeout)
    result = call(clean, "recoverRecording", args, timeout)
    appended = entries_after(session, before)
    if isinstance(appended, str):
        problems.add(f"{where}: {appended}")
        return
    types = [entry.get("type") for entry in appended]
    if "error" in result:
        code = result["error"].get("code") if isinstance(result["error"], dict) else None
        problems.check(code == "RECORDING_UNKNOWN" and not appended,
                       f"{where}: recoverRecording answered {code} after {types} were appended")
        # CAP-1: no frame reaches the WAV before recording.started is durable.
        problems.check(_data_bytes(session) == 0, f"{where}: the WAV holds audio, but the "
                       "session has no recording.started (CAP-1)")
        return
    if types != ["recording.started", "recording.interrupted"]:
        problems.add(f"{where}: the session gained {types}, not recording.started and one "
                     "recording.interrupted (CAP-7, CAP-26)")
        return
    for text in judge_recovered_wav(found, _wav(session), sent, fmt, result.get("frames")):
        problems.add(f"{where}: {text}")
    _judge_interrupted(appended, result, fmt, where, problems)
    wav, file = _wav(session).read_bytes(), (session / "session.jsonl").read_bytes()
    again = call(clean, "recoverRecording", args, timeout)
    problems.check(again.get("action") == "none" and again.get("interrupted") is None,
                   f"{where}: a second recovery answered {again}, not action none (CAP-6)")
    problems.check(_wav(session).read_bytes() == wav
                   and (session / "session.jsonl").read_bytes() == file,
                   f"{where}: a second recovery changed the WAV or the session (CAP-6)")
    valid = call(clean, "validate", {"session": str(session)}, timeout)
    problems.check(valid.get("valid") is True, f"{where}: the session is not valid: {valid}")


def _judge_interrupted(
    appended: list[dict[str, Any]], result: dict[str, Any], fmt: AudioFormat, where: str,
    problems: Problems,
) -> None:
    started, interrupted = appended
    frames = result.get("frames")
    want = {
        "parentId": started.get("id"),  # the default leaf: the last entry before it
        "recordingId": RECORDING,
        "reason": "capture-interrupted",
        "durationMs": frames * 1000 // fmt.rate if isinstance(frames, int) else None,
    }
    wrong = {key: interrupted.get(key) for key, value in want.items()
             if interrupted.get(key) != value}
    problems.check(not wrong, f"{where}: recording.interrupted has {wrong}, expected "
                   f"{ {key: want[key] for key in wrong} } (CAP-26)")
    problems.check(result.get("action") == "recovered"
                   and result.get("interrupted") == interrupted.get("id"),
                   f"{where}: recoverRecording answered {result}, not action recovered with "
                   "the id of the recording.interrupted it appended")


# --- H-151 -------------------------------------------------------------------------------------

# (name, format index, bytes of a torn last frame the harness adds)
_STATES = (("mono", 0, 0), ("mono, a torn last frame", 0, 1),
           ("stereo, a torn last frame", 1, 3))


@dataclass(frozen=True, slots=True)
class _Crashed:
    name: str
    fmt: AudioFormat
    session: Path  # the crashed session, copied afresh for every run
    want: dict[str, bytes | None]  # the tree one uninterrupted recovery leaves


def recovery_killed_while_repairing(
    factory: Callable[[], Adapter], workdir: Path, options: HarnessOptions
) -> CheckReport:
    """H-151; raises CrashCheckUnsupported when it cannot run here."""
    found = oracle()
    strace = Strace.for_factory(factory)
    timeout = options.timeout
    problems = Problems()
    clean = factory()
    clean.start(timeout)
    try:
        states = _crashed_states(factory, clean, workdir / "crashed", found, problems, timeout)
    finally:
        clean.close()
    points: list[tuple[_Crashed, KillPoint]] = []
    for index, state in enumerate(states):
        copy = _copy(state, workdir / f"record-{index}")
        points += [(state, point) for point in strace.record_points(
            workdir / f"trace-{index}.txt", _recovering(copy, timeout))]
        remove_tree(copy.parent)
    choice = choose_moments(points, lambda at: (at[0].name, at[1].syscall, at[1].role),
                            options.moments, SEED + 1)

    def run(moment: int, at: tuple[_Crashed, KillPoint], clean: Adapter) -> bool:
        state, point = at
        where = (f"moment {moment} ({state.name}, killed on entry to {point.syscall} "
                 f"#{point.nth}, {point.role})")
        session = _copy(state, workdir / f"kill-{moment}")
        killed = strace.kill_at(point.point, _recovering(session, timeout))
        _judge_rerun(clean, session, state, where, problems, timeout)
        remove_tree(session.parent)
        return killed

    fired = each_moment(factory, timeout, choice.chosen, run, options.workers)
    problems.check(fired > 0 or not choice.chosen,
                   f"strace killed the recovery at none of the {len(choice.chosen)} moments")
    return problems.report(choice.describe())


def _recovering(session: Path, timeout: float) -> Callable[[Adapter], object]:
    def drive(adapter: Adapter) -> object:
        adapter.start(timeout)
        return call(adapter, "recoverRecording", _recover_args(session), timeout)

    return drive


def _recover_args(session: Path) -> dict[str, Any]:
    # id and timestamp given: every recovery must append byte-identical recording.interrupted.
    return {"session": str(session), "recordingId": RECORDING, "id": INTERRUPTED,
            "timestamp": TS}


def _copy(state: _Crashed, case: Path) -> Path:
    session = case / "session"
    shutil.copytree(state.session, session, symlinks=True)
    return session


def _crashed_states(
    factory: Callable[[], Adapter], clean: Adapter, base: Path, found: Oracle,
    problems: Problems, timeout: float,
) -> list[_Crashed]:
    """Captures killed (SIGKILL, between two writes) after two thirds of their writes, torn as
    ``_STATES`` says, each recovered once without a kill for the bytes every rerun must give."""
    plans = _plans()
    crashed: dict[int, tuple[Path, bytes]] = {}
    for index in sorted({index for _name, index, _torn in _STATES}):
        plan = plans[index]
        session = base / f"capture-{index}" / "session"
        lay_out_session(session)
        sent = bytearray()
        adapter = factory()
        try:
            refused = _capture(adapter, session, plan, sent, timeout, len(plan.sizes) * 2 // 3)
        finally:
            adapter.kill()
        if refused is not None:
            raise AdapterCrashed(f"the capture to be crashed was refused: {refused}")
        # The whole stream, not only what was sent: a torn frame holds the first bytes of the
        # write that was to come.
        crashed[index] = (session, plan.stream)
    states: list[_Crashed] = []
    for name, index, torn in _STATES:
        session = base / f"state-{len(states)}" / "session"
        shutil.copytree(crashed[index][0], session, symlinks=True)
        if torn and not _tear(session, crashed[index][1], FORMATS[index], torn):
            problems.add(f"{name}: the crashed WAV has no whole frames to tear after")
        state = _Crashed(name, FORMATS[index], session, {})
        copy = _copy(state, base / f"want-{len(states)}")
        result = call(clean, "recoverRecording", _recover_args(copy), timeout)
        for text in judge_recovered_wav(found, _wav(copy), crashed[index][1], FORMATS[index],
                                        result.get("frames")):
            problems.add(f"{name}, recovered without a kill: {text}")
        states.append(_Crashed(name, FORMATS[index], session, tree_bytes(copy)))
    return states


def _judge_rerun(
    clean: Adapter, session: Path, state: _Crashed, where: str, problems: Problems,
    timeout: float,
) -> None:
    result = call(clean, "recoverRecording", _recover_args(session), timeout)
    if "error" in result:
        problems.add(f"{where}: the rerun was refused: {result['error']}")
        return
    now = tree_bytes(session)
    if now != state.want:
        changed = sorted(k for k in now.keys() | state.want.keys()
                         if now.get(k, b"") != state.want.get(k, b""))
        problems.add(f"{where}: after the rerun {changed} differ from one uninterrupted "
                     "recovery (CAP-27)")
    again = call(clean, "recoverRecording", _recover_args(session), timeout)
    problems.check(again.get("action") == "none", f"{where}: a further recovery answered {again}")
