"""persyk-conformance's command line: exit statuses, expected failures, reports, listing."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from _paths import CHECKOUT
from fakes.casetree import fake, write_cases
from persyk_conformance.cli import main
from persyk_conformance.run._outcomes import ExpectedFailuresError, parse_expected_failures

REPORT_SCHEMA = json.loads(
    (files("persyk_contract.schemas") / "protocol" / "report.schema.json").read_text("utf-8")
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cases(tmp_path_factory.mktemp("cases"))


def cli(tree: Path, *args: str) -> int:
    return main(["run", "--fixtures", str(tree), "--no-harness", "--timeout", "2", *args])


@pytest.mark.parametrize(
    ("impl", "status"),
    [(None, 0), (fake("accept_everything"), 1), (fake("crash_at_start"), 1)],
    ids=["reference-passes", "failures", "crashes"],
)
def test_exit_status_reflects_the_run(tree: Path, impl: str | None, status: int) -> None:
    assert cli(tree, *(["--impl", impl] if impl else [])) == status


def test_in_process_path_passes_the_tiny_tree(tree: Path) -> None:
    assert cli(tree, "--in-process") == 0


def test_in_process_excludes_impl(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(tree, "--in-process", "--impl", "x") == 2
    assert "excludes --impl" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("entries", "status", "outcome"),
    [
        ({"R-001": "accepts everything", "R-002": "accepts everything"}, 0, "xfail"),
        ({"G-001": "thought broken, but passes"}, 1, "xpass"),
    ],
    ids=["xfail-keeps-run-green", "xpass-fails-run"],
)
def test_expected_failures_file(
    tree: Path, tmp_path: Path, entries: dict[str, str], status: int, outcome: str
) -> None:
    xfails = tmp_path / "xfail.json"
    xfails.write_text(json.dumps(entries))
    report = tmp_path / "report.json"
    only = [a for case_id in entries for a in ("--only", case_id)]
    code = cli(tree, "--impl", fake("accept_everything"), "--expected-failures", str(xfails),
               "--report", str(report), *only)
    assert code == status
    cases = json.loads(report.read_text())["cases"]
    assert {c["outcome"] for c in cases} == {outcome}
    assert all(c["details"]["expected_failure"] for c in cases)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"R-999": "gone"}', "R-999: no such case"),
        ('{"R-001": ""}', "needs a reason"),
        ("R-001\n", "expected 'CASE-ID: reason'"),
        ("R-001: a\nR-001: b\n", "listed twice"),
        ("{not json", "not valid JSON"),
    ],
)
def test_malformed_expected_failures_are_an_error_of_the_run(text: str, problem: str) -> None:
    with pytest.raises(ExpectedFailuresError, match=problem):
        parse_expected_failures(text, ["R-001"])


def test_line_format_of_expected_failures_is_accepted() -> None:
    text = "# known\nR-001: lone surrogates not detected yet\n\nG-002 :  no context\n"
    assert parse_expected_failures(text, ["R-001", "G-002"]) == {
        "R-001": "lone surrogates not detected yet",
        "G-002": "no context",
    }


def test_unknown_expected_failure_id_exits_2(tree: Path, tmp_path: Path) -> None:
    xfails = tmp_path / "xfail.txt"
    xfails.write_text("Z-1: nonsense\n")
    assert cli(tree, "--expected-failures", str(xfails)) == 2


def test_only_that_selects_nothing_exits_2(tree: Path) -> None:
    assert cli(tree, "--only", "Q-*") == 2


def test_json_report_matches_its_schema(tree: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    cli(tree, "--impl", fake("crash_mid_run"), "--report", str(report))
    data = json.loads(report.read_text())
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(data)
    assert data["footer"]["totals"]["crash"] == 1
    assert data["footer"]["passed"] is False
    crashed = next(c for c in data["cases"] if c["outcome"] == "crash")
    assert "exiting mid-conversation" in crashed["details"]["stderr"]


def test_junit_report_counts_failures_and_errors(tree: Path, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    cli(tree, "--impl", fake("accept_everything"), "--junit", str(junit))
    suite = ET.parse(junit).getroot()
    assert suite.attrib["tests"] == "4"
    assert suite.attrib["failures"] == "2"
    assert suite.attrib["skipped"] == "1"
    names = {case.attrib["name"].split()[0] for case in suite.iter("testcase")}
    assert names == {"G-001", "G-002", "R-001", "R-002"}


def test_markdown_summary_has_the_area_table(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(tree, "--impl", fake("accept_everything"), "--format", "markdown")
    out = capsys.readouterr().out
    assert "| area | cases | passed | failed |" in out
    assert "| REC | 3 | 1 | 2 |" in out
    assert "`R-001`" in out


def test_text_output_has_a_summary_and_no_progress_when_not_a_tty(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(tree, "--impl", fake("accept_everything"))
    captured = capsys.readouterr()
    assert "FAIL        R-001" in captured.out
    assert "FAILED: 1 pass, 2 fail, 1 unsupported" in captured.out
    assert "\r" not in captured.err


def test_strict_mode_rejects_a_request_the_schemas_forbid(tmp_path: Path) -> None:
    tree = write_cases(tmp_path / "cases")
    manifest = tree / "golden" / "G-001-valid-session" / "case.json"
    case = json.loads(manifest.read_text())
    case["steps"][0]["args"]["bogus"] = 1  # not an argument of validate
    manifest.write_text(json.dumps(case))
    report = tmp_path / "r.json"
    assert cli(tree, "--only", "G-001") == 0  # the reference ignores the extra argument
    assert cli(tree, "--only", "G-001", "--strict", "--report", str(report)) == 1
    detail = json.loads(report.read_text())["cases"][0]["details"]["reason"]
    assert "strict mode" in detail


def test_list_json_names_kind_rules_and_requires(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--json", "--fixtures", str(tree)]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["R-002"]["kind"] == "rejection"
    assert rows["R-002"]["rules"] == ["REC-7"]
    assert rows["G-002"]["requires"] == ["read"]
    assert rows["H-004"]["requires"] == ["read", "paged-read"]


def test_version_prints_the_contract_version(capsys: pytest.CaptureFixture[str]) -> None:
    from persyk_contract import contract_version, contract_version_from_spec

    with pytest.raises(SystemExit):
        main(["--version"])
    out = capsys.readouterr().out
    assert f"(contract {contract_version()})" in out
    spec = CHECKOUT / "docs" / "spec.md"
    assert contract_version() == contract_version_from_spec(spec.read_text("utf-8"))


def test_json_report_carries_the_contract_version(tree: Path, tmp_path: Path) -> None:
    from persyk_contract import contract_version

    report = tmp_path / "r.json"
    cli(tree, "--report", str(report))
    header = json.loads(report.read_text())["header"]
    jsonschema.validate(json.loads(report.read_text()), REPORT_SCHEMA)
    assert header["suite"]["contract"] == contract_version()
