"""Read path: validation, context projection and opening a large audio-heavy session.

Run: ``.venv/bin/python -m pytest benchmarks/bench_read.py --benchmark-only``.
Sizes: PERSYK_BENCH_VALIDATE_MB (default 100; also the size of the large-record session),
PERSYK_BENCH_CONTEXT_ENTRIES (default 100000), PERSYK_BENCH_OPEN_MB (default 1024). Targets:
validation at most 2x bare orjson parsing; opening 1 GB of audio-heavy records under
100 MB peak RSS. docs/maintainers/performance-read.md records where the read path's time goes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from persyk_maintainers.bench._floors import parse_every_line, parse_every_line_mapped
from persyk_session.operations import op_context
from persyk_session.read._context import LeafSelector, effective_history, select_leaf
from persyk_session.read._store import open_session

from benchmarks._sessions import audio_heavy_session, branched_session, size_from_env, text_session

CHUNK = 1 << 20
# The floors are shared with `persyk-conformance bench`: chunked parsing for short lines, a
# memory map for lines of hundreds of KB (chunked splitting copies a long line twice, which
# would flatter the implementation). Each group uses the faster of the two for its input shape.


def _read_every_byte(path: Path) -> int:
    total = 0
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK):
            total += len(chunk)
    return total


@pytest.fixture(scope="module")
def text_dir() -> Path:
    return text_session(size_from_env("PERSYK_BENCH_VALIDATE_MB", 100))


@pytest.fixture(scope="module")
def large_records_dir() -> Path:
    # Realtime events of about 16 KiB (base64 audio deltas) between short messages.
    return audio_heavy_session(size_from_env("PERSYK_BENCH_VALIDATE_MB", 100), payload_bytes=16384)


@pytest.fixture(scope="module")
def branched_dir() -> Path:
    return branched_session(int(os.environ.get("PERSYK_BENCH_CONTEXT_ENTRIES", 100_000)))


@pytest.fixture(scope="module")
def audio_dir() -> Path:
    return audio_heavy_session(size_from_env("PERSYK_BENCH_OPEN_MB", 1024))


@pytest.mark.benchmark(group="validate")
def test_floor_orjson_parse_every_line(benchmark: Any, text_dir: Path) -> None:
    lines = benchmark.pedantic(parse_every_line, args=(text_dir / "session.jsonl",), rounds=3)
    benchmark.extra_info["records"] = lines
    benchmark.extra_info["MB"] = round((text_dir / "session.jsonl").stat().st_size / 2**20)


@pytest.mark.benchmark(group="validate")
def test_validate_session(benchmark: Any, text_dir: Path) -> None:
    session = benchmark.pedantic(open_session, args=(text_dir,), rounds=3)
    assert session.valid, session.diagnostics[:3]
    benchmark.extra_info["entries"] = len(session.index.entries)


@pytest.mark.benchmark(group="validate-large-records")
def test_floor_orjson_parse_large_records(benchmark: Any, large_records_dir: Path) -> None:
    path = large_records_dir / "session.jsonl"
    lines = benchmark.pedantic(parse_every_line, args=(path,), rounds=3)
    benchmark.extra_info["records"] = lines
    benchmark.extra_info["MB"] = round(path.stat().st_size / 2**20)


@pytest.mark.benchmark(group="validate-large-records")
def test_validate_large_records(benchmark: Any, large_records_dir: Path) -> None:
    session = benchmark.pedantic(open_session, args=(large_records_dir,), rounds=3)
    assert session.valid, session.diagnostics[:3]
    benchmark.extra_info["entries"] = len(session.index.entries)


@pytest.mark.benchmark(group="context")
def test_floor_orjson_parse_branched(benchmark: Any, branched_dir: Path) -> None:
    benchmark.pedantic(parse_every_line, args=(branched_dir / "session.jsonl",), rounds=3)


@pytest.mark.benchmark(group="context")
def test_context_projection_branched(benchmark: Any, branched_dir: Path) -> None:
    result = benchmark.pedantic(op_context, args=({"session": str(branched_dir)},), rounds=3)
    assert "messages" in result, result
    benchmark.extra_info["messages_on_leaf_path"] = len(result["messages"])


def _context_two_pass(directory: Path) -> dict[str, Any]:
    """The readable twin of ``context``: validate, then read and parse each path body again."""
    session = open_session(directory)
    leaf = select_leaf(session.index, LeafSelector.default())
    with session.bodies() as load:
        return effective_history(session.index, leaf, load).to_json()


@pytest.mark.benchmark(group="context")
def test_context_two_pass_twin_branched(benchmark: Any, branched_dir: Path) -> None:
    # The one-pass projection above against the two passes it replaced.
    result = benchmark.pedantic(_context_two_pass, args=(branched_dir,), rounds=3)
    assert result == op_context({"session": str(branched_dir)})


# VmHWM (peak resident set of this process image), not ru_maxrss: on Linux ru_maxrss survives
# execve, so a child started by a large parent would report the parent's peak.
_PEAK_RSS = """
import sys
from persyk_session.read._store import open_session

def peak_kib():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))

before = peak_kib()
session = open_session(sys.argv[1])
assert session.valid, session.diagnostics[:3]
print(before, peak_kib(), len(session.index.entries))
"""


@pytest.mark.benchmark(group="open-audio-heavy")
def test_floor_orjson_parse_audio_heavy(benchmark: Any, audio_dir: Path) -> None:
    # Opening validates every record, so the floor parses every line (reading alone is in
    # extra_info for scale: the page cache serves it at memory speed).
    path = audio_dir / "session.jsonl"
    benchmark.pedantic(parse_every_line_mapped, args=(path,), rounds=2)
    began = time.perf_counter()
    total = _read_every_byte(path)
    benchmark.extra_info["read_only_s"] = round(time.perf_counter() - began, 3)
    benchmark.extra_info["MB"] = round(total / 2**20)


@pytest.mark.benchmark(group="open-audio-heavy")
def test_open_and_index_audio_heavy(benchmark: Any, audio_dir: Path) -> None:
    session = benchmark.pedantic(open_session, args=(audio_dir,), rounds=2)
    assert session.valid
    # Peak RSS in a fresh process, so the benchmark harness's own memory does not count.
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, str(audio_dir)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    benchmark.extra_info["rss_after_import_MB"] = round(int(out[0]) / 1024, 1)
    benchmark.extra_info["peak_rss_MB"] = round(int(out[1]) / 1024, 1)
    benchmark.extra_info["entries"] = int(out[2])
