"""Runs too short for the clock (bench/_clock.py): a workload whose single timed run is under
100x the clock's resolution gets no ratio; the reason names the workload and the run."""

from __future__ import annotations

import functools
import itertools
from types import SimpleNamespace
from typing import Any

import pytest
from persyk_conformance.cli._commands import REFERENCE_ADAPTER
from persyk_maintainers.bench import _run
from persyk_maintainers.bench._clock import clock_resolution, refuse_short_runs
from persyk_maintainers.bench._quiet import verdict
from persyk_maintainers.bench._report import render_markdown, report_problems
from persyk_maintainers.bench._run import BenchConfig, run_bench


def _info(resolution: float) -> Any:
    return lambda name: SimpleNamespace(resolution=resolution)


def _reads(step: float) -> Any:
    counter = itertools.count()
    return lambda: next(counter) * step


def test_the_resolution_is_the_larger_of_the_reported_and_the_measured_step() -> None:
    coarse = clock_resolution(_info(1e-3), _reads(1e-6))
    assert coarse["resolution"] == 1e-3 and coarse["minimumRunSeconds"] == pytest.approx(0.1)
    fine = clock_resolution(_info(1e-9), _reads(5e-8))
    assert fine["measuredResolution"] == pytest.approx(5e-8)
    assert fine["minimumRunSeconds"] == pytest.approx(5e-6)


def _workload(floor: float, impl: float, units: int = 1) -> dict[str, Any]:
    return {"key": "retry-100", "unitsPerRepetition": units,
            "floor": {"seconds": [floor, floor * 2]},
            "results": [{"implementation": "impl", "outcome": "ok", "seconds": [impl],
                         "extra": {"requestsPerUnit": [1.0]}, "ratio": {"least": impl / floor}}]}


def test_a_floor_run_under_a_hundred_ticks_is_refused_naming_workload_and_run() -> None:
    clock = clock_resolution(_info(1e-6), _reads(1e-6))  # 100 µs at least
    short = _workload(floor=12e-6, impl=150e-6, units=5)  # the floor timed 60 µs at once
    refuse_short_runs([short], clock)
    (result,) = short["results"]
    assert "ratio" not in result
    assert result["refused"].startswith("retry-100: the floor's least single timed run, 60 µs,")
    assert "100x the clock's resolution (1 µs)" in result["refused"]


def test_runs_long_enough_for_the_clock_keep_their_ratio() -> None:
    clock = clock_resolution(_info(1e-6), _reads(1e-6))
    long_enough = _workload(floor=12e-6, impl=150e-6, units=10)  # 120 µs at once
    refuse_short_runs([long_enough], clock)
    assert "ratio" in long_enough["results"][0] and "refused" not in long_enough["results"][0]


def test_a_stubbed_coarse_clock_refuses_the_bench_figure_in_every_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A clock that ticks once a second: no run of a tiny validation is 100 s long.
    monkeypatch.setattr(_run, "clock_resolution",
                        functools.partial(clock_resolution, _info(1.0)))
    report = run_bench(BenchConfig(impls=(REFERENCE_ADAPTER,), scale=0.001, rounds=2, pairs=1,
                                   only=("validate-short",), conformance=False))
    assert report_problems(report) == []
    (result,) = report["workloads"][0]["results"]
    assert "ratio" not in result and result["refused"].startswith("validate-short: ")
    assert any("refused, validate-short: " in reason for reason in report["quiet"]["reasons"])
    assert verdict(report)["publishable"] is False
    markdown = render_markdown(report)
    assert "**refused**: validate-short: " in markdown
