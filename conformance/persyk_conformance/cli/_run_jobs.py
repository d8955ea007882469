"""``run -j N``: the selected cases on N adapter processes at once, the harness checks
beside them, the results in plan order (the scheduling rules are run/_parallel.py's).

Each lane that runs fixture cases has its own sandbox, adapter process and Runner, so each case
still gets its own workspace and its "nothing changed outside the workspace" check sees only
its own lane. Each harness check gets a sandbox of its own, because it starts its own adapters.
The first lane's adapter is started before anything else: its hello names the implementation
in the report and tells the harness checks the capabilities, as the serial run's does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .._profiles import Profile
from ..adapters._interface import Adapter
from ..adapters._processes import run_is_ending
from ..harness._registry import HarnessCheck, harness_results
from ..harness._trace import DEFAULT_TRACE_BUDGET, TraceBudget
from ..run._lane_process import AdapterSpec, LaneDied, LaneProcess
from ..run._outcomes import CaseResult
from ..run._parallel import Job, case_is_apart, run_jobs
from ..run._progress import ProgressLine
from ..run._runner import Planned, Runner, RunOptions
from ..run._shards import expected_cost
from ..run._workspace import Sandbox

__all__ = ["EarlyLanes", "Lanes", "plan_jobs", "run_in_parallel"]

MakeAdapter = Callable[[Sandbox], Adapter]
# How long a lane process may take to start (a fresh interpreter importing the runner, on a
# loaded machine), beyond the run's --timeout.
LANE_START_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class JobSettings:
    """What a harness check needs of the run's configuration."""

    timeout: float
    moments: int
    states: int
    workers: int  # killed adapters a crash check runs at once (harness/_crash.workers_for)
    trace_budget: TraceBudget = DEFAULT_TRACE_BUDGET  # per step of a power-loss check


def plan_jobs(cases: list[Planned], checks: list[HarnessCheck]) -> list[Job]:
    """The plan as jobs: the cases, then the harness checks, each with its expected cost and
    whether it must run alone (a check) or apart (a case; run/_parallel.py, Rule 2)."""
    jobs = [Job(n, p.case.id, expected_cost(p.case.id, p.case.kind),
                apart=case_is_apart(p.case)) for n, p in enumerate(cases)]
    jobs += [Job(len(cases) + n, c.id, expected_cost(c.id, "write-harness"), c.exclusive)
             for n, c in enumerate(checks)]
    return jobs


@dataclass(slots=True)
class Lanes:
    """Who runs each lane's fixture cases: lane 0 is the run's own Runner (in this process);
    every other lane is a lane process (run/_lane_process.py) when ``spec`` says how to start the
    adapter there, else a Runner of its own in this process. Each is made on first use."""

    first: Runner
    make_adapter: MakeAdapter
    profile: Profile
    count: int
    spec: AdapterSpec | None = None
    runners: dict[int, Runner] = field(default_factory=dict)
    processes: dict[int, LaneProcess] = field(default_factory=dict)
    sandboxes: list[Sandbox] = field(default_factory=list)
    gave_up: str | None = None  # the first lane that gives up on the adapter speaks for all

    def runner(self, lane: int) -> Runner:
        if lane == 0:
            return self.first
        if lane not in self.runners:
            sandbox = Sandbox.create()
            self.sandboxes.append(sandbox)
            self.runners[lane] = Runner(self.make_adapter(sandbox), sandbox,
                                        RunOptions(timeout=self.first.options.timeout),
                                        self.profile)
        return self.runners[lane]

    def start_processes(self, cases: int, early: EarlyLanes | None = None) -> None:
        """Start the lane processes ``cases`` fixture cases can use (lane 0 is this process)
        now, since each takes a while, taking those ``early`` started already; ``ready`` waits
        for them."""
        if self.spec is not None:
            for lane in range(1, min(self.count, cases)):
                process = early.take(lane) if early is not None else None
                if process is not None:
                    self.processes[lane] = process
                    continue
                try:
                    self.processes[lane] = LaneProcess(
                        self.spec, RunOptions(timeout=self.first.options.timeout), self.profile)
                except OSError as error:  # no process to be had (a limit, a missing Python)
                    _falls_back(lane, f"could not start its process ({error.strerror})")
        if early is not None:
            early.close()  # the lanes this plan has no cases for

    def stop_processes(self) -> None:
        _close_all(self.processes)

    def ready(self) -> None:
        """Wait for the lane processes; one that does not come up is closed and its lane runs
        in a thread of this process instead (as lanes did before they were processes), so the
        run's results are the same, only slower."""
        for lane, process in list(self.processes.items()):
            try:
                process.wait_ready(LANE_START_SECONDS + self.first.options.timeout)
            except LaneDied as error:
                del self.processes[lane]
                process.close()
                _falls_back(lane, str(error))

    def run_case(self, lane: int, planned: Planned, expected: str | None) -> CaseResult:
        if lane not in self.processes:
            return self._run_here(lane, planned, expected)
        result, gave_up = self.processes[lane].run_case(planned, expected, self.gave_up)
        if gave_up is not None and self.gave_up is None:
            self.gave_up = gave_up
        return result

    def _run_here(self, lane: int, planned: Planned, expected: str | None) -> CaseResult:
        runner = self.runner(lane)
        if self.gave_up is not None and runner.gave_up is None:
            runner.gave_up = self.gave_up
        result = runner.run_case(planned).with_expectation(expected)
        runner.results.append(result)  # as Runner.run keeps them
        if runner.gave_up is not None and self.gave_up is None:
            self.gave_up = runner.gave_up
        return result

    def stop_now(self) -> None:
        """The run was stopped by a signal: every lane process is told to end at once (SIGTERM,
        run/_lane_process.py, Rule 2); this process's adapters were killed by the signal's
        handler already (cli/_run_signals.py), so its lane threads end their cases now."""
        for process in self.processes.values():
            process.stop_now()

    def close(self) -> None:
        """Stop every lane: a lane process finishes the case it runs first (one stopped by
        ``stop_now`` does not), then closes its adapter, while this process closes its own."""
        for process in self.processes.values():
            process.begin_close()
        try:
            for runner in (self.first, *self.runners.values()):
                runner.close()
        finally:
            try:
                self.stop_processes()
            finally:
                for sandbox in self.sandboxes:
                    sandbox.remove()


class EarlyLanes:
    """Lane processes started before the plan is made (a fresh interpreter takes about 0.2 s to
    import the runner, which then overlaps the loading of the cases); ``Lanes.start_processes``
    takes those the plan needs, and ``close`` stops the rest (every one, on a usage error)."""

    def __init__(self, spec: AdapterSpec, options: RunOptions, profile: Profile,
                 count: int) -> None:
        self._processes: dict[int, LaneProcess] = {}
        for lane in range(1, count):
            try:
                self._processes[lane] = LaneProcess(spec, options, profile)
            except OSError:  # start_processes tries again and says why
                break

    def take(self, lane: int) -> LaneProcess | None:
        return self._processes.pop(lane, None)

    def close(self) -> None:
        _close_all(self._processes)


def _close_all(processes: dict[int, LaneProcess]) -> None:
    """Stop lane processes all at once, not one after the other, and forget them."""
    try:
        for process in processes.values():
            process.begin_close()
        for process in processes.values():
            process.close()
    finally:
        processes.clear()


def _run_check(check: HarnessCheck, lanes: Lanes, expected: Mapping[str, str],
               capabilities: frozenset[str], settings: JobSettings) -> CaseResult:
    sandbox = Sandbox.create()  # its own HOME, temp dir and confinement: it runs beside others
    try:
        (result,) = harness_results(
            lambda: lanes.make_adapter(sandbox), sandbox.runner / "write-harness", [check.id],
            expected, capabilities, timeout=settings.timeout, gave_up=lanes.gave_up,
            moments=settings.moments, states=settings.states, workers=settings.workers,
            trace_budget=settings.trace_budget,
        )
    finally:
        sandbox.remove()
    return result


def _falls_back(lane: int, why: str) -> None:
    print(f"persyk-conformance: lane {lane + 1}: {why}; it runs in a thread of the runner",
          file=sys.stderr)


def run_in_parallel(
    lanes: Lanes, cases: list[Planned], checks: list[HarnessCheck], expected: Mapping[str, str],
    settings: JobSettings, progress: ProgressLine | None, results: list[CaseResult],
) -> str | None:
    """Every case and check past those ``results`` holds already on ``lanes.count`` lanes, each
    result into ``results`` in plan order as soon as those before it are in; returns why the
    run stopped early, if it did. ``lanes.first`` has been started (its hello is the run's)
    unless ``lanes.gave_up`` says why not."""
    capabilities = (frozenset() if lanes.gave_up is not None
                    else lanes.first.adapter.hello.capabilities)
    total = len(cases) + len(checks)

    def work(lane: int, job: Job) -> CaseResult:
        if job.index < len(cases):
            planned = cases[job.index]
            return lanes.run_case(lane, planned, expected.get(planned.case.id))
        return _run_check(checks[job.index - len(cases)], lanes, expected, capabilities,
                          settings)

    def deliver(index: int, result: CaseResult) -> None:
        if run_is_ending():  # a signal killed the adapters: a case that ends now was cut short
            return
        results.append(result)
        if progress is not None:
            progress(index + 1, total, result)

    def reached(index: int) -> None:
        if progress is not None and index >= len(cases):
            check = checks[index - len(cases)]
            progress.running(index + 1, check.id, check.title)  # as the serial run says it

    try:
        lanes.ready()
        run_jobs(plan_jobs(cases, checks)[len(results):], lanes.count, work, deliver, reached,
                 lanes.stop_now)
    finally:
        try:
            lanes.close()
        finally:
            if progress is not None:
                progress.clear()
    return None if lanes.gave_up is None else f"gave up on the adapter: {lanes.gave_up}"
