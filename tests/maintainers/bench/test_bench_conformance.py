"""A figure never stands without its conformance (bench/_conformance.py): each ok result carries
the pass count of the cases its workload relies on (those calling its operations), from a run of
the same adapter or from a report passed in, in the JSON and the Markdown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.casetree import fake
from persyk_conformance.cli import main
from persyk_maintainers.bench._conformance import conformance_member, relied_on
from persyk_maintainers.bench._reads import InfoAudio, PagedWalk, ValidateShort
from persyk_maintainers.bench._report import render_markdown, report_problems
from persyk_maintainers.bench._writes import Capture

TINY = ["--scale", "0.001", "--rounds", "2", "--pairs", "1", "-q", "--only", "info-audio"]

def test_a_workload_relies_on_the_cases_that_call_its_operations() -> None:
    relied = relied_on([ValidateShort(1), PagedWalk(1), InfoAudio(1), Capture(1)])
    assert "R-521" in relied["paged-walk"]  # a paged read with pageSize -5
    assert "R-140" in relied["info-audio"] and "R-140" not in relied["paged-walk"]
    assert len(relied["validate-short"]) > 500
    assert relied["capture"] and "R-521" not in relied["capture"]


def test_the_member_counts_passes_failures_and_the_rest() -> None:
    member = conformance_member(("G-1", "G-2", "R-3", "R-4"),
                                {"G-1": "pass", "G-2": "fail", "R-3": "unsupported"}, "a run")
    assert member == {"cases": 4, "passed": 1, "failed": 1, "other": 2, "failing": ["G-2"],
                      "source": "a run"}


def _bench(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "bench.json"
    status = main(["bench", *TINY, "--report", str(out), *extra])
    return status, json.loads(out.read_text("utf-8"))


@pytest.fixture(scope="module")
def info_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A conformance run's JSON report of the info cases against the reference."""
    out = tmp_path_factory.mktemp("run") / "run.json"
    main(["run", "--only", ",".join(relied_on([InfoAudio(1)])["info-audio"]), "--no-harness",
          "-q", "--report", str(out)])
    return out


def test_each_figure_carries_the_pass_count_of_its_cases_from_a_run(tmp_path: Path) -> None:
    status, report = _bench(tmp_path)
    assert status == 0 and report_problems(report) == []
    (result,) = report["workloads"][0]["results"]
    cases = len(relied_on([InfoAudio(1)])["info-audio"])
    assert result["conformance"]["cases"] == cases
    assert result["conformance"]["passed"] == cases and result["conformance"]["failed"] == 0
    assert result["conformance"]["source"] == "persyk-conformance run of the same command"
    assert f"; cases passed {cases} of {cases};" in render_markdown(report)


def test_a_failing_case_in_a_report_passed_in_shows_beside_the_figure(
    tmp_path: Path, info_run: Path,
) -> None:
    run = json.loads(info_run.read_text("utf-8"))
    broken = next(case for case in run["cases"] if case["outcome"] == "pass")
    broken["outcome"] = "fail"
    (tmp_path / "broken.json").write_text(json.dumps(run), "utf-8")
    status, report = _bench(tmp_path, "--conformance-report", str(tmp_path / "broken.json"))
    assert status == 0 and report_problems(report) == []
    (result,) = report["workloads"][0]["results"]
    assert result["conformance"]["failed"] == 1
    assert result["conformance"]["failing"] == [broken["id"]]
    assert result["conformance"]["source"] == "the report broken.json"
    assert " (1 failing);" in render_markdown(report)


def test_a_report_of_another_implementation_is_refused_and_not_publishable(
    tmp_path: Path, info_run: Path,
) -> None:
    run = json.loads(info_run.read_text("utf-8"))
    run["header"]["implementation"]["name"] = "someone-else"
    (tmp_path / "other.json").write_text(json.dumps(run), "utf-8")
    status, report = _bench(tmp_path, "--conformance-report", str(tmp_path / "other.json"))
    assert status == 0 and report_problems(report) == []
    (result,) = report["workloads"][0]["results"]
    assert result["conformance"]["unsupported"].startswith(
        "because other.json is a run of someone-else ")
    assert any("no conformance, because other.json" in r for r in report["quiet"]["reasons"])


def test_no_conformance_leaves_the_figures_unpublishable(tmp_path: Path) -> None:
    status, report = _bench(tmp_path, "--no-conformance")
    assert status == 0 and "conformance" not in report["workloads"][0]["results"][0]
    assert ("the figures stand without the conformance of the cases they rely on "
            "(--no-conformance)") in report["quiet"]["reasons"]


def test_an_implementation_fast_on_the_bench_but_wrong_on_its_cases_shows_them_failing(
    tmp_path: Path,
) -> None:
    status, report = _bench(tmp_path, "--impl", fake("wrong_info_errors"))
    assert status == 0 and report_problems(report) == []
    (result,) = report["workloads"][0]["results"]
    assert result["outcome"] == "ok" and "ratio" in result
    assert result["conformance"]["failed"] >= 1, result["conformance"]
    assert "R-140" in result["conformance"]["failing"]  # info of a missing session
    assert f" ({result['conformance']['failed']} failing);" in render_markdown(report)


@pytest.mark.parametrize(
    "options",
    [["--no-conformance", "--conformance-report", "run.json"],
     ["--conformance-report", "a.json", "--conformance-report", "b.json"]],
    ids=["report-with-no-conformance", "more-reports-than-implementations"],
)
def test_conformance_options_that_contradict_are_a_usage_problem(
    options: list[str], capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", *TINY, *options]) == 2
    assert "conformance" in capsys.readouterr().err
