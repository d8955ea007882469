"""``bench --impl A --impl B`` judges B against A in the same run (bench/_precision.against): B's
runs over A's from the same pairs, the interval between rounds, and the verdict by the rule of
``bench compare`` (the interval excludes no change and the change exceeds max(5 %, twice the
spread)). The planted slowdowns are synthetic rounds: no test asserts a time."""

from __future__ import annotations

import random

import pytest
from persyk_conformance.cli._commands import REFERENCE_ADAPTER
from persyk_maintainers.bench._precision import against
from persyk_maintainers.bench._report import render_markdown, report_problems
from persyk_maintainers.bench._run import BenchConfig, run_bench


def _rounds(seed: int, factor: float, noise: float = 0.01) -> tuple[list[list[float]],
                                                                        list[list[float]]]:
    """Five rounds of twenty pairs: each round's machine at its own level (5 %), the other
    implementation ``factor`` times the first, each run within ``noise``."""
    rng = random.Random(seed)
    first, other = [], []
    for _ in range(5):
        level = 1 + rng.uniform(-0.05, 0.05)
        first.append([level * (1 + rng.uniform(0, noise)) for _ in range(20)])
        other.append([level * factor * (1 + rng.uniform(0, noise)) for _ in range(20)])
    return first, other


@pytest.mark.parametrize(("factor", "verdict"), [(1.2, "slower"), (1 / 1.2, "faster"),
                                                 (1.0, "indistinguishable"),
                                                 (1.03, "indistinguishable")],
                         ids=["planted-20-percent-slower", "20-percent-faster", "identical",
                              "3-percent-under-the-bar"])
def test_the_second_implementation_is_judged_against_the_first(factor: float,
                                                               verdict: str) -> None:
    judged = against(*_rounds(7, factor))
    assert judged is not None and judged["verdict"] == verdict, judged
    assert judged["least"] == pytest.approx(factor, rel=0.03)
    assert judged["low"] < factor < judged["high"] or factor == 1.0


def test_a_spread_between_rounds_raises_the_bar_of_a_slowdown() -> None:
    # Rounds that disagree by ~17 %: a 20 % slowdown is within twice the spread (a bar of 33 %).
    first, other = _rounds(3, 1.2)
    for number, factor in enumerate((1.0, 1.25, 0.85, 1.15, 0.95)):
        other[number] = [x * factor for x in other[number]]
    judged = against(first, other)
    assert judged is not None and judged["verdict"] == "indistinguishable", judged


def test_two_implementations_in_one_run_give_the_second_against_the_first() -> None:
    report = run_bench(BenchConfig(impls=(REFERENCE_ADAPTER, REFERENCE_ADAPTER), scale=0.001,
                                   rounds=2, pairs=2, only=("validate-short",),
                                   conformance=False))
    assert report_problems(report) == []
    first, second = report["workloads"][0]["results"]
    assert "againstFirst" not in first
    judged = second["againstFirst"]
    assert judged["baseline"] == first["implementation"]
    assert judged["rounds"] == 2 and judged["pairs"] == 2
    assert judged["verdict"] in {"slower", "faster", "indistinguishable"}
    assert f"Against {first['implementation']}, in the same run" in render_markdown(report)
