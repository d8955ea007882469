"""Ctrl-C during ``persyk-conformance run``, serial or on lanes that are processes:
the cases that run finish, the report holds what finished, the exit status is 130
(cli/_status.py), no traceback is printed, and no adapter, lane or sandbox outlives the run.

Broken variants these tests catch: a lane process left in the run's process group (the
terminal's SIGINT reaches it and it dies with a KeyboardInterrupt traceback on stderr), ``run``
returning its verdict instead of the interrupted status (exit 1), a lane that does not remove
its sandbox when stopped (a sandbox left behind).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_runner_hostile import MARK, _marked

# MARK is in the environment of every process the run starts; _marked finds them.


def _busy_workspaces(temp: Path) -> list[Path]:
    """The case workspaces in use now, one per lane that runs a case."""
    return [case for sandbox in temp.glob("persyk-conformance-*") if sandbox.is_dir()
            and not sandbox.name.endswith(".runner") for case in sandbox.glob("cases/*")]


def _wait_for_cases_on(lanes: int, temp: Path, proc: subprocess.Popen[str]) -> None:
    """Until cases have run on ``lanes`` sandboxes, and a few have finished."""
    deadline = time.monotonic() + 120
    seen: set[Path] = set()
    while time.monotonic() < deadline and proc.poll() is None:
        seen |= set(_busy_workspaces(temp))
        if len({case.parent.parent for case in seen}) >= lanes and len(seen) > 4:
            return
        time.sleep(0.01)
    pytest.fail(f"the run did not run cases on {lanes} lane(s) (saw {sorted(seen)})")


@pytest.mark.parametrize("jobs", [1, 2], ids=["serial", "two-lanes"])
def test_ctrl_c_reports_what_finished_and_exits_130_with_nothing_left(
    tmp_path: Path, jobs: int
) -> None:
    token = secrets.token_hex(8)
    env = {**os.environ, "TMPDIR": str(tmp_path), MARK: token}
    proc = subprocess.Popen(
        [sys.executable, "-m", "persyk_conformance.cli", "run", "--no-harness", "-j", str(jobs),
         "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,  # a process group of its own, as a terminal's job is
    )
    try:
        _wait_for_cases_on(jobs, tmp_path, proc)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err
    assert proc.returncode == 130, err
    assert "persyk-conformance: interrupted" in err
    report = json.loads(out)
    assert report["footer"]["aborted"] == "interrupted"
    assert 0 < len(report["cases"]) < 900
    assert all(case["outcome"] == "pass" for case in report["cases"])  # none cut half-way
    assert list(tmp_path.iterdir()) == []  # every sandbox, lane and trash removed
    assert _marked(token) == []
