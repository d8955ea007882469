"""Per-case cost of the subprocess protocol against the in-process fast path.

    .venv/bin/python -m pytest benchmarks/bench_protocol.py --benchmark-only

Both paths run the same cases (every installed fixture case, no harness cases) against the
reference implementation, with one adapter process started before timing begins, so the
difference is the protocol itself: encoding, pipes, the adapter's decoding, schema checks.
The second test prints the ratio subprocess / in-process (tomli's habit: ratios of a baseline).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from persyk_conformance.adapters._in_process import InProcessAdapter
from persyk_conformance.adapters._interface import Adapter
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_conformance.cases._load import load_cases
from persyk_conformance.cli import REFERENCE_ADAPTER
from persyk_conformance.run._runner import Planned, Runner
from persyk_conformance.run._workspace import Sandbox

PLAN = [Planned(case) for case in load_cases()]
MEANS: dict[str, float] = {}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox.create()
    yield box
    box.remove()


def _runner(mode: str, sandbox: Sandbox) -> Runner:
    adapter: Adapter
    if mode == "in-process":
        adapter = InProcessAdapter()
    else:
        adapter = SubprocessAdapter(
            REFERENCE_ADAPTER,
            env=sandbox.adapter_env(os.environ),
            confine_to=sandbox.root,
        )
    runner = Runner(adapter, sandbox)
    runner.start()
    return runner


@pytest.mark.parametrize("mode", ["in-process", "subprocess"])
def test_whole_suite(benchmark: Any, mode: str, sandbox: Sandbox) -> None:
    runner = _runner(mode, sandbox)
    try:
        results = benchmark.pedantic(runner.run, args=(PLAN,), rounds=3, iterations=1)
    finally:
        runner.close()
    assert len(results) == len(PLAN)
    MEANS[mode] = benchmark.stats.stats.mean / len(PLAN)
    if len(MEANS) == 2:
        _print_ratio()


def _print_ratio() -> None:
    ratio = MEANS["subprocess"] / MEANS["in-process"]
    overhead_ms = (MEANS["subprocess"] - MEANS["in-process"]) * 1000
    print(
        f"\nper case: in-process {MEANS['in-process'] * 1000:.2f} ms, subprocess "
        f"{MEANS['subprocess'] * 1000:.2f} ms; protocol overhead {overhead_ms:.2f} ms "
        f"per case (ratio {ratio:.2f}x) over {len(PLAN)} cases"
    )
