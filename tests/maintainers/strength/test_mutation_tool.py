"""tools/mutation: the operators make exactly one change each, the numbering is stable, and the
report counts what the notes say (the mutation run itself is not part of the test run)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from types import ModuleType

import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT
MUTATION = ROOT / "tools" / "mutation"
sys.path.insert(0, str(MUTATION))

from _operators import error_codes, mutate, points  # noqa: E402
from _report import render_report, score  # noqa: E402

SOURCE = '''
"""doc"""
__all__ = ["f"]
LIMIT = 4


def f(items, flag=False):
    """doc"""
    total = 0
    for item in items:
        if item < LIMIT and not flag:
            total = total + item
        elif item == 9:
            raise ValueError(Code.RECORD_TOO_LARGE)
    return total > 1
'''
CODES = ["RECORD_TOO_DEEP", "RECORD_TOO_LARGE", "SESSION_EMPTY"]


def test_every_operator_has_a_point_and_docstrings_are_left_alone() -> None:
    found = points(SOURCE, CODES)
    assert {p.operator for p in found} == {"cmp", "negate", "const", "delete", "code", "boolop",
                                           "return"}
    assert all("doc" not in p.description for p in found)
    assert all(p.scope == (7, "f") for p in found if p.line > 7)


def test_each_mutant_compiles_and_differs_from_the_original_in_one_place() -> None:
    original = ast.dump(ast.parse(SOURCE))
    mutants = {mutate(SOURCE, p.index, CODES) for p in points(SOURCE, CODES)}
    assert len(mutants) == len(points(SOURCE, CODES))
    for text in mutants:
        assert ast.dump(ast.parse(text)) != original


def test_a_swapped_code_is_the_next_one_of_the_catalog() -> None:
    code = next(p for p in points(SOURCE, CODES) if p.operator == "code")
    assert "Code.SESSION_EMPTY" in mutate(SOURCE, code.index, CODES)
    errors = (ROOT / "reference" / "persyk_session" / "_errors.py").read_text("utf-8")
    assert error_codes(errors)[0] == "RECORD_INVALID_UTF8"


def test_the_report_counts_survivors_by_their_notes() -> None:
    rows = [
        {"key": "a.py:1", "module": "a.py", "index": 1, "mode": "fast", "verdict": "killed",
         "line": 1, "description": "x"},
        {"key": "a.py:2", "module": "a.py", "index": 2, "mode": "fast", "verdict": "survived",
         "line": 2, "description": "y"},
        {"key": "a.py:3", "module": "a.py", "index": 3, "mode": "fast", "verdict": "survived",
         "line": 3, "description": "z"},
    ]
    notes = {"a.py:2": {"equivalent": "dead code"}}
    assert score(rows, notes) == {"killed": 1, "equivalent": 1, "survived": 1}
    text = render_report(rows, notes)
    assert "1 of 2 non-equivalent" in text and "**survives**" in text


def _load_run_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_run", MUTATION / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


RUN = _load_run_tool()


@pytest.mark.parametrize("name", [
    "read/_grammar.py", "reference/persyk_session/read/_grammar.py",
    "persyk_session/read/_grammar.py", "/read/_grammar.py",
], ids=["slash-path", "checkout-path", "package-path", "leading-slash"])
def test_a_subpackage_module_is_named_by_its_slash_path(name: str) -> None:
    assert RUN.resolve_modules([name]) == ["read/_grammar.py"]


def test_a_subpackage_folder_names_its_modules() -> None:
    modules = RUN.resolve_modules(["write"])
    assert "write/_append.py" in modules and "write/_lock.py" in modules
    assert all(m.startswith("write/") and not m.endswith("__init__.py") for m in modules)


@pytest.mark.parametrize("name", ["_grammar.py", "read/_nothing.py", "nowhere"],
                         ids=["flat-name-of-a-moved-module", "missing-module", "missing-folder"])
def test_a_name_that_is_no_module_is_refused(name: str) -> None:
    with pytest.raises(SystemExit, match="no module or subpackage"):
        RUN.resolve_modules([name])


def test_the_mutants_of_a_subpackage_module_carry_its_slash_path_and_mode() -> None:
    chosen = RUN.resolve_modules(["reference/persyk_session/read/_grammar.py"])
    mutants = RUN.enumerate_mutants(chosen)
    assert mutants and all(m.key.startswith("read/_grammar.py:") for m in mutants)
    # READABLE_ONLY names slash paths: the readable twin runs in readable mode.
    assert RUN.mode_for(mutants[0], {"fast": {}, "readable": {}}) == "readable"
    assert RUN.mode_for(RUN.enumerate_mutants(["fast/_records_fast.py"])[0],
                        {"fast": {}, "readable": {}}) == "fast"


def test_show_prints_the_diff_of_a_subpackage_mutant(capsys: pytest.CaptureFixture[str]) -> None:
    assert RUN.main(["show", "persyk_session/read/_grammar.py:0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- read/_grammar.py\n+++ read/_grammar.py (mutant)\n")


@pytest.mark.parametrize("group", ["core", "fast"])
def test_every_module_a_group_names_exists(group: str) -> None:
    # A group left naming a flat module (_records.py after the move to read/) would fail here.
    missing = [m for m in RUN.GROUPS[group] if not (RUN.PACKAGE / m).is_file()]
    assert missing == []
