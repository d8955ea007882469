"""The choices docs/spec.md leaves free are never compared by the fuzzer
(``persyk_conformance.fuzz._choices.FREE_CHOICES``): each names a decision of the spec, and the
fuzzer draws no input on which the views it compares depend on that choice."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _paths import CHECKOUT
from hypothesis import HealthCheck, given, settings
from persyk_conformance.fuzz._choices import FREE_CHOICES
from persyk_conformance.fuzz._probes import Probe, probes, view_of
from persyk_conformance.fuzz._strategies_faults import Fault, faulty_sessions

SPEC = (CHECKOUT / "docs" / "spec.md").read_text(encoding="utf-8")
FIRST = {"code": "MESSAGE_INVALID", "line": 3, "message": "a message has no role"}
CASCADE = {"code": "PARENT_NOT_FOUND", "line": 4, "message": "parentId names no entry"}


@pytest.mark.parametrize("decision", sorted(FREE_CHOICES))
def test_each_free_choice_is_a_decision_of_the_spec(decision: str) -> None:
    assert f"**{decision}" in SPEC


SHAPE_FAULTS = ["entry.type-unknown", "entry.field-unknown", "entry.envelope", "entry.fields",
                "message.invalid", "block.invalid", "asset.invalid"]


def _named_later(data: bytes, line: int) -> tuple[str, set[Any]]:
    """The id on physical ``line`` and every parentId and targetId of the lines after it."""
    lines = data.split(b"\n")
    faulty = json.loads(lines[line - 1])
    named = set()
    for raw in lines[line:]:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            named |= {record.get("parentId"), record.get("targetId")}
    return faulty.get("id") if isinstance(faulty, dict) else None, named


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(faulty_sessions(SHAPE_FAULTS))
def test_no_later_record_of_a_shape_fault_names_the_refused_entry(fault: Fault) -> None:
    # Decision (DIAG-4, DIAG-6, TREE-1): whether a refused entry registers its id changes only
    # the errors of a child naming it. The fuzzer compares every error of validate, so no input
    # it draws may hold such a child: then DIAG-6 fixes the list at the fault's one diagnostic.
    assert fault.line is not None
    entry_id, named = _named_later(fault.data, fault.line)
    assert entry_id is None or entry_id not in named


def test_the_validate_view_holds_every_error_and_the_truncated_flag() -> None:
    result = {"valid": False, "truncated": False, "errors": [FIRST, CASCADE]}
    assert view_of("validate", result) == {
        "valid": False, "truncated": False,
        "errors": [{"code": "MESSAGE_INVALID", "line": 3}, {"code": "PARENT_NOT_FOUND", "line": 4}]}


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(probes(["append", "remove", "read", "validate"]))
def test_the_fuzzer_never_sends_a_records_file(probe: Probe) -> None:
    # Decision (APP-8, REC-22, REC-24): a recordsFile line's spelling is free; only `records`
    # values are sent, and their lines are compared as views, never as bytes.
    assert all("recordsFile" not in step.args for step in probe.steps)
