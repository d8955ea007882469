"""Case steps are confined to their workspace: a path-valued argument
(``session``, ``recordsFile``, ``script``, a profile's ``root``, a ``$path``) is a relative name
inside the workspace. The case schema refuses the rest, the loader refuses it again as a fixture
problem naming the case and the member, and the runner refuses it once more when it joins the
path (a ``$resultOf`` value comes from the adapter). Planted cases try, and nothing outside is
read, reported or deleted."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.casetree import HEADER, fake
from hypothesis import given, settings
from hypothesis import strategies as st
from persyk_conformance.cases import _load
from persyk_conformance.cases._load import CaseError, load_case, manifest_problems
from persyk_conformance.cases._steps import OutsideWorkspace, path_problem, step_path_problems
from persyk_conformance.cli import RunConfig, execute
from persyk_conformance.reports._run import render_junit, render_markdown, render_text
from persyk_conformance.run._outcomes import RunRecord
from persyk_conformance.run._workspace import absolutize

MARKER = "persyk outside text that must never be reported"
OUTSIDE_USER = json.dumps({
    "type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
    "message": {"role": "user", "content": [{"type": "text", "text": MARKER}],
                "timestamp": 1767225601000}}).encode() + b"\n"

HOSTILE = [
    pytest.param("/etc", "an absolute path", id="absolute"),
    pytest.param("../../victim", "climbs with '..'", id="dotdot-first"),
    pytest.param("session/../../victim", "climbs with '..'", id="dotdot-inside"),
    pytest.param("session//session.jsonl", "has an empty segment", id="empty-segment"),
    pytest.param("session/", "has an empty segment", id="trailing-slash"),
    pytest.param("./session", "has a '.' segment", id="dot"),
    pytest.param("session\\..\\x", "holds a backslash", id="backslash"),
    pytest.param("session\x00x", "holds a NUL character", id="nul"),
    pytest.param("", "empty", id="empty"),
]


@pytest.mark.parametrize(("value", "why"), HOSTILE)
def test_a_path_that_leaves_the_workspace_is_named_for_why(value: str, why: str) -> None:
    assert path_problem(value) == why


@pytest.mark.parametrize("value", ["session", "session/session.jsonl", "roots/a/b", "..a", "a.."])
def test_a_relative_name_inside_the_workspace_is_accepted(value: str) -> None:
    assert path_problem(value) is None


def manifest(steps: list[dict[str, Any]], case_id: str = "S-001") -> dict[str, Any]:
    return {"id": case_id, "kind": "scenario", "title": "a planted case", "rules": ["CAP-28"],
            "level": "MUST", "requires": ["read", "capture", "assets"], "steps": steps}


def step(op: str, **args: Any) -> dict[str, Any]:
    return {"op": op, "args": args, "expect": {}}


@pytest.mark.parametrize(("value", "why"), HOSTILE)
def test_the_case_schema_refuses_a_session_outside_the_workspace(value: str, why: str) -> None:
    problems = manifest_problems(manifest([step("validate", session=value)]))
    assert any(p.startswith("/steps/0/args/session") for p in problems), problems


@pytest.mark.parametrize("key", ["recordsFile", "script"])
def test_the_case_schema_refuses_every_path_argument(key: str) -> None:
    problems = manifest_problems(manifest([step("append", session="session", **{key: "/x"})]))
    assert any(p.startswith(f"/steps/0/args/{key}") for p in problems), problems


def test_the_case_schema_still_takes_a_reference_as_a_path_argument() -> None:
    reference = {"$resultOf": 1, "pointer": "/path"}
    assert manifest_problems(manifest([step("validate", session=reference)])) == []


@pytest.mark.parametrize(("args", "member"), [
    ({"session": "/etc"}, "/steps/1/args/session"),
    ({"session": "s", "recordsFile": "../r.jsonl"}, "/steps/1/args/recordsFile"),
    ({"roots": [{"$path": "../home"}]}, "/steps/1/args/roots/0/$path"),
], ids=["session", "recordsFile", "$path"])
def test_the_loader_names_the_step_member_and_not_the_value(
    args: dict[str, Any], member: str
) -> None:
    problems = step_path_problems(2, args, {}, frozenset({"session", "recordsFile"}))
    assert len(problems) == 1 and problems[0].startswith(member + ": ")
    assert "etc" not in problems[0] and "home" not in problems[0]


def plant(root: Path, steps: list[dict[str, Any]], case_id: str = "S-001") -> Path:
    case_dir = root / "scenario" / f"{case_id}-planted"
    (case_dir / "tree" / "session").mkdir(parents=True)
    (case_dir / "tree" / "session" / "session.jsonl").write_bytes(HEADER)
    (case_dir / "case.json").write_text(json.dumps(manifest(steps, case_id)))
    return case_dir


def test_loading_a_case_with_an_outside_session_is_a_fixture_problem(tmp_path: Path) -> None:
    case_dir = plant(tmp_path, [step("validate", session="session"),
                                step("deleteSession", session="../../victim", confirm=True)])
    with pytest.raises(CaseError) as raised:
        load_case(case_dir, "scenario")
    assert "S-001" in str(raised.value) and "/steps/1/args/session" in str(raised.value)


@pytest.fixture
def victim(tmp_path: Path) -> Iterator[Path]:
    """A session outside every workspace, holding text a report must never show."""
    session = tmp_path / "victim"
    session.mkdir()
    (session / "session.jsonl").write_bytes(HEADER + OUTSIDE_USER)
    yield session
    shutil.rmtree(session, ignore_errors=True)


@pytest.fixture
def without_loader_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The broken loader: no schema and no confinement check, so only the runner stands."""
    monkeypatch.setattr(_load, "manifest_problems", lambda manifest, profile=None: [])
    monkeypatch.setattr(_load, "step_path_problems", lambda *args: [])


def reports(record: RunRecord) -> str:
    return render_text(record, verbose=True) + render_markdown(record) + render_junit(record)


def assert_untouched(victim: Path, record: RunRecord) -> None:
    assert (victim / "session.jsonl").read_bytes() == HEADER + OUTSIDE_USER
    assert MARKER not in reports(record)
    assert MARKER not in json.dumps([r.to_json() for r in record.results], default=str)


@pytest.mark.usefixtures("without_loader_checks")
@pytest.mark.parametrize("how", ["absolute", "climbing"])
def test_the_runner_refuses_an_outside_session_the_loader_let_through(
    tmp_path: Path, victim: Path, how: str
) -> None:
    cases = tmp_path / "cases"
    outside = str(victim) if how == "absolute" else "../" * 12 + str(victim).lstrip("/")
    plant(cases, [step("context", session=outside) | {"expect": {"messages": {"$exact": []}}},
                  step("deleteSession", session=outside, confirm=True)])
    record = execute(RunConfig(fixtures=cases, harness=False, confine=False))
    [result] = record.results
    assert str(result.outcome) == "error"
    assert "fixture problem" in result.reason and "not a relative name" in result.reason
    assert_untouched(victim, record)


def test_the_runner_refuses_an_outside_session_named_by_an_adapter_result(
    tmp_path: Path, victim: Path
) -> None:
    """The case is clean; the adapter's result names the outside session (``$resultOf``)."""
    cases = tmp_path / "cases"
    plant(cases, [step("assetWrite", session="session", data="eA==",
                       mimeType="application/octet-stream"),
                  step("deleteSession", session={"$resultOf": 1, "pointer": "/asset/path"},
                       confirm=True)])
    record = execute(RunConfig(impl=fake("result_names_outside", "--outside", str(victim)),
                               fixtures=cases, harness=False, confine=False))
    [result] = record.results
    assert str(result.outcome) == "error" and "fixture problem" in result.reason
    assert "step 2" in result.reason or result.step == 2
    assert_untouched(victim, record)


def test_an_absolute_path_inside_the_workspace_stays_and_one_beside_it_is_refused(
    tmp_path: Path,
) -> None:
    """A resolved ``$path`` or a result's path of this workspace is absolute and inside it."""
    workspace = tmp_path / "ws"
    inside = str(workspace / "session")
    assert absolutize({"session": inside}, workspace)["session"] == inside
    assert absolutize({"session": "session"}, workspace)["session"] == inside
    for outside in (str(tmp_path / "wsx"), str(workspace / ".." / "victim"), "/etc"):
        with pytest.raises(OutsideWorkspace):
            absolutize({"session": outside}, workspace)


@pytest.mark.usefixtures("without_loader_checks")
@pytest.mark.parametrize("where", ["files", "prepare-remove", "holdLock"])
def test_the_runner_confines_files_checks_and_harness_paths_too(
    tmp_path: Path, victim: Path, where: str
) -> None:
    """Without the schema, a ``files`` key could read an outside file into a report, a
    ``prepare`` action remove one and ``holdLock`` create one."""
    cases = tmp_path / "cases"
    outside = "../" * 12 + str(victim / "session.jsonl").lstrip("/")
    planted = step("validate", session="session")
    if where == "files":
        planted["files"] = {outside: {"equals": "tree/session/session.jsonl"}}
    elif where == "prepare-remove":
        planted["harness"] = {"prepare": [{"remove": outside}]}
    else:
        planted["harness"] = {"holdLock": "../" * 12 + str(victim / "planted.lock").lstrip("/")}
    plant(cases, [planted])
    record = execute(RunConfig(fixtures=cases, harness=False, confine=False))
    [result] = record.results
    assert str(result.outcome) == "error" and "fixture problem" in result.reason
    assert_untouched(victim, record)
    assert sorted(p.name for p in victim.iterdir()) == ["session.jsonl"]


# --- the schema and the runner agree on every path, and what both accept stays inside ---------

SEGMENT = st.one_of(st.sampled_from(["", ".", "..", "...", "a", "session", "x.bin", "a\\b",
                                     "\x00", " ", "é"]),
                    st.text(alphabet="ab./\\\x00-_", max_size=4))
PATHS = st.one_of(st.lists(SEGMENT, min_size=1, max_size=5).map("/".join),
                  st.text(max_size=12))


@settings(max_examples=400, deadline=None)
@given(PATHS)
def test_the_schema_and_the_runner_agree_and_accepted_paths_stay_inside(value: str) -> None:
    workspace = Path("/persyk/ws")
    by_schema = not manifest_problems(manifest([step("validate", session=value)]))
    by_runner = path_problem(value) is None
    assert by_schema == by_runner, (value, by_schema, by_runner)
    if by_runner:
        joined = os.path.normpath(absolutize({"session": value}, workspace)["session"])
        assert Path(joined).is_relative_to(workspace) and joined != str(workspace)
    else:
        with pytest.raises(OutsideWorkspace):
            absolutize({"session": value}, workspace)
