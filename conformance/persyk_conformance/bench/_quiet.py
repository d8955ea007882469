"""Whether a bench report is a result: the machine's load, its CPU steal and the floor's spread.

A ratio to the floor cancels a machine's speed, not its noise. On a shared machine another
process can slow the floor in one repetition and the implementation in the next, and the ratio
then says nothing (the 2026-12-02 report's "2.0x" for validation was taken at load 7-11, where
the floor itself moved 3x between repetitions). So the bench samples the 1-minute load average
and the CPU steal (the time a hypervisor gave this machine's CPUs to someone else) before and
after every workload, and a report is *publishable* only when

* no sample's load average exceeds half the cores (``LOAD_LIMIT``: the bench itself keeps one
  core busy, so on two cores a load above 1 means another process competed with it),
* no workload's CPU steal exceeds ``STEAL_LIMIT`` of the CPU time that passed, and
* no workload's floor varied more than ``SPREAD_LIMIT`` (max over min of its repetitions): the
  floor is the same work every time, so its spread is the run's own measure of its noise.

``sample`` reads /proc (the only IO here); ``verdict`` is pure, so tests feed it any report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LOAD_LIMIT", "SPREAD_LIMIT", "STEAL_LIMIT", "Sample", "between", "sample", "verdict"]

LOAD_LIMIT = 0.5  # of the cores: above it, the report is not publishable
STEAL_LIMIT = 0.05  # of the CPU time between two samples
SPREAD_LIMIT = 1.3  # the floor's max over min


@dataclass(frozen=True, slots=True)
class Sample:
    """One look at the machine: the 1-minute load average and /proc/stat's CPU counters (steal
    and total, in clock ticks; both 0 where /proc/stat cannot be read)."""

    load1: float | None
    steal_ticks: int = 0
    total_ticks: int = 0


def sample(proc_stat: Path = Path("/proc/stat")) -> Sample:
    try:
        load1: float | None = round(os.getloadavg()[0], 2)
    except OSError:  # no load average on this system
        load1 = None
    try:
        with proc_stat.open("rb") as handle:
            first = handle.readline(4096).split()
    except OSError:
        return Sample(load1)
    # "cpu user nice system idle iowait irq softirq steal guest guest_nice": steal is the 8th
    # counter; guest time is already counted in user, so the total stops at steal.
    if not first or first[0] != b"cpu" or len(first) < 9:
        return Sample(load1)
    try:
        counters = [int(value) for value in first[1:9]]
    except ValueError:
        return Sample(load1)
    return Sample(load1, counters[7], sum(counters))


def between(before: Sample, after: Sample) -> dict[str, Any]:
    """The conditions one workload ran in, as the report's ``conditions`` member."""
    elapsed = after.total_ticks - before.total_ticks
    steal = (after.steal_ticks - before.steal_ticks) / elapsed if elapsed > 0 else None
    return {"loadBefore": before.load1, "loadAfter": after.load1,
            "stealFraction": None if steal is None else round(steal, 4)}


def verdict(report: dict[str, Any]) -> dict[str, Any]:
    """The report's ``quiet`` member: ``publishable`` and, when not, every reason why."""
    cores = report["machine"].get("cores") or 1
    load_limit = LOAD_LIMIT * cores
    reasons: list[str] = []
    loads: list[float] = list(report["machine"].get("loadAverage", [])[:1])  # the 1-minute one
    for workload in report["workloads"]:
        conditions = workload.get("conditions") or {}
        loads += [x for x in (conditions.get("loadBefore"), conditions.get("loadAfter"))
                  if x is not None]
        steal = conditions.get("stealFraction")
        if steal is not None and steal > STEAL_LIMIT:
            reasons.append(f"{workload['key']}: CPU steal {steal:.0%} (limit {STEAL_LIMIT:.0%})")
        floor = workload["floor"]
        if floor["min"] > 0 and floor["max"] / floor["min"] > SPREAD_LIMIT:
            reasons.append(f"{workload['key']}: the floor's repetitions spread "
                           f"{floor['max'] / floor['min']:.2f}x (limit {SPREAD_LIMIT}x)")
        elif floor["min"] <= 0 < floor["max"]:
            reasons.append(f"{workload['key']}: a floor repetition took no measurable time")
    if loads and max(loads) > load_limit:
        reasons.insert(0, f"load average up to {max(loads):.2f} on {cores} cores "
                          f"(limit {load_limit:g}: half the cores)")
    if not loads:
        reasons.insert(0, "no load average could be read")
    if report.get("aborted"):
        reasons.append(f"the run stopped early: {report['aborted']}")
    return {"publishable": not reasons, "reasons": reasons, "loadLimit": load_limit,
            "stealLimit": STEAL_LIMIT, "spreadLimit": SPREAD_LIMIT}
