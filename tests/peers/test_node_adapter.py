"""The Node.js example adapter runs through the runner and shows each kind of outcome."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.cli import main

ROOT = CHECKOUT
EXAMPLE = ROOT / "examples" / "node-adapter"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed on this machine")


def test_node_example_shows_pass_xfail_and_unsupported(tmp_path: Path) -> None:
    assert NODE is not None
    report = tmp_path / "report.json"
    status = main([
        "run", "--impl", shlex.join([NODE, str(EXAMPLE / "adapter.js")]),
        "--expected-failures", str(EXAMPLE / "expected-failures.txt"),
        "--only", "R-008", "--only", "R-081", "--only", "G-001", "--only", "H-001",
        "--report", str(report), "--timeout", "5",
    ])
    outcomes = {c["id"]: c["outcome"] for c in json.loads(report.read_text())["cases"]}
    assert outcomes == {"G-001": "unsupported", "R-008": "pass", "R-081": "xfail", "H-001": "pass"}
    assert status == 0


def test_node_example_without_its_expected_failures_fails_the_run(tmp_path: Path) -> None:
    assert NODE is not None
    status = main([
        "run", "--impl", shlex.join([NODE, str(EXAMPLE / "adapter.js")]), "--only", "R-081",
        "--timeout", "5",
    ])
    assert status == 1


def _documented_node_command() -> list[str]:
    """The command docs/implementers/implementers.md gives for the example, as arguments of the
    CLI."""
    page = ROOT / "docs" / "implementers" / "implementers.md"
    text = page.read_text("utf-8").replace("\\\n", " ")
    (line,) = [
        line for line in text.splitlines()
        if line.startswith("persyk-conformance run") and "examples/node-adapter" in line
    ]
    return shlex.split(line)[1:]


@pytest.mark.slow
def test_node_example_passes_its_documented_command_with_its_expected_failures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = _documented_node_command()
    assert "--expected-failures" in args
    monkeypatch.chdir(ROOT)  # the documented paths are relative to the checkout
    report = tmp_path / "report.json"
    status = main([*args, "--report", str(report)])
    out = capsys.readouterr().out
    assert status == 0, (
        "the example's expected failures are stale: run "
        "`.venv/bin/python examples/node-adapter/update_expected_failures.py`\n" + out[-3000:]
    )
    assert "xfail" in out
    # The example's README quotes the run's counts: they are the run's, not a memory of one.
    totals = json.loads(report.read_text("utf-8"))["footer"]["totals"]
    quoted = re.search(r"exits 0: (\d+) cases pass, (\d+) are `unsupported`.*?the other (\d+) "
                       r"are expected failures", (EXAMPLE / "README.md").read_text("utf-8"), re.S)
    assert quoted is not None, "examples/node-adapter/README.md no longer quotes the counts"
    assert tuple(map(int, quoted.groups())) == (
        totals["pass"], totals["unsupported"], totals["xfail"]), (
        "examples/node-adapter/README.md quotes stale counts: put the run's in it")


def test_every_expected_failure_of_the_node_example_has_its_own_reason() -> None:
    text = (EXAMPLE / "expected-failures.txt").read_text("utf-8")
    entries = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert len(entries) > 100
    assert all(line.partition(":")[2].strip() for line in entries)
