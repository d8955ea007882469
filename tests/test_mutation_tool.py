"""tools/mutation: the operators make exactly one change each, the numbering is stable, and the
report counts what the notes say (the mutation run itself is not part of the test run)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "mutation"))

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
