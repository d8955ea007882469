"""SIGTERM and SIGHUP stop ``persyk-conformance bench`` as Ctrl-C does
(persyk_maintainers/cli/_bench.py over persyk_conformance/cli/_run_signals.py): the adapters
are killed, the report holds every workload that finished with ``aborted`` saying where it
stopped, the sandbox is removed, and the status is 128 + the signal's number. Broken variant
this catches: SIGTERM left to its default (the bench dies without a report and leaves its
sandbox and its adapter)."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.adapters import _processes
from persyk_conformance.cli import main
from persyk_maintainers.bench import _run as _bench_run

SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]


@pytest.fixture(autouse=True)
def fresh_stop_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal is delivered to this test's own process: its "the run is ending" flag
    (adapters/_processes.py), set for good as the process would exit, is this test's alone."""
    monkeypatch.setattr(_processes, "_ending", threading.Event())


@pytest.mark.parametrize("signum", SIGNALS, ids=[s.name for s in SIGNALS])
def test_a_signal_stops_the_bench_with_the_report_of_what_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: signal.Signals,
) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    real = _bench_run._run_round
    calls: list[str] = []

    def signal_in_second(cell: Any, *args: Any) -> Any:
        # The second round of a workload (or the first of the next) starts: the first finished.
        calls.append(cell.workload.key)
        if len(calls) == 2:
            os.kill(os.getpid(), signum)  # raised here, in the main thread, by the handler
        return real(cell, *args)

    monkeypatch.setattr(_bench_run, "_run_round", signal_in_second)
    report_file = tmp_path / "stopped.json"
    status = main(["bench", "--scale", "0.005", "-q", "--only", "retry-*", "--rounds", "2",
                   "--pairs", "2", "--report", str(report_file)])
    assert status == 128 + signum
    report = json.loads(report_file.read_text("utf-8"))
    assert [w["key"] for w in report["workloads"]] == [calls[0]]
    assert report["aborted"].startswith("interrupted")
    assert list(temp.iterdir()) == [], "the bench left its sandbox behind"
