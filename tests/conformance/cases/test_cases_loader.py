"""Loading the shipped cases: discovery, manifests, and refusal of broken fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from persyk_conformance._profiles import DSH_V0, V1, Profile
from persyk_conformance.cases._load import (
    Case,
    CaseError,
    case_schema,
    default_root,
    load_cases,
    manifest_problems,
    read_manifest,
)


def write_case(
    root: Path, group: str, manifest: dict[str, Any], dirname: str | None = None
) -> Path:
    directory = root / group / (dirname or f"{manifest['id']}-a-case")
    (directory / "tree" / "session").mkdir(parents=True)
    (directory / "tree" / "session" / "session.jsonl").write_bytes(b"")
    (directory / "case.json").write_text(json.dumps(manifest), "utf-8")
    return directory


def golden_manifest(case_id: str = "G-001") -> dict[str, Any]:
    return {
        "id": case_id, "kind": "golden", "title": "t", "rules": ["HDR-8"], "level": "MUST",
        "requires": ["read"],
        "steps": [{"op": "validate", "args": {"session": "session"},
                   "expect": {"valid": True, "errors": []}}],
    }


def test_shipped_cases_load_from_the_installed_package() -> None:
    cases = load_cases()
    assert cases, "load_cases must find the shipped fixtures"
    assert all(isinstance(c, Case) for c in cases)
    assert {c.kind for c in cases} >= {"golden", "rejection"}


def test_shipped_cases_are_ordered_by_group_then_id() -> None:
    cases = load_cases()
    keys = [(("golden", "rejection", "scenario").index(c.group), int(c.id[2:])) for c in cases]
    assert keys == sorted(keys)


def test_case_knows_its_directory_and_tree() -> None:
    case = next(c for c in load_cases() if c.id == "G-001")
    assert case.directory.name.startswith("G-001-")
    assert (case.tree / "session" / "session.jsonl").is_file()
    assert case.steps[0].op == "validate"


def test_empty_fixtures_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match="no conformance case"):
        load_cases(tmp_path)


def test_valid_case_in_a_temporary_root_loads(tmp_path: Path) -> None:
    write_case(tmp_path, "golden", golden_manifest())
    [case] = load_cases(tmp_path)
    assert (case.id, case.rules, case.requires) == ("G-001", ("HDR-8",), ("read",))


BROKEN = [
    ("missing-steps", {k: v for k, v in golden_manifest().items() if k != "steps"}),
    ("bad-id", {**golden_manifest(), "id": "G-1"}),
    ("unknown-capability", {**golden_manifest(), "requires": ["teleport"]}),
    ("unknown-op", {**golden_manifest(),
                    "steps": [{"op": "fly", "args": {}, "expect": {}}]}),
    ("extra-member", {**golden_manifest(), "author": "me"}),
    ("empty-rules", {**golden_manifest(), "rules": []}),
    ("id-prefix-disagrees-with-kind", {**golden_manifest(), "id": "R-001"}),
]


@pytest.mark.parametrize("manifest", [m for _, m in BROKEN], ids=[n for n, _ in BROKEN])
def test_invalid_manifest_is_refused_with_its_place(
    tmp_path: Path, manifest: dict[str, Any]
) -> None:
    write_case(tmp_path, "golden", manifest, dirname="G-001-broken")
    with pytest.raises(CaseError, match=r"G-001-broken/case.json"):
        load_cases(tmp_path)


def rejection_manifest(expect: dict[str, Any]) -> dict[str, Any]:
    return {**golden_manifest("R-001"), "kind": "rejection",
            "steps": [{"op": "validate", "args": {"session": "session"}, "expect": expect}]}


SINGLE_FAULT = [
    ("one-error", {"valid": False, "errors": [{"code": "X", "line": 2}]}, True),
    ("error-result", {"error": {"code": "PATH_NOT_FOUND"}}, True),
    ("two-errors", {"valid": False, "errors": [{"code": "X"}, {"code": "Y"}]}, False),
    ("no-error", {"valid": False, "errors": []}, False),
    ("valid-true", {"valid": True, "errors": [{"code": "X"}]}, False),
    ("error-without-code", {"error": {"line": 1}}, False),
]


@pytest.mark.parametrize(("expect", "accepted"), [(e, a) for _, e, a in SINGLE_FAULT],
                         ids=[n for n, _, _ in SINGLE_FAULT])
def test_rejection_case_must_expect_exactly_one_fault(
    tmp_path: Path, expect: dict[str, Any], accepted: bool
) -> None:
    write_case(tmp_path, "rejection", rejection_manifest(expect))
    if accepted:
        assert load_cases(tmp_path)[0].id == "R-001"
    else:
        with pytest.raises(CaseError):
            load_cases(tmp_path)


def test_directory_must_start_with_the_id(tmp_path: Path) -> None:
    write_case(tmp_path, "golden", golden_manifest(), dirname="G-002-wrong")
    with pytest.raises(CaseError, match="must start with G-001-"):
        load_cases(tmp_path)


def test_case_in_the_wrong_group_is_refused(tmp_path: Path) -> None:
    write_case(tmp_path, "rejection", golden_manifest())
    with pytest.raises(CaseError, match="golden case in the rejection group"):
        load_cases(tmp_path)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    write_case(tmp_path, "golden", golden_manifest(), dirname="G-001-one")
    write_case(tmp_path, "golden", golden_manifest(), dirname="G-001-two")
    with pytest.raises(CaseError, match="used twice"):
        load_cases(tmp_path)


def _oracle_lines(manifest: dict[str, Any]) -> list[str]:
    oracle = Draft202012Validator(case_schema())
    return sorted(f"/{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"
                  for e in oracle.iter_errors(manifest))


@pytest.mark.parametrize("manifest", [m for _, m in BROKEN], ids=[n for n, _ in BROKEN])
def test_manifest_problems_are_the_oracles_lines_for_a_broken_manifest(
    manifest: dict[str, Any]
) -> None:
    # The compiled validator only answers "valid?"; the lines come from python-jsonschema.
    assert sorted(manifest_problems(manifest)) == _oracle_lines(manifest)


@pytest.mark.parametrize("profile", [V1, DSH_V0], ids=["v1", "dsh-v0"])
def test_compiled_and_oracle_validators_agree_on_every_shipped_manifest(profile: Profile) -> None:
    oracle = Draft202012Validator(case_schema(profile.case_schema))
    manifests = [read_manifest(case.directory / "case.json") for case in load_cases(
        default_root(profile), profile)]
    assert manifests
    assert [m["id"] for m in manifests if not oracle.is_valid(m)] == []
    assert [m["id"] for m in manifests if manifest_problems(m, profile)] == []
