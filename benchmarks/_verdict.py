"""The in-process benchmarks' figures with the bench's conditions and verdict.

``persyk-conformance bench`` reports every figure with a 95 % interval and says whether its run
is publishable (conformance/persyk_maintainers/bench/_quiet.py). The pytest-benchmark suites
under benchmarks/ time the reference in its own process; this module gives their output the
same figure, the same conditions and the same verdict, built by the same functions:

* the headline is the least time over the floor's least time (the floor: the test of the group
  whose name holds ``floor``), with the median ratio beside it;
* the interval: pytest-benchmark runs every round of one benchmark before the next, so nothing
  is alternated; each side's rounds, in the order they ran, are cut into up to ``BLOCKS``
  consecutive blocks, and the t-interval is over the blocks' least-over-least ratios
  (_precision.ratio_figure with a block standing for a round). It shows how much each side
  moved while it ran, not how the machine moved between the floor's run and the benchmark's,
  so it can be narrower than the bench's;
* the conditions of each group (load before and after, steal, the shares of the machine's CPU
  time this process and every other process used) sum those of its tests;
* the verdict is _quiet.verdict of a report made of the groups, with the load sampled when the
  session started. The in-process figures have no conformance member: they time the reference,
  whose conformance is the suite's own run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from persyk_maintainers.bench._precision import ratio_figure
from persyk_maintainers.bench._quiet import Sample, between, combined, cpu_shares, verdict
from persyk_maintainers.bench._workloads import CPU_PRECISION, FSYNC_PRECISION

__all__ = ["BLOCKS", "Bench", "blocks", "group_report", "precision_target"]

BLOCKS = 5
# Groups whose floor syncs although its name does not say so.
_FSYNC_GROUPS = frozenset({"capture", "recovery", "recovery-tail-only"})


@dataclass(frozen=True, slots=True)
class Bench:
    """One finished benchmark: its group, name, per-round times in the order they ran, and the
    machine samples taken around its test."""

    group: str
    name: str
    data: tuple[float, ...]
    interval: tuple[Sample, Sample] | None = None

    @property
    def is_floor(self) -> bool:
        return "floor" in self.name


def blocks(data: Sequence[float], count: int = BLOCKS) -> list[list[float]]:
    """``data`` cut into ``count`` consecutive blocks of near-equal size (fewer with fewer
    values: one value a block)."""
    count = max(1, min(count, len(data)))
    size, extra = divmod(len(data), count)
    out, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        out.append(list(data[start:end]))
        start = end
    return out


def precision_target(group: str, floor_name: str) -> float:
    """The half-width a group's figures may have: the fsync target where its floor syncs."""
    return FSYNC_PRECISION if "fsync" in floor_name or group in _FSYNC_GROUPS else CPU_PRECISION


def _group(group: str, members: list[Bench]) -> dict[str, Any]:
    floor = next((b for b in members if b.is_floor), None)
    intervals = [b.interval for b in members if b.interval is not None]
    start, end = combined(intervals)
    results = []
    for bench in members:
        if bench.is_floor:
            continue
        entry: dict[str, Any] = {"implementation": bench.name, "outcome": "ok"}
        figure = (ratio_figure(blocks(floor.data), blocks(bench.data))
                  if floor is not None and floor.data and bench.data else None)
        if figure is not None:
            entry["ratio"] = figure.to_json()
        results.append(entry)
    return {"key": group,
            "precisionTarget": precision_target(group, floor.name) if floor else None,
            "floor": floor.name if floor else None,
            "conditions": {**between(start, end), **cpu_shares(start, end)},
            "results": results}


def group_report(benches: Sequence[Bench], load_before: float | None,
                 cores: int) -> dict[str, Any]:
    """The groups as a bench report's workloads, and its ``quiet`` verdict. A group without a
    floor, or a benchmark without a figure, is a reason, as a failed cell is in the bench."""
    groups: dict[str, list[Bench]] = {}
    for bench in benches:
        groups.setdefault(bench.group, []).append(bench)
    workloads = [_group(group, members) for group, members in groups.items()
                 if any(not b.is_floor for b in members)]
    report: dict[str, Any] = {"machine": {"cores": cores}, "loadBeforeRun": load_before,
                              "workloads": workloads}
    report["quiet"] = verdict(report)
    return report
