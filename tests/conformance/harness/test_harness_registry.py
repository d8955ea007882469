"""The one table of harness procedures: ids, profiles, rules and descriptions, and
the commands that read it (list, show, check-fixtures)."""

from __future__ import annotations

import re

import pytest
from persyk_conformance.cli import main
from persyk_conformance.harness._registry import (
    HARNESS_CHECKS,
    check_description,
    checks_for,
    needs_a_process,
    registry_problems,
)
from persyk_conformance.run._outcomes import CaseResult, Outcome


def test_every_check_has_one_row_and_its_profile_by_its_prefix() -> None:
    ids = [c.id for c in HARNESS_CHECKS]
    assert len(ids) == len(set(ids))
    assert all(c.id.startswith("H-") for c in checks_for("v1"))
    assert all(c.id.startswith("DH-") for c in checks_for("dsh-v0"))
    assert len(checks_for("v1")) + len(checks_for("dsh-v0")) == len(ids)


def test_the_table_names_only_rules_of_a_spec_and_describes_every_check() -> None:
    assert registry_problems(set()) == []
    assert all(check_description(c.id) != "(not described)" for c in HARNESS_CHECKS)


def test_a_check_that_shares_an_id_with_a_fixture_is_reported() -> None:
    assert registry_problems({"H-201"}) == ["harness check H-201 has the id of a fixture case"]


def _result(outcome: Outcome, reason: str | None, case_id: str = "H-202") -> CaseResult:
    return CaseResult(id=case_id, title="t", kind="harness", rules=(), requires=(), level="MUST",
                      outcome=outcome, duration_ms=0.0, reason=reason)


def test_only_a_procedure_unverified_in_process_is_excused_by_check_fixtures() -> None:
    process = "needs an adapter process (not the in-process adapter)"
    assert needs_a_process(_result(Outcome.UNVERIFIED, process))
    assert not needs_a_process(_result(Outcome.FAIL, process))
    assert not needs_a_process(_result(Outcome.UNSUPPORTED, "the adapter lacks capture"))
    assert not needs_a_process(_result(Outcome.UNVERIFIED, process, case_id="R-001"))


@pytest.mark.parametrize(("profile", "wanted"), [
    ("v1", ["H-201", "H-202", "H-203", "H-204", "H-205", "H-206", "H-207", "H-208", "H-209",
            "H-210", "H-211"]),
    ("dsh-v0", ["DH-103", "DH-104"]),
], ids=["v1", "dsh-v0"])
def test_list_shows_the_power_loss_checks_of_each_profile(
    capsys: pytest.CaptureFixture[str], profile: str, wanted: list[str]
) -> None:
    assert main(["list", "--profile", profile, "--only", ",".join(wanted)]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert listed == wanted


@pytest.mark.parametrize("check", [c.id for c in HARNESS_CHECKS])
def test_a_checks_description_names_no_module_of_the_runner(check: str) -> None:
    # What `show` prints is for implementers: a pointer into the runner's code is not for them.
    assert not re.search(r"(?<![\w-])_[a-z]\w*", check_description(check)), check_description(check)


def test_the_crash_checks_descriptions_name_no_fixed_number_of_kills() -> None:
    # The number of kills is --crash-moments (CRASH_MOMENTS by default), not a constant.
    for check in ("H-104", "H-150"):
        assert "--crash-moments" in check_description(check)
        assert "200 seeded" not in check_description(check)
