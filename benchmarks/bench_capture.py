"""Capture writes, interrupted-WAV recovery and asset verification, each against its floor.

Run: ``.venv/bin/python -m pytest benchmarks/bench_capture.py --benchmark-only``.
Sizes: PERSYK_BENCH_CAPTURE_SECONDS (default 60 s of 48 kHz mono), PERSYK_BENCH_WAV_MB (default
64: the large WAV of the recovery and verification groups).

* ``capture``: a whole capture (create, lock, fsync, ``recording.started``, frames in 10 ms
  writes, final sizes, fsync, ``recording.finished``) against the least capture the contract
  allows (``bench._floors.conforming_capture``: the same five syncs into an existing
  ``assets/``, the same 10 ms writes, none synced); until 2026-12-03 the floor was a bare file
  written and fsynced once, less than the contract demands.
* ``wav-recovery``: recovery of an interrupted WAV (placeholder sizes, a partial frame) at 1 MB
  and at PERSYK_BENCH_WAV_MB, against the floor of the least I/O that repair needs (read the
  header, cut the partial frame, write both sizes, fsync). Recovery reads only the header and
  the file size, so both sizes must cost the same.
* ``asset-verify``: verifying a PERSYK_BENCH_WAV_MB asset (confined open, type check, SHA-256)
  against a bare SHA-256 of the same bytes read the same way.
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path
from typing import Any

import pytest
from persyk_maintainers.bench._floors import conforming_capture
from persyk_maintainers.bench._writes import _STARTED, _finished
from persyk_session.media._assets import verify_asset
from persyk_session.media._capture import (
    abandon_captures,
    finish_capture,
    recover_recording,
    start_capture,
    write_frames,
)
from persyk_session.media._wav import PLACEHOLDER
from persyk_session.read._context import LeafSelector
from persyk_session.write._append import create_session

RATE = 48000
CHUNK = RATE // 100 * 2  # 10 ms of 16-bit mono
SECONDS = int(os.environ.get("PERSYK_BENCH_CAPTURE_SECONDS", "60"))
LARGE_MB = int(os.environ.get("PERSYK_BENCH_WAV_MB", "64"))
AUDIO = (bytes(range(256)) * (CHUNK // 256 + 1))[:CHUNK]


def _session(directory: Path) -> str:
    create_session(directory, id="bench", timestamp="2026-01-01T00:00:00.000Z")
    return str(directory)


# --- capture -----------------------------------------------------------------------------------


@pytest.mark.benchmark(group="capture")
def test_capture_floor_the_contracts_least_capture(benchmark: Any, tmp_path: Path) -> None:
    session = Path(_session(tmp_path / "floor"))
    (session / "assets").mkdir()  # as in the measured captures after their first
    counter = iter(range(1_000_000))
    chunks = [AUDIO] * (SECONDS * 100)

    def least() -> None:
        conforming_capture(session, chunks, RATE, _STARTED, _finished(SECONDS * 1000),
                           name=f"r{next(counter)}.wav")

    benchmark.pedantic(least, rounds=10, warmup_rounds=1)
    benchmark.extra_info["audio_seconds"] = SECONDS


@pytest.mark.benchmark(group="capture")
def test_capture_whole_recording(benchmark: Any, tmp_path: Path) -> None:
    path = _session(tmp_path / "s")
    counter = iter(range(1_000_000))

    def capture() -> None:
        live, _ = start_capture(path, f"r{next(counter)}", leaf=LeafSelector.null(), rate=RATE)
        for _ in range(SECONDS * 100):
            write_frames(live, AUDIO)
        finish_capture(live)

    benchmark.pedantic(capture, rounds=10, warmup_rounds=1)
    benchmark.extra_info["audio_seconds"] = SECONDS
    benchmark.extra_info["ms_per_audio_second"] = benchmark.stats.stats.median * 1000 / SECONDS


# --- interrupted-WAV recovery ------------------------------------------------------------------


def _interrupted(directory: Path, megabytes: int) -> str:
    path = _session(directory)
    live, _ = start_capture(path, "r1", leaf=LeafSelector.null(), rate=RATE)
    block = AUDIO * 100  # one second
    remaining = megabytes * 1024 * 1024
    while remaining > 0:
        write_frames(live, block[:remaining])
        remaining -= len(block)
    abandon_captures()  # the process "died"
    return path


def _break(path: str) -> None:
    """Put placeholder sizes and a byte of a partial frame back, as a crash leaves them."""
    wav = Path(path, "assets/r1.wav")
    with open(wav, "r+b") as stream:
        stream.seek(4)
        stream.write(struct.pack("<I", PLACEHOLDER))
        stream.seek(40)
        stream.write(struct.pack("<I", PLACEHOLDER))
        stream.seek(0, os.SEEK_END)
        stream.write(b"\x01")


@pytest.fixture(scope="module")
def small_wav(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _interrupted(tmp_path_factory.mktemp("wav-small") / "s", 1)


@pytest.fixture(scope="module")
def large_wav(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _interrupted(tmp_path_factory.mktemp("wav-large") / "s", LARGE_MB)


@pytest.mark.benchmark(group="wav-recovery")
def test_wav_recovery_floor_header_cut_sizes_fsync(benchmark: Any, large_wav: str) -> None:
    wav = Path(large_wav, "assets/r1.wav")

    def repair() -> None:
        fd = os.open(wav, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            os.pread(fd, 44, 0)
            data = size - 44 - (size - 44) % 2
            os.ftruncate(fd, 44 + data)
            os.pwrite(fd, struct.pack("<I", data), 40)
            os.pwrite(fd, struct.pack("<I", data + 36), 4)
            os.fsync(fd)
        finally:
            os.close(fd)

    benchmark.pedantic(repair, setup=lambda: _break(large_wav), rounds=20)
    benchmark.extra_info["bytes"] = wav.stat().st_size


@pytest.mark.benchmark(group="wav-recovery")
def test_wav_recovery_1mb(benchmark: Any, small_wav: str) -> None:
    benchmark.pedantic(recover_recording, args=(small_wav, "r1"),
                       setup=lambda: _break(small_wav), rounds=20)
    benchmark.extra_info["bytes"] = Path(small_wav, "assets/r1.wav").stat().st_size


@pytest.mark.benchmark(group="wav-recovery")
def test_wav_recovery_large(benchmark: Any, large_wav: str) -> None:
    benchmark.pedantic(recover_recording, args=(large_wav, "r1"),
                       setup=lambda: _break(large_wav), rounds=20)
    benchmark.extra_info["bytes"] = Path(large_wav, "assets/r1.wav").stat().st_size


# --- asset verification ------------------------------------------------------------------------


@pytest.mark.benchmark(group="asset-verify")
def test_verify_floor_bare_sha256(benchmark: Any, large_wav: str) -> None:
    wav = Path(large_wav, "assets/r1.wav")

    def bare() -> str:
        digest = hashlib.sha256()
        fd = os.open(wav, os.O_RDONLY)
        try:
            offset = 0
            while chunk := os.pread(fd, 1 << 20, offset):
                digest.update(chunk)
                offset += len(chunk)
        finally:
            os.close(fd)
        return digest.hexdigest()

    benchmark.pedantic(bare, rounds=10, warmup_rounds=1)
    benchmark.extra_info["bytes"] = wav.stat().st_size


@pytest.mark.benchmark(group="asset-verify")
def test_verify_asset(benchmark: Any, large_wav: str) -> None:
    benchmark.pedantic(verify_asset, args=(large_wav, "assets/r1.wav"), rounds=10,
                       warmup_rounds=1)
