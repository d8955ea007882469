"""Crash checks of capture, recovery and deletion: processes are
killed with SIGKILL at random moments, then the survivors' files are judged.

Each killed process is a fork of this one (no interpreter start per kill), so hundreds of kills
stay cheap. libsndfile (``soundfile``) reads every recovered WAV, and its samples must be exactly
a prefix of what the capture was given (``numpy``).
"""

from __future__ import annotations

import base64
import json
import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
from persyk_session.adapter import abandon, dispatch

RATE = 16000
CHUNK_FRAMES = 160  # 10 ms
CHUNKS = 40
PCM = (np.arange(CHUNK_FRAMES * CHUNKS, dtype=np.int64) * 7919 % 65536 - 32768).astype("<i2")
KILLS = 200


def op(name: str, **args: Any) -> dict[str, Any]:
    reply = dispatch(name, args)
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def _killed_child(work: Callable[[Callable[[], None]], None], delay: float) -> None:
    """Run ``work(ready)`` in a forked child; ``delay`` seconds after the child calls ``ready()``
    (or after it ends), SIGKILL it if it is still alive."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns
        try:
            os.close(read_end)
            work(lambda: os.write(write_end, b"!") and None)
        finally:
            os._exit(0)
    os.close(write_end)
    os.read(read_end, 1)  # ready, or end of file when the child exited first
    os.close(read_end)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _capture_forever(path: str, recording: str, ready: Callable[[], None], early: bool) -> None:
    if early:
        ready()  # the kill may land anywhere in the start, before recording.started too
    started = op("captureStart", session=path, recordingId=recording, leaf=None, rate=RATE)
    if not early:
        ready()
    data = PCM.tobytes()
    step = CHUNK_FRAMES * 2
    for offset in range(0, len(data), step):
        op("captureWrite", handle=started["handle"], pcm=base64.b64encode(
            data[offset:offset + step]).decode("ascii"))
        time.sleep(0.0001)
    time.sleep(60)  # never finishes: only a kill ends it


def _records(path: str) -> list[dict[str, Any]]:
    lines = Path(path, "session.jsonl").read_bytes().splitlines()
    return [json.loads(line) for line in lines[1:]]


def test_a_capture_killed_at_random_moments_recovers_to_a_prefix(tmp_path: Path) -> None:
    rng = random.Random(11)
    outcomes = {"recovered": 0, "never-started": 0}
    path = str(tmp_path / "s")
    op("create", session=path, id="h1", timestamp="2026-01-01T00:00:00.000Z")
    for attempt in range(KILLS):
        recording = f"r{attempt}"
        early = rng.random() < 0.1

        def capture(ready: Callable[[], None], recording: str = recording,
                    early: bool = early) -> None:
            _capture_forever(path, recording, ready, early)

        _killed_child(capture, rng.uniform(0.0, 0.012 if early else 0.008))
        wav = Path(path, f"assets/{recording}.wav")
        result = op("recoverRecording", session=path, recordingId=recording)
        mine = [e for e in _records(path) if e.get("recordingId") == recording]
        if "error" in result:
            # Killed before recording.started was committed: no recording to recover (an
            # orphaned WAV may exist; nothing references it).
            assert result["error"]["code"] == "RECORDING_UNKNOWN", result
            assert mine == []
            outcomes["never-started"] += 1
            continue
        samples, rate = sf.read(str(wav), dtype="int16")
        assert rate == RATE
        assert result["frames"] == len(samples)
        assert (samples == PCM[:len(samples)]).all()
        assert [e["type"] for e in mine] == ["recording.started", "recording.interrupted"]
        assert mine[1]["durationMs"] == len(samples) * 1000 // RATE
        before, count = wav.read_bytes(), len(_records(path))
        assert op("recoverRecording", session=path, recordingId=recording)["action"] == "none"
        assert wav.read_bytes() == before and len(_records(path)) == count
        outcomes["recovered"] += 1
    assert outcomes["recovered"] >= KILLS * 3 // 4, outcomes
    assert op("validate", session=path)["valid"]


def _crashed_capture(path: str, frames: int) -> None:
    op("create", session=path, id="h1", timestamp="2026-01-01T00:00:00.000Z")
    started = op("captureStart", session=path, recordingId="r1", leaf=None, rate=RATE, id="st",
                 timestamp="2026-01-01T00:00:10.000Z")
    data = PCM[:frames].tobytes() + b"\x01"  # a byte of a partial frame beyond the last write
    op("captureWrite", handle=started["handle"], pcm=base64.b64encode(data).decode("ascii"))
    abandon()
    with open(Path(path, "assets/r1.wav"), "ab") as f:
        f.write(b"\x01")


def test_recovery_killed_at_random_moments_ends_in_the_same_bytes(tmp_path: Path) -> None:
    rng = random.Random(12)
    reference = str(tmp_path / "reference")
    _crashed_capture(reference, 3001)
    op("recoverRecording", session=reference, recordingId="r1", id="int",
       timestamp="2026-01-01T00:00:20.000Z")
    want_wav = Path(reference, "assets/r1.wav").read_bytes()
    want_records = _records(reference)
    for attempt in range(60):
        path = str(tmp_path / f"s{attempt}")
        _crashed_capture(path, 3001)

        def recover(ready: Callable[[], None] | None = None, path: str = path) -> None:
            if ready is not None:
                ready()
            op("recoverRecording", session=path, recordingId="r1", id="int",
               timestamp="2026-01-01T00:00:20.000Z")

        _killed_child(recover, rng.uniform(0.0, 0.006))
        recover()
        assert Path(path, "assets/r1.wav").read_bytes() == want_wav
        assert _records(path) == want_records  # one recording.interrupted, the same


def test_a_deletion_killed_at_random_moments_is_finished_by_a_retry(tmp_path: Path) -> None:
    rng = random.Random(13)
    for attempt in range(40):
        root = tmp_path / f"root{attempt}"
        root.mkdir()
        path = str(root / "s")
        _crashed_capture(path, 100)
        op("create", session=str(root / "other"), id="h2", timestamp="2026-01-01T00:00:00.000Z")
        other = Path(root, "other/session.jsonl").read_bytes()
        def delete(ready: Callable[[], None], path: str = path) -> None:
            ready()
            op("deleteSession", session=path, confirm=True)

        _killed_child(delete, rng.uniform(0.0, 0.006))
        # At every moment: either the session is whole where it was, or it is out of discovery
        # (no direct child of the root holds it).
        children = {p.name for p in root.iterdir() if (p / "session.jsonl").is_file()}
        assert children in ({"s", "other"}, {"other"})
        result = op("deleteSession", session=path, confirm=True)
        if "error" in result:  # the killed deletion had finished: nothing is left to resume
            assert result["error"]["code"] == "PATH_NOT_FOUND" and children == {"other"}
        else:
            assert result in ({"action": "deleted"}, {"action": "resumed"}), result
        assert sorted(p.name for p in root.iterdir()) == ["other"]
        assert Path(root, "other/session.jsonl").read_bytes() == other


def test_a_live_capture_an_append_and_a_recovery_never_deadlock(tmp_path: Path) -> None:
    """Asset lock before session lock (CAP-4): a capture process holds its WAV's lock while
    another process appends (the session lock is taken per append only) and a recovery is
    refused at once (ASSET_LOCKED); the capture then finishes normally."""
    import subprocess
    import sys

    path = str(tmp_path / "s")
    op("create", session=path, id="h1", timestamp="2026-01-01T00:00:00.000Z")
    capture = subprocess.Popen(
        [sys.executable, "-m", "persyk_session.cli", "capture", path, "--recording", "r1",
         "--leaf-null", "--rate", str(RATE)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert capture.stdin is not None
    try:
        capture.stdin.write(PCM[:1600].tobytes())
        capture.stdin.flush()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(
                e.get("type") == "recording.started" for e in _records(path)):
            time.sleep(0.01)
        parent = _records(path)[-1]["id"]
        for i in range(20):
            record = {"type": "message", "id": f"m{i}", "parentId": parent,
                      "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": {"role": "user", "content": [{"type": "text", "text": "x"}],
                                  "timestamp": 1}}
            assert op("append", session=path, records=[record], lockTimeout=2)["committed"]
            parent = f"m{i}"
            refused = op("recoverRecording", session=path, recordingId="r1", lockTimeout=2)
            assert refused["error"]["code"] == "ASSET_LOCKED"
        capture.stdin.write(PCM[1600:3200].tobytes())
    finally:
        out, _ = capture.communicate(timeout=30)
    assert capture.returncode == 0 and json.loads(out)["frames"] == 3200
    entries = _records(path)
    assert [e["type"] for e in entries].count("message") == 20
    assert entries[-1]["type"] == "recording.finished" and entries[-1]["parentId"] == "m19"
    assert op("validate", session=path)["valid"]
    samples, _ = sf.read(str(Path(path, "assets/r1.wav")), dtype="int16")
    assert (samples == PCM[:3200]).all()
