"""Assets and audio capture in the reference: AST-15..AST-20, CAP-19..CAP-30.

Every WAV the reference writes or recovers is read back with libsndfile (``soundfile``), and its
samples are compared with what was sent (``numpy``): an oracle independent of the reference.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from _paths import CHECKOUT
from persyk_session.adapter import abandon, dispatch
from persyk_session.media import _wav

T0 = "2026-01-01T00:00:00.000Z"


def op(name: str, **args: Any) -> dict[str, Any]:
    """The operation through the adapter's dispatch: a usage error is a result too."""
    reply = dispatch(name, args)
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def code(result: dict[str, Any]) -> str | None:
    error = result.get("error")
    return error["code"] if error else None


def session(tmp_path: Path, name: str = "s") -> str:
    path = str(tmp_path / name)
    op("create", session=path, id="h1", timestamp=T0)
    return path


def pcm(frames: int, channels: int = 1, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    return rng.integers(-32768, 32767, size=frames * channels, dtype=np.int16).tobytes()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def records(path: str) -> list[dict[str, Any]]:
    lines = Path(path, "session.jsonl").read_bytes().splitlines()
    return [json.loads(line) for line in lines[1:]]


def read_back(path: Path, channels: int) -> np.ndarray:
    data, _rate = sf.read(str(path), dtype="int16", always_2d=True)
    assert data.shape[1] == channels
    return np.asarray(data.reshape(-1))


def start(path: str, recording: str = "r1", **extra: Any) -> dict[str, Any]:
    return op("captureStart", session=path, recordingId=recording, leaf=None, **extra)


@pytest.fixture(autouse=True)
def _no_leftover_captures() -> Any:
    yield
    abandon()


# --- capture (CAP-19..CAP-22) ------------------------------------------------------------------


@pytest.mark.parametrize(("rate", "channels"), [(8000, 1), (24000, 1), (48000, 2), (11025, 2)])
def test_capture_writes_a_wav_libsndfile_reads_back_exactly(
    tmp_path: Path, rate: int, channels: int
) -> None:
    path = session(tmp_path)
    started = start(path, rate=rate, channels=channels, id="st", timestamp=T0)
    sent = pcm(rate // 10 + 3, channels)
    half = len(sent) // 2 + 1  # a split inside a frame: the rest arrives with the next write
    op("captureWrite", handle=started["handle"], pcm=b64(sent[:half]))
    op("captureWrite", handle=started["handle"], pcm=b64(sent[half:]))
    done = op("captureFinish", handle=started["handle"], id="fin", timestamp=T0)
    frames = rate // 10 + 3
    assert done == {"recordingId": "r1", "finished": "fin", "frames": frames,
                    "durationMs": frames * 1000 // rate, "outcome": "complete"}
    wav = tmp_path / "s/assets/r1.wav"
    assert wav.read_bytes()[:44] == _wav.capture_header(
        rate, channels, data_size=len(sent), riff_size=len(sent) + 36)
    assert (read_back(wav, channels) == np.frombuffer(sent, np.int16)).all()
    assert [r["type"] for r in records(path)] == ["recording.started", "recording.finished"]
    assert records(path)[1]["parentId"] == "st"  # the default leaf at finish
    assert op("validate", session=path)["valid"]


def test_recording_started_is_durable_before_the_first_frame_and_placeholders_until_finish(
    tmp_path: Path,
) -> None:
    path = session(tmp_path)
    started = start(path)
    wav = tmp_path / "s/assets/r1.wav"
    assert records(path)[0]["type"] == "recording.started"
    assert wav.read_bytes() == _wav.capture_header(24000, 1)  # CAP-8, CAP-20
    op("captureWrite", handle=started["handle"], pcm=b64(pcm(10)))
    assert struct.unpack_from("<I", wav.read_bytes(), 40)[0] == _wav.PLACEHOLDER


def test_a_live_capture_holds_flock_on_its_wav(tmp_path: Path) -> None:
    path = session(tmp_path)
    started = start(path)
    fd = os.open(tmp_path / "s/assets/r1.wav", os.O_RDONLY)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        op("captureFinish", handle=started["handle"])
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released at finish
    finally:
        os.close(fd)


def test_capture_refuses_an_existing_asset_and_leaves_it(tmp_path: Path) -> None:
    path = session(tmp_path)
    (tmp_path / "s/assets").mkdir()
    (tmp_path / "s/assets/r1.wav").write_bytes(b"mine")
    assert code(start(path)) == "ASSET_EXISTS"
    assert (tmp_path / "s/assets/r1.wav").read_bytes() == b"mine"
    assert records(path) == []


def test_a_refused_recording_started_leaves_no_wav(tmp_path: Path) -> None:
    path = session(tmp_path)
    result = op("captureStart", session=path, recordingId="r1", leaf="nope")
    assert code(result) == "LEAF_NOT_FOUND"
    assert not (tmp_path / "s/assets/r1.wav").exists()


def test_reported_gaps_make_the_outcome_incomplete(tmp_path: Path) -> None:
    path = session(tmp_path)
    started = start(path, rate=8000)
    op("captureWrite", handle=started["handle"], pcm=b64(pcm(8000)))
    gap = {"startMs": 100, "endMs": 200, "reason": "device"}
    done = op("captureFinish", handle=started["handle"], gaps=[gap])
    assert done["outcome"] == "incomplete"
    assert records(path)[-1]["gaps"] == [gap]


def test_handles_are_opaque_and_die_with_the_capture(tmp_path: Path) -> None:
    path = session(tmp_path)
    started = start(path)
    assert len(started["handle"]) >= 22  # 128 random bits or more
    assert code(op("captureWrite", handle="forged", pcm="")) == "HANDLE_INVALID"
    op("captureFinish", handle=started["handle"])
    assert code(op("captureWrite", handle=started["handle"], pcm="")) == "HANDLE_INVALID"
    assert code(op("captureFinish", handle=started["handle"])) == "HANDLE_INVALID"


def test_finish_refuses_a_swapped_file_and_writes_nothing(tmp_path: Path) -> None:
    path = session(tmp_path)
    started = start(path)
    op("captureWrite", handle=started["handle"], pcm=b64(pcm(100)))
    wav = tmp_path / "s/assets/r1.wav"
    copy = tmp_path / "s/assets/copy"
    copy.write_bytes(wav.read_bytes())
    os.rename(copy, wav)
    before = wav.read_bytes()
    assert code(op("captureFinish", handle=started["handle"])) == "ASSET_IDENTITY_CHANGED"
    assert wav.read_bytes() == before
    assert [r["type"] for r in records(path)] == ["recording.started"]


# --- confinement (AST-15, AST-16, AST-17) ------------------------------------------------------


def test_verify_answers_size_and_sha256_of_the_range(tmp_path: Path) -> None:
    path = session(tmp_path)
    written = op("assetWrite", session=path, data=b64(b"0123456789"), mimeType="text/plain")
    name = written["asset"]["path"]
    assert name.startswith("assets/protocol-") and name.endswith(".bin")
    import hashlib
    whole = op("assetVerify", session=path, path=name)
    assert whole == {"path": name, "size": 10, "sha256": hashlib.sha256(b"0123456789").hexdigest()}
    part = op("assetVerify", session=path, path=name, byteRange={"start": 2, "end": 5})
    assert part["sha256"] == hashlib.sha256(b"234").hexdigest()
    assert code(op("assetVerify", session=path, path=name,
                   byteRange={"start": 2, "end": 11})) == "ASSET_MISMATCH"
    assert code(op("assetVerify", session=path, path=name, sha256="0" * 64)) == "ASSET_MISMATCH"
    assert code(op("assetVerify", session=path, path="assets/absent.bin")) == "ASSET_NOT_FOUND"


@pytest.mark.parametrize("bad", [
    "assets/../session.jsonl", "../assets/x.wav", "/etc/passwd", "assets/a/b.wav",
    "assets/.hidden", "assets\\x.wav", "assets/", "x.wav", "assets/" + "a" * 133,
])
def test_paths_outside_ast3_are_refused_before_any_lookup(tmp_path: Path, bad: str) -> None:
    path = session(tmp_path)
    assert code(op("assetVerify", session=path, path=bad)) == "ASSET_PATH_REFUSED"


def test_symlinks_at_assets_or_the_file_are_refused_even_pointing_inside(tmp_path: Path) -> None:
    path = session(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.wav").write_bytes(b"secret")
    (tmp_path / "s/assets").symlink_to(outside)
    assert code(op("assetVerify", session=path, path="assets/x.wav")) == "ASSET_PATH_REFUSED"
    assert code(start(path, recording="x2")) == "ASSET_PATH_REFUSED"
    assert sorted(os.listdir(outside)) == ["x.wav"]
    (tmp_path / "s/assets").unlink()
    (tmp_path / "s/assets").mkdir()
    (tmp_path / "s/assets/inside.wav").write_bytes(b"x")
    (tmp_path / "s/assets/link.wav").symlink_to("inside.wav")
    assert code(op("assetVerify", session=path, path="assets/link.wav")) == "ASSET_PATH_REFUSED"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    path = session(tmp_path)
    (tmp_path / "s/assets").mkdir()
    os.mkfifo(tmp_path / "s/assets/pipe.wav")
    assert code(op("assetVerify", session=path, path="assets/pipe.wav")) == "ASSET_PATH_REFUSED"
    (tmp_path / "s/assets/dir.wav").mkdir()
    assert code(op("assetVerify", session=path, path="assets/dir.wav")) == "ASSET_PATH_REFUSED"


# --- recovery (CAP-23..CAP-27) -----------------------------------------------------------------


def crashed_capture(tmp_path: Path, frames: int, channels: int = 1, tail: bytes = b"") -> str:
    path = session(tmp_path)
    started = start(path, rate=16000, channels=channels, id="st", timestamp=T0)
    op("captureWrite", handle=started["handle"], pcm=b64(pcm(frames, channels)))
    abandon()  # the process died: the descriptor is gone, nothing more written
    with open(tmp_path / "s/assets/r1.wav", "ab") as f:
        f.write(tail)
    return path


def test_recovery_keeps_whole_frames_and_reads_back_identical(tmp_path: Path) -> None:
    path = crashed_capture(tmp_path, 1000, channels=2, tail=b"\x01\x02\x03")
    result = op("recoverRecording", session=path, recordingId="r1", id="int", timestamp=T0)
    assert result == {"action": "recovered", "frames": 1000, "interrupted": "int"}
    wav = tmp_path / "s/assets/r1.wav"
    assert (read_back(wav, 2) == np.frombuffer(pcm(1000, 2), np.int16)).all()
    last = records(path)[-1]
    assert last == {"type": "recording.interrupted", "id": "int", "parentId": "st",
                    "timestamp": T0, "recordingId": "r1", "reason": "capture-interrupted",
                    "durationMs": 62}
    before = wav.read_bytes()
    again = op("recoverRecording", session=path, recordingId="r1")
    assert again == {"action": "none", "frames": 1000, "interrupted": None}
    assert wav.read_bytes() == before and len(records(path)) == 2


def test_recovery_is_refused_while_a_capture_lives(tmp_path: Path) -> None:
    path = session(tmp_path)
    started = start(path)
    op("captureWrite", handle=started["handle"], pcm=b64(pcm(10)))
    wav = tmp_path / "s/assets/r1.wav"
    before = wav.read_bytes()
    assert code(op("recoverRecording", session=path, recordingId="r1")) == "ASSET_LOCKED"
    assert wav.read_bytes() == before


def test_recovery_of_unknown_or_absent_recordings(tmp_path: Path) -> None:
    path = crashed_capture(tmp_path, 10)
    assert code(op("recoverRecording", session=path, recordingId="r9")) == "RECORDING_UNKNOWN"
    (tmp_path / "s/assets/r1.wav").unlink()
    assert code(op("recoverRecording", session=path, recordingId="r1")) == "ASSET_NOT_FOUND"


def test_an_unrecoverable_wav_is_left_unchanged(tmp_path: Path) -> None:
    path = crashed_capture(tmp_path, 10)
    wav = tmp_path / "s/assets/r1.wav"
    wav.write_bytes(b"RIFF\xff\xff\xff\xffWAVEfmt ")  # torn inside the fmt chunk header
    assert code(op("recoverRecording", session=path, recordingId="r1")) == "WAV_UNRECOVERABLE"
    assert wav.read_bytes() == b"RIFF\xff\xff\xff\xffWAVEfmt "


def _layout_of(data: bytes) -> _wav.WavLayout:
    return _wav.parse_layout(lambda offset, size: data[offset:offset + size], len(data))


@pytest.mark.parametrize("declared", [0, _wav.PLACEHOLDER, 10_000])
def test_placeholder_sizes_take_every_whole_frame(declared: int) -> None:
    header = _wav.capture_header(8000, 2, data_size=declared, riff_size=declared)
    data = header + bytes(4 * 7 + 3)
    plan = _wav.plan_recovery(_layout_of(data), len(data))
    assert (plan.frames, plan.truncate_to, plan.pad) == (7, 44 + 28, False)
    assert (plan.data_size, plan.riff_size) == (28, 44 + 28 - 8)


def test_a_fitting_size_is_kept_and_an_odd_one_padded() -> None:
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, 8000, 8000, 1, 8)  # 8-bit mono: frames of one byte
    data = b"RIFF" + struct.pack("<I", 0) + b"WAVE" + b"fmt " + fmt + b"LIST" + struct.pack(
        "<I", 3) + b"abc\0" + b"data" + struct.pack("<I", _wav.PLACEHOLDER) + bytes(5)
    layout = _layout_of(data)
    assert layout.data_header_offset == 48  # the LIST chunk (odd, padded) stays before data
    plan = _wav.plan_recovery(layout, len(data))
    assert (plan.frames, plan.pad, plan.truncate_to) == (5, True, None)
    repaired = bytearray(data + b"\0")
    repaired[4:8] = struct.pack("<I", len(repaired) - 8)
    repaired[52:56] = struct.pack("<I", 5)
    again = _wav.plan_recovery(_layout_of(bytes(repaired)), len(repaired))
    assert not again.changes  # idempotent: the pad byte is not a frame


# --- deletion (CAP-28..CAP-30) -----------------------------------------------------------------


def test_delete_needs_confirmation_and_stages_outside_discovery(tmp_path: Path) -> None:
    path = session(tmp_path)
    other = session(tmp_path, "other")
    assert code(op("deleteSession", session=path)) == "DELETE_NOT_CONFIRMED"
    assert code(op("deleteSession", session=path, confirm=False)) == "DELETE_NOT_CONFIRMED"
    assert Path(path, "session.jsonl").exists()
    started = start(path)
    assert op("deleteSession", session=path, confirm=True) == {"action": "deleted"}
    assert sorted(os.listdir(tmp_path)) == ["other"]
    assert Path(other, "session.jsonl").exists()
    assert code(op("captureWrite", handle=started["handle"], pcm="")) == "HANDLE_INVALID"


def test_delete_refuses_while_another_holder_locks_a_wav(tmp_path: Path) -> None:
    path = crashed_capture(tmp_path, 10)
    fd = os.open(tmp_path / "s/assets/r1.wav", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert code(op("deleteSession", session=path, confirm=True)) == "ASSET_LOCKED"
        assert Path(path, "session.jsonl").exists()
    finally:
        os.close(fd)


def test_an_interrupted_delete_is_resumed(tmp_path: Path) -> None:
    path = session(tmp_path)
    staged = tmp_path / ".persyk-deleted" / ("s." + "0" * 32)
    staged.parent.mkdir()
    os.rename(path, staged)  # as if killed right after the rename
    assert op("deleteSession", session=path, confirm=True) == {"action": "resumed"}
    assert os.listdir(tmp_path) == []
    assert code(op("deleteSession", session=path, confirm=True)) == "PATH_NOT_FOUND"


def test_delete_refuses_a_symlinked_session_path(tmp_path: Path) -> None:
    path = session(tmp_path)
    (tmp_path / "link").symlink_to(path)
    assert code(op("deleteSession", session=str(tmp_path / "link"), confirm=True)) == "USAGE"
    assert Path(path, "session.jsonl").exists()


# --- the CLI -----------------------------------------------------------------------------------


def _cli(*args: str, **kwargs: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "persyk_session.cli", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kwargs)


def test_cli_capture_finishes_on_sigterm_and_recover_recording_reports(tmp_path: Path) -> None:
    path = session(tmp_path)
    proc = _cli("capture", path, "--recording", "r1", "--leaf-null", "--rate", "8000")
    assert proc.stdin is not None
    sent = pcm(800)
    proc.stdin.write(sent)
    proc.stdin.flush()
    wav = tmp_path / "s/assets/r1.wav"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not wav.exists() or wav.stat().st_size < 44 + 1600):
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    out, _err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert json.loads(out)["outcome"] == "complete"
    assert (read_back(wav, 1) == np.frombuffer(sent, np.int16)).all()
    recovered = _cli("recover-recording", path, "--recording", "r1", "--json")
    out, _ = recovered.communicate(timeout=20)
    assert recovered.returncode == 0 and json.loads(out)["action"] == "none"


# --- the fixtures' WAVs (the oracle reads what the cases compare against) -----------------------


def test_every_expected_wav_of_the_cases_reads_back_with_libsndfile() -> None:
    root = CHECKOUT / "fixtures" / "v1"
    found = sorted(root.glob("*/*/expected/*.wav"))
    assert len(found) >= 10
    for path in found:
        info = sf.info(str(path))
        data = path.read_bytes()
        layout = _wav.parse_layout(lambda at, n, d=data: d[at:at + n], len(data))
        assert info.frames == layout.declared_data_size // layout.block_align, path.parent.parent
        assert info.channels == layout.channels and info.samplerate == layout.rate
        assert not _wav.plan_recovery(layout, len(data)).changes  # nothing left to repair
