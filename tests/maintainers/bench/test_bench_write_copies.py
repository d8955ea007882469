"""A write workload's working copy is durable before anything is timed (bench/_writes.py).

Otherwise the first fsync of a timed repetition writes the whole fresh copy back. The floor has
no warm-up, so its first repetition paid it (recover-torn@1000MB in
the bench of 2026-12-03's evening: 0.44 s, then 0.5 ms twice, a spread of 880x, and
in proportion to the session's size at 10 and 100 MB), while each implementation had paid it in
its untimed probe and warm-up: the floor measured work the implementations' figures did not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from persyk_maintainers.bench._data import DataStore
from persyk_maintainers.bench._writes import AppendSingle, RecoverTorn, RetrySmall


@pytest.mark.parametrize("kind", [AppendSingle, RetrySmall, RecoverTorn],
                         ids=lambda kind: kind.name)
def test_the_working_copy_and_its_directory_are_synced_in_setup(
    kind: type[AppendSingle] | type[RetrySmall] | type[RecoverTorn], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workload = kind(0.0001)
    prepared = workload.prepare(DataStore(tmp_path / "data"))
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    chain = workload.setup(prepared, tmp_path / "floor")
    assert str(chain.file) in synced and str(chain.session) in synced
