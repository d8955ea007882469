"""The Node.js example adapter runs through the runner and shows each kind of outcome."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from persyk_conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
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
