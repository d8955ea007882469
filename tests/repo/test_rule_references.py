"""Comments and docstrings that name a spec rule name one that exists (house style: a comment
names the rule it implements, so a wrong ID misleads the reader)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT
SPEC = ROOT / "docs" / "spec.md"
SOURCES = sorted(
    [
        *(ROOT / "reference" / "persyk_session").rglob("*.py"),
        *(ROOT / "conformance" / "persyk_conformance").rglob("*.py"),
    ]
)
AREAS = "REC|HDR|ENV|ID|TREE|CTX|MSG|BLK|AST|ENT|APP|RCV|SRCH|RT|CAP|DIAG"
# An area prefix followed by a dash and a number or a word: also catches invented IDs such as
# "HDR-0" or "LABEL-1"-style names that use a real area.
MENTION = re.compile(rf"\b((?:{AREAS})-[0-9A-Z]+)\b")
RULE_ROW = re.compile(r"^\| `?([A-Z]+-\d+)`? \|", re.MULTILINE)


def spec_rule_ids() -> frozenset[str]:
    return frozenset(RULE_ROW.findall(SPEC.read_text(encoding="utf-8")))


def test_spec_defines_rules() -> None:
    assert len(spec_rule_ids()) > 100


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_rule_ids_named_in_code_exist_in_spec(source: Path) -> None:
    known = spec_rule_ids()
    unknown = [
        f"{source.name}:{number}: {mention}"
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        for mention in MENTION.findall(line)
        if mention not in known
    ]
    assert not unknown, "\n".join(unknown)


def test_code_enum_names_exactly_the_contract_catalog() -> None:
    # The catalog (codes with phases) is the contract's, generated from docs/spec.md; the
    # reference spells the same codes as an enum. A code added on one side only fails here.
    import persyk_contract
    from persyk_session import Code

    assert [str(code) for code in Code] == [entry.code for entry in persyk_contract.error_catalog()]


def test_contract_catalog_is_the_spec_catalog_with_phases() -> None:
    import persyk_contract

    in_spec = persyk_contract.catalog_from_spec(SPEC.read_text(encoding="utf-8"))
    assert in_spec == list(persyk_contract.error_catalog()), "run python fixtures/build.py"
