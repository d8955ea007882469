"""The implementer-mistake corpus (tests/mistakes/): every mistake is caught
by a MUST case or written down as allowed, its catching cases fail on it and pass on the
reference, and the recorded full run (tests/mistakes/kill-score.json) agrees.

Only each mistake's catching cases run here (a few each, in process): the full run of every
case against every mistake is ``python tools/mistakes/run.py run``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT
from mistakes._model import ORIGINS, Mistake, around, on_lines, viewing
from mistakes._run import Suite, reference_dispatch
from mistakes._tree import through_tree
from mistakes.registry import MISTAKES, by_name, catching, problems
from persyk_conformance.cli import main
from persyk_conformance.records import HEADER, jsonl, record, user

ROOT = CHECKOUT
RESULTS = ROOT / "tests" / "mistakes" / "kill-score.json"
CATCHING = catching()
CAUGHT = [m for m in MISTAKES if m.allowed is None]


def _recorded() -> dict[str, Any]:
    document = json.loads(RESULTS.read_text("utf-8"))
    verdicts: dict[str, Any] = document["stages"]["after"]["verdicts"]
    return verdicts


@pytest.fixture(scope="module")
def suite() -> Iterator[Suite]:
    chosen = sorted({case for cases in CATCHING.values() for case in cases})
    planned = Suite(only=chosen)
    try:
        yield planned
    finally:
        planned.close()


def test_corpus_holds_at_least_50_mistakes_of_many_origins() -> None:
    assert len(MISTAKES) >= 50
    origins = {m.origin for m in MISTAKES}
    assert {"Go", "Java", "JavaScript", "Rust", "Python"} <= origins
    assert origins <= set(ORIGINS)


def test_every_mistake_is_caught_or_allowed_and_the_full_run_agrees() -> None:
    assert problems(MISTAKES, CATCHING, _recorded()) == []


def test_a_mistake_no_case_catches_fails_the_corpus_check() -> None:
    # The broken corpus: a new mistake that changes nothing, with no case and no reason.
    silent = Mistake("silent", "Go", "changes nothing", around(lambda inner, op, a:
                                                                inner(op, a)),
                     breaks=("REC-1",))
    found = problems([*MISTAKES, silent], CATCHING, _recorded())
    assert any(p.startswith("silent: no case catches it") for p in found)
    assert any(p.startswith("silent: not in the recorded full run") for p in found)


def test_an_allowed_mistake_may_not_claim_to_break_a_rule() -> None:
    wrong = Mistake("wrong", "Go", "changes nothing", around(lambda inner, op, a:
                                                              inner(op, a)),
                    breaks=("REC-1",), allowed="it is fine")
    assert problems([wrong], {}, {}) == ["wrong: allowed, yet it names rules it breaks"]


def test_catching_cases_are_must_cases_of_the_suite(suite: Suite) -> None:
    assert set(CATCHING) == {m.name for m in CAUGHT}
    for name, cases in CATCHING.items():
        assert cases, name
        assert all(suite.level(case) == "MUST" for case in cases), name


def test_the_reference_passes_every_catching_case(suite: Suite) -> None:
    verdict = suite.run("reference", reference_dispatch)
    assert verdict.must_failed == () and verdict.other_failed == ()
    assert verdict.ran == len(suite.cases)


@pytest.mark.parametrize("name", [m.name for m in CAUGHT])
def test_mistake_fails_a_must_case_that_catches_it(suite: Suite, name: str) -> None:
    verdict = suite.run_mistake(by_name(name), CATCHING[name])
    assert verdict.faults == ()  # a kill by a fault of the layer would prove nothing
    assert verdict.must_failed, f"{name} passed {CATCHING[name]}"


def test_an_identity_layer_fails_no_catching_case(suite: Suite) -> None:
    # The machinery alone (the view, the copy, the deadline) must never kill: a view that
    # changes nothing passes every case that catches a real mistake.
    same = Mistake("same", "Go", "changes nothing", viewing(on_lines(through_tree(
        lambda tree: tree))), allowed="it is the reference")
    verdict = suite.run_mistake(same, sorted(suite.cases))
    assert verdict.must_failed == () and verdict.faults == ()


def test_a_view_that_differs_appends_after_the_real_bytes(tmp_path: Path) -> None:
    # A reading habit runs the append on a private copy; what it wrote lands after the real
    # file's bytes, which stay as they were (the CRLF of line 2 included).
    session = tmp_path / "s"
    session.mkdir()
    original = jsonl(HEADER) + record(user("m0", None, "x", 1)) + b"\r\n"
    (session / "session.jsonl").write_bytes(original)
    crlf_dropped = viewing(lambda data: data.replace(b"\r\n", b"\n"))(reference_dispatch)
    body = crlf_dropped("append", {"session": str(session),
                                   "records": [user("m1", "m0", "y", 2)]})
    assert body["result"]["committed"] == ["m1"]
    assert (session / "session.jsonl").read_bytes() == original + record(
        user("m1", "m0", "y", 2)) + b"\n"


def test_a_mistake_runs_as_a_subprocess_adapter(tmp_path: Path) -> None:
    adapter = f"{sys.executable} {ROOT / 'tests' / 'mistakes' / 'adapter.py'}"
    report = tmp_path / "report.json"
    arguments = ["run", "--impl", f"{adapter} go-duplicate-last-wins", "--only", "R-058,G-001",
                 "--report", str(report)]
    assert main(arguments) == 1
    outcomes = {c["id"]: c["outcome"] for c in json.loads(report.read_text("utf-8"))["cases"]}
    assert outcomes == {"R-058": "fail", "G-001": "pass"}
