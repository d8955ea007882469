"""A search spread over worker processes gives the page a serial scan gives (SRCH-15, SRCH-16).

The tree holds what a parallel scan could get wrong: matching and non-matching sessions in
interleaved creation order, invalid sessions (reported in the order they are examined, up to a
page's last result), a session file that cannot be read (a FIFO, a directory), links inside the
root (followed) and out of it (never followed, SRCH-24), and enough sessions for many batches.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.records import header, jsonl, label, session_info, user
from persyk_session.fast import FAST_ENGINE
from persyk_session.fast._fanout import (
    SERIAL,
    FanOut,
    ParallelScan,
    fan_out_from_env,
    ordered_map,
)
from persyk_session.read._engine import READABLE_ENGINE, Engine
from persyk_session.search._discovery import search
from persyk_session.search._roots import Root
from persyk_session.search._textmatch import Query

# Every batch a few sessions, and no threshold: the smallest tree already goes to the workers.
PARALLEL = FanOut(workers=2, min_sessions=0, min_bytes=0, batch_sessions=3)


def _created(i: int) -> str:
    return f"2026-01-{1 + i % 28:02d}T{i % 24:02d}:00:00.000Z"


def _tree(root: Path, outside: Path) -> None:
    root.mkdir()
    for i in range(40):
        directory = root / f"s{i:02d}"
        directory.mkdir()
        words = "the zebracorn ran" if i % 3 == 0 else "nothing to see"
        records: list[Any] = [header(f"id{i}", _created(i)), user("m1", None, words)]
        if i % 7 == 0:
            records.append(session_info("n1", "m1", name=f"Zebracorn {i}"))
        if i % 11 == 0:
            records.append(label("l1", "m1", "m1", "zebracorn-tag"))
        data = jsonl(*records)
        if i % 5 == 4:
            data += b'{"type":"message"\n'  # invalid: a syntax error in its last line
        (directory / "session.jsonl").write_bytes(data)
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "session.jsonl")  # unreadable: never opened (SRCH-25)
    (root / "dir").mkdir()
    (root / "dir" / "session.jsonl").mkdir()  # unreadable: not a regular file
    (root / "alias").mkdir()
    os.symlink(root / "s03" / "session.jsonl", root / "alias" / "session.jsonl")
    away = outside / "away"
    away.mkdir(parents=True)
    (away / "session.jsonl").write_bytes(jsonl(header("away"), user("m1", None, "zebracorn")))
    os.symlink(away, root / "escape")  # a link out of the root: reported, never followed


def _on(fan_out: FanOut) -> Engine:
    return dataclasses.replace(FAST_ENGINE, fan_out=ParallelScan(fan_out))


def _pages(root: Path, query: str, limit: int, engine: Engine) -> list[dict[str, Any]]:
    pages = []
    cursor = None
    while True:
        page = search((Root(str(root), True),), Query.of(query), limit, cursor, engine=engine)
        pages.append(page.to_json())
        cursor = page.next_cursor
        if cursor is None:
            return pages


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("parallel")
    _tree(base / "root", base / "outside")
    return base / "root"


@pytest.mark.parametrize(
    ("query", "limit", "pages"),
    [("zebracorn", 4, 5), ("ZEBRACORN", 50, 1), ("", 7, 5), ("absent", 10, 1)],
    ids=["paged-matches", "one-page", "empty-query-matches-all", "no-match"],
)
def test_parallel_search_pages_equal_serial_ones(
    tree: Path, query: str, limit: int, pages: int
) -> None:
    serial = _pages(tree, query, limit, _on(SERIAL))
    assert len(serial) == pages
    assert _pages(tree, query, limit, _on(PARALLEL)) == serial
    assert _pages(tree, query, limit, READABLE_ENGINE) == serial
    codes = {d["code"] for page in serial for d in page["diagnostics"]}
    # The tree really holds what the comparison is about.
    assert {"SESSION_INVALID", "SESSION_UNREADABLE", "LINK_OUTSIDE_ROOT"} <= codes
    assert all("away" not in str(page) for page in serial)


def _slow_first(run: tuple[int, ...]) -> list[int]:
    if run[0] == 0:
        time.sleep(0.5)  # the first batch finishes last
    return list(run)


def test_ordered_map_yields_in_submission_order_not_completion_order() -> None:
    runs = iter([(0, 1), (2, 3), (4, 5), (6, 7)])
    assert list(ordered_map(_slow_first, runs, 2)) == list(range(8))


def test_ordered_map_stops_early_without_scanning_everything() -> None:
    outcomes = ordered_map(_slow_first, iter([(i,) for i in range(1, 1000)]), 2)
    assert [next(outcomes) for _ in range(3)] == [1, 2, 3]
    outcomes.close()  # the queued batches are cancelled; the pool shuts down


@pytest.mark.parametrize(
    ("value", "workers"), [("1", 1), ("3", 3), ("zero", 1), ("0", 1)],
    ids=["serial", "three", "not-a-number", "zero"],
)
def test_workers_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, workers: int
) -> None:
    monkeypatch.setenv("PERSYK_SEARCH_WORKERS", value)
    assert fan_out_from_env().workers == workers


def test_threshold_keeps_small_scans_serial() -> None:
    plan = FanOut(workers=2)
    assert not plan.parallel(10, 100 << 20)
    assert not plan.parallel(1000, 1 << 20)
    assert plan.parallel(1000, 100 << 20)
    assert not FanOut(workers=1).parallel(1000, 100 << 20)


def test_ordered_map_keeps_at_most_two_batches_per_worker_in_flight() -> None:
    pulled = []

    def runs() -> Any:
        for i in range(1, 100):
            pulled.append(i)
            yield (i,)

    outcomes = ordered_map(_slow_first, runs(), 2)
    assert next(outcomes) == 1
    assert len(pulled) <= 2 * 2 + 1  # memory bounded: the rest is not even read yet
    outcomes.close()


def _failing(run: tuple[int, ...]) -> list[int]:
    raise ValueError("a bug in the scan")


def test_a_failing_worker_fails_the_search_instead_of_hanging() -> None:
    with pytest.raises(RuntimeError, match="a search worker failed: ValueError"):
        list(ordered_map(_failing, iter([(1,), (2,)]), 2))


def _pid_of_scanner(run: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(item, os.getpid()) for item in run]


def test_ordered_map_scans_one_share_in_this_process_and_forks_the_others() -> None:
    outcomes = list(ordered_map(_pid_of_scanner, iter([(i,) for i in range(9)]), 3))
    assert [item for item, _ in outcomes] == list(range(9))
    by_slot = [{pid for item, pid in outcomes if item % 3 == slot} for slot in range(3)]
    # Run i goes to worker i % 3; the last share is this process's, the others two forks'.
    assert by_slot[2] == {os.getpid()}
    assert all(len(pids) == 1 and os.getpid() not in pids for pids in by_slot[:2])
    assert len(by_slot[0] | by_slot[1]) == 2


def _failing_here(run: tuple[int, ...]) -> list[int]:
    if os.getpid() == _PARENT:
        raise ValueError("a bug in the scan")
    return list(run)


_PARENT = os.getpid()


def test_a_failing_share_of_this_process_fails_the_search_as_a_worker_does() -> None:
    with pytest.raises(RuntimeError, match="a search worker failed: ValueError"):
        list(ordered_map(_failing_here, iter([(1,), (2,)]), 2))
