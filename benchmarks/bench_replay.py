"""Replaying a voice conversation's provider-event script (RT-3..RT-5, RT-37).

Run: ``.venv/bin/python -m pytest benchmarks/bench_replay.py --benchmark-only``.

The script is a synthetic voice conversation of PERSYK_BENCH_REPLAY_MINUTES minutes (default 5;
set 30 for the figure docs/maintainers/performance.md quotes): the client sends a 100 ms audio
chunk every 100 ms (24 kHz PCM16, base64), and every 5 s the provider answers with a committed
item, a response with two audio deltas, a transcript and response.done. Every observation is one
record, appended and fsynced on its own, as a live capture must (RT-37, APP-8).

Floor, measured in the same run and directory: the same records' bytes written with a bare
``os.write`` + ``os.fsync`` per record. The extra info also gives the ratio to the
conversation's own length (below 1 means a capture keeps up in real time on this machine).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from persyk_maintainers.bench._floors import bare_appends
from persyk_session.read._context import LeafSelector
from persyk_session.realtime._replay_run import replay
from persyk_session.write._append import create_session

from benchmarks._sessions import VOICE_CHUNK, voice_script

MINUTES = int(os.environ.get("PERSYK_BENCH_REPLAY_MINUTES", 5))
CHUNK = VOICE_CHUNK


def _turn(turn: int, at: int) -> list[tuple[int, dict[str, Any]]]:
    """One answered turn, its events a millisecond apart."""
    return list(enumerate([
        {"type": "input_audio_buffer.committed", "item_id": f"u{turn}"},
        {"type": "response.created", "response": {"id": f"r{turn}"}},
        {"type": "response.output_audio.delta", "delta": CHUNK},
        {"type": "response.output_audio.delta", "delta": CHUNK},
        {"type": "response.output_audio_transcript.done", "transcript": "Sure. " * 8},
        {"type": "response.done", "response": {"id": f"r{turn}", "status": "completed"}},
    ]))


def _script(minutes: int) -> bytes:
    return voice_script(minutes, _turn)


@pytest.fixture(scope="module")
def script() -> bytes:
    return _script(MINUTES)


def _session(root: Path, name: str) -> Path:
    path = root / name
    create_session(path, timestamp="2026-01-01T00:00:00.000Z")
    return path


def test_floor_write_fsync_each_record(benchmark: Any, script: bytes, tmp_path: Path) -> None:
    benchmark.group = "replay"
    records = [line + b"\n" for line in script.splitlines()]  # same count, similar bytes
    rounds = iter(range(1_000_000))

    def write_all() -> None:
        floor = tmp_path / f"floor-{next(rounds)}.jsonl"
        floor.touch()
        bare_appends(floor, records)

    benchmark.pedantic(write_all, rounds=1, iterations=1)


def test_replay_voice_conversation(benchmark: Any, script: bytes, tmp_path: Path) -> None:
    benchmark.group = "replay"
    sessions = iter(range(1_000_000))

    def play() -> int:
        session = _session(tmp_path, f"s{next(sessions)}")
        result = replay(str(session), script, LeafSelector.null(), "2026-01-01T00:00:00.000Z")
        assert result.halted is None
        return result.evidence

    evidence = benchmark.pedantic(play, rounds=1, iterations=1)
    benchmark.extra_info["minutes"] = MINUTES
    benchmark.extra_info["observations"] = evidence
    benchmark.extra_info["ratio_to_real_time"] = round(
        benchmark.stats.stats.median / (MINUTES * 60), 3)
