"""Power-loss checks: what a power cut leaves, at every step of every write.

A killed process keeps its page cache, so kill-based checks (H-104, H-150..) cannot see a
missing fsync. These checks can: they record what the adapter asks of the kernel and ask what
the disk may hold after a power cut at each moment, under the persistence model of the DUR
rules (docs/spec.md; ``_fsmodel``):

1. one adapter process runs the scenario's steps under ``strace``, with the bytes it writes;
   the trace is read while it runs, within a budget per step (past it: ``TRACE_TOO_LARGE``);
2. the trace is replayed onto the model (``_trace``, ``_fsmodel``), which keeps durable and
   unsynced state apart and follows each process's descriptors; a call it cannot follow on the
   workspace makes the check fail ``unverifiable: <call>``; a crash point is every call that
   changes the workspace (a crash just before it) and each reply (a crash just before and just
   after it is written);
3. at each crash point the model gives the crash states DUR-2..DUR-4 allow (every one when
   they are few, else a seeded sample of ``--powerloss-states`` of them, always including
   "nothing unsynced kept", "everything kept" and each file or directory alone kept or lost);
   each is laid out in a fresh directory and opened by a clean adapter (``recover``, then
   ``validate`` and ``context``; dsh-v0: ``load``);
4. the state must keep every record acknowledged before the crash point, hold nothing never
   written, be readable or repairable, and keep the ordering obligations (the torn fragment is
   in the file or under ``recovery/``, never neither);
5. the sync-order analysis (``_syncorder``) names, at each acknowledgment and before each
   truncation, every change not yet durable: the missing fsync in words.

* ``H-201`` (APP-3, DUR-3, DUR-5, DUR-6): ``create``; after its reply the session, its
  header and its directory entry survive any power cut.
* ``H-202`` (APP-11, DUR-1, DUR-2, DUR-5, DUR-6): two ``append`` calls of one record each; a
  record acknowledged is never lost, whatever the cut keeps of later writes.
* ``H-203`` (APP-11, DUR-1, DUR-2, DUR-5, DUR-6): one ``append`` of a batch of three records;
  all three survive once acknowledged; a torn batch before the reply is repaired, never
  invented.
* ``H-204`` (RCV-6, RCV-7, DUR-4, DUR-6): ``recover`` of a torn tail; in no state did the
  truncation persist while the preserved fragment did not; after the reply the cut is durable.
* ``H-205`` (APP-11, DUR-1, DUR-5, DUR-6): ``remove`` of a durable entry; the removal entry
  survives once acknowledged.
* ``H-206`` (AST-18, DUR-1, DUR-3, DUR-5): ``assetWrite``; once the reference is returned, the
  asset file holds every byte under its name.
* ``H-207`` (CAP-9, CAP-29, DUR-3, DUR-4, DUR-5): ``deleteSession``; at every moment the session
  is whole at its place or gone from it, and gone once acknowledged (the staging rename durable).
* ``H-208`` (CAP-1, CAP-20, CAP-22, DUR-3..DUR-6): ``captureStart``, ``captureWrite``,
  ``captureFinish``; once the start is acknowledged the WAV's header and ``recording.started``
  survive, once the finish is, ``recording.finished`` does.
* ``H-209`` (RCV-6, RCV-16, DUR-4, DUR-6): ``recover`` of a file that holds only a torn
  header; the file is removed only once the fragment is durable under ``recovery/``.
* ``H-210`` (RT-7, AST-18, DUR-4..DUR-6): ``replay`` of a provider-event script with audio;
  no state holds an entry naming a media asset whose bytes are not whole, and after the reply
  every appended entry survives.
* ``H-211`` (CAP-5, CAP-7, CAP-25..CAP-27, DUR-4..DUR-6): ``recoverRecording`` of a WAV whose
  capture was killed before its finish; every whole frame survives and nothing is invented,
  ``recording.interrupted`` never persists before the WAV repair it reports, and after the
  reply the repair is durable.
* ``DH-103`` (DSH-18, DSH-19, DUR-3, DUR-5, DUR-6): dsh-v0 first ``append`` (temporary file,
  fsync, link, directory fsync); the acknowledged log survives.
* ``DH-104`` (DSH-19, DUR-1, DUR-5, DUR-6): dsh-v0 later ``append`` calls to an existing log;
  every acknowledged event survives.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..adapters._interface import Adapter
from ._capture_kit import DEFAULT_STATES, HarnessOptions
from ._crash import CrashCheckUnsupported, call
from ._fsmodel import CrashState, FileSystemModel, Unverifiable
from ._powerloss_cases import SCENARIOS, Scenario, Step
from ._powerloss_run import lay_out, on_the_same_file_system, snapshot, trace_steps
from ._syncorder import missing_syncs
from ._trace import Op, TraceTooLarge

__all__ = [
    "DEFAULT_STATES",
    "DURABILITY_RULES",
    "FAKES_CAUGHT",
    "POWERLOSS_CHECKS",
    "SCENARIOS",
    "PowerlossCheck",
    "durability_coverage",
    "explore",
]

MAX_PROBLEMS = 20
TS = "2026-01-01T00:00:00.000Z"
V1_HEADER = {"type": "session", "version": 1, "id": "harness-powerloss", "timestamp": TS}
_MUTATING = frozenset({"open", "write", "truncate", "link", "rename", "unlink", "mkdir", "rmdir",
                       "sync", "datasync", "syncfs", "syncall"})


@dataclass(frozen=True, slots=True)
class Acked:
    """What the replies written so far acknowledged."""

    ids: tuple[str, ...] = ()
    created: bool = False
    truncated: bool = False
    deleted: bool = False
    assets: tuple[tuple[str, bytes], ...] = ()  # (path in the session, bytes)
    wavs: tuple[str, ...] = ()  # recordings started: their WAV header must be there
    media: Mapping[str, bytes] = field(default_factory=dict)  # replay: assets and final bytes
    repaired: bool = False  # recoverRecording answered: its WAV repair must be durable
    at: int = 0  # the call of the last acknowledging reply


@dataclass(frozen=True, slots=True)
class Seen:
    """What a clean adapter found in one crash state."""

    exists: bool
    ids: tuple[str, ...] = ()
    locked_out: str | None = None
    fragment_safe: bool = True
    raw: bytes | None = None  # the session file as the cut left it, before any repair
    wav: str | None = None  # what a clean recoverRecording found wrong with the recording


@dataclass(frozen=True, slots=True)
class PowerlossCheck:
    id: str
    title: str
    rules: tuple[str, ...]
    requires: tuple[str, ...]
    run: Callable[[Callable[[], Adapter], Path, HarnessOptions], list[str]]


# --- observing one crash state -------------------------------------------------------------------

def _observe_v1(verifier: Adapter, where: Path, s: Scenario, timeout: float) -> Seen:
    session = where / "session"
    file = session / "session.jsonl"
    raw = file.read_bytes() if file.is_file() else None
    safe = True
    if s.fragment:
        kept = session / "recovery"
        held = [p.read_bytes() for p in kept.rglob("*") if p.is_file()] if kept.is_dir() else []
        safe = (raw is not None and raw.endswith(s.fragment)) or s.fragment in held
    if raw is None:
        return Seen(False, fragment_safe=safe)
    repaired = call(verifier, "recover", {"session": str(session)}, timeout)
    if "error" in repaired:
        return Seen(True, (), f"recover refused it ({_code(repaired)})", safe, raw)
    if not file.is_file():  # RCV-16: nothing complete was there, and recovery removed it
        return Seen(False, fragment_safe=safe, raw=raw)
    valid = call(verifier, "validate", {"session": str(session)}, timeout)
    if valid.get("valid") is not True:
        return Seen(True, (), "not valid after recover", safe, raw)
    context = call(verifier, "context", {"session": str(session)}, timeout)
    if "error" in context:
        return Seen(True, (), f"context refused it ({_code(context)})", safe, raw)
    ids = []
    for line in file.read_bytes().splitlines()[1:]:
        record = json.loads(line)
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            ids.append(record["id"])
    wav = _recover_wav(verifier, session, s, timeout) if s.recording else None
    return Seen(True, tuple(ids), None, safe, raw, wav)


def _recover_wav(verifier: Adapter, session: Path, s: Scenario, timeout: float) -> str | None:
    """CAP-5, CAP-6, DUR-6: a clean ``recoverRecording`` repairs whatever the cut left, keeping
    exactly the whole frames written before the interruption (all durable in the setup)."""
    args = {"session": str(session), "recordingId": Path(s.recording).stem, "id": "ri1",
            "timestamp": TS}
    result = call(verifier, "recoverRecording", args, timeout)
    if "error" in result:
        return f"recoverRecording refused it ({_code(result)})"
    wav = (session / s.recording).read_bytes()
    data = wav[44:]
    declared = int.from_bytes(wav[40:44], "little") if len(wav) >= 44 else -1
    if declared != len(data) or result.get("frames") != len(data) // s.frame:
        return (f"after recoverRecording the WAV declares {declared} data bytes and the reply "
                f"{result.get('frames')} frames; it holds {len(data)} bytes (CAP-25)")
    if data == s.frames:
        return None
    if s.frames.startswith(data):
        return (f"{(len(s.frames) - len(data)) // s.frame} durable frame(s) of the recording "
                "lost (CAP-5)")
    return "the recovered WAV's frames are not a prefix of the frames written (CAP-6)"


def _observe_dsh(verifier: Adapter, where: Path, timeout: float) -> Seen:
    logs = list(where.rglob("*.jsonl"))
    loaded = call(verifier, "load", {"root": str(where), "id": "s1"}, timeout)
    if "error" in loaded:
        return Seen(bool(logs), (), f"load refused it ({_code(loaded)})" if logs else None)
    events = loaded.get("events", [])
    return Seen(True, tuple(str(e.get("seq")) for e in events if isinstance(e, dict)))


def _code(result: Mapping[str, Any]) -> str:
    error = result.get("error")
    return str(error.get("code")) if isinstance(error, dict) else "no code"


def _judge(s: Scenario, seen: Seen, acked: Acked, state: CrashState) -> list[str]:
    out = _judge_files(s, acked, state)
    if acked.truncated and not s.committed and "session/session.jsonl" in state.files:
        out.append(f"the removal of the torn file acknowledged at call {acked.at} is not "
                   "durable (RCV-16)")
    if acked.deleted:
        return out  # what is left at the place is judged by the files alone
    if acked.created and not seen.exists:
        out.append(f"the session acknowledged as created (reply at call {acked.at}) is gone")
    if seen.locked_out is not None and (seen.exists or acked.ids):
        out.append(f"the session cannot be read or repaired: {seen.locked_out}")
    gone_allowed = s.whole_or_gone and not seen.exists  # CAP-9: gone from its place is fine
    lost = [i for i in acked.ids if seen.locked_out is None and i not in seen.ids
            and not gone_allowed]
    if lost:
        out.append(f"acknowledged record(s) {', '.join(lost)} lost")
    invented = [i for i in seen.ids if i not in s.sent]
    if invented and not s.dsh:
        out.append(f"record(s) {', '.join(invented)} appear that were never written")
    if s.dsh and seen.locked_out is None and seen.ids != s.sent[: len(seen.ids)]:
        out.append("the log's events are not a prefix of the events written")
    if seen.wav is not None:
        out.append(seen.wav)
    if not seen.fragment_safe:
        out.append("the torn fragment is lost: the cut (truncation or removal) persisted and no "
                   "file under recovery/ holds it (RCV-6, RCV-7)")
    if acked.truncated and seen.raw is not None and seen.raw != s.committed and s.committed:
        out.append(f"the truncation acknowledged at call {acked.at} is not durable (RCV-7)")
    return out


def _judge_files(s: Scenario, acked: Acked, state: CrashState) -> list[str]:
    """What the cut left, before any adapter touched it: assets, deletion."""
    out = []
    for path, data in acked.assets:
        if state.files.get(f"session/{path}") != data:
            out.append(f"the asset {path} acknowledged at call {acked.at} is lost or not whole "
                       "(AST-18)")
    for path in acked.wavs:
        wav = state.files.get(f"session/{path}", b"")
        if len(wav) < 44 or not wav.startswith(b"RIFF"):
            out.append(f"the recording {path} started (reply at call {acked.at}) has no durable "
                       "WAV header (CAP-1, CAP-20)")
    out += _judge_media(acked, state)
    out += _judge_repair(s, acked, state)
    at_place = "session/session.jsonl" in state.files
    if acked.deleted and at_place:
        out.append(f"the session acknowledged as deleted (reply at call {acked.at}) is back at "
                   "its place (CAP-29)")
    if s.whole_or_gone and "session" in state.directories and not at_place:
        out.append("the session directory is at its place without its session.jsonl: partly "
                   "removed in place (CAP-9)")
    return out


def _judge_media(acked: Acked, state: CrashState) -> list[str]:
    """RT-7: an entry that names a media asset persists only after the asset's bytes."""
    out = []
    log = state.files.get("session/session.jsonl", b"")
    for path, data in acked.media.items():
        if f'"{path}"'.encode() in log and state.files.get(f"session/{path}") != data:
            out.append(f"an entry naming {path} persisted before the media bytes it names "
                       "(RT-7)")
    return out


def _judge_repair(s: Scenario, acked: Acked, state: CrashState) -> list[str]:
    """CAP-25, DUR-5: the repair is durable once answered; Decision (CAP-7, CAP-26, DUR-4):
    ``recording.interrupted`` persists only after the WAV repair whose frames it reports."""
    if not s.recording:
        return []
    out = []
    wav = state.files.get(f"session/{s.recording}")
    if acked.repaired and wav != s.repaired:
        out.append(f"the repair of {s.recording} acknowledged at call {acked.at} is not "
                   "durable (CAP-25, DUR-5)")
    log = state.files.get("session/session.jsonl", b"")
    complete = log[: log.rfind(b"\n") + 1]
    if b'"recording.interrupted"' in complete and wav != s.repaired:
        out.append(f"recording.interrupted persisted while the repair of {s.recording} it "
                   "reports is not durable (CAP-7, DUR-4)")
    return out


# --- the engine ----------------------------------------------------------------------------------

@dataclass(slots=True)
class _Explorer:
    scenario: Scenario
    check_id: str
    verifier: Adapter
    scratch: Path
    options: HarnessOptions
    problems: dict[str, str]
    seen: dict[object, Seen]
    points: int = 0
    states: int = 0

    def examine(self, model: FileSystemModel, acked: Acked, where: str) -> None:
        self.points += 1
        seed = zlib.crc32(f"{self.check_id}:{self.points}".encode())
        for state in model.crash_states(self.options.states, seed):
            seen = self._observe(state)
            for problem in _judge(self.scenario, seen, acked, state):
                self.problems.setdefault(problem, f"{where} [{state.kept}]")

    def _observe(self, state: CrashState) -> Seen:
        key = state.key()
        if key not in self.seen:
            self.states += 1
            where = self.scratch / "state"
            lay_out(state, where)
            self.seen[key] = (_observe_dsh(self.verifier, where, self.options.timeout)
                              if self.scenario.dsh else
                              _observe_v1(self.verifier, where, self.scenario,
                                          self.options.timeout))
        return self.seen[key]

    def syncs(self, sentences: list[str]) -> None:
        for sentence in sentences:
            self.problems.setdefault(f"missing sync: {sentence}", "")


def _describe(op: Op, model: FileSystemModel) -> str:
    rel = model.relative(op.path)
    target = model.relative(op.target)
    name = rel if rel else (op.path or f"descriptor {op.fd}")
    return f"{op.kind} {name}" + (f" -> {target}" if target is not None else "")


def _in_workspace(op: Op, model: FileSystemModel) -> bool:
    if op.kind not in _MUTATING:
        return False
    if op.kind in ("syncall", "syncfs") or model.relative(op.path) is not None:
        return True
    return model.relative(op.target) is not None or model.holds_workspace_file(op)


def explore(scenario: Scenario, check_id: str, factory: Callable[[], Adapter], workdir: Path,
            options: HarnessOptions) -> tuple[list[str], int, int]:
    """(problems, crash points, distinct states observed) of one scenario. A trace past its
    budget (TRACE_TOO_LARGE) or a call the model cannot follow on the workspace
    ("unverifiable: <call>") is the check's one problem: nothing is taken as durable."""
    try:
        return _explore(scenario, check_id, factory, workdir, options)
    except (TraceTooLarge, Unverifiable) as exc:
        return [str(exc)], 0, 0


def _explore(scenario: Scenario, check_id: str, factory: Callable[[], Adapter], workdir: Path,
             options: HarnessOptions) -> tuple[list[str], int, int]:
    workspace = workdir / "traced"
    workspace.mkdir(parents=True)
    for name, data in scenario.setup.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_bytes(data)
    files, dirs = snapshot(workspace)
    steps = [(step.op, step.args(workspace), step.follow) for step in scenario.steps]
    traced = trace_steps(factory, workspace, steps, workdir / "trace.fifo", options.timeout,
                         options.trace_budget)
    for (op, _, _), reply in zip(steps, traced.replies, strict=True):
        if "error" in reply:
            raise RuntimeError(f"the traced {op} was refused ({_code(reply)})")
    final, _ = snapshot(workspace)
    appended = tuple(i for step, r in zip(scenario.steps, traced.replies, strict=True)
                     for i in _appended(step, r))
    scenario = replace(scenario, sent=(*scenario.sent, *appended),
                       repaired=final.get(f"session/{scenario.recording}", b""))
    ops = list(traced.ops)
    replies = [i for i, op in enumerate(ops)
               if op.kind == "write" and op.fd == 1 and (op.path or "").startswith("pipe:")]
    if not traced.greeted:
        replies.insert(0, -1)  # attached after the hello: the steps start at the first call
    if len(replies) < len(steps) + 1:
        raise RuntimeError(f"the trace shows {len(replies)} replies on standard output, "
                           f"expected {len(steps) + 1}")
    elsewhere = {op.path for op in ops if op.kind == "syncfs" and op.path is not None}
    model = FileSystemModel.start(traced.root, files, dirs,
                                  on_the_same_file_system(traced.root, elsewhere))
    verifier = factory()
    verifier.start(options.timeout)
    try:
        if scenario.dsh and "dsh-v0" not in verifier.hello.profiles:
            raise CrashCheckUnsupported("the adapter does not speak the profile dsh-v0")
        explorer = _Explorer(scenario, check_id, verifier, workdir, options, {}, {})
        media = {name.removeprefix("session/"): data for name, data in final.items()
                 if name.startswith("session/assets/")} if scenario.media else {}
        _walk(explorer, scenario, model, ops, replies, traced.replies, media)
    finally:
        verifier.close()
    problems = [f"{where}: {text}" if where else text for text, where in explorer.problems.items()]
    return problems[:MAX_PROBLEMS], explorer.points, explorer.states


def _walk(explorer: _Explorer, scenario: Scenario, model: FileSystemModel, ops: list[Op],
          replies: list[int], answers: Sequence[Mapping[str, Any]],
          media: Mapping[str, bytes]) -> None:
    acked = Acked(scenario.durable, media=media)
    position = replies[0] + 1  # after the hello
    for number, step in enumerate(scenario.steps, start=1):
        end = replies[number]
        name = f"{step.op} #{number}"
        for op in ops[position:end]:
            if _in_workspace(op, model):
                explorer.examine(model, acked, f"crash just before call {op.call} "
                                               f"({_describe(op, model)}) of {name}")
                if op.kind == "truncate" or (
                        op.kind == "unlink" and (op.path or "").endswith("/session.jsonl")):
                    explorer.syncs(_before_truncation(model, op))
                if op.kind == "write" and media:
                    explorer.syncs(_before_naming(model, op, media))
                if op.kind == "write" and scenario.recording:
                    explorer.syncs(_before_interrupted(model, op, scenario.recording))
            model.apply(op)
        reply = ops[end].call
        explorer.examine(model, acked, f"crash just before the reply to {name} (call {reply})")
        answer = answers[number - 1]
        from_reply = _appended(step, answer)
        acked = replace(acked, ids=(*acked.ids, *step.acknowledges, *from_reply),
                        created=acked.created or step.creates,
                        truncated=acked.truncated or step.truncates,
                        deleted=acked.deleted or step.deletes,
                        assets=(*acked.assets, *_asset_of(step, answers[number - 1])),
                        wavs=(*acked.wavs, *_wav_of(step, answers[number - 1])),
                        repaired=acked.repaired or step.repairs, at=reply)
        if step.acknowledging:
            explorer.syncs(missing_syncs(model, f"the reply at call {reply}"))
        explorer.examine(model, acked, f"crash just after the reply to {name} (call {reply})")
        position = end + 1


def _appended(step: Step, answer: Mapping[str, Any]) -> tuple[str, ...]:
    """replay: the ids its reply lists as appended (dsh-v0's ``appended`` is a count)."""
    ids = answer.get("appended")
    if not step.appends_from_reply or not isinstance(ids, list):
        return ()
    return tuple(str(i) for i in ids)


def _asset_of(step: Step, answer: Mapping[str, Any]) -> list[tuple[str, bytes]]:
    asset = answer.get("asset")
    if step.asset is None or not isinstance(asset, dict) or not isinstance(asset.get("path"), str):
        return []
    return [(asset["path"], step.asset)]


def _wav_of(step: Step, answer: Mapping[str, Any]) -> list[str]:
    asset = answer.get("asset")
    if not step.wav or not isinstance(asset, dict) or not isinstance(asset.get("path"), str):
        return []
    return [asset["path"]]


def _before_naming(model: FileSystemModel, op: Op, media: Mapping[str, bytes]) -> list[str]:
    """RT-7: the media an entry names are durable before the entry is written."""
    named = {f"session/{path}" for path in media if f'"{path}"'.encode() in op.data}
    if not named:
        return []
    return missing_syncs(model, f"the write of the entry naming it at call {op.call}",
                         relevant=lambda path: path in named)


def _before_interrupted(model: FileSystemModel, op: Op, recording: str) -> list[str]:
    """Decision (CAP-7, CAP-26, DUR-4): the WAV repair is durable before the
    ``recording.interrupted`` that reports its frames is written."""
    if b'"recording.interrupted"' not in op.data:
        return []
    wav = f"session/{recording}"
    return missing_syncs(model, f"the write of recording.interrupted at call {op.call}",
                         relevant=lambda path: path == wav)


def _before_truncation(model: FileSystemModel, op: Op) -> list[str]:
    """RCV-6: everything written before a truncation (or the removal of a torn file, RCV-16)
    must be durable when it is made."""
    cut = model.relative(op.path) or ""
    what = "truncation" if op.kind == "truncate" else "removal"
    return [s for s in missing_syncs(model, f"the {what} at call {op.call}")
            if not s.startswith(f"no fsync of {cut} ")]


def _checker(check_id: str
             ) -> Callable[[Callable[[], Adapter], Path, HarnessOptions], list[str]]:
    def run(factory: Callable[[], Adapter], workdir: Path, options: HarnessOptions) -> list[str]:
        scenario = SCENARIOS[check_id]()
        problems, _points, _states = explore(scenario, check_id, factory, workdir, options)
        return problems

    return run


_V1_WRITE = ("read", "append", "recover")
POWERLOSS_CHECKS: tuple[PowerlossCheck, ...] = (
    PowerlossCheck("H-201", "power cut at every step of create: once acknowledged, the session "
                   "and its header survive", ("APP-3", "DUR-3", "DUR-5", "DUR-6"), _V1_WRITE,
                   _checker("H-201")),
    PowerlossCheck("H-202", "power cut at every step of two single-record appends: no "
                   "acknowledged record is lost", ("APP-11", "DUR-1", "DUR-2", "DUR-5", "DUR-6"),
                   _V1_WRITE, _checker("H-202")),
    PowerlossCheck("H-203", "power cut at every step of a batch append: the acknowledged batch "
                   "survives, nothing is invented", ("APP-11", "DUR-1", "DUR-2", "DUR-5", "DUR-6"),
                   _V1_WRITE, _checker("H-203")),
    PowerlossCheck("H-204", "power cut at every step of a recovery: never truncated without the "
                   "fragment preserved", ("RCV-6", "RCV-7", "DUR-4", "DUR-6"),
                   ("read", "recover"), _checker("H-204")),
    PowerlossCheck("H-205", "power cut at every step of remove: the acknowledged removal entry "
                   "survives", ("APP-11", "DUR-1", "DUR-5", "DUR-6"), _V1_WRITE,
                   _checker("H-205")),
    PowerlossCheck("H-206", "power cut at every step of an asset write: the acknowledged asset "
                   "is whole", ("AST-18", "DUR-1", "DUR-3", "DUR-5"), ("read", "assets"),
                   _checker("H-206")),
    PowerlossCheck("H-207", "power cut at every step of a deletion: whole or gone, and gone once "
                   "acknowledged", ("CAP-9", "CAP-29", "DUR-3", "DUR-4", "DUR-5"),
                   ("read", "capture"), _checker("H-207")),
    PowerlossCheck("H-208", "power cut at every step of a capture (start, write, finish): "
                   "header and recording.started durable before the first frame",
                   ("CAP-1", "CAP-20", "CAP-22", "DUR-3", "DUR-4", "DUR-5", "DUR-6"),
                   ("read", "capture"), _checker("H-208")),
    PowerlossCheck("H-209", "power cut at every step of a recovery that removes a torn header: "
                   "never removed without the fragment preserved", ("RCV-6", "RCV-16", "DUR-4",
                                                                     "DUR-6"),
                   ("read", "recover"), _checker("H-209")),
    PowerlossCheck("H-210", "power cut at every step of a replay with media: no entry before "
                   "the media it names, every acknowledged entry survives",
                   ("RT-7", "AST-18", "DUR-4", "DUR-5", "DUR-6"), ("read", "realtime"),
                   _checker("H-210")),
    PowerlossCheck("H-211", "power cut at every step of an interrupted-WAV recovery: every "
                   "whole frame kept, recording.interrupted never before the repair",
                   ("CAP-5", "CAP-7", "CAP-25", "CAP-26", "CAP-27", "DUR-4", "DUR-5", "DUR-6"),
                   ("read", "capture"), _checker("H-211")),
    PowerlossCheck("DH-103", "power cut at every step of a first append: the acknowledged log "
                   "survives", ("DSH-18", "DSH-19", "DUR-3", "DUR-5", "DUR-6"), (),
                   _checker("DH-103")),
    PowerlossCheck("DH-104", "power cut at every step of later appends: every acknowledged "
                   "event survives", ("DSH-19", "DUR-1", "DUR-5", "DUR-6"), (),
                   _checker("DH-104")),
)

# The broken fakes (tests/fakes/powerloss_*.py, each the reference less one sync) and exactly
# the checks each one fails; every other power-loss check passes it. tests/
# test_harness_powerloss.py proves every row; the traceability page counts a durability rule
# as covered only through a check of this table.
FAKES_CAUGHT: Mapping[str, frozenset[str]] = {
    "powerloss_no_fsync": frozenset(SCENARIOS),
    "powerloss_append_no_file_fsync": frozenset({"H-202", "H-203"}),
    "powerloss_reply_before_fsync": frozenset({"H-202", "H-203"}),
    "powerloss_create_no_dir_fsync": frozenset({"H-201"}),
    "powerloss_fragment_no_fsync": frozenset({"H-204", "H-209"}),
    "powerloss_dsh_temp_no_fsync": frozenset({"DH-103"}),
    "powerloss_dsh_dir_no_fsync": frozenset({"DH-103"}),
    "powerloss_asset_no_fsync": frozenset({"H-206"}),
    "powerloss_delete_no_dir_fsync": frozenset({"H-207"}),
    "powerloss_capture_no_fsync": frozenset({"H-208"}),
    "powerloss_media_no_fsync": frozenset({"H-210"}),
    "powerloss_recover_recording_no_fsync": frozenset({"H-211"}),
}
# The rules whose promise is durability: covered only by a check that bites a fake.
DURABILITY_RULES: tuple[str, ...] = (
    "APP-3", "APP-11", "RCV-6", "RCV-7", "AST-18", "RT-7", "CAP-1", "CAP-5", "CAP-20", "CAP-25",
    "CAP-29",
    "DSH-18", "DSH-19", "DUR-1", "DUR-2", "DUR-3", "DUR-4", "DUR-5", "DUR-6",
)


def durability_coverage() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Per durability rule: the power-loss checks that name it and fail some fake, and those
    fakes. A rule with no such check is not covered, whatever else names it."""
    rows = []
    for rule in DURABILITY_RULES:
        checks = tuple(c.id for c in POWERLOSS_CHECKS if rule in c.rules
                       and any(c.id in caught for caught in FAKES_CAUGHT.values()))
        fakes = tuple(sorted(f for f, caught in FAKES_CAUGHT.items() if caught & set(checks)))
        rows.append((rule, checks, fakes))
    return rows
