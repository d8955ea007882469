"""Cached large, realistic v1 sessions for the benchmarks.

The generators themselves are ``persyk_conformance._bench_data``'s (seeded, so the same
parameters give the same bytes), shared with ``persyk-conformance bench``. Generated files are
cached under the benchmark cache directory (PERSYK_BENCH_DIR, default a folder in the system temp
directory) and keyed by their parameters, so reruns do not pay for generation. Nothing here is
timed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from persyk_conformance._bench_data import (
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
]


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
