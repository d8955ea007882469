"""Write path: single-record append, batch throughput, identical-retry detection.

Run: ``.venv/bin/python -m pytest benchmarks/bench_append.py --benchmark-only``.

Every append benchmark runs in one long-lived process against a session of fixed, realistic
size (PERSYK_BENCH_SESSION_ENTRIES, default 10,000 entries), as an agent appending to a long
conversation would. The floor of each group is measured in the same run and directory: a bare
``os.write`` + ``os.fsync`` of the same bytes on a descriptor opened once with ``O_APPEND``.
Target (docs/maintainers/performance.md): a single-record append at most 1.5x its floor.

The retry groups compare a small (100) and a large (PERSYK_BENCH_RETRY_ENTRIES, default 20,000)
session: detecting an identical retry must not grow with the session.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from persyk_session.fast._records_fast import encode_record, parse_record
from persyk_session.read._context import LeafSelector
from persyk_session.read._index import EntryMeta, IndexBuilder
from persyk_session.read._store import open_session
from persyk_session.write._append import append_records, items_from_objects, plan_append

TS = "2026-01-01T00:00:00.000Z"
SESSION_ENTRIES = int(os.environ.get("PERSYK_BENCH_SESSION_ENTRIES", 10_000))
RETRY_SIZES = [100, int(os.environ.get("PERSYK_BENCH_RETRY_ENTRIES", 20_000))]


def _user(entry_id: str, parent: str | None) -> dict[str, Any]:
    return {
        "type": "message", "id": entry_id, "parentId": parent, "timestamp": TS,
        "message": {"role": "user", "timestamp": 1767225600000,
                    "content": [{"type": "text", "text": "a short user message " * 4}]},
    }


def _session(directory: Path, entries: int) -> Path:
    """A valid session of ``entries`` chained messages, written directly (not timed)."""
    directory.mkdir(parents=True)
    header = {"type": "session", "version": 1, "id": "bench", "timestamp": TS}
    parts = [encode_record(header)]
    parts += [encode_record(_user(f"e{i}", f"e{i - 1}" if i else None)) for i in range(entries)]
    file = directory / "session.jsonl"
    file.write_bytes(b"".join(parts))
    assert open_session(file).valid
    return file


class _Chain:
    """Fresh records continuing the session's last entry."""

    def __init__(self, prefix: str, parent: str | None) -> None:
        self._ids = itertools.count()
        self._prefix = prefix
        self.parent = parent

    def take(self, count: int) -> list[dict[str, Any]]:
        records = []
        for _ in range(count):
            entry_id = f"{self._prefix}{next(self._ids)}"
            records.append(_user(entry_id, self.parent))
            self.parent = entry_id
        return records


@pytest.fixture
def floor_fd(tmp_path: Path) -> Iterator[int]:
    """An ``O_APPEND`` descriptor on a copy of a session of the same size, same directory."""
    file = _session(tmp_path / "s", SESSION_ENTRIES)
    floor = file.with_name("floor.jsonl")
    floor.write_bytes(file.read_bytes())
    fd = os.open(floor, os.O_WRONLY | os.O_APPEND)
    yield fd
    os.close(fd)


def _bare_append(fd: int, data: bytes) -> None:
    os.write(fd, data)
    os.fsync(fd)


@pytest.mark.benchmark(group="append-single")
def test_single_append_floor_bare_write_fsync(benchmark: Any, floor_fd: int) -> None:
    data = encode_record(_user("x", "e1"))
    benchmark(_bare_append, floor_fd, data)


@pytest.mark.benchmark(group="append-single")
def test_single_append_reference(benchmark: Any, tmp_path: Path) -> None:
    _session(tmp_path / "s", SESSION_ENTRIES)
    chain = _Chain("n", f"e{SESSION_ENTRIES - 1}")

    def one() -> None:
        result = append_records(tmp_path / "s", items_from_objects(chain.take(1)))
        assert result.error is None

    benchmark(one)
    benchmark.extra_info["entries"] = SESSION_ENTRIES


BATCH = 256


@pytest.mark.benchmark(group="append-batch")
def test_batch_floor_bare_write_fsync(benchmark: Any, floor_fd: int) -> None:
    data = b"".join(encode_record(r) for r in _Chain("b", "e1").take(BATCH))
    benchmark(_bare_append, floor_fd, data)
    benchmark.extra_info["records"] = BATCH


@pytest.mark.benchmark(group="append-batch")
def test_batch_reference(benchmark: Any, tmp_path: Path) -> None:
    _session(tmp_path / "s", SESSION_ENTRIES)
    chain = _Chain("b", f"e{SESSION_ENTRIES - 1}")

    def batch() -> None:
        assert append_records(tmp_path / "s", items_from_objects(chain.take(BATCH))).error is None

    benchmark(batch)
    benchmark.extra_info["records"] = BATCH
    benchmark.extra_info["entries"] = SESSION_ENTRIES


def _pread_loader(fd: int) -> Any:
    def load(entry: EntryMeta) -> dict[str, Any]:
        return parse_record(os.pread(fd, entry.length, entry.offset), line=entry.line)

    return load


@pytest.mark.benchmark(group="append-retry-decision")
@pytest.mark.parametrize("entries", RETRY_SIZES, ids=["small", "large"])
def test_retry_detection(benchmark: Any, tmp_path: Path, entries: int) -> None:
    """The identical-retry decision alone, against a live builder (no per-append index copy)."""
    file = _session(tmp_path / "s", entries)
    index = open_session(file).index
    last = index.entries[-1]
    builder = IndexBuilder.from_index(index)  # once: a retry adds nothing to the builder
    fd = os.open(file, os.O_RDONLY)
    load = _pread_loader(fd)
    items = items_from_objects([load(last)])

    def decide() -> None:
        plan = plan_append(builder, items, leaf=LeafSelector.default(), end_offset=0,
                           next_line=0, load_committed=load)
        assert plan.already_present == (last.id,) and not plan.data

    try:
        benchmark(decide)
    finally:
        os.close(fd)
    benchmark.extra_info["entries"] = entries


@pytest.mark.benchmark(group="append-retry-whole")
@pytest.mark.parametrize("entries", RETRY_SIZES, ids=["small", "large"])
def test_retry_whole_operation(benchmark: Any, tmp_path: Path, entries: int) -> None:
    """The whole retried append in a long-lived process: lock, APP-7 check, decision."""
    _session(tmp_path / "s", entries)
    record = _user(f"e{entries - 1}", f"e{entries - 2}")
    items = items_from_objects([record])

    def retry() -> None:
        assert append_records(tmp_path / "s", items).already_present == (record["id"],)

    benchmark(retry)
    benchmark.extra_info["entries"] = entries
