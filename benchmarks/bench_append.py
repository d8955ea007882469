"""Write path: single-record append, batch throughput, identical-retry detection.

Run: ``.venv/bin/python -m pytest benchmarks/bench_append.py --benchmark-only``.
Each group has a floor measured in the same run: a bare ``os.write`` + ``os.fsync`` of the same
bytes on an ``O_APPEND`` descriptor. Target: a single-record append at most 1.5x its floor on a
small session. Sizes: PERSYK_BENCH_RETRY_ENTRIES (default 20000) entries for the large session
of the retry group.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from persyk_session._append import (
    append_records,
    create_session,
    items_from_objects,
    plan_append,
)
from persyk_session._context import LeafSelector
from persyk_session._session import IndexBuilder
from persyk_session._store import open_session

TS = "2026-01-01T00:00:00.000Z"


def _user(entry_id: str, parent: str | None) -> dict[str, Any]:
    return {
        "type": "message", "id": entry_id, "parentId": parent, "timestamp": TS,
        "message": {"role": "user", "timestamp": 1767225600000,
                    "content": [{"type": "text", "text": "a short user message " * 4}]},
    }


def _session(directory: Path, entries: int) -> Path:
    create_session(directory, id="bench", timestamp=TS)
    parent = None
    for start in range(0, entries, 256):
        batch = []
        for i in range(start, min(entries, start + 256)):
            batch.append(_user(f"e{i}", parent))
            parent = f"e{i}"
        assert append_records(directory, items_from_objects(batch)).error is None
    return directory / "session.jsonl"


def _bare_append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


@pytest.mark.benchmark(group="append-single")
def test_single_append_floor_bare_write_fsync(benchmark: Any, tmp_path: Path) -> None:
    file = _session(tmp_path / "s", 10)
    data = orjson.dumps(_user("x", None)) + b"\n"
    benchmark(_bare_append, file, data)


@pytest.mark.benchmark(group="append-single")
def test_single_append_reference(benchmark: Any, tmp_path: Path) -> None:
    _session(tmp_path / "s", 10)
    ids = itertools.count()

    def one() -> None:
        result = append_records(tmp_path / "s", items_from_objects([_user(f"n{next(ids)}", None)]))
        assert result.error is None

    benchmark(one)


BATCH = 256


@pytest.mark.benchmark(group="append-batch")
def test_batch_floor_bare_write_fsync(benchmark: Any, tmp_path: Path) -> None:
    file = _session(tmp_path / "s", 10)
    data = b"".join(orjson.dumps(_user(f"b{i}", None)) + b"\n" for i in range(BATCH))
    benchmark(_bare_append, file, data)
    benchmark.extra_info["records"] = BATCH


@pytest.mark.benchmark(group="append-batch")
def test_batch_reference(benchmark: Any, tmp_path: Path) -> None:
    _session(tmp_path / "s", 10)
    rounds = itertools.count()

    def batch() -> None:
        r = next(rounds)
        records = [_user(f"b{r}-{i}", None) for i in range(BATCH)]
        assert append_records(tmp_path / "s", items_from_objects(records)).error is None

    benchmark(batch)
    benchmark.extra_info["records"] = BATCH


def _retry_plan(file: Path) -> Any:
    """The identical-retry decision alone (index built once): must not grow with the session."""
    index = open_session(file).index
    last = index.entries[-1]
    session = open_session(file)
    with session.bodies() as load:
        record = load(last)
    items = items_from_objects([record])

    def decide() -> None:
        with session.bodies() as loader:
            plan = plan_append(IndexBuilder.from_index(index), items,
                               leaf=LeafSelector.default(), end_offset=0, next_line=0,
                               load_committed=loader)
        assert plan.already_present == (last.id,) and not plan.data

    return decide


@pytest.mark.benchmark(group="append-retry-decision")
@pytest.mark.parametrize("entries", [100, int(os.environ.get("PERSYK_BENCH_RETRY_ENTRIES", 20000))],
                         ids=["small", "large"])
def test_retry_detection(benchmark: Any, tmp_path: Path, entries: int) -> None:
    decide = _retry_plan(_session(tmp_path / "s", entries))
    benchmark(decide)
    benchmark.extra_info["entries"] = entries


@pytest.mark.benchmark(group="append-retry-whole")
@pytest.mark.parametrize("entries", [100, int(os.environ.get("PERSYK_BENCH_RETRY_ENTRIES", 20000))],
                         ids=["small", "large"])
def test_retry_whole_operation(benchmark: Any, tmp_path: Path, entries: int) -> None:
    """The whole retried append, including APP-7's validation of the committed file."""
    _session(tmp_path / "s", entries)
    record = _user(f"e{entries - 1}", f"e{entries - 2}")
    items = items_from_objects([record])

    def retry() -> None:
        assert append_records(tmp_path / "s", items).already_present == (record["id"],)

    benchmark(retry)
    benchmark.extra_info["entries"] = entries
