"""A long run leaks nothing into the runner: after hundreds of cases, adapter restarts and
orphans re-parented to it (the runner is a child subreaper), the runner's process holds the
same open descriptors (``/proc/self/fd``), no zombie child and no extra thread.

A leak of one descriptor per case (a pipe, an inotify watch, a lock file) or of one zombie per
adapter start would exhaust a whole run of ~945 cases; a few hundred cases show it as clearly.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.casetree import fake, run, write_cases
from persyk_conformance.cli._run import RunConfig, execute

# Every rejection case of the suite whose number starts with 0 or 1 (about 200): the reference
# adapter, started once, over the cases a whole run spends most of its time in.
REFERENCE_SELECTION = ("R-0*", "R-1*")


def _open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _zombie_children() -> list[int]:
    me = str(os.getpid())
    zombies = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as stat:
                state, parent = stat.read().rsplit(")", 1)[1].split()[:2]
        except OSError:  # gone meanwhile
            continue
        if parent == me and state == "Z":
            zombies.append(int(name))
    return zombies


def _settled_threads(expected: int) -> int:
    """The thread count, once the runner's readers and removal threads had a moment to end."""
    deadline = time.monotonic() + 5
    while threading.active_count() > expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return threading.active_count()


@pytest.fixture
def own_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TMPDIR", str(temp))
    yield temp
    assert list(temp.iterdir()) == [], "the runs left a sandbox behind"


@pytest.mark.slow
def test_hundreds_of_cases_leave_no_descriptor_zombie_or_thread_behind(
    own_temp: Path, tmp_path: Path
) -> None:
    tree = write_cases(tmp_path / "cases")
    execute(RunConfig(only=("G-001",), harness=False))  # imports, caches: what a run keeps
    # Zombies an earlier test of this worker left are theirs: only new ones count here.
    descriptors, threads = _open_descriptors(), threading.active_count()
    zombies_before = set(_zombie_children())

    record = execute(RunConfig(only=REFERENCE_SELECTION, harness=False))
    assert len(record.results) >= 150
    assert {str(result.outcome) for result in record.results} == {"pass"}
    for _ in range(10):  # restarts: the adapter crashes in every case and is started again
        run(tree, fake("crash_mid_run"), "G-*", "R-*")
    for _ in range(5):  # orphans: a daemon per case, re-parented to the runner and killed
        run(tree, fake("escaped_grandchild", "--close"), "G-001", timeout=5)

    assert set(_zombie_children()) <= zombies_before
    assert _open_descriptors() == descriptors
    assert _settled_threads(threads) == threads
