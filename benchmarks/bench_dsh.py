"""dsh-v0 backend (persyk_dsh): load of a large log, append with fsync.

Run: ``.venv/bin/python -m pytest benchmarks/bench_dsh.py --benchmark-only``.

* ``dsh-load``: load a balanced log of PERSYK_BENCH_DSH_MB (default 100) megabytes, shaped like
  the real logs (turns of chunk events, packed rows, tool calls and results). Floor: read the
  same bytes and parse every line with orjson (the least a loader must do). Beside it (its ratio
  to the same floor, no second floor: conftest.py takes one a group), the same parse keeping
  every value until the end, as a loader that returns the events must, freed all at once as the
  reference's caller frees them: what keeping costs is no checking of the loader's. The
  reference also checks every envelope, row and seq, the data of the recovery types, the
  header's place, and looks for an orphaned turn.
* ``dsh-append``: append one event with fsync to a log of PERSYK_BENCH_DSH_EVENTS (default
  10,000) events, in one long-lived store (the seed's write cursor: no reload per append).
  Floor: a bare ``os.write`` + ``os.fsync`` of the same bytes on a descriptor opened once with
  ``O_APPEND``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from persyk_dsh import DshStore, log_name, mode_codec
from persyk_dsh._layout import bucket_name
from persyk_dsh._store import _no_cyclic_gc

LOAD_MB = int(os.environ.get("PERSYK_BENCH_DSH_MB", 100))
APPEND_EVENTS = int(os.environ.get("PERSYK_BENCH_DSH_EVENTS", 10_000))
CWD = "/home/dev/project"
TEXT = "a chunk of streamed assistant text, as the model writes it "

CODEC = mode_codec()  # the codec of PERSYK_SESSION_MODE, as the operations choose it


def _header(session_id: str) -> dict[str, Any]:
    return {"type": "session", "version": 0, "id": session_id, "createdAt": 1767225600000,
            "cwd": CWD, "delegationDepth": 0}


def _turn(turn: int, seq: int) -> list[dict[str, Any]]:
    """One closed turn: 40 chunk events, one packed row of 20, a call and its result."""
    def ev(kind: str, data: Any) -> dict[str, Any]:
        nonlocal seq
        seq += 1
        return {"type": kind, "seq": seq - 1, "time": 1767225600000 + seq, "data": data}

    cid = f"call-{turn}"
    out = [ev("turn/start", {"turn": turn, "trigger": {"kind": "message"}}),
           ev("user/message", {"turn": turn, "text": TEXT * 4}),
           ev("step/start", {"turn": turn, "step": 1})]
    out += [ev("assistant/chunk", {"turn": turn, "step": 1, "chunk": {
        "type": "text-delta", "index": 0, "text": TEXT}}) for _ in range(40)]
    out.append({"type": "text-chunks", "seq0": seq, "time0": 1767225600000 + seq, "data": {
        "turn": turn, "step": 1, "index": 1, "dt": [1] * 19, "texts": [TEXT] * 20}})
    seq += 20
    out += [
        ev("assistant/message", {"turn": turn, "step": 1, "message": {
            "role": "assistant", "content": [{"type": "text", "text": TEXT * 10},
                                             {"type": "tool-call", "id": cid, "name": "bash",
                                              "arguments": "{\"cmd\":\"ls\"}"}]}}),
        ev("tool/call", {"turn": turn, "step": 1, "callId": cid, "name": "bash",
                         "arguments": "{\"cmd\":\"ls\"}"}),
        ev("tool/result", {"turn": turn, "step": 1, "message": {
            "role": "user", "source": {"kind": "tool", "callId": cid},
            "content": [{"type": "tool-result", "toolCallId": cid, "isError": False,
                         "content": [{"type": "text", "text": TEXT * 20}]}]}}),
        ev("step/end", {"turn": turn, "step": 1}),
        ev("turn/end", {"turn": turn, "reason": {"kind": "completed"}}),
    ]
    return out


def _write_log(root: Path, session_id: str, *, megabytes: float = 0, events: int = 0) -> Path:
    """A balanced log of at least ``megabytes`` or ``events`` (not timed)."""
    path = root / bucket_name(CWD) / log_name(session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    seq = 0
    with path.open("wb") as out:
        out.write(orjson.dumps(_header(session_id)) + b"\n")
        for turn in itertools.count(1):
            lines = _turn(turn, seq)
            seq = lines[-1]["seq"] + 1
            out.write(b"".join(orjson.dumps(x) + b"\n" for x in lines))
            if out.tell() >= megabytes * 1e6 and seq >= events:
                break
    return path


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_log(tmp_path_factory.mktemp("dsh-load"), "big", megabytes=LOAD_MB)


def _bare_parse(path: Path) -> int:
    data = path.read_bytes()
    count = 0
    for line in data.split(b"\n"):
        if line:
            orjson.loads(line)
            count += 1
    return count


@pytest.mark.benchmark(group="dsh-load")
def test_load_floor_read_and_parse_every_line(benchmark: Any, big_log: Path) -> None:
    lines = benchmark.pedantic(_bare_parse, args=(big_log,), rounds=3, iterations=1)
    benchmark.extra_info["lines"] = lines
    benchmark.extra_info["megabytes"] = round(big_log.stat().st_size / 1e6, 1)


def _parse_and_keep(path: Path) -> int:
    data = path.read_bytes()
    kept = []
    with _no_cyclic_gc():  # as the reference loads: a collection would walk every value kept
        for line in data.split(b"\n"):
            if line:
                kept.append(orjson.loads(line))
    return len(kept)


@pytest.mark.benchmark(group="dsh-load")
def test_load_parse_and_keep_every_line(benchmark: Any, big_log: Path) -> None:
    lines = benchmark.pedantic(_parse_and_keep, args=(big_log,), rounds=3, iterations=1)
    benchmark.extra_info["lines"] = lines


@pytest.mark.benchmark(group="dsh-load")
def test_load_reference(benchmark: Any, big_log: Path) -> None:
    root = big_log.parents[1]
    before = big_log.stat().st_size

    def load() -> int:
        return len(DshStore(root, CODEC).load("big").events)

    events = benchmark.pedantic(load, rounds=3, iterations=1)
    assert big_log.stat().st_size == before  # a balanced log: load wrote nothing
    benchmark.extra_info["events"] = events


def _event(seq: int) -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": seq, "time": 1767225700000 + seq,
            "data": {"turn": 9, "step": 1, "chunk": {"type": "text-delta", "index": 0,
                                                     "text": TEXT}}}


@pytest.fixture
def floor_fd(tmp_path: Path) -> Iterator[int]:
    path = _write_log(tmp_path, "floor", events=APPEND_EVENTS)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        yield fd
    finally:
        os.close(fd)


def _bare_append(fd: int, data: bytes) -> None:
    os.write(fd, data)
    os.fsync(fd)


@pytest.mark.benchmark(group="dsh-append")
def test_append_floor_bare_write_fsync(benchmark: Any, floor_fd: int) -> None:
    data = orjson.dumps(_event(0)) + b"\n"
    benchmark(_bare_append, floor_fd, data)


@pytest.mark.benchmark(group="dsh-append")
def test_append_reference(benchmark: Any, tmp_path: Path) -> None:
    path = _write_log(tmp_path, "app", events=APPEND_EVENTS)
    store = DshStore(tmp_path, CODEC)
    header = _header("app")
    seqs = itertools.count(len(store.load("app").events))  # the cursor, as a resumed writer

    def one() -> None:
        store.append(header, [_event(next(seqs))])

    benchmark(one)
    benchmark.extra_info["events"] = APPEND_EVENTS
    assert path.stat().st_size > 0
