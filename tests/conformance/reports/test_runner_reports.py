"""What the runner tells an implementer: failures they can act on in every format,
``show``, honest progress and summaries, and the --only/--skip selectors."""

from __future__ import annotations

import contextlib
import io
import json
import re
import xml.etree.ElementTree as ET
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import jsonschema
import persyk_contract
import pytest
from _paths import CHECKOUT
from fakes.casetree import fake, write_cases
from persyk_conformance.cases._explain import expectation_lines
from persyk_conformance.cases._load import load_cases
from persyk_conformance.cases._select import Selectable, SelectionError, select, split_selectors
from persyk_conformance.cli import RunConfig, execute, main
from persyk_conformance.reports._show import escape_bytes

REPORT_SCHEMA = json.loads(
    (files("persyk_contract.schemas") / "protocol" / "report.schema.json").read_text("utf-8")
)
ROOT = CHECKOUT


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cases(tmp_path_factory.mktemp("cases"))


@pytest.fixture(scope="module")
def r047_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """R-047 (an escaped lone surrogate) run against an adapter that accepts everything, in
    every format."""
    out = tmp_path_factory.mktemp("r047")
    formats: dict[str, str] = {}
    for fmt in ("text", "markdown"):
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            status = main([
                "run", "--impl", fake("accept_everything"), "--only", "R-047", "--format", fmt,
                "--report", str(out / "report.json"), "--junit", str(out / "junit.xml"),
                "--timeout", "5",
            ])
        assert status == 1
        formats[fmt] = stdout.getvalue()
    formats["json"] = (out / "report.json").read_text("utf-8")
    formats["junit"] = (out / "junit.xml").read_text("utf-8")
    return formats


def r047_folder() -> Traversable:
    """R-047's folder as installed (the checkout's in an editable install, site-packages' in
    CI's `pip install .`), which is what the runner names."""
    (folder,) = (f for f in (files("persyk_conformance.fixtures") / "v1" / "rejection").iterdir()
                 if f.name.startswith("R-047-"))
    return folder


# --- 1. failures an implementer can act on ---------------------------------------------------


def test_text_failure_names_expected_code_line_rules_and_case_folder(
    r047_outputs: dict[str, str],
) -> None:
    text = r047_outputs["text"]
    assert 'errors = [{"code": "RECORD_LONE_SURROGATE", "line": 3}]' in text
    assert "REC-5 (MUST, docs/spec.md § REC: records)" in text
    assert "case folder: " in text and "R-047-lone-high-surrogate-in-value" in text
    assert "persyk-conformance show R-047" in text
    # every mismatch, not only the first
    assert "/valid: expected false, got true" in text
    assert "/errors: expected an array of 1 item(s), got 0" in text


def test_case_folder_in_the_report_is_the_installed_case(r047_outputs: dict[str, str]) -> None:
    (case,) = json.loads(r047_outputs["json"])["cases"]
    assert (Path(case["folder"]) / "case.json").is_file()
    assert json.loads((Path(case["folder"]) / "case.json").read_text())["id"] == "R-047"


def test_markdown_failure_lists_every_mismatch_rules_and_expectation(
    r047_outputs: dict[str, str],
) -> None:
    markdown = r047_outputs["markdown"]
    (row,) = [line for line in markdown.splitlines() if line.startswith("| `R-047`")]
    assert "/valid: expected false" in row and "/errors: expected an array" in row
    assert "RECORD_LONE_SURROGATE" in row and '"line": 3' in row
    assert "REC-5 (MUST, docs/spec.md § REC: records)" in row


def test_json_report_carries_rule_levels_sections_and_expectation(
    r047_outputs: dict[str, str],
) -> None:
    report = json.loads(r047_outputs["json"])
    jsonschema.validate(report, REPORT_SCHEMA)
    (case,) = report["cases"]
    assert case["level"] == "MUST"
    assert case["rule_details"] == [
        {"id": "REC-5", "level": "MUST", "section": "docs/spec.md § REC: records"}
    ]
    assert 'errors = [{"code": "RECORD_LONE_SURROGATE", "line": 3}]' in case["details"]["expected"]


def test_junit_testcase_has_rule_ids_as_properties(r047_outputs: dict[str, str]) -> None:
    suite = ET.fromstring(r047_outputs["junit"])
    (case,) = suite.iter("testcase")
    properties = {(p.get("name"), p.get("value")) for p in case.iter("property")}
    assert ("rule", "REC-5") in properties
    assert ("REC-5.level", "MUST") in properties
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    assert "RECORD_LONE_SURROGATE" in failure.text and "case folder:" in failure.text


def test_expected_context_is_shown_by_message_ids_when_long() -> None:
    # G-004's history is four whole messages: too long to show in full, so by id.
    (case,) = [c for c in load_cases() if c.id == "G-004"]
    context = next(step for step in case.steps if step.op == "context")
    assert expectation_lines(context.expect) == (
        'leaf = "m4"', 'messages = [id "m1", id "m2", id "m3", id "m4"]', "custom = []",
    )


def test_show_prints_manifest_escaped_input_expectations_and_rule_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", "r-047"]) == 0  # case-insensitive
    text = capsys.readouterr().out
    (folder_line,) = [line for line in text.splitlines() if line.startswith("folder: ")]
    folder = Path(folder_line.removeprefix("folder: "))  # as installed (site-packages in CI)
    assert folder.name == r047_folder().name and (folder / "case.json").is_file()
    assert '"kind": "rejection"' in text  # the manifest
    assert '"text":"a\\ud800b"' in text  # the input bytes, line 3
    assert 'errors = [{"code": "RECORD_LONE_SURROGATE", "line": 3}]' in text
    assert persyk_contract.rule_texts()["REC-5"].text[:60] in text


def test_show_marks_bytes_that_are_not_printable_utf8() -> None:
    assert escape_bytes(b'{"a":"\xff\t"}\r\n\xef\xbb\xbf{}') == [
        '{"a":"⟨0xFF⟩⟨TAB⟩"}⟨CR⟩',
        "⟨U+FEFF⟩{}⟨no LF at the end of the file⟩",
    ]


def test_show_of_a_write_check_and_of_an_unknown_case(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", "H-102"]) == 0
    text = capsys.readouterr().out
    assert "four adapter processes" in text and "APP-5" in text
    assert main(["show", "R-9999"]) == 2
    assert "no case R-9999" in capsys.readouterr().err


def test_rule_texts_are_the_spec_statements() -> None:
    spec = (ROOT / "docs" / "spec.md").read_text("utf-8")
    texts = {t.id: t for t in persyk_contract.rule_texts_from_spec(spec)}
    assert set(texts) == {rule.id for rule in persyk_contract.rules()}
    assert texts["REC-5"].section == "REC: records"
    assert "RECORD_LONE_SURROGATE" in texts["REC-5"].text
    assert dict(persyk_contract.rule_texts()) == texts


# --- 3. honest progress and summaries ----------------------------------------------------------


def test_list_names_the_write_harness_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    for check in ("H-001", "H-101", "H-102", "H-103"):
        assert check in rows
    assert rows["H-101"]["requires"] == ["read", "append", "recover"]


def test_progress_counts_and_announces_the_write_checks(tree: Path) -> None:
    stream = io.StringIO()
    execute(RunConfig(in_process=True, fixtures=tree, only=("G-001", "H-103")), stream)
    shown = stream.getvalue()
    assert "[1/2] G-001 pass" in shown
    assert "[2/2] H-103 running" in shown
    assert "[2/2] H-103 pass" in shown


def test_quiet_prints_the_verdict_and_one_line_per_failing_case(
    tree: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # -q used to drop the failing cases entirely; now each is one line, no block.
    assert main(["run", "--fixtures", str(tree), "--no-harness", "--quiet",
                 "--impl", fake("accept_everything"), "--timeout", "2"]) == 1
    out = capsys.readouterr().out
    failing = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert len(failing) == 2 and all(line.split()[1].startswith("R-") for line in failing)
    assert "rules:" not in out and "area " not in out  # no blocks, no tables
    assert "FAILED: 1 pass, 2 fail, 1 unsupported" in out


def test_unsupported_cases_are_counted_by_capability(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # accept_everything declares read only: every case of the APP area, each needing append,
    # is unsupported.
    assert main(["run", "--impl", fake("accept_everything"), "--only", "APP",
                 "--no-harness", "--timeout", "2"]) == 1
    out = capsys.readouterr().out
    assert "UNSUPPORTED " in out and "capability append not declared:" in out
    assert not [line for line in out.splitlines() if line.startswith("UNSUPPORTED S-")]


def test_summary_says_a_case_counts_in_each_area_it_touches(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--fixtures", str(tree), "--no-harness", "--in-process"]) == 0
    assert "counts once in each area its rules touch" in capsys.readouterr().out


# --- 4. selectors ------------------------------------------------------------------------------

ITEMS = [
    Selectable("G-001", "golden", ("REC-1", "CTX-1"), "MUST", ("read",), "G-001-valid"),
    Selectable("R-047", "rejection", ("REC-5",), "MUST", ("read",), "R-047-lone-surrogate"),
    Selectable("S-023", "scenario", ("APP-8",), "SHOULD", ("read", "append"), "S-023-batch"),
    Selectable("H-101", "harness", ("RCV-4",), "MUST", ("read", "append", "recover")),
]


@pytest.mark.parametrize(
    ("only", "skip", "ids"),
    [
        (("r-047",), (), ["R-047"]),
        (("R-0*",), (), ["R-047"]),
        (("*SURROGATE*",), (), ["R-047"]),
        (("rec-5",), (), ["R-047"]),
        (("REC",), (), ["G-001", "R-047"]),
        (("should",), (), ["S-023"]),
        (("read",), (), ["G-001", "R-047"]),
        (("read,append",), (), ["G-001", "R-047", "S-023"]),
        (("READ", "append", "recover"), (), ["G-001", "R-047", "S-023", "H-101"]),
        (("read", "harness"), (), ["G-001", "R-047", "H-101"]),
        (("read", "APP-8"), ("R-*",), ["G-001", "S-023"]),
        (("harness",), (), ["H-101"]),
        (("REC", "APP"), (), ["G-001", "R-047", "S-023"]),
        (("REC,APP",), (), ["G-001", "R-047", "S-023"]),
        ((), ("append",), ["G-001", "R-047"]),
        (("MUST",), ("rec-1", "H-*"), ["R-047"]),
    ],
)
def test_selectors_name_ids_globs_rules_areas_levels_capabilities(
    only: tuple[str, ...], skip: tuple[str, ...], ids: list[str]
) -> None:
    chosen = select(ITEMS, split_selectors(only), split_selectors(skip))
    assert [item.id for item in chosen] == ids


def test_a_selector_that_names_nothing_is_an_error() -> None:
    with pytest.raises(SelectionError, match="--skip NOPE"):
        select(ITEMS, (), ("NOPE",))


@pytest.mark.parametrize(
    ("only", "advice"),
    [
        (("append",), "also needs read; .*--only read,append,"),
        (("recover",), "also needs read and append; .*--only read,append,recover,"),
        (("read", "recover"), "--only recover: .*also needs append; .*--only read,append,recover,"),
        (("recover", "H-101"), "--only read,append,recover,"),
    ],
)
def test_a_capability_of_only_that_keeps_no_case_names_the_capabilities_to_add(
    only: tuple[str, ...], advice: str
) -> None:
    with pytest.raises(SelectionError, match=advice):
        select(ITEMS, only)


def test_a_capability_of_skip_drops_every_case_needing_it() -> None:
    chosen = select(ITEMS, ("read", "append", "recover"), ("append",))
    assert [item.id for item in chosen] == ["G-001", "R-047"]


def test_list_only_read_keeps_the_cases_needing_read_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["list", "--only", "read", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(row["requires"] == ["read"] for row in rows)
    assert main(["list", "--only", "read,search", "--json"]) == 0
    wider = json.loads(capsys.readouterr().out)
    assert {tuple(row["requires"]) for row in wider} == {("read",), ("read", "search")}


def test_list_only_search_is_a_usage_error_that_says_to_add_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["list", "--only", "search"]) == 2
    assert "--only read,search" in capsys.readouterr().err


def test_run_with_area_and_skip_selects_those_cases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["list", "--only", "rec", "--skip", "REC-5,should,H-*", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(any(r.startswith("REC-") for r in row["rules"]) for row in rows)
    assert not [row for row in rows if "REC-5" in row["rules"] or row["level"] == "SHOULD"]
    assert not [row for row in rows if row["id"].startswith("H-")]


def test_an_adapter_that_cannot_start_is_reported_in_a_few_lines(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Once the runner gives up on the adapter, the cases it did not run are one line, not one
    # block each (a missing adapter once printed 1,310 lines).
    many = write_cases(tmp_path / "many")
    for number in range(3, 40):
        source = many / "rejection" / "R-001-syntax-error"
        target = many / "rejection" / f"R-{number:03d}-syntax-error"
        target.mkdir()
        (target / "tree").symlink_to(source / "tree")
        manifest = json.loads((source / "case.json").read_text())
        (target / "case.json").write_text(json.dumps({**manifest, "id": f"R-{number:03d}"}))
    status = main(["run", "--fixtures", str(many), "--no-harness", "--timeout", "2",
                   "--impl", str(tmp_path / "no-such-adapter")])
    out = capsys.readouterr().out
    assert status == 1
    assert re.search(r"ERROR       3[0-9] cases not run:", out), out
    assert len(out.splitlines()) < 60, out
