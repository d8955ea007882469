"""The ordering engine (RT-12..RT-28, CAP-11..CAP-16): its speed, its memory at the queue
bounds, and a 2-hour conversation replayed.

Run: ``.venv/bin/python -m pytest benchmarks/bench_ordering.py --benchmark-only``.

The conversation is synthetic and deterministic (PERSYK_BENCH_ORDERING_MINUTES, default 120):
a 100 ms audio chunk is sent every 100 ms (24 kHz PCM16, base64), and every 5 s a user turn is
placed, its speech located, its transcription completed (every third one after the next turn's
placement, so it is provisional for a while: RT-13) and an assistant answers (response.created,
the item placed, two audio deltas, the transcript, response.done).

Groups and floors (each measured in the same run):

* ``ordering-events``: the floor is ``json.loads`` of every script line; the engine alone
  (events already parsed, ``OrderingEngine.received``) and the whole sans-I/O plan of the replay
  (parse, evidence planning with sanitizing and media, the engine, the queue: ``drive``) are
  reported as ratios, with events per second.
* ``ordering-memory``: the engine holding 256 unsettled items with 4 MiB of text (CAP-11), and
  the observation queue holding 8 MiB of observations while the writer is stalled; the extra
  info gives the memory tracemalloc sees, as a ratio to the bound's bytes.
* ``ordering-replay``: the 2-hour script replayed into a session on disk (every record appended
  and fsynced, APP-8), against the floor of a bare ``os.write`` + ``os.fsync`` per record.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from persyk_maintainers.bench._floors import bare_appends
from persyk_session.read._context import LeafSelector
from persyk_session.realtime._evidence import parse_script
from persyk_session.realtime._ordering import OrderingEngine
from persyk_session.realtime._ordering_model import (
    OBSERVATION_BYTES,
    ORDERED_ITEMS,
    ORDERED_TEXT_BYTES,
)
from persyk_session.realtime._replay_plan import ReplayDriver, drive
from persyk_session.realtime._replay_run import replay
from persyk_session.write._append import create_session

from benchmarks._sessions import VOICE_CHUNK, voice_script

MINUTES = int(os.environ.get("PERSYK_BENCH_ORDERING_MINUTES", 120))
CHUNK = VOICE_CHUNK
START = "2026-01-01T00:00:00.000Z"


def _turn(turn: int, at: int) -> list[tuple[int, dict[str, Any]]]:
    """One user turn and its answer: (time offset, event)."""
    user, assistant = f"u{turn}", f"a{turn}"
    previous = None if turn == 0 else f"a{turn - 1}"
    events: list[tuple[int, dict[str, Any]]] = [
        (0, {"type": "input_audio_buffer.speech_started", "item_id": user,
             "audio_start_ms": at - 3000}),
        (1, {"type": "input_audio_buffer.speech_stopped", "item_id": user,
             "audio_end_ms": at}),
        (2, {"type": "conversation.item.added", "previous_item_id": previous, "item": {
            "id": user, "type": "message", "role": "user",
            "content": [{"type": "input_audio"}]}}),
        (3, {"type": "response.created", "response": {"id": f"r{turn}"}}),
        (4, {"type": "conversation.item.added", "previous_item_id": user, "item": {
            "id": assistant, "type": "message", "role": "assistant", "content": []}}),
        (5, {"type": "response.output_audio.delta", "item_id": assistant, "delta": CHUNK}),
        (6, {"type": "response.output_audio.delta", "item_id": assistant, "delta": CHUNK}),
        (7, {"type": "response.output_audio_transcript.done", "item_id": assistant,
             "transcript": "Sure, here is what I found. " * 4}),
        (8, {"type": "response.done", "response": {"id": f"r{turn}", "status": "completed",
                                                   "output": [{"id": assistant}]}}),
    ]
    heard = {"type": "conversation.item.input_audio_transcription.completed",
             "item_id": user, "transcript": "Could you look this up for me please? " * 3}
    # every third transcription arrives late, after the answer: the answer waits (RT-13)
    events.append((9 if turn % 3 == 0 else 3, heard))
    return events


def conversation(minutes: int) -> bytes:
    return voice_script(minutes, _turn, stop=True)


@pytest.fixture(scope="module")
def script() -> bytes:
    return conversation(MINUTES)


@pytest.fixture(scope="module")
def received(script: bytes) -> list[tuple[int, dict[str, Any]]]:
    return [(line.at, line.body["event"]) for line in parse_script(script)
            if line.kind == "direction" and line.body["direction"] == "received"]


# --- ordering-events ---------------------------------------------------------------------------

def test_floor_json_parse_of_every_line(benchmark: Any, script: bytes) -> None:
    benchmark.group = "ordering-events"
    lines = script.splitlines()
    benchmark.extra_info["lines"] = len(lines)
    benchmark.pedantic(lambda: [json.loads(line) for line in lines], rounds=3, iterations=1)


def test_engine_alone(benchmark: Any, script: bytes,
                      received: list[tuple[int, dict[str, Any]]]) -> None:
    benchmark.group = "ordering-events"
    lines = len(script.splitlines())

    def run() -> OrderingEngine:
        engine = OrderingEngine()
        for at, event in received:
            engine.received(at, "c1", event)
        engine.stop(MINUTES * 60_000)
        return engine

    engine = benchmark.pedantic(run, rounds=3, iterations=1)
    assert engine.phase == "closed" and len(engine.published) == MINUTES * 12 * 2
    benchmark.extra_info["received_events"] = len(received)
    benchmark.extra_info["events_per_s"] = round(len(received) / benchmark.stats.stats.median)
    benchmark.extra_info["script_lines"] = lines


def test_whole_sans_io_plan(benchmark: Any, script: bytes) -> None:
    benchmark.group = "ordering-events"

    def run() -> int:
        _driver, steps = drive(parse_script(script), START)
        return len(steps)

    steps = benchmark.pedantic(run, rounds=3, iterations=1)
    lines = len(script.splitlines())
    benchmark.extra_info["steps"] = steps
    benchmark.extra_info["lines_per_s"] = round(lines / benchmark.stats.stats.median)


# --- ordering-memory ---------------------------------------------------------------------------

def _held_text_engine() -> OrderingEngine:
    """256 unsettled items, the first unresolved, the rest holding 4 MiB of text in all."""
    engine = OrderingEngine()
    size = ORDERED_TEXT_BYTES // (ORDERED_ITEMS - 1)
    for n in range(ORDERED_ITEMS):
        engine.received(n, "c1", {"type": "conversation.item.added",
                                  "previous_item_id": None if n == 0 else f"i{n - 1}",
                                  "item": {"id": f"i{n}", "type": "message", "role": "user",
                                           "content": [{"type": "input_audio"}]}})
    for n in range(1, ORDERED_ITEMS):
        engine.received(n, "c1", {
            "type": "conversation.item.input_audio_transcription.completed",
            "item_id": f"i{n}", "transcript": chr(97 + n % 26) * size})
    return engine


def _measured(build: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        built = build()
        current, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return built, current


def test_floor_json_parse_of_the_held_text(benchmark: Any) -> None:
    benchmark.group = "ordering-memory"
    size = ORDERED_TEXT_BYTES // (ORDERED_ITEMS - 1)
    lines = [json.dumps({"transcript": "x" * size}) for _ in range(ORDERED_ITEMS - 1)]
    benchmark.pedantic(lambda: [json.loads(line) for line in lines], rounds=3, iterations=1)


def test_engine_at_the_ordered_bound(benchmark: Any) -> None:
    benchmark.group = "ordering-memory"
    engine, held = _measured(_held_text_engine)
    assert len(engine.pending) == ORDERED_ITEMS and engine.phase == "capturing"
    benchmark.extra_info["text_bytes"] = engine.text_bytes
    benchmark.extra_info["traced_bytes"] = held
    benchmark.extra_info["memory_to_bound"] = round(held / ORDERED_TEXT_BYTES, 3)
    benchmark.pedantic(_held_text_engine, rounds=3, iterations=1)


def _stalled_queue() -> Any:
    """A replay plan with 8 MiB of observations waiting for a stalled writer."""
    size = OBSERVATION_BYTES // 64
    lines = [{"at": 0, "connection": "c1", "open": {"provider": "openai"}},
             {"at": 1, "disk": "stall"}]
    for n in range(64):
        line = {"at": 2, "connection": "c1", "direction": "received",
                "event": {"type": "response.output_text.delta", "event_id": f"e{n}",
                          "delta": ""}}
        line["event"]["delta"] = "x" * (size - len(json.dumps(line, separators=(",", ":"))))
        lines.append(line)
    data = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)
    parsed = parse_script(data)
    driver = ReplayDriver(START, False)
    for line in parsed:
        driver.feed(line)
    del data, parsed
    return driver


def test_queue_at_the_observation_bound(benchmark: Any) -> None:
    benchmark.group = "ordering-memory"
    driver, held = _measured(_stalled_queue)
    assert driver.queue.bytes == OBSERVATION_BYTES and not driver.halted
    benchmark.extra_info["queued_bytes"] = driver.queue.bytes
    benchmark.extra_info["traced_bytes"] = held
    benchmark.extra_info["memory_to_bound"] = round(held / OBSERVATION_BYTES, 3)
    benchmark.pedantic(_stalled_queue, rounds=3, iterations=1)


# --- ordering-replay ---------------------------------------------------------------------------

def test_floor_write_fsync_each_record(benchmark: Any, script: bytes, tmp_path: Path) -> None:
    benchmark.group = "ordering-replay"
    records = [line + b"\n" for line in script.splitlines()]
    floor = tmp_path / "floor.jsonl"
    floor.touch()
    benchmark.pedantic(bare_appends, args=(floor, records), rounds=1, iterations=1)
    benchmark.extra_info["records"] = len(records)


def test_two_hour_conversation_replayed(benchmark: Any, script: bytes, tmp_path: Path) -> None:
    benchmark.group = "ordering-replay"
    session = tmp_path / "voice"
    create_session(session, timestamp=START)
    result = benchmark.pedantic(
        lambda: replay(str(session), script, LeafSelector.null(), START), rounds=1, iterations=1)
    assert result.halted is None and len(result.ordering["published"]) == MINUTES * 12 * 2
    benchmark.extra_info["minutes"] = MINUTES
    benchmark.extra_info["appended"] = len(result.appended)
    benchmark.extra_info["to_real_time"] = round(benchmark.stats.stats.median / (MINUTES * 60), 4)
