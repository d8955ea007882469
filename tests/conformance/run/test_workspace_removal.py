"""A case's leftovers are moved out of the sandbox at once and removed by a thread
(run/_removal.py): the next case sees an empty sandbox, and nothing is left after the run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from persyk_conformance.cli._run import RunConfig, plan_cases
from persyk_conformance.run._removal import Trash
from persyk_conformance.run._workspace import Sandbox, snapshot


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox.create()
    yield box
    box.remove()


def _leave_a_mess(sandbox: Sandbox, case_id: str) -> Path:
    workspace = sandbox.new_workspace(case_id)
    (workspace / "session" / "deep" / "er").mkdir(parents=True)
    (workspace / "session" / "session.jsonl").write_bytes(b"{}\n")
    (workspace / "session" / "deep" / "er" / "x").write_bytes(b"x")
    os.symlink("/etc/passwd", workspace / "link")
    (sandbox.home / ".cache").mkdir()
    (sandbox.tmp / "t").write_bytes(b"t")
    (sandbox.root / "stray").mkdir()
    return workspace


def test_reset_leaves_the_sandbox_as_a_fresh_one(sandbox: Sandbox) -> None:
    fresh = snapshot(sandbox.root)
    _leave_a_mess(sandbox, "G-001")
    sandbox.reset_outside()
    assert snapshot(sandbox.root) == fresh  # the trash is not in the sandbox


def test_a_rerun_case_gets_an_empty_workspace(sandbox: Sandbox) -> None:
    _leave_a_mess(sandbox, "G-001")
    assert list(sandbox.new_workspace("G-001").iterdir()) == []


def test_the_trash_never_follows_a_link(sandbox: Sandbox, tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "file").write_bytes(b"mine")
    workspace = sandbox.new_workspace("G-001")
    os.symlink(kept, workspace / "to-kept")
    sandbox.reset_outside()
    sandbox.trash.close()
    assert (kept / "file").read_bytes() == b"mine"


def test_removing_the_sandbox_removes_its_trash_and_all_in_it() -> None:
    box = Sandbox.create()
    _leave_a_mess(box, "G-001")
    box.reset_outside()
    box.remove()
    assert not box.root.exists() and not box.trash.directory.exists()


def test_what_cannot_be_moved_is_removed_where_it_is(tmp_path: Path) -> None:
    trash = Trash(tmp_path / "trash")
    elsewhere = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
    if elsewhere is None or os.stat(elsewhere).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs a second file system (/dev/shm) to make the rename fail")
    tree = Path(os.path.join(elsewhere, f"persyk-trash-test-{os.getpid()}"))
    (tree / "a" / "b").mkdir(parents=True)
    try:
        trash.discard(tree)
        assert not tree.exists()
    finally:
        trash.close()
    assert not trash.directory.exists()


def test_generated_case_sources_are_not_in_the_watched_sandbox(sandbox: Sandbox) -> None:
    # Every case snapshots the sandbox twice; the canary cases' sources need no watching there.
    plan = plan_cases(sandbox, RunConfig(only=("H-001", "H-006", "H-110")))
    assert {p.case.id for p in plan.cases} == {"H-001", "H-006", "H-110"}
    assert all(p.case.directory.is_relative_to(sandbox.private) for p in plan.cases)
    assert not [name for name in snapshot(sandbox.root) if name.count("/") > 0]
