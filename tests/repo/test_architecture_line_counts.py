"""The line-count table of docs/maintainers/architecture.md: persyk_session's core, fast engine
and edge, drawn from the same split tests/reference/core/test_core_purity.py checks, so the
page's numbers are the code's (tests/repo/test_architecture_doc.py fails when the page differs
from what it draws)."""

from __future__ import annotations

import sys

import pytest
from _paths import CHECKOUT

sys.path.insert(0, str(CHECKOUT / "tools"))

import architecture
import test_core_purity

PACKAGE = architecture.PACKAGES["persyk_session"]


@pytest.fixture(scope="module")
def found() -> list[architecture.Module]:
    return architecture.modules("persyk_session", PACKAGE, architecture.rule_ids())


def test_the_core_part_is_the_core_the_purity_test_checks(found: list[architecture.Module]) -> None:
    core = {m.path for m in found if architecture.part_of(m.path) == "core"}
    purity = {p.relative_to(PACKAGE).as_posix() for p in test_core_purity.CORE}
    assert core == purity - {"dsh.py"}


@pytest.mark.parametrize(("path", "part"), [
    ("read/_feed.py", "core"), ("__init__.py", "core"), ("fast/_lanes.py", "fast"),
    ("operations/_mode.py", "edge"), ("cli/__init__.py", "edge"), ("adapter.py", "edge"),
    ("_mode_name.py", "edge"), ("dsh.py", "alias"),
], ids=lambda value: str(value))
def test_each_module_is_placed_in_its_part(path: str, part: str) -> None:
    assert architecture.part_of(path) == part


def test_the_parts_add_up_to_the_package(found: list[architecture.Module]) -> None:
    table = architecture.line_counts(found)
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    lines = {row[0].removeprefix("| "): int(row[3].removesuffix(" |").replace(",", ""))
             for row in rows}
    assert set(lines) == {"core", "fast", "edge", "alias", "total"}
    assert lines["core"] + lines["fast"] + lines["edge"] + lines["alias"] == lines["total"]
    assert lines["total"] == sum(len(p.read_text("utf-8").splitlines())
                                 for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
