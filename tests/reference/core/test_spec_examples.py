"""Examples stated in docs/spec.md's decisions are what the reference does: the tails
of the recovery decision (RCV-5, RCV-9, RCV-11, REC-14 rev. 2) and the JSONTestSuite tables
against the decisions tests/reference/core/test_jsontestsuite.py checks the corpus with. Until
contract 1.14.0 the decision listed a complete object followed by a CR as
`RECOVER_TAIL_INVALID_RECORD` (S-103 and REC-14 rev. 2 say `newline-added`) and the `i_` table
rejected three integers that REC-9 rev. 2 accepts, and the table lacked the surrogate tails S-557
decides; each test below fails on that text
(``test_..._finds_the_old_text``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_session import recover
from test_jsontestsuite import I_DECISIONS, Y_REJECTED

ROOT = CHECKOUT
SPEC = (ROOT / "docs" / "spec.md").read_text(encoding="utf-8")
HEADER = b'{"type":"session","version":1,"id":"s","timestamp":"2026-01-01T00:00:00Z"}\n'


def _section(text: str, start: str, end: str) -> str:
    begin = text.index(start)
    return text[begin:text.index(end, begin)]


def recovery_examples(spec: str) -> list[tuple[bytes, str]]:
    """The decision's table: each tail (``\\r`` spelt as in the text) and its outcome."""
    heading = "| tail (unterminated last line) | outcome |"
    if heading not in spec:
        return []
    table = _section(spec, heading, "\n\n")
    rows = re.findall(r"^\| `(.+)` \| `([a-zA-Z_-]+)` \|$", table, re.MULTILINE)
    return [(tail.replace("\\r", "\r").encode(), outcome) for tail, outcome in rows]


def test_the_recovery_decision_has_its_table_of_tails() -> None:
    assert len(recovery_examples(SPEC)) >= 6


def outcome_of(tail: bytes, workdir: Path) -> str:
    session = workdir / "session"
    session.mkdir()
    (session / "session.jsonl").write_bytes(HEADER + tail)
    result = recover(session).to_json()
    return result["error"]["code"] if "error" in result else str(result["action"])


@pytest.mark.parametrize(("tail", "outcome"), recovery_examples(SPEC),
                         ids=lambda v: v.decode() if isinstance(v, bytes) else v)
def test_the_reference_recovers_each_tail_as_the_decision_says(
    tail: bytes, outcome: str, tmp_path: Path
) -> None:
    assert outcome_of(tail, tmp_path) == outcome


def test_a_complete_record_followed_by_a_cr_is_in_the_table_as_newline_added() -> None:
    with_cr = [outcome for tail, outcome in recovery_examples(SPEC) if tail.endswith(b"}\r")]
    assert with_cr == ["newline-added"]


def test_the_recovery_check_finds_the_old_text(tmp_path: Path) -> None:
    # Contract 1.13.0's claim, as a row: a complete object followed by a CR is invalid.
    tail = (b'{"type":"custom","id":"c1","parentId":null,"timestamp":"2026-01-01T00:00:00Z",'
            b'"customType":"t","data":1}\r')
    assert outcome_of(tail, tmp_path) != "RECOVER_TAIL_INVALID_RECORD"
    assert "(including a complete object followed by a\nCR)" not in SPEC


# --- the JSONTestSuite tables --------------------------------------------------------------------

def i_table(spec: str) -> dict[str, str | None]:
    table = _section(spec, "### `i_` cases", "### `y_` cases")
    rows = re.findall(r"^\| `(i_[^`]+)` \| (accept|reject) \| (?:`([A-Z_0-9]+)`|—) \|",
                      table, re.MULTILINE)
    assert rows, "the i_ table is gone"
    return {name: (code or None) if verdict == "reject" else None for name, verdict, code in rows}


def y_table(spec: str) -> dict[str, str]:
    table = _section(spec, "### `y_` cases", "### `n_` cases")
    return dict(re.findall(r"^\| `(y_[^`]+)` \| `([A-Z_0-9]+)` \|", table, re.MULTILINE))


def test_the_spec_i_table_is_the_decision_the_corpus_test_checks() -> None:
    decided = {name: None if code is None else code.value for name, code in I_DECISIONS.items()}
    assert i_table(SPEC) == decided


def test_the_spec_y_table_is_the_exception_list_the_corpus_test_checks() -> None:
    assert y_table(SPEC) == {name: code.value for name, code in Y_REJECTED.items()}


def test_the_i_table_check_finds_the_old_rejection_of_big_integers() -> None:
    old = SPEC.replace(
        "| `i_number_too_big_pos_int.json` | accept | — |",
        "| `i_number_too_big_pos_int.json` | reject | `RECORD_NUMBER_OUT_OF_RANGE` |")
    assert i_table(old)["i_number_too_big_pos_int.json"] == "RECORD_NUMBER_OUT_OF_RANGE"
    assert i_table(old) != {n: None if c is None else c.value for n, c in I_DECISIONS.items()}


SURROGATE_TAIL = re.compile(rb"\\ud[89ab][0-9a-fA-F]{2}(\\u[0-9a-fA-F]{0,3})$")


def _surrogate_tails_of_cases() -> list[tuple[str, bytes, str]]:
    """(case, what follows the high surrogate escape, outcome) of every recover case whose torn
    tail ends in a high surrogate escape and the start of another escape."""
    found = []
    for manifest_path in sorted((ROOT / "fixtures" / "v1" / "scenario").glob("*/case.json")):
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        data_path = manifest_path.parent / "tree" / "session" / "session.jsonl"
        steps = manifest.get("steps", [])
        if not data_path.is_file() or not steps or steps[0].get("op") != "recover":
            continue
        tail = data_path.read_bytes().rpartition(b"\n")[2]
        match = SURROGATE_TAIL.search(tail)
        expect = steps[0].get("expect") or {}
        outcome = (expect.get("error") or {}).get("code") or expect.get("action")
        if match and isinstance(outcome, str):
            found.append((manifest["id"], match.group(1), outcome))
    assert found, "no recover case ends its tail in a surrogate escape (S-557 was one)"
    return found


@pytest.mark.parametrize(("case", "after", "outcome"), _surrogate_tails_of_cases(),
                         ids=lambda v: v if isinstance(v, str) else v.decode())
def test_the_table_has_the_surrogate_tails_the_cases_decide(
    case: str, after: bytes, outcome: str
) -> None:
    # Contract 1.13.0's table had neither \ud83d\u (incomplete) nor \ud83d\u0 (definite) while
    # S-557 decided the second.
    rows = [(tail, result) for tail, result in recovery_examples(SPEC)
            if SURROGATE_TAIL.search(tail) and tail.endswith(after)]
    assert rows, f"{case}: no row of the table ends in a high surrogate escape then {after!r}"
    assert all(result == outcome for _, result in rows), f"{case} decides {outcome}: {rows}"
