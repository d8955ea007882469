"""The dsh-v0 profile in the suite: its cases, its fixture check, its reports, its protocol."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import jsonschema
import persyk_contract
import pytest
from _paths import CHECKOUT
from fakes.casetree import fake
from persyk_conformance import check_profile_fixtures
from persyk_conformance._protocol import decode_hello, encode_run
from persyk_conformance.cli import RunConfig, execute, main
from persyk_conformance.harness._registry import checks_for
from persyk_conformance.reports._run import report_json
from persyk_conformance.run._outcomes import Outcome
from persyk_dsh._errors import PHASE_OF, DshCode
from persyk_session.adapter import dispatch, hello

ROOT = CHECKOUT
FIXTURES = ROOT / "fixtures" / "dsh-v0"
SPEC = ROOT / "docs" / "spec-dsh-v0.md"
REPORT_SCHEMA = json.loads(
    (files("persyk_contract.schemas") / "protocol" / "report.schema.json").read_text("utf-8")
)


@pytest.mark.slow
def test_reference_passes_every_dsh_case_through_its_subprocess_adapter() -> None:
    record = execute(RunConfig(profile="dsh-v0", strict=True))
    failing = [f"{r.id} {r.outcome}: {r.describe()}" for r in record.results
               if r.outcome is not Outcome.PASS]
    assert not failing, "\n".join(failing)
    cases = len(list(FIXTURES.glob("*/*/case.json")))
    assert len(record.results) == cases + len(checks_for("dsh-v0"))
    report = report_json(record)
    jsonschema.validate(report, REPORT_SCHEMA)
    assert report["header"]["profile"] == "dsh-v0"
    assert report["header"]["suite"]["contract"] == persyk_contract.profile_contract_version(
        "dsh-v0")


def test_an_adapter_that_does_not_speak_the_profile_tests_nothing() -> None:
    record = execute(RunConfig(impl=fake("accept_everything"), profile="dsh-v0", timeout=5))
    assert {r.outcome for r in record.results} == {Outcome.UNSUPPORTED}
    assert "does not speak the profile dsh-v0" in (record.results[0].reason or "")
    assert not record.passed


def test_dsh_fixtures_are_current_and_sane() -> None:
    if not (ROOT / "fixtures" / "build_dsh.py").is_file():
        pytest.skip("needs a checkout (fixtures/build_dsh.py)")
    proc = subprocess.run([sys.executable, str(ROOT / "fixtures" / "build_dsh.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_profile_fixtures("dsh-v0", spec_text=SPEC.read_text("utf-8")) == []


def test_fixture_check_reports_a_rule_no_case_exercises(tmp_path: Path) -> None:
    tree = tmp_path / "dsh-v0"
    shutil.copytree(FIXTURES, tree)
    for case in tree.glob("*/*/case.json"):
        if "DSH-9" in json.loads(case.read_text("utf-8"))["rules"]:
            shutil.rmtree(case.parent)
    assert "rule DSH-9 (read) is exercised by no case" in check_profile_fixtures("dsh-v0", tree)


def test_fixture_check_reports_a_code_no_case_expects(tmp_path: Path) -> None:
    tree = tmp_path / "dsh-v0"
    shutil.copytree(FIXTURES, tree)
    for case in tree.glob("*/*/case.json"):
        if "DSH_AMBIGUOUS" in case.read_text("utf-8"):
            shutil.rmtree(case.parent)
    assert "code DSH_AMBIGUOUS (read) is expected by no case" in check_profile_fixtures(
        "dsh-v0", tree)


def test_spec_catalog_is_the_reference_catalog() -> None:
    spec = {c.code: c.phase for c in persyk_contract.profile_catalog("dsh-v0")}
    assert spec == {str(code): phase for code, phase in PHASE_OF.items()}
    assert set(spec) == {str(code) for code in DshCode}


def test_v1_requests_carry_no_profile_and_dsh_requests_name_theirs() -> None:
    assert b"profile" not in encode_run(1, "validate", {"session": "/s"})
    assert json.loads(encode_run(1, "load", {"root": "/r"}, "dsh-v0"))["profile"] == "dsh-v0"


def test_hello_names_both_profiles_and_a_hello_without_them_means_v1() -> None:
    assert set(hello()["profiles"]) == {"v1", "dsh-v0"}
    bare = {"protocol": 1, "capabilities": ["read"],
            "implementation": {"name": "x", "version": "1", "language": "c"}}
    assert decode_hello(json.dumps(bare).encode()).profiles == frozenset({"v1"})


def test_reference_adapter_refuses_an_unknown_profile() -> None:
    assert dispatch("load", {"root": "/r", "id": "s"}, "v9")["unsupported"] is True


def test_list_and_report_name_the_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--profile", "dsh-v0", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(row["id"].startswith(("DG-", "DR-", "DS-", "DH-")) for row in rows)
    assert [row["id"] for row in rows if row["kind"] == "harness"] == [
        "DH-101", "DH-102", "DH-103", "DH-104"]
    assert main(["run", "--profile", "dsh-v0", "--in-process", "--only", "DG-001"]) == 0
    assert "profile dsh-v0" in capsys.readouterr().out


def _harness(only: str) -> Outcome:
    record = execute(RunConfig(in_process=True, profile="dsh-v0", only=(only,)))
    (result,) = record.results
    return result.outcome


@pytest.mark.slow
def test_dsh_harness_passes_the_reference_in_process() -> None:
    assert _harness("DH-101") is Outcome.PASS
    assert _harness("DH-102") is Outcome.PASS


def test_torn_log_check_fails_a_backend_that_leaves_a_step_open(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from persyk_dsh import _recover, _store

    monkeypatch.setattr(_store, "closers", lambda events, time: [
        c for c in _recover.closers(events, time) if c["type"] != "step/end"])
    assert _harness("DH-101") is Outcome.FAIL


def test_race_check_fails_a_backend_that_publishes_by_rename(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from persyk_dsh import _store

    monkeypatch.setattr(_store, "link_new", lambda temp, path: os.link(temp, str(path) + ".x")
                        or os.replace(str(path) + ".x", path))
    assert _harness("DH-102") is Outcome.FAIL


def test_show_names_the_profile_of_a_case_and_of_a_harness_check(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "--profile", "dsh-v0", "DR-019"]) == 0
    shown = capsys.readouterr().out
    assert "profile: dsh-v0" in shown and "DSH-11 (MUST; docs/spec-dsh-v0.md" in shown
    assert main(["show", "--profile", "dsh-v0", "DH-102"]) == 0
    assert "rules: DSH-18" in capsys.readouterr().out
