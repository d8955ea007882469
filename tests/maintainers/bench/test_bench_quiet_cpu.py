"""The quiet verdict's CPU figures (bench/_quiet.py, bench/_proc.py): the machine's busy CPU
time less the bench's own process tree's is the CPU time of other processes. A process the
bench started, alive or reaped, is its own; a process outside its tree is foreign."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from persyk_maintainers.bench._proc import parse_process_stat, read_process_table
from persyk_maintainers.bench._quiet import cpu_shares, own_tree_ticks, sample

LINUX_PROC = Path("/proc/stat").is_file() and Path("/proc/self/stat").is_file()


def _stat(path: Path, user: int, system: int, idle: int, iowait: int, steal: int) -> Path:
    path.write_text(f"cpu  {user} 0 {system} {idle} {iowait} 0 0 {steal} 0 0\ncpu0 1 2 3\n",
                    "ascii")
    return path


def test_other_processes_cpu_is_the_machine_s_busy_time_less_the_bench_s_own(
    tmp_path: Path,
) -> None:
    stat = tmp_path / "stat"
    first = sample(_stat(stat, 100, 100, 700, 0, 100), own=lambda: 50)
    assert (first.busy_ticks, first.total_ticks, first.own_ticks) == (300, 1000, 50)
    # 1,000 ticks pass: 350 busy, of which the bench's tree used 100.
    second = sample(_stat(stat, 250, 150, 1350, 0, 250), own=lambda: 150)
    assert cpu_shares(first, second, hz=100) == {
        "timedCpuSeconds": 10.0, "foreignCpuFraction": 0.25, "ownCpuFraction": 0.1}


def test_waiting_for_the_disk_is_not_anyone_s_cpu_time(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    first = sample(_stat(stat, 100, 100, 700, 0, 0), own=lambda: 10)
    second = sample(_stat(stat, 100, 100, 800, 900, 0), own=lambda: 10)  # fsync: iowait only
    assert cpu_shares(first, second)["foreignCpuFraction"] == 0.0


def test_a_missing_reading_gives_no_cpu_shares_rather_than_zero(tmp_path: Path) -> None:
    stat = _stat(tmp_path / "stat", 100, 100, 700, 0, 0)
    known = sample(stat, own=lambda: 10)
    unknown = sample(stat, own=lambda: None)
    no_proc = sample(tmp_path / "missing", own=lambda: 10)
    assert no_proc.total_ticks == 0
    for start, end in ((known, unknown), (unknown, known), (no_proc, no_proc)):
        assert set(cpu_shares(start, end).values()) == {None}


def _fake_process(proc: Path, pid: int, ppid: int, state: str, times: tuple[int, ...],
                  name: str = "python3") -> None:
    (proc / str(pid)).mkdir()
    # Fields 3.. of proc(5): state ppid pgrp session tty tpgid flags minflt cminflt majflt
    # cmajflt utime stime cutime cstime ...
    rest = [state, str(ppid), "1", "1", "0", "-1", "0", "0", "0", "0", "0",
            *(str(t) for t in times), "20", "0", "1"]
    (proc / str(pid) / "stat").write_text(f"{pid} ({name}) {' '.join(rest)}\n", "ascii")


def test_the_bench_s_tree_holds_its_descendants_zombies_and_what_they_reaped(
    tmp_path: Path,
) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    _fake_process(proc, 10, 1, "S", (5, 5, 15, 5))        # the bench: reaped children used 20
    _fake_process(proc, 11, 10, "R", (25, 5, 0, 0))       # an adapter
    _fake_process(proc, 12, 11, "Z", (6, 1, 0, 0))        # its worker, exited, not yet reaped
    _fake_process(proc, 13, 1, "R", (900, 100, 0, 0))     # someone else
    _fake_process(proc, 14, 13, "R", (50, 0, 0, 0), name="a) (b")  # ... and its child
    (proc / "self").mkdir()  # not a process
    assert own_tree_ticks([10], proc) == 10 + 20 + 30 + 7
    assert own_tree_ticks([13], proc) == 1050
    assert own_tree_ticks([99], proc) is None  # no root left: unknown, not zero


def test_a_command_name_holding_parentheses_does_not_shift_the_fields() -> None:
    raw = b"7 (x) 3 (y) R 4 1 1 0 -1 0 0 0 0 0 11 12 13 14 20 0 1\n"
    found = parse_process_stat(raw)
    assert found is not None and (found.ppid, found.own, found.reaped) == (4, 23, 27)
    assert parse_process_stat(b"7 (short) R 1\n") is None


BUSY = "import time\nend = time.process_time() + float(__import__('sys').argv[1])\n" \
       "while time.process_time() < end: pass\n"
BENCH = f"""
import subprocess, sys, time
busy = [sys.executable, "-c", {BUSY!r}]
sys.stdin.readline()                            # the test's first sample is taken
subprocess.run([*busy, "0.4"], check=True)      # a child that exits and is reaped
live = subprocess.Popen([*busy, "60"])          # a child still running at the second sample
time.sleep(0.4)
print(live.pid, flush=True)
sys.stdin.readline()                            # the test's second sample is taken
live.kill(); live.wait()
"""


def _ticks(pid: int) -> int:
    return read_process_table()[pid].own


@pytest.mark.skipif(not LINUX_PROC, reason="reads /proc/stat and /proc/PID/stat (Linux)")
def test_a_busy_process_outside_the_bench_s_tree_is_foreign_and_its_own_child_is_not() -> None:
    """A stand-in for the bench (its roots) runs a busy child to completion and another that is
    still busy; a busy process started beside it (its own session, not below the roots) is
    foreign. Other work on the machine only adds to the foreign figure, so the foreign
    process's ticks are a lower bound of it, and the stand-in's children's of the own one."""
    # Bounded (60 s of CPU) so that neither busy process can outlive a failed test for long.
    foreign = subprocess.Popen([sys.executable, "-c", BUSY, "60"], start_new_session=True)
    bench = subprocess.Popen([sys.executable, "-c", BENCH], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert bench.stdin is not None and bench.stdout is not None
    live: int | None = None
    try:
        time.sleep(0.2)  # the interpreters are up: their start is outside the interval
        roots = (bench.pid,)
        # The foreign process's and the live child's ticks are read inside the interval the
        # two samples bound, so they are lower bounds whatever the scheduler does in between.
        start = sample(own=lambda: own_tree_ticks(roots))
        foreign_before = _ticks(foreign.pid)
        bench.stdin.write("\n")
        bench.stdin.flush()
        live = int(bench.stdout.readline())
        live_ticks = _ticks(live)
        foreign_ticks = _ticks(foreign.pid) - foreign_before
        end = sample(own=lambda: own_tree_ticks(roots))
        bench.stdin.write("\n")
        bench.stdin.flush()
        bench.wait(timeout=30)  # it kills and reaps its live child itself
    finally:
        # Killing the stand-in first would orphan its busy child, which then burnt a core
        # for the rest of the test run.
        if live is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(live, signal.SIGKILL)
        for process in (foreign, bench):
            process.kill()
            process.wait()
    assert start.own_ticks is not None and end.own_ticks is not None
    own = end.own_ticks - start.own_ticks
    slack = 3  # ticks: the two sources are sampled a few milliseconds apart
    # The reaped child (0.4 s of CPU, ~40 ticks) and the live one are the bench's own ...
    assert own >= 40 - slack + live_ticks - slack
    # ... the process beside it is not: it is in the foreign figure, whatever else ran.
    assert own < 40 + live_ticks + foreign_ticks // 2 + 30
    machine_busy = end.busy_ticks - start.busy_ticks
    assert machine_busy - own >= foreign_ticks - slack
