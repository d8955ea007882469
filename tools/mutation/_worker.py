"""Run the conformance cases against the ``persyk_session`` first on ``PYTHONPATH``; stop at the
first case that fails. Started by run.py once per mutant, in a fresh process.

Usage: ``_worker.py [--reach OUT] ORDER_FILE EXPECTED_ROOT FIXTURES``. ORDER_FILE holds the
ids of the cases to run, one a line, in the order to try them (empty: every case).
``--reach OUT``: run every case and write which functions of the package each one calls to
OUT (JSON). EXPECTED_ROOT is the folder the imported ``persyk_session`` must come from (a
mutant that is not the one imported would measure nothing). FIXTURES: the case folder (a copy
frozen for the run). Prints one JSON line: ``{"verdict": "killed"|"survived", "case": id,
"outcome": ..., "reason": ..., "cases": n}``.

The cases run in-process through the runner's own API (``Runner.run_case``, the write harness),
exactly as ``persyk-conformance run --in-process`` runs them, with one addition: each adapter
step gets the runner's step deadline (``--timeout``, 10 s), which the in-process adapter
otherwise cannot enforce; a step past it is the runner's ``timeout`` outcome, as it would be
for a subprocess adapter. H-104 needs an adapter process: when ORDER_FILE names it, it runs
through the reference's subprocess adapter (which imports the same mutated copy).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import FrameType
from typing import Any

from persyk_conformance._protocol import Reply
from persyk_conformance.adapters._in_process import InProcessAdapter, step_deadline
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_conformance.cli import REFERENCE_ADAPTER, RunConfig, plan_cases
from persyk_conformance.harness._registry import harness_results, known_capabilities
from persyk_conformance.run._outcomes import FAILING, CaseResult
from persyk_conformance.run._runner import Runner, RunOptions
from persyk_conformance.run._workspace import Sandbox

STEP_TIMEOUT = 10.0  # the runner's default --timeout
# Checks that need an adapter process: run through the reference's subprocess adapter when
# named (they are unsupported in-process).
SUBPROCESS_ONLY: frozenset[str] = frozenset({"H-104"})
# ``sub:H-102``: a write-harness check run through the subprocess adapter on request (four
# writer processes contend for the lock, where in-process threads under the GIL rarely do).
SUBPROCESS_PREFIX = "sub:"


class DeadlineAdapter(InProcessAdapter):
    """The reference in-process, each step bounded by the runner's deadline."""

    def run(self, op: str, args: Mapping[str, Any], timeout: float) -> Reply:
        with step_deadline(timeout):
            return super().run(op, args, timeout)


def _order(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text("utf-8").splitlines() if line.strip()]


class Reach:
    """Which functions of the package each case calls: ``case -> {"module:line:name"}``.
    ``sys.setprofile`` sees every call (threads too), at a fraction of a line tracer's cost."""

    def __init__(self, root: Path) -> None:
        self.prefix = str(root) + "/"
        self.current: set[str] = set()
        self.by_case: dict[str, list[str]] = {}

    def hook(self, frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(self.prefix):
                name = code.co_filename[len(self.prefix):]
                self.current.add(f"{name}:{code.co_firstlineno}:{code.co_name}")

    @contextmanager
    def case(self, case_id: str) -> Iterator[None]:
        self.current = set()
        sys.setprofile(self.hook)
        threading.setprofile(self.hook)
        try:
            yield
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
            self.by_case[case_id] = sorted(self.current)


def run_cases(order: list[str], fixtures: Path, reach: Reach | None = None) -> dict[str, Any]:
    """Run the cases ``order`` names, in that order (all of them when it is empty); stop at the
    first failing one, unless ``reach`` records what each case calls (then run every case)."""
    sandbox = Sandbox.create()
    try:
        plan = plan_cases(sandbox, RunConfig(in_process=True, fixtures=fixtures))
        cases = {p.case.id: p for p in plan.cases}
        checks = [c.id for c in plan.write_checks]
        ids = order or [*cases, *checks]
        runner = Runner(DeadlineAdapter(), sandbox, RunOptions(timeout=STEP_TIMEOUT))
        capabilities = known_capabilities(runner.adapter, DeadlineAdapter, STEP_TIMEOUT)
        for count, case_id in enumerate(ids, start=1):
            with reach.case(case_id) if reach is not None else nullcontext():
                if case_id in SUBPROCESS_ONLY or case_id.startswith(SUBPROCESS_PREFIX):
                    check = case_id.removeprefix(SUBPROCESS_PREFIX)
                    result = _through_subprocess(sandbox, check, capabilities)
                elif case_id in cases:
                    result = runner.run_case(cases[case_id])
                else:
                    (result,) = harness_results(
                        DeadlineAdapter, sandbox.runner / "write-harness", [case_id], {},
                        capabilities, timeout=STEP_TIMEOUT)
            if result.outcome in FAILING:
                return _verdict("killed", result, count)
        return {"verdict": "survived", "cases": len(ids)}
    finally:
        sandbox.remove()


def _through_subprocess(sandbox: Sandbox, check: str, capabilities: frozenset[str] | None
                        ) -> CaseResult:
    """A write-harness check that needs an adapter process (H-104 kills it at every system
    call), through the reference's own subprocess adapter, which imports the same mutated copy
    (PYTHONPATH is inherited)."""

    def fresh() -> SubprocessAdapter:
        return SubprocessAdapter(REFERENCE_ADAPTER, env=sandbox.adapter_env(os.environ),
                                 confine_to=sandbox.root)

    (result,) = harness_results(fresh, sandbox.runner / "write-harness", [check], {},
                                      capabilities, timeout=STEP_TIMEOUT)
    return result


def _verdict(verdict: str, result: CaseResult, count: int) -> dict[str, Any]:
    reason = (result.reason or "")[:200]
    return {"verdict": verdict, "case": result.id, "outcome": str(result.outcome),
            "reason": reason, "cases": count}


def main(argv: list[str]) -> int:
    reach_file: Path | None = None
    if argv[:1] == ["--reach"]:
        reach_file, argv = Path(argv[1]), argv[2:]
    order_file, expected_root, fixtures = Path(argv[0]), Path(argv[1]).resolve(), Path(argv[2])
    try:
        import persyk_session
    except Exception as exc:  # a mutant that breaks the import breaks every case
        print(json.dumps({"verdict": "killed", "case": "(import)", "outcome": "error",
                          "reason": f"{type(exc).__name__}: {exc}"[:200], "cases": 0}))
        return 0
    origin = Path(persyk_session.__file__).resolve()
    if expected_root not in origin.parents:
        print(json.dumps({"verdict": "broken", "reason": f"imported {origin}"}))
        return 2
    reach = Reach(origin.parent) if reach_file is not None else None
    try:
        verdict = run_cases(_order(order_file), fixtures, reach)
        if reach_file is not None and reach is not None:
            reach_file.write_text(json.dumps(reach.by_case), "utf-8")
    except Exception as exc:  # the runner could not run at all (say, the adapter never came up)
        verdict = {"verdict": "killed", "case": "(run)", "outcome": "error",
                   "reason": f"{type(exc).__name__}: {exc}"[:200], "cases": 0}
    print(json.dumps(verdict))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
