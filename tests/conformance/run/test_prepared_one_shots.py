"""A ``fileSizeLimit`` step's one-shot adapter starts while the steps before it run
(``SubprocessAdapter.prepare_file_size_limits``): the step then takes that process,
started with its limit, and a case that ends before the step closes it.

Broken variants these tests catch: a step that starts a one-shot of its own although one was
prepared (two starts for one step); a prepared one-shot left running after its case; one
prepared with another limit than the step's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from _paths import TESTS_DIR
from persyk_conformance.adapters._interface import AdapterCrashed
from persyk_conformance.adapters._subprocess import SubprocessAdapter

FAKES = TESTS_DIR / "fakes"
REFERENCE = [sys.executable, "-m", "persyk_session.cli", "adapter"]


def _adapter() -> SubprocessAdapter:
    return SubprocessAdapter(REFERENCE, env=dict(os.environ))


def test_the_step_takes_the_one_shot_prepared_for_its_limit(tmp_path: Path) -> None:
    adapter = _adapter()
    adapter.prepare_file_size_limits([1 << 20, 200], timeout=30)
    (prepared_big, big), (prepared_small, small) = [(p[0], p[1]) for p in adapter._prepared]
    assert (prepared_big, prepared_small) == (1 << 20, 200)
    # The 200-byte limit first: the step finds its own one-shot, not the first one prepared.
    reply = adapter.run_with_file_size_limit(
        "create", {"session": str(tmp_path / "s"), "id": "s1"}, 30, 200)
    assert small.starts == 1 and not small.alive and big.alive
    assert adapter.starts == 1  # the step started nothing more
    assert reply.value is not None
    adapter.end_case()
    assert not big.alive and adapter.starts == 2 and adapter._prepared == []


def test_a_case_that_ends_before_its_limited_step_leaves_no_one_shot() -> None:
    adapter = _adapter()
    adapter.prepare_file_size_limits([4096], timeout=30)
    ((_, one_shot, starting),) = adapter._prepared
    starting.outcome()  # it has started
    assert one_shot.alive
    adapter.end_case()
    assert not one_shot.alive and adapter._prepared == []


def test_a_prepared_one_shot_that_cannot_start_fails_the_step_that_needs_it(
    tmp_path: Path,
) -> None:
    adapter = SubprocessAdapter([sys.executable, str(FAKES / "crash_at_start.py")],
                                env=dict(os.environ))
    adapter.prepare_file_size_limits([4096], timeout=10)
    with pytest.raises(AdapterCrashed):  # what a start made at the step raises
        adapter.run_with_file_size_limit("validate", {"session": str(tmp_path)}, 10, 4096)
    assert adapter._prepared == []
