"""The pytest-benchmark suites' output (benchmarks/conftest.py, benchmarks/_verdict.py) carries
the bench's figure, conditions and verdict: least over least with an interval, each group's
load, steal and others' CPU time, and "not publishable" with every reason."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from _paths import CHECKOUT
from persyk_maintainers.bench._quiet import Sample


def _verdict_module() -> ModuleType:
    # benchmarks/ is not on the tests' import path; it is loaded from its file.
    spec = importlib.util.spec_from_file_location("benchmarks_verdict",
                                                  CHECKOUT / "benchmarks" / "_verdict.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


V = _verdict_module()
QUIET = (Sample(0.1, 0, 0, 0, 0), Sample(0.2, 0, 1000, 500, 495))
BUSY = (Sample(0.1, 0, 0, 0, 0), Sample(1.9, 0, 1000, 990, 495))  # others: 49.5 %


def test_rounds_are_cut_into_consecutive_blocks_of_near_equal_size() -> None:
    assert V.blocks([1, 2, 3, 4, 5, 6, 7]) == [[1, 2], [3, 4], [5], [6], [7]]
    assert V.blocks([1.0, 2.0, 3.0]) == [[1.0], [2.0], [3.0]]


def test_a_group_whose_floor_syncs_gets_the_fsync_target() -> None:
    assert V.precision_target("append-single", "test_single_append_floor_bare_write_fsync") == 0.3
    assert V.precision_target("recovery", "test_recovery_floor_preserve_and_cut") == 0.3
    assert V.precision_target("validate", "test_floor_orjson_parse_every_line") == 0.1


def _benches(interval: tuple[Sample, Sample], spread: float = 0.01) -> list[object]:
    floor = tuple(1.0 + spread * (i % 2) for i in range(10))
    return [V.Bench("validate", "test_floor_parse", floor, interval),
            V.Bench("validate", "test_validate", tuple(2 * x for x in floor), interval)]


def test_a_quiet_precise_run_is_publishable_with_least_over_least() -> None:
    report = V.group_report(_benches(QUIET), 0.1, 2)
    assert report["quiet"]["publishable"], report["quiet"]["reasons"]
    (workload,) = report["workloads"]
    (result,) = workload["results"]
    assert result["ratio"]["least"] == pytest.approx(2.0)
    assert result["ratio"]["rounds"] == 5
    assert workload["conditions"]["foreignCpuFraction"] == pytest.approx(0.005)


def test_load_others_cpu_time_and_a_wide_interval_each_refuse_naming_the_group() -> None:
    assert any("load average 1.50" in r for r in V.group_report(_benches(QUIET), 1.5, 2)
               ["quiet"]["reasons"])
    busy = V.group_report(_benches(BUSY), 0.1, 2)["quiet"]["reasons"]
    assert busy == ["validate: other processes used 50% of the machine's CPU time (limit 10%, "
                    "and 0.05 s for the ticks' resolution)"]
    rounds = (1.0, 1.0, 1.0, 1.0, 1.0)
    wide = [V.Bench("validate", "test_floor_parse", rounds, QUIET),
            V.Bench("validate", "test_validate", (2.0, 3.0, 2.0, 3.0, 2.0), QUIET)]
    (reason,) = V.group_report(wide, 0.1, 2)["quiet"]["reasons"]
    assert reason.startswith("validate, test_validate: 2.00x, 95 % interval")


@pytest.mark.slow
def test_a_benchmark_run_writes_the_verdict_and_conditions_to_json_and_markdown(
    tmp_path: Path,
) -> None:
    # Without the xdist worker's variables, under which pytest-benchmark disables itself.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env |= {"PERSYK_BENCH_VALIDATE_MB": "1", "PERSYK_BENCH_DIR": str(tmp_path),
            "PERSYK_BENCH_REPORT": str(tmp_path / "report.md")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "benchmarks/bench_read.py", "-k",
         "floor_orjson_parse_every_line or validate_session", "--benchmark-only", "-q",
         "-p", "no:xdist", f"--benchmark-json={tmp_path / 'out.json'}"],
        cwd=CHECKOUT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = json.loads((tmp_path / "out.json").read_text("utf-8"))
    assert {b["name"] for b in out["benchmarks"]} == {"test_floor_orjson_parse_every_line",
                                                      "test_validate_session"}
    for bench in out["benchmarks"]:
        assert set(bench["extra_info"]["conditions"]) >= {"loadBefore", "stealFraction",
                                                          "foreignCpuFraction"}
    persyk = out["persyk"]
    assert set(persyk["quiet"]) >= {"publishable", "reasons"}
    (group,) = persyk["workloads"]
    assert group["key"] == "validate" and group["results"][0]["ratio"]["rounds"] == 3
    markdown = (tmp_path / "report.md").read_text("utf-8")
    assert "least over the floor's least" in markdown and "| validate | " in markdown
    assert ("Publishable:" in markdown) != ("NOT PUBLISHABLE" in markdown)
    assert "before the run" in markdown and "| group | load before |" in markdown
