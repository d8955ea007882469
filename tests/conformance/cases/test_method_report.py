"""The method report of check-fixtures: each method's members, those a case reaches and those
it does not."""

from __future__ import annotations

import json

import persyk_contract
from persyk_conformance.cases._methods import (
    METHODS,
    Method,
    Target,
    lock_timeout_operations,
    method_report,
    timeout_report,
)
from persyk_conformance.cases._sanity import method_gaps, timeout_gaps


def test_report_names_members_no_case_reaches() -> None:
    table = (Method("blank strings", (Target("ENT-3", "custom customType", ("G-370",)),
                                      Target("ENT-7", "model_change provider"))),)
    assert method_report([{"id": "G-370", "rules": ["ENT-3"]}], table) == [
        "blank strings: 1 of 2 members reached (ENT-3); not reached: ENT-7 model_change "
        "provider"]


def test_report_flags_a_case_that_does_not_name_the_rule() -> None:
    table = (Method("tails", (Target("RCV-5", "a space", ("S-684", "S-999")),)),)
    assert method_report([{"id": "S-684", "rules": ["RCV-5"]}], table) == [
        "tails: 0 of 1 members reached (none); not reached: RCV-5 a space (S-999 not a case "
        "of RCV-5)"]


def test_every_method_reaches_every_member_it_names() -> None:
    lines = method_gaps()
    assert len(lines) == len(METHODS)
    assert all(line.endswith("not reached: none") for line in lines), lines


def _held(op: str, **args: object) -> dict[str, object]:
    return {"op": op, "args": {"session": "session", **args},
            "harness": {"holdLock": "session/session.lock"}}


def test_timeouts_line_counts_only_held_lock_steps_that_pass_lock_timeout() -> None:
    manifests = [
        {"id": "S-200", "steps": [_held("append", lockTimeout=0.05)]},
        {"id": "S-201", "steps": [_held("remove")]},  # held, but no bound to time
        {"id": "S-202", "steps": [{"op": "recover", "args": {"lockTimeout": 0.05}}]},  # no lock
    ]
    assert timeout_report(manifests, ["append", "remove", "recover"]) == (
        "timeouts (lockTimeout under a held lock): 1 of 3 operations reached (append S-200); "
        "not reached: remove, recover")


def test_timeout_operations_are_those_whose_request_schema_takes_lock_timeout() -> None:
    schema = json.loads(persyk_contract.schema_bytes("protocol/run.request.json"))
    assert lock_timeout_operations(schema) == [
        "create", "append", "remove", "recover", "captureStart", "captureFinish",
        "recoverRecording", "deleteSession", "replay"]


def test_every_operation_taking_lock_timeout_is_timed_under_a_held_lock_or_said_free() -> None:
    # create may go without the session lock (docs/spec.md, the decision on APP-5 and create),
    # so no case can hold the lock against it; the line says so instead of calling it a gap.
    line = timeout_gaps()
    assert line.endswith("; not reached: none"), line
    assert "nothing to time: create (" in line


def test_an_operation_said_free_of_the_wait_is_still_reported_when_a_case_times_it() -> None:
    manifests = [{"id": "S-999", "steps": [_held("create", lockTimeout=0.05)]}]
    assert timeout_report(manifests, ["create", "append"]) == (
        "timeouts (lockTimeout under a held lock): 1 of 2 operations reached (create S-999); "
        "not reached: append")
