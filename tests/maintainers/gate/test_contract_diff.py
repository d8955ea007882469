"""``persyk-conformance diff`` classifies a contract change by running it
(docs/maintainers/maintainers.md).

Each test edits a copy of this checkout's contract the way a maintainer would and checks the
verdict, the exit status and the case the report names.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT
from jsonschema import Draft202012Validator
from persyk_conformance.cli import main
from persyk_maintainers.cli._gate import diff_sides
from persyk_maintainers.gate._diff import READERS, WRITERS, ContractDiff, changes_since
from persyk_maintainers.gate._evidence import Implementation
from persyk_maintainers.gate._report import diff_to_json, render_diff_markdown
from persyk_maintainers.gate._sides import ContractSide, load_side

_COPIED = ("fixtures/v1", "schemas", "contract/persyk_contract", "reference/persyk_session")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def copy_contract(target: Path) -> Path:
    """The parts of this checkout a contract side is made of (cases, schemas, tables, code)."""
    for folder in _COPIED:
        shutil.copytree(CHECKOUT / folder, target / folder, ignore=_IGNORE)
    (target / "docs").mkdir()
    shutil.copy(CHECKOUT / "docs" / "changes.md", target / "docs" / "changes.md")
    shutil.copy(CHECKOUT / "pyproject.toml", target / "pyproject.toml")
    return target


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_contract(tmp_path_factory.mktemp("base"))


@pytest.fixture
def head_dir(tmp_path: Path) -> Path:
    return copy_contract(tmp_path / "head")


def version_of(root: Path) -> str:
    rules = json.loads((root / "contract/persyk_contract/rules.json").read_text("utf-8"))
    return str(rules["contractVersion"])


def bump(root: Path, version: str, entry: str) -> None:
    """Set the contract version and add its docs/changes.md section, as a release would."""
    rules_file = root / "contract/persyk_contract/rules.json"
    rules = json.loads(rules_file.read_text("utf-8"))
    rules["contractVersion"] = version
    rules_file.write_text(json.dumps(rules, indent=2), "utf-8")
    changes = root / "docs/changes.md"
    text = changes.read_text("utf-8")
    first = text.index("\n## ")
    changes.write_text(text[:first] + f"\n## {version}\n\n{entry}\n" + text[first:], "utf-8")


def case_dir(root: Path, case_id: str) -> Path:
    return next((root / "fixtures/v1").glob(f"*/{case_id}-*"))


def edit_manifest(root: Path, case_id: str, change: Callable[[dict[str, Any]], None]) -> None:
    manifest_file = case_dir(root, case_id) / "case.json"
    manifest = json.loads(manifest_file.read_text("utf-8"))
    change(manifest)
    manifest_file.write_text(json.dumps(manifest, indent=2), "utf-8")


def refuse_as(folder: Path, case_id: str) -> None:
    """Make the case in ``folder`` a rejection ``case_id`` expecting MESSAGE_INVALID on line 2."""
    def to_rejection(manifest: dict[str, Any]) -> None:
        manifest.update(id=case_id, kind="rejection")
        manifest["steps"] = [{
            "op": "validate", "args": {"session": "session"},
            "expect": {"valid": False, "errors": [{"code": "MESSAGE_INVALID", "line": 2}]},
        }]

    manifest_file = folder / "case.json"
    manifest = json.loads(manifest_file.read_text("utf-8"))
    to_rejection(manifest)
    manifest_file.write_text(json.dumps(manifest, indent=2), "utf-8")


def run_diff(base: Path, head: Path, *, run: bool = False, **kwargs: Any) -> ContractDiff:
    sides: list[ContractSide] = [load_side(str(base), CHECKOUT), load_side(str(head), CHECKOUT)]
    try:
        return diff_sides(sides[0], sides[1], run=run, **kwargs)
    finally:
        for side in sides:
            side.discard()


def breaking_cases(diff: ContractDiff, side: str) -> set[str]:
    return {e.case for e in diff.evidence if e.breaking and e.side == side}


def test_an_unchanged_contract_is_compatible_with_nothing_to_report(
    base_dir: Path, head_dir: Path
) -> None:
    diff = run_diff(base_dir, head_dir, run=True)
    assert not diff.changed and not diff.evidence and not diff.problems
    assert diff.exit_status() == 0


def test_a_golden_case_turned_rejection_is_breaking_and_names_the_case(
    base_dir: Path, head_dir: Path
) -> None:
    # The maintainer retires G-001 and files its bytes again as a rejection case.
    old = case_dir(head_dir, "G-001")
    new = head_dir / "fixtures/v1/rejection" / old.name.replace("G-001", "R-699")
    shutil.move(old, new)
    refuse_as(new, "R-699")
    with (head_dir / "fixtures/v1/RETIRED.txt").open("a", encoding="utf-8") as retired:
        retired.write("G-001\ttest: refused from now on (R-699)\n")
    diff = run_diff(base_dir, head_dir)
    assert diff.exit_status() == 1
    assert "R-699" in breaking_cases(diff, READERS)
    assert any(e.existing_data and e.case == "R-699" for e in diff.evidence)
    assert "`R-699`" in render_diff_markdown(diff, 1)


@pytest.mark.slow
def test_the_base_reference_proves_a_new_rejection_breaking(
    base_dir: Path, head_dir: Path
) -> None:
    """A new rejection of a file the base accepted: only running the base's reference tells."""
    source = case_dir(head_dir, "G-001")
    target = head_dir / "fixtures/v1/rejection/R-698-user-only-session-refused"
    shutil.copytree(source, target)
    refuse_as(target, "R-698")
    (target / "tree/session/session.jsonl").write_bytes(
        (source / "tree/session/session.jsonl").read_bytes() + b"\n"  # other bytes, same file
    )
    bump(head_dir, "1.99.0", "| R-698 | test | breaking | none |")
    assert run_diff(base_dir, head_dir, run=False).exit_status() == 0  # manifests alone: blind
    diff = run_diff(base_dir, head_dir, run=True)
    assert breaking_cases(diff, READERS) == {"R-698"}
    assert diff.exit_status() == 1
    assert diff.exit_status(allow_documented=True) == 0


def test_a_schema_tightened_against_existing_golden_records_is_breaking(
    base_dir: Path, head_dir: Path
) -> None:
    header_file = head_dir / "schemas/v1/header.json"
    header = json.loads(header_file.read_text("utf-8"))
    header["properties"]["id"] = {"$ref": "defs.json#/$defs/Id", "maxLength": 8}
    header_file.write_text(json.dumps(header), "utf-8")
    bump(head_dir, "1.99.0", "header ids of eight characters at most (breaking)")
    diff = run_diff(base_dir, head_dir)
    assert diff.schemas == ("v1/header.json",)
    assert diff.exit_status() == 1
    assert "G-001" in breaking_cases(diff, READERS) and "G-001" in breaking_cases(diff, WRITERS)
    # Refusing files a conforming writer wrote needs a new format version (GEN-1).
    assert any("MAJOR" in problem for problem in diff.problems)
    assert diff.exit_status(allow_documented=True) == 1


@pytest.mark.slow
def test_a_new_golden_case_of_existing_shapes_is_compatible_once_its_changes_entry_exists(
    base_dir: Path, head_dir: Path
) -> None:
    source = case_dir(head_dir, "G-001")
    target = head_dir / "fixtures/v1/golden/G-149-the-seed-session-again"
    shutil.copytree(source, target)
    edit_manifest(head_dir, "G-149", lambda m: m.update(id="G-149", since="1.99.0"))
    unbumped = run_diff(base_dir, head_dir, run=True)
    assert not unbumped.evidence
    assert unbumped.exit_status() == 3
    assert any("version stayed" in problem for problem in unbumped.problems)
    bump(head_dir, "1.99.0", "| new case G-149 | the seed session again | none | none |")
    diff = run_diff(base_dir, head_dir, run=True)
    assert [(c.id, c.status) for c in diff.cases] == [("G-149", "added")]
    assert diff.exit_status() == 0


def test_a_version_without_its_changes_entry_is_inconsistent(
    base_dir: Path, head_dir: Path
) -> None:
    shutil.copytree(case_dir(head_dir, "G-001"), head_dir / "fixtures/v1/golden/G-148-again")
    edit_manifest(head_dir, "G-148", lambda m: m.update(id="G-148"))
    rules_file = head_dir / "contract/persyk_contract/rules.json"
    rules = json.loads(rules_file.read_text("utf-8"))
    rules["contractVersion"] = "1.99.0"
    rules_file.write_text(json.dumps(rules), "utf-8")
    diff = run_diff(base_dir, head_dir)
    assert diff.problems == ("docs/changes.md has no section '## 1.99.0'",)
    assert diff.exit_status() == 3


@pytest.mark.slow
def test_an_edited_case_without_a_revision_is_inconsistent(base_dir: Path, head_dir: Path) -> None:
    edit_manifest(
        head_dir, "R-047",
        lambda m: m["steps"][0]["expect"]["errors"][0].update(line=4),
    )
    bump(head_dir, "1.99.0", "R-047 expects line 4")
    diff = run_diff(base_dir, head_dir)
    assert [(c.id, c.aspects) for c in diff.cases] == [("R-047", ("expectation",))]
    assert diff.exit_status() == 3
    assert any(p.startswith("R-047: its expectation changed without a revision")
               for p in diff.problems)
    edit_manifest(head_dir, "R-047", lambda m: m.update(revised="1.99.0"))
    assert not run_diff(base_dir, head_dir).problems


def test_a_removed_case_must_be_retired_and_a_retired_id_never_returns(
    base_dir: Path, head_dir: Path
) -> None:
    shutil.rmtree(case_dir(head_dir, "R-047"))
    bump(head_dir, "1.99.0", "R-047 removed")
    diff = run_diff(base_dir, head_dir)
    assert "R-047: removed without a line in RETIRED.txt" in diff.problems
    base = load_side(str(base_dir), CHECKOUT)
    base.discard()  # its linked site is a temporary tree (none is left behind)
    retired = next(iter(base.retired))
    reused = head_dir / "fixtures/v1/rejection" / f"{retired}-back-again"
    shutil.copytree(case_dir(head_dir, "R-048"), reused)
    edit_manifest(head_dir, retired, lambda m: m.update(id=retired))
    diff = run_diff(base_dir, head_dir)
    assert any(p.startswith(f"{retired}: a retired case id is used again") for p in diff.problems)


@pytest.mark.slow
def test_impl_lists_the_cases_an_implementation_newly_fails(
    base_dir: Path, head_dir: Path
) -> None:
    edit_manifest(head_dir, "R-047", lambda m: (
        m["steps"][0]["expect"]["errors"][0].update(line=4), m.update(revised="1.99.0")
    ))
    bump(head_dir, "1.99.0", "R-047 expects line 4 (breaking)")
    reference = Implementation("reference", f"{sys.executable} -m persyk_session.cli adapter")
    diff = run_diff(base_dir, head_dir, run=True, implementations=(reference,))
    assert diff.implementations == {"reference": ("R-047",)}
    assert "R-047" in breaking_cases(diff, READERS)


@pytest.mark.slow
def test_json_report_matches_its_schema(base_dir: Path, head_dir: Path) -> None:
    edit_manifest(head_dir, "R-047", lambda m: m.update(level="SHOULD"))
    diff = run_diff(base_dir, head_dir)
    schema = json.loads((CHECKOUT / "schemas/diff/report.schema.json").read_text("utf-8"))
    Draft202012Validator(schema).validate(diff_to_json(diff, diff.exit_status()))


def test_command_line_exit_statuses_and_markdown_summary_first(
    base_dir: Path, head_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diff", "--no-run", str(base_dir), str(head_dir)]) == 0
    out = capsys.readouterr().out
    assert re.match(r"## Contract diff: .* \*\*compatible\*\*", out)
    assert main(["diff", "no-such-revision", str(head_dir), "--repo", str(head_dir)]) == 2
    assert "no-such-revision" in capsys.readouterr().err


def test_the_sections_since_the_release_are_read_together() -> None:
    # Two steps landed since the 1.6.0 release: 1.8.0 breaking, then 1.9.0 compatible. The diff
    # spans both, so the breaking note of 1.8.0 counts although 1.9.0 is on top.
    changes = (
        "# Changes\n\n## 1.9.0\n\ncompatible matching\n\n## 1.8.0\n\nbreaking for writers\n\n"
        "## 1.7.0\n\na schema\n\n## 1.6.0\n\nbreaking long ago\n"
    )
    since = changes_since(changes, "1.6.0", "1.9.0")
    assert "compatible matching" in since and "breaking for writers" in since
    assert "a schema" in since and "long ago" not in since
    assert changes_since(changes, "1.8.0", "1.9.0").strip() == "compatible matching"
    assert changes_since(None, "1.6.0", "1.9.0") == ""
