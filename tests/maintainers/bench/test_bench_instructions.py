"""Instruction counts (``bench --instructions``, bench/_instructions.py): a deterministic figure,
so two counts of the same work agree; where valgrind is missing or cannot run a side, the figure
is "unsupported, because ..." and never a number, in the JSON and in the Markdown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from persyk_conformance.cli._commands import REFERENCE_ADAPTER
from persyk_maintainers.bench._counted import CountFailed, CountPlan
from persyk_maintainers.bench._data import DataStore
from persyk_maintainers.bench._instructions import (
    instruction_members,
    read_cachegrind,
    valgrind_unavailable,
)
from persyk_maintainers.bench._reads import ValidateShort
from persyk_maintainers.bench._report import render_markdown, report_problems
from persyk_maintainers.bench._run import BenchConfig, run_bench

needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None,
    reason="valgrind is not installed (apt-get install valgrind; .ci/run installs it where it "
           "may)")


def _plan(root: Path, repetitions: int = 2) -> CountPlan:
    return CountPlan(repetitions, root / "counts", {"PATH": "/usr/bin:/bin"}, None, 120.0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[ValidateShort, object]:
    workload = ValidateShort(0.001)  # the least input: 64 KiB
    prepared = workload.prepare(DataStore(tmp_path_factory.mktemp("data")))
    return workload, prepared


@needs_valgrind
@pytest.mark.slow
def test_two_counts_of_the_same_tiny_workload_agree_within_one_percent(
    tiny: tuple[ValidateShort, object], tmp_path: Path,
) -> None:
    workload, prepared = tiny
    counts = []
    for attempt in ("a", "b"):
        floor, (impl,) = instruction_members(workload, prepared,  # type: ignore[arg-type]
                                             [list(REFERENCE_ADAPTER)],
                                             _plan(tmp_path / attempt), None)
        assert impl is not None and "ratio" in impl, impl
        counts.append((floor["perUnit"], impl["perUnit"]))
    (floor_a, impl_a), (floor_b, impl_b) = counts
    assert floor_a > 0 and impl_a > floor_a
    assert abs(floor_a - floor_b) <= 0.01 * floor_a
    assert abs(impl_a - impl_b) <= 0.01 * impl_a


@needs_valgrind
@pytest.mark.slow  # the floor's two counts under valgrind: about 15 s
def test_an_adapter_valgrind_cannot_run_is_unsupported_with_its_reason(
    tiny: tuple[ValidateShort, object], tmp_path: Path,
) -> None:
    workload, prepared = tiny
    _, (impl,) = instruction_members(workload, prepared,  # type: ignore[arg-type]
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

