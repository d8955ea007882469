"""The method report of check-fixtures: each method's members, those a case reaches and those
it does not."""

from __future__ import annotations

from persyk_conformance.cases._methods import METHODS, Method, Target, method_report
from persyk_conformance.cases._sanity import method_gaps


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
