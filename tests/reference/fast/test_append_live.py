"""The per-process live state of the write path (``_live``): appends stay incremental in a
long-lived process and still obey APP-7 (validate the committed file under the lock), APP-11
(acknowledge after fsync) and APP-12/APP-13 (retries).

"Full validations" are counted by wrapping ``_live.index_stream``, the whole-file path; the
incremental path reads only the bytes after the validated length.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from _writes import append, chain, custom, line, new_session, user
from persyk_session import Code
from persyk_session.read import _live
from persyk_session.read._index import IndexBuilder
from persyk_session.read._live import LiveSession, Refresh, forget_live_sessions, plan_refresh
from persyk_session.read._store import open_session

# Another process appending through the reference (it takes the session lock).
APPENDER = """
import sys, orjson
from persyk_session.write._append import append_records, items_from_objects
result = append_records(sys.argv[1], items_from_objects(orjson.loads(sys.argv[2])))
assert result.error is None, result
"""

# Another process appending raw bytes (a non-conforming writer, or one killed mid-write).
RAW_WRITER = """
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, sys.argv[2].encode())
os.close(fd)
"""


def _other_process(script: str, *args: str) -> None:
    subprocess.run([sys.executable, "-c", script, *args], check=True, timeout=60)


@pytest.fixture
def full_validations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts whole-file validations by the write path; starts from an empty cache."""
    forget_live_sessions()
    calls: list[int] = []
    real = _live.index_stream

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_live, "index_stream", counting)
    yield calls
    forget_live_sessions()


def _identity(file: Path) -> tuple[int, int]:
    info = os.stat(file)
    return (info.st_dev, info.st_ino)


# --- the decision table (pure) -----------------------------------------------------------------


def _state(size: int = 100, ctime: int = 5) -> LiveSession:
    return LiveSession(-1, (1, 2), size, ctime, b"}\n", IndexBuilder())


@pytest.mark.parametrize(
    ("cached", "identity", "size", "ctime", "expected"),
    [
        (None, (1, 2), 100, 5, Refresh.FULL),
        (_state(), (1, 3), 100, 5, Refresh.FULL),
        (_state(), (1, 2), 99, 5, Refresh.FULL),
        (_state(), (1, 2), 100, 6, Refresh.FULL),
        (_state(), (1, 2), 100, 5, Refresh.REUSE),
        (_state(), (1, 2), 180, 9, Refresh.EXTEND),
    ],
    ids=["no-state", "other-inode", "shrunk", "rewritten-in-place", "unchanged", "grown"],
)
def test_refresh_decision(
    cached: LiveSession | None, identity: tuple[int, int], size: int, ctime: int, expected: Refresh
) -> None:
    assert plan_refresh(cached, identity, size, ctime) is expected


# --- reuse and retries ------------------------------------------------------------------------


def test_consecutive_appends_validate_the_file_once(
    tmp_path: Path, full_validations: list[int]
) -> None:
    new_session(tmp_path / "s")  # header only: create never validates
    for i in range(5):
        parent = f"m{i - 1}" if i else None
        assert append(tmp_path / "s", [user(f"m{i}", parent)]).committed == (f"m{i}",)
    assert len(full_validations) == 1
    assert open_session(tmp_path / "s").valid


def test_retry_is_detected_from_the_cached_index(
    tmp_path: Path, full_validations: list[int]
) -> None:
    new_session(tmp_path / "s", *chain("m", 3))
    append(tmp_path / "s", [user("m3", "m2")])
    full_validations.clear()
    retry = append(tmp_path / "s", [user("m1", "m0"), user("m3", "m2")])
    assert retry.already_present == ("m1", "m3") and retry.committed == ()
    conflict = append(tmp_path / "s", [user("m2", "m1", content="other")])
    assert conflict.error is not None and conflict.error.code is Code.APPEND_ID_CONFLICT
    assert full_validations == []


def test_refused_batch_keeps_the_state_of_what_was_written(
    tmp_path: Path, full_validations: list[int]
) -> None:
    new_session(tmp_path / "s", user("m0", None))
    result = append(tmp_path / "s", [user("m1", "m0"), user("m2", "missing")])
    assert result.committed == ("m1",) and result.error is not None
    full_validations.clear()
    # The cached builder knows m1 (written) and not m2 (refused).
    assert append(tmp_path / "s", [user("m2", "m1")]).committed == ("m2",)
    assert append(tmp_path / "s", [user("m1", "m0")]).already_present == ("m1",)
    assert full_validations == []


# --- another process appends between two of ours ---------------------------------------------


def test_records_of_another_process_are_validated_and_known_for_retries(
    tmp_path: Path, full_validations: list[int]
) -> None:
    file = new_session(tmp_path / "s", user("m0", None))
    append(tmp_path / "s", [user("m1", "m0")])
    _other_process(APPENDER, str(tmp_path / "s"), orjson.dumps(chain("k", 3, "m1")).decode())
    full_validations.clear()
    # Our next record continues theirs: their entries are in the graph.
    assert append(tmp_path / "s", [user("m2", "k2")]).committed == ("m2",)
    retry = append(tmp_path / "s", [*chain("k", 3, "m1"), user("m2", "k2")])
    assert retry.already_present == ("k0", "k1", "k2", "m2")
    conflict = append(tmp_path / "s", [user("k1", "k0", content="not theirs")])
    assert conflict.error is not None and conflict.error.code is Code.APPEND_ID_CONFLICT
    assert full_validations == []  # only their new bytes were read
    index = open_session(file).index
    assert index.valid and [e.id for e in index.entries] == ["m0", "m1", "k0", "k1", "k2", "m2"]


@pytest.mark.parametrize(
    ("tail", "code"),
    [
        (line(user("k1", "nowhere")), Code.PARENT_NOT_FOUND),
        (line(user("m0", None)), Code.ID_DUPLICATE),
        (line({"type": "message", "id": "k1"}), Code.ENVELOPE_INVALID),
        (b'{"type": "custom", "id"\n', Code.RECORD_JSON_SYNTAX),
        (line(custom("k1", "k0"))[:-1], Code.RECORD_UNTERMINATED),
    ],
    ids=["graph", "duplicate-id", "schema", "syntax", "torn-tail"],
)
def test_bad_record_of_another_process_blocks_the_session(
    tmp_path: Path, full_validations: list[int], tail: bytes, code: Code
) -> None:
    file = new_session(tmp_path / "s", user("m0", None))
    append(tmp_path / "s", [user("m1", "m0")])  # lines 1-3; another's k0 is 4, the tail 5
    _other_process(RAW_WRITER, str(file), line(custom("k0", "m1")).decode() + tail.decode())
    before = file.read_bytes()
    blocked = append(tmp_path / "s", [user("m2", "m1")])
    assert blocked.error is not None and blocked.error.code is Code.SESSION_BLOCKED
    assert blocked.error.line == 5
    assert file.read_bytes() == before
    # The same fault is what a full validation finds.
    assert open_session(file).index.diagnostics[0].code is code
    assert open_session(file).index.diagnostics[0].line == 5


def test_blocked_session_is_validated_in_full_after_repair(
    tmp_path: Path, full_validations: list[int]
) -> None:
    file = new_session(tmp_path / "s", user("m0", None))
    append(tmp_path / "s", [user("m1", "m0")])
    good = file.read_bytes()
    _other_process(RAW_WRITER, str(file), line(user("k0", "nowhere")).decode())
    assert append(tmp_path / "s", [user("m2", "m1")]).error is not None
    file.write_bytes(good)  # repaired by hand
    full_validations.clear()
    assert append(tmp_path / "s", [user("m2", "m1")]).committed == ("m2",)
    assert len(full_validations) == 1


# --- external rewrites ------------------------------------------------------------------------


def _rewrite_in_place(file: Path, edits: list[tuple[bytes, bytes]]) -> None:
    """Overwrite the whole file in place with same-length edits (same inode, same size), as a
    tool that rewrites the file would."""
    data = file.read_bytes()
    for old, new in edits:
        assert len(old) == len(new) and data.count(old) == 1
        data = data.replace(old, new)
    fd = os.open(file, os.O_WRONLY)
    try:
        os.pwrite(fd, data, 0)
    finally:
        os.close(fd)


def test_same_size_rewrite_in_place_is_validated_in_full(
    tmp_path: Path, full_validations: list[int]
) -> None:
    file = new_session(tmp_path / "s", *chain("m", 3))
    append(tmp_path / "s", [user("m3", "m2", content="later")])
    size = file.stat().st_size
    # Line 3 (m1) now names a parent that does not exist; the last record's text changed too.
    _rewrite_in_place(file, [(b'"parentId":"m0"', b'"parentId":"x0"'), (b"later", b"LATER")])
    assert file.stat().st_size == size
    full_validations.clear()
    blocked = append(tmp_path / "s", [user("m4", "m3")])
    assert blocked.error is not None and blocked.error.code is Code.SESSION_BLOCKED
    assert blocked.error.line == 3
    assert len(full_validations) == 1


def test_rewrite_of_the_last_record_is_caught_by_the_probe_when_ctime_looks_unchanged(
    tmp_path: Path, full_validations: list[int]
) -> None:
    file = new_session(tmp_path / "s", *chain("m", 2))
    append(tmp_path / "s", [user("m2", "m1", content="later")])
    # Rewrite m2's text; then make the cached ctime match, as a coarse clock would.
    _rewrite_in_place(file, [(b"later", b"LATER")])
    identity = _identity(file)
    cached = _live._states[identity]
    _live._states[identity] = dataclasses.replace(cached, ctime_ns=os.stat(file).st_ctime_ns)
    full_validations.clear()
    # The file is valid, but m2 is no longer what the cache read: a retry of the old m2 conflicts.
    conflict = append(tmp_path / "s", [user("m2", "m1", content="later")])
    assert conflict.error is not None and conflict.error.code is Code.APPEND_ID_CONFLICT
    assert len(full_validations) == 1


def test_replaced_file_is_validated_in_full(tmp_path: Path, full_validations: list[int]) -> None:
    file = new_session(tmp_path / "s", *chain("m", 2))
    append(tmp_path / "s", [user("m2", "m1")])
    replacement = file.with_name("replacement")
    replacement.write_bytes(file.read_bytes() + line(user("r0", "m2")))
    os.replace(replacement, file)  # a new inode under the same name
    full_validations.clear()
    assert append(tmp_path / "s", [user("m3", "r0")]).committed == ("m3",)
    assert len(full_validations) == 1


def test_truncated_file_is_validated_in_full(tmp_path: Path, full_validations: list[int]) -> None:
    file = new_session(tmp_path / "s", *chain("m", 2))
    before = file.read_bytes()
    append(tmp_path / "s", [user("m2", "m1")])
    os.truncate(file, len(before))
    full_validations.clear()
    assert append(tmp_path / "s", [user("m2", "m1")]).committed == ("m2",)
    assert len(full_validations) == 1


# --- failures drop the state ------------------------------------------------------------------


@pytest.mark.parametrize("call", ["write", "fsync"])
def test_failed_write_drops_the_cached_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_validations: list[int], call: str
) -> None:
    file = new_session(tmp_path / "s", user("m0", None))
    append(tmp_path / "s", [user("m1", "m0")])
    identity = _identity(file)
    assert identity in _live._states

    def fail(*args: Any) -> Any:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with monkeypatch.context() as patch:
        patch.setattr(os, call, fail)
        failed = append(tmp_path / "s", [user("m2", "m1")])
    assert failed.error is not None and failed.error.code is Code.IO_FAILED
    assert identity not in _live._states
    full_validations.clear()
    # m2 was never acknowledged and is not in the file: a retry commits it, after a full check.
    assert append(tmp_path / "s", [user("m2", "m1")]).committed == ("m2",)
    assert len(full_validations) == 1


def test_exception_while_planning_drops_the_cached_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_validations: list[int]
) -> None:
    file = new_session(tmp_path / "s", user("m0", None))
    append(tmp_path / "s", [user("m1", "m0")])

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("planner bug")

    with monkeypatch.context() as patch:
        patch.setattr("persyk_session.write._append.plan_append", explode)
        with pytest.raises(RuntimeError):
            append(tmp_path / "s", [user("m2", "m1")])
    assert _identity(file) not in _live._states


def test_cached_sessions_are_bounded(tmp_path: Path, full_validations: list[int]) -> None:
    for i in range(_live.MAX_LIVE_SESSIONS + 3):
        new_session(tmp_path / f"s{i}", user("m0", None))
    assert len(_live._states) == _live.MAX_LIVE_SESSIONS
    # The oldest were dropped (and their descriptors closed): they are validated in full again.
    full_validations.clear()
    assert append(tmp_path / "s0", [user("m1", "m0")]).committed == ("m1",)
    assert len(full_validations) == 1
