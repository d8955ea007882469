"""The text report fits one screen and every hint in it runs as printed: the verdict
first and last, expected failures folded by reason like unsupported cases, one line per failing
case under ``-q``, an XPASS that says what to do, and a ``show`` hint with the run's own
``--fixtures`` and profile."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from _paths import CHECKOUT
from persyk_conformance.cases._load import default_root
from persyk_conformance.reports._run import plural, render_text, show_command
from persyk_conformance.run._outcomes import CaseResult, Outcome, RunRecord

ROOT = CHECKOUT


def _case(number: int, outcome: Outcome, *, reason: str | None = None,
          folder: str | None = None) -> CaseResult:
    return CaseResult(id=f"R-{number:03d}", title=f"case {number}", kind="rejection",
                      rules=("REC-5",), requires=("read",), outcome=outcome, duration_ms=1.0,
                      reason="the result does not match", step=1, op="validate",
                      mismatches=("/valid: expected false, got true",),
                      expected_failure=reason, level="MUST", folder=folder)


def _record(*results: CaseResult) -> RunRecord:
    return RunRecord(suite_version="0", protocol=1, implementation=None,
                     capabilities=("read",), command=None, mode="subprocess", platform={},
                     started_at="", finished_at="", duration_ms=10.0, results=results)


def _xfails(reasons: int, per_reason: int) -> list[CaseResult]:
    return [_case(r * per_reason + i + 1, Outcome.XFAIL, reason=f"does not check RULE-{r}")
            for r in range(reasons) for i in range(per_reason)]


def test_the_verdict_comes_first_and_again_last() -> None:
    lines = render_text(_record(_case(1, Outcome.FAIL), _case(2, Outcome.PASS))).splitlines()
    assert lines[1] == lines[-1]
    assert lines[1].startswith("FAILED: 1 pass, 1 fail in 0.01 s (2 cases)")


def test_expected_failures_are_folded_by_reason_and_capped() -> None:
    text = render_text(_record(*_xfails(reasons=12, per_reason=3)))
    assert "XFAIL       36 cases expected to fail, by reason (-v shows each):" in text
    assert text.count("does not check RULE-") == 8  # GROUPS_SHOWN
    assert "... 12 cases more, for 4 other reasons (-v lists each case)" in text
    assert "XFAIL       R-001" not in text
    assert len(text.splitlines()) < 30


def test_verbose_lists_every_expected_failure_with_its_reason() -> None:
    text = render_text(_record(*_xfails(reasons=12, per_reason=3)), verbose=True)
    assert text.count("\nXFAIL       R-") == 36
    assert "expected failure: does not check RULE-11" in text


def test_quiet_lists_each_failing_case_on_one_line_and_no_tables() -> None:
    record = _record(_case(1, Outcome.FAIL), _case(2, Outcome.CRASH), _case(3, Outcome.PASS),
                     *_xfails(reasons=2, per_reason=2))
    lines = render_text(record, quiet=True).splitlines()
    assert lines[2:] == ["", "FAIL        R-001  case 1", "CRASH       R-002  case 2"]
    assert lines[1].startswith("FAILED:")


def test_an_xpass_says_to_remove_the_entry_and_holds_no_blank_padding() -> None:
    text = render_text(_record(_case(1, Outcome.XPASS, reason="pretend")))
    block = text.split("XPASS       R-001  case 1\n", 1)[1].split("\n\n", 1)[0]
    assert "it passes now: remove its entry from the expected-failures file" in block
    assert all(line.strip() for line in block.splitlines()), block


def test_counts_of_one_are_singular() -> None:
    assert plural(1, "case") == "1 case" and plural(2, "case") == "2 cases"
    assert "(1 case)" in render_text(_record(_case(1, Outcome.PASS)))


def test_the_show_hint_of_an_installed_case_needs_no_fixtures_option() -> None:
    folder = Path(str(default_root())) / "rejection" / "R-001-utf8-lone-continuation-byte"
    result = _case(1, Outcome.FAIL, folder=str(folder))
    assert show_command(result) == "persyk-conformance show R-001"
    assert show_command(result, "dsh-v0").startswith("persyk-conformance show R-001 --profile")


def test_the_show_hint_after_run_fixtures_runs_as_printed(tmp_path: Path) -> None:
    """After ``run --fixtures DIR`` the hint names the same DIR; run it as printed."""
    source = ROOT / "fixtures" / "v1" / "rejection" / "R-001-utf8-lone-continuation-byte"
    mine = tmp_path / "my cases" / "rejection" / "R-9001-my-case"
    shutil.copytree(source, mine)
    manifest = mine / "case.json"
    manifest.write_text(manifest.read_text("utf-8").replace('"R-001"', '"R-9001"'), "utf-8")
    result = _case(9001, Outcome.FAIL, folder=str(mine))
    hint = show_command(result)
    assert "--fixtures" in hint
    words = shlex.split(hint)
    proc = subprocess.run([sys.executable, "-m", "persyk_conformance.cli", *words[1:]],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "R-9001" in proc.stdout


def _stderr_on_a_terminal(*args: str) -> str:
    """Run the runner with stderr on a pseudo-terminal (stdout a pipe) and return what the
    terminal showed."""
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "persyk_conformance.cli", "run",
                               "--in-process", "--only", "R-001,R-002", *args],
                              stdout=subprocess.PIPE, stderr=follower, timeout=120, check=False)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert proc.returncode == 0, proc.stdout
    return shown.decode("utf-8", "replace")


def test_the_progress_line_shows_on_a_terminal_with_quiet_and_not_with_no_progress() -> None:
    assert "[2/2]" in _stderr_on_a_terminal("-q")
    assert "[2/2]" not in _stderr_on_a_terminal("-q", "--no-progress")
