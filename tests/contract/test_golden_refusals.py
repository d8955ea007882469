"""A schema or rule edit that refuses golden sessions is said at once: by
``fixtures/build.py`` (a warning naming the cases and codes) and by ``check-fixtures`` (a line
saying what GEN-1 makes of it), not only by the gate."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.cli import main

ROOT = CHECKOUT
sys.path.insert(0, str(ROOT / "fixtures"))
from _golden_check import golden_refusals  # noqa: E402

GOLDEN = ROOT / "fixtures" / "v1" / "golden"


def _copy(tmp_path: Path, *names: str) -> Path:
    out = tmp_path / "v1"
    for name in names:
        source = next(GOLDEN.glob(f"{name}-*"))
        shutil.copytree(source, out / "golden" / source.name)
    return out


def test_the_shipped_golden_sessions_are_all_accepted(tmp_path: Path) -> None:
    assert golden_refusals(_copy(tmp_path, "G-001", "G-002", "G-003")) == []


def test_a_refused_golden_session_is_named_with_its_code_and_line(tmp_path: Path) -> None:
    out = _copy(tmp_path, "G-001", "G-002")
    session = next((out / "golden").glob("G-002-*")) / "tree" / "session" / "session.jsonl"
    header = json.loads(session.read_bytes().splitlines()[0])
    header["version"] = "1"  # what a tightened header schema would refuse
    session.write_bytes(json.dumps(header).encode() + b"\n")
    assert golden_refusals(out) == ["G-002: HEADER_INVALID at line 1"]


def test_check_fixtures_says_what_a_refused_golden_case_means(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = _copy(tmp_path, "G-001")
    session = next((out / "golden").glob("G-001-*")) / "tree" / "session" / "session.jsonl"
    session.write_bytes(session.read_bytes().replace(b'"version":1', b'"version":"1"', 1))
    assert main(["check-fixtures", "--fixtures", str(out)]) == 1
    assert "golden case(s) fail (G-001): files a conforming writer wrote" in capsys.readouterr().out
