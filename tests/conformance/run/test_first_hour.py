"""What a newcomer trips on in the first hour. Two selections are not usage errors:
``--skip MAY`` where no case has that level, and an expected-failures file whose entries name
cases the run leaves out (the Node example's own file under ``--no-harness``); a typo still is.
``bench --help`` does not show ``compare`` as required."""

from __future__ import annotations

from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.cases._select import Selectable, SelectionError, select
from persyk_conformance.cli import main

ROOT = CHECKOUT
ITEMS = [Selectable("R-001", "rejection", ("REC-2",), "MUST", ("read",)),
         Selectable("R-002", "rejection", ("REC-2",), "SHOULD", ("read",))]


def test_skipping_a_level_no_case_has_drops_nothing() -> None:
    assert [i.id for i in select(ITEMS, skip=["MAY"])] == ["R-001", "R-002"]


def test_only_a_level_no_case_has_and_a_misspelt_level_are_still_usage_errors() -> None:
    with pytest.raises(SelectionError):
        select(ITEMS, only=["MAY"])
    with pytest.raises(SelectionError):
        select(ITEMS, skip=["SHOLD"])


def test_expected_failures_for_cases_the_run_leaves_out_are_ignored(tmp_path: Path) -> None:
    entries = tmp_path / "known.txt"
    entries.write_text("H-002: the example never runs the canaries\nR-047: not checked\n",
                       "utf-8")
    status = main(["run", "--in-process", "--no-harness", "--only", "R-001", "-q",
                   "--expected-failures", str(entries)])
    assert status == 0


def test_an_expected_failure_for_no_case_of_the_suite_is_still_refused(tmp_path: Path) -> None:
    entries = tmp_path / "known.txt"
    entries.write_text("R-999999: a stale entry\n", "utf-8")
    assert main(["run", "--in-process", "--no-harness", "--only", "R-001", "-q",
                 "--expected-failures", str(entries)]) == 2


def test_the_node_examples_own_file_works_with_no_harness() -> None:
    status = main(["run", "--in-process", "--no-harness", "--only", "R-001", "-q",
                   "--expected-failures",
                   str(ROOT / "examples" / "node-adapter" / "expected-failures.txt")])
    assert status in (0, 1)  # a verdict, not a usage error (exit 2)


def test_bench_usage_shows_compare_as_optional(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    usage = capsys.readouterr().out.split("\n\n", 1)[0]
    assert "[compare OLD NEW]" in usage
    assert "\n                                compare ..." not in usage


def test_the_fuzzer_marks_invisible_characters_as_show_does() -> None:
    from persyk_conformance.cli._fuzz import _brief
    from persyk_conformance.reports._show import escape_bytes, mark_invisible

    session = '{"type":"session","id":"\ufeffx"}\n'.encode()
    (line,) = escape_bytes(session)
    assert "⟨U+FEFF⟩" in line and "\ufeff" not in line
    assert _brief(line) == line
    assert "⟨U+FEFF⟩" in _brief({"text": "\ufeff\u200b"})
    assert "⟨U+200B⟩" in _brief({"text": "\ufeff\u200b"})
    assert mark_invisible("plain é") == "plain é"


def test_a_closed_pipe_ends_the_runner_without_a_traceback() -> None:
    import shlex
    import subprocess
    import sys

    runner = shlex.join([sys.executable, "-m", "persyk_conformance.cli", "list"])
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {runner} | head -1"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.stdout.startswith("G-001")
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert proc.returncode == 141  # 128 + SIGPIPE, as a C program killed by it says


def test_asset_verify_and_write_each_show_their_own_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from persyk_session.cli import main as session_main

    for action, mine, theirs in (("verify", "--sha256", "--mime-type"),
                                 ("write", "--mime-type", "--sha256")):
        with pytest.raises(SystemExit):
            session_main(["asset", action, "--help"])
        shown = capsys.readouterr().out
        assert mine in shown and theirs not in shown, shown
