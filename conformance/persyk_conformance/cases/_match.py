"""Pattern matching of a case's ``expect`` against an operation's result.

The semantics are fixed by docs/maintainers/architecture.md ("Pattern matching") and restated in
docs/implementers/fixtures.md:

* an expected object matches an actual object that has each expected key with a matching value
  (extra actual keys are allowed);
* an expected list matches an actual list of the same length, element by element;
* anything else matches by JSON equality: ``1`` equals ``1.0``, but ``true`` is not ``1`` and
  ``"1"`` is not ``1``; an integer beyond 2^53 equals every number that rounds to the same
  double (REC-9's decision: a double-based implementation keeps the nearest double).

Five operators exist. ``{"$matches": P}`` matches a string in which the regular expression P
(ECMA-262 and Python alike: anchor with ``^`` and ``(?![\\s\\S])``) finds a match, for values
the implementation generates (ID-5: a generated id's length). Two more, because a pattern cannot
otherwise prove that a key is absent. A member
whose pattern is ``{"$absent": true}`` matches only when the actual object lacks that key (what
must never be there, e.g. a tool result's details in generic context, CTX-10). An object
whose only key is ``"$exact"`` matches a value that is JSON-equal to the operand, with no extra
object member at any depth (lists by length and element, numbers by value, ``true`` not ``1``).
``{"$includes": [P, ...]}`` matches a list holding an element for each pattern, in any order,
and ``{"$unordered": [P, ...]}`` one holding exactly those (a set of redaction pointers, RT-2).
Cases use ``$exact`` for stored values that must come back unchanged (a message, custom data, a
paged entry, the header) and for maps whose every key is asserted (labels, counts by type).

``match`` returns one description per mismatch (an empty list means the result matches), each
prefixed with the JSON pointer (RFC 6901) of the place where the two differ.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ABSENT", "EXACT", "INCLUDES", "MATCHES", "UNORDERED", "match"]

EXACT = "$exact"
ABSENT = "$absent"
MATCHES = "$matches"
INCLUDES = "$includes"
UNORDERED = "$unordered"


def match(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Return the mismatches between the pattern ``expected`` and the value ``actual``."""
    return _compare(expected, actual, path, exact=False)


def _compare(expected: Any, actual: Any, path: str, *, exact: bool) -> list[str]:
    """Objects are subsets unless ``exact`` (set by ``$exact``, for everything below it); lists
    match by length and element; other values by JSON equality."""
    if not exact and isinstance(expected, dict) and len(expected) == 1 and MATCHES in expected:
        if isinstance(actual, str) and re.search(expected[MATCHES], actual):
            return []
        return [f"{_at(path)}: expected a string matching {expected[MATCHES]!r}, "
                f"got {_show(actual)}"]
    if not exact and isinstance(expected, dict) and len(expected) == 1 and EXACT in expected:
        return _compare(expected[EXACT], actual, path, exact=True)
    if not exact and isinstance(expected, dict) and len(expected) == 1 and (
        INCLUDES in expected or UNORDERED in expected
    ):
        return _compare_unordered(expected, actual, path)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [_differs(path, "an object", actual)]
        problems: list[str] = []
        if exact:
            problems += [
                f"{_at(f'{path}/{_escape(key)}')}: unexpected member {_show(actual[key])}"
                for key in actual
                if key not in expected
            ]
        for key, pattern in expected.items():
            where = f"{path}/{_escape(key)}"
            if not exact and pattern == {ABSENT: True}:
                if key in actual:
                    problems.append(f"{_at(where)}: must be absent, got {_show(actual[key])}")
            elif key not in actual:
                problems.append(f"{_at(where)}: missing; expected {_show(pattern)}")
            else:
                problems.extend(_compare(pattern, actual[key], where, exact=exact))
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [_differs(path, "an array", actual)]
        if len(expected) != len(actual):
            return [
                f"{_at(path)}: expected an array of {len(expected)} item(s), "
                f"got {len(actual)}: {_show(actual)}"
            ]
        problems = []
        for index, (pattern, item) in enumerate(zip(expected, actual, strict=True)):
            problems.extend(_compare(pattern, item, f"{path}/{index}", exact=exact))
        return problems
    if _json_equal(expected, actual):
        return []
    return [f"{_at(path)}: expected {_show(expected)}, got {_show(actual)}"]


def _compare_unordered(expected: dict[str, Any], actual: Any, path: str) -> list[str]:
    """``$includes``: a list holding each given pattern (as many times as given), in any order;
    ``$unordered``: the same, with nothing else in the list. Each pattern takes one element."""
    patterns = expected.get(INCLUDES, expected.get(UNORDERED))
    if not isinstance(actual, list) or not isinstance(patterns, list):
        return [_differs(path, "an array", actual)]
    left = list(actual)
    problems: list[str] = []
    for pattern in patterns:
        found = next((i for i, item in enumerate(left) if not _compare(
            pattern, item, path, exact=False)), None)
        if found is None:
            problems.append(f"{_at(path)}: no element matches {_show(pattern)} in {_show(actual)}")
        else:
            del left[found]
    if UNORDERED in expected and left and not problems:
        problems.append(f"{_at(path)}: unexpected element(s) {_show(left)}")
    return problems


def _json_equal(expected: Any, actual: Any) -> bool:
    # JSON has one number type: 1 and 1.0 are the same value. Python's bool is an int
    # subclass, so booleans are compared apart from numbers (true is not 1).
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual or _same_double(expected, actual)
    if isinstance(expected, dict | list) or isinstance(actual, dict | list):
        # Only reached for an actual container against a scalar pattern.
        return False
    return type(expected) is type(actual) and expected == actual


# Integers up to 2^53 are exact in a double; beyond it, REC-9's decision lets an implementation
# keep the nearest double (12345678901234567890 reads as 12345678901234567000), so a number there
# matches every number that rounds to the same double (contract 1.9.0).
_EXACT_IN_A_DOUBLE = 2**53


def _same_double(expected: int | float, actual: int | float) -> bool:
    if not any(isinstance(n, int) and abs(n) > _EXACT_IN_A_DOUBLE for n in (expected, actual)):
        return False
    try:
        return float(expected) == float(actual)
    except OverflowError:  # beyond any double: REC-8 refuses it, so no result can hold it
        return False


def _differs(path: str, wanted: str, actual: Any) -> str:
    return f"{_at(path)}: expected {wanted}, got {_show(actual)}"


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _at(path: str) -> str:
    return path or "(root)"


def _show(value: Any, limit: int = 200) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
