"""``run -j N``: a parallel run reports exactly what a serial run reports (the
same order, outcomes, progress and verdict; only timings differ), an exclusive check runs with
nothing beside it, a case that holds a lock or limits a resource runs apart from the others of
its kind but beside ordinary cases, and -j defaults to the CPUs this process may use.

Broken variants these tests catch: a scheduler that ignores exclusivity (``Board.take`` starting
an exclusive job while others run) fails the exclusive overlap tests; one that ignores
apartness (``_apart_running`` never set) fails the apart board test, the apart scheduler test
and the apart case test; one that still runs apart cases alone (``plan_jobs`` marking them
exclusive, the rule before) fails the apart case test's "ordinary beside" half and the apart
board test; results handed on in completion order instead of plan order (``InOrder``
bypassed) fails the report and progress comparison, because the apart cases S-20x start first
and so finish first; lanes that are threads only (no lane process, ``Lanes.spec`` None) fail
the lane-process test.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _paths import TESTS_DIR
from persyk_conformance._profiles import V1
from persyk_conformance.cases._load import load_cases
from persyk_conformance.cli import _run as run_command
from persyk_conformance.cli import _run_jobs, main
from persyk_conformance.cli._run import RunConfig, execute
from persyk_conformance.harness._crash import each_moment
from persyk_conformance.harness._registry import check_named, workers_for
from persyk_conformance.reports._run import dumps_report, render_junit, render_markdown
from persyk_conformance.run import _parallel
from persyk_conformance.run._parallel import Board, InOrder, Job, default_jobs, run_jobs

FAKES = TESTS_DIR / "fakes"
# A few dozen fixture cases, among them apart ones (a held lock, lockTimeout: S-20x),
# the generated canary H-001 and a cheap harness check (H-103, a cursor walk).
SELECTION = ("G-00*", "G-01*", "R-00*", "S-00*", "S-20*", "H-001", "H-103")


def _untimed(text: str) -> str:
    """A report with its timings (durations, clock times) blanked."""
    text = re.sub(r'"(duration_ms|started_at|finished_at)": [^,}\n]+', r'"\1": "_"', text)
    text = re.sub(r'\b(time|timestamp)="[^"]*"', r'\1="_"', text)
    return re.sub(r"\b[0-9]+(\.[0-9]+)? ?(ms|s)\b", "_ s", text)


def _run(jobs: int) -> dict[str, str]:
    progress = io.StringIO()
    record = execute(RunConfig(only=SELECTION, jobs=jobs), progress)
    assert record.aborted is None
    return {
        "json": _untimed(dumps_report(record)),
        "junit": _untimed(render_junit(record)),
        "markdown": _untimed(render_markdown(record)),
        "progress": progress.getvalue(),
        "verdict": f"passed={record.passed}",
    }


@pytest.fixture(scope="module")
def serial_and_parallel() -> tuple[dict[str, str], dict[str, str]]:
    return _run(1), _run(2)


@pytest.mark.parametrize("what", ["json", "junit", "markdown", "progress", "verdict"])
def test_parallel_run_reports_what_the_serial_run_reports(
    serial_and_parallel: tuple[dict[str, str], dict[str, str]], what: str
) -> None:
    serial, parallel = serial_and_parallel
    assert parallel[what] == serial[what]


def test_the_selection_holds_apart_cases_and_a_harness_check(
    serial_and_parallel: tuple[dict[str, str], dict[str, str]],
) -> None:
    """What makes the comparison above able to fail: apart cases that start (and finish)
    before the cases planned ahead of them, and a harness check on a lane of its own."""
    ids = [case["id"] for case in json.loads(serial_and_parallel[0]["json"])["cases"]]
    assert len(ids) >= 30 and ids[-1] == "H-103" and "H-001" in ids
    assert {"S-200", "S-203"} <= set(ids) and ids.index("S-200") > ids.index("G-001")
    assert "H-001 " in serial_and_parallel[0]["progress"]
    assert "H-103 running: " in serial_and_parallel[0]["progress"]


# --- exclusive checks run alone, apart cases one at a time ------------------------------------


def _case(root: Path, case_id: str, *, hold_lock: bool) -> None:
    kind = {"G": "golden", "S": "scenario"}[case_id[0]]
    case = root / kind / f"{case_id}-logged"
    (case / "tree" / "session").mkdir(parents=True)
    (case / "tree" / "session" / "session.jsonl").write_bytes(
        b'{"type":"session","version":1,"id":"s1","timestamp":"2026-01-01T00:00:00Z"}\n')
    step: dict[str, Any] = {"op": "validate", "args": {"session": "session"},
                            "expect": {"valid": True}}
    if hold_lock:
        step["harness"] = {"holdLock": "session/session.lock"}
    (case / "case.json").write_text(json.dumps({
        "id": case_id, "kind": kind, "title": "a logged validate", "rules": ["REC-1"],
        "level": "MUST", "requires": ["read"], "steps": [step, step, step],
    }))


def _intervals(log: list[str]) -> dict[str, tuple[int, int]]:
    """Each case's first and last line in the log."""
    spans: dict[str, tuple[int, int]] = {}
    for number, line in enumerate(log):
        case = line.split()[1]
        first, _ = spans.get(case, (number, number))
        spans[case] = (first, number)
    return spans


def test_a_case_holding_a_lock_runs_beside_ordinary_cases_never_beside_another_such_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = tmp_path / "fixtures"
    for n in range(1, 13):
        _case(fixtures, f"G-{n:03d}", hold_lock=False)
    apart = ("S-001", "S-002", "S-003")
    for case_id in apart:
        _case(fixtures, case_id, hold_lock=True)
    log = tmp_path / "log"
    monkeypatch.setenv("PERSYK_FAKE_LOG", str(log))
    record = execute(RunConfig(impl=f"{sys.executable} {FAKES / 'logs_each_step.py'}",
                               fixtures=fixtures, harness=False, jobs=3, confine=False))
    assert record.passed and len(record.results) == 15
    lines = log.read_text().splitlines()
    spans = _intervals(lines)
    beside_any: set[str] = set()
    for case_id in apart:
        first, last = spans[case_id]
        beside = {line.split()[1] for line in lines[first : last + 1]} - {case_id}
        assert not beside & set(apart), f"{case_id} ran beside {sorted(beside & set(apart))}"
        beside_any |= beside
    # Ordinary cases ran beside them (the lanes did not idle through the lock waits) ...
    assert beside_any, "every case holding a lock ran alone"
    # ... and beside each other: otherwise this test proves nothing of -j.
    ordinary = sorted((span for case, span in spans.items() if case not in apart))
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(ordinary))


def test_a_case_is_apart_when_a_step_holds_a_lock_limits_the_file_size_or_sets_a_deadline(
) -> None:
    cases = {c.id: c for c in load_cases(None, V1)}
    assert all(_parallel.case_is_apart(cases[i]) for i in ("S-200", "S-210", "S-959", "S-980"))
    assert not any(_parallel.case_is_apart(cases[i]) for i in ("G-001", "S-312", "S-510"))


def test_the_board_starts_an_exclusive_job_only_when_nothing_runs() -> None:
    jobs = [Job(0, "a", 1.0), Job(1, "x", 1.0, exclusive=True), Job(2, "b", 1.0)]
    board = Board([jobs[0], jobs[1], jobs[2]])
    assert board.take() == jobs[0]
    assert board.take() is None  # x waits for a; b waits behind x
    board.done(jobs[0])
    assert board.take() == jobs[1]
    assert board.take() is None  # nothing beside x
    board.done(jobs[1])
    assert board.take() == jobs[2] and board.take() is None and board.empty


def test_the_board_starts_an_apart_job_beside_ordinary_ones_never_beside_another_apart_one(
) -> None:
    a1, a2, b, c = (Job(0, "a1", 1.0, apart=True), Job(1, "a2", 1.0, apart=True),
                    Job(2, "b", 1.0), Job(3, "c", 1.0))
    board = Board([a1, a2, b, c])
    assert board.take() == a1
    assert board.take() == b  # overtakes a2, which waits for a1
    board.done(a1)
    assert board.take() == a2  # first again once a1 is done: never starved
    assert board.take() == c and board.take() is None and board.empty


def test_exclusive_jobs_start_first_then_the_longest_apart_ones_first_among_equals() -> None:
    jobs = [Job(0, "case", 0.005), Job(1, "lock", 0.005, apart=True),
            Job(2, "H-104", 15.0), Job(3, "H-150", 31.0), Job(4, "H-102", 3.0, exclusive=True)]
    assert [j.key for j in _parallel.start_order(jobs)] == [
        "H-102", "H-150", "H-104", "lock", "case"]


def test_results_are_handed_on_in_plan_order_whatever_order_they_finish_in() -> None:
    handed: list[tuple[int, str]] = []
    reached: list[int] = []
    ordered: InOrder[str] = InOrder(4, lambda n, r: handed.append((n, r)), reached.append)
    ordered.begin()
    for index in (2, 0, 3, 1):
        ordered.add(index, f"r{index}")
    assert handed == [(0, "r0"), (1, "r1"), (2, "r2"), (3, "r3")]
    assert reached == [0, 1, 2, 3]


def test_no_job_runs_beside_an_exclusive_one_on_many_lanes() -> None:
    """The scheduler's own guarantee, without adapters: count what runs at each start."""
    lock = threading.Lock()
    running: list[str] = []
    seen_beside: dict[str, set[str]] = {}
    gate = threading.Event()

    def work(_lane: int, job: Job) -> str:
        with lock:
            running.append(job.key)
            for key in running:
                seen_beside.setdefault(key, set()).update(set(running) - {key})
        gate.wait(0.01)  # a moment in which others could start, if the board let them
        with lock:
            running.remove(job.key)
        return job.key

    jobs = [Job(n, f"j{n}", 1.0, exclusive=n % 5 == 0) for n in range(30)]
    out: list[str] = []
    run_jobs(jobs, 4, work, lambda _n, key: out.append(key))
    assert out == [job.key for job in jobs]
    for job in jobs:
        if job.exclusive:
            assert not seen_beside.get(job.key), (job.key, seen_beside[job.key])
    assert any(seen_beside.get(job.key) for job in jobs if not job.exclusive)


def test_no_apart_job_runs_beside_another_on_many_lanes() -> None:
    """The scheduler's own guarantee, without adapters: what runs at each start."""
    lock = threading.Lock()
    running: list[Job] = []
    apart_pairs: list[tuple[str, str]] = []
    beside_ordinary = 0

    def work(_lane: int, job: Job) -> str:
        nonlocal beside_ordinary
        with lock:
            if job.apart:
                apart_pairs.extend((other.key, job.key) for other in running if other.apart)
                beside_ordinary += any(not other.apart for other in running)
            running.append(job)
        time.sleep(0.005)  # a moment in which others could start, if the board let them
        with lock:
            running.remove(job)
        return job.key

    jobs = [Job(n, f"j{n}", 1.0, apart=n % 3 == 0) for n in range(30)]
    out: list[str] = []
    run_jobs(jobs, 4, work, lambda _n, key: out.append(key))
    assert out == [job.key for job in jobs]
    assert not apart_pairs
    assert beside_ordinary


def test_timing_sensitive_harness_checks_are_exclusive() -> None:
    assert all(check_named(i).exclusive for i in ("H-102", "H-152", "DH-102"))
    assert not check_named("H-150").exclusive


# --- the default of -j -------------------------------------------------------------------------


def test_jobs_default_to_the_cpus_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: {0, 2, 5},
                        raising=False)
    monkeypatch.setattr(_parallel.os, "cpu_count", lambda: 64)
    assert default_jobs() == 3


def test_jobs_fall_back_to_the_machines_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(_parallel.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(_parallel.os, "cpu_count", lambda: 5)
    assert default_jobs() == 5
    monkeypatch.setattr(_parallel.os, "cpu_count", lambda: None)
    assert default_jobs() == 1


@pytest.mark.parametrize(("argv", "jobs"), [((), 3), (("-j", "1"), 1), (("--jobs", "4"), 4)],
                         ids=["default", "j1", "jobs4"])
def test_run_takes_its_jobs_from_the_option_or_the_cpus(
    monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...], jobs: int
) -> None:
    configs: list[RunConfig] = []

    def record_only(config: RunConfig, _progress: Any = None) -> Any:
        configs.append(config)
        raise SystemExit(0)

    monkeypatch.setattr(run_command, "default_jobs", lambda: 3)
    monkeypatch.setattr(run_command, "execute", record_only)
    with pytest.raises(SystemExit):
        main(["run", "--only", "G-001", *argv])
    assert [c.jobs for c in configs] == [jobs]


@pytest.mark.parametrize(("argv", "note"), [(("-j", "2"), True), ((), False)],
                         ids=["explicit-j", "default-j"])
def test_in_process_runs_serially_and_says_so_when_asked_for_more(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...], note: bool,
) -> None:
    monkeypatch.setattr(run_command, "default_jobs", lambda: 2)
    lanes_made: list[object] = []
    monkeypatch.setattr(run_command, "Lanes", lambda *a, **k: lanes_made.append(a))
    status = main(["run", "--in-process", "--no-harness", "--only", "R-001,R-002", "-q", *argv])
    assert status == 0 and lanes_made == []
    assert ("--in-process runs serially (-j 2 ignored)" in capsys.readouterr().err) is note


def test_cases_past_the_first_lane_run_in_lane_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's own work per case runs beside the first lane's, not under its lock: the
    other lane takes its cases to a process of its own (run/_lane_process.py)."""
    answered: list[str] = []

    class Counted(_run_jobs.LaneProcess):
        def run_case(self, planned: Any, expected: str | None,
                     gave_up: str | None) -> tuple[Any, str | None]:
            result, gave_up_now = super().run_case(planned, expected, gave_up)
            answered.append(result.id)
            return result, gave_up_now

    monkeypatch.setattr(_run_jobs, "LaneProcess", Counted)
    record = execute(RunConfig(only=("G-00*", "G-01*"), harness=False, jobs=2))
    assert record.passed and record.aborted is None
    assert answered, "no case ran in a lane process"
    assert set(answered) < {r.id for r in record.results}  # and the first lane ran some


class _NeverReady(_run_jobs.LaneProcess):
    def wait_ready(self, timeout: float) -> None:
        raise _run_jobs.LaneDied("a lane process did not start within 1 s (exit status None)")


class _NoProcess(_run_jobs.LaneProcess):
    def __init__(self, *args: Any) -> None:
        raise OSError(11, "Resource temporarily unavailable")


@pytest.mark.parametrize("broken", [_NeverReady, _NoProcess], ids=["never-ready", "no-process"])
def test_a_lane_process_that_does_not_start_becomes_a_thread_lane_with_the_same_results(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], broken: type
) -> None:
    # A machine out of processes, or a lane that hangs at start, must not cost the run: the
    # lane runs in a thread of the runner, as lanes did before they were processes.
    selection = ("G-00*", "G-01*", "R-00*")
    serial = execute(RunConfig(only=selection, harness=False, jobs=1))
    monkeypatch.setattr(_run_jobs, "LaneProcess", broken)
    parallel = execute(RunConfig(only=selection, harness=False, jobs=2))
    assert parallel.aborted is None and parallel.passed
    assert _untimed(dumps_report(parallel)) == _untimed(dumps_report(serial))
    assert "lane 2: " in capsys.readouterr().err


# --- crash checks count against -j -------------------------------------------------------------


class _Idle:
    """The clean adapter each worker of a crash check starts: here it only counts."""

    def start(self, timeout: float) -> None:
        pass

    def close(self) -> None:
        pass


def _most_at_once(workers: int, moments: int) -> int:
    running, most, lock = 0, 0, threading.Lock()
    overlap = threading.Barrier(min(workers, moments), timeout=10)

    def run(number: int, moment: int, clean: object) -> bool:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            if number <= min(workers, moments):  # the first of each lane waits for the others
                overlap.wait()
        finally:
            with lock:
                running -= 1
        return True

    fired = each_moment(_Idle, 10.0, list(range(moments)), run, workers)  # type: ignore[arg-type]
    assert fired == moments
    return most


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_crash_check_runs_as_many_killed_adapters_at_once_as_it_is_given(workers: int) -> None:
    assert _most_at_once(workers, moments=7) == workers


def test_a_run_of_j_n_gives_its_crash_checks_n_workers_and_at_most_four() -> None:
    assert [workers_for(jobs) for jobs in (0, 1, 2, 3, 4, 8)] == [1, 1, 2, 3, 4, 4]


@pytest.mark.parametrize(("jobs", "only"), [(1, ("H-103",)), (1, ("G-001", "H-103")),
                                            (3, ("G-001", "H-103"))])
def test_the_run_hands_its_jobs_to_every_harness_check(
    monkeypatch: pytest.MonkeyPatch, jobs: int, only: tuple[str, ...]
) -> None:
    """-j 1 runs one killed adapter at a time (README: one after the other), -j N up to N."""
    given: list[int] = []
    real = run_command.harness_results

    def recorded(*args: Any, **kwargs: Any) -> Any:
        given.append(kwargs["workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(run_command, "harness_results", recorded)
    monkeypatch.setattr(_run_jobs, "harness_results", recorded)
    record = execute(RunConfig(only=only, jobs=jobs))
    assert record.passed and given == [workers_for(jobs)]
