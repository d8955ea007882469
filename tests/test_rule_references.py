"""Comments and docstrings that name a spec rule name one that exists (house style: a comment
names the rule it implements, so a wrong ID misleads the reader)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "spec.md"
SOURCES = sorted(
    [
        *(ROOT / "reference" / "persyk_session").glob("*.py"),
        *(ROOT / "conformance" / "persyk_conformance").glob("*.py"),
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


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_rule_ids_named_in_code_exist_in_spec(source: Path) -> None:
    known = spec_rule_ids()
    unknown = [
        f"{source.name}:{number}: {mention}"
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        for mention in MENTION.findall(line)
        if mention not in known
    ]
    assert not unknown, "\n".join(unknown)


CATALOG_ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]+)` \| (\w+) \|", re.MULTILINE)


def test_spec_error_catalog_equals_the_code_catalog_with_phases() -> None:
    from persyk_session._errors import PHASE_OF, Code

    text = SPEC.read_text(encoding="utf-8")
    catalog = text[text.index("## Error catalog") : text.index("## Exit statuses")]
    in_spec = dict(CATALOG_ROW.findall(catalog))
    in_code = {str(code): phase for code, phase in PHASE_OF.items()}
    assert set(PHASE_OF) == set(Code)  # every code has a phase
    assert in_spec == in_code
