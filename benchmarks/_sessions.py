"""Cached large, realistic v1 sessions for the benchmarks.

The generators themselves are ``persyk_maintainers.bench._data``'s (seeded, so the same
parameters give the same bytes), shared with ``persyk-conformance bench``. Generated files are
cached under the benchmark cache directory (PERSYK_BENCH_DIR, default a folder in the system temp
directory) and keyed by their parameters, so reruns do not pay for generation. Nothing here is
timed.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from persyk_maintainers.bench._data import (
    conversation_records,
    write_audio_session,
    write_branched_session,
    write_text_session,
)

__all__ = [
    "audio_heavy_session",
    "branched_session",
    "cache_dir",
    "conversation_records",
    "size_from_env",
    "text_session",
    "voice_script",
]

# 100 ms of 24 kHz 16-bit mono audio, base64 as the provider sends it.
VOICE_CHUNK = base64.b64encode(bytes(4800)).decode()

Turn = Callable[[int, int], list[tuple[int, dict[str, Any]]]]


def cache_dir() -> Path:
    root = Path(os.environ.get("PERSYK_BENCH_DIR", Path(tempfile.gettempdir()) / "persyk-bench"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def size_from_env(name: str, default_mb: int) -> int:
    """Target size in bytes, from an environment variable in MiB."""
    return int(float(os.environ.get(name, default_mb)) * 1024 * 1024)


def _cached(name: str, write: Callable[[Path], None]) -> Path:
    directory = cache_dir() / name
    path = directory / "session.jsonl"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        write(path)
    return directory


def text_session(target_bytes: int) -> Path:
    """A linear conversation of about ``target_bytes``."""
    return _cached(f"text-{target_bytes}", lambda p: write_text_session(p, target_bytes))


def branched_session(entries: int) -> Path:
    """``entries`` messages that fork every 50 entries, so ancestry differs from file order."""
    return _cached(f"branched-{entries}", lambda p: write_branched_session(p, entries))


def audio_heavy_session(target_bytes: int, payload_bytes: int = 512 * 1024) -> Path:
    """Realtime events carrying large base64 audio payloads between short messages."""
    return _cached(
        f"audio-{target_bytes}-{payload_bytes}",
        lambda p: write_audio_session(p, target_bytes, payload_bytes),
    )


def voice_script(minutes: int, turn: Turn, *, stop: bool = False) -> bytes:
    """A provider-event script (docs/implementers/realtime.md) of a voice conversation: 100 ms of
    audio sent every 100 ms, and every 5 s the events ``turn(number, at)`` gives, as (offset in ms,
    event), received in offset order; ``stop``: a local stop at the end."""
    lines: list[dict[str, Any]] = [{"at": 0, "connection": "c1", "open": {
        "provider": "openai", "endpoint": "wss://api.openai.com/v1/realtime?model=gpt-realtime",
        "model": "gpt-realtime", "api": "realtime"}}]
    for tick in range(minutes * 600):
        at = tick * 100
        lines.append({"at": at, "connection": "c1", "direction": "send_attempt",
                      "event": {"type": "input_audio_buffer.append", "audio": VOICE_CHUNK}})
        if tick % 50 == 49:
            number = tick // 50
            for offset, event in sorted(turn(number, at), key=lambda pair: pair[0]):
                lines.append({"at": at + offset, "connection": "c1", "direction": "received",
                              "event": {**event, "event_id": f"ev{number}.{offset}"}})
    if stop:
        lines.append({"at": minutes * 60_000, "local": "stop"})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)
