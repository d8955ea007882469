"""The capture workload's floor (``bench._floors.conforming_capture``) is the least capture the
contract allows: it makes every sync CAP-1, CAP-20, CAP-22 and DUR-3..DUR-5 demand, in their
order, and none per write, and it leaves what a capture leaves (a valid session, a WAV of the
frames). A floor doing less would charge the implementation with the contract's own syncs."""

from __future__ import annotations

import os
import wave
from pathlib import Path

import pytest
from persyk_conformance import records as kit
from persyk_maintainers.bench._floors import conforming_capture
from persyk_maintainers.bench._writes import _STARTED, RATE, _finished, _line
from persyk_session import open_session

CHUNKS = [bytes([i]) * 4800 for i in range(10)]  # one second of 24 kHz mono, ten writes


@pytest.fixture
def session(tmp_path: Path) -> Path:
    directory = tmp_path / "s"
    directory.mkdir()
    (directory / "session.jsonl").write_bytes(_line(kit.header("floor")))
    return directory


def _capture_syncing(session: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.path.relpath(os.readlink(f"/proc/self/fd/{fd}"), session))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    conforming_capture(session, CHUNKS, RATE, _STARTED, _finished(1000))
    return synced


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names descriptors via /proc")
def test_floor_makes_the_contracts_syncs_in_order_and_none_per_write(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _capture_syncing(session, monkeypatch) == [
        ".",  # DUR-3: the new assets/ directory's name
        "assets/r1.wav", "assets",  # CAP-20: the header, then the WAV's name
        "session.jsonl",  # CAP-1: recording.started before the first frame
        "assets/r1.wav",  # CAP-22: the real sizes before recording.finished
        "session.jsonl",  # DUR-5: recording.finished before the reply
    ]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names descriptors via /proc")
def test_floor_into_existing_assets_makes_no_directory_sync_of_the_session(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (session / "assets").mkdir()
    assert _capture_syncing(session, monkeypatch) == [
        "assets/r1.wav", "assets", "session.jsonl", "assets/r1.wav", "session.jsonl"]


def test_floor_leaves_what_a_capture_leaves(session: Path) -> None:
    conforming_capture(session, CHUNKS, RATE, _STARTED, _finished(1000))
    opened = open_session(session)
    assert opened.valid, opened.diagnostics
    assert opened.index.recordings == {"r1": True}  # started, then ended (TREE-9..TREE-11)
    with wave.open(str(session / "assets" / "r1.wav"), "rb") as audio:
        assert (audio.getframerate(), audio.getnchannels(), audio.getsampwidth()) == (RATE, 1, 2)
        assert audio.readframes(audio.getnframes()) == b"".join(CHUNKS)
