"""The shipped fixtures are sane (as JSON-Schema-Test-Suite's `jsonschema_suite check`).

The full check runs against the installed package data; with a checkout at hand it also proves
that the contract's rules.json and errors.json match docs/spec.md and that fixtures/v1 is what
fixtures/build.py generates.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT
from persyk_conformance import check_fixtures
from persyk_conformance.cases._load import load_cases
from persyk_conformance.cases._match import match
from persyk_conformance.cases._sanity import required_codes
from persyk_contract import Rule, rules_from_spec

ROOT = CHECKOUT
SPEC = ROOT / "docs" / "spec.md"
BUILDER = ROOT / "fixtures" / "build.py"
GENERATED = ROOT / "fixtures" / "v1"
CONTRACT = ROOT / "contract" / "persyk_contract"
GENERATED_CONTRACT = ("rules.json", "errors.json", "rule-texts.json")


def spec_text() -> str | None:
    return SPEC.read_text("utf-8") if SPEC.is_file() else None


def test_fixtures_are_sane_for_the_read_phase() -> None:
    problems = check_fixtures(spec_text=spec_text(), rule_phases={"read"},
                              code_phases={"read", "usage"})
    assert not problems, "\n".join(problems)


def test_fixtures_cover_every_rule_and_code_of_read_append_recover() -> None:
    problems = check_fixtures(spec_text=spec_text())
    assert not problems, "\n".join(problems)


def test_enough_golden_and_rejection_cases() -> None:
    cases = load_cases()
    golden = sum(1 for c in cases if c.kind == "golden")
    rejection = sum(1 for c in cases if c.kind == "rejection")
    assert golden >= 85, golden
    assert rejection >= 160, rejection


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_generated_fixtures_are_up_to_date(tmp_path: Path) -> None:
    if not BUILDER.is_file() or not SPEC.is_file():
        pytest.skip("needs a checkout (fixtures/build.py and docs/spec.md)")
    out, contract = tmp_path / "v1", tmp_path / "contract"
    proc = subprocess.run([sys.executable, str(BUILDER), "--out", str(out),
                           "--contract-out", str(contract),
                           "--trace-out", str(tmp_path / "traceability.md")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    built, committed = tree_bytes(out), tree_bytes(GENERATED)
    stale = sorted(set(committed) ^ set(built))
    stale += sorted(rel for rel in set(built) & set(committed) if built[rel] != committed[rel])
    stale += [f"contract {name}" for name in GENERATED_CONTRACT
              if (contract / name).read_bytes() != (CONTRACT / name).read_bytes()]
    assert not stale, "run `python fixtures/build.py`; out of date:\n" + "\n".join(stale[:50])


def test_builder_is_deterministic(tmp_path: Path) -> None:
    if not BUILDER.is_file() or not SPEC.is_file():
        pytest.skip("needs a checkout (fixtures/build.py and docs/spec.md)")
    trees = []
    for name in ("a", "b"):
        subprocess.run([sys.executable, str(BUILDER), "--no-sanity", "--out",
                        str(tmp_path / name), "--contract-out", str(tmp_path / f"{name}-contract"),
                        "--trace-out", str(tmp_path / f"{name}-traceability.md")],
                       check=True, capture_output=True, cwd=ROOT)
        trees.append(tree_bytes(tmp_path / name))
    assert trees[0] == trees[1]


# --- the check itself finds problems -----------------------------------------------------------

def write_fixture_root(root: Path, manifests: list[dict[str, Any]]) -> Path:
    for manifest in manifests:
        group = manifest["kind"]
        directory = root / group / f"{manifest['id']}-case"
        (directory / "tree" / "session").mkdir(parents=True)
        (directory / "tree" / "session" / "session.jsonl").write_bytes(
            b'{"type":"session","version":1,"id":"s","timestamp":"2026-01-01T00:00:00Z"}\n')
        (directory / "case.json").write_text(json.dumps(manifest), "utf-8")
    (root / "RETIRED.txt").write_text("# none\nG-009\tretired for the test\n", "utf-8")
    return root


def manifest(case_id: str, rules: list[str], code: str | None = None) -> dict[str, Any]:
    expect: dict[str, Any] = ({"valid": True, "errors": []} if code is None
                              else {"valid": False, "errors": [{"code": code, "line": 1}]})
    return {"id": case_id, "kind": "golden" if code is None else "rejection", "title": "t",
            "rules": rules, "level": "MUST", "requires": ["read"],
            "steps": [{"op": "validate", "args": {"session": "session"}, "expect": expect}]}


RULES = [Rule("HDR-8", "MUST", "read"), Rule("HDR-1", "MUST", "read"),
         Rule("SRCH-1", "MUST", "search")]


@pytest.mark.parametrize(
    ("manifests", "wanted"),
    [
        ([manifest("G-001", ["HDR-8"])], "rule HDR-1 (read) is exercised by no case"),
        ([manifest("G-001", ["HDR-8", "HDR-1", "XYZ-1"])], "names rule XYZ-1"),
        ([manifest("G-009", ["HDR-8", "HDR-1"])], "G-009 is retired"),
        ([manifest("G-001", ["HDR-8", "HDR-1"])], "code SESSION_EMPTY (read) is expected by no"),
        ([manifest("G-001", ["HDR-8", "HDR-1"]), manifest("R-001", ["HDR-1"], "NOT_A_CODE")],
         "code NOT_A_CODE is expected by a case but is not in the catalog"),
    ],
    ids=["uncovered-rule", "unknown-rule", "retired-id", "uncovered-code", "code-outside-catalog"],
)
def test_check_reports_broken_fixtures(tmp_path: Path, manifests: list[dict[str, Any]],
                                       wanted: str) -> None:
    root = write_fixture_root(tmp_path, manifests)
    problems = check_fixtures(root, rules=RULES)
    assert any(wanted in p for p in problems), "\n".join(problems)


def test_check_reports_an_empty_fixture_root(tmp_path: Path) -> None:
    problems = check_fixtures(write_fixture_root(tmp_path, []), rules=RULES)
    assert any("no case found" in p for p in problems)


def test_rules_are_read_from_spec_rows() -> None:
    text = ("| ID | level | phase | statement |\n|---|---|---|---|\n"
            "| REC-1 | MUST | read | a statement |\n| APP-2 | SHOULD | append | another |\n")
    assert rules_from_spec(text) == [Rule("REC-1", "MUST", "read"),
                                     Rule("APP-2", "SHOULD", "append")]


def test_required_codes_include_usage_codes_and_skip_none() -> None:
    codes = required_codes()
    assert {"PATH_NOT_FOUND", "USAGE", "RECORD_INVALID_UTF8", "RECOVER_TAIL_SYNTAX"} <= set(codes)


def _without_exact(pattern: Any) -> Any:
    """The value a pattern describes, with every $exact operand unwrapped."""
    if isinstance(pattern, dict):
        if set(pattern) == {"$exact"}:
            return copy.deepcopy(pattern["$exact"])
        return {k: _without_exact(v) for k, v in pattern.items()}
    if isinstance(pattern, list):
        return [_without_exact(v) for v in pattern]
    return pattern


def _info_steps() -> list[tuple[str, dict[str, Any]]]:
    return [
        (case.id, dict(step.expect))
        for case in load_cases()
        for step in case.steps
        if step.op == "info" and "labels" in step.expect
    ]


@pytest.mark.parametrize(("case_id", "expect"), _info_steps(), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_info_expectation_rejects_an_extra_label_or_type_count(
    case_id: str, expect: dict[str, Any]
) -> None:
    # CTX-14: a cleared or never-labelled entry has no label. A subset pattern ({} matches
    # every object) could not catch an implementation that keeps a cleared label.
    correct = _without_exact(expect)
    assert match(expect, correct) == []
    stale_label = {**correct, "labels": {**correct["labels"], "never-labelled": "stale"}}
    assert match(expect, stale_label), f"{case_id}: an extra label goes unnoticed"
    counts = correct["counts"]
    extra_type = {**correct, "counts": {**counts, "byType": {**counts["byType"], "ghost": 1}}}
    assert match(expect, extra_type), f"{case_id}: an invented entry type count goes unnoticed"


def test_cleared_label_case_fails_an_implementation_that_keeps_the_label() -> None:
    (expect,) = [e for case_id, e in _info_steps() if case_id == "G-033"]
    kept = _without_exact(expect)
    kept["labels"]["s1"] = "state"  # what ignoring the null label of l6 would report
    assert any(p.startswith("/labels/s1") for p in match(expect, kept))


def _with_write_check(check: dict[str, Any], level: str = "MUST") -> dict[str, Any]:
    case = manifest("S-001", ["HDR-8", "HDR-1"])
    case.update(kind="scenario", level=level, requires=["read", "append"])
    case["steps"] = [{"op": "append", "args": {"session": "session", "records": []},
                      "expect": {}, "files": {"session/session.jsonl": check}}]
    return case


@pytest.mark.parametrize(
    ("case", "wanted"),
    [
        (dict(manifest("G-001", ["HDR-8"]), level="MUST"), None),
        (_with_write_check({"equals": "tree/session/session.jsonl"}),
         "compares the written session/session.jsonl byte for byte in a MUST case"),
        (_with_write_check({"equalsRecords": "tree/session/session.jsonl", "compact": True}),
         "checks REC-24 (compact) in a MUST case"),
    ],
    ids=["fine", "byte-exact-write-in-must", "compact-in-must"],
)
def test_level_check_finds_a_must_case_that_checks_a_should(
    tmp_path: Path, case: dict[str, Any], wanted: str | None
) -> None:
    problems = check_fixtures(write_fixture_root(tmp_path, [case]), rules=RULES)
    level_problems = [p for p in problems if "MUST case" in p or "stronger than" in p]
    assert level_problems == ([] if wanted is None else [p for p in level_problems if wanted in p])
    if wanted is not None:
        assert level_problems


def test_level_check_finds_a_must_case_of_should_rules(tmp_path: Path) -> None:
    rules = [*RULES, Rule("REC-24", "SHOULD", "append")]
    case = manifest("G-001", ["REC-24"])
    problems = check_fixtures(write_fixture_root(tmp_path, [case]), rules=rules)
    assert any("level MUST is stronger than every rule it names" in p for p in problems), problems
