"""The runner survives adapters that attack its resources: endless output, stray processes,
special files, stderr floods, and adapters that test nothing (fakes in tests/fakes/)."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

import pytest
from fakes.casetree import fake, run, write_cases
from persyk_conformance.adapters import _subprocess
from persyk_conformance.cli import RunConfig, execute, main
from persyk_conformance.reports._run import render_markdown, render_text, report_json
from persyk_conformance.run._outcomes import Outcome, RunRecord


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cases(tmp_path_factory.mktemp("cases"))


def outcomes(record: RunRecord) -> dict[str, str]:
    return {r.id: str(r.outcome) for r in record.results}


@pytest.mark.parametrize("flags", [(), ("--line",)], ids=["endless-stream", "one-huge-line"])
def test_stdout_line_over_the_limit_is_a_crash(
    tree: Path, flags: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small limit keeps the test fast; the runner stops reading at the limit, so the fake's
    # 100 MiB (or endless) output is never held in memory.
    monkeypatch.setattr(_subprocess, "MAX_LINE_BYTES", 1 << 20)
    record = run(tree, fake("huge_line", *flags), "G-001", "R-001")
    assert outcomes(record) == {"G-001": "crash", "R-001": "crash"}
    assert "longer than 1048576 bytes" in (record.results[0].reason or "")


def test_background_child_of_the_adapter_does_not_outlive_the_run(
    tree: Path, tmp_path: Path
) -> None:
    lock_path = tmp_path / "child.lock"
    lock_path.touch()
    record = run(tree, fake("orphan_writer", str(lock_path)), "G-001")
    assert outcomes(record) == {"G-001": "pass"}
    # The child holds the lock while it lives; once the runner has killed the adapter's
    # process group, the lock can be taken. (It would otherwise be held for 30 s more.)
    fd = os.open(lock_path, os.O_RDWR)
    try:
        taken = threading.Event()

        def take() -> None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            taken.set()

        threading.Thread(target=take, daemon=True).start()
        assert taken.wait(10), "the adapter's background child is still alive after the run"
    finally:
        os.close(fd)


def test_special_file_left_by_a_read_fails_the_case_without_hanging(tree: Path) -> None:
    record = run(tree, fake("fifo_on_validate"), "G-001", "R-001")
    assert outcomes(record) == {"G-001": "fail", "R-001": "fail"}
    assert "read-only validate changed the workspace: created session/pipe" in (
        record.results[0].mismatches
    )


def test_stderr_tail_is_the_end_of_a_long_stderr(tree: Path) -> None:
    record = run(tree, fake("stderr_flood"), "R-001", timeout=10)  # 2 MiB take a moment
    result = record.results[0]
    assert result.outcome is Outcome.FAIL
    assert result.stderr.endswith("stderr_flood: the last words\n")


def test_canary_after_a_mebibyte_of_stderr_noise_is_found(tree: Path) -> None:
    record = run(tree, fake("leak_canary", "--stderr", "--noise"), "H-001", harness=True,
                 timeout=10)  # 2 MiB of noise take a moment on a loaded machine
    result = record.results[0]
    assert result.outcome is Outcome.FAIL
    assert any("stderr contains the canary" in m for m in result.mismatches), result.mismatches


@pytest.mark.parametrize(
    ("fake_name", "flags", "expected", "detail"),
    [
        ("silent_stdout", (), "crash", "stdout closed"),
        ("exit_after_hello", (), "crash", "exited with status 0"),
        ("bad_hello", ("--protocol", "2"), "error", "speaks protocol 2"),
        ("bad_hello", ("--no-capabilities",), "error", '"capabilities" is a required property'),
        ("bad_hello", ("--unknown-capability",), "error", '"teleport" is not one of'),
    ],
    ids=["closes-stdout", "exits-after-hello", "other-protocol", "no-capabilities",
         "unknown-capability"],
)
def test_broken_conversation_gets_its_outcome_and_reason(
    tree: Path, fake_name: str, flags: tuple[str, ...], expected: str, detail: str
) -> None:
    record = run(tree, fake(fake_name, *flags), "G-001", "R-001")
    assert outcomes(record) == {"G-001": expected, "R-001": expected}
    assert detail in (record.results[0].reason or "")
    assert not record.passed


def test_run_where_everything_is_unsupported_is_not_green(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = run(tree, fake("unsupported_everything"), "*")
    assert set(outcomes(record).values()) == {"unsupported"}
    assert not record.tested
    assert not record.passed
    assert report_json(record)["footer"]["tested"] is False
    assert "nothing tested" in render_text(record)
    assert "nothing tested" in render_markdown(record)
    status = main(["run", "--fixtures", str(tree), "--no-harness", "--timeout", "2",
                   "--impl", fake("unsupported_everything")])
    assert status == 1
    assert "FAILED (nothing tested" in capsys.readouterr().out


def test_run_with_some_unsupported_cases_can_pass(tree: Path) -> None:
    record = execute(RunConfig(fixtures=tree, only=("G-001",), harness=False))
    assert record.tested and record.passed
