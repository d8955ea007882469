"""The Node recipe of docs/implementers/implementers.md, "Taking the lock in other languages",
takes the lock the runner takes: it is refused while util-linux ``flock`` or the runner's own
``fcntl.flock`` holds ``session.lock`` or ``session.jsonl`` (APP-5, APP-26), and while it holds
them the runner's probe (``_conditions.is_locked``) sees both locked. The recipe is run as the
page prints it, so the page cannot drift from what works."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.run._conditions import is_locked

PAGE = (CHECKOUT / "docs" / "implementers" / "implementers.md").read_text(encoding="utf-8")
NODE = shutil.which("node")
FLOCK = shutil.which("flock")
HEADER = b'{"type":"session","version":1,"id":"s","timestamp":"2026-01-01T00:00:00Z"}\n'

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed on this machine"),
    pytest.mark.skipif(FLOCK is None, reason="util-linux flock is not installed (apt-get install "
                       "util-linux)"),
]

# Locks, then prints "locked" or "refused" and waits for its standard input to close.
DRIVER = """import { lockSession } from "./lock-session.mjs";
const held = lockSession(process.argv[2], Number(process.argv[3]));
console.log(held ? "locked" : "refused");
process.stdin.resume();
process.stdin.on("end", () => { if (held) held.release(); });
"""


def node_recipe() -> str:
    found = re.findall(r"```js\n(// lock-session\.mjs:.*?)```", PAGE, re.DOTALL)
    assert len(found) == 1, "the page has no Node recipe (a js block opening // lock-session.mjs)"
    return str(found[0])


@pytest.fixture
def session(tmp_path: Path) -> Path:
    (tmp_path / "lock-session.mjs").write_text(node_recipe(), encoding="utf-8")
    (tmp_path / "driver.mjs").write_text(DRIVER, encoding="utf-8")
    directory = tmp_path / "session"
    directory.mkdir()
    (directory / "session.jsonl").write_bytes(HEADER)
    (directory / "session.lock").touch()
    return directory


@contextmanager
def node_lock(session: Path, seconds: float) -> Iterator[str]:
    assert NODE is not None
    process = subprocess.Popen(
        [NODE, str(session.parent / "driver.mjs"), str(session), str(seconds)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.communicate(timeout=30)


@contextmanager
def held_by_flock_tool(path: Path) -> Iterator[None]:
    assert FLOCK is not None
    holder = subprocess.Popen([FLOCK, "-x", str(path), "sleep", "60"])
    try:
        deadline = time.monotonic() + 10
        while not is_locked(path):
            assert time.monotonic() < deadline, "util-linux flock did not take the lock"
            time.sleep(0.02)
        yield
    finally:
        holder.kill()
        holder.wait()


@contextmanager
def held_by_runner(path: Path) -> Iterator[None]:
    # As the runner holds a case's lock (run/_runner.py): fcntl.flock on its own descriptor.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@pytest.mark.parametrize("name", ["session.lock", "session.jsonl"])
def test_node_recipe_is_refused_while_flock_holds(session: Path, name: str) -> None:
    with held_by_flock_tool(session / name), node_lock(session, 0) as answer:
        assert answer == "refused"


@pytest.mark.parametrize("name", ["session.lock", "session.jsonl"])
def test_node_recipe_waits_its_time_then_is_refused_while_the_runner_holds(
    session: Path, name: str
) -> None:
    with held_by_runner(session / name):
        started = time.monotonic()
        with node_lock(session, 0.2) as answer:
            waited = time.monotonic() - started
        assert answer == "refused"
        assert waited >= 0.2


def test_node_recipe_holds_both_locks_where_the_runner_looks(session: Path) -> None:
    with node_lock(session, 0) as answer:
        assert answer == "locked"
        assert is_locked(session / "session.lock")
        assert is_locked(session / "session.jsonl")
    assert not is_locked(session / "session.lock")


def test_node_recipe_is_refused_while_another_node_recipe_holds(session: Path) -> None:
    with node_lock(session, 0) as first, node_lock(session, 0) as second:
        assert (first, second) == ("locked", "refused")

