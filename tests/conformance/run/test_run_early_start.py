"""What a run starts before its cases are loaded: the run's adapter and, for
``-j N``, the other lanes' processes start while ``plan_cases`` loads and plans the fixtures, so
their start-up no longer adds to the wall time; a start that fails still reads as the first
case's error, and a run that stops at a usage error leaves no process behind.

Broken variants these tests catch: an adapter started by the first case again (no
``start_early``) makes the plan wait for a start that never comes; lane processes started
after the plan (``EarlyLanes`` unused) likewise; early lanes left running after a usage error
fail the last test; an early start that loses the adapter's stderr fails the crash test.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import pytest
from _paths import TESTS_DIR
from persyk_conformance.adapters import _subprocess
from persyk_conformance.cli import _run as run_command
from persyk_conformance.cli import _run_jobs
from persyk_conformance.cli._run import RunConfig, execute
from persyk_conformance.cli._status import UsageProblem
from persyk_conformance.run._outcomes import Outcome

FAKES = TESTS_DIR / "fakes"


def _waiting_plan(monkeypatch: pytest.MonkeyPatch, ready: threading.Event) -> list[bool]:
    """plan_cases, made to wait until ``ready`` is set: what it saw when it went on."""
    seen: list[bool] = []
    real = run_command.plan_cases

    def plan_cases(sandbox: Any, config: RunConfig) -> Any:
        seen.append(ready.wait(20))
        return real(sandbox, config)

    monkeypatch.setattr(run_command, "plan_cases", plan_cases)
    return seen


def test_the_run_s_adapter_starts_while_the_cases_are_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    greeted = threading.Event()
    real_start = _subprocess.SubprocessAdapter.start

    def start(self: _subprocess.SubprocessAdapter, timeout: float = 10.0) -> Any:
        hello = real_start(self, timeout)
        greeted.set()
        return hello

    monkeypatch.setattr(_subprocess.SubprocessAdapter, "start", start)
    seen = _waiting_plan(monkeypatch, greeted)
    record = execute(RunConfig(only=("G-001", "R-001"), harness=False, jobs=1))
    assert seen == [True], "the adapter was not started before the plan was made"
    assert record.passed and [r.id for r in record.results] == ["G-001", "R-001"]


def test_the_lane_processes_start_before_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    made = threading.Event()

    class Noted(_run_jobs.LaneProcess):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.set()

    monkeypatch.setattr(_run_jobs, "LaneProcess", Noted)
    seen = _waiting_plan(monkeypatch, made)
    record = execute(RunConfig(only=("G-00*", "R-00*"), harness=False, jobs=2))
    assert seen == [True], "no lane process was started before the plan was made"
    assert record.passed and record.aborted is None


def test_an_early_start_that_fails_is_the_first_case_s_error_with_its_stderr() -> None:
    impl = f"{sys.executable} {FAKES / 'crash_at_start.py'}"
    record = execute(RunConfig(impl=impl, only=("G-001", "R-001"), harness=False, jobs=2))
    first = record.results[0]
    assert first.outcome is Outcome.ERROR
    assert "the adapter did not start" in (first.reason or "")
    assert "giving up at once" in first.describe()


def test_a_usage_error_leaves_no_lane_process_and_no_adapter_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lanes: list[_run_jobs.LaneProcess] = []
    adapters: list[_subprocess.SubprocessAdapter] = []

    class Noted(_run_jobs.LaneProcess):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            lanes.append(self)

    real_spawn = _subprocess.SubprocessAdapter._spawn

    def spawn(self: _subprocess.SubprocessAdapter) -> None:
        adapters.append(self)
        real_spawn(self)

    monkeypatch.setattr(_run_jobs, "LaneProcess", Noted)
    monkeypatch.setattr(_subprocess.SubprocessAdapter, "_spawn", spawn)
    with pytest.raises(UsageProblem):
        execute(RunConfig(only=("NO-SUCH-CASE",), harness=False, jobs=2))
    assert lanes and all(lane._process.poll() is not None for lane in lanes)
    assert all(not adapter.alive for adapter in adapters)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_of_harness_checks_only_waits_for_the_early_start_never_starts_twice(
    monkeypatch: pytest.MonkeyPatch, jobs: int,
) -> None:
    # Such a run greets the adapter before its checks; the early start, still in its thread
    # (made slow here, as on a loaded machine), must be that greeting, not a second start on
    # the same adapter (which killed the first one half-way: every check an error).
    starts: list[int] = []
    real_start = _subprocess.SubprocessAdapter.start

    def slow_start(self: _subprocess.SubprocessAdapter, timeout: float = 10.0) -> Any:
        starts.append(1)
        time.sleep(0.5)
        return real_start(self, timeout)

    monkeypatch.setattr(_subprocess.SubprocessAdapter, "start", slow_start)
    impl = f"{sys.executable} {FAKES / 'accept_everything.py'}"
    record = execute(RunConfig(impl=impl, only=("H-101", "H-103"), jobs=jobs))
    assert {r.id: str(r.outcome) for r in record.results} == {
        "H-101": "unsupported", "H-103": "unsupported"}
    assert len(starts) == 1
