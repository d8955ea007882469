"""The clock the bench times with, and the runs too short for it to time.

Rule: a single timed run shorter than ``RESOLUTION_MULTIPLE`` times the clock's resolution is
not a measurement: one tick either way moves it by more than 1 %. A workload with such a run is
*refused*: its ratio is left out of the report (never quoted), the result carries the reason,
naming the workload and the figure, and the run is not publishable. The resolution is the
larger of what ``time.get_clock_info('perf_counter')`` reports (1 ns on Linux, where the real
step is the cost of reading the clock) and the least non-zero step between successive reads
measured now.

What a "single timed run" is differs by side: the floor times a whole repetition with one pair
of clock reads (its seconds per unit times the units of a repetition); an implementation's
repetition is the sum of its requests' round trips, each timed on its own (its seconds per unit
over the requests per unit).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["RESOLUTION_MULTIPLE", "clock_resolution", "refuse_short_runs"]

RESOLUTION_MULTIPLE = 100
_READS = 2000


def clock_resolution(
    info: Callable[[str], Any] | None = None,
    read: Callable[[], float] = time.perf_counter,
) -> dict[str, Any]:
    """The report's ``clock`` member: the resolution reported and measured, the larger, and
    the least single timed run the bench quotes (``minimumRunSeconds``)."""
    reported = float((info or time.get_clock_info)("perf_counter").resolution)
    steps = []
    last = read()
    for _ in range(_READS):
        now = read()
        if now > last:
            steps.append(now - last)
        last = now
    measured = min(steps) if steps else None
    resolution = max(reported, measured or 0.0)
    return {"name": "perf_counter", "reportedResolution": reported,
            "measuredResolution": measured, "resolution": resolution,
            "multiple": RESOLUTION_MULTIPLE, "minimumRunSeconds": resolution * RESOLUTION_MULTIPLE}


def _human(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def _least_single_runs(workload: dict[str, Any], result: dict[str, Any]) -> dict[str, float]:
    units = workload.get("unitsPerRepetition", 1)
    runs = {"the floor's": min(workload["floor"]["seconds"]) * units}
    requests = (result.get("extra") or {}).get("requestsPerUnit")
    if result.get("seconds"):
        per_request = statistics.median(requests) if requests else 1.0
        runs[f"{result['implementation']}'s"] = min(result["seconds"]) / max(per_request, 1e-9)
    return runs


def refuse_short_runs(workloads: list[dict[str, Any]], clock: dict[str, Any]) -> None:
    """Take the ratio out of every ok result whose workload had a single timed run (the floor's
    or its own) shorter than the clock can time, and put the reason in ``refused``."""
    minimum = clock["minimumRunSeconds"]
    for workload in workloads:
        for result in workload["results"]:
            if result["outcome"] != "ok":
                continue
            short = [(who, run) for who, run in _least_single_runs(workload, result).items()
                     if run < minimum]
            if not short:
                continue
            who, run = min(short, key=lambda item: item[1])
            result.pop("ratio", None)
            result["refused"] = (
                f"{workload['key']}: {who} least single timed run, {_human(run)}, is under "
                f"{clock['multiple']}x the clock's resolution ({_human(clock['resolution'])}): "
                f"{_human(minimum)}; no ratio is quoted")
