"""Every member a case expects of an error is stated: the error catalog of docs/spec.md
gives each code the members a diagnostic of it may carry (``line``, ``pointer``, ``root`` ...),
and no case expects any other. S-017 and S-019 expected a ``line`` on ``APPEND_LEAF_MISMATCH``
that no rule stated until APP-16 rev. 2 (contract 1.14.0); this test would have named them.

The objects checked are the diagnostics of results: ``error``, ``errors`` and ``diagnostics``.
A replay's ``halted`` is no diagnostic; docs/implementers/protocol.md fixes its shape (``code``,
``line``)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import persyk_contract
import pytest
from _paths import CHECKOUT
from persyk_contract import CatalogCode, catalog_from_spec

ROOT = CHECKOUT
CASES = ROOT / "fixtures" / "v1"
SPEC = (ROOT / "docs" / "spec.md").read_text(encoding="utf-8")
DIAGNOSTIC_KEYS = ("error", "errors", "diagnostics")
ALWAYS = frozenset({"code", "message"})  # every diagnostic has them (docs/implementers/protocol.md)


def _manifests() -> list[dict[str, Any]]:
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CASES.rglob("case.json"))]
    assert len(found) > 800, f"only {len(found)} cases found under {CASES}"
    return found


MANIFESTS = _manifests()
CATALOG = catalog_from_spec(SPEC)  # the text, not the generated file: the test reads what it says


def _diagnostics(node: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in DIAGNOSTIC_KEYS:
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, Mapping) and isinstance(item.get("code"), str):
                        yield item
            yield from _diagnostics(value)
    elif isinstance(node, list):
        for value in node:
            yield from _diagnostics(value)


def unstated_members(
    manifests: Sequence[Mapping[str, Any]], catalog: Sequence[CatalogCode]
) -> dict[str, set[str]]:
    """``code: {"CASE member", ...}`` for every expected member its catalog entry lacks."""
    stated = {entry.code: frozenset(entry.members or ()) | ALWAYS for entry in catalog}
    found: dict[str, set[str]] = {}
    for manifest in manifests:
        for diagnostic in _diagnostics(manifest.get("steps")):
            code = diagnostic["code"]
            for member in sorted(set(diagnostic) - stated.get(code, ALWAYS)):
                found.setdefault(code, set()).add(f"{manifest['id']} {member}")
    return found


def test_every_catalog_code_states_its_members() -> None:
    assert CATALOG, "docs/spec.md has no error catalog"
    missing = [entry.code for entry in CATALOG if entry.members is None]
    assert missing == []


def test_the_installed_catalog_has_the_members_of_docs_spec() -> None:
    assert list(persyk_contract.error_catalog()) == CATALOG


@pytest.mark.parametrize("entry", CATALOG, ids=lambda e: e.code)
def test_cases_expect_only_members_their_code_states(entry: CatalogCode) -> None:
    found = unstated_members(MANIFESTS, [entry]).get(entry.code, set())
    assert not found, f"{entry.code} states {entry.members}; cases expect more: {sorted(found)}"


def test_the_check_names_a_case_expecting_an_unstated_line() -> None:
    # The old text: APPEND_LEAF_MISMATCH stated nothing, while S-017 and S-019 asked for a line.
    old = [replace(entry, members=()) if entry.code == "APPEND_LEAF_MISMATCH" else entry
           for entry in CATALOG]
    found = unstated_members(MANIFESTS, old)
    assert found == {"APPEND_LEAF_MISMATCH": {"S-017 line", "S-019 line"}}


def test_the_check_reads_nested_diagnostics_of_every_kind() -> None:
    manifest = {"id": "X-1", "steps": [{"expect": {
        "errors": [{"code": "A", "line": 2}],
        "diagnostics": [{"code": "B", "root": "r"}],
        "error": {"code": "C", "message": "fixed", "column": 3},
        "halted": {"code": "D", "line": 1},
    }}]}
    catalog = [CatalogCode(code, "read", "m", ()) for code in "ABCD"]
    assert unstated_members([manifest], catalog) == {
        "A": {"X-1 line"}, "B": {"X-1 root"}, "C": {"X-1 column"}}
