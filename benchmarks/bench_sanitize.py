"""Sanitizing provider events (RT-1, RT-2): cost per MB of events against a bare parse.

Run: ``.venv/bin/python -m pytest benchmarks/bench_sanitize.py --benchmark-only``.

The events are a realistic mix of an OpenAI Realtime voice conversation: audio appends (base64
PCM, most of the bytes), transcription and text deltas, response and item events, a session
update carrying MCP tool headers and an error quoting a key. The floor parses the same bytes
with the standard json module (what any implementation does before it can look at a payload);
the measured path parses them and sanitizes every event. A second group sanitizes text-only
events (no audio), where the sanitizer's per-string work weighs most.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import pytest
from persyk_session.realtime._sanitize import sanitize

EVENTS = int(os.environ.get("PERSYK_BENCH_SANITIZE_EVENTS", 2_000))


def _events(with_audio: bool) -> list[bytes]:
    audio = base64.b64encode(bytes(range(256)) * 19).decode()  # ~4.8 KB of PCM, ~100 ms
    lines: list[dict[str, Any]] = []
    for i in range(EVENTS):
        kind = i % 8
        if kind < 4 and with_audio:
            lines.append({"type": "input_audio_buffer.append", "event_id": f"e{i}", "audio": audio})
        elif kind < 6:
            lines.append({"type": "response.output_audio_transcript.delta", "event_id": f"e{i}",
                          "response_id": "resp_1", "item_id": f"item_{i}", "output_index": 0,
                          "content_index": 0, "delta": "and then the assistant said something "})
        elif kind == 6:
            lines.append({"type": "session.update", "event_id": f"e{i}", "session": {
                "instructions": "Be brief. " * 20, "tools": [{
                    "type": "mcp", "server_label": "docs", "server_url": "https://mcp.example/sse",
                    "headers": {"Authorization": "Bearer abcdefghijklmnop", "Accept": "*/*"}}]}})
        else:
            lines.append({"type": "error", "event_id": f"e{i}", "error": {
                "type": "invalid_request_error",
                "message": "Incorrect API key provided: sk-proj-abcdefghijklmnopqrst."}})
    return [json.dumps(line).encode() for line in lines]


@pytest.fixture(scope="module", params=[True, False], ids=["voice", "text-only"])
def events(request: pytest.FixtureRequest) -> list[bytes]:
    return _events(with_audio=bool(request.param))


def _group(events: list[bytes]) -> str:
    return "sanitize-voice" if any(b"input_audio_buffer" in e for e in events) else "sanitize-text"


def test_floor_parse_events(benchmark: Any, events: list[bytes]) -> None:
    benchmark.group = _group(events)
    benchmark.extra_info["MB"] = round(sum(map(len, events)) / 1e6, 2)
    benchmark(lambda: [json.loads(e) for e in events])


def test_parse_and_sanitize_events(benchmark: Any, events: list[bytes]) -> None:
    benchmark.group = _group(events)
    benchmark.extra_info["MB"] = round(sum(map(len, events)) / 1e6, 2)
    redacted = benchmark(lambda: sum(len(sanitize(json.loads(e)).redactions) for e in events))
    assert redacted == 2 * (EVENTS // 8)  # one header and one key per pair of kinds 6 and 7
