"""The fsync workloads' figures beside the ratio (bench/_syscalls.py, _precision.added_cost): the
time the implementation adds to the floor with its interval, and system calls and syncs per
unit under strace; "unsupported, because strace is missing" where it is."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.casetree import FAKES
from persyk_conformance.cli._commands import REFERENCE_ADAPTER
from persyk_maintainers.bench._counted import CountFailed
from persyk_maintainers.bench._precision import added_cost
from persyk_maintainers.bench._report import render_markdown, report_problems
from persyk_maintainers.bench._run import BenchConfig, run_bench
from persyk_maintainers.bench._syscalls import parse_summary

needs_strace = pytest.mark.skipif(
    shutil.which("strace") is None,
    reason="strace is not installed (apt-get install strace; .ci/run installs it where it may)")

SUMMARY = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 61.02    0.000310         155         2           fsync
 20.00    0.000100          10        10         4 openat
  9.00    0.000050           5        10           write
  1.00    0.000010           5         2           fdatasync
------ ----------- ----------- --------- --------- ----------------
100.00    0.000470          19        24         4 total
"""

def test_the_summary_sums_every_call_and_the_syncs() -> None:
    assert parse_summary(SUMMARY) == {"syscalls": 24.0, "fsyncs": 4.0}
    with pytest.raises(CountFailed, match="no summary"):
        parse_summary("strace: ptrace(PTRACE_TRACEME, ...): Operation not permitted\n")


def test_the_added_cost_is_least_less_least_with_an_interval_between_rounds() -> None:
    added = added_cost([[1.0, 1.2], [1.1, 1.0]], [[1.5, 1.4], [1.6, 1.7]])
    assert added is not None
    assert added.least == pytest.approx(0.4)
    assert added.per_round == pytest.approx((0.4, 0.6))
    assert added.low is not None and added.high is not None
    assert added.low < 0.5 < added.high
    assert added_cost([[1.0]], [[1.5]]) == added_cost([[1.0]], [[1.5]])
    assert added_cost([[1.0]], [[1.5]]).low is None  # type: ignore[union-attr]


def _append_run(*impls: tuple[str, ...]) -> dict[str, Any]:
    return run_bench(BenchConfig(impls=impls or (REFERENCE_ADAPTER,), scale=0.005, rounds=2,
                                 pairs=1, only=("append-single",), conformance=False))


@needs_strace
def test_syncs_per_append_are_counted_and_a_double_sync_is_seen(tmp_path: Path) -> None:
    report = _append_run(REFERENCE_ADAPTER, (sys.executable, str(FAKES / "double_sync_append.py")))
    assert report_problems(report) == []
    (workload,) = report["workloads"]
    assert workload["floor"]["syscalls"]["fsyncs"] == 1.0
    reference, doubled = workload["results"]
    assert reference["syscalls"]["fsyncs"] == 1.0 and doubled["syscalls"]["fsyncs"] == 2.0
    assert reference["syscalls"]["syscalls"] > workload["floor"]["syscalls"]["syscalls"]
    assert reference["addedSeconds"]["low"] is not None
    markdown = render_markdown(report)
    assert "| append-single | " in markdown and "1.00 syncs | " in markdown
    assert "2.00 syncs |" in markdown and "to the floor (95 % " in markdown


def test_no_strace_on_path_reports_unsupported_never_a_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    report = _append_run()
    assert report_problems(report) == []
    (workload,) = report["workloads"]
    reason = "because strace is missing (not on PATH)"
    assert workload["floor"]["syscalls"] == {"unsupported": reason}
    assert workload["results"][0]["syscalls"] == {"unsupported": reason}
    assert "addedSeconds" in workload["results"][0]
    assert f"| append-single | unsupported, {reason} | unsupported, {reason} |" in (
        render_markdown(report))
