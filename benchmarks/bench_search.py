"""Discovery and search over a repository of many sessions (SRCH-28).

Run: ``.venv/bin/python -m pytest benchmarks/bench_search.py --benchmark-only``.
Sizes: PERSYK_BENCH_SEARCH_SESSIONS (default 1000; 10000 for docs/maintainers/performance.md)
sessions holding PERSYK_BENCH_SEARCH_MB in all (default 100; 1024 for the figure).

Group ``discover``: the floor lists each root with ``os.scandir``, opens every
``session.jsonl`` and parses its first line with orjson; discovery reads the same headers and
validates them. Group ``search``: the floor is ``grep -rilF`` over the same files (the least a
tool that finds a literal, case-insensitively, must read); a plain Python scan
(``bytes.lower().find`` over 1 MiB chunks) is timed beside it. The query matches one session in
200, fewer than a page holds, so search streams every session. Peak memory (the maximum resident
set of a fresh process doing one discovery or one search, against the same process that only
imports the package) is recorded in the extra column.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from persyk_maintainers.bench._data import NEEDLE, NEEDLE_EVERY, write_repository
from persyk_session.search._discovery import discover, search
from persyk_session.search._roots import Root
from persyk_session.search._textmatch import Query

from benchmarks._sessions import cache_dir, size_from_env

EVERY = NEEDLE_EVERY  # one session in EVERY holds the needle


def repository(sessions: int, total: int) -> Path:
    """``sessions`` session directories of ``total / sessions`` bytes each (cached)."""
    root = cache_dir() / f"repo-{sessions}-{total}"
    done = root / ".complete"
    if done.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    write_repository(root, sessions, total)
    done.touch()
    return root


@pytest.fixture(scope="module")
def repo() -> Path:
    return repository(
        int(os.environ.get("PERSYK_BENCH_SEARCH_SESSIONS", 1000)),
        size_from_env("PERSYK_BENCH_SEARCH_MB", 100),
    )


def _peak_rss_kib(code: str) -> int:
    """The peak resident set (KiB) of a fresh interpreter running ``code``."""
    script = code + "\nimport resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.split()[-1])


_IMPORTS = (
    "from persyk_session.search._discovery import discover, search\n"
    "from persyk_session.search._roots import Root\n"
    "from persyk_session.search._textmatch import Query\n"
)


def _sizes(repo: Path) -> dict[str, Any]:
    files = list(repo.glob("*/session.jsonl"))
    return {"sessions": len(files), "MB": round(sum(f.stat().st_size for f in files) / 2**20)}


# --- discovery ---------------------------------------------------------------------------------


def _scan_headers(root: Path) -> int:
    count = 0
    with os.scandir(root) as listing:
        for entry in listing:
            if entry.is_dir():
                with open(os.path.join(entry.path, "session.jsonl"), "rb") as f:
                    orjson.loads(f.readline())
                count += 1
    return count


@pytest.mark.benchmark(group="discover")
def test_discover_floor_scandir_and_header_lines(benchmark: Any, repo: Path) -> None:
    assert benchmark.pedantic(_scan_headers, args=(repo,), rounds=3) > 0
    benchmark.extra_info.update(_sizes(repo))


@pytest.mark.benchmark(group="discover")
def test_discover(benchmark: Any, repo: Path) -> None:
    found = benchmark.pedantic(discover, args=((Root(str(repo), True),),), rounds=3)
    assert len(found.sessions) == _sizes(repo)["sessions"]
    base = _peak_rss_kib(_IMPORTS)
    peak = _peak_rss_kib(_IMPORTS + f"discover((Root({str(repo)!r}, True),))")
    benchmark.extra_info.update(peak_rss_mb=round(peak / 1024, 1),
                                above_imports_mb=round((peak - base) / 1024, 1))


# --- search ------------------------------------------------------------------------------------


@pytest.mark.benchmark(group="search")
def test_search_floor_grep(benchmark: Any, repo: Path) -> None:
    grep = shutil.which("grep")
    if grep is None:
        pytest.skip("no grep on PATH: the floor of this group")

    def run() -> int:
        done = subprocess.run([grep, "-rilF", NEEDLE, str(repo)], capture_output=True)
        return len(done.stdout.splitlines())

    assert benchmark.pedantic(run, rounds=3) > 0
    benchmark.extra_info.update(_sizes(repo))


def _python_scan(root: Path) -> int:
    needle = NEEDLE.lower().encode()
    hits = 0
    for file in root.glob("*/session.jsonl"):
        with open(file, "rb") as f:
            carry = b""
            while chunk := f.read(1 << 20):
                window = (carry + chunk).lower()
                if window.find(needle) >= 0:
                    hits += 1
                    break
                carry = window[-len(needle):]
    return hits


@pytest.mark.benchmark(group="search")
def test_search_python_lower_find_scan(benchmark: Any, repo: Path) -> None:
    assert benchmark.pedantic(_python_scan, args=(repo,), rounds=3) > 0


@pytest.mark.benchmark(group="search")
def test_search(benchmark: Any, repo: Path) -> None:
    roots = (Root(str(repo), True),)
    page = benchmark.pedantic(search, args=(roots, Query.of(NEEDLE.lower()), 100, None),
                              rounds=2)
    expected = -(-_sizes(repo)["sessions"] // EVERY)
    assert len(page.results) == expected and page.next_cursor is None
    base = _peak_rss_kib(_IMPORTS)
    peak = _peak_rss_kib(
        _IMPORTS + f"search((Root({str(repo)!r}, True),), Query.of('zebracorn'), 100, None)")
    benchmark.extra_info.update(peak_rss_mb=round(peak / 1024, 1),
                                above_imports_mb=round((peak - base) / 1024, 1))
