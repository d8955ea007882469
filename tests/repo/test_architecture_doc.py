"""docs/maintainers/architecture.md cannot go stale where it names files: its module tables, layer
tables and rule index are what tools/architecture.py writes from the code (the layer order from
``test_layers.LAYERS``, the one place it is kept), and every other file it names exists."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import test_layers
from _paths import CHECKOUT

ROOT = CHECKOUT
sys.path.insert(0, str(ROOT / "tools"))

import architecture  # noqa: E402

PAGE = ROOT / "docs" / "maintainers" / "architecture.md"
# Where a file name of the page is looked up: the checkout, then each package and source folder.
FOLDERS = (ROOT, ROOT / "reference" / "persyk_session", ROOT / "reference" / "persyk_dsh",
           ROOT / "conformance" / "persyk_conformance", ROOT / "conformance" / "persyk_maintainers",
           ROOT / "contract" / "persyk_contract", ROOT / "fixtures", ROOT / "fixtures" / "_cases",
           ROOT / "tools")
_NAMED_FILE = re.compile(r"`([A-Za-z0-9_./*-]+\.py)`")


@pytest.fixture(scope="module")
def parts() -> dict[str, str]:
    return architecture.sections()


def test_the_generated_parts_of_the_page_are_current(parts: dict[str, str]) -> None:
    page = PAGE.read_text("utf-8")
    assert architecture.render(page, parts) == page, (
        "docs/maintainers/architecture.md is stale: run python tools/architecture.py")


def test_the_staleness_check_fails_on_a_page_naming_a_removed_module(
    parts: dict[str, str],
) -> None:
    # The broken fake: the page as it was before the adapters were split.
    page = PAGE.read_text("utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| `adapters/_subprocess.py`"))
    stale = page.replace(row, row.replace("_subprocess.py", "_adapters.py"))
    assert stale != page
    assert architecture.render(stale, parts) == page


def test_a_page_without_the_markers_is_refused(parts: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="no markers for 'rule index'"):
        architecture.render("# Architecture\n", parts)


def test_a_new_module_is_listed_with_its_summary_size_and_rules(tmp_path: Path) -> None:
    (tmp_path / "read").mkdir()
    (tmp_path / "read" / "__init__.py").write_text('"""Reading."""\n')
    (tmp_path / "read" / "_tail.py").write_text(
        '"""Where a record ends (REC-1). More words."""\n\n\ndef cut() -> None:\n'
        '    """REC-2, REC-3 and REC-4."""\n')
    found = architecture.modules("persyk_session", tmp_path, ["REC-1", "REC-2", "REC-3", "REC-4"])
    tail = next(m for m in found if m.path == "read/_tail.py")
    assert (tail.group, tail.lines, tail.summary) == ("read", 5, "Where a record ends (REC-1).")
    assert architecture.compact(tail.rules) == "REC-1..REC-4"


@pytest.mark.slow
def test_the_layer_tables_are_drawn_from_the_layers_test(monkeypatch: pytest.MonkeyPatch) -> None:
    before = architecture.sections()["persyk_maintainers layers"]
    moved = {**test_layers.LAYERS["persyk_maintainers"], "gate": 5}
    monkeypatch.setitem(architecture.LAYERS, "persyk_maintainers", moved)
    after = architecture.sections()["persyk_maintainers layers"]
    assert before != after
    assert "| 5 | `gate/` |" in after and "| 1 | `gate/` |" in before


def test_every_rule_prefix_points_to_the_reference_modules_that_name_it(
    parts: dict[str, str],
) -> None:
    index = parts["rule index"]
    prefixes = {architecture.rule_order(r)[0] for r in architecture.rule_ids()}
    rows = {line.split(" | ")[0].removeprefix("| ").removesuffix("-"): line
            for line in index.splitlines()[2:]}
    assert set(rows) == prefixes
    # The reference's columns: persyk_session and the dsh-v0 backend (persyk_dsh).
    columns = [2 + i for i, folder in enumerate(architecture.PACKAGES.values())
               if folder.parent.name == "reference"]
    unplaced = sorted(p for p, row in rows.items()
                      if all(row.split(" | ")[c] == "none" for c in columns))
    assert unplaced == [], f"rule prefixes no reference module names: {unplaced}"


def missing_files(page: str) -> list[str]:
    """The ``*.py`` names of ``page`` that match no file (a glob must match one)."""
    missing = []
    for name in sorted(set(_NAMED_FILE.findall(page))):
        if "/" in name.strip("/"):
            found = any(list(folder.glob(name)) for folder in FOLDERS)
        else:
            found = any(next(folder.rglob(name), None) for folder in FOLDERS[1:]) or (
                ROOT / name).exists()
        if not found:
            missing.append(name)
    return missing


def test_every_file_the_page_names_exists() -> None:
    assert missing_files(PAGE.read_text("utf-8")) == []


def test_the_file_check_finds_a_moved_module_named_by_its_old_path() -> None:
    page = "`adapters/_adapters.py` and `_contract_diff.py` and `read/_grammar.py`, `golden_*.py`"
    assert missing_files(page) == ["_contract_diff.py", "adapters/_adapters.py"]
