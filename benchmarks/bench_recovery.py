"""Explicit recovery of a torn tail on a large session.

Run: ``.venv/bin/python -m pytest benchmarks/bench_recovery.py --benchmark-only``.
Size: PERSYK_BENCH_RECOVERY_MB (default 20; use a few hundred for a local measurement).
The floor is validating the same session (``open_session``): RCV-8/RCV-15 make recovery
validate every complete line first, so recovery can only be the floor plus the tail's cost.
The tail-only group times finding, classifying and planning the tail (reading backwards from
the end), which must depend on the tail's length, not the file's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from persyk_session._recovery import _read_tail, classify_fragment, recover
from persyk_session._store import open_session

from benchmarks._sessions import size_from_env, text_session

FRAGMENT = b'{"type":"message","id":"torn","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"cut her'  # noqa: E501


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = text_session(size_from_env("PERSYK_BENCH_RECOVERY_MB", 20))
    directory = tmp_path_factory.mktemp("recovery") / "s"
    directory.mkdir()
    shutil.copyfile(source / "session.jsonl", directory / "session.jsonl")
    return directory


@pytest.mark.benchmark(group="recovery")
def test_recovery_floor_validate(benchmark: Any, large: Path) -> None:
    benchmark(open_session, large)
    benchmark.extra_info["bytes"] = (large / "session.jsonl").stat().st_size


@pytest.mark.benchmark(group="recovery")
def test_recover_torn_tail(benchmark: Any, large: Path) -> None:
    file = large / "session.jsonl"

    def tear() -> tuple[tuple[Any, ...], dict[str, Any]]:
        with open(file, "ab") as stream:
            stream.write(FRAGMENT)
        return (large,), {}

    def repair(directory: Path) -> None:
        assert recover(directory).action == "truncated"

    benchmark.pedantic(repair, setup=tear, rounds=5)
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
