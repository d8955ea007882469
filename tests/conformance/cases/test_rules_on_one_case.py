"""No MUST rule of the append and recover phases rests on one case: each has
two cases of level MUST, or a harness check and one; ``check-fixtures`` refuses one that does
not and prints, for every phase, the MUST rules that still rest on one case
(persyk_conformance.cases._sanity.rules_on_one_case)."""

from __future__ import annotations

import json
import shlex
import sys
from types import SimpleNamespace
from typing import Any

import persyk_contract
import pytest
from _paths import CHECKOUT
from persyk_conformance import check_fixtures
from persyk_conformance import cli as cli_module
from persyk_conformance.cases._sanity import (
    SECOND_CASE_PHASES,
    OneCase,
    rules_on_one_case,
    rules_resting_on_one_case,
)
from persyk_conformance.cli import RunConfig, _run, execute
from persyk_conformance.harness._registry import checks_for
from persyk_conformance.run._outcomes import Outcome
from persyk_contract import Rule

ROOT = CHECKOUT
HARNESS = {check.id: check.rules for check in checks_for("v1")}
SECOND_CASES = {f"S-{n}" for n in range(960, 980)}  # fixtures/_cases/scenarios_second.py
# Cases written after the second cases (fixtures/_cases/limit_boundaries.py, method_cases.py):
# some of them are second cases too (S-689..S-692 for RCV-3).
LATER_CASES = {f"G-{n}" for n in range(350, 400)} | {f"S-{n}" for n in range(650, 730)}


def _manifests() -> list[dict[str, Any]]:
    found = [json.loads(p.read_text("utf-8"))
             for p in sorted((ROOT / "fixtures" / "v1").rglob("case.json"))]
    assert len(found) > 900
    return found


def test_no_append_or_recover_must_rule_rests_on_one_case() -> None:
    resting = [one.describe() for one in rules_resting_on_one_case(
        ROOT / "fixtures" / "v1", harness_rules=HARNESS) if one.phase in SECOND_CASE_PHASES]
    assert resting == []


def test_without_the_second_cases_the_check_names_the_rules_they_back() -> None:
    # The fixtures of contract 1.13.0, as far as this check goes: S-960..S-979 did not exist.
    before = [m for m in _manifests() if m["id"] not in SECOND_CASES | LATER_CASES]
    named = {one.rule for one in rules_on_one_case(before, persyk_contract.rules(), HARNESS)
             if one.phase in SECOND_CASE_PHASES}
    assert named == {"HDR-10", "BLK-11", "APP-21", "APP-25", "DIAG-9", "RCV-3", "RCV-18",
                     "DIAG-10"}


@pytest.mark.slow
def test_check_fixtures_refuses_a_phase_whose_rules_rest_on_one_case() -> None:
    # The read phase still has MUST rules with one case: asking for two there must fail.
    problems = check_fixtures(second_case_phases={"read"})
    resting = [p for p in problems if "rests on one case" in p]
    assert resting and all("(read)" in p for p in resting)
    assert not [p for p in check_fixtures() if "rests on one case" in p]


RULES = [Rule("APP-90", "MUST", "append"), Rule("APP-91", "SHOULD", "append"),
         Rule("RCV-90", "MUST", "recover")]


def _case(case_id: str, level: str, *rules: str) -> dict[str, Any]:
    return {"id": case_id, "level": level, "rules": list(rules)}


@pytest.mark.parametrize(("manifests", "harness", "expected"), [
    ([_case("S-1", "MUST", "APP-90")], {}, [OneCase("APP-90", "append", "S-1")]),
    ([_case("S-1", "MUST", "APP-90"), _case("S-2", "MUST", "APP-90")], {}, []),
    ([_case("S-1", "MUST", "APP-90"), _case("S-2", "SHOULD", "APP-90")], {},
     [OneCase("APP-90", "append", "S-1")]),
    ([_case("S-1", "MUST", "RCV-90")], {"H-9": ("RCV-90",)}, []),
    ([], {"H-9": ("RCV-90",)}, [OneCase("RCV-90", "recover", "H-9")]),
    ([_case("S-1", "MUST", "APP-91")], {}, []),
], ids=["one-must-case", "two-must-cases", "a-should-case-is-no-second",
        "a-harness-check-and-a-case", "a-harness-check-alone", "should-rules-are-not-counted"])
def test_rules_on_one_case_counts_must_cases_and_harness_checks(
    manifests: list[dict[str, Any]], harness: dict[str, tuple[str, ...]],
    expected: list[OneCase],
) -> None:
    assert rules_on_one_case(manifests, RULES, harness) == expected


# --- each second case fails the mistake it exists for (tests/fakes/second_case_mistakes.py) ---

MISTAKES = [
    ("recover-clears-recovery", "S-962"), ("recover-missing-is-none", "S-963"),
    ("recover-rewrites-crlf", "S-964"), ("quotes-tail", "S-965"), ("all-or-nothing", "S-966"),
    ("remove-creates", "S-968"), ("lock-elsewhere", "S-969"), ("quotes-record", "S-970"),
    ("rewrites-header", "S-971"), ("drops-block-members", "S-972"),
]
FAKE = shlex.join([sys.executable, str(ROOT / "tests" / "fakes" / "second_case_mistakes.py")])


@pytest.mark.slow
@pytest.mark.parametrize(("mistake", "case_id"), MISTAKES, ids=[m for m, _ in MISTAKES])
def test_the_second_case_fails_the_mistake_it_exists_for(
    mistake: str, case_id: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_MISTAKE", mistake)
    (result,) = execute(RunConfig(impl=FAKE, only=(case_id,), harness=False)).results
    assert result.outcome is Outcome.FAIL, result.describe()


def test_the_mistake_fake_without_a_mistake_passes_every_second_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_MISTAKE", "")
    record = execute(RunConfig(impl=FAKE, only=("S-96*", "S-97*"), harness=False))
    assert len(record.results) == 13
    assert all(result.outcome is Outcome.PASS for result in record.results)


def test_check_fixtures_prints_the_rules_on_one_case(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    # The in-process run of every case is not what this test is about: it answers no case.
    # check-fixtures imports execute from cli/_run when it runs: patch it there (patching the
    # package's name left the whole in-process run, 25 s, in this test).
    monkeypatch.setattr(_run, "execute", lambda config: SimpleNamespace(results=[]))
    assert cli_module.main(["check-fixtures"]) == 0
    out = capsys.readouterr().out
    expected = rules_resting_on_one_case(harness_rules=HARNESS)
    assert expected, "every MUST rule has two cases: this test would check nothing"
    lines = [line for line in out.splitlines() if line.startswith("one case: ")]
    assert lines == [f"one case: {one.describe()}" for one in expected]
    assert f"{len(expected)} MUST rule(s) rest on one case" in out
