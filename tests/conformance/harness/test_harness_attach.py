"""Kill checks attach strace to a plainly started adapter: the probe decides where,
the attach is complete before the first request, and a kill at N hits the N-th call of the
recording on both ways of starting the traced adapters."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _paths import TESTS_DIR
from persyk_conformance.adapters._interface import Adapter, AdapterCrashed
from persyk_conformance.adapters._subprocess import Attached, SubprocessAdapter
from persyk_conformance.harness import _attach
from persyk_conformance.harness._attach import (
    ATTACH_ENV,
    StraceAttach,
    attach_permitted,
    attach_strace,
)
from persyk_conformance.harness._capture_kit import Strace
from persyk_conformance.harness._crash import Tracing, _scenarios, call, recording_options
from persyk_conformance.harness._moments import kill_points
from test_harness_write import STRACE_PATHS, _attach_works, _strace_works, use_strace_path

REFERENCE = [sys.executable, "-m", "persyk_session.cli", "adapter"]
needs_attach = pytest.mark.skipif(
    not _attach_works(), reason="attaching strace to a running process is not permitted here")


def _reference() -> Adapter:
    return SubprocessAdapter(REFERENCE, env=dict(os.environ))


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    _attach._probe.cache_clear()
    yield None
    _attach._probe.cache_clear()


def test_the_probe_refuses_attach_where_strace_cannot_attach(
    tmp_path: Path, fresh_probe: None
) -> None:
    # What strace says and does where Yama's ptrace_scope or a missing CAP_SYS_PTRACE refuses
    # ptrace of a process that is not its descendant.
    refusing = tmp_path / "strace"
    refusing.write_text("#!/bin/sh\necho 'strace: attach: ptrace(PTRACE_SEIZE, 1): "
                        "Operation not permitted' >&2\nexit 1\n")
    refusing.chmod(0o755)
    assert attach_permitted(str(refusing)) is False


def test_the_probe_refuses_attach_where_the_kill_does_not_land(
    tmp_path: Path, fresh_probe: None
) -> None:
    # A tracer that says it attached but never kills: the probe child writes its byte.
    silent = tmp_path / "strace"
    silent.write_text('#!/bin/sh\necho "strace: Process $5 attached" >&2\nsleep 1\n')
    silent.chmod(0o755)
    assert attach_permitted(str(silent)) is False


@needs_attach
def test_the_environment_forces_the_start_under_strace_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Tracing.for_factory(_reference).attach is True
    monkeypatch.setenv(ATTACH_ENV, "0")
    assert Tracing.for_factory(_reference).attach is False


@needs_attach
def test_the_attach_is_complete_before_the_first_request() -> None:
    # The child is blocked on its stdin and echoes the moment it reads: a byte sent before
    # strace had seized it would be echoed before the kill on its first write could land.
    strace = shutil.which("strace")
    assert strace is not None
    child = subprocess.Popen([sys.executable, "-I", "-S", "-c", _attach.ECHO],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    assert child.stdout.read(1) == b"r"
    tracer = attach_strace(strace, child.pid, (
        "-o", os.devnull, "-e", "trace=write", "-e", "inject=write:signal=KILL:when=1"), 10.0)
    try:
        child.stdin.write(b"x")
        child.stdin.close()
        assert child.wait(10) == -signal.SIGKILL
        assert child.stdout.read() == b""
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
        tracer.finish()


# --- the crux: a recording's numbering is the kill's ------------------------------------------

_CALL = re.compile(r"^(?:\[pid\s+)?\d+\]?\s+(\w+)\((.*)\)\s+=\s+(\S+)")
# Numbers and hex runs (a temporary name, a pipe inode) vary by run, as in the roles.
_VARYING = re.compile(r"[0-9a-f]{8,}|\d+")


def _calls(trace: str, syscall: str) -> list[tuple[str, str]]:
    """(arguments with their varying parts folded, return value) of each ``syscall`` of a trace."""
    found = []
    for line in trace.splitlines():
        match = _CALL.match(line)
        if match is not None and match.group(1) == syscall:
            found.append((_VARYING.sub("#", match.group(2)), match.group(3)))
    return found


def _recovering(session: Path) -> Callable[[Adapter], object]:
    def drive(adapter: Adapter) -> object:
        adapter.start(30.0)
        return call(adapter, "recover", {"session": str(session)}, 30.0)

    return drive


@pytest.mark.skipif(not _strace_works(), reason="needs strace and ptrace (Linux)")
@pytest.mark.parametrize("strace_path", STRACE_PATHS)
def test_a_kill_at_n_hits_the_nth_call_of_the_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strace_path: str
) -> None:
    """H-104's torn record, recovered once while recorded, then killed at every recorded
    call: the kill's own trace (of that system call, up to the kill) must end in a call with
    the recording's arguments for that number, cut by the kill (`= ?`)."""
    use_strace_path(monkeypatch, strace_path)
    tracing = Tracing.for_factory(_reference)
    assert tracing.attach is (strace_path == "attached")
    [(_name, committed, fragment), *_] = _scenarios()

    def torn() -> Path:
        # At one path every time: the traces name it, and must compare equal.
        session = tmp_path / "case" / "session"
        shutil.rmtree(session.parent, ignore_errors=True)
        session.mkdir(parents=True)
        (session / "session.jsonl").write_bytes(committed + fragment)
        return session

    recording = tmp_path / "record.txt"
    adapter = tracing.adapter(recording_options(recording))
    try:
        _recovering(torn())(adapter)
    finally:
        adapter.close()
    recorded = recording.read_text("utf-8", "surrogateescape")
    points = kill_points(recorded.encode("utf-8", "surrogateescape"))
    assert len(points) >= 5, recorded
    strace = Strace(tracing)
    for number, point in enumerate(points):
        trace = tmp_path / f"kill-{number}.txt"
        assert strace.kill_at(point.point, _recovering(torn()),
                              trace), point
        seen = _calls(trace.read_text("utf-8", "surrogateescape"), point.syscall)
        want = _calls(recorded, point.syscall)[point.nth - 1][0]
        assert len(seen) == point.nth and seen[-1] == (want, "?"), (point, seen[-1:], want)


@needs_attach
def test_an_adapter_gone_before_the_attach_is_a_crash_not_a_harness_error() -> None:
    # exit_after_hello exits the moment it has greeted; the hook waits until it has gone, so
    # strace finds no process to attach to: the adapter crashed, the harness did not fail.
    strace = shutil.which("strace")
    assert strace is not None
    attach = StraceAttach(strace, ("-o", os.devnull, "-e", "trace=?write"))

    def late(pid: int, timeout: float) -> Attached:
        deadline = time.monotonic() + timeout
        while Path(f"/proc/{pid}/status").read_text().find("State:\tZ") < 0:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        return attach(pid, timeout)

    fake = [sys.executable, str(TESTS_DIR / "fakes" / "exit_after_hello.py")]
    adapter = SubprocessAdapter(fake, env=dict(os.environ)).attached(late)
    try:
        with pytest.raises(AdapterCrashed, match="after its hello"):
            adapter.start(10.0)
    finally:
        adapter.kill()
