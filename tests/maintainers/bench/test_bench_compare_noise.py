"""``bench compare`` does not cry wolf (bench/_report.py): it calls a change a regression only when
the 95 % interval of the change excludes no change and the change exceeds max(5 %, twice the
workload's spread between rounds), and it declines to judge (exit 6) a report that is not
publishable.

``tests/data/bench-noise/identical-{a,b}.json``: two runs of the same code, one after the other,
at ``--scale 0.005 --rounds 4 --pairs 6`` of four workloads, on the 2-vCPU VM while other jobs
loaded it to 10 (the bench at that scale and load moved append-single from 5.09x to 1.02x: the
kind of pair the old rule called a regression of +144 %). The quiet pairs are synthetic: each
round's machine at its own level (5 %, which the ratio cancels) and each round's ratio 2 % apart
(a quiet VM gave 2-14 % from run to run)."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT
from persyk_conformance.cli import main
from persyk_maintainers.bench._precision import ratio_figure
from persyk_maintainers.bench._quiet import verdict
from persyk_maintainers.bench._report import compare, report_problems

NOISE = CHECKOUT / "tests" / "data" / "bench-noise"
PAIR = (NOISE / "identical-a.json", NOISE / "identical-b.json")
KEYS = ["validate-short", "context-branched", "append-single", "retry-100"]


def _load(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return report


def _rejudged(report: dict[str, Any]) -> dict[str, Any]:
    """Each figure recomputed from its rounds, and the verdict from the figures."""
    for workload in report["workloads"]:
        for result in workload["results"]:
            figure = ratio_figure(workload["floor"]["rounds"], result["rounds"])
            assert figure is not None
            result["ratio"] = figure.to_json()
            result["seconds"] = [x for r in result["rounds"] for x in r]
            result.update(min=min(result["seconds"]), max=max(result["seconds"]))
    report["quiet"] = verdict(report)
    return report


def _quiet(report: dict[str, Any], seed: int, slower: str | None = None) -> dict[str, Any]:
    """The recorded report's shape with times of a quiet machine: per round a level of the
    machine and a ratio drawn 2 % apart, per run 1 % of jitter; ``slower``'s implementation
    runs 20 % slower."""
    quiet = copy.deepcopy(report)
    draw = random.Random(seed)
    quiet["loadBeforeRun"] = 0.1
    for workload in quiet["workloads"]:
        workload["conditions"].update(foreignCpuFraction=0.01, stealFraction=0.0)
        floor, impl = [], []
        for _ in range(len(workload["floor"]["rounds"])):
            level = draw.gauss(1.0, 0.05)  # the machine's, which the ratio cancels
            ratio = 5.0 * draw.gauss(1.0, 0.02) * (1.2 if workload["key"] == slower else 1.0)
            floor.append([1e-3 * level * draw.uniform(1.0, 1.01) for _ in range(6)])
            impl.append([1e-3 * ratio * level * draw.uniform(1.0, 1.01) for _ in range(6)])
        workload["floor"]["rounds"] = floor
        workload["floor"]["seconds"] = [x for r in floor for x in r]
        workload["results"][0]["rounds"] = impl
    return _rejudged(quiet)


@pytest.fixture(scope="module")
def noisy() -> tuple[dict[str, Any], dict[str, Any]]:
    old, new = map(_load, PAIR)
    assert [w["key"] for w in old["workloads"]] == KEYS  # the recording is what it says
    return old, new


def test_the_recorded_pair_fits_the_schema_and_neither_side_is_publishable(
    noisy: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    for report in noisy:
        assert report_problems(report) == []
        assert not report["quiet"]["publishable"]


def test_compare_declines_to_judge_noisy_reports_of_identical_code_and_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "compare", str(PAIR[0]), str(PAIR[1])]) == 6
    out = capsys.readouterr().out
    assert "REGRESSION" not in out
    assert "the old report is not publishable: load average" in out
    assert "declined to judge the figures" in out.splitlines()[-1]


def test_noisy_reports_of_identical_code_show_no_regression_even_when_judged(
    noisy: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    # Judged as if publishable: the spread between rounds raises each workload's bar above what
    # the noise moved (append-single 5.09x -> 1.02x in the headline).
    old, new = (copy.deepcopy(report) for report in noisy)
    for report in (old, new):
        report["quiet"] = {**report["quiet"], "publishable": True, "reasons": []}
    result = compare(old, new)
    assert not result.declined
    assert result.regressions == 0, result.lines


def test_a_planted_twenty_percent_slowdown_is_a_regression_of_that_workload_only(
    noisy: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    old = _quiet(noisy[0], seed=1)
    new = _quiet(noisy[0], seed=2, slower="context-branched")
    assert old["quiet"]["publishable"] and new["quiet"]["publishable"], new["quiet"]["reasons"]
    (tmp_path / "old.json").write_text(json.dumps(old), "utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), "utf-8")
    assert main(["bench", "compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 1
    flagged = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith("REGRESSION")]
    assert len(flagged) == 1 and flagged[0].startswith("REGRESSION context-branched, ")
    assert re.search(r", \+(19|20|21) % \(95 % ", flagged[0]), flagged[0]  # 20 %, drawn


def test_quiet_reports_of_identical_code_compare_clean() -> None:
    result = compare(_quiet(_load(PAIR[0]), seed=1), _quiet(_load(PAIR[0]), seed=3))
    assert (result.regressions, result.declined) == (0, False)
    assert result.lines[-1].startswith("no regression")


def test_a_lost_result_is_a_regression_even_when_the_figures_are_not_judged(
    noisy: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    old, new = noisy[0], copy.deepcopy(noisy[1])
    new["workloads"][0]["results"][0].update(outcome="invalid", detail="wrong")
    result = compare(old, new)
    assert result.regressions == 1 and result.declined
    assert [line for line in result.lines if "validate-short" in line and "now invalid" in line]


def test_a_report_publishable_only_in_part_is_judged_on_the_workloads_publishable_on_both(
    noisy: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    old = _quiet(noisy[0], seed=1)
    new = _quiet(noisy[0], seed=2, slower="context-branched")
    new["quiet"] = {**new["quiet"], "publishable": False, "reasons": ["retry-100: too wide"],
                    "byWorkload": {key: key != "retry-100" for key in KEYS}}
    result = compare(old, new)
    assert result.regressions == 1 and result.declined
    assert [line for line in result.lines if line.startswith("REGRESSION context-branched")]
    assert result.lines[-1].startswith("declined to judge the figures of retry-100: ")
    # A report from before the per-workload verdict has no workload to judge.
    del new["quiet"]["byWorkload"]
    assert compare(old, new).regressions == 0
