"""No tracked file points at a tracker its reader cannot open: a reason is written in words, or
points at docs/changes.md or a "Decision:" of docs/spec.md. A numbered ticket ("issue" and a
number, "issue-" and a number) fails here with its file and line; a full address another project
publishes (https://github.com/owner/name/issues/648) is followable and passes.

Every tracked text file is read, reference/ included; binary files (a NUL byte, or not UTF-8) are
passed over."""

from __future__ import annotations

import re
import subprocess
from functools import cache

import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT
# A line break may fall between the word and the number, with a comment's "#" after it.
TRACKER = re.compile(r"\bissues?(?:[\s#]+|-)\d+", re.IGNORECASE)


def tracker_references(text: str) -> list[str]:
    """Each ticket ``text`` names by number, as ``line N: the reference`` (N: where it starts)."""
    return [f"line {text.count(chr(10), 0, match.start()) + 1}: {' '.join(match.group(0).split())}"
            for match in TRACKER.finditer(text)]


@cache
def _text_files() -> tuple[str, ...]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    found = []
    for path in listed:
        if not (ROOT / path).is_file():
            continue
        data = (ROOT / path).read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        found.append(path)
    assert found, "git ls-files listed no text file"
    return tuple(found)


def _folders() -> list[str]:
    return sorted({path.split("/")[0] if "/" in path else "." for path in _text_files()})


@pytest.mark.parametrize("folder", _folders())
def test_no_tracked_file_names_a_ticket_by_number(folder: str) -> None:
    inside = [p for p in _text_files() if (p.split("/")[0] if "/" in p else ".") == folder]
    found = {path: refs for path in inside
             if (refs := tracker_references((ROOT / path).read_text("utf-8")))}
    assert found == {}


PLANTED = [
    ("a parenthesis", "the lock is kept (iss" "ue 27)", ["line 1: iss" "ue 27"]),
    ("a plural", "as iss" "ues 26/27 decided", ["line 1: iss" "ues 26"]),
    ("a hash", "see Iss" "ue #12", ["line 1: Iss" "ue #12"]),
    ("a dash", "fixed in iss" "ue-30", ["line 1: iss" "ue-30"]),
    ("a possessive", "\nthe target of iss" "ue 26's point 3", ["line 2: iss" "ue 26"]),
    ("a comment wrapped", "# as before iss" "ue\n    # 26's work", ["line 1: iss" "ue # 26"]),
    ("a page wrapped", "each boundary (iss" "ue\n31).", ["line 1: iss" "ue 31"]),
]


@pytest.mark.parametrize(("text", "expected"), [(t, e) for _, t, e in PLANTED],
                         ids=[why for why, _, _ in PLANTED])
def test_report_a_planted_ticket_number(text: str, expected: list[str]) -> None:
    assert tracker_references(text) == expected


@pytest.mark.parametrize("text", [
    "https://github.com/jcrist/msgspec/issues/648",
    "the issue is that the lock is kept",
    "UAX #29 and append #1",
], ids=["a followable address", "the word alone", "numbers after a hash"])
def test_accept_text_without_a_ticket_number(text: str) -> None:
    assert tracker_references(text) == []
