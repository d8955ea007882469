"""``persyk-conformance fuzz --expected-failures FILE`` (docs/implementers/strategies.md, "Known
gaps"): a disagreement about a listed case's error codes or rules is counted for it and fuzzing
goes on; any other still stops the run. The implementation is the reference with graph findings
left out (tests/fakes/graph_gaps.py): one gap listed, then a second one that is not."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from _paths import TESTS_DIR
from persyk_conformance import cli
from persyk_conformance.cases._load import load_cases
from persyk_conformance.fuzz._known import KnownGap, differing_codes, gaps_of, known_cases

GAPS = shlex.join([sys.executable, str(TESTS_DIR / "fakes" / "graph_gaps.py")])
LABELS, REMOVALS = "LABEL_TARGET_NOT_FOUND", "REMOVAL_TARGET_NOT_FOUND"


def _fuzz(gaps: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # A process of its own, as a user runs it: hypothesis draws for a seed depend on what the
    # same process drew before.
    return subprocess.run(
        [sys.executable, "-m", "persyk_conformance.cli", "fuzz", "--impl", GAPS,
         "--examples", "40", "--seed", "1", "--ops", "validate,context",
         "--faults", "graph.label-target,graph.removal-target", *extra],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
        env={**os.environ, "FAKE_GAPS": gaps})


@pytest.fixture
def listed(tmp_path: Path) -> Path:
    path = tmp_path / "known.txt"
    path.write_text("# labels come next quarter\nR-413: label targets are not checked yet\n",
                    "utf-8")
    return path


def test_fuzz_without_the_file_stops_at_the_gap(tmp_path: Path) -> None:
    done = _fuzz(LABELS, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f'"code": "{LABELS}"' in done.stdout


def test_fuzz_counts_a_listed_gap_and_exits_0(tmp_path: Path, listed: Path) -> None:
    done = _fuzz(LABELS, tmp_path, "--expected-failures", str(listed))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "40 example(s)" in done.stdout  # it went on to the last example
    inputs = int(done.stdout.split("fuzz: ", 2)[2].split()[0])
    counted = int(done.stdout.split("per listed case: R-413 ", 1)[1].split(";")[0])
    assert counted == inputs > 0
    assert "; 0 listed case(s) met none" in done.stdout
    assert "no disagreement but known ones" in done.stdout


def test_fuzz_reports_a_second_gap_the_file_does_not_list(tmp_path: Path, listed: Path) -> None:
    done = _fuzz(f"{LABELS},{REMOVALS}", tmp_path, "--expected-failures", str(listed))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DISAGREEMENT on fault graph.removal-target" in done.stdout
    assert f'"code": "{REMOVALS}"' in done.stdout


def test_fuzz_refuses_an_expected_failure_of_no_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = tmp_path / "known.txt"
    entries.write_text("R-99999: no such case\n", "utf-8")
    assert cli.main(["fuzz", "--impl", GAPS, "--expected-failures", str(entries)]) == 2
    assert "R-99999: no such case in this suite" in capsys.readouterr().err


def test_a_listed_case_stands_for_its_rules_and_the_codes_its_steps_expect() -> None:
    (gap,) = gaps_of(["R-413"], load_cases())
    assert gap == KnownGap("R-413", frozenset({"TREE-4", "TREE-12"}), frozenset({LABELS}))


@pytest.mark.parametrize(("mine", "theirs", "codes"), [
    ({"valid": True, "errors": []}, {"valid": False, "errors": [{"code": LABELS, "line": 2}]},
     {LABELS}),
    ({"valid": False, "errors": [{"code": "A", "line": 2}]},
     {"valid": False, "errors": [{"code": "A", "line": 2}, {"code": "B", "line": 5}]}, {"B"}),
    ({"error": {"code": "A", "line": 2}}, {"error": {"code": "A", "line": 3}}, {"A"}),
    ({"error": {"code": "A", "line": 2}}, {"error": {"code": "A", "line": 2}}, set()),
    ({"committed": ["x"]}, {"committed": []}, set()),
    (None, {"error": {"code": "SESSION_EMPTY"}}, {"SESSION_EMPTY"}),
], ids=["reported-by-one-side", "a-later-error", "same-code-other-line", "same-diagnostic",
        "no-diagnostic", "internal-error"])
def test_differing_codes_are_the_diagnostics_one_side_alone_reports(
    mine: dict[str, object] | None, theirs: dict[str, object], codes: set[str]
) -> None:
    assert differing_codes(mine, theirs) == codes


def test_a_disagreement_belongs_to_the_cases_of_its_codes_or_its_fault_rules() -> None:
    gaps = (KnownGap("R-413", frozenset({"TREE-4"}), frozenset({LABELS})),
            KnownGap("R-420", frozenset({"TREE-5"}), frozenset({REMOVALS})))
    assert known_cases(gaps, {LABELS}, ()) == ("R-413",)
    assert known_cases(gaps, (), ("TREE-5",)) == ("R-420",)
    assert known_cases(gaps, {"PARENT_NOT_FOUND"}, ("TREE-1",)) == ()
