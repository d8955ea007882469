"""The runner's snapshot of a tree (run/_workspace.py): every path's state, taken from the
directory listing where it can be (a directory or a link costs no lstat), always the same as
``snapshot_file`` says of that path alone, never following a link, never reading a FIFO, and
bounded in bytes.

Broken variants these tests catch: a snapshot that follows links (``is_dir()`` without
``follow_symlinks=False``) lists the link's target tree; one that opens a FIFO blocks or reads
it; one that skips the byte budget for files hashed from the listing never raises."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from persyk_conformance.run._workspace import (
    SnapshotLimits,
    SnapshotTooLarge,
    snapshot,
    snapshot_file,
)


def _tree(root: Path) -> None:
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.jsonl").write_bytes(b'{"type":"session"}\n')
    (root / "sub" / "empty").write_bytes(b"")
    (root / "sub" / "deeper" / "big").write_bytes(b"x" * (3 << 20))  # more than one read
    os.symlink("sub", root / "to-dir")
    os.symlink("nowhere", root / "dangling")
    os.mkfifo(root / "pipe")


def test_every_path_has_the_state_snapshot_file_gives_it(tmp_path: Path) -> None:
    _tree(tmp_path)
    state = snapshot(tmp_path)
    assert set(state) == {"a.jsonl", "sub", "sub/empty", "sub/deeper", "sub/deeper/big",
                          "to-dir", "dangling", "pipe"}
    for rel, seen in state.items():
        assert seen == snapshot_file(tmp_path / rel), rel


def test_files_are_hashed_links_read_and_fifos_never_opened(tmp_path: Path) -> None:
    _tree(tmp_path)
    state = snapshot(tmp_path)
    assert state["a.jsonl"] == "file:" + hashlib.sha256(b'{"type":"session"}\n').hexdigest()
    assert state["sub/deeper/big"] == "file:" + hashlib.sha256(b"x" * (3 << 20)).hexdigest()
    assert state["sub"] == state["sub/deeper"] == "dir"
    assert state["to-dir"] == "link:sub" and state["dangling"] == "link:nowhere"
    assert state["pipe"].startswith("special:")  # a FIFO no writer holds: opening would block


def test_the_byte_bound_covers_files_hashed_from_the_listing(tmp_path: Path) -> None:
    _tree(tmp_path)
    with pytest.raises(SnapshotTooLarge, match="bytes of files"):
        snapshot(tmp_path, SnapshotLimits(bytes=1 << 20))


def test_the_skipped_subtree_is_not_listed(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert {rel for rel in snapshot(tmp_path, skip="sub")} == {
        "a.jsonl", "to-dir", "dangling", "pipe"}
