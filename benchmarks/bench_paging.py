"""Paged walk: every entry of a branched session, pages of 1,000, at 5k / 10k / 20k entries.

Run: ``.venv/bin/python -m pytest benchmarks/bench_paging.py --benchmark-only``.
Sizes: PERSYK_BENCH_WALK_ENTRIES (comma-separated, default ``5000,10000,20000``). Each size is its
own group, whose floor is parsing the same file's lines with orjson once (the least any reader
must do: the contract validates the whole session before projecting anything, CTX-20). Target:
the walk grows linearly with the session, so its ratio to the floor stays
flat across sizes. ``cached`` is a long-lived reader (one ``ReadCache`` per walk, as the adapter
process keeps one: it validates the file once); ``validating`` is the readable twin that
validates the whole file for every page (O(N^2 / P), shown for comparison). The bytes validated
per page are counted, not timed, and reported in ``extra_info``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from persyk_maintainers.bench._floors import parse_every_line
from persyk_session.read._paging import read_page, read_page_validating
from persyk_session.read._read_cache import ReadCache

from benchmarks._sessions import branched_session

PAGE_SIZE = 1000
SIZES = [int(n) for n in os.environ.get("PERSYK_BENCH_WALK_ENTRIES", "5000,10000,20000").split(",")]


def walk_cached(directory: Path) -> tuple[int, ReadCache]:
    cache = ReadCache()
    cursor: str | None = None
    entries = 0
    while True:
        page = read_page(directory, PAGE_SIZE, cursor, cache=cache)
        entries += len(page.entries)
        cursor = page.next_cursor
        if cursor is None:
            cache.forget()
            return entries, cache


def walk_validating(directory: Path) -> int:
    cursor: str | None = None
    entries = 0
    while True:
        page = read_page_validating(directory, PAGE_SIZE, cursor)
        entries += len(page.entries)
        cursor = page.next_cursor
        if cursor is None:
            return entries


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n}-entries")
def walked(request: pytest.FixtureRequest) -> tuple[int, Path]:
    return request.param, branched_session(request.param)


def test_floor_orjson_parse_walked_session(benchmark: Any, walked: tuple[int, Path]) -> None:
    count, directory = walked
    benchmark.group = f"paged-walk-{count}"
    benchmark.pedantic(parse_every_line, args=(directory / "session.jsonl",), rounds=3)
    benchmark.extra_info["bytes"] = (directory / "session.jsonl").stat().st_size


def test_paged_walk_cached(benchmark: Any, walked: tuple[int, Path]) -> None:
    count, directory = walked
    benchmark.group = f"paged-walk-{count}"
    entries, cache = benchmark.pedantic(walk_cached, args=(directory,), rounds=3)
    assert entries == count
    pages = -(-count // PAGE_SIZE)
    counters = cache.counters
    size = (directory / "session.jsonl").stat().st_size
    benchmark.extra_info["pages"] = pages
    benchmark.extra_info["validated_bytes_per_page"] = round(counters.bytes_validated / pages)
    benchmark.extra_info["validated_bytes_after_first_page"] = counters.bytes_validated - size
    benchmark.extra_info["loaded_bytes_per_page"] = round(counters.bytes_loaded / pages)
    benchmark.extra_info["probed_bytes_per_page"] = round(counters.bytes_probed / pages)


def test_paged_walk_validating_every_page(benchmark: Any, walked: tuple[int, Path]) -> None:
    count, directory = walked
    benchmark.group = f"paged-walk-{count}"
    entries = benchmark.pedantic(walk_validating, args=(directory,), rounds=1)
    assert entries == count
    pages = -(-count // PAGE_SIZE)
    size = (directory / "session.jsonl").stat().st_size
    benchmark.extra_info["validated_bytes_per_page"] = size  # the whole file, every page
    benchmark.extra_info["pages"] = pages
