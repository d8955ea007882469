"""The exported strategies (persyk_conformance.strategies, docs/implementers/strategies.md) draw
what they promise: valid sessions the reference accepts, single-fault mutants whose first error is
the fault's code at the fault's line, one fault class for every code a file can produce, and append
scenarios the reference answers."""

from __future__ import annotations

import json
import re
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT
from hypothesis import HealthCheck, given, settings
from persyk_conformance.strategies import (
    APPEND_STEP_KINDS,
    FAULT_CLASSES,
    AppendScenario,
    Fault,
    Session,
    append_scenarios,
    faulty_sessions,
    sessions,
)
from persyk_session.operations import OPERATIONS

ROOT = CHECKOUT
QUICK = settings(max_examples=8, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# Codes of the read phase that no file's bytes produce: each comes from an argument.
NOT_FROM_BYTES = {
    "LEAF_NOT_FOUND": "a context leaf that names no entry (the fuzzer draws such leaves)",
    "CURSOR_INVALID": "a paged-read cursor the session never produced",
}


def run(op: str, data: bytes, **args: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "session.jsonl").write_bytes(data)
        result: dict[str, Any] = OPERATIONS[op]({"session": directory, **args})
        return result


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions())
def test_generated_session_is_valid_for_the_reference(session: Session) -> None:
    assert run("validate", session.data) == {"valid": True, "errors": [], "truncated": False}


@pytest.mark.parametrize("kind", sorted(FAULT_CLASSES))
def test_fault_class_is_reported_first_with_its_code_at_its_line(kind: str) -> None:
    @QUICK
    @given(faulty_sessions([kind]))
    def check(fault: Fault) -> None:
        result = run("validate", fault.data)
        assert result["valid"] is False
        first = result["errors"][0]
        assert (first["code"], first.get("line")) == (fault.code, fault.line)

    check()


def test_fault_classes_cover_every_code_a_session_file_can_produce() -> None:
    catalog = json.loads((files("persyk_contract") / "errors.json").read_text("utf-8"))
    read_codes = {c["code"] for c in catalog["codes"] if c["phase"] == "read"}
    assert {c.code for c in FAULT_CLASSES.values()} == read_codes - set(NOT_FROM_BYTES)


def test_fault_classes_cover_every_code_the_rejection_cases_expect_of_a_file() -> None:
    expected = set()
    for manifest in (ROOT / "fixtures" / "v1" / "rejection").glob("*/case.json"):
        case = json.loads(manifest.read_text("utf-8"))
        step = case["steps"][0]
        if step["op"] == "validate" and "errors" in step["expect"]:
            expected.add(step["expect"]["errors"][0]["code"])
    assert expected, "no rejection case found"
    assert expected <= {c.code for c in FAULT_CLASSES.values()}


def test_fault_classes_name_rules_of_the_spec() -> None:
    spec = (ROOT / "docs" / "spec.md").read_text("utf-8")
    rules = set(re.findall(r"^\| ([A-Z]+-[0-9]+) \|", spec, re.MULTILINE))
    named = {rule for c in FAULT_CLASSES.values() for rule in c.rules}
    assert named <= rules


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(append_scenarios())
def test_append_scenario_is_answered_by_the_reference(scenario: AppendScenario) -> None:
    assert {step.kind for step in scenario.steps} <= set(APPEND_STEP_KINDS)
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "session.jsonl").write_bytes(scenario.session.data)
        for step in scenario.steps:
            result = OPERATIONS[step.op]({"session": directory, **step.args})
            assert set(result) >= {"committed", "alreadyPresent"}
        # Whatever was refused, what was committed is a valid session (APP-9, APP-14).
        assert OPERATIONS["validate"]({"session": directory})["valid"]


def test_documented_example_runs() -> None:
    text = (ROOT / "docs" / "implementers" / "strategies.md").read_text("utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert block is not None, "docs/implementers/strategies.md lost its example"
    exec(compile(block.group(1), "docs/implementers/strategies.md", "exec"), {})
