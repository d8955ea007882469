"""The contract package (persyk_contract) is the one source both the reference and the runner
read: schemas, rules, the error catalog and the capability table
(docs/maintainers/architecture.md)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import persyk_contract
import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT


def test_every_schema_file_of_the_checkout_ships_in_the_contract() -> None:
    in_checkout = sorted(p.relative_to(ROOT / "schemas").as_posix()
                         for p in (ROOT / "schemas").rglob("*.json"))
    assert list(persyk_contract.schema_names()) == in_checkout
    assert persyk_contract.schema("v1/header.json")["properties"]["type"]["const"] == "session"


def test_schema_names_filter_by_group() -> None:
    names = persyk_contract.schema_names("protocol/")
    assert names and all(name.startswith("protocol/") for name in names)
    assert [f.name for f in persyk_contract.schema_files("v1")] == sorted(
        name.removeprefix("v1/") for name in persyk_contract.schema_names("v1/")
    )


def test_capability_table_agrees_with_the_hello_schema_enum() -> None:
    hello = persyk_contract.schema("protocol/hello.response.json")
    assert list(persyk_contract.capabilities()) == hello["$defs"]["capability"]["enum"]


def test_capability_table_gives_each_operation_one_capability() -> None:
    ops = [op for ops in persyk_contract.capabilities().values() for op in ops]
    assert len(ops) == len(set(ops))
    assert persyk_contract.read_only_operations() <= set(ops)


def test_reference_declares_exactly_the_capabilities_with_operations() -> None:
    from persyk_session.adapter import hello

    expected = [cap for cap, ops in persyk_contract.capabilities().items() if ops]
    assert hello()["capabilities"] == expected


def test_runner_capability_table_is_the_contract_table() -> None:
    from persyk_conformance._protocol import CAPABILITY_OF_OP, RESERVED_CAPABILITIES

    table = persyk_contract.capabilities()
    assert {op: cap for cap, ops in table.items() for op in ops} == dict(CAPABILITY_OF_OP)
    assert set(RESERVED_CAPABILITIES) == {cap for cap, ops in table.items() if not ops}


def test_rules_and_catalog_are_loaded_from_the_generated_files() -> None:
    rules = json.loads((ROOT / "contract" / "persyk_contract" / "rules.json").read_text("utf-8"))
    assert [rule.to_json() for rule in persyk_contract.rules()] == rules["rules"]
    phases = persyk_contract.phase_of_code()
    assert phases["RECORD_INVALID_UTF8"] == "read"
    assert phases["USAGE"] == "usage"


def test_catalog_parser_reads_only_the_catalog_section() -> None:
    text = ("## Rules\n| `NOT_A_CODE` | read | outside the catalog |\n"
            "## Error catalog\n\n| code | phase | meaning |\n|---|---|---|\n"
            "| `SESSION_EMPTY` | read | zero bytes (HDR-1) |\n| `USAGE` | usage | bad args |\n"
            "## Exit statuses\n| `LATER` | read | after the catalog |\n")
    assert persyk_contract.catalog_from_spec(text) == [
        persyk_contract.CatalogCode("SESSION_EMPTY", "read", "zero bytes (HDR-1)"),
        persyk_contract.CatalogCode("USAGE", "usage", "bad args"),
    ]


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _private(name: str) -> bool:
    """A dotted name with a part that is private (``_x``); dunders such as ``__version__`` are
    public."""
    return any(part.startswith("_") and not part.endswith("__") for part in name.split("."))


RUNNER_PACKAGE = ROOT / "conformance" / "persyk_conformance"
MAINTAINERS_PACKAGE = ROOT / "conformance" / "persyk_maintainers"
RUNNER = sorted(RUNNER_PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("source", RUNNER, ids=lambda p: p.relative_to(RUNNER_PACKAGE).as_posix())
def test_runner_imports_no_private_module_of_the_reference(source: Path) -> None:
    private = [name for name in _imports(source)
               if name.startswith("persyk_session.") and _private(name)]
    assert not private, private


def reference_users(package: Path) -> list[str]:
    """The modules under ``package`` that import the reference, ``persyk_session`` or its dsh-v0
    backend ``persyk_dsh`` (anywhere in the module)."""
    return sorted(p.relative_to(package).as_posix() for p in sorted(package.rglob("*.py"))
                  if any(n.split(".")[0] in ("persyk_session", "persyk_dsh") for n in _imports(p)))


def test_runner_imports_the_reference_only_for_its_in_process_mode() -> None:
    # The in-process adapter is the one runner module that may reach the reference
    # directly; the subprocess adapter, the harness and the CLI go through an adapter command.
    assert reference_users(RUNNER_PACKAGE) == ["adapters/_in_process.py"]
    # What maintainers run reaches a reference as a process too (a contract side's, confined).
    assert reference_users(MAINTAINERS_PACKAGE) == []


def test_the_reference_import_pin_catches_the_subprocess_adapter_importing_it(
    tmp_path: Path,
) -> None:
    # The broken fake: a subprocess adapter that calls into the reference directly.
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "_in_process.py").write_text("import persyk_session.adapter\n")
    (tmp_path / "adapters" / "_subprocess.py").write_text(
        "def spawn() -> None:\n    from persyk_session import operations\n")
    assert reference_users(tmp_path) == ["adapters/_in_process.py", "adapters/_subprocess.py"]


def test_fixture_builder_uses_public_api_only() -> None:
    private = [name for name in _imports(ROOT / "fixtures" / "build.py")
               if name.startswith(("persyk_session", "persyk_conformance", "persyk_contract"))
               and _private(name)]
    assert not private, private


SPEC = (ROOT / "docs" / "spec.md").read_text("utf-8")
CHANGES = (ROOT / "docs" / "changes.md").read_text("utf-8")


def test_contract_version_is_the_one_the_spec_names() -> None:
    assert persyk_contract.contract_version() == persyk_contract.contract_version_from_spec(SPEC)
    assert f"## {persyk_contract.contract_version()}" in CHANGES


def test_rule_markers_become_since_and_revision() -> None:
    text = (
        "| A-1 | MUST | read | plain |\n"
        "| A-2 | MUST | read | **(since 1.1.0)** new |\n"
        "| A-3 | SHOULD | append | **(rev. 3, 1.2.0)** changed |\n"
    )
    assert [rule.to_json() for rule in persyk_contract.rules_from_spec(text)] == [
        {"id": "A-1", "level": "MUST", "phase": "read", "since": "1.0.0"},
        {"id": "A-2", "level": "MUST", "phase": "read", "since": "1.1.0"},
        {"id": "A-3", "level": "SHOULD", "phase": "append", "since": "1.0.0",
         "revision": 3, "revised": "1.2.0"},
    ]


def test_every_revised_or_added_rule_is_listed_in_the_changes() -> None:
    # A rule never changes meaning silently: its marker and an entry in docs/changes.md.
    changed = [
        rule.id for rule in persyk_contract.rules()
        if rule.revised is not None or rule.since != "1.0.0"
    ]
    assert changed
    missing = [rule for rule in changed if f"`{rule}`" not in CHANGES]
    assert not missing, missing


def test_every_retired_case_and_code_is_listed_in_the_changes() -> None:
    retired = (ROOT / "fixtures" / "v1" / "RETIRED.txt").read_text("utf-8")
    ids = [line.split()[0] for line in retired.splitlines() if line[:2] in ("G-", "R-", "S-")]
    assert ids
    assert [case for case in ids if f"`{case}`" not in CHANGES] == []
    for code in ("RECORD_CARRIAGE_RETURN", "RECORD_EMPTY_LINE"):
        assert f"`{code}`" in CHANGES
        assert code not in {entry.code for entry in persyk_contract.error_catalog()}


def test_every_case_names_a_contract_version_it_belongs_to() -> None:
    version = tuple(int(part) for part in persyk_contract.contract_version().split("."))
    for manifest in (ROOT / "fixtures" / "v1").glob("*/*/case.json"):
        case = json.loads(manifest.read_text("utf-8"))
        for key in ("since", "revised"):
            if key in case:
                assert tuple(int(p) for p in case[key].split(".")) <= version, manifest
