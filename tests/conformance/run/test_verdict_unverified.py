"""A green verdict means conformant: a check that applies but cannot run on this machine is
``unverified``, never a pass, and makes the run INCOMPLETE (exit 5) in every format, unless
``--accept-unverified`` says otherwise, which every format then repeats.

"No strace" is simulated by a PATH without it (``strace_prefix`` looks it up with
``shutil.which``); the reference adapter is started by its absolute interpreter path.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import jsonschema
import persyk_conformance.harness._registry as registry
import pytest
from fakes.casetree import write_cases
from persyk_conformance.adapters._interface import Adapter
from persyk_conformance.cli import RunConfig, execute, main
from persyk_conformance.harness._registry import CheckCannotRunHere, harness_results
from persyk_conformance.pytest_plugin import PersykCaseFailed, _report
from persyk_conformance.reports._merge import record_from_report
from persyk_conformance.reports._run import (
    render_junit,
    render_markdown,
    render_text,
    report_json,
)
from persyk_conformance.run._outcomes import CaseResult, Outcome, RunRecord
from persyk_maintainers.site._model import badge, build_model

REPORT_SCHEMA = json.loads(
    (files("persyk_contract.schemas") / "protocol" / "report.schema.json").read_text("utf-8")
)
NO_STRACE = ("needs strace (Linux) to trace or kill the adapter at its system calls; strace is "
             "not on PATH")


@pytest.fixture
def no_strace(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def _result(case_id: str, outcome: Outcome, level: str = "MUST",
            reason: str | None = None) -> CaseResult:
    return CaseResult(id=case_id, title=f"case {case_id}", kind="harness", rules=("RCV-6",),
                      requires=("read",), outcome=outcome, duration_ms=1.0, reason=reason,
                      level=level)


def _record(*results: CaseResult, accept: bool = False) -> RunRecord:
    return RunRecord(suite_version="0", protocol=1,
                     implementation={"name": "impl", "version": "1", "language": "python"},
                     capabilities=("read",), command=None, mode="subprocess", platform={},
                     started_at="2026-01-01T00:00:00.000Z",
                     finished_at="2026-01-01T00:00:01.000Z", duration_ms=1000.0,
                     results=results, accept_unverified=accept)


PASSING = _result("H-101", Outcome.PASS)
UNVERIFIED = _result("H-104", Outcome.UNVERIFIED, reason=NO_STRACE)


@pytest.mark.parametrize(
    ("results", "accept", "verdict"),
    [
        ((PASSING, UNVERIFIED), False, "INCOMPLETE"),
        ((PASSING, UNVERIFIED), True, "PASSED"),
        ((_result("H-102", Outcome.FAIL), UNVERIFIED), False, "FAILED"),
        ((PASSING, _result("H-104", Outcome.UNVERIFIED, level="SHOULD")), False, "PASSED"),
        ((PASSING, _result("H-104", Outcome.UNSUPPORTED)), False, "PASSED"),
        ((UNVERIFIED,), False, "INCOMPLETE"),
        ((UNVERIFIED,), True, "FAILED"),  # accepted, but nothing was tested
    ],
    ids=["unverified-must", "accepted", "failure-wins", "unverified-should", "unsupported",
         "only-unverified", "only-unverified-accepted"],
)
def test_verdict_of_a_run_with_unverified_cases(
    results: tuple[CaseResult, ...], accept: bool, verdict: str
) -> None:
    record = _record(*results, accept=accept)
    assert record.verdict == verdict
    assert record.passed is (verdict == "PASSED")
    assert record.incomplete is (verdict == "INCOMPLETE")


def test_an_unverified_case_is_never_turned_into_an_expected_failure() -> None:
    assert UNVERIFIED.with_expectation("known").outcome is Outcome.UNVERIFIED


def test_a_check_that_cannot_run_here_is_unverified_not_unsupported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cannot(*_: object) -> list[str]:
        raise CheckCannotRunHere(NO_STRACE)

    row = replace(registry.check_named("H-104"), run=cannot)
    monkeypatch.setattr(registry, "HARNESS_CHECKS",
                        tuple(row if c.id == "H-104" else c for c in registry.HARNESS_CHECKS))
    (result,) = harness_results(_no_adapter, tmp_path, ["H-104"], {},
                                frozenset({"read", "recover"}))
    assert (result.outcome, result.reason) == (Outcome.UNVERIFIED, NO_STRACE)


def _no_adapter() -> Adapter:
    raise AssertionError("a check that cannot run here starts no adapter")


def test_without_strace_the_crash_check_is_unverified_and_the_run_incomplete(
    no_strace: None,
) -> None:
    record = execute(RunConfig(only=("H-104",), timeout=5))
    [result] = record.results
    assert (result.outcome, result.reason) == (Outcome.UNVERIFIED, NO_STRACE)
    assert record.verdict == "INCOMPLETE"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cases(tmp_path_factory.mktemp("cases"))


@pytest.mark.parametrize(("extra", "status", "first"), [
    ((), 5, "INCOMPLETE: 1 pass, 1 unverified"),
    (("--accept-unverified",), 0,
     "PASSED (1 unverified, accepted with --accept-unverified): 1 pass, 1 unverified"),
], ids=["incomplete-exit-5", "accepted-exit-0"])
def test_exit_status_and_text_of_a_run_without_strace(
    tree: Path, no_strace: None, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    extra: tuple[str, ...], status: int, first: str,
) -> None:
    report = tmp_path / "report.json"
    assert main(["run", "--fixtures", str(tree), "--only", "G-001,H-104", "--timeout", "5",
                 "-j", "1", "--no-progress", "--report", str(report), *extra]) == status
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith(first)
    assert "UNVERIFIED  1 case not verified on this machine, by reason:" in out
    assert NO_STRACE in out
    data = json.loads(report.read_text("utf-8"))
    jsonschema.validate(data, REPORT_SCHEMA)
    assert data["footer"]["verdict"] == ("incomplete" if status else "passed")
    assert ("accepted_unverified" in data["footer"]) is bool(extra)


def test_every_format_says_incomplete() -> None:
    record = _record(PASSING, UNVERIFIED)
    data = report_json(record)
    jsonschema.validate(data, REPORT_SCHEMA)
    assert data["footer"] | {"finished_at": None, "duration_ms": None} == {
        "totals": {**dict.fromkeys(
            ["pass", "fail", "error", "crash", "timeout", "skip", "unsupported", "unverified",
             "xfail", "xpass"], 0), "pass": 1, "unverified": 1},
        "passed": False, "tested": True, "complete": False, "verdict": "incomplete",
        "finished_at": None, "duration_ms": None}
    text = render_text(record)
    assert text.splitlines()[1].startswith("INCOMPLETE: 1 pass, 1 unverified")
    assert "1 MUST case not verified on this machine (H-104): the run is INCOMPLETE" in text
    quiet = render_text(record, quiet=True)
    assert "the run is INCOMPLETE" in quiet
    markdown = render_markdown(record)
    assert markdown.startswith("## ⚪ Persyk conformance: impl 1 (python) incomplete")
    assert "### Unverified (not run on this machine)" in markdown
    assert f"| 1 | {NO_STRACE} | H-104 |" in markdown


def test_junit_makes_an_unverified_must_case_an_error_unless_accepted() -> None:
    suite = ET.fromstring(render_junit(_record(PASSING, UNVERIFIED)))
    assert (suite.get("errors"), suite.get("skipped")) == ("1", "0")
    [error] = suite.iter("error")
    assert error.get("type") == "unverified"
    assert NO_STRACE in (error.get("message") or "")
    accepted = ET.fromstring(render_junit(_record(PASSING, UNVERIFIED, accept=True)))
    assert (accepted.get("errors"), accepted.get("skipped")) == ("0", "1")
    [skipped] = accepted.iter("skipped")
    assert (skipped.get("message") or "").startswith(
        "unverified (accepted with --accept-unverified): ")
    properties = {p.get("name"): p.get("value") for p in accepted.find("properties") or ()}
    assert properties["accepted_unverified"] == "H-104"
    assert properties["verdict"] == "PASSED"


def test_the_pytest_plugin_fails_an_unverified_must_item_unless_accepted() -> None:
    with pytest.raises(PersykCaseFailed):
        _report(UNVERIFIED)
    with pytest.raises(pytest.skip.Exception, match="accepted with --persyk-accept-unverified"):
        _report(UNVERIFIED, accept_unverified=True)
    with pytest.raises(pytest.skip.Exception, match="SHOULD"):
        _report(_result("H-104", Outcome.UNVERIFIED, level="SHOULD", reason=NO_STRACE))


def test_the_site_badge_of_an_unverified_run_is_grey_and_says_so() -> None:
    record = _record(PASSING, UNVERIFIED, _result("H-105", Outcome.UNVERIFIED, reason=NO_STRACE))
    model = build_model([("r.json", report_json(record))])
    data = badge(model, model.implementations[0])
    assert data["color"] == "lightgrey"
    assert data["message"] == "1/3 MUST, 2 unverified"
    accepted = build_model([("r.json", report_json(replace(record, accept_unverified=True)))])
    assert badge(accepted, accepted.implementations[0])["color"] == "lightgrey"
    green = build_model([("r.json", report_json(_record(PASSING)))])
    assert badge(green, green.implementations[0]) == {
        "schemaVersion": 1, "label": "persyk v1", "message": "1/1 MUST", "color": "brightgreen"}


def test_a_report_read_back_keeps_the_verdict_and_the_acceptance() -> None:
    data = report_json(_record(PASSING, UNVERIFIED, accept=True))
    again = record_from_report(data)
    assert again.accept_unverified and again.verdict == "PASSED"
    assert record_from_report(report_json(_record(PASSING, UNVERIFIED))).verdict == "INCOMPLETE"


@pytest.mark.parametrize(("extra", "status"), [((), 5), (("--accept-unverified",), 0)],
                         ids=["incomplete", "accepted"])
def test_merged_shards_keep_the_incomplete_verdict_and_its_exit_status(
    tree: Path, no_strace: None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...], status: int,
) -> None:
    shards = [tmp_path / f"shard-{index}.json" for index in (1, 2)]
    for index, report in enumerate(shards, start=1):
        main(["run", "--fixtures", str(tree), "--only", "G-001,H-104", "--timeout", "5", "-j", "1",
              "--no-progress", "-q", "--shard", f"{index}/2", "--report", str(report), *extra])
    merged = tmp_path / "merged.json"
    capsys.readouterr()  # the shards' own reports
    assert main(["merge", *map(str, shards), "--report", str(merged), "-q"]) == status
    footer = json.loads(merged.read_text("utf-8"))["footer"]
    assert footer["verdict"] == ("incomplete" if status else "passed")
    assert footer.get("accepted_unverified") == (["H-104"] if extra else None)
    verdict_line = capsys.readouterr().out.splitlines()[1]
    assert verdict_line.startswith("INCOMPLETE" if status else "PASSED")
