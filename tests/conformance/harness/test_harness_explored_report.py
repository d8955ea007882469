"""What a crash check explored reaches every report: the check's CheckReport, its
HarnessResult, the CaseResult, the JSON report (valid against its schema, and merged back),
JUnit, Markdown and the verbose text report, as ``reason`` does."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from persyk_conformance.adapters._in_process import InProcessAdapter
from persyk_conformance.harness import _registry
from persyk_conformance.harness._crash import CheckReport
from persyk_conformance.reports._merge import record_from_report
from persyk_conformance.reports._run import (
    render_junit,
    render_markdown,
    render_text,
    report_json,
)
from persyk_conformance.run._outcomes import CaseResult, Outcome, RunRecord

REPORT_SCHEMA = json.loads(
    (files("persyk_contract.schemas") / "protocol" / "report.schema.json").read_text("utf-8"))
EXPLORED = ("explored 32 of 435 kill moments: the first and last of each of 18 distinct kinds "
            "of call (22), then 10 sampled, seed 20261202")


def _record(*results: CaseResult) -> RunRecord:
    return RunRecord(
        suite_version="1.0.0", protocol=1,
        implementation={"name": "x", "version": "1", "language": "python"},
        capabilities=("read",), command=None, mode="subprocess", platform={"python": "3.11"},
        started_at="2026-12-03T14:00:00Z", finished_at="2026-12-03T14:00:01Z",
        duration_ms=10.0, results=results)


def _check(outcome: Outcome, explored: str | None = EXPLORED) -> CaseResult:
    return CaseResult(id="H-150", title="capture killed", kind="harness", rules=("CAP-1",),
                      requires=("read", "capture"), outcome=outcome, duration_ms=1.0,
                      reason=None if outcome is Outcome.PASS else "the write harness found "
                      "problems", level="MUST", explored=explored)


def test_the_registry_carries_what_a_check_explored_into_its_case_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = replace(_registry.check_named("H-104"),
                  run=lambda factory, workdir, options: CheckReport(("a problem",), EXPLORED))
    monkeypatch.setattr(_registry, "HARNESS_CHECKS", (row,))
    [result] = _registry.harness_results(InProcessAdapter, tmp_path, ["H-104"], {}, None)
    assert (result.outcome, result.explored, result.mismatches) == (
        Outcome.FAIL, EXPLORED, ("a problem",))


def test_a_check_that_returns_problems_alone_explored_nothing_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = replace(_registry.check_named("H-104"), run=lambda factory, workdir, options: [])
    monkeypatch.setattr(_registry, "HARNESS_CHECKS", (row,))
    [result] = _registry.harness_results(InProcessAdapter, tmp_path, ["H-104"], {}, None)
    assert (result.outcome, result.explored) == (Outcome.PASS, None)


def test_the_json_report_carries_it_valid_and_merges_back() -> None:
    record = _record(_check(Outcome.PASS), _check(Outcome.FAIL, None))
    report = json.loads(json.dumps(report_json(record)))
    jsonschema.validate(report, REPORT_SCHEMA)
    assert [case["details"].get("explored") for case in report["cases"]] == [EXPLORED, None]
    assert record_from_report(report).results == record.results


def test_junit_markdown_and_verbose_text_show_it_for_a_passing_check() -> None:
    record = _record(_check(Outcome.PASS))
    [case] = ET.fromstring(render_junit(record)).iter("testcase")
    assert {p.get("name"): p.get("value") for p in case.iter("property")}["explored"] == EXPLORED
    assert f"| `H-150` | pass | {EXPLORED} |" in render_markdown(record)
    assert f"    {EXPLORED}" in render_text(record, verbose=True).splitlines()


def test_a_failing_check_says_what_it_explored_beside_its_problems() -> None:
    lines = render_text(_record(_check(Outcome.FAIL))).splitlines()
    assert EXPLORED in [line.strip() for line in lines]
