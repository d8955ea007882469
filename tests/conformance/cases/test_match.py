"""Pattern matching of expectations (docs/maintainers/architecture.md, "Pattern matching")."""

from __future__ import annotations

from typing import Any

import pytest
from persyk_conformance.cases._match import match

MATCHES = [
    ("equal-scalars", "a", "a"),
    ("int-equals-float", 1, 1.0),
    ("float-equals-int", 1767225601000.0, 1767225601000),
    ("null", None, None),
    ("object-subset", {"a": 1}, {"a": 1, "b": 2}),
    ("empty-object-matches-any-object", {}, {"x": [1]}),
    ("nested-subset", {"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 2, "d": 3}], "e": 0}}),
    ("list-elementwise-subset", [{"code": "X"}], [{"code": "X", "line": 3, "message": "m"}]),
    ("empty-lists", [], []),
    ("true-is-true", True, True),
    ("exact-equal-object", {"$exact": {"a": [1, {"b": None}]}}, {"a": [1.0, {"b": None}]}),
    ("exact-empty-object", {"labels": {"$exact": {}}}, {"labels": {}, "other": 1}),
    ("exact-scalar", {"$exact": "x"}, "x"),
    ("exact-is-not-an-operator-beside-other-keys", {"$exact": 1, "a": 2},
     {"$exact": 1, "a": 2, "b": 3}),
    # REC-9 decision: a double-based reader keeps an integer beyond 2^53 as the nearest double,
    # and JavaScript prints that double 12345678901234567000 (G-100 for pi, contract 1.9.0).
    ("integer-beyond-2^53-as-its-double", {"$exact": {"account": 12345678901234567890}},
     {"account": 12345678901234567000}),
    ("integer-beyond-2^53-as-a-float", 12345678901234567890, 1.2345678901234567e19),
    ("2^53+1-rounds-to-2^53", -9007199254740993, -9007199254740992),
]

MISMATCHES = [
    ("true-is-not-1", True, 1, "(root)"),
    ("integer-beyond-2^53-against-another-double", 12345678901234567890, 12345678901234580000,
     "(root)"),
    ("below-2^53-exact", 9007199254740991, 9007199254740990, "(root)"),
    ("beyond-every-double", 10**400, 1e308, "(root)"),
    ("1-is-not-true", 1, True, "(root)"),
    ("false-is-not-0", {"v": False}, {"v": 0}, "/v"),
    ("string-is-not-number", "1", 1, "(root)"),
    ("null-is-not-false", None, False, "(root)"),
    ("missing-key", {"a": 1}, {"b": 1}, "/a: missing"),
    ("list-longer", [1, 2], [1], "expected an array of 2"),
    ("list-shorter", [1], [1, 2], "expected an array of 1"),
    ("list-order-matters", [1, 2], [2, 1], "/0"),
    ("object-against-list", {"a": 1}, [1], "expected an object"),
    ("list-against-object", [1], {"0": 1}, "expected an array"),
    ("scalar-against-object", 1, {"a": 1}, "(root)"),
    ("nested-value", {"a": [{"b": "x"}]}, {"a": [{"b": "y"}]}, "/a/0/b"),
    ("pointer-escapes-key", {"a/b~c": 1}, {"a/b~c": 2}, "/a~1b~0c"),
    ("exact-extra-member", {"labels": {"$exact": {"m1": "a"}}},
     {"labels": {"m1": "a", "s1": "cleared"}}, "/labels/s1: unexpected member"),
    ("exact-empty-object-against-a-member", {"$exact": {}}, {"s1": "x"}, "/s1: unexpected"),
    ("exact-nested-extra-member", {"$exact": [{"type": "text", "text": "hi"}]},
     [{"type": "text", "text": "hi", "x": 1}], "/0/x: unexpected member"),
    ("exact-missing-member", {"$exact": {"a": 1}}, {}, "/a: missing"),
    ("exact-true-is-not-1", {"$exact": {"v": True}}, {"v": 1}, "/v"),
    ("exact-list-length", {"$exact": [1]}, [1, 2], "expected an array of 1"),
]


@pytest.mark.parametrize(("expected", "actual"), [(e, a) for _, e, a in MATCHES],
                         ids=[name for name, _, _ in MATCHES])
def test_pattern_matches(expected: Any, actual: Any) -> None:
    assert match(expected, actual) == []


@pytest.mark.parametrize(("expected", "actual", "where"), [(e, a, w) for _, e, a, w in MISMATCHES],
                         ids=[name for name, _, _, _ in MISMATCHES])
def test_pattern_mismatch_is_reported_at_its_place(expected: Any, actual: Any, where: str) -> None:
    problems = match(expected, actual)
    assert problems, "a mismatch must be reported"
    assert where in problems[0]


def test_every_mismatch_is_reported() -> None:
    problems = match({"a": 1, "b": [1, 2], "c": {"d": True}}, {"a": 2, "b": [1, 3], "c": {}})
    assert [p.split(":")[0] for p in problems] == ["/a", "/b/1", "/c/d"]


def test_path_prefixes_descriptions() -> None:
    assert match(1, 2, "/steps/0")[0].startswith("/steps/0:")


@pytest.mark.parametrize(
    ("actual", "problems"),
    [({"role": "toolResult"}, 0), ({"role": "toolResult", "details": None}, 1),
     ({"role": "toolResult", "details": {}}, 1)],
    ids=["absent", "present-null", "present-object"],
)
def test_absent_operator_matches_only_a_missing_member(
    actual: dict[str, object], problems: int
) -> None:
    assert len(match({"role": "toolResult", "details": {"$absent": True}}, actual)) == problems


@pytest.mark.parametrize(
    ("actual", "problems"),
    [("0192f3a4-7b8c-7def-8123-456789abcdef", 0), ("17", 1), (17, 1),
     ("0123456789abcdefghijk\n", 1)],
    ids=["uuid7", "counter", "not-a-string", "trailing-newline"],
)
def test_matches_operator_applies_the_pattern_to_a_string(actual: object, problems: int) -> None:
    pattern = {"$matches": "^[A-Za-z0-9._-]{21,128}(?![\\s\\S])"}
    assert len(match({"id": pattern}, {"id": actual})) == problems
