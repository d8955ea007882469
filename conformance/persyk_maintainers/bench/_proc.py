"""What Linux's /proc says about CPU time: the machine's counters and a process tree's.

The bench's quiet verdict (``_quiet``) needs two readings taken at the same moments: the busy
CPU time of the whole machine (/proc/stat) and the CPU time of the bench's own process tree
(the roots, every descendant still in /proc, zombies included, and what each of them has
reaped). The difference is CPU time other processes used. Both are in clock ticks (USER_HZ), so
they subtract without conversion. The parsers are pure; ``read_*`` do the reading and answer
None (or an empty table) where /proc is not there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CpuCounters",
    "ProcessTimes",
    "parse_cpu_line",
    "parse_process_stat",
    "read_cpu_counters",
    "read_process_table",
    "tree",
    "tree_ticks",
]

PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class CpuCounters:
    """/proc/stat's first line, summed over every CPU, in ticks."""

    busy: int  # user + nice + system + irq + softirq + steal: not idle, not iowait
    steal: int
    total: int  # user .. steal: the wall time times the CPUs (guest is inside user already)


def parse_cpu_line(line: bytes) -> CpuCounters | None:
    """``cpu user nice system idle iowait irq softirq steal ...``; None for anything else."""
    fields = line.split()
    if len(fields) < 9 or fields[0] != b"cpu":
        return None
    try:
        user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    except ValueError:
        return None
    busy = user + nice + system + irq + softirq + steal
    return CpuCounters(busy, steal, busy + idle + iowait)


def read_cpu_counters(proc_stat: Path = PROC / "stat") -> CpuCounters | None:
    try:
        with proc_stat.open("rb") as handle:
            return parse_cpu_line(handle.readline(4096))
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class ProcessTimes:
    """One process of /proc/PID/stat: its parent and its CPU time in ticks, its own (all its
    threads) and its reaped children's (cutime + cstime: children that exited and were waited
    for, with what they had reaped themselves)."""

    ppid: int
    own: int
    reaped: int


def parse_process_stat(raw: bytes) -> ProcessTimes | None:
    # The command name is in parentheses and may hold anything, ')' included; after it come
    # field 3 (state) onwards: ppid is field 4, utime..cstime fields 14..17 (proc(5)).
    fields = raw[raw.rfind(b")") + 2:].split()
    if len(fields) < 15:
        return None
    try:
        utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
        return ProcessTimes(int(fields[1]), utime + stime, cutime + cstime)
    except ValueError:
        return None


def read_process_table(proc: Path = PROC) -> dict[int, ProcessTimes]:
    """Every process in /proc (threads are inside their process's figures); empty without
    /proc. A process that exits while the table is read is left out."""
    table: dict[int, ProcessTimes] = {}
    try:
        names = os.listdir(proc)
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(proc / name / "stat", "rb") as handle:
                found = parse_process_stat(handle.read())
        except OSError:
            continue
        if found is not None:
            table[int(name)] = found
    return table


def tree(roots: Iterable[int], table: Mapping[int, ProcessTimes]) -> list[int]:
    """The roots that are in the table and all their descendants in it (zombies too: their
    CPU time stays in /proc until their parent reaps it into its own ``reaped``)."""
    children: dict[int, list[int]] = {}
    for pid, times in table.items():
        children.setdefault(times.ppid, []).append(pid)
    found: list[int] = []
    seen: set[int] = set()
    todo = [pid for pid in roots if pid in table]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        found.append(pid)
        todo += children.get(pid, [])
    return found


def tree_ticks(roots: Iterable[int], table: Mapping[int, ProcessTimes]) -> int | None:
    """The CPU time of the tree under ``roots``: each member's own and reaped time (a process
    reaped by another member moves from the one figure to the other, so it counts once).
    None when no root is in the table."""
    members = tree(roots, table)
    if not members:
        return None
    return sum(table[pid].own + table[pid].reaped for pid in members)
