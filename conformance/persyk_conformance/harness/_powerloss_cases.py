"""The power-loss scenarios: what each check runs, and what each reply acknowledges.

Data only: a scenario is the workspace before the trace (all durable), the steps (requests)
and, per step, what its reply acknowledges. ``_powerloss`` traces, replays and judges them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import records as kit
from ._capture_kit import AudioFormat, wav_bytes
from ._dsh import BUCKET
from ._dsh import HEADER as DSH_HEADER

__all__ = ["SCENARIOS", "Scenario", "Step"]

TS = "2026-01-01T00:00:00.000Z"
V1_HEADER = {"type": "session", "version": 1, "id": "harness-powerloss", "timestamp": TS}


@dataclass(frozen=True, slots=True)
class Step:
    """One request of a scenario and what its reply acknowledges."""

    op: str
    args: Callable[[Path], dict[str, Any]]  # the workspace -> the request's arguments
    acknowledges: tuple[str, ...] = ()  # record ids (v1) or event seqs (dsh-v0)
    creates: bool = False
    truncates: bool = False
    deletes: bool = False
    asset: bytes | None = None  # assetWrite: the bytes the reply's asset path must hold
    # False: the reply promises nothing durable (captureWrite's totals: CAP-25 lets a crash
    # keep a prefix of the frames), so the sync-order analysis does not judge it.
    acknowledging: bool = True
    appends_from_reply: bool = False  # replay: the reply's ``appended`` ids are acknowledged
    wav: bool = False  # captureStart: the reply's asset is a WAV whose header must be durable
    repairs: bool = False  # recoverRecording: the reply acknowledges the repaired WAV (CAP-25)
    # Arguments taken from earlier replies (a capture's handle): replies so far -> arguments.
    follow: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    setup: Mapping[str, bytes]  # the workspace before the trace (durable)
    steps: tuple[Step, ...]
    sent: tuple[str, ...]  # every record the setup and the steps write, in order
    durable: tuple[str, ...] = ()  # records durable from the setup
    dsh: bool = False
    committed: bytes = b""  # recover: the complete records before the torn tail
    fragment: bytes = b""  # recover: the torn tail, which must never be lost
    whole_or_gone: bool = False  # deletion: never a session directory without its file
    media: bool = False  # replay: no entry may persist before the media bytes it names (RT-7)
    # recoverRecording: the WAV it repairs (path in the session), the whole frames written
    # before the interruption (durable in the setup, never to be lost) and its frame size.
    recording: str = ""
    frames: bytes = b""
    frame: int = 2
    repaired: bytes = b""  # the WAV as the traced recovery left it (filled in by the engine)


# --- scenarios ---------------------------------------------------------------------------------

def _session(ws: Path) -> str:
    return str(ws / "session")


def _appends(*batches: Sequence[dict[str, Any]]) -> tuple[Step, ...]:
    def args(batch: Sequence[dict[str, Any]]) -> Callable[[Path], dict[str, Any]]:
        return lambda ws: {"session": _session(ws), "records": list(batch)}

    return tuple(Step("append", args(b), tuple(str(r["id"]) for r in b)) for b in batches)


def _v1_base() -> tuple[dict[str, bytes], dict[str, Any]]:
    root = kit.user("r0", None, "already durable")
    return {"session/session.jsonl": kit.jsonl(V1_HEADER, root)}, root


def _create() -> Scenario:
    step = Step("create", lambda ws: {"session": _session(ws), "id": "harness-powerloss",
                                      "timestamp": TS}, creates=True)
    return Scenario({}, (step,), ())


def _append_one() -> Scenario:
    setup, _ = _v1_base()
    a1, a2 = kit.user("a1", "r0", "first append"), kit.user("a2", "a1", "second append")
    return Scenario(setup, _appends([a1], [a2]), ("r0", "a1", "a2"), ("r0",))


def _append_batch() -> Scenario:
    setup, _ = _v1_base()
    batch = [kit.user("b1", "r0", "batch one"), kit.user("b2", "b1", "batch two " + "x" * 200),
             kit.user("b3", "b2", "batch three")]
    return Scenario(setup, _appends(batch), ("r0", "b1", "b2", "b3"), ("r0",))


def _recover() -> Scenario:
    committed = kit.jsonl(V1_HEADER, kit.user("k0", None, "first"), kit.user("k1", "k0", "two"))
    torn = kit.line(kit.user("k2", "k1", "cut by a crash " + "y" * 400))
    fragment = torn[: len(torn) // 2]
    step = Step("recover", lambda ws: {"session": _session(ws)}, truncates=True)
    return Scenario({"session/session.jsonl": committed + fragment}, (step,), ("k0", "k1"),
                    ("k0", "k1"), committed=committed, fragment=fragment)


def _dsh_event(seq: int) -> dict[str, Any]:
    return {"type": "note", "seq": seq, "time": 1767225600100 + seq, "data": {"n": seq}}


def _dsh_appends(*seqs: Sequence[int]) -> tuple[Step, ...]:
    def args(batch: Sequence[int]) -> Callable[[Path], dict[str, Any]]:
        return lambda ws: {"root": str(ws), "header": DSH_HEADER,
                           "events": [_dsh_event(n) for n in batch]}

    return tuple(Step("append", args(b), tuple(str(n) for n in b)) for b in seqs)


def _line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def _dsh_first() -> Scenario:
    return Scenario({}, _dsh_appends([0, 1]), ("0", "1"), dsh=True)


def _dsh_later() -> Scenario:
    log = _line(DSH_HEADER) + _line(_dsh_event(0)) + _line(_dsh_event(1))
    return Scenario({f"{BUCKET}/s1.jsonl": log}, _dsh_appends([2, 3], [4]),
                    ("0", "1", "2", "3", "4"), ("0", "1"), dsh=True)


ASSET_BYTES = bytes(range(256)) * 8  # every byte value: a torn or empty copy cannot pass


def _asset_write() -> Scenario:
    setup, _ = _v1_base()
    data = base64.b64encode(ASSET_BYTES).decode("ascii")
    step = Step("assetWrite", lambda ws: {"session": _session(ws), "data": data,
                                          "mimeType": "application/octet-stream"},
                asset=ASSET_BYTES)
    return Scenario(setup, (step,), ("r0",), ("r0",))


def _delete() -> Scenario:
    setup, _ = _v1_base()
    step = Step("deleteSession", lambda ws: {"session": _session(ws), "confirm": True},
                deletes=True)
    return Scenario(setup, (step,), ("r0",), ("r0",), whole_or_gone=True)


def _remove() -> Scenario:
    setup, _ = _v1_base()
    step = Step("remove", lambda ws: {"session": _session(ws), "targetId": "r0", "id": "rm1",
                                      "timestamp": TS, "leaf": "r0"}, ("rm1",))
    return Scenario(setup, (step,), ("r0", "rm1"), ("r0",))


def _capture() -> Scenario:
    setup, _ = _v1_base()
    pcm = base64.b64encode(b"\x01\x02" * 200).decode("ascii")  # 200 mono frames

    def handle(replies: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {"handle": replies[0].get("handle")}

    steps = (
        Step("captureStart", lambda ws: {"session": _session(ws), "recordingId": "pl-rec",
                                         "leaf": "r0", "id": "st1", "timestamp": TS},
             ("st1",), wav=True),
        Step("captureWrite", lambda ws: {"pcm": pcm}, acknowledging=False, follow=handle),
        Step("captureFinish", lambda ws: {"id": "fin1", "timestamp": TS}, ("fin1",),
             follow=handle),
    )
    return Scenario(setup, steps, ("r0", "st1", "fin1"), ("r0",))


def _recover_removing() -> Scenario:
    fragment = json.dumps(V1_HEADER, separators=(",", ":")).encode()[:-9]  # RCV-16: torn header
    step = Step("recover", lambda ws: {"session": _session(ws)}, truncates=True)
    return Scenario({"session/session.jsonl": fragment}, (step,), (), committed=b"",
                    fragment=fragment)


# A provider-event script with outgoing and incoming audio (docs/implementers/realtime.md): replay
# writes media assets and then the realtime_event entries that name them (RT-7).
REPLAY_SCRIPT = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in [
    {"at": 0, "connection": "c1", "open": {"provider": "openai", "endpoint":
     "wss://api.example.com/v1/realtime?model=gpt-realtime", "model": "gpt-realtime",
     "api": "realtime"}},
    {"at": 10, "connection": "c1", "direction": "send_attempt", "event": {
        "type": "input_audio_buffer.append", "event_id": "client_002", "audio": "AAAAAA=="}},
    {"at": 20, "connection": "c1", "direction": "received", "event": {
        "type": "response.output_audio.delta", "event_id": "event_010", "response_id": "r1",
        "item_id": "i1", "output_index": 0, "content_index": 0, "delta": "AAECAwQF"}},
    {"at": 21, "connection": "c1", "direction": "received", "event": {
        "type": "response.output_audio.delta", "event_id": "event_011", "response_id": "r1",
        "item_id": "i1", "output_index": 0, "content_index": 0, "delta": "BgcICQoL"}},
])


def _replay() -> Scenario:
    setup, _ = _v1_base()
    step = Step("replay", lambda ws: {"session": _session(ws), "script": str(ws / "script.jsonl"),
                                      "leaf": "r0"}, appends_from_reply=True)
    return Scenario({**setup, "script.jsonl": REPLAY_SCRIPT}, (step,), ("r0",), ("r0",),
                    media=True)


REC_FORMAT = AudioFormat(16000, 1)
REC_FRAMES = bytes(range(1, 201)) * 2  # 200 mono 16-bit frames, no two neighbours equal


def _interrupted_wav() -> bytes:
    """A capture killed before its finish (CAP-21): placeholder sizes (CAP-24), 200 whole
    frames and half of a 201st, all durable: the recovery must keep every whole one."""
    wav = bytearray(wav_bytes(REC_FORMAT, REC_FRAMES + b"\x7f"))
    wav[4:8] = wav[40:44] = b"\xff\xff\xff\xff"
    return bytes(wav)


def _recover_recording() -> Scenario:
    setup, _ = _v1_base()
    started = kit.rec_started("st1", "r0", recording="pl-rec")
    setup = {"session/session.jsonl": setup["session/session.jsonl"] + kit.line(started),
             "session/assets/pl-rec.wav": _interrupted_wav()}
    step = Step("recoverRecording", lambda ws: {"session": _session(ws), "recordingId": "pl-rec",
                                                "id": "ri1", "timestamp": TS},
                ("ri1",), repairs=True)
    return Scenario(setup, (step,), ("r0", "st1", "ri1"), ("r0", "st1"),
                    recording="assets/pl-rec.wav", frames=REC_FRAMES, frame=REC_FORMAT.frame)


SCENARIOS: Mapping[str, Callable[[], Scenario]] = {
    "H-211": _recover_recording,
    "H-210": _replay,
    "H-209": _recover_removing,
    "H-208": _capture,
    "H-205": _remove, "H-206": _asset_write, "H-207": _delete,
    "H-201": _create, "H-202": _append_one, "H-203": _append_batch, "H-204": _recover,
    "DH-103": _dsh_first, "DH-104": _dsh_later,
}
