"""Fault injection on the write path: APP-11, APP-19, APP-20, and crash consistency.

Faults are injected by wrapping ``os.write``/``os.fsync``/``os.ftruncate`` (the write path looks
them up at call time), and process crashes by SIGKILL of a writer subprocess.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from _writes import append, chain, custom, new_session, user
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_session import Code
from persyk_session.fast import FAST_ENGINE
from persyk_session.read._paging import read_page
from persyk_session.read._store import open_session
from persyk_session.write._recovery import recover

# What a wrapped call does: (the real function, the call's number from 1, its arguments).
Behaviour = Callable[[Callable[..., Any], int, tuple[Any, ...]], Any]


class Faults:
    """Wraps os functions; each plan entry says what the n-th call does."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.calls: list[str] = []

    def wrap(self, name: str, behaviour: Behaviour) -> None:
        real = getattr(os, name)
        count = {"n": 0}

        def wrapper(*args: Any) -> Any:
            count["n"] += 1
            self.calls.append(name)
            return behaviour(real, count["n"], args)

        self.monkeypatch.setattr(os, name, wrapper)


def _short_then(error: int | None) -> Behaviour:
    """First write: half the bytes. Second: ``error`` (or the rest when None)."""

    def behaviour(real: Callable[..., Any], n: int, args: tuple[Any, ...]) -> Any:
        fd, data = args
        if n == 1:
            return real(fd, bytes(data[: max(1, len(data) // 2)]))
        if error is not None:
            raise OSError(error, os.strerror(error))
        return real(fd, data)

    return behaviour


def _fail_call(number: int, error: int) -> Behaviour:
    def behaviour(real: Callable[..., Any], n: int, args: tuple[Any, ...]) -> Any:
        if n == number:
            raise OSError(error, os.strerror(error))
        return real(*args)

    return behaviour


def test_short_writes_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = new_session(tmp_path / "s", user("m0", None))
    records = chain("n", 3, "m0")
    faults = Faults(monkeypatch)
    faults.wrap("write", _short_then(None))
    result = append(tmp_path / "s", records)
    assert result.committed == ("n0", "n1", "n2")
    assert faults.calls.count("write") == 2
    assert open_session(file).valid


@pytest.mark.parametrize(
    ("name", "behaviour"),
    [
        ("write", _short_then(errno.ENOSPC)),
        ("write", _fail_call(1, errno.ENOSPC)),
        ("write", _fail_call(1, errno.EIO)),
        ("fsync", _fail_call(1, errno.EIO)),
    ],
    ids=["short-write-then-ENOSPC", "ENOSPC", "EIO-on-write", "EIO-on-fsync"],
)
def test_io_failure_leaves_exactly_the_committed_prefix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    behaviour: Behaviour,
) -> None:
    file = new_session(tmp_path / "s", *chain("m", 2))
    before = file.read_bytes()
    faults = Faults(monkeypatch)
    faults.wrap(name, behaviour)
    result = append(tmp_path / "s", [*chain("m", 2), user("m2", "m1")])
    monkeypatch.undo()
    assert result.error is not None and result.error.code is Code.IO_FAILED
    assert result.committed == ()
    assert result.already_present == ("m0", "m1")  # they were in the file before
    assert file.read_bytes() == before  # APP-20: rolled back
    assert open_session(file).valid
    # A retry after the fault commits the rest (APP-22).
    retry = append(tmp_path / "s", [*chain("m", 2), user("m2", "m1")])
    assert retry.committed == ("m2",)


def test_failed_rollback_leaves_a_recoverable_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = new_session(tmp_path / "s", user("m0", None))
    before = file.read_bytes()
    faults = Faults(monkeypatch)
    faults.wrap("write", _short_then(errno.ENOSPC))
    faults.wrap("ftruncate", _fail_call(1, errno.EIO))
    result = append(tmp_path / "s", [custom("c", "m0", data="x" * 100)])
    monkeypatch.undo()
    assert result.error is not None and result.error.code is Code.IO_FAILED
    assert result.committed == ()
    # The torn record is visible: the session is blocked until explicit recovery.
    blocked = append(tmp_path / "s", [user("m1", "m0")])
    assert blocked.error is not None and blocked.error.code is Code.SESSION_BLOCKED
    assert recover(tmp_path / "s").action == "truncated"
    assert file.read_bytes() == before


WRITER = """
import sys
from persyk_session.write._append import append_records, items_from_objects
def user(i, p):
    return {"type": "message", "id": i, "parentId": p, "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "x" * 3000}],
                        "timestamp": 1}}
parent = None
for n in range(100000):
    r = append_records(sys.argv[1], items_from_objects([user(f"k{n}", parent)]))
    assert r.error is None, r
    parent = f"k{n}"
    print(parent, flush=True)
"""


def test_killed_writer_loses_no_acknowledged_record(tmp_path: Path) -> None:
    file = new_session(tmp_path / "s")
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path / "s")], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    acknowledged = [proc.stdout.readline().strip() for _ in range(20)]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    acknowledged += [ident.strip() for ident in proc.stdout if ident.strip()]
    outcome = recover(tmp_path / "s")
    assert outcome.error is None
    index = open_session(file).index
    assert index.valid
    ids = [entry.id for entry in index.entries]
    # Every acknowledged record is there, in order; at most one more (acked but not printed).
    assert ids[: len(acknowledged)] == acknowledged
    assert len(ids) - len(acknowledged) in (0, 1)


# --- property: what is appended reads back equal -----------------------------------------------

_json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
)
_json = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batches=st.lists(st.lists(_json, min_size=1, max_size=5), min_size=1, max_size=4))
def test_appended_batches_read_back_equal(tmp_path_factory: pytest.TempPathFactory,
                                          batches: list[list[Any]]) -> None:
    directory = tmp_path_factory.mktemp("prop") / "s"
    new_session(directory)
    expected: list[dict[str, Any]] = []
    parent: str | None = None
    for b, batch in enumerate(batches):
        records = []
        for i, data in enumerate(batch):
            record = custom(f"c{b}-{i}", parent, data=data)
            records.append(record)
            parent = record["id"]
        result = append(directory, records, engine=FAST_ENGINE)
        assert result.error is None
        expected.extend(records)
    page = read_page(directory, 1000)
    assert list(page.entries) == expected
    # The last line holds the last record's value (its numbers' spelling is the writer's: the
    # engines spell some floats differently, e.g. 1e-05 and 0.00001, all equal values).
    last = (directory / "session.jsonl").read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    assert orjson.loads(last) == expected[-1]
