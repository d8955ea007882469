"""SIGTERM, SIGHUP and SIGINT during ``persyk-conformance run``, serial and on two lanes that are
processes, end the run the same way (cli/_run_signals.py): no case starts any more, every
adapter and its whole process group is killed (the helper the fake adapter started too), every
sandbox is removed, ``--report`` and ``--junit`` hold the cases that finished with ``aborted``
naming the signal, and the exit status is 128 + the signal's number. A second signal ends the
runner at once, without a report, still removing every sandbox and killing every adapter.

Broken variants these tests catch: SIGTERM or SIGHUP left to their default (the runner dies
with status -15 or -1: no report, sandboxes and ``.runner`` folders left in TMPDIR, the
adapter's ``sleep 900`` re-parented to init), a handler that exits without killing the
adapters' process groups, one that reports a case it cut short, a second signal that waits for
the reports or leaves a sandbox, a signal while the cases load that ends the run without one.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from _processes import MARK, processes_marked
from fakes.casetree import fake
from persyk_conformance.adapters import _processes
from persyk_conformance.cli import _run, main

# A helper per adapter start, in the adapter's process group, carrying MARK (the environment).
HELPER_ADAPTER = fake("helper_then_reference")


def _workspaces_seen(temp: Path) -> set[Path]:
    return {case for sandbox in temp.glob("persyk-conformance-*") if sandbox.is_dir()
            and not sandbox.name.endswith(".runner") for case in sandbox.glob("cases/*")}


def _start_run(tmp_path: Path, jobs: int, token: str) -> subprocess.Popen[str]:
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), MARK: token}
    return subprocess.Popen(
        [sys.executable, "-m", "persyk_conformance.cli", "run", "--no-harness", "-j", str(jobs),
         "--impl", HELPER_ADAPTER, "--report", str(tmp_path / "report.json"),
         "--junit", str(tmp_path / "junit.xml"), "-q", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )


def _wait_for_cases(lanes: int, temp: Path, proc: subprocess.Popen[str]) -> None:
    """Until cases have run on ``lanes`` sandboxes and a few have finished."""
    deadline = time.monotonic() + 120
    seen: set[Path] = set()
    while time.monotonic() < deadline and proc.poll() is None:
        seen |= _workspaces_seen(temp)
        if len({case.parent.parent for case in seen}) >= lanes and len(seen) > 4:
            return
        time.sleep(0.01)
    pytest.fail(f"the run did not run cases on {lanes} lane(s) (saw {sorted(seen)})")


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _assert_nothing_left(tmp_path: Path, token: str) -> None:
    survivors = processes_marked(token)
    for pid in survivors:  # never leave them to the next test
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], "adapter processes (the sleep 900 helper) outlived the run"
    assert list((tmp_path / "temp").iterdir()) == [], "sandboxes left in TMPDIR"


SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]


@pytest.mark.parametrize("jobs", [1, 2], ids=["serial", "two-lanes"])
@pytest.mark.parametrize("signum", SIGNALS, ids=[s.name for s in SIGNALS])
def test_signal_reports_what_finished_kills_every_adapter_and_exits_128_plus_signal(
    tmp_path: Path, jobs: int, signum: signal.Signals,
) -> None:
    token = secrets.token_hex(8)
    proc = _start_run(tmp_path, jobs, token)
    _wait_for_cases(jobs, tmp_path / "temp", proc)
    os.kill(proc.pid, signum)  # the runner's pid alone, as `kill` and a CI cancel send it
    _, err = _finish(proc)
    assert "Traceback" not in err, err
    assert proc.returncode == 128 + signum, err
    assert f"persyk-conformance: interrupted by {signum.name}" in err
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["footer"]["aborted"] == f"interrupted by {signum.name}"
    assert 0 < len(report["cases"]) < 900
    assert all(case["outcome"] == "pass" for case in report["cases"])  # none cut short
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    aborted = [e.get("message") for e in junit.iter("error") if e.get("type") == "aborted"]
    assert aborted == [f"interrupted by {signum.name}"]
    assert len(list(junit.iter("testcase"))) == len(report["cases"]) + 1  # the run's own
    _assert_nothing_left(tmp_path, token)


@pytest.mark.parametrize("jobs", [1, 2], ids=["serial", "two-lanes"])
def test_second_signal_ends_at_once_without_report_but_removes_every_sandbox(
    tmp_path: Path, jobs: int,
) -> None:
    token = secrets.token_hex(8)
    proc = _start_run(tmp_path, jobs, token)
    _wait_for_cases(jobs, tmp_path / "temp", proc)
    # Two kinds: two of one kind sent at once may arrive as one. Python runs the handlers of
    # signals that arrived together in the order of their numbers, so either may be second.
    os.kill(proc.pid, signal.SIGTERM)
    os.kill(proc.pid, signal.SIGHUP)
    _, err = _finish(proc)
    assert "Traceback" not in err, err
    second = signal.Signals(proc.returncode - 128)
    assert second in (signal.SIGTERM, signal.SIGHUP), err
    assert f"{second.name} again: stopped at once, no report" in err
    assert not (tmp_path / "report.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["temp"]  # no temporary report either
    _assert_nothing_left(tmp_path, token)


def test_the_same_signal_to_the_runner_and_its_group_at_once_is_one_stop(tmp_path: Path) -> None:
    """``timeout(1)`` and process managers send SIGTERM to the runner's pid and then to its
    process group: one stop, with its report, not a second signal."""
    token = secrets.token_hex(8)
    proc = _start_run(tmp_path, 1, token)
    _wait_for_cases(1, tmp_path / "temp", proc)
    os.kill(proc.pid, signal.SIGTERM)
    time.sleep(0.05)  # after the first was handled (sent at once, the kernel may merge them)
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = _finish(proc)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "again" not in err
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["footer"]["aborted"] == "interrupted by SIGTERM"
    _assert_nothing_left(tmp_path, token)


_LATE_COPY = """
import os, signal, sys
from persyk_conformance.cli._run_signals import RunStopped, watching_signals

class LateCopy:
    def __del__(self) -> None:  # runs while the interpreter tears its modules down
        os.kill(os.getpid(), signal.SIGTERM)

late = LateCopy()
try:
    with watching_signals() as watch:
        os.kill(os.getpid(), signal.SIGTERM)
except RunStopped:
    pass
sys.exit(watch.exit_status)
"""


def test_the_same_signal_arriving_while_the_interpreter_shuts_down_keeps_the_stop_status() -> None:
    """Python puts SIG_DFL back for every handled signal before it tears its modules down; the
    group's copy of the stop landing then must not turn status 143 into death by SIGTERM."""
    proc = subprocess.run([sys.executable, "-c", _LATE_COPY], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr


def test_sighup_with_its_terminal_gone_still_writes_the_reports_and_exits_129(
    tmp_path: Path,
) -> None:
    """A closed terminal: SIGHUP, and stdout (a terminal whose other end is closed) fails with
    EIO; the report files are written and the status is still SIGHUP's."""
    token = secrets.token_hex(8)
    temp = tmp_path / "temp"
    temp.mkdir()
    terminal, its_end = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "persyk_conformance.cli", "run", "--no-harness", "-j", "1",
         "--impl", HELPER_ADAPTER, "--report", str(tmp_path / "report.json"), "--no-progress"],
        stdout=its_end, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "TMPDIR": str(temp), MARK: token},
    )
    os.close(its_end)
    try:
        _wait_for_cases(1, temp, proc)
    finally:
        os.close(terminal)  # the terminal is gone
    os.kill(proc.pid, signal.SIGHUP)
    _, err = _finish(proc)
    assert "Traceback" not in err, err
    assert proc.returncode == 128 + signal.SIGHUP, err
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["footer"]["aborted"] == "interrupted by SIGHUP"
    _assert_nothing_left(tmp_path, token)


@pytest.mark.parametrize("jobs", [1, 2], ids=["serial", "two-lanes"])
@pytest.mark.parametrize("signum", SIGNALS, ids=[s.name for s in SIGNALS])
def test_signal_while_the_cases_load_reports_no_case_and_exits_128_plus_signal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    jobs: int, signum: signal.Signals,
) -> None:
    """The signal arrives after the adapter (and the lanes) started, before the first case:
    the run ends as after its first case, with a report of no case."""
    token = secrets.token_hex(8)
    temp = tmp_path / "temp"
    temp.mkdir()
    # Delivered to this process: its "the run is ending" flag, set for good, is this test's.
    monkeypatch.setattr(_processes, "_ending", threading.Event())
    monkeypatch.setenv(MARK, token)
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    load = _run.load_cases

    def load_then_signal(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signum)  # raised here, in the main thread, by the run's handler
        return load(*args, **kwargs)

    monkeypatch.setattr(_run, "load_cases", load_then_signal)
    status = main(["run", "--no-harness", "-j", str(jobs), "--impl", HELPER_ADAPTER,
                   "--report", str(tmp_path / "report.json"),
                   "--junit", str(tmp_path / "junit.xml"), "-q", "--no-progress"])
    err = capsys.readouterr().err
    assert status == 128 + signum, err
    assert f"persyk-conformance: interrupted by {signum.name}" in err
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["footer"]["aborted"] == f"interrupted by {signum.name}"
    assert report["cases"] == []
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    aborted = [e.get("message") for e in junit.iter("error") if e.get("type") == "aborted"]
    assert aborted == [f"interrupted by {signum.name}"]
    _assert_nothing_left(tmp_path, token)
