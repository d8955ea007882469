"""Explicit recovery of a torn tail on a large session.

Run: ``.venv/bin/python -m pytest benchmarks/bench_recovery.py --benchmark-only``.
Size: PERSYK_BENCH_RECOVERY_MB (default 20; 1024 for the figure in docs/maintainers/performance.md).

RCV-15 judges an incomplete tail by its own bytes, so recovering a torn tail must cost time
proportional to the tail, not to the file. The floor of the ``recovery`` group is the least I/O
any recovery does for the same tear: read the tail, write it to a new file and fsync it, cut the
session after its last LF and fsync it. ``validate`` is timed beside it for scale (what
recovery would cost if it validated the whole file). The tail-only group times finding and
classifying tails of two lengths.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from persyk_maintainers.bench._floors import preserve_and_cut
from persyk_maintainers.bench._writes import FRAGMENT
from persyk_session.read._store import open_session
from persyk_session.write._recovery import _read_tail, recover
from persyk_session.write._recovery_plan import classify_fragment

from benchmarks._sessions import size_from_env, text_session


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = text_session(size_from_env("PERSYK_BENCH_RECOVERY_MB", 20))
    directory = tmp_path_factory.mktemp("recovery") / "s"
    directory.mkdir()
    shutil.copyfile(source / "session.jsonl", directory / "session.jsonl")
    return directory


def _tear(file: Path) -> None:
    with open(file, "ab") as stream:
        stream.write(FRAGMENT)


@pytest.mark.benchmark(group="recovery")
def test_recovery_floor_preserve_and_cut(benchmark: Any, large: Path, tmp_path: Path) -> None:
    file = large / "session.jsonl"
    keep = tmp_path / "kept"

    def tear() -> tuple[tuple[Any, ...], dict[str, Any]]:
        _tear(file)
        keep.unlink(missing_ok=True)
        return (), {}

    def cut() -> None:
        preserve_and_cut(file, len(FRAGMENT), keep)

    benchmark.pedantic(cut, setup=tear, rounds=20)
    benchmark.extra_info["bytes"] = file.stat().st_size


@pytest.mark.benchmark(group="recovery")
def test_validate_whole_session_for_scale(benchmark: Any, large: Path) -> None:
    benchmark.pedantic(open_session, args=(large,), rounds=2)


@pytest.mark.benchmark(group="recovery")
def test_recover_torn_tail(benchmark: Any, large: Path) -> None:
    file = large / "session.jsonl"

    def tear() -> tuple[tuple[Any, ...], dict[str, Any]]:
        _tear(file)
        shutil.rmtree(large / "recovery", ignore_errors=True)
        return (large,), {}

    def repair(directory: Path) -> None:
        assert recover(directory).action == "truncated"

    benchmark.pedantic(repair, setup=tear, rounds=20)
    shutil.rmtree(large / "recovery", ignore_errors=True)


@pytest.mark.benchmark(group="recovery-tail-only")
@pytest.mark.parametrize("tail", [len(FRAGMENT), 900_000], ids=["short-tail", "900KB-tail"])
def test_tail_classification(benchmark: Any, tmp_path: Path, large: Path, tail: int) -> None:
    data = FRAGMENT + b"x" * (tail - len(FRAGMENT))
    file = tmp_path / "torn.jsonl"
    shutil.copyfile(large / "session.jsonl", file)
    with open(file, "ab") as stream:
        stream.write(data)
    size = file.stat().st_size

    def classify() -> None:
        fd = os.open(file, os.O_RDONLY)
        try:
            _, fragment = _read_tail(fd, size)
        finally:
            os.close(fd)
        assert fragment is not None
        classify_fragment(fragment, line=2, check_record=lambda value, line: [])

    benchmark(classify)
    benchmark.extra_info["tail"] = tail
