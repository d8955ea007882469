"""What the prose names exists: README.md, the pages under docs/ and the comments and docstrings of
conformance/, reference/, tools/ and tests/ name only files, modules, private names, rules, cases
and harness checks that the checkout holds (tests/_prose_references.py says what counts). A module
renamed or a rule renumbered fails here, with the page or module and line that still names it.

The dated notes in benchmarks/results/ are left out: they say what was true on their date."""

from __future__ import annotations

import ast
import subprocess
from functools import cache
from pathlib import Path

import persyk_contract
import pytest
from _paths import CHECKOUT
from _prose_references import Known, prose_of_python, stale_references
from persyk_conformance.harness._canaries import HARNESS_IDS
from persyk_conformance.harness._registry import checks_for

ROOT = CHECKOUT
# Where each package's modules live in the checkout (pyproject.toml, package-dir).
PACKAGE_DIRS = {
    "contract/persyk_contract": "persyk_contract",
    "schemas": "persyk_contract.schemas",
    "reference/persyk_session": "persyk_session",
    "conformance/persyk_conformance": "persyk_conformance",
    "fixtures": "persyk_conformance.fixtures",
}
CODE_FOLDERS = ("conformance/", "reference/", "tools/", "tests/")
PROFILES = ("v1", "dsh-v0")
# Names that exist on purpose nowhere: (path, what it names) -> why.
NAMED_ON_PURPOSE: dict[tuple[str, str], str] = {
    ("docs/maintainers/maintainers.md", "R-649"): "the worked example adds this case",
    ("tests/maintainers/gate/test_contract_diff.py", "R-698"): "the test adds this case to a copy",
    ("tests/maintainers/gate/test_gate_hostile.py", "R-698"): "the test adds this case to a copy",
    ("tests/conformance/cases/test_fixture_ids.py", "R-651"):
        "a gap in an id range, the point of the test",
    ("tests/conformance/cases/test_fixture_ids.py", "R-660"): "a retired id of the test's own list",
    ("tests/repo/test_rule_references.py", "HDR-0"): "an invented id that check must catch",
    ("tests/conformance/cases/test_rules_on_one_case.py", "S-979"):
        "names the cases an earlier contract lacked",
    ("tests/contract/test_contract.py", "_x"): "an example of a private part of a dotted name",
}


def _tracked() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
        capture_output=True, text=True, check=True).stdout
    return sorted({p for p in listed.splitlines() if (ROOT / p).is_file()})


def _module_name(path: str) -> str | None:
    for folder, package in PACKAGE_DIRS.items():
        if path.startswith(folder + "/") and path.endswith(".py"):
            parts = path[len(folder) + 1:-3].split("/")
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join([package, *parts])
    return None


def _defined(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _ids() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    rules = [*persyk_contract.rules(), *persyk_contract.profile_rules("dsh-v0")]
    ids = {rule.id for rule in rules}
    phases = {rule.phase.upper() for rule in rules}
    for profile in PROFILES:
        folder = ROOT / "fixtures" / profile
        ids |= {"-".join(case.name.split("-")[:2]) for case in folder.glob("*/*-*")}
        retired = folder / "RETIRED.txt"
        if retired.is_file():
            ids |= {line.split("\t")[0] for line in retired.read_text("utf-8").splitlines()
                    if line and not line.startswith("#")}
        ids |= {check.id for check in checks_for(profile)}
    ids |= set(HARNESS_IDS)
    prefixes = {identifier.split("-")[0] for identifier in ids} | phases
    return frozenset(ids), frozenset(prefixes), frozenset(r.id.split("-")[0] for r in rules)


@cache
def known() -> Known:
    files = _tracked()
    modules = {name for name in map(_module_name, files) if name}
    stems = {Path(f).stem for f in files if f.endswith(".py")}
    stems |= {part for f in files if f.endswith(".py") for part in Path(f).parent.parts}
    defined: dict[str, set[str]] = {"": set()}
    for path in files:
        if not path.endswith(".py"):
            continue
        names = _defined(ast.parse((ROOT / path).read_text("utf-8")))
        module = _module_name(path)
        top = module.split(".")[0] if module else ""
        defined.setdefault(top, set()).update(names)
        defined[""].update(names)
    ids, prefixes, rule_prefixes = _ids()
    return Known(files=frozenset(files), modules=frozenset(modules), stems=frozenset(stems),
                 defined={k: frozenset(v) for k, v in defined.items()}, ids=ids,
                 id_prefixes=prefixes, rule_prefixes=rule_prefixes)


def _sources() -> list[str]:
    pages = [p for p in _tracked() if p == "README.md"
             or (p.startswith("docs/") and p.endswith(".md"))]
    code = [p for p in _tracked() if p.startswith(CODE_FOLDERS) and p.endswith(".py")]
    assert pages and code, "found no pages or no modules to read"
    return pages + code


def _stale_in(path: str) -> list[str]:
    text = (ROOT / path).read_text("utf-8")
    if path.endswith(".py"):
        module = _module_name(path)
        package = module.split(".")[0] if module else ""
        stale = [s for line, prose in prose_of_python(text)
                 for s in stale_references(prose, known(), package=package, first_line=line)]
    else:
        stale = stale_references(text, known())
    return [str(s) for s in stale if (path, s.text) not in NAMED_ON_PURPOSE]


@pytest.mark.parametrize("path", _sources())
def test_prose_names_only_what_exists(path: str) -> None:
    assert _stale_in(path) == []


# --- the checker itself: a planted stale name of each kind is reported --------------------------

PLANTED = [
    ("a module renamed", "The grammar lives in ``_json_grammar_gone``.", "_json_grammar_gone"),
    ("a path", "See `read/_no_such_store.py` for the chunks.", "read/_no_such_store.py"),
    ("a dotted module", "Runs in persyk_conformance.run._no_runner.",
     "persyk_conformance.run._no_runner"),
    ("a test file", "As tests/test_no_such_behaviour.py shows.", "tests/test_no_such_behaviour.py"),
    ("a rule of a phase", "A damaged file is never repaired (READ-1).", "READ-1"),
    ("a rule past the last", "As APP-999 says.", "APP-999"),
    ("a case", "Pinned by G-999.", "G-999"),
]


@pytest.mark.parametrize(("text", "stale"), [(t, s) for _, t, s in PLANTED],
                         ids=[why for why, _, _ in PLANTED])
def test_report_a_planted_stale_reference(text: str, stale: str) -> None:
    assert [s.text for s in stale_references(text, known())] == [stale]


GOOD = [
    ("a module by its path", "`read/_store.py` streams the file."),
    ("a dotted module and attribute", "persyk_conformance.cases._sanity.rules_on_one_case"),
    ("a private module in backticks", "the grammar of ``_records``"),
    ("a rule, a range and a case", "APP-26, REC-7..REC-9, G-100 and H-101"),
    ("words that look like ids", "UTF-8, SHA-256 and ISO-8601 are no rules"),
    ("a page", "docs/implementers/protocol.md, docs/spec.md"),
]


@pytest.mark.parametrize("text", [t for _, t in GOOD], ids=[why for why, _ in GOOD])
def test_accept_references_that_exist(text: str) -> None:
    assert stale_references(text, known()) == []


def test_read_only_comments_and_docstrings_of_a_module() -> None:
    source = '"""Names ``_gone_a``."""\nx = "`_gone_b`"\n# and ``_gone_c``\n'
    found = [s.text for line, prose in prose_of_python(source)
             for s in stale_references(prose, known(), first_line=line)]
    assert found == ["_gone_a", "_gone_c"]
