"""The capture harness checks (H-150..H-153) pass on the reference's adapter and catch broken
implementations, each broken on exactly what its check guards (tests/fakes/).

The real run kills at every kind of call first, then at a seeded sample up to 32 moments per
check; these tests give a budget of one (coverage alone), which is enough for the reference to
pass and for every fake to be caught: the moments are seeded, so the same ones are killed in
every run.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from _paths import TESTS_DIR
from fakes.casetree import write_cases
from persyk_conformance.adapters._in_process import InProcessAdapter
from persyk_conformance.adapters._interface import Adapter
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_conformance.cli import RunConfig, execute, main
from persyk_conformance.harness._registry import run_harness
from persyk_conformance.reports._run import dumps_report, render_junit, render_text
from test_harness_write import STRACE_PATHS, _strace_works, use_strace_path

CAPTURE_CHECKS = ("H-150", "H-151", "H-152", "H-153")
KILLING = ("H-150", "H-151", "H-153")  # the checks that kill through strace
FAKES = TESTS_DIR / "fakes"


needs_strace = pytest.mark.skipif(
    not _strace_works(), reason="H-150, H-151 and H-153 need strace and ptrace (Linux)")


def _adapters(argv: list[str]) -> Callable[[], Adapter]:
    return lambda: SubprocessAdapter(argv, env=dict(os.environ))


REFERENCE = [sys.executable, "-m", "persyk_session.cli", "adapter"]


@needs_strace
@pytest.mark.parametrize("strace_path", STRACE_PATHS)
def test_reference_passes_every_capture_check_as_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strace_path: str
) -> None:
    use_strace_path(monkeypatch, strace_path)
    results = run_harness(_adapters(REFERENCE), tmp_path, only=set(CAPTURE_CHECKS),
                                moments=3)
    assert [r.id for r in results] == list(CAPTURE_CHECKS)
    assert [(r.id, r.skipped, r.error, r.problems) for r in results if not r.passed
            or r.skipped or r.error] == []


_KILLING_FAKES = [
    ("H-150", "recovery_keeps_partial_frame", "a partial frame was kept",
     "recovery-keeps-a-partial-frame"),
    ("H-151", "recovery_ends_first", "differ from one uninterrupted recovery",
     "recovery-appends-before-it-repairs"),
    ("H-153", "delete_in_place", "partly removed at its place",
     "deletion-removes-before-it-renames"),
]


@pytest.mark.parametrize(
    ("check", "fake", "problem", "strace_path"),
    [
        # The killing checks catch their fake on both ways of starting the killed adapters.
        *(pytest.param(check, fake, problem, path.values[0], marks=[needs_strace, *path.marks],
                       id=f"{name}-{path.id}")
          for check, fake, problem, name in _KILLING_FAKES for path in STRACE_PATHS),
        pytest.param("H-152", "session_lock_first", "must take the asset lock first", "none",
                     id="session-lock-before-asset-lock"),
    ],
)
def test_each_broken_implementation_fails_its_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check: str, fake: str, problem: str,
    strace_path: str,
) -> None:
    use_strace_path(monkeypatch, strace_path)
    # A budget of one kill: what catches each fake is the coverage every run kills at first
    # (the first and last call of each kind), never the luck of the sample.
    [result] = run_harness(_adapters([sys.executable, str(FAKES / f"{fake}.py")]),
                           tmp_path, only={check}, moments=1)
    assert result.error is None and result.skipped is None
    assert not result.passed
    assert any(problem in text for text in result.problems), result.problems
    if check in KILLING[:2]:
        assert (result.explored or "").startswith("explored "), result.explored


def test_in_process_the_capture_checks_are_unsupported_with_the_reason(tmp_path: Path) -> None:
    results = run_harness(InProcessAdapter, tmp_path, only=set(CAPTURE_CHECKS))
    assert all(r.passed and r.skipped for r in results)
    assert all("adapter process" in (r.skipped or "") or "strace" in (r.skipped or "")
               for r in results), [r.skipped for r in results]


def test_without_the_capture_capability_the_checks_are_unsupported(tmp_path: Path) -> None:
    results = run_harness(_adapters(REFERENCE), tmp_path, only=set(CAPTURE_CHECKS),
                                capabilities=frozenset({"read", "append", "recover"}))
    assert {r.id: r.skipped for r in results} == {
        check: "the adapter lacks capture" for check in CAPTURE_CHECKS}


def test_without_the_wav_oracle_the_checks_say_so_instead_of_crashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.import_module

    def no_soundfile(name: str, package: str | None = None) -> ModuleType:
        if name == "soundfile":
            raise OSError("cannot load library 'libsndfile.so'")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_soundfile)
    results = run_harness(_adapters(REFERENCE), tmp_path, only={"H-150", "H-151"})
    for result in results:
        assert result.passed and result.error is None
        assert result.skipped is not None and "needs the WAV oracle" in result.skipped
        assert "libsndfile.so" in result.skipped


def test_the_run_lists_selects_and_reports_the_capture_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = str(write_cases(tmp_path / "cases"))
    assert main(["list", "--json", "--fixtures", tree, "--only", "H-15*"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["id"] for row in rows] == list(CAPTURE_CHECKS)
    assert all("capture" in row["requires"] and row["kind"] == "harness" for row in rows)
    assert main(["list", "--json", "--fixtures", tree, "--skip", "H-15*"]) == 0
    assert not {row["id"] for row in json.loads(capsys.readouterr().out)} & set(CAPTURE_CHECKS)
    assert main(["show", "H-153"]) == 0
    shown = capsys.readouterr().out
    assert "requires: read, capture" in shown and "whole at its place or gone" in shown
    # H-152 needs no strace: through `execute`, as `persyk-conformance run` runs it, and in
    # every report format.
    record = execute(RunConfig(fixtures=Path(tree), only=("H-152",), crash_moments=1))
    assert [(r.id, str(r.outcome)) for r in record.results] == [("H-152", "pass")]
    report = json.loads(dumps_report(record))
    assert [(c["id"], c["kind"], c["outcome"]) for c in report["cases"]] == [
        ("H-152", "harness", "pass")]
    assert 'name="H-152' in render_junit(record)
    assert "H-152" in render_text(record, verbose=True, quiet=False)


def test_crash_moments_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--crash-moments", "0"])
    assert exit_.value.code == 2
    assert "must be a positive whole number" in capsys.readouterr().err
