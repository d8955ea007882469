"""The runner gives each misbehaving adapter the right outcome (fakes in tests/fakes/).

Every test runs a tiny case tree (tests/fakes/casetree.py) or a few harness cases, with short
deadlines, so the whole module stays fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.casetree import fake, run, write_cases
from persyk_conformance.cli import RunConfig, execute
from persyk_conformance.run._outcomes import Outcome, RunRecord


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cases(tmp_path_factory.mktemp("cases"))


def outcomes(record: RunRecord) -> dict[str, Outcome]:
    return {r.id: r.outcome for r in record.results}


@pytest.mark.parametrize(
    ("fake_name", "flags", "expected"),
    [
        ("accept_everything", (), {"G-001": "pass", "G-002": "unsupported", "R-001": "fail"}),
        ("reject_everything", (), {"G-001": "fail", "R-002": "fail"}),
        ("crash_at_start", (), {"G-001": "error", "G-002": "error", "R-001": "error"}),
        ("crash_mid_run", (), {"G-001": "pass", "G-002": "crash", "R-001": "fail"}),
        ("hang", (), {"G-001": "timeout", "R-001": "timeout"}),
        ("non_json", (), {"G-001": "crash"}),
        ("wrong_seq", (), {"G-001": "error", "R-001": "error"}),
        ("bad_result", (), {"G-001": "error"}),
        ("internal_error", (), {"G-001": "error"}),
        ("modify_on_validate", (), {"G-001": "fail"}),
        ("write_outside", (), {"G-001": "fail", "G-002": "fail"}),
        ("write_outside", ("--beside",), {"G-001": "fail"}),
    ],
    ids=lambda v: "-".join(v) if isinstance(v, tuple) else (v if isinstance(v, str) else None),
)
def test_fake_adapter_gets_the_right_outcome(
    tree: Path, fake_name: str, flags: tuple[str, ...], expected: dict[str, str]
) -> None:
    record = run(tree, fake(fake_name, *flags), *expected)
    assert {k: str(v) for k, v in outcomes(record).items()} == expected
    assert not record.passed


def test_reference_adapter_passes_the_tiny_tree(tree: Path) -> None:
    record = execute(RunConfig(fixtures=tree, harness=False))
    assert set(outcomes(record).values()) == {Outcome.PASS}
    assert record.passed
    assert record.implementation is not None
    assert record.implementation["name"] == "persyk-session"


def test_crash_costs_one_case_and_the_adapter_is_restarted(tree: Path) -> None:
    record = run(tree, fake("crash_mid_run"), "G-*", "R-*")
    crashed = [r for r in record.results if r.outcome is Outcome.CRASH]
    assert [r.id for r in crashed] == ["G-002"]
    assert "crash_mid_run: exiting" in crashed[0].stderr
    assert outcomes(record)["R-002"] is Outcome.FAIL  # answered by a fresh process


def test_hang_is_killed_and_the_run_continues(tree: Path) -> None:
    record = run(tree, fake("hang"), "G-001", "R-001")
    first = record.results[0]
    assert first.outcome is Outcome.TIMEOUT
    assert first.step == 1 and first.op == "validate"
    assert "killed" in (first.reason or "")


def test_adapter_that_never_starts_stops_being_tried(tree: Path) -> None:
    record = run(tree, fake("crash_at_start"), "*")
    assert [str(r.outcome) for r in record.results] == ["error"] * 4
    assert "the adapter did not start" in (record.results[0].reason or "")
    assert "not run: the adapter failed to start 3 times in a row" in (
        record.results[-1].reason or "")
    assert "giving up at once" in record.results[0].describe()


@pytest.mark.parametrize(
    ("fake_name", "expected_detail"),
    [
        ("wrong_seq", "seq 2; the request had seq 1"),
        ("bad_result", "results.json#/$defs/validate"),
        ("internal_error", "database is on fire"),
        ("non_json", "not JSON"),
    ],
)
def test_protocol_faults_are_explained(tree: Path, fake_name: str, expected_detail: str) -> None:
    record = run(tree, fake(fake_name), "G-001")
    assert expected_detail in (record.results[0].reason or "")


def test_read_only_step_that_writes_names_the_file(tree: Path) -> None:
    record = run(tree, fake("modify_on_validate"), "G-001")
    assert "read-only validate changed the workspace: modified session/session.jsonl" in (
        record.results[0].mismatches
    )


@pytest.mark.parametrize(
    ("flags", "where"), [((), "created tmp/cache.db"), (("--beside",), "created cases/stray.txt")]
)
def test_write_outside_the_workspace_is_a_failure(
    tree: Path, flags: tuple[str, ...], where: str
) -> None:
    record = run(tree, fake("write_outside", *flags), "G-001")
    result = record.results[0]
    assert result.reason == "the adapter wrote outside the case's workspace"
    assert any(where in m for m in result.mismatches), result.mismatches


@pytest.mark.parametrize(
    ("flags", "detail"),
    [((), "a diagnostic contains the canary"), (("--stderr",), "stderr contains the canary")],
    ids=["diagnostic", "stderr"],
)
def test_canary_leak_fails_the_harness_case(
    tree: Path, flags: tuple[str, ...], detail: str
) -> None:
    record = run(tree, fake("leak_canary", *flags), "H-001", harness=True)
    result = record.results[0]
    assert result.outcome is Outcome.FAIL
    assert any(detail in m for m in result.mismatches), result.mismatches


def test_harness_cases_pass_against_the_reference(tree: Path) -> None:
    # Canary cases H-001..H-006, the symlink cases H-110/H-111 and the write harness
    # H-101..H-103, through `execute` as the command line runs them (H-104 kills some twenty
    # adapter processes: its own tests are in test_harness_write.py).
    record = execute(
        RunConfig(fixtures=tree, only=("H-00*", "H-11*", "H-101", "H-102", "H-103"))
    )
    assert {r.id: str(r.outcome) for r in record.results} == {
        **{f"H-00{n}": "pass" for n in range(1, 7)},
        **{f"H-10{n}": "pass" for n in range(1, 4)},
        "H-110": "pass",
        "H-111": "pass",
    }


def test_write_harness_is_unsupported_without_its_capabilities(tree: Path) -> None:
    # The accept-everything fake declares only "read": the write checks cannot apply to it.
    record = run(tree, fake("accept_everything"), "H-10*", harness=True)
    assert {r.id: str(r.outcome) for r in record.results} == {
        f"H-10{n}": "unsupported" for n in range(1, 5)
    }


@pytest.mark.parametrize("case_id", ["R-245", "R-445", "S-115", "S-116"])
def test_canary_planted_in_a_fixture_case_is_checked(case_id: str) -> None:
    # A token persyk-canary-... in a fixture's files or step arguments is a canary like the
    # harness's own (DIAG-1, DIAG-9, DIAG-10): an adapter that quotes the input fails on it.
    impl = fake("leak_canary", "--writes")
    record = execute(RunConfig(impl=impl, only=(case_id,), harness=False))
    mismatches = record.results[0].mismatches
    assert any("a diagnostic contains the canary planted in" in m for m in mismatches), mismatches


def test_validation_that_opens_an_asset_fails_the_fifo_case(tree: Path) -> None:
    # AST-8: H-006 references a FIFO; opening it blocks, so the case cannot pass.
    record = run(tree, fake("open_assets"), "H-006", harness=True)
    assert record.results[0].outcome is not Outcome.PASS
