"""Deterministic generators of large, realistic v1 sessions for the benchmarks (records spelled
with the shared record kit, persyk_conformance.records).

Generated files are cached under the benchmark cache directory (PERSYK_BENCH_DIR, default a
folder in the system temp directory) and keyed by their parameters, so reruns do not pay for
generation. Nothing here is timed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from persyk_conformance import records as kit

HEADER_ID = "00000000-0000-4000-8000-00000000be00"
WORDS = [
    "session",
    "record",
    "parent",
    "branch",
    "leaf",
    "message",
    "assistant",
    "context",
    "audio",
    "capture",
    "provider",
    "ordering",
    "removal",
    "label",
    "archive",
    "recording",
    "canonical",
    "history",
    "naïve",
    "café",
    "Grüße",
    "東京",
    "🎧",
]


def cache_dir() -> Path:
    root = Path(os.environ.get("PERSYK_BENCH_DIR", Path(tempfile.gettempdir()) / "persyk-bench"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def size_from_env(name: str, default_mb: int) -> int:
    """Target size in bytes, from an environment variable in MiB."""
    return int(float(os.environ.get(name, default_mb)) * 1024 * 1024)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _encode(obj: dict[str, Any]) -> bytes:
    # orjson rather than kit.line: the same bytes for these records, and much faster for the
    # hundreds of megabytes a benchmark session takes.
    return orjson.dumps(obj) + b"\n"


def _header() -> bytes:
    return _encode(kit.header(HEADER_ID))


def conversation_records(
    rng: random.Random, count: int, *, branch_every: int = 0
) -> Iterator[bytes]:
    """User/assistant/tool exchanges; every ``branch_every`` entries the chain forks back."""
    parent: str | None = None
    previous: list[str] = []
    for i in range(count):
        entry_id = f"e{i:08d}"
        if branch_every and i and i % branch_every == 0 and len(previous) > 10:
            parent = previous[-10]  # fork: continue from an older entry
        kind = i % 5
        message: dict[str, Any]
        if kind == 0:
            message = {"role": "user", "content": [{"type": "text", "text": _text(rng, 40)}]}
        elif kind == 1:
            message = {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": _text(rng, 20)},
                    {
                        "type": "toolCall",
                        "id": f"call{i}",
                        "name": "read",
                        "arguments": {"path": "a.txt"},
                    },
                ],
                "provider": "openai",
                "model": "gpt-realtime",
                "usage": {"input": 120, "output": 40},
                "stopReason": "toolUse",
            }
        elif kind == 2:
            message = {
                "role": "toolResult",
                "toolCallId": f"call{i - 1}",
                "toolName": "read",
                "isError": False,
                "content": [{"type": "text", "text": _text(rng, 60)}],
            }
        else:
            message = {"role": "assistant", "content": [{"type": "text", "text": _text(rng, 80)}]}
        message["timestamp"] = 1767225600000 + i
        yield _encode(kit.message(entry_id, parent, message, t=i))
        previous.append(entry_id)
        parent = entry_id


def _write(path: Path, chunks: Iterator[bytes], limit: int) -> None:
    tmp = path.with_suffix(".tmp")
    written = 0
    with open(tmp, "wb") as out:
        out.write(_header())
        for chunk in chunks:
            out.write(chunk)
            written += len(chunk)
            if written >= limit:
                break
    os.replace(tmp, path)


def text_session(target_bytes: int) -> Path:
    """A linear conversation of about ``target_bytes``."""
    directory = cache_dir() / f"text-{target_bytes}"
    path = directory / "session.jsonl"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        rng = random.Random(1)
        _write(path, conversation_records(rng, 10**9), target_bytes)
    return directory


def branched_session(entries: int) -> Path:
    """``entries`` messages that fork every 50 entries, so ancestry differs from file order."""
    directory = cache_dir() / f"branched-{entries}"
    path = directory / "session.jsonl"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        rng = random.Random(2)
        _write(path, conversation_records(rng, entries, branch_every=50), 1 << 62)
    return directory


def audio_heavy_session(target_bytes: int, payload_bytes: int = 512 * 1024) -> Path:
    """Realtime events carrying large base64 audio payloads between short messages."""
    directory = cache_dir() / f"audio-{target_bytes}-{payload_bytes}"
    path = directory / "session.jsonl"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        audio = base64.b64encode(hashlib.shake_256(b"pcm").digest(payload_bytes * 3 // 4)).decode()

        def records() -> Iterator[bytes]:
            rng = random.Random(3)
            parent: str | None = None
            for i in range(10**9):
                entry_id = f"a{i:08d}"
                if i % 4 == 3:
                    body: dict[str, Any] = {
                        "type": "message",
                        "message": {
                            "role": "user",
                            "content": [{"type": "text", "text": _text(rng, 20)}],
                            "timestamp": 1767225600000 + i,
                        },
                    }
                else:
                    body = {
                        "type": "realtime_event",
                        "connectionId": "conn-1",
                        "direction": "incoming",
                        "observation": "received",
                        "observedAt": kit.ts(i),
                        "sequence": i,
                        "payload": {"type": "response.output_audio.delta", "delta": audio},
                    }
                kind = body.pop("type")
                yield _encode(kit.entry(kind, entry_id, parent, i, **body))
                parent = entry_id

        _write(path, records(), target_bytes)
    return directory
