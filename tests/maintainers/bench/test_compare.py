"""`persyk-conformance compare` puts several runs' JSON reports side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli import main
from persyk_conformance.reports._compare import CompareError, compare_reports

# id, level, rules: four cases in areas REC and CTX (C-2 touches both), two levels.
CASES = (
    ("R-001", "MUST", ["REC-2"]),
    ("R-002", "MUST", ["REC-3"]),
    ("G-001", "MUST", ["CTX-1", "REC-1"]),
    ("G-002", "SHOULD", ["CTX-25"]),
)


def _report(
    path: Path, name: str, outcomes: dict[str, str], *, contract: str = "1.6.0",
    profile: str = "v1",
) -> Path:
    data: dict[str, Any] = {
        "format": 1,
        "header": {
            "suite": {"name": "persyk-session-conformance", "version": "0.1.0",
                      "contract": contract},
            "protocol": 1, "profile": profile,
            "implementation": {"name": name, "version": "1.0", "language": "x"},
            "capabilities": ["read"], "command": [name], "mode": "subprocess",
            "platform": {"system": "Linux"}, "started_at": "2026-12-02T10:00:00Z",
        },
        "cases": [
            {"id": cid, "title": f"case {cid}", "kind": "golden", "outcome": outcomes[cid],
             "rules": rules, "requires": ["read"], "duration_ms": 1.0, "details": {},
             "level": level}
            for cid, level, rules in CASES if cid in outcomes
        ],
        "footer": {
            "totals": {k: 0 for k in ("pass", "fail", "error", "crash", "timeout", "skip",
                                      "unsupported", "xfail", "xpass")},
            "passed": True, "finished_at": "2026-12-02T10:00:01Z", "duration_ms": 1.0,
        },
    }
    path.write_text(json.dumps(data), "utf-8")
    return path


ALL_PASS = {"R-001": "pass", "R-002": "pass", "G-001": "pass", "G-002": "pass"}
MIXED = {"R-001": "xfail", "R-002": "error", "G-001": "pass", "G-002": "unsupported"}


def test_each_cell_counts_pass_fail_xfail_and_unsupported_per_area_and_level(
    tmp_path: Path,
) -> None:
    a = _report(tmp_path / "a.json", "alpha", ALL_PASS)
    b = _report(tmp_path / "b.json", "beta", MIXED)
    comparison = compare_reports([a, b])
    areas = {row.group: row for row in comparison.areas}
    assert areas["REC"].cases == 3  # and G-001 (which also touches CTX)
    assert areas["REC"].cells == ((3, 0, 0, 0), (1, 1, 1, 0))
    assert areas["CTX"].cells == ((2, 0, 0, 0), (1, 0, 0, 1))
    levels = {row.group: row for row in comparison.levels}
    assert levels["MUST"].cells[1] == (1, 1, 1, 0)
    assert levels["SHOULD"].cells[1] == (0, 0, 0, 1)
    assert levels["MAY"].cases == 0
    assert comparison.total.cells == ((4, 0, 0, 0), (1, 1, 1, 1))


def test_a_disagreement_is_a_case_one_passes_and_another_fails_or_expects_to_fail(
    tmp_path: Path,
) -> None:
    a = _report(tmp_path / "a.json", "alpha", ALL_PASS)
    b = _report(tmp_path / "b.json", "beta", MIXED)
    comparison = compare_reports([a, b])
    # G-002 is unsupported by beta: untested, so no disagreement; G-001 passes in both.
    assert [d.case.id for d in comparison.disagreements] == ["R-001", "R-002"]
    assert comparison.disagreements[0].outcomes == ("pass", "xfail")
    assert comparison.pairs == ((0, 1, 2, 0),)


def test_a_case_missing_from_one_report_counts_unsupported_and_is_noted(tmp_path: Path) -> None:
    a = _report(tmp_path / "a.json", "alpha", ALL_PASS)
    b = _report(tmp_path / "b.json", "beta", {"R-001": "fail"}, contract="1.5.0")
    comparison = compare_reports([a, b])
    assert comparison.total.cells[1] == (0, 1, 0, 3)
    assert any("3 case(s) not in its report" in note for note in comparison.notes)
    assert any("different contracts" in note for note in comparison.notes)
    assert comparison.disagreements[0].outcomes == ("pass", "fail")


def test_two_reports_of_one_implementation_are_told_apart_by_file(tmp_path: Path) -> None:
    a = _report(tmp_path / "before.json", "alpha", ALL_PASS)
    b = _report(tmp_path / "after.json", "alpha", MIXED)
    names = [column.name for column in compare_reports([a, b]).columns]
    assert names == ["alpha 1.0 (before.json)", "alpha 1.0 (after.json)"]


def test_reports_of_different_profiles_are_refused(tmp_path: Path) -> None:
    a = _report(tmp_path / "a.json", "alpha", ALL_PASS)
    b = _report(tmp_path / "b.json", "beta", ALL_PASS, profile="dsh-v0")
    with pytest.raises(CompareError, match="different profiles"):
        compare_reports([a, b])


def test_a_file_that_is_not_a_report_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _report(tmp_path / "a.json", "alpha", ALL_PASS)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": 1}', "utf-8")
    assert main(["compare", str(a), str(bad)]) == 2
    assert "not a report" in capsys.readouterr().err
    assert main(["compare", str(a)]) == 2


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_every_format_names_each_implementation_and_lists_the_disagreements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    a = _report(tmp_path / "a.json", "alpha", ALL_PASS)
    b = _report(tmp_path / "b.json", "beta", MIXED)
    assert main(["compare", str(a), str(b), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "alpha 1.0" in out and "beta 1.0" in out
    assert "R-002" in out and "G-001" not in out.split("disagreement")[-1]
    if fmt == "json":
        data = json.loads(out)
        assert [d["id"] for d in data["disagreements"]] == ["R-001", "R-002"]
        assert data["total"]["cells"][1] == {"pass": 1, "fail": 1, "xfail": 1, "unsupported": 1}


def test_limit_lists_the_first_disagreements_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _report(tmp_path / "a.json", "alpha", ALL_PASS)
    b = _report(tmp_path / "b.json", "beta", MIXED)
    assert main(["compare", str(a), str(b), "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "R-001" in out and "R-002" not in out and "... and 1 more" in out
    assert main(["compare", str(a), str(b), "--limit", "0", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| R-001 |" not in out and "... and 2 more" in out
