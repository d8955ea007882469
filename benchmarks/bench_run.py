"""``persyk-conformance run -j N`` against ``-j 1``, and the runner's own cost per fixture case.

    .venv/bin/python -m pytest benchmarks/bench_run.py --benchmark-only

Group ``run-jobs``: the README's main job (the reference through its subprocess adapter, the
harness included) on a small selection of fixture cases and cheap harness checks; the floor is
``-j 1``, the other benchmark the default ``-j`` (the CPUs this process may use), so the ratio
is what the parallel run saves on this machine (the target: at most 0.6 on 2 cores, for
the whole run; this selection is small, so that the benchmark stays quick).

Group ``runner-overhead``: 200 generated validate cases against a constant adapter (one that
answers every request with the same canned reply at once). The floor is the same 200 requests
sent to that adapter directly, without the runner; the other benchmark runs them as cases
(workspace, snapshots, matching, the outside check), and its ``ms_per_case`` is the runner's
cost per case beyond the adapter's (the target: at most 2 ms). Figures go to
benchmarks/results/ only from a quiet machine, with its load.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_conformance.cases._load import load_cases
from persyk_conformance.cli._run import RunConfig, execute
from persyk_conformance.run._parallel import default_jobs
from persyk_conformance.run._runner import Planned, Runner
from persyk_conformance.run._workspace import Sandbox

SELECTION = ("G-0*", "R-0*", "H-001", "H-101", "H-103")
CASES = 200
CONSTANT = Path(__file__).resolve().parents[1] / "tests" / "fakes" / "accept_everything.py"
SESSION = b'{"type":"session","version":1,"id":"s1","timestamp":"2026-01-01T00:00:00Z"}\n'
MEDIANS: dict[str, float] = {}


def _main_job(jobs: int) -> None:
    record = execute(RunConfig(only=SELECTION, jobs=jobs))
    assert record.passed and record.aborted is None


@pytest.mark.benchmark(group="run-jobs")
def test_floor_main_job_one_job(benchmark: Any) -> None:
    benchmark.pedantic(_main_job, args=(1,), rounds=3, iterations=1)


@pytest.mark.benchmark(group="run-jobs")
def test_main_job_default_jobs(benchmark: Any) -> None:
    benchmark.extra_info["jobs"] = default_jobs()
    benchmark.pedantic(_main_job, args=(default_jobs(),), rounds=3, iterations=1)


@pytest.fixture(scope="module")
def constant_cases(tmp_path_factory: pytest.TempPathFactory) -> list[Planned]:
    root = tmp_path_factory.mktemp("constant-cases")
    for number in range(1, CASES + 1):
        case = root / "golden" / f"G-{number:03d}-valid"
        (case / "tree" / "session").mkdir(parents=True)
        (case / "tree" / "session" / "session.jsonl").write_bytes(SESSION)
        (case / "case.json").write_text(json.dumps({
            "id": f"G-{number:03d}", "kind": "golden", "title": "a header alone",
            "rules": ["REC-1"], "level": "MUST", "requires": ["read"],
            "steps": [{"op": "validate", "args": {"session": "session"},
                       "expect": {"valid": True}}],
        }))
    return [Planned(case) for case in load_cases(root)]


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox.create()
    yield box
    box.remove()


def _constant_adapter(sandbox: Sandbox) -> SubprocessAdapter:
    return SubprocessAdapter([sys.executable, str(CONSTANT)],
                             env=sandbox.adapter_env(os.environ), confine_to=sandbox.root)


def _median(benchmark: Any) -> float | None:
    stats = getattr(benchmark, "stats", None)  # None with --benchmark-disable
    return None if stats is None else float(stats.stats.median)


@pytest.mark.benchmark(group="runner-overhead")
def test_floor_constant_adapter_alone(benchmark: Any, sandbox: Sandbox) -> None:
    adapter = _constant_adapter(sandbox)
    adapter.start(10.0)
    session = str(sandbox.cases / "session")
    try:
        def requests() -> None:
            for _ in range(CASES):
                adapter.run("validate", {"session": session}, 10.0)
        benchmark.pedantic(requests, rounds=5, iterations=1)
    finally:
        adapter.close()
    median = _median(benchmark)
    if median is not None:
        MEDIANS["adapter"] = median


@pytest.mark.benchmark(group="runner-overhead")
def test_runner_against_the_constant_adapter(benchmark: Any, sandbox: Sandbox,
                                             constant_cases: list[Planned]) -> None:
    runner = Runner(_constant_adapter(sandbox), sandbox)
    runner.start()
    try:
        results = benchmark.pedantic(runner.run, args=(constant_cases,), rounds=5,
                                     iterations=1)
    finally:
        runner.close()
    assert len(results) == CASES and all(r.outcome == "pass" for r in results)
    median = _median(benchmark)
    if median is not None and "adapter" in MEDIANS:
        benchmark.extra_info["ms_per_case"] = round(
            (median - MEDIANS["adapter"]) / CASES * 1000, 3)
