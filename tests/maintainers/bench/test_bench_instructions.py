"""Instruction counts (``bench --instructions``, bench/_instructions.py): a deterministic figure,
so two counts of the same work agree; where valgrind is missing or cannot run a side, the figure
is "unsupported, because ..." and never a number, in the JSON and in the Markdown."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli._commands import REFERENCE_ADAPTER
from persyk_maintainers.bench._counted import (
    CountFailed,
    CountPlan,
    _adapter_totals,
    _difference,
)
from persyk_maintainers.bench._data import DataStore
from persyk_maintainers.bench._instructions import (
    VALGRIND,
    instruction_members,
    read_cachegrind,
    valgrind_unavailable,
)
from persyk_maintainers.bench._reads import ValidateShort
from persyk_maintainers.bench._report import render_markdown, report_problems
from persyk_maintainers.bench._run import BenchConfig, run_bench
from persyk_maintainers.bench._workloads import Prepared

needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None,
    reason="valgrind is not installed (apt-get install valgrind; .ci/run installs it where it "
           "may)")


def _plan(root: Path, repetitions: int = 2) -> CountPlan:
    return CountPlan(repetitions, root / "counts", {"PATH": "/usr/bin:/bin"}, None, 120.0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[ValidateShort, Prepared]:
    workload = ValidateShort(0.002)  # 200 KiB: a count's noise is a smaller share of it
    prepared = workload.prepare(DataStore(tmp_path_factory.mktemp("data")))
    return workload, prepared


@needs_valgrind
@pytest.mark.slow  # three Python processes under valgrind: about 25 s
def test_two_counts_of_the_same_tiny_workload_agree_within_one_percent(
    tiny: tuple[ValidateShort, Prepared], tmp_path: Path,
) -> None:
    # The reference's adapter counted for the warm-up, then twice for the warm-up and four
    # validations: _difference refuses two counts more than 1 % apart (CountFailed).
    workload, prepared = tiny
    plan = _plan(tmp_path, 4)

    def run(repetitions: int, out: Path) -> dict[str, float]:
        return _adapter_totals(VALGRIND, REFERENCE_ADAPTER, workload, prepared, repetitions,
                               out, plan)

    per_unit = _difference(run, 4, 1, tmp_path / "counts", agreement=0.01)
    assert per_unit["instructions"] > 1e6


@needs_valgrind
@pytest.mark.slow  # the floor's two counts under valgrind: about 15 s
def test_an_adapter_valgrind_cannot_run_is_unsupported_with_its_reason(
    tiny: tuple[ValidateShort, Prepared], tmp_path: Path,
) -> None:
    workload, prepared = tiny
    _, (impl,) = instruction_members(workload, prepared,
                                     [["/bin/sh", "-c", "exit 3"]], _plan(tmp_path), None)
    assert impl is not None and set(impl) == {"unsupported"}
    assert impl["unsupported"].startswith("because the adapter failed under valgrind")


def test_no_valgrind_on_path_reports_unsupported_never_a_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert valgrind_unavailable() == "valgrind is not installed (not on PATH)"
    report = run_bench(BenchConfig(impls=(REFERENCE_ADAPTER,), scale=0.001, rounds=2, pairs=1,
                                   only=("validate-short",), instructions=2,
                                   conformance=False))
    assert report_problems(report) == []
    (workload,) = report["workloads"]
    (result,) = workload["results"]
    reason = "because valgrind is not installed (not on PATH)"
    assert workload["floor"]["instructions"] == {"unsupported": reason}
    assert result["instructions"] == {"unsupported": reason}
    assert report["instructions"]["unavailable"] == "valgrind is not installed (not on PATH)"
    markdown = render_markdown(report)
    assert f"| validate-short | unsupported, {reason} | unsupported, {reason} |" in markdown


def test_cachegrind_totals_sum_every_process_and_refuse_an_empty_directory(
    tmp_path: Path,
) -> None:
    (tmp_path / "cachegrind.out.10").write_text("events: Ir\nsummary: 1000\n")
    (tmp_path / "cachegrind.out.11").write_text("events: Ir\nsummary: 234\n")
    assert read_cachegrind(tmp_path) == {"instructions": 1234.0}
    with pytest.raises(CountFailed, match="valgrind wrote no count"):
        read_cachegrind(tmp_path / "nothing")



def _runs(totals: dict[int, list[float]]) -> Any:
    """A stand-in for a wrapped run: the instructions of ``repetitions`` repetitions, the
    next of its list each time it is asked."""
    def run(repetitions: int, out: Path) -> dict[str, float]:
        return {"instructions": totals[repetitions].pop(0)}
    return run


def test_two_counts_that_agree_give_their_mean_per_unit() -> None:
    run = _runs({1: [1000.0], 4: [4000.0, 4006.0]})
    assert _difference(run, 3, 2, Path("/nonexistent"), 0.01) == {"instructions": 500.5}


def test_two_counts_that_differ_by_more_than_one_percent_are_no_figure() -> None:
    # A JIT runtime: the same requests cost 3000 and 3300 instructions.
    run = _runs({1: [1000.0], 4: [4000.0, 4300.0]})
    with pytest.raises(CountFailed, match=r"differed by 9\.1% \(more than 1%\): the work "
                                          "varies from run to run"):
        _difference(run, 3, 1, Path("/nonexistent"), 0.01)
