"""wait_exit: Popen.wait(timeout) without its polling sleeps, same answers."""

from __future__ import annotations

import subprocess
import sys

import pytest
from persyk_conformance.adapters import _processes
from persyk_conformance.adapters._processes import wait_exit


def _child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


def test_wait_exit_returns_the_exit_status_of_a_process_that_ends() -> None:
    assert wait_exit(_child("raise SystemExit(7)"), 30) == 7


def test_wait_exit_raises_timeout_while_the_process_lives_and_leaves_it_running() -> None:
    proc = _child("import time; time.sleep(60)")
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_exit(proc, 0.2)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_wait_exit_of_a_reaped_process_gives_its_known_status() -> None:
    proc = _child("pass")
    proc.wait()
    assert wait_exit(proc, 1) == 0


def test_without_pidfd_wait_exit_falls_back_to_popen_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pidfd(pid: int) -> int:
        raise OSError("no pidfd here")

    monkeypatch.setattr(_processes.os, "pidfd_open", no_pidfd)
    assert wait_exit(_child("raise SystemExit(3)"), 30) == 3
    proc = _child("import time; time.sleep(60)")
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_exit(proc, 0.2)
    finally:
        proc.kill()
        proc.wait()
