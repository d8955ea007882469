"""APP-26 for capture's ``recording.*`` appends: one ``session.jsonl`` reachable from two session
directories (a hard link) is mutated by one writer at a time, whichever name each writer uses.

Each test runs a real mutation through one name and holds it inside its write (where a slow disk
would keep it) while the other name's mutation tries its own. The directories differ, so only
the flock on the session file itself can make the second wait (capture took the
session lock without it). The conformance cases S-957..S-959 check the same with the runner
holding the file's lock; these tests need no runner and use a real second writer.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fakes.casetree import fake
from persyk_conformance.cli import RunConfig, execute
from persyk_session import (
    Code,
    ContractError,
    LeafSelector,
    _fsutil,
    append_records,
    create_session,
)
from persyk_session.media._capture import (
    finish_capture,
    recover_recording,
    release_capture,
    start_capture,
)
from persyk_session.write._append import items_from_objects

T0 = "2026-01-01T00:00:00.000Z"
WAIT = 0.3


def message(id: str, parent: str | None, second: int) -> dict[str, Any]:
    return {
        "type": "message", "id": id, "parentId": parent,
        "timestamp": f"2026-01-01T00:00:{second:02d}.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": id}],
                    "timestamp": 1767225600000 + second * 1000},
    }


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two session directories whose session.jsonl is one inode."""
    first, second = tmp_path / "first", tmp_path / "second"
    create_session(first, id="h1", timestamp=T0)
    assert append_records(first, items_from_objects([message("m0", None, 1)])).error is None
    second.mkdir()
    os.link(first / "session.jsonl", second / "session.jsonl")
    return first, second


@contextmanager
def held_in_its_write(
    monkeypatch: pytest.MonkeyPatch, mutation: Callable[[], object]
) -> Iterator[list[object]]:
    """Run ``mutation`` in a thread that stops inside its session-file write until the body ends;
    yields the list that receives its return value (or exception)."""
    inside, release = threading.Event(), threading.Event()
    real_append_all = _fsutil.append_all
    outcome: list[object] = []

    def append_all(fd: int, data: bytes) -> None:
        if threading.current_thread() is worker:
            inside.set()
            release.wait(10)
        real_append_all(fd, data)

    def run() -> None:
        try:
            outcome.append(mutation())
        except Exception as error:  # handed to the test, which asserts on it
            outcome.append(error)

    monkeypatch.setattr(_fsutil, "append_all", append_all)
    worker = threading.Thread(target=run)
    worker.start()
    try:
        assert inside.wait(10), "the held mutation never reached its write"
        yield outcome
    finally:
        release.set()
        worker.join(10)


def lock_unavailable(run: Callable[[], object]) -> bool:
    try:
        run()
    except ContractError as error:
        return error.code is Code.LOCK_UNAVAILABLE
    return False


def entry_ids(session: Path) -> list[str]:
    lines = (session / "session.jsonl").read_bytes().splitlines()
    return [json.loads(line)["id"] for line in lines]


def test_capture_start_waits_for_an_append_through_the_other_name(
    twins: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = twins
    append = items_from_objects([message("n0", "m0", 2)])
    with held_in_its_write(monkeypatch, lambda: append_records(second, append)) as appended:
        before = (first / "session.jsonl").read_bytes()
        assert lock_unavailable(lambda: start_capture(
            str(first), "r1", leaf=LeafSelector.explicit("m0"), rate=16000, id="st",
            timeout=WAIT))
        assert (first / "session.jsonl").read_bytes() == before
        assert not (first / "assets" / "r1.wav").exists()  # discarded with the refusal
    assert [getattr(result, "error", result) for result in appended] == [None]
    capture, _ = start_capture(str(first), "r1", leaf=LeafSelector.explicit("m0"), rate=16000,
                               id="st")
    finish_capture(capture, id="fin")
    assert entry_ids(first) == ["h1", "m0", "n0", "st", "fin"]


def test_capture_finish_waits_for_an_append_through_the_other_name(
    twins: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = twins
    capture, _ = start_capture(str(first), "r1", leaf=LeafSelector.explicit("m0"), rate=16000,
                               id="st")
    append = items_from_objects([message("n0", "m0", 2)])
    with held_in_its_write(monkeypatch, lambda: append_records(second, append)):
        assert lock_unavailable(lambda: finish_capture(capture, id="fin", timeout=WAIT))
    finish_capture(capture, id="fin")  # the handle survives a refused finish (CAP-22)
    assert entry_ids(first) == ["h1", "m0", "st", "n0", "fin"]


def test_recording_recovery_waits_for_an_append_through_the_other_name(
    twins: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = twins
    capture, _ = start_capture(str(first), "r1", leaf=LeafSelector.explicit("m0"), rate=16000,
                               id="st")
    release_capture(capture)  # as a killed capture leaves it
    append = items_from_objects([message("n0", "m0", 2)])
    with held_in_its_write(monkeypatch, lambda: append_records(second, append)):
        assert lock_unavailable(lambda: recover_recording(str(first), "r1", id="int",
                                                          timeout=WAIT))
    assert recover_recording(str(first), "r1", id="int")["interrupted"] == "int"
    assert entry_ids(first) == ["h1", "m0", "st", "n0", "int"]


def test_an_append_waits_for_a_capture_start_through_the_other_name(
    twins: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = twins

    def start() -> object:
        return start_capture(str(first), "r1", leaf=LeafSelector.explicit("m0"), rate=16000,
                             id="st")

    with held_in_its_write(monkeypatch, start) as started:
        append = items_from_objects([message("n0", "m0", 2)])
        assert lock_unavailable(lambda: append_records(second, append, timeout=WAIT))
    [(capture, _)] = started  # type: ignore[misc]
    finish_capture(capture, id="fin")
    assert entry_ids(first) == ["h1", "m0", "st", "fin"]


CASES = ("S-957", "S-958", "S-959")


def test_the_cases_pass_on_the_reference() -> None:
    record = execute(RunConfig(only=CASES, harness=False))
    assert {r.id: str(r.outcome) for r in record.results} == dict.fromkeys(CASES, "pass")


def test_the_cases_catch_a_capture_without_the_file_lock() -> None:
    record = execute(RunConfig(impl=fake("capture_without_file_lock"), only=CASES,
                               harness=False))
    assert {r.id: str(r.outcome) for r in record.results} == dict.fromkeys(CASES, "fail")
    assert all(any("LOCK_UNAVAILABLE" in m for m in r.mismatches) for r in record.results)
