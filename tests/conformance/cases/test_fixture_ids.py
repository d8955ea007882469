"""Case id allocation (fixtures/_cases/_ids.py): the build refuses ids outside their module's
declared ranges, partly overlapping ranges, duplicate and retired ids, and reports the next free
id of every range above anything ever used or retired."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT
sys.path.insert(0, str(ROOT / "fixtures"))

from _cases import RETIRED, allocations  # noqa: E402
from _cases._ids import Allocation, id_problems, parse_range, range_uses, vanished  # noqa: E402


def alloc(module: str, ranges: tuple[str, ...], *ids: str) -> Allocation:
    return Allocation(module, tuple(parse_range(r) for r in ranges), ids)


def test_the_case_sources_allocate_their_ids_cleanly() -> None:
    assert id_problems(allocations(), RETIRED) == []


def test_an_id_outside_the_modules_range_is_refused() -> None:
    problems = id_problems([alloc("a", ("R-650..R-699",), "R-650", "R-700")], {})
    assert problems == ["R-700 (a): outside the module's ID_RANGES (R-650..R-699)"]


def test_a_module_without_ranges_is_refused() -> None:
    assert "declares no ID_RANGES" in id_problems([alloc("a", (), "G-001")], {})[0]


def test_ranges_are_shared_exactly_or_disjoint() -> None:
    shared = [alloc("a", ("G-001..G-099",), "G-001"), alloc("b", ("G-001..G-099",), "G-002")]
    assert id_problems(shared, {}) == []
    partly = [alloc("a", ("G-100..G-119",)), alloc("b", ("G-111..G-149",))]
    assert id_problems(partly, {}) == [
        "b: range G-111..G-149 overlaps G-100..G-119 of a; ranges are either shared exactly or "
        "disjoint"
    ]
    assert id_problems([alloc("a", ("G-100..G-119",)), alloc("b", ("R-100..R-119",))], {}) == []


def test_duplicate_and_retired_ids_are_refused() -> None:
    problems = id_problems(
        [alloc("a", ("S-001..S-099",), "S-001", "S-040"), alloc("b", ("S-001..S-099",), "S-001")],
        {"S-040": "replaced"},
    )
    assert problems == [
        "S-040 (a): the id is retired, take a new one",
        "S-001: used twice (a and b)",
    ]


def test_next_free_id_is_above_every_used_and_retired_id() -> None:
    uses = range_uses(
        [alloc("a", ("R-650..R-699",), "R-650", "R-652"), alloc("b", ("G-150..G-151",),
                                                                "G-150", "G-151")],
        ["R-660"],
    )
    assert [(str(u.id_range), u.used, u.next_free) for u in uses] == [
        ("G-150..G-151", 2, None),  # full
        ("R-650..R-699", 2, "R-661"),  # the gap R-651 and the retired R-660 are never handed out
    ]
    empty = range_uses([alloc("c", ("S-250..S-299",))], [])
    assert empty[0].next_free == "S-250"


def test_a_shipped_id_that_vanished_without_retiring_is_refused() -> None:
    assert vanished(["G-001", "G-002", "S-040"], ["G-001"], {"S-040": "why"}) == [
        "G-002: shipped before and now gone; add it to RETIRED with a reason"
    ]


@pytest.mark.parametrize("text", ["G-1..G-9", "G-010..R-020", "G-020..G-010", "G-010"])
def test_malformed_ranges_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_range(text)


def test_build_prints_the_next_free_ids() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "fixtures" / "build.py"), "--next-ids"],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    lines = proc.stdout.splitlines()
    assert any(line.startswith("G-001..G-099") and "next free G-" in line for line in lines)
