"""The boundary report of check-fixtures: each limit's case at it and one past it, per side."""

from __future__ import annotations

from persyk_conformance.cases._boundaries import BOUNDARIES, Boundary, boundary_report
from persyk_conformance.cases._sanity import limit_boundaries


def test_report_names_cases_and_gaps() -> None:
    table = (Boundary("REC-11", "1,048,576 bytes", "read", "G-066", None),)
    assert boundary_report([{"id": "G-066", "rules": ["REC-11"]}], table) == [
        "REC-11 1,048,576 bytes (read): at the limit G-066, one past none"]


def test_report_flags_a_case_that_does_not_name_the_rule() -> None:
    table = (Boundary("RCV-10", "1,048,576 bytes", "recover", "S-984", "S-999"),)
    assert boundary_report([{"id": "S-984", "rules": ["RCV-4"]}], table) == [
        "RCV-10 1,048,576 bytes (recover): at the limit S-984 (not a case of RCV-10), "
        "one past S-999 (not a case of RCV-10)"]


def test_every_case_the_table_names_is_a_case_of_its_rule() -> None:
    lines = limit_boundaries()
    assert len(lines) == len(BOUNDARIES)
    assert not [line for line in lines if "not a case of" in line]
