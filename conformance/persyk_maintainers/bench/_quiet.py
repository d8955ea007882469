"""Whether a bench report is a result: each figure precise enough, the machine's load before the
run, other processes' CPU time during it, the CPU steal, every cell timed and the run finished.

A ratio to the floor cancels a machine's speed, not its noise. On a shared machine another
process can slow the floor in one repetition and the implementation in the next, and the ratio
then says nothing (the 2026-12-02 report's "2.0x" for validation was taken at load 7-11, where
the floor itself moved 3x between repetitions). What makes a figure untrustworthy is *another*
process competing with the bench, so that is what is measured: for each workload's timed
repetitions, the busy CPU time of the whole machine (/proc/stat) less the CPU time of the
bench's own process tree (the runner, its adapters, their workers, and the children they
reaped) is the *foreign* CPU time, as a share of the machine (wall time times cores).

Decision (2026-12-03): load averages sampled during the run no longer decide.
They count the bench's own runnable and fsync-blocked processes, so a bench alone on 2 cores
reaches 1.1-1.4 and a "load above half the cores" rule could never pass there. A report is
*publishable* only when

* the 1-minute load average sampled before the bench starts anything (the load others left)
  is at most ``LOAD_LIMIT`` of the cores,
* no workload's foreign CPU time exceeds ``FOREIGN_LIMIT`` of the machine (give or take
  ``FOREIGN_SLACK_SECONDS``, the counters' resolution), and it could be measured for every
  workload (else nothing shows that no one competed),
* no workload's CPU steal exceeds ``STEAL_LIMIT`` of the CPU time that passed,
* every figure is precise enough: the half-width of its ratio's 95 % interval, which comes from
  the spread between rounds (_precision), is at most the workload's ``precisionTarget`` (10 % for
  CPU work, 30 % where an fsync decides the time); a figure of one round has no interval,
* no implementation's cell failed (invalid, timeout, error: no figure to judge), and
* the run finished.

Decision (2026-12-06): the floor's spread (max over min of its repetitions, at most 1.3x) no
longer decides. A floor of microseconds (an fsync, a tail read) shifts level between repetitions
on a 2-vCPU VM, so no run there ever passed it, while its least time over many pairs, against
the implementation's over as many, moves by a few percent from run to run. What a reader needs
is how far the figure could move, which is the interval; each refusal names the workload and
the figure.

``sample`` reads /proc (through ``_proc``); ``between``, ``cpu_shares`` and ``verdict`` are
pure, so tests feed them any samples and reports.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._proc import PROC, read_cpu_counters, read_process_table, tree_ticks
from ._workloads import CPU_PRECISION, FSYNC_PRECISION

__all__ = [
    "FAILED", "FOREIGN_LIMIT", "FOREIGN_SLACK_SECONDS", "LOAD_LIMIT", "STEAL_LIMIT", "Sample",
    "between", "combined", "cpu_shares", "foreign_allowance", "imprecise", "load_average",
    "own_tree_ticks", "sample", "verdict", "without_conformance",
]

LOAD_LIMIT = 0.5  # of the cores, before the run: above it, the report is not publishable
# Of the machine's CPU time (wall time x cores) during a workload's timed repetitions. Another
# process using a share f of 2 cores could, in the worst case (always on the bench's core when
# the bench wanted it), stretch a single-threaded figure by 2f: 10% bounds that at 20% (a
# competitor that stays all run long widens no interval), and leaves room for the kernel's work
# on the bench's behalf (journal commits, writeback, interrupts: attributed to no process, so
# foreign here).
FOREIGN_LIMIT = 0.10
# Both sources count in clock ticks (10 ms at USER_HZ 100): the machine's counters are charged
# per tick, each process's time is truncated to a tick at each reading, so a difference can be
# off by a few ticks whatever ran. A workload's foreign CPU time may exceed the limit by this
# much. On a long timed interval the limit decides; a short one cannot resolve 10%: a
# recovery's (about 0.03 s of machine CPU time, 3 ticks) shows nothing, a retry workload's
# (about 0.2 s) only a competitor taking a whole core. Competition that lasts shows in the
# workloads timed for seconds (validation, context, paged walk, search at scale 1).
FOREIGN_SLACK_SECONDS = 0.05
STEAL_LIMIT = 0.05  # of the CPU time between two samples
FAILED = ("invalid", "timeout", "error")  # a cell without a figure


@dataclass(frozen=True, slots=True)
class Sample:
    """One look at the machine: the 1-minute load average, /proc/stat's CPU counters (busy,
    steal and total, in clock ticks; 0 where /proc/stat cannot be read) and the CPU time of the
    bench's own process tree in the same ticks (None where it cannot be read)."""

    load1: float | None
    steal_ticks: int = 0
    total_ticks: int = 0
    busy_ticks: int = 0
    own_ticks: int | None = None


def load_average() -> float | None:
    """The 1-minute load average, rounded; None where the system has none."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def own_tree_ticks(roots: Iterable[int] = (), proc: Path = PROC) -> int | None:
    """CPU time of the process tree under ``roots`` (this process when none are given)."""
    return tree_ticks(tuple(roots) or (os.getpid(),), read_process_table(proc))


def sample(proc_stat: Path = PROC / "stat",
           own: Callable[[], int | None] = own_tree_ticks) -> Sample:
    """The load average, the machine's counters and ``own()``, the bench tree's CPU time, read
    one right after the other (a few milliseconds apart: the table of processes is read)."""
    load1 = load_average()
    own_ticks = own()
    counters = read_cpu_counters(proc_stat)
    if counters is None:
        return Sample(load1, own_ticks=own_ticks)
    return Sample(load1, counters.steal, counters.total, counters.busy, own_ticks)


def between(before: Sample, after: Sample) -> dict[str, Any]:
    """The load and steal one workload ran in, for the report's ``conditions`` member."""
    elapsed = after.total_ticks - before.total_ticks
    steal = (after.steal_ticks - before.steal_ticks) / elapsed if elapsed > 0 else None
    return {"loadBefore": before.load1, "loadAfter": after.load1,
            "stealFraction": None if steal is None else round(steal, 4)}


def combined(intervals: Sequence[tuple[Sample, Sample]]) -> tuple[Sample, Sample]:
    """One workload's timed intervals (one a round) as one: a start of zero counters and an end
    of their summed differences, the first start's load and the last end's (for ``between``
    and ``cpu_shares``). No interval gives two empty samples."""
    if not intervals:
        return Sample(None), Sample(None)

    def total(name: str) -> int:
        return sum(getattr(b, name) - getattr(a, name) for a, b in intervals)

    owns = [(a.own_ticks, b.own_ticks) for a, b in intervals]
    own = (None if any(a is None or b is None for a, b in owns)
           else sum(b - a for a, b in owns if a is not None and b is not None))
    return (Sample(intervals[0][0].load1, 0, 0, 0, None if own is None else 0),
            Sample(intervals[-1][1].load1, total("steal_ticks"), total("total_ticks"),
                   total("busy_ticks"), own))


def _ticks_per_second() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError):
        return 100


def cpu_shares(start: Sample, end: Sample, hz: int | None = None) -> dict[str, Any]:
    """Over the interval from ``start`` to ``end``, the machine's CPU time (wall time x cores,
    /proc/stat's total, in seconds at ``hz`` ticks a second) and the shares of it that the
    bench's own tree and every other process used, for ``conditions``; None where a reading is
    missing. The two sources round apart (see FOREIGN_SLACK_SECONDS), so the shares are
    clamped to 0..1 rather than let a rounding go negative."""
    elapsed = end.total_ticks - start.total_ticks
    if elapsed <= 0 or start.own_ticks is None or end.own_ticks is None:
        return {"timedCpuSeconds": None, "foreignCpuFraction": None, "ownCpuFraction": None}
    own = end.own_ticks - start.own_ticks
    foreign = (end.busy_ticks - start.busy_ticks) - own
    return {"timedCpuSeconds": round(elapsed / (hz or _ticks_per_second()), 3),
            "foreignCpuFraction": round(min(max(foreign / elapsed, 0.0), 1.0), 4),
            "ownCpuFraction": round(min(max(own / elapsed, 0.0), 1.0), 4)}


def foreign_allowance(window: float | None) -> float:
    """The largest foreign share a workload may show over a timed interval of ``window``
    seconds of machine CPU time: the limit, and the ticks' resolution spread over it."""
    return FOREIGN_LIMIT + (FOREIGN_SLACK_SECONDS / window if window else 0.0)


def verdict(report: dict[str, Any]) -> dict[str, Any]:
    """The report's ``quiet`` member: ``publishable`` and, when not, every reason why; and
    ``byWorkload``, whether each workload's figures are publishable (no reason of the run's
    and none of that workload's)."""
    cores = report["machine"].get("cores") or 1
    load_limit = LOAD_LIMIT * cores
    reasons: list[str] = []
    load = report.get("loadBeforeRun")
    if load is None:
        reasons.append("no load average could be read before the run")
    elif load > load_limit:
        reasons.append(f"load average {load:.2f} on {cores} cores before the run "
                       f"(limit {load_limit:g}: half the cores)")
    if report.get("aborted"):
        reasons.append(f"the run stopped early: {report['aborted']}")
    reasons += without_conformance(report)
    unstarted = _unstarted(report)
    by_workload: dict[str, bool] = {}
    unmeasured: list[str] = []
    workload_reasons: list[str] = []
    for workload in report["workloads"]:
        own = _workload_reasons(workload, unstarted)
        measured = (workload.get("conditions") or {}).get("foreignCpuFraction") is not None
        if not measured:
            unmeasured.append(workload["key"])
        by_workload[workload["key"]] = measured and not own and not reasons
        workload_reasons += own
    if unmeasured:
        workload_reasons.append("the CPU time of other processes could not be measured (no "
                                f"/proc) for {', '.join(unmeasured)}: nothing shows that none "
                                "competed")
    reasons += workload_reasons
    return {"publishable": not reasons, "reasons": reasons, "byWorkload": by_workload,
            "loadLimit": load_limit,
            "foreignCpuLimit": FOREIGN_LIMIT, "foreignCpuSlackSeconds": FOREIGN_SLACK_SECONDS,
            "stealLimit": STEAL_LIMIT,
            "precisionTargets": {"cpu": CPU_PRECISION, "fsync": FSYNC_PRECISION}}


def _unstarted(report: dict[str, Any]) -> frozenset[str]:
    """The labels of the implementations whose adapter did not start."""
    return frozenset(impl["label"] for impl in report.get("implementations", [])
                     if impl.get("error"))


def _workload_reasons(workload: dict[str, Any], unstarted: frozenset[str]) -> list[str]:
    """Why one workload's figures are not publishable: others' CPU time, steal, a figure not
    precise enough, a failed cell, a figure without its conformance."""
    reasons = []
    conditions = workload.get("conditions") or {}
    foreign = conditions.get("foreignCpuFraction")
    if foreign is not None and foreign > foreign_allowance(conditions.get("timedCpuSeconds")):
        reasons.append(f"{workload['key']}: other processes used {foreign:.0%} of the "
                       f"machine's CPU time (limit {FOREIGN_LIMIT:.0%}, and "
                       f"{FOREIGN_SLACK_SECONDS:g} s for the ticks' resolution)")
    steal = conditions.get("stealFraction")
    if steal is not None and steal > STEAL_LIMIT:
        reasons.append(f"{workload['key']}: CPU steal {steal:.0%} (limit {STEAL_LIMIT:.0%})")
    reasons += imprecise(workload, unstarted)
    for result in workload["results"]:
        member = result.get("conformance") or {}
        if result["outcome"] == "ok" and "unsupported" in member:
            reasons.append(f"{workload['key']}, {result['implementation']}: no conformance, "
                           f"{member['unsupported']}")
    return reasons


def without_conformance(report: dict[str, Any]) -> list[str]:
    """A figure never stands without its conformance (_conformance): a run that took none
    (--no-conformance) is not a result, a reason of the whole run. (A figure whose conformance
    could not be had is its workload's reason: _workload_reasons.) Reports written before
    conformance was recorded have no ``conformance`` member."""
    taken = report.get("conformance")
    if taken is None or taken["ran"]:
        return []
    return ["the figures stand without the conformance of the cases they rely on "
            "(--no-conformance)"]


def imprecise(workload: dict[str, Any], unstarted: frozenset[str] = frozenset()) -> list[str]:
    """Why a workload's figures are not precise enough to publish, one reason per cell.

    Decision: a cell that failed before any timed run (its probe answered wrongly, or the
    implementation threw or ran out of time on the input) is a finding about the implementation,
    published as its outcome the way ``unsupported`` is: it has no figure that could mislead.
    A cell that failed once timed runs had begun (the run broke under it), or whose adapter
    did not start at all (the run's set-up broke), refuses the workload."""
    target = workload.get("precisionTarget")
    reasons = []
    for result in workload["results"]:
        where = f"{workload['key']}, {result['implementation']}"
        if result["outcome"] in FAILED:
            if result.get("seconds") or result["implementation"] in unstarted:
                reasons.append(f"{where}: {result['outcome']}, no figure")
            continue
        if result["outcome"] != "ok":
            continue  # unsupported: nothing was promised
        if result.get("refused"):  # _clock: a run too short for the clock
            reasons.append(f"{where}: refused, {result['refused']}")
            continue
        ratio = result.get("ratio") or {}
        half = ratio.get("halfWidth")
        if target is None or "least" not in ratio:
            reasons.append(f"{where}: no figure (a floor that took no measurable time, or a "
                           "report without rounds)")
        elif half is None:
            reasons.append(f"{where}: {ratio['least']:.2f}x from {ratio['rounds']} round, "
                           "no interval (at least 2 rounds)")
        elif half > target:
            reasons.append(f"{where}: {ratio['least']:.2f}x, 95 % interval "
                           f"{ratio['low']:.2f}-{ratio['high']:.2f} is ±{half:.0%} "
                           f"(target ±{target:.0%})")
    return reasons
