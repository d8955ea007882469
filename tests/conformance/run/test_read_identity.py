"""CTX-19, reading writes nothing, checked as identity (run/_identity.py): a read that replaces
the session file with the same bytes, or makes and removes a lock file, fails the case by name,
with the inotify watch and with the identities alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fakes.casetree import fake, run, write_cases
from persyk_conformance.run import _identity
from persyk_conformance.run._identity import Watch, identities, identity_changes

CHANGED = "read-only validate changed the workspace: "


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cases(tmp_path_factory.mktemp("cases"))


@pytest.fixture(params=["inotify", "identities-alone"])
def watching(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "inotify" and _identity._LIBC is None:
        pytest.skip("inotify is Linux's: the identities-alone run covers this platform")
    if request.param == "identities-alone":
        monkeypatch.setattr(_identity, "_LIBC", None)
    return str(request.param)


WANTED = {
    ("rewriting_reader", "inotify"): [f"{CHANGED}renamed a file to session/session.jsonl"],
    ("rewriting_reader", "identities-alone"): [
        f"{CHANGED}replaced session/session.jsonl (another file with the same contents, as a "
        "write to a temporary file renamed over it leaves)"],
    ("lock_on_read", "inotify"): [f"{CHANGED}created session/session.lock",
                                  f"{CHANGED}removed session/session.lock"],
    ("lock_on_read", "identities-alone"): [
        f"{CHANGED}created, removed or renamed an entry of session (its modification or change "
        "time moved)"],
}


@pytest.mark.parametrize("fake_name", ["rewriting_reader", "lock_on_read"])
def test_a_read_that_leaves_the_same_bytes_but_wrote_fails(
    tree: Path, fake_name: str, watching: str
) -> None:
    record = run(tree, fake(fake_name), "G-001")
    [result] = record.results
    assert str(result.outcome) == "fail"
    assert result.reason == "the result does not match"
    for wanted in WANTED[(fake_name, watching)]:
        assert wanted in result.mismatches


def test_a_read_that_writes_nothing_passes(tree: Path, watching: str) -> None:
    record = run(tree, fake("accept_everything"), "G-001")
    assert [str(r.outcome) for r in record.results] == ["pass"]


def test_identities_name_a_replaced_file_a_new_mode_and_a_changed_directory(
    tmp_path: Path,
) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "a").write_bytes(b"x")
    (tmp_path / "b").write_bytes(b"y")
    os.chmod(tmp_path / "b", 0o644)  # whatever the umask
    before = identities(tmp_path)
    (tmp_path / "a.tmp").write_bytes(b"x")
    os.replace(tmp_path / "a.tmp", tmp_path / "a")
    os.chmod(tmp_path / "b", 0o600)
    (tmp_path / "d" / "lock").touch()
    os.utime(tmp_path / "d", ns=(1, 1))  # coarse clocks aside: the directory's time moved
    (tmp_path / "d" / "lock").unlink()
    changes = identity_changes(before, identities(tmp_path))
    assert [change.split(" (")[0] for change in changes] == [
        "created, removed or renamed an entry of the workspace directory",  # the rename
        "replaced a", "changed the mode of b", "created, removed or renamed an entry of d"]
    assert "changed the mode of b (644 -> 600)" in changes


def test_the_watch_sees_a_lock_made_and_removed_in_a_subdirectory(tmp_path: Path) -> None:
    (tmp_path / "session").mkdir()
    watch = Watch.start(tmp_path, ["session"])
    if watch is None:
        pytest.skip("inotify is Linux's (the identities alone decide elsewhere)")
    lock = tmp_path / "session" / "session.lock"
    lock.touch()
    lock.unlink()
    (tmp_path / "session" / "kept").write_bytes(b"")
    assert watch.changes() == ["created session/session.lock",
                               "opened session/session.lock for writing",
                               "removed session/session.lock", "created session/kept",
                               "opened session/kept for writing"]


def test_the_watch_is_quiet_about_reads(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"data")
    watch = Watch.start(tmp_path, [])
    if watch is None:
        pytest.skip("inotify is Linux's (the identities alone decide elsewhere)")
    assert (tmp_path / "f").read_bytes() == b"data"
    os.stat(tmp_path / "f")
    assert watch.changes() == []
