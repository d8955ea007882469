"""A step under a held lock answers within its lockTimeout and a margin (the protocol's "wait
at most that long", APP-6), and the prepare action ``overwrite`` keeps the file's inode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.run._conditions import (
    LOCK_WAIT_MARGIN_SECONDS,
    late_under_held_lock,
    prepare_workspace,
)

HELD = {"holdLock": "session/session.lock"}


@pytest.mark.parametrize(("conditions", "args", "took"), [
    (HELD, {"lockTimeout": 0.05}, 0.05 + LOCK_WAIT_MARGIN_SECONDS),
    (HELD, {"lockTimeout": 0}, 0.3),
    (HELD, {}, 9.0),
    ({}, {"lockTimeout": 0.05}, 9.0),
], ids=["at-the-margin", "no-wait-answered-at-once", "no-bound-given", "no-lock-held"])
def test_allow_answer_within_bound_or_without_one(conditions: dict[str, Any],
                                                  args: dict[str, Any], took: float) -> None:
    assert late_under_held_lock(conditions, args, took) is None


def test_reject_answer_past_lock_timeout_and_margin() -> None:
    late = late_under_held_lock(HELD, {"lockTimeout": 0.05}, 5.0)
    assert late is not None and "lockTimeout 0.05 s" in late


def test_overwrite_keeps_the_inode_and_takes_the_other_bytes(tmp_path: Path) -> None:
    target, source = tmp_path / "s.jsonl", tmp_path / "spare.jsonl"
    target.write_bytes(b"hello there, and more\n")
    source.write_bytes(b"hello thete\n")
    inode = target.stat().st_ino
    prepare_workspace(tmp_path, [{"overwrite": "s.jsonl", "from": "spare.jsonl"}])
    assert target.read_bytes() == b"hello thete\n"
    assert target.stat().st_ino == inode
