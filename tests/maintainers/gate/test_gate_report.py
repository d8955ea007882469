"""The gate's Markdown leads with the verdict and the next step, caps long evidence tables with
a count, and with the version unchanged still says what existing data means: a schema
tightening printed 230 uncapped rows and said nothing of the MAJOR step the JSON knew about,
and the hint for an edited case proposed the very version that had to move."""

from __future__ import annotations

import json
from pathlib import Path

from persyk_maintainers.gate._diff import ContractDiff, Evidence, next_version
from persyk_maintainers.gate._report import EVIDENCE_ROWS, render_diff_markdown
from test_contract_diff import base_dir as base_dir  # a fixture, used by name
from test_contract_diff import bump, edit_manifest, run_diff, version_of
from test_contract_diff import head_dir as head_dir  # a fixture, used by name


def _tighten_header_ids(head: Path) -> None:
    header_file = head / "schemas/v1/header.json"
    header = json.loads(header_file.read_text("utf-8"))
    header["properties"]["id"] = {"$ref": "defs.json#/$defs/Id", "maxLength": 8}
    header_file.write_text(json.dumps(header), "utf-8")


def test_the_next_version_follows_the_compatibility_policy() -> None:
    compatible = Evidence(side="readers", case="G-900", what="new", breaking=False)
    breaking = Evidence(side="readers", case="R-900", what="flip", breaking=True)
    refused = Evidence(side="readers", case="G-001", what="refused", breaking=True,
                       existing_data=True)
    assert next_version("1.13.0", [compatible]) == "1.13.1"
    assert next_version("1.13.0", [compatible, breaking]) == "1.14.0"
    assert next_version("1.13.0", [breaking, refused]) == "2.0.0"


def test_a_tightening_with_the_version_unchanged_names_the_major_step_first(
    base_dir: Path, head_dir: Path
) -> None:
    _tighten_header_ids(head_dir)
    diff = run_diff(base_dir, head_dir)
    text = render_diff_markdown(diff, diff.exit_status())
    lines = text.splitlines()
    assert lines[2].startswith("**Next step:** the contract changed but its version stayed")
    assert "set it to 2.0.0 (MAJOR: files valid under the base are refused)" in lines[2]
    assert any("(MAJOR) may do that (GEN-1)" in p for p in diff.problems)
    breaking = [e for e in diff.evidence if e.breaking]
    assert len(breaking) > EVIDENCE_ROWS
    section = text.split("### Why it breaks", 1)[1].splitlines()
    table = [line for line in section[:EVIDENCE_ROWS + 10] if line.startswith("|")]
    assert len(table) == 2 + EVIDENCE_ROWS + 1  # header, rule, rows, the count row
    table = "\n".join(table)
    assert f"... and {len(breaking) - EVIDENCE_ROWS} more rows" in table


def test_the_revision_hint_proposes_the_version_the_head_must_move_to(
    base_dir: Path, head_dir: Path
) -> None:
    edit_manifest(head_dir, "R-047",
                  lambda m: m["steps"][0]["expect"]["errors"][0].update(line=4))
    unbumped = run_diff(base_dir, head_dir)
    (hint,) = [p for p in unbumped.problems if p.startswith("R-047:")]
    assert f'"revised": "{version_of(base_dir)}"' not in hint
    assert '"revised": "' in hint
    bump(head_dir, "1.99.0", "R-047 expects line 4 (breaking)")
    (hint,) = [p for p in run_diff(base_dir, head_dir).problems if p.startswith("R-047:")]
    assert '"revised": "1.99.0"' in hint


def test_a_compatible_complete_change_says_there_is_nothing_to_do() -> None:
    diff = ContractDiff(base="base", head="head", base_version="1.13.0",
                        head_version="1.13.1", cases=(), rules=(), codes=(), schemas=(),
                        evidence=(), problems=(), notes=())
    assert "**Next step:** nothing" in render_diff_markdown(diff, 0)
