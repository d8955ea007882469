"""A bench report says whether its figures are a result: the load average, the CPU steal and the
floor's spread are recorded, a loaded run is marked NOT PUBLISHABLE at the top of every format,
and ``bench --publishable`` exits 4 for it (issue 27: a ratio taken at load 7-11 was published)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.bench import _run
from persyk_conformance.bench._quiet import Sample, between, sample, verdict
from persyk_conformance.bench._report import compare, render_markdown, report_problems
from persyk_conformance.cli import main

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "docs" / "results" / "2026-12-02-bench.json"
TINY = ["--scale", "0.005", "--repeat", "2", "-q", "--only", "retry-100"]


def _report(*, load: float = 0.3, cores: int = 2, floor: tuple[float, ...] = (1.0, 1.1),
            steal: float | None = 0.0) -> dict[str, Any]:
    return {
        "machine": {"cores": cores, "loadAverage": [load, load, load]},
        "aborted": None,
        "workloads": [{
            "key": "validate-short",
            "floor": {"seconds": list(floor), "min": min(floor), "max": max(floor)},
            "conditions": {"loadBefore": load, "loadAfter": load, "stealFraction": steal},
        }],
    }


def test_a_quiet_run_is_publishable() -> None:
    result = verdict(_report())
    assert result["publishable"] and result["reasons"] == []
    assert result["loadLimit"] == 1.0  # half of two cores


def test_a_load_above_half_the_cores_is_not_publishable() -> None:
    result = verdict(_report(load=1.5))
    assert not result["publishable"]
    assert result["reasons"] == ["load average up to 1.50 on 2 cores (limit 1: half the cores)"]
    assert verdict(_report(load=1.5, cores=4))["publishable"]


def test_a_load_seen_only_after_one_workload_still_counts() -> None:
    report = _report()
    report["workloads"][0]["conditions"]["loadAfter"] = 7.0
    assert not verdict(report)["publishable"]


def test_a_floor_that_spreads_more_than_thirty_percent_is_not_publishable() -> None:
    result = verdict(_report(floor=(1.0, 1.31)))
    assert result["reasons"] == ["validate-short: the floor's repetitions spread 1.31x "
                                 "(limit 1.3x)"]
    assert verdict(_report(floor=(1.0, 1.29)))["publishable"]


def test_cpu_steal_above_five_percent_is_not_publishable() -> None:
    assert verdict(_report(steal=0.2))["reasons"] == [
        "validate-short: CPU steal 20% (limit 5%)"]
    assert verdict(_report(steal=None))["publishable"]  # unknown steal is not invented


def test_a_run_that_stopped_early_is_not_publishable() -> None:
    report = _report()
    report["aborted"] = "interrupted during workload 1 of 1"
    assert not verdict(report)["publishable"]


def test_the_steal_fraction_is_read_from_proc_stat_deltas(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 100 700 0 0 0 100 0 0\ncpu0 1 2 3\n", "ascii")
    first = sample(stat)
    assert (first.steal_ticks, first.total_ticks) == (100, 1000)
    stat.write_text("cpu  150 0 150 1350 0 0 0 350 0 0\n", "ascii")
    assert between(first, sample(stat))["stealFraction"] == 0.25
    stat.write_text("intr 5\n", "ascii")  # no cpu line: no steal figure, and no exception
    assert sample(stat).total_ticks == 0
    assert between(Sample(0.1), Sample(0.2))["stealFraction"] is None


def test_a_report_without_the_verdict_counts_as_not_publishable() -> None:
    report = json.loads(BASELINE.read_text("utf-8"))
    assert "quiet" not in report
    markdown = render_markdown(report)
    assert markdown.splitlines()[2].startswith("**NOT PUBLISHABLE")
    assert any("not publishable" in line for line in compare(report, report, 10.0).lines)


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine as the bench sees it: load 9 on every sample."""
    monkeypatch.setattr(_run, "sample", lambda: Sample(9.0))
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))  # machine() in the report


def test_publishable_exits_4_on_a_loaded_machine_and_the_reports_say_why(
    loaded: None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "b.json"
    status = main(["bench", *TINY, "--publishable", "--report", str(out)])
    captured = capsys.readouterr()
    assert status == 4
    report = json.loads(out.read_text("utf-8"))
    assert report_problems(report) == []
    assert not report["quiet"]["publishable"]
    assert report["workloads"][0]["conditions"]["loadBefore"] == 9.0
    assert captured.out.splitlines()[2].startswith("**NOT PUBLISHABLE")
    assert "load average up to 9.00" in captured.err
    # Without --publishable the same run is a usable (if marked) report: exit 0.
    assert main(["bench", *TINY]) == 0


def test_a_publishable_report_prints_no_warning_banner() -> None:
    report = copy.deepcopy(json.loads(BASELINE
                                      .read_text("utf-8")))
    report["quiet"] = {"publishable": True, "reasons": [], "loadLimit": 1.0,
                       "stealLimit": 0.05, "spreadLimit": 1.3}
    assert "NOT PUBLISHABLE" not in render_markdown(report)
    assert report_problems(report) == []
