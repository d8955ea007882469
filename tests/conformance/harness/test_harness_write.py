"""The write harness (H-101..H-104) passes on the reference and catches broken writers."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _paths import TESTS_DIR
from persyk_conformance.adapters._in_process import InProcessAdapter
from persyk_conformance.adapters._interface import Adapter
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_conformance.cli import main
from persyk_conformance.harness import _crash as _harness_crash
from persyk_conformance.harness._attach import ATTACH_ENV, attach_permitted
from persyk_conformance.harness._registry import checks_for, run_harness
from persyk_session.adapter import dispatch


def _strace_works() -> bool:
    try:
        _harness_crash.strace_prefix()
    except _harness_crash.CrashCheckUnsupported:
        return False
    return True


def _attach_works() -> bool:
    strace = shutil.which("strace")
    return _strace_works() and strace is not None and attach_permitted(strace)


# Every killing check runs both ways it can start its adapters: attached after the
# hello where ptrace of a non-child is permitted, and under strace, the fallback elsewhere.
STRACE_PATHS = [
    pytest.param("attached", id="attached", marks=pytest.mark.skipif(
        not _attach_works(), reason="attaching strace to a running adapter is not permitted")),
    pytest.param("started-under-strace", id="started-under-strace"),
]


def use_strace_path(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """Make the crash checks of this test start their adapters the ``path`` way."""
    if path == "attached":
        monkeypatch.delenv(ATTACH_ENV, raising=False)
    else:
        monkeypatch.setenv(ATTACH_ENV, "0")


def _in_process() -> Adapter:
    return InProcessAdapter()


def _subprocess_factory(tmp_path: Path) -> Callable[[], Adapter]:
    def make() -> Adapter:
        return SubprocessAdapter(
            [sys.executable, "-m", "persyk_session.cli", "adapter"],
            env=dict(os.environ),
        )

    return make


@pytest.mark.slow
def test_reference_passes_every_write_check_in_process(tmp_path: Path) -> None:
    results = run_harness(_in_process, tmp_path)
    assert [r.id for r in results] == [c.id for c in checks_for("v1")]
    assert [(r.id, r.problems) for r in results if not r.passed] == []
    # H-104, the capture checks H-150..H-153 and the power-loss checks H-201.. kill, race or
    # trace adapter processes: in process there is none (without strace, the killing ones say
    # that first).
    process = "needs an adapter process (not the in-process adapter)"
    skipped = {r.id: r.skipped for r in results if r.skipped}
    assert sorted(skipped) == ["H-104", "H-150", "H-151", "H-152", "H-153",
                               *(f"H-20{n}" for n in range(1, 10)), "H-210", "H-211"]
    assert skipped["H-152"] == process
    assert all(why == process or "strace" in (why or "") for why in skipped.values())


_NO_STRACE = "H-104 needs strace and ptrace (Linux); not available here"


@pytest.mark.slow
@pytest.mark.skipif(not _strace_works(), reason=_NO_STRACE)
@pytest.mark.parametrize("strace_path", STRACE_PATHS)
def test_reference_recovery_survives_a_kill_at_every_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strace_path: str
) -> None:
    use_strace_path(monkeypatch, strace_path)
    # The fragment went straight to its final name; killed before its bytes were
    # written, the empty file blocked every later recover with IO_FAILED.
    [crash] = run_harness(
        _subprocess_factory(tmp_path), tmp_path / "work", only={"H-104"}
    )
    assert crash.skipped is None
    assert crash.passed, crash.problems
    # 22 calls in all, within the default budget: every one is killed at.
    assert "kill moments (every one;" in (crash.explored or ""), crash.explored


@pytest.mark.skipif(not _strace_works(), reason=_NO_STRACE)
@pytest.mark.parametrize("strace_path", STRACE_PATHS)
def test_non_restartable_recovery_fails_the_kill_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strace_path: str
) -> None:
    use_strace_path(monkeypatch, strace_path)
    # The torn-record scenario alone (the torn header one fails it too, at more cost).
    both = _harness_crash._scenarios
    monkeypatch.setattr(_harness_crash, "_scenarios", lambda: both()[:1])
    fake = [sys.executable, str(TESTS_DIR / "fakes" / "nonrestartable_recover.py")]

    def make() -> Adapter:
        return SubprocessAdapter(fake, env=dict(os.environ))

    # A budget of one: the first and last call of each kind alone catch it.
    [crash] = run_harness(make, tmp_path / "work", only={"H-104"}, moments=1)
    assert not crash.passed
    assert any("the rerun was refused" in p for p in crash.problems), crash.problems


@pytest.mark.slow
def test_reference_passes_concurrent_writers_as_processes(tmp_path: Path) -> None:
    [concurrent] = run_harness(
        _subprocess_factory(tmp_path), tmp_path / "work", only={"H-102"}
    )
    assert concurrent.passed, concurrent.problems


Override = Callable[[str, dict[str, Any]], dict[str, Any] | None]


def _faking(replace: Override) -> Callable[[], Adapter]:
    """An in-process reference whose answers ``replace`` may override (None = the real one)."""

    def answer(op: str, args: dict[str, Any]) -> dict[str, Any]:
        fake = replace(op, args)
        return fake if fake is not None else dispatch(op, args)

    return lambda: InProcessAdapter(
        answer, capabilities=frozenset({"read", "append", "recover", "paged-read"})
    )


def _recover_does_nothing(op: str, args: dict[str, Any]) -> dict[str, Any] | None:
    return {"result": {"action": "none", "preserved": None}} if op == "recover" else None


def _cursor_never_advances(op: str, args: dict[str, Any]) -> dict[str, Any] | None:
    if op == "read" and "cursor" in args:
        return dispatch(op, {k: v for k, v in args.items() if k != "cursor"})
    return None


@pytest.mark.parametrize(
    ("fake", "failing"),
    [(_recover_does_nothing, "H-101"), (_cursor_never_advances, "H-103")],
    ids=["recover-that-repairs-nothing", "cursor-that-restarts"],
)
def test_broken_writers_fail_their_check(
    tmp_path: Path, fake: Override, failing: str
) -> None:
    [result] = run_harness(_faking(fake), tmp_path, only={failing})
    assert not result.passed
    assert result.problems


def test_checks_without_the_capability_are_skipped_with_a_reason(tmp_path: Path) -> None:
    results = run_harness(_in_process, tmp_path, capabilities=frozenset({"read"}))
    assert all(r.skipped and "lacks" in r.skipped for r in results)


def test_a_run_of_harness_checks_only_names_the_implementation_it_ran(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No case runs, yet the report's header says which implementation answered the checks
    (the adapter is greeted once before them)."""
    assert main(["run", "--only", "H-103", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in report["cases"]] == ["H-103"]
    assert report["header"]["implementation"]["name"] == "persyk-session"
    assert "paged-read" in report["header"]["capabilities"]


def test_a_harness_only_run_against_an_adapter_that_cannot_start_stops_at_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--only", "H-103", "--impl", "false", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [c["outcome"] for c in report["cases"]] == ["error"]
    assert report["footer"]["aborted"].startswith("gave up on the adapter: the adapter did not")
