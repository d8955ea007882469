"""System calls and fsyncs per unit of the fsync workloads, counted under ``strace -f -c``.

Where an fsync decides a workload's time (``FSYNC_PRECISION``: the appends, the recovery, the
capture), the ratio to the floor says how much slower, not why; the count of system calls and
of syncs per unit says what the implementation asks of the kernel beyond what the floor asks.
Both sides are counted as a difference of two runs (``_counted``): the repetitions after a
warm-up less the warm-up alone, so the interpreter's start and imports cancel. ``-f`` follows
every process of the adapter; ``-c`` sums them into one table. Where strace is missing or cannot
run a side, the figure is its reason ("unsupported, because ..."), never a number.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ._counted import CountFailed, CountPlan, Totals, Wrapper, count_workload
from ._workloads import FSYNC_PRECISION, Prepared, Workload

__all__ = ["STRACE", "SYNCS", "parse_summary", "strace_unavailable", "syscall_members",
           "traced"]

# The calls that make data durable; each counts as one sync.
SYNCS = frozenset({"fsync", "fdatasync", "sync_file_range", "syncfs", "sync"})
SLOWDOWN = 5.0  # strace stops the process at every system call


def strace_unavailable() -> str | None:
    """Why no system call can be counted here (None: strace is on PATH)."""
    if shutil.which("strace") is None:
        return "strace is missing (not on PATH)"
    return None


def traced(workload: Workload) -> bool:
    """Whether the workload gets system-call counts: the ones an fsync decides."""
    return workload.precision_target == FSYNC_PRECISION


def parse_summary(text: str) -> Totals:
    """``strace -c``'s table: the calls of every system call summed, and of the syncs.
    Raises CountFailed for a text that holds no table."""
    calls = syncs = 0
    rows = 0
    for line in text.splitlines():
        fields = line.split()
        # % time, seconds, usecs/call, calls, [errors,] name: the header, rules and total aside
        if len(fields) < 5 or not fields[3].isdigit() or fields[-1] == "total":
            continue
        rows += 1
        calls += int(fields[3])
        if fields[-1] in SYNCS:
            syncs += int(fields[3])
    if rows == 0:
        raise CountFailed("strace wrote no summary of system calls")
    return {"syscalls": float(calls), "fsyncs": float(syncs)}


def _prefix(out: Path) -> list[str]:
    return ["strace", "-f", "-c", "-o", str(out / "strace.txt")]


def _read(out: Path) -> Totals:
    try:
        return parse_summary((out / "strace.txt").read_text("utf-8", "replace"))
    except OSError:
        raise CountFailed("strace wrote no summary of system calls") from None


STRACE = Wrapper("strace", _prefix, _read, SLOWDOWN)


def _member(totals: Totals | str, repetitions: int) -> dict[str, Any]:
    if isinstance(totals, str):
        return {"unsupported": f"because {totals}"}
    return {"syscalls": round(totals["syscalls"], 2), "fsyncs": round(totals["fsyncs"], 2),
            "requests": repetitions}


def syscall_members(
    workload: Workload, prepared: Prepared, commands: list[list[str] | None], plan: CountPlan,
    unavailable: str | None,
) -> tuple[dict[str, Any], list[dict[str, Any] | None]]:
    """The ``syscalls`` member of the workload's floor and of each result (None: none)."""
    if unavailable is not None:
        floor: Totals | str = unavailable
        impls: list[Totals | str | None] = [None if c is None else unavailable for c in commands]
    else:
        floor, impls = count_workload(STRACE, workload, prepared, commands, plan)
    return (_member(floor, plan.repetitions),
            [None if totals is None else _member(totals, plan.repetitions) for totals in impls])
