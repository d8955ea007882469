"""The choices docs/spec.md leaves free are never compared by the fuzzer
(``persyk_conformance.fuzz._choices.FREE_CHOICES``): each names a decision of the spec, and the
views the fuzzer compares are the same whichever way an implementation chose."""

from __future__ import annotations

from typing import Any

import pytest
from _paths import CHECKOUT
from hypothesis import HealthCheck, given, settings
from persyk_conformance.fuzz._choices import FREE_CHOICES
from persyk_conformance.fuzz._probes import Probe, probes, view_of

SPEC = (CHECKOUT / "docs" / "spec.md").read_text(encoding="utf-8")
FIRST = {"code": "MESSAGE_INVALID", "line": 3, "message": "a message has no role"}
CASCADE = {"code": "PARENT_NOT_FOUND", "line": 4, "message": "parentId names no entry"}


@pytest.mark.parametrize("decision", sorted(FREE_CHOICES))
def test_each_free_choice_is_a_decision_of_the_spec(decision: str) -> None:
    assert f"**{decision}" in SPEC


def test_a_shape_fault_registering_its_id_or_not_gives_one_validate_view() -> None:
    registered: dict[str, Any] = {"valid": False, "errors": [FIRST]}
    not_registered: dict[str, Any] = {"valid": False, "errors": [FIRST, CASCADE]}
    assert view_of("validate", registered) == view_of("validate", not_registered)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(probes(["append", "remove", "read", "validate"]))
def test_the_fuzzer_never_sends_a_records_file(probe: Probe) -> None:
    # Decision (APP-8, REC-22, REC-24): a recordsFile line's spelling is free; only `records`
    # values are sent, and their lines are compared as views, never as bytes.
    assert all("recordsFile" not in step.args for step in probe.steps)
