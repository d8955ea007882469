"""The write workloads' figure against what any adapter pays (bench/_noop.py): the floor plus a
no-op replay of the same requests in the same pair, judged against the workload's target."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from fakes.casetree import FAKES
from persyk_conformance.cli._commands import REFERENCE_ADAPTER
from persyk_maintainers.bench._noop import round_trip_floor
from persyk_maintainers.bench._report import render_markdown, report_problems
from persyk_maintainers.bench._run import WORKLOADS, BenchConfig, run_bench

FLOOR = [[200e-6, 210e-6, 205e-6], [220e-6, 200e-6, 215e-6], [205e-6, 212e-6, 230e-6]]
NO_OP = [[100e-6, 105e-6, 110e-6], [104e-6, 100e-6, 101e-6], [103e-6, 100e-6, 120e-6]]


def _scaled(rounds: list[list[float]], factor: float) -> list[list[float]]:
    return [[x * factor for x in one] for one in rounds]


def test_the_floor_of_the_figure_is_each_pair_s_floor_run_plus_its_no_op_replay() -> None:
    combined = [[f + n for f, n in zip(a, b, strict=True)] for a, b in zip(FLOOR, NO_OP,
                                                                           strict=True)]
    impl = _scaled(combined, 1.2)
    figure = round_trip_floor(FLOOR, NO_OP, impl, 1.5)
    assert figure is not None
    assert figure["least"] == pytest.approx(1.2)
    assert figure["noOpSeconds"] == pytest.approx(100e-6)
    assert figure["verdict"] == "met" and figure["high"] <= 1.5


def test_a_figure_wholly_above_its_target_is_missed_and_one_across_it_undecided() -> None:
    combined = [[f + n for f, n in zip(a, b, strict=True)] for a, b in zip(FLOOR, NO_OP,
                                                                           strict=True)]
    missed = round_trip_floor(FLOOR, NO_OP, _scaled(combined, 2.0), 1.5)
    assert missed is not None and missed["verdict"] == "missed"
    # Rounds at 1.3x, 1.5x and 1.7x: the interval holds 1.5 on both sides.
    straddling = [[x * k for x in one] for one, k in zip(combined, (1.3, 1.5, 1.7),
                                                          strict=True)]
    undecided = round_trip_floor(FLOOR, NO_OP, straddling, 1.5)
    assert undecided is not None and undecided["verdict"] == "undecided"
    assert undecided["low"] < 1.5 < undecided["high"]


def test_with_one_round_the_headline_alone_decides() -> None:
    one = round_trip_floor(FLOOR[:1], NO_OP[:1], _scaled(FLOOR[:1], 1.2), 1.5)
    assert one is not None and one["low"] is None and one["verdict"] == "met"


def test_only_the_write_workloads_have_a_round_trip_target() -> None:
    targets = {kind.name: kind.round_trip_target for kind in WORKLOADS
               if kind.round_trip_target is not None}
    assert targets == {"append-single": 1.5, "append-batch": 3.0, "retry-100": 2.0,
                       "retry-20000": 2.0, "capture": 3.0}


def _append_run(*impls: tuple[str, ...], rounds: int = 2) -> dict[str, Any]:
    return run_bench(BenchConfig(impls=impls, scale=0.005, rounds=rounds, pairs=1, syscalls=0,
                                 only=("append-single",), conformance=False))


@pytest.mark.slow
def test_an_implementation_that_idles_before_each_append_misses_the_target() -> None:
    # Three rounds: with two, a t-interval has one degree of freedom (12.7 standard errors),
    # and one round slowed by a loaded machine leaves even 200 ms an append undecided.
    report = _append_run(REFERENCE_ADAPTER, (sys.executable, str(FAKES / "slow_append.py")),
                         rounds=3)
    assert report_problems(report) == []
    (workload,) = report["workloads"]
    reference, slow = (r["roundTripFloor"] for r in workload["results"])
    # No timing is asserted of the reference: only that its figure is made from the replay.
    assert reference["noOpSeconds"] > 0 and reference["verdict"] in {"met", "missed", "undecided"}
    assert reference["least"] < workload["results"][0]["ratio"]["least"]
    assert slow["verdict"] == "missed" and slow["low"] > 1.5
    assert "over the floor plus a no-op round trip (" in render_markdown(report)


@pytest.mark.slow
def test_an_adapter_that_does_work_for_the_no_op_gets_no_round_trip_figure() -> None:
    report = _append_run((sys.executable, str(FAKES / "noop_answers_result.py")))
    assert report_problems(report) == []
    (result,) = report["workloads"][0]["results"]
    assert result["outcome"] == "ok"  # its appends are still timed and judged
    assert result["roundTripFloor"] == {
        "unsupported": "because the adapter answered benchNoOp with a result, not unsupported"}
    assert "no-op round trip: because the adapter answered" in render_markdown(report)
