"""SIGTERM, SIGHUP and SIGINT during ``persyk-conformance merge`` (cli/_merge.py over
cli/_run_signals.py): while the shards are read and joined, the merge ends at once and writes
nothing; while its reports are written, it finishes them whole and then exits. Either way the
status is 128 + the signal's number and no temporary file is left beside ``--report``.

Broken variants these tests catch: SIGTERM left to its default (the merge dies mid-write and
leaves its ``.tmp`` file), a signal that cuts a report file in half, a status of 0 or 1 after a
signal.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from _shards import two_tiny_shards
from persyk_conformance import _whole_files
from persyk_conformance.adapters import _processes
from persyk_conformance.cli import main
from persyk_conformance.reports import _merge

SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]


@pytest.fixture(autouse=True)
def fresh_stop_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal is delivered to this test's own process: its "the run is ending" flag
    (adapters/_processes.py), set for good as the process would exit, is this test's alone."""
    monkeypatch.setattr(_processes, "_ending", threading.Event())


@pytest.fixture(scope="module")
def shard_paths(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return [str(path) for path in two_tiny_shards(tmp_path_factory.mktemp("shards"))]


def _merge_into(out: Path, shard_paths: list[str]) -> int:
    return main(["merge", *shard_paths, "--report", str(out / "merged.json"),
                 "--junit", str(out / "merged.xml"), "-q"])


@pytest.mark.parametrize("signum", SIGNALS, ids=[s.name for s in SIGNALS])
def test_a_signal_while_the_shards_are_joined_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    shard_paths: list[str], signum: signal.Signals,
) -> None:
    join = _merge.merge_reports

    def join_then_signal(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signum)
        return join(*args, **kwargs)

    monkeypatch.setattr(_merge, "merge_reports", join_then_signal)
    assert _merge_into(tmp_path, shard_paths) == 128 + signum
    assert f"interrupted by {signum.name}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("signum", SIGNALS, ids=[s.name for s in SIGNALS])
def test_a_signal_while_the_reports_are_written_waits_for_them_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shard_paths: list[str],
    signum: signal.Signals,
) -> None:
    write_all = _whole_files._write_all

    def signal_mid_write(fd: int, data: bytes) -> None:
        os.kill(os.getpid(), signum)  # after the temporary file exists, before its bytes
        write_all(fd, data)

    monkeypatch.setattr(_whole_files, "_write_all", signal_mid_write)
    assert _merge_into(tmp_path, shard_paths) == 128 + signum
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merged.json", "merged.xml"]
    merged = json.loads((tmp_path / "merged.json").read_text("utf-8"))
    assert sorted(case["id"] for case in merged["cases"]) == ["R-001", "R-002"]
