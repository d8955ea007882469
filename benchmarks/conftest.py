"""Report every benchmark as a ratio against the floor measured in the same run, with the
conditions it ran in and the bench's verdict (benchmarks/_verdict.py).

Each benchmark group holds one floor (a test whose name contains ``floor``): the least work
any implementation must do for the same input (parse the same bytes with orjson, read the same
bytes, a bare write+fsync). The summary prints each other benchmark's least time over its
floor's least time with a 95 % interval, the median ratio beside it, each group's conditions
(load, steal, other processes' CPU time) and whether the run is publishable, by the rules of
``persyk-conformance bench``. With PERSYK_BENCH_REPORT=FILE the same is written as Markdown;
``--benchmark-json`` carries it as the member ``persyk`` and each benchmark's ``conditions``.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from persyk_maintainers.bench._quiet import Sample, between, cpu_shares, sample

from benchmarks._verdict import Bench, group_report

_LOAD = pytest.StashKey[float | None]()
_INTERVALS = pytest.StashKey[dict[str, tuple[Sample, Sample]]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    # Before any benchmark's fixtures run: the load others left is the verdict's (bench/_quiet).
    session.config.stash[_LOAD] = sample().load1
    session.config.stash[_INTERVALS] = {}


@pytest.fixture(autouse=True)
def _conditions(request: pytest.FixtureRequest) -> Iterator[None]:
    """The machine around each benchmark's test: load, steal, others' CPU time."""
    if "benchmark" not in request.fixturenames:
        yield
        return
    benchmark = request.getfixturevalue("benchmark")  # not to be had after the test
    start = sample()
    yield
    end = sample()
    benchmark.extra_info["conditions"] = {**between(start, end), **cpu_shares(start, end)}
    request.config.stash[_INTERVALS][benchmark.fullname] = (start, end)


def _benches(config: pytest.Config) -> list[tuple[Any, Bench]]:
    session = getattr(config, "_benchmarksession", None)
    if session is None:
        return []
    intervals = config.stash.get(_INTERVALS, {})
    return [(b, Bench(b.group or "", b.name, tuple(b.stats.data), intervals.get(b.fullname)))
            for b in session.benchmarks if b.stats is not None]


def _report(config: pytest.Config, benches: list[tuple[Any, Bench]]) -> dict[str, Any]:
    return group_report([bench for _, bench in benches], config.stash.get(_LOAD, None),
                        os.cpu_count() or 1)


def pytest_benchmark_update_json(config: pytest.Config, benchmarks: Any,
                                 output_json: dict[str, Any]) -> None:
    output_json["persyk"] = _report(config, _benches(config))


def _machine() -> str:
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def _figure(result: dict[str, Any] | None) -> str:
    ratio = (result or {}).get("ratio")
    if not ratio:
        return "-"
    interval = (f"95 % {ratio['low']:.2f}-{ratio['high']:.2f}" if ratio["low"] is not None
                else "no interval")
    return f"{ratio['least']:.2f}x ({interval}; {ratio['rounds']} blocks)"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _lines(config: pytest.Config, benches: list[tuple[Any, Bench]]) -> list[str]:
    report = _report(config, benches)
    quiet = report["quiet"]
    by_group = {w["key"]: w for w in report["workloads"]}
    load = report["loadBeforeRun"]
    lines = [f"Benchmarks, {datetime.date.today().isoformat()}, {_machine()}; load average "
             f"{'unknown' if load is None else load} before the run", ""]
    if quiet["publishable"]:
        lines += ["Publishable: every figure within its target, and the machine was quiet.", ""]
    else:
        lines += ["**NOT PUBLISHABLE: these figures are not precise enough, or the machine was "
                  "not quiet.**", "", *(f"- {reason}" for reason in quiet["reasons"]), ""]
    lines += ["| group | benchmark | least (s) | median (s) | least over the floor's least | "
              "median ratio | extra |", "|---|---|---|---|---|---|---|"]
    floor_medians = {b.group: statistics.median(b.data) for _, b in benches
                     if b.is_floor and b.data}
    for raw, bench in benches:
        results = by_group.get(bench.group, {}).get("results", [])
        result = next((r for r in results if r["implementation"] == bench.name), None)
        median = statistics.median(bench.data) if bench.data else 0.0
        floor = floor_medians.get(bench.group)
        ratio = ("floor" if bench.is_floor else f"{median / floor:.2f}x" if floor and median
                 else "-")
        extra = ", ".join(f"{k}={v}" for k, v in sorted(raw.extra_info.items())
                          if k != "conditions")
        least = min(bench.data) if bench.data else 0.0
        lines.append(f"| {bench.group} | {bench.name} | {least:.6f} | {median:.6f} | "
                     f"{'floor' if bench.is_floor else _figure(result)} | {ratio} | {extra} |")
    lines += ["", "Conditions of each group over its tests: the 1-minute load before and after, "
              "CPU steal, and the shares of the machine's CPU time this process and every "
              "other process used.", "",
              "| group | load before | load after | steal | this process | others |",
              "|---|---|---|---|---|---|"]
    for workload in report["workloads"]:
        c = workload["conditions"]
        lines.append(f"| {workload['key']} | {c['loadBefore']} | {c['loadAfter']} | "
                     f"{_pct(c['stealFraction'])} | {_pct(c['ownCpuFraction'])} | "
                     f"{_pct(c['foreignCpuFraction'])} |")
    return lines


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    benches = _benches(config)
    if not benches:
        return
    lines = _lines(config, benches)
    terminalreporter.write_sep("=", "ratios against the floor of each group")
    for line in lines:
        terminalreporter.write_line(line)
    target = os.environ.get("PERSYK_BENCH_REPORT")
    if target:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        Path(target).write_text("\n".join(lines) + "\n", encoding="utf-8")
