"""The reference implementation passes every conformance case of fixtures/v1 (in process)."""

from __future__ import annotations

import json
from pathlib import Path

from persyk_conformance.cli import main


def test_reference_passes_every_case(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    status = main(["run", "--in-process", "--no-harness", "--report", str(report)])
    failing = [
        (case["id"], case["outcome"])
        for case in json.loads(report.read_text("utf-8"))["cases"]
        if case["outcome"] != "pass"
    ]
    assert failing == []
    assert status == 0
