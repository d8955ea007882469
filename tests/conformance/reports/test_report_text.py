"""The text report fits one screen and every hint in it runs as printed: the verdict
first and last, many failing cases grouped by error kind (each said once, with its count) and
rule, expected failures folded by reason like unsupported cases, one line per failing case
under ``-q``, an XPASS that says what to do, and a ``show`` hint with the run's own
``--fixtures`` and profile. The Node example's first run fits 60 lines."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.cases._load import default_root
from persyk_conformance.reports._run import plural, render_text, show_command
from persyk_conformance.run._outcomes import CaseResult, Outcome, RunRecord

ROOT = CHECKOUT


def _case(number: int, outcome: Outcome, *, reason: str | None = None,
          folder: str | None = None, rule: str = "REC-5",
          why: str = "the result does not match",
          mismatch: str = "/valid: expected false, got true") -> CaseResult:
    return CaseResult(id=f"R-{number:03d}", title=f"case {number}", kind="rejection",
                      rules=(rule, "REC-1"), requires=("read",), outcome=outcome,
                      duration_ms=1.0, reason=why, step=1, op="validate",
                      mismatches=(mismatch,), expected_failure=reason, level="MUST",
                      folder=folder)


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


def test_quiet_lists_each_failing_case_on_one_line_and_ends_with_the_verdict() -> None:
    record = _record(_case(1, Outcome.FAIL), _case(2, Outcome.CRASH), _case(3, Outcome.PASS),
                     *_xfails(reasons=2, per_reason=2))
    lines = render_text(record, quiet=True).splitlines()
    assert lines[2:-1] == ["", "FAIL        R-001  case 1", "CRASH       R-002  case 2"]
    assert lines[1].startswith("FAILED:") and lines[-1] == lines[1]


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


@pytest.mark.slow
def test_the_progress_line_shows_on_a_terminal_with_quiet_and_not_with_no_progress() -> None:
    assert "[2/2]" in _stderr_on_a_terminal("-q")
    assert "[2/2]" not in _stderr_on_a_terminal("-q", "--no-progress")


# --- many failing cases: grouped by error kind and rule ----------------------------------------

PROTOCOL = 'protocol violation: /: "truncated" is a required property'


def _failures(rules: int, per_rule: int, *, why: str = "the result does not match",
              start: int = 1) -> list[CaseResult]:
    return [_case(start + r * per_rule + i, Outcome.FAIL, rule=f"ENT-{r + 1}", why=why)
            for r in range(rules) for i in range(per_rule)]


def test_a_few_failing_cases_are_each_a_block() -> None:
    text = render_text(_record(*_failures(rules=1, per_rule=5)))
    assert text.count("look at it: persyk-conformance show R-") == 5
    assert "FAILING" not in text


def test_many_failing_cases_are_grouped_by_error_kind_then_first_rule() -> None:
    results = [*_failures(rules=3, per_rule=4),
               *_failures(rules=1, per_rule=2, why="the adapter lied", start=100)]
    text = render_text(_record(*results))
    assert "FAILING     14 cases, by error kind and first rule (-v shows each case in full):" \
        in text
    assert ("  FAIL: validate: the result does not match: /valid: expected false, got true "
            "(12 cases)") in text
    assert "       4  ENT-1    R-001, R-002, R-003, R-004\n" in text
    assert "       4  ENT-3    R-009, R-010, R-011, R-012\n" in text
    assert "  FAIL: validate: the adapter lied: /valid: expected false, got true (2 cases)" in text
    assert "look at it:" not in text and "\nFAIL        R-" not in text


def test_a_message_repeated_by_every_case_is_printed_once_with_its_count() -> None:
    results = [replace(_case(n, Outcome.ERROR, rule=f"ENT-{n % 40}", why=PROTOCOL),
                       mismatches=()) for n in range(1, 946)]
    text = render_text(_record(*results))
    assert text.count('"truncated" is a required property') == 1
    assert f"ERROR: validate: {PROTOCOL} (945 cases)" in text
    assert len(text.splitlines()) <= 60


def test_groups_past_the_budget_are_counted_not_listed() -> None:
    results = [_case(n, Outcome.FAIL, rule=f"ENT-{n}", why=f"reason {n}")
               for n in range(1, 41)]
    text = render_text(_record(*results))
    listed = [line for line in text.splitlines() if line.startswith("  FAIL: validate: reason")]
    assert 3 <= len(listed) < 40
    assert f"  ... {40 - len(listed)} cases more, of {40 - len(listed)} other error kinds " \
        "(-v lists each case)" in text
    assert len(text.splitlines()) <= 40


def test_verbose_shows_every_failing_case_as_a_block() -> None:
    text = render_text(_record(*_failures(rules=3, per_rule=4)), verbose=True)
    assert text.count("look at it: persyk-conformance show R-") == 12
    assert "FAILING" not in text


def test_quiet_stays_one_line_per_failing_case_when_there_are_many() -> None:
    lines = render_text(_record(*_failures(rules=3, per_rule=4)), quiet=True).splitlines()
    assert len(lines) == 3 + 12 + 1 and lines[-1] == lines[1]


@pytest.mark.slow
def test_the_node_examples_first_run_fits_one_screen() -> None:
    """The Node example without its expected-failures file: hundreds of failing cases, a few
    error kinds, one screen, the verdict first and last."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs Node.js (node on PATH): install it to run the example adapter")
    proc = subprocess.run(
        [sys.executable, "-m", "persyk_conformance.cli", "run", "--impl",
         f"{shlex.quote(node)} {shlex.quote(str(ROOT / 'examples/node-adapter/adapter.js'))}",
         "--no-progress", "-j", "2"],
        capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) <= 60, proc.stdout
    assert lines[1].startswith("FAILED:") and lines[-1] == lines[1]
    assert "FAILING     " in proc.stdout and "(-v shows each case in full)" in proc.stdout
    documented = re.search(r"cases, prints (\d+) lines",
                           (ROOT / "docs/implementers/implementers.md").read_text("utf-8"))
    assert documented is not None and int(documented[1]) == len(lines), (
        "docs/implementers/implementers.md states another line count for this run")
