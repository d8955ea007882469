"""``persyk-conformance fuzz`` (docs/implementers/strategies.md): against the reference's own
adapter it finds nothing; against the reference with one rule broken
(tests/fakes/drops_custom_messages.py) it finds the disagreement, shrinks it, and saves a candidate
case that the runner loads, that the reference passes and that the broken adapter fails."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _paths import TESTS_DIR
from persyk_conformance import cli
from persyk_conformance.cases._load import load_cases
from persyk_conformance.cli import REFERENCE_ADAPTER, RunConfig, execute
from persyk_conformance.fuzz._choices import (
    differs_only_in_an_unstated_order,
    faults_of_refused_record,
)
from persyk_conformance.fuzz._differential import FuzzConfig, fuzz

FAKES = TESTS_DIR / "fakes"
BROKEN = shlex.join([sys.executable, str(FAKES / "drops_custom_messages.py")])
REFERENCE = shlex.join(REFERENCE_ADAPTER)


# Hypothesis draws for a seed depend on what the same process drew before (other tests, and
# which of them pytest-xdist gives this worker), so a run whose draws a test counts runs in a
# fresh interpreter, as a user runs the fuzzer.
_FRESH = """
import json, sys
from persyk_conformance.fuzz import _differential
from persyk_conformance.fuzz._differential import FuzzConfig, fuzz
kwargs = json.loads(sys.argv[1])
if kwargs.pop("no_judge", False):
    _differential._order_judge = lambda *args: None
if "ops" in kwargs:
    kwargs["ops"] = tuple(kwargs["ops"])
report = fuzz(FuzzConfig(**kwargs))
print(json.dumps({"examples": report.examples, "unstated": report.unstated_choices,
                  "compared": report.compared_steps, "unsupported": report.unsupported_steps,
                  "origins": sorted(report.by_origin),
                  "found": None if report.finding is None else list(report.finding.mismatches)}))
"""


def _fuzz_fresh(**config: Any) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", _FRESH, json.dumps(config)],
                          capture_output=True, text=True, timeout=600, check=True)
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


@pytest.mark.slow
def test_fuzz_finds_nothing_against_the_reference_adapter() -> None:
    report = _fuzz_fresh(impl=REFERENCE, examples=50, seed=20261202, time_budget=120)
    assert report["found"] is None
    assert report["examples"] == 50
    assert report["compared"] > 50 and report["unsupported"] == 0
    assert report["origins"] == ["append", "fault", "recover", "search", "valid"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    # In a process of its own, as a user runs it: the examples hypothesis draws for a seed
    # depend on what the same process drew before (other tests), so in-process the search (and
    # where the bounded shrink stops) would depend on the order of the tests.
    save = tmp_path_factory.mktemp("candidates")
    done = subprocess.run(
        [sys.executable, "-m", "persyk_conformance.cli", "fuzz", "--impl", BROKEN,
         "--examples", "200", "--seed", "6", "--save", str(save), "--ops",
         "validate,context,info"],
        capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, save


def test_fuzz_exits_1_and_saves_one_candidate_for_a_broken_rule(saved: tuple[int, Path]) -> None:
    status, save = saved
    assert status == 1
    (case,) = load_cases(save)  # the runner's own loader: the case format holds
    assert case.id.endswith("-9001") and case.directory.name.startswith(case.id + "-fuzz-")
    evidence = json.loads((Path(str(case.directory)) / "fuzz.json").read_text("utf-8"))
    assert evidence["seed"] == 6 and evidence["mismatches"]
    assert set(evidence["answers"]) == {"implementation", "reference"}


def test_saved_candidate_is_shrunk_to_a_custom_message_and_little_else(
    saved: tuple[int, Path],
) -> None:
    # Generated sessions hold up to 12 entries; the shrunk one keeps the custom_message the
    # broken rule drops and at most one more entry (hypothesis's shrinker is bounded in time,
    # so on a loaded machine it may stop one step short of the smallest).
    _, save = saved
    (case,) = load_cases(save)
    data = (Path(str(case.tree)) / "session" / "session.jsonl").read_bytes()
    types = [json.loads(line)["type"] for line in data.splitlines() if line.strip()]
    assert types[0] == "session" and types.count("custom_message") == 1 and len(types) <= 3


@pytest.mark.parametrize(("impl", "passed"), [(None, True), (BROKEN, False)],
                         ids=["reference-passes", "broken-fails"])
def test_saved_candidate_runs_as_a_case(
    saved: tuple[int, Path], impl: str | None, passed: bool
) -> None:
    _, save = saved
    record = execute(RunConfig(impl=impl, fixtures=save, harness=False))
    assert [result.id for result in record.results] == [load_cases(save)[0].id]
    assert record.passed is passed


def test_fuzz_draws_the_same_inputs_for_the_same_seed() -> None:
    config = FuzzConfig(impl=REFERENCE, examples=12, seed=5, ops=("validate",))
    first, second = fuzz(config), fuzz(config)
    assert first.by_origin == second.by_origin
    assert first.compared_steps == second.compared_steps == 12


@pytest.mark.parametrize("option", [["--ops", "frobnicate"], ["--faults", "no.such.class"]])
def test_fuzz_refuses_an_unknown_name(option: list[str]) -> None:
    assert cli.main(["fuzz", "--impl", REFERENCE, *option]) == 2


def test_fuzz_exits_2_when_the_adapter_does_not_start(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-adapter")
    assert cli.main(["fuzz", "--impl", missing, "--examples", "1", "--seed", "1"]) == 2


@pytest.mark.parametrize(("fake", "answer"), [("internal_error.py", "internal"),
                                              ("crash_mid_run.py", "failed")])
def test_fuzz_counts_an_adapter_failure_as_a_disagreement(
    fake: str, answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CRASH_AFTER", "0")  # crash_mid_run: exit at the first request
    impl = shlex.join([sys.executable, str(FAKES / fake)])
    report = fuzz(FuzzConfig(impl=impl, examples=5, seed=1, ops=("validate",), time_budget=30,
                             timeout=5))
    assert report.finding is not None
    assert answer in report.finding.implementation[report.finding.step].reply


def test_fuzz_finds_a_second_diagnostic_for_one_fault() -> None:
    # DIAG-6: a fault nothing depends on yields exactly one diagnostic; the fake keeps the
    # first error right and adds a cascade, which a comparison of the first error alone missed.
    impl = shlex.join([sys.executable, str(FAKES / "cascading_errors.py")])
    report = fuzz(FuzzConfig(impl=impl, examples=40, seed=1, ops=("validate",), time_budget=60))
    assert report.finding is not None
    assert report.finding.mismatches[0].startswith("/errors: expected an array of 1 item(s)")


# --- choices no rule makes (docs/spec.md, the order of refusals within one record) ---

FIELDS_FIRST = shlex.join([sys.executable, str(FAKES / "checks_fields_before_ids.py")])
LEAF_AS_PARENT = shlex.join([sys.executable, str(FAKES / "remove_leaf_as_parent.py")])
def _fuzz_appends(mode: str) -> dict[str, Any]:
    return _fuzz_fresh(impl=FIELDS_FIRST, examples=100, seed=1, ops=["append"], time_budget=120,
                       no_judge=mode == "no-judge")


@pytest.mark.slow
def test_fuzz_reports_nothing_against_an_order_of_refusals_no_rule_fixes() -> None:
    report = _fuzz_appends("judge")
    assert report["found"] is None
    assert report["examples"] == 100
    assert report["unstated"] > 0  # the two orders did meet, and were let be


@pytest.mark.slow
def test_without_the_order_judge_the_same_run_reports_the_unstated_choice() -> None:
    report = _fuzz_appends("no-judge")
    assert report["found"] is not None
    assert any("/error/code" in problem for problem in report["found"])


def test_fuzz_still_reports_a_removal_leaf_answered_as_a_missing_parent() -> None:
    # APP-18 rev. 3 states LEAF_NOT_FOUND: a stated choice is compared.
    report = fuzz(FuzzConfig(impl=LEAF_AS_PARENT, examples=60, seed=1, ops=("remove",),
                             time_budget=120))
    assert report.finding is not None
    assert report.finding.mismatches == (
        '/error/code: expected "LEAF_NOT_FOUND", got "PARENT_NOT_FOUND"',)


def _validate_as(code: str | None) -> Callable[[bytes], dict[str, Any]]:
    def validate(data: bytes) -> dict[str, Any]:
        return {"valid": code is None, "errors": [] if code is None else [{"code": code}]}
    return validate


HEADER_LINE = b'{"type":"session","version":1,"id":"s","timestamp":"2026-01-01T00:00:00Z"}\n'
M1 = {"type": "custom", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:00Z",
      "customType": "t", "data": 1}
TAKEN_HEADER = {"type": "session", "version": 1, "id": "m1", "timestamp": "2026-01-01T00:00:00Z"}
REFUSED = {"error": {"code": "APPEND_ID_CONFLICT", "line": 3}, "committed": [],
           "alreadyPresent": []}


@pytest.mark.parametrize(("read_code", "faults"), [
    ("HEADER_REPEATED", {"APPEND_ID_CONFLICT", "HEADER_REPEATED"}),
    (None, {"APPEND_ID_CONFLICT"}),
], ids=["taken-id-and-repeated-header", "taken-id-alone"])
def test_faults_of_a_refused_record_are_the_taken_id_and_its_read_fault(
    read_code: str | None, faults: set[str],
) -> None:
    steps = [("append", {"records": [M1]}), ("append", {"records": [TAKEN_HEADER]})]
    results = [{"committed": ["m1"], "alreadyPresent": [], "leaf": "m1"}, REFUSED]
    found = faults_of_refused_record(HEADER_LINE, steps, results, _validate_as(read_code))
    assert found == faults


@pytest.mark.parametrize(("theirs", "faults", "unstated"), [
    ("HEADER_REPEATED", {"APPEND_ID_CONFLICT", "HEADER_REPEATED"}, True),
    ("HEADER_REPEATED", {"HEADER_REPEATED"}, False),
    ("PARENT_NOT_FOUND", {"APPEND_ID_CONFLICT", "HEADER_REPEATED"}, False),
], ids=["two-of-several-faults", "one-fault-only", "a-code-the-record-lacks"])
def test_only_two_codes_among_several_faults_are_an_unstated_choice(
    theirs: str, faults: set[str], unstated: bool,
) -> None:
    mine = {"error": {"code": "APPEND_ID_CONFLICT", "line": 3}, "committed": [],
            "alreadyPresent": []}
    pattern = {**mine, "error": {"code": theirs, "line": 3}}
    assert differs_only_in_an_unstated_order(mine, pattern, lambda: frozenset(faults)) is unstated


def test_a_different_line_is_never_an_unstated_choice() -> None:
    mine = {"error": {"code": "APPEND_ID_CONFLICT", "line": 3}, "committed": [],
            "alreadyPresent": []}
    pattern = {**mine, "error": {"code": "HEADER_REPEATED", "line": 4}}
    both = frozenset({"APPEND_ID_CONFLICT", "HEADER_REPEATED"})
    assert not differs_only_in_an_unstated_order(mine, pattern, lambda: both)
