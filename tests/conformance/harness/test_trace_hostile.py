"""The power-loss harness against adapters that try to fool its trace: a decoy fsync in a
forked child, syncfs of another file system, a trace flood; and an honest writer in two
processes that must pass. Each runs under strace (slow: run with -k)."""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import pytest
from _paths import TESTS_DIR
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_conformance.harness import _crash
from persyk_conformance.harness._powerloss import SCENARIOS
from persyk_conformance.harness._registry import HarnessResult, run_harness
from persyk_conformance.harness._trace import TraceBudget

FAKES = TESTS_DIR / "fakes"


def _strace_works() -> bool:
    try:
        _crash.strace_prefix()
    except _crash.CrashCheckUnsupported:
        return False
    return True


needs_strace = pytest.mark.skipif(not _strace_works(),
                                  reason="the power-loss checks need strace and ptrace (Linux)")


def _run(fake: str, tmp_path: Path, checks: set[str], env: dict[str, str] | None = None,
         **options: object) -> dict[str, HarnessResult]:
    argv = [sys.executable, str(FAKES / f"{fake}.py")]
    results = {}
    for check in sorted(checks):
        profile = "dsh-v0" if check.startswith("DH-") else "v1"
        factory = lambda p=profile: SubprocessAdapter(  # noqa: E731
            argv, env={**os.environ, **(env or {})}, profile=p)
        [result] = run_harness(factory, tmp_path, only={check}, profile=None, states=8,
                               **options)  # type: ignore[arg-type]
        results[check] = result
    return results


# The fakes that must fail every power-loss check, as powerloss_no_fsync does: what each does
# instead of an fsync of the workspace.
NO_REAL_SYNC = {
    "powerloss_decoy_fsync": "a forked child dup2s an unrelated file onto the descriptor",
    "powerloss_syncfs_elsewhere": "syncfs of /proc and /dev/shm",
}


@pytest.mark.slow
@needs_strace
@pytest.mark.parametrize("fake", sorted(NO_REAL_SYNC), ids=sorted(NO_REAL_SYNC))
def test_a_sync_of_another_object_fails_every_powerloss_check(tmp_path: Path, fake: str) -> None:
    results = _run(fake, tmp_path, set(SCENARIOS))
    assert {c: r.error for c, r in results.items() if r.error or r.skipped} == {}
    assert {c for c, r in results.items() if r.passed} == set()
    for check, result in results.items():
        assert any(p.startswith("missing sync: ") for p in result.problems), (check, result)


@pytest.mark.slow
@needs_strace
def test_an_honest_two_process_writer_passes_every_powerloss_check(tmp_path: Path) -> None:
    results = _run("powerloss_two_process_writer", tmp_path, set(SCENARIOS))
    assert {c: (r.error, r.skipped, r.problems) for c, r in results.items()
            if not r.passed or r.skipped or r.error} == {}


@needs_strace
def test_a_trace_flood_ends_at_the_budget_in_seconds(tmp_path: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began = time.monotonic()
    results = _run("powerloss_trace_flood", tmp_path, {"H-201"},
                   env={"PERSYK_FAKE_FLOOD_MIB": "16"},
                   trace_budget=TraceBudget(bytes=4 << 20, lines=100_000))
    took = time.monotonic() - began
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB
    result = results["H-201"]
    assert result.error is None and not result.passed
    [problem] = result.problems
    assert problem.startswith("TRACE_TOO_LARGE: one step wrote more than the budget of "
                              "4,194,304 bytes or 100,000 lines"), problem
    assert took < 30, took
    assert grown < 64 * 1024, grown  # the runner held no flood: under 64 MiB more at its peak


@needs_strace
@pytest.mark.parametrize("check", ["H-201", "H-202"])
def test_file_names_that_read_as_strace_syntax_do_not_upset_the_trace(
    tmp_path: Path, check: str
) -> None:
    result = _run("powerloss_hostile_names", tmp_path, {check})[check]
    assert (result.passed, result.error, result.problems) == (True, None, ())


@needs_strace
def test_a_shared_writable_mapping_of_the_session_is_unverifiable(tmp_path: Path) -> None:
    result = _run("powerloss_mmap_session", tmp_path, {"H-202"})["H-202"]
    assert result.error is None and not result.passed
    [problem] = result.problems
    assert problem.startswith("unverifiable: mmap of session/session.jsonl at call "), problem
