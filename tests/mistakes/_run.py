"""Run conformance cases in-process against the reference with one mistake switched on."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import persyk_session.adapter as reference
from persyk_conformance._protocol import Implementation, Reply
from persyk_conformance.adapters._in_process import InProcessAdapter, step_deadline
from persyk_conformance.adapters._interface import AdapterTimedOut
from persyk_conformance.cli import RunConfig, plan_cases
from persyk_conformance.run._outcomes import FAILING
from persyk_conformance.run._runner import Planned, Runner, RunOptions
from persyk_conformance.run._workspace import Sandbox

from ._model import Dispatch, Mistake

STEP_TIMEOUT = 10.0  # the runner's default --timeout


def reference_dispatch(op: str, args: dict[str, Any]) -> dict[str, Any]:
    return reference.dispatch(op, args, "v1")


class MistakeAdapter(InProcessAdapter):
    """The reference in-process behind one mistake's layer, each step under a deadline."""

    def __init__(self, dispatch: Dispatch, name: str) -> None:
        self.faults: list[str] = []  # a layer that raised: a kill by our bug, not the case's

        def guarded(op: str, args: dict[str, Any]) -> dict[str, Any]:
            try:
                return dispatch(op, args)
            except AdapterTimedOut:
                raise
            except Exception as exc:
                self.faults.append(f"{op}: {type(exc).__name__}: {exc}"[:200])
                raise

        super().__init__(dispatch=guarded, implementation=Implementation(name, "0", "python"),
                         capabilities=frozenset(reference.capabilities()))
        self._on_kill = reference.abandon  # crashAfter: what a killed process leaves

    def run(self, op: str, args: Mapping[str, Any], timeout: float) -> Reply:
        with step_deadline(timeout):
            return super().run(op, args, timeout)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the cases said of one mistake: the MUST and the weaker cases that failed on it."""

    mistake: str
    must_failed: tuple[str, ...]
    other_failed: tuple[str, ...]
    ran: int
    seconds: float
    faults: tuple[str, ...] = ()
    # seconds each failing MUST case took (the test suite runs the quickest ones)
    costs: tuple[float, ...] = ()

    @property
    def killed(self) -> bool:
        return bool(self.must_failed)


class Suite:
    """The v1 cases (and the runner's harness cases) planned once, run many times."""

    def __init__(self, only: Sequence[str] = (), *, harness: bool = True,
                 fixtures: Path | None = None) -> None:
        self.sandbox = Sandbox.create()
        plan = plan_cases(self.sandbox, RunConfig(in_process=True, only=tuple(only),
                                                  harness=harness, fixtures=fixtures))
        self.cases: dict[str, Planned] = {p.case.id: p for p in plan.cases}

    def close(self) -> None:
        self.sandbox.remove()

    def level(self, case_id: str) -> str:
        return self.cases[case_id].case.level

    def run(self, name: str, dispatch: Dispatch, order: Sequence[str] | None = None, *,
            enough: int | None = None) -> Verdict:
        """Run ``order`` (every case when None); stop once ``enough`` MUST cases failed."""
        began = time.perf_counter()
        adapter = MistakeAdapter(dispatch, name)
        runner = Runner(adapter, self.sandbox, RunOptions(timeout=STEP_TIMEOUT))
        must: list[str] = []
        costs: list[float] = []
        other: list[str] = []
        ids = list(order) if order is not None else list(self.cases)
        ran = 0
        for case_id in ids:
            planned = self.cases.get(case_id)
            if planned is None:
                continue
            ran += 1
            started = time.perf_counter()
            result = runner.run_case(planned)
            if result.outcome in FAILING and planned.case.level == "MUST":
                must.append(case_id)
                costs.append(time.perf_counter() - started)
            elif result.outcome in FAILING:
                other.append(case_id)
            if enough is not None and len(must) >= enough:
                break
        return Verdict(name, tuple(must), tuple(other), ran, time.perf_counter() - began,
                       tuple(adapter.faults), tuple(costs))

    def quickest(self, verdict: Verdict, count: int = 2) -> tuple[str, ...]:
        """Up to ``count`` of the quickest MUST cases that caught a mistake, in suite order: the
        quickest, and the next ones only while each takes under a second (a case that waits
        for the step deadline is run once)."""
        ranked = sorted(zip(verdict.costs, verdict.must_failed, strict=True))[:count]
        chosen = {case for n, (cost, case) in enumerate(ranked) if n == 0 or cost < 1.0}
        return tuple(case for case in verdict.must_failed if case in chosen)

    def run_mistake(self, mistake: Mistake, order: Sequence[str] | None = None, *,
                    enough: int | None = None) -> Verdict:
        return self.run(mistake.name, mistake.dispatch(reference_dispatch), order,
                        enough=enough)

