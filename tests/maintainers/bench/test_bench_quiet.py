"""A bench report says whether its figures are a result: each figure's interval against its
precision target, a failed cell, the load average, the CPU steal; a run that is not is marked
NOT PUBLISHABLE at the top of every format, and ``bench --publishable`` exits 4 for it (a ratio
taken at load 7-11 was published)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT
from persyk_conformance.cli import main
from persyk_maintainers.bench import _run
from persyk_maintainers.bench._quiet import Sample, between, sample, verdict
from persyk_maintainers.bench._report import compare, render_markdown, report_problems

ROOT = CHECKOUT
BASELINE = ROOT / "tests" / "data" / "bench-report.json"  # a whole bench of 2026-12-02
# No conformance run: these tests judge the machine's conditions alone.
TINY = ["--scale", "0.005", "--rounds", "2", "--pairs", "1", "-q", "--only", "retry-100",
        "--no-conformance"]
NOISE = ROOT / "tests" / "data" / "bench-noise" / "identical-a.json"  # bench format 2


def _result(outcome: str = "ok", half: float | None = 0.05,
            rounds: int = 3) -> dict[str, Any]:
    ratio = {"least": 2.0, "pairsMedian": 2.1, "perRound": [2.0] * rounds,
             "low": None if half is None else 2.0 / (1 + half),
             "high": None if half is None else 2.0 * (1 + half),
             "halfWidth": half, "spread": None if half is None else half / 2,
             "rounds": rounds, "pairs": 40}
    return {"implementation": "persyk-session 0.1.0", "outcome": outcome,
            "detail": "" if outcome == "ok" else "it broke",
            **({"ratio": ratio} if outcome == "ok" else {})}


def _report(*, before_run: float | None = 0.3, during: float = 0.3, cores: int = 2,
            floor: tuple[float, ...] = (1.0, 1.1), steal: float | None = 0.0,
            foreign: float | None = 0.01, window: float | None = 20.0,
            result: dict[str, Any] | None = None, target: float = 0.1,
            key: str = "validate-short") -> dict[str, Any]:
    return {
        "loadBeforeRun": before_run,
        "machine": {"cores": cores, "loadAverage": [during, during, during]},
        "aborted": None,
        "workloads": [{
            "key": key, "precisionTarget": target,
            "results": [result or _result()],
            "floor": {"seconds": list(floor), "min": min(floor), "max": max(floor)},
            "conditions": {"loadBefore": during, "loadAfter": during, "stealFraction": steal,
                           "timedCpuSeconds": window, "foreignCpuFraction": foreign,
                           "ownCpuFraction": 0.5},
        }],
    }


def test_a_quiet_run_is_publishable() -> None:
    result = verdict(_report())
    assert result["publishable"] and result["reasons"] == []
    assert result["loadLimit"] == 1.0  # half of two cores
    assert result["foreignCpuLimit"] == 0.1


def test_a_load_above_half_the_cores_before_the_run_is_not_publishable() -> None:
    result = verdict(_report(before_run=1.5))
    assert not result["publishable"]
    assert result["reasons"] == ["load average 1.50 on 2 cores before the run "
                                 "(limit 1: half the cores)"]
    assert verdict(_report(before_run=1.5, cores=4))["publishable"]


def test_the_bench_s_own_load_during_the_run_does_not_decide() -> None:
    # A bench alone on 2 cores reaches load 1.1-1.4 with its own processes (2026-12-03 evening):
    # recorded, but only the load before the run and the other processes' CPU time judge.
    assert verdict(_report(during=1.41))["publishable"]
    report = _report()
    report["workloads"][0]["conditions"]["loadAfter"] = 7.0
    assert verdict(report)["publishable"]


def test_a_run_without_a_load_before_it_is_not_publishable() -> None:
    assert verdict(_report(before_run=None))["reasons"] == [
        "no load average could be read before the run"]


def test_other_processes_above_ten_percent_of_the_cpu_are_not_publishable() -> None:
    assert verdict(_report(foreign=0.25))["reasons"] == [
        "validate-short: other processes used 25% of the machine's CPU time (limit 10%, and "
        "0.05 s for the ticks' resolution)"]
    assert verdict(_report(foreign=0.1))["publishable"]
    assert not verdict(_report(foreign=0.11, window=None))["publishable"]


def test_a_short_timed_interval_allows_the_counters_resolution_beyond_the_limit() -> None:
    # 0.2 s of machine CPU time (0.1 s wall on 2 cores) is 20 ticks: a tick or two of anyone
    # is 5-10%, the two sources round apart by a few ticks. 0.05 s more is allowed: 35% here.
    assert verdict(_report(foreign=0.3, window=0.2))["publishable"]
    assert not verdict(_report(foreign=0.5, window=0.2))["publishable"]  # a whole core
    assert not verdict(_report(foreign=0.12, window=50.0))["publishable"]


def test_other_processes_cpu_that_could_not_be_measured_is_not_publishable() -> None:
    # Without /proc nothing shows that no one competed: not invented as zero.
    assert verdict(_report(foreign=None))["reasons"] == [
        "the CPU time of other processes could not be measured (no /proc) for "
        "validate-short: nothing shows that none competed"]


def test_a_figure_wider_than_its_target_is_not_publishable_and_the_reason_names_it() -> None:
    result = verdict(_report(result=_result(half=0.12)))
    assert result["reasons"] == ["validate-short, persyk-session 0.1.0: 2.00x, 95 % interval "
                                 "1.79-2.24 is ±12% (target ±10%)"]
    assert verdict(_report(result=_result(half=0.09)))["publishable"]


def test_an_fsync_workload_is_held_to_thirty_percent() -> None:
    assert verdict(_report(key="append-single", target=0.3,
                           result=_result(half=0.25)))["publishable"]
    assert verdict(_report(key="append-single", target=0.3,
                           result=_result(half=0.31)))["reasons"] == [
        "append-single, persyk-session 0.1.0: 2.00x, 95 % interval 1.53-2.62 is ±31% "
        "(target ±30%)"]


def test_a_figure_of_one_round_has_no_interval_and_is_not_publishable() -> None:
    assert verdict(_report(result=_result(half=None, rounds=1)))["reasons"] == [
        "validate-short, persyk-session 0.1.0: 2.00x from 1 round, no interval (at least 2 "
        "rounds)"]


@pytest.mark.parametrize("outcome", ["invalid", "timeout", "error"])
def test_a_cell_that_failed_once_its_timed_runs_began_is_not_publishable(outcome: str) -> None:
    broke = {**_result(outcome), "seconds": [0.5, 0.6]}
    result = verdict(_report(result=broke))
    assert result["reasons"] == [f"validate-short, persyk-session 0.1.0: {outcome}, no figure"]
    assert result["byWorkload"] == {"validate-short": False}


@pytest.mark.parametrize("outcome", ["invalid", "timeout", "error"])
def test_a_cell_that_failed_before_any_timed_run_is_a_finding_not_a_refusal(
    outcome: str,
) -> None:
    # pi's validator skips a line that is not JSON: its probe is invalid, and no figure stands.
    result = verdict(_report(result={**_result(outcome), "seconds": []}))
    assert result["publishable"] and result["byWorkload"] == {"validate-short": True}


def test_a_cell_whose_adapter_did_not_start_is_not_publishable() -> None:
    report = {**_report(result={**_result("error"), "seconds": []}),
              "implementations": [{"label": "persyk-session 0.1.0", "error": "not found"}]}
    assert verdict(report)["reasons"] == [
        "validate-short, persyk-session 0.1.0: error, no figure"]


def test_the_markdown_names_the_workloads_publishable_in_a_run_that_is_not() -> None:
    report = copy.deepcopy(json.loads(NOISE.read_text("utf-8")))
    keys = [w["key"] for w in report["workloads"]]
    report["quiet"] = {**report["quiet"], "publishable": False, "reasons": ["x: too wide"],
                       "byWorkload": {key: key == keys[0] for key in keys}}
    assert f"Publishable nonetheless, each with every figure of its row: {keys[0]}." in (
        render_markdown(report))


def test_each_workload_is_judged_on_its_own_and_a_run_wide_reason_refuses_all() -> None:
    report = _report()
    noisy = {**report["workloads"][0], "key": "append-single", "precisionTarget": 0.3,
             "results": [_result(half=0.5)]}
    report["workloads"].append(noisy)
    assert verdict(report)["byWorkload"] == {"validate-short": True, "append-single": False}
    assert verdict({**report, "loadBeforeRun": 1.5})["byWorkload"] == {
        "validate-short": False, "append-single": False}


def test_an_unsupported_cell_promised_nothing_and_does_not_refuse() -> None:
    assert verdict(_report(result=_result("unsupported")))["publishable"]


def test_the_floor_s_spread_no_longer_decides() -> None:
    # A µs floor shifting level between runs (an fsync of 148-222 µs) with a precise figure.
    assert verdict(_report(floor=(1.0, 1.61)))["publishable"]


def test_cpu_steal_above_five_percent_is_not_publishable() -> None:
    assert verdict(_report(steal=0.2))["reasons"] == [
        "validate-short: CPU steal 20% (limit 5%)"]
    assert verdict(_report(steal=None))["publishable"]  # unknown steal is not invented


def test_a_run_that_stopped_early_is_not_publishable() -> None:
    report = _report()
    report["aborted"] = "interrupted during round 2 of 5"
    assert verdict(report)["reasons"] == ["the run stopped early: interrupted during round 2 of 5"]


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
    assert "load average 9.00 on" in captured.err and "before the run" in captured.err
    # Without --publishable the same run is a usable (if marked) report: exit 0.
    assert main(["bench", *TINY]) == 0


def test_a_publishable_report_prints_no_warning_banner_and_says_it_is() -> None:
    report = copy.deepcopy(json.loads(NOISE.read_text("utf-8")))
    report["quiet"] = {**report["quiet"], "publishable": True, "reasons": []}
    markdown = render_markdown(report)
    assert "NOT PUBLISHABLE" not in markdown
    assert markdown.splitlines()[2].startswith("**Publishable**: every figure's 95 % interval")
    assert "(rounds' mean " in markdown and "4 rounds x 6 pairs)" in markdown
    assert report_problems(report) == []


def test_a_report_of_bench_format_1_is_not_publishable_whatever_its_verdict_said() -> None:
    report = copy.deepcopy(json.loads(BASELINE.read_text("utf-8")))
    report["quiet"] = {"publishable": True, "reasons": []}
    assert render_markdown(report).splitlines()[2].startswith("**NOT PUBLISHABLE")
    assert compare(report, report).declined


def test_the_verdict_judges_the_load_sampled_before_the_run_not_during_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    """The first sample (before any adapter starts) is the run's load; every later one sees the
    bench's own processes and is recorded only. Idle counters: no foreign CPU time."""
    samples = iter([Sample(0.2, 0, 1000, 0, 0)] + [Sample(5.0, 0, 1000 * n, 0, 0)
                                                   for n in range(2, 100)])
    monkeypatch.setattr(_run, "sample", lambda: next(samples))
    out = tmp_path / "b.json"
    main(["bench", *TINY, "--report", str(out)])
    report = json.loads(out.read_text("utf-8"))
    assert report_problems(report) == []
    assert report["loadBeforeRun"] == 0.2
    conditions = report["workloads"][0]["conditions"]
    assert conditions["loadBefore"] == 5.0 and conditions["foreignCpuFraction"] == 0.0
    assert not any("load" in reason or "other processes" in reason
                   for reason in report["quiet"]["reasons"])
    markdown = render_markdown(report)
    assert "load average 0.2 before the run (the verdict's)" in markdown
    # Two rounds, each timed between two consecutive samples 1,000 ticks apart: 20 s in all.
    assert "| retry-100 | 5.0 | 5.0 | 0.0% | 20 s | 0.0% | 0.0% |" in markdown


def test_a_run_that_was_loaded_before_it_started_is_not_publishable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    samples = iter([Sample(3.0, 0, 1000, 0, 0)] + [Sample(0.1, 0, 1000 * n, 0, 0)
                                                   for n in range(2, 100)])
    monkeypatch.setattr(_run, "sample", lambda: next(samples))
    out = tmp_path / "b.json"
    assert main(["bench", *TINY, "--publishable", "--report", str(out)]) == 4
    report = json.loads(out.read_text("utf-8"))
    assert report["quiet"]["reasons"][0].startswith("load average 3.00 on ")


def test_an_adapter_s_name_in_a_reason_reaches_markdown_and_the_terminal_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # The hello's name is the adapter's to choose: a control sequence or a link must not reach
    # the reader's terminal or the rendered Markdown through the reasons or compare's lines.
    evil = "x\x1b[2J[click](http://e.example)|"
    report = copy.deepcopy(json.loads(NOISE.read_text("utf-8")))
    (impl,) = report["implementations"]
    old, impl["label"], impl["implementation"]["name"] = impl["label"], evil, evil
    for workload in report["workloads"]:
        for result in workload["results"]:
            result["implementation"] = evil if result["implementation"] == old else old
    report["quiet"] = verdict(report)
    assert any(evil in reason for reason in report["quiet"]["reasons"])
    markdown = render_markdown(report)
    assert "\x1b" not in markdown and "[click](" not in markdown
    broken = copy.deepcopy(report)
    broken["workloads"][0]["results"][0].update(outcome="invalid", detail="wrong")
    (tmp_path / "a.json").write_text(json.dumps(report), "utf-8")
    (tmp_path / "b.json").write_text(json.dumps(broken), "utf-8")
    assert main(["bench", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "REGRESSION validate-short, x⟨U+001B⟩[2J" in out
