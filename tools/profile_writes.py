"""Profile the write workloads of ``persyk-conformance bench``.

Run: ``.venv/bin/python tools/profile_writes.py [--entries N] [--count N] [--cprofile OP]``.

For each operation of the bench's write workloads (append-single, append-batch, retry,
captureWrite) it times the same requests three ways, in one process, interleaved with their
floors, so the figures can be read side by side:

* ``adapter``: through the reference's subprocess adapter (``persyk-session adapter``), with the
  runner's own client (``SubprocessAdapter``): what the bench times;
* ``dispatch``: ``persyk_session.adapter.dispatch`` in this process (no pipes, no JSON lines);
* ``noop``: the adapter's round trip of the cheapest request (validate of a missing path), and of
  the same request padded to the size of the operation's request (its JSON and pipe cost).

``--cprofile OP`` prints the 25 most expensive functions of ``dispatch`` for one operation.
``--steps`` times ``dispatch`` alone in CPU time (``time.process_time``) with ``os.fsync``
stubbed out, as the profile page does (this disk's fsync moved tenfold between runs), and
splits each request into its steps: request arguments and items, resolve, version check, both
locks, live index, planner, write (fsync stubbed), the reply; medians per request.
Nothing here is a test; the figures are indicative on a loaded machine (it prints ``uptime``).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import cProfile
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_maintainers.bench._floors import bare_appends, read_tail_record, write_pcm
from persyk_maintainers.bench._writes import Chain, _user, write_chain_session
from persyk_session.adapter import dispatch

ADAPTER = [sys.executable, "-m", "persyk_session.cli", "adapter"]
RATE = 24000
CHUNK = os.urandom(RATE // 10 * 2)  # 100 ms of 16-bit mono, as the bench writes


def _chain(root: Path, name: str, entries: int) -> Chain:
    """The bench's own working copy of one generated chain of ``entries`` records."""
    source = root / f"source-{entries}"
    if not source.exists():
        source.mkdir()
        write_chain_session(source / "session.jsonl", entries)
    return Chain(root / name, source, f"e{entries - 1}")


def median_of(run: Callable[[], float], times: int) -> float:
    return statistics.median(run() for _ in range(times))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--cprofile", choices=["append", "batch", "retry", "capture", "noop"])
    parser.add_argument("--steps", action="store_true", help="CPU per step, fsync stubbed")
    args = parser.parse_args()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    root = Path(tempfile.mkdtemp(prefix="persyk-profile-"))
    try:
        if args.cprofile:
            return _cprofile(root, args.cprofile, args.entries, args.count)
        if args.steps:
            return _steps(root, args.entries, args.count)
        return _compare(root, args.entries, args.count)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _ops(root: Path, entries: int, via: Callable[[str, dict[str, Any]], dict[str, Any]],
         tag: str) -> dict[str, Callable[[], None]]:
    single = _chain(root, f"{tag}s", entries)
    batch = _chain(root, f"{tag}b", entries)
    retry = _chain(root, f"{tag}r", entries)
    retry_record = _user(f"e{entries - 1}", f"e{entries - 2}")
    capture_dir = root / f"{tag}c"
    capture_dir.mkdir()
    (capture_dir / "session.jsonl").write_bytes(orjson.dumps(
        {"type": "session", "version": 1, "id": "c", "timestamp": "2026-01-01T00:00:00.000Z"})
        + b"\n")
    started = via("captureStart", {"session": str(capture_dir), "recordingId": "r1",
                                   "leaf": None, "rate": RATE, "channels": 1})
    pcm = base64.b64encode(CHUNK).decode()

    def append() -> None:
        leaf = single.parent
        result = via("append", {"session": str(single.session), "records": single.take(1),
                                "leaf": leaf})
        assert "error" not in result, result

    def append_batch() -> None:
        leaf = batch.parent
        result = via("append", {"session": str(batch.session), "records": batch.take(256),
                                "leaf": leaf})
        assert "error" not in result, result

    def retry_op() -> None:
        result = via("append", {"session": str(retry.session), "records": [retry_record],
                                "leaf": retry_record["parentId"]})
        assert result["alreadyPresent"] == [retry_record["id"]], result

    def capture() -> None:
        result = via("captureWrite", {"handle": started["handle"], "pcm": pcm})
        assert "error" not in result, result

    def noop() -> None:
        via("validate", {"session": "/nonexistent/persyk-bench"})

    def noop_padded() -> None:  # a request as large as a captureWrite's
        via("validate", {"session": "/nonexistent/persyk-bench", "pad": pcm})

    return {"noop": noop, "noop-6k": noop_padded, "append": append, "batch": append_batch,
            "retry": retry_op, "capture": capture}


def _floors(root: Path, entries: int) -> dict[str, Callable[[], None]]:
    floor = _chain(root, "floor", entries)
    tail_record = _user(f"e{entries - 1}", f"e{entries - 2}")

    def append() -> None:
        bare_appends(floor.session / "session.jsonl",
                     [b"".join(orjson.dumps(r) + b"\n" for r in floor.take(1))])

    def batch() -> None:
        bare_appends(floor.session / "session.jsonl",
                     [b"".join(orjson.dumps(r) + b"\n" for r in floor.take(256))])

    retry_chain = _chain(root, "floorr", entries)

    def retry() -> None:
        assert read_tail_record(retry_chain.session / "session.jsonl", tail_record)

    counter = iter(range(10**9))

    def capture() -> None:  # one second of frames: captureWrite alone, no start or finish
        target = root / f"pcm{next(counter)}"
        write_pcm(target, [CHUNK] * 10)
        os.unlink(target)

    return {"append": append, "batch": batch, "retry": retry, "capture": capture}


def _timed(fn: Callable[[], None]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def _compare(root: Path, entries: int, count: int) -> int:
    adapter = SubprocessAdapter(ADAPTER, env=dict(os.environ))
    adapter.start(30)

    def via_adapter(op: str, a: dict[str, Any]) -> dict[str, Any]:
        reply = adapter.run(op, a, 30)
        return dict(reply.value)  # type: ignore[union-attr]

    def via_dispatch(op: str, a: dict[str, Any]) -> dict[str, Any]:
        return dict(dispatch(op, a)["result"])

    try:
        through = _ops(root, entries, via_adapter, "a")
        direct = _ops(root, entries, via_dispatch, "d")
        floors = _floors(root, entries)
        for fn in (*through.values(), *direct.values()):
            fn()  # warm up (and bring the live index up)
        rows: dict[str, dict[str, list[float]]] = {}
        for _ in range(count):
            for name in through:
                for kind, table in (("adapter", through), ("dispatch", direct)):
                    per_second = 10 if name == "capture" else 1  # capture: 10 writes a second
                    value = _timed(table[name]) * per_second
                    rows.setdefault(name, {}).setdefault(kind, []).append(value)
                if name in floors:
                    rows[name].setdefault("floor", []).append(_timed(floors[name]))
        print(f"entries={entries} repetitions={count}; medians")
        print(f"{'op':10} {'floor':>10} {'adapter':>10} {'dispatch':>10} {'adapt/floor':>11} "
              f"{'disp/floor':>10}")
        for name, kinds in rows.items():
            print(_row(name, {k: statistics.median(v) for k, v in kinds.items()}))
    finally:
        adapter.close()
    return 0


def _row(name: str, med: dict[str, float]) -> str:
    floor = med.get("floor")

    def ratio(kind: str) -> str:
        return f"{med[kind] / floor:.2f}x" if floor else "-"

    return (f"{name:10} {(floor or 0) * 1e6:9.0f}µ {med['adapter'] * 1e6:9.0f}µ "
            f"{med['dispatch'] * 1e6:9.0f}µ {ratio('adapter'):>11} {ratio('dispatch'):>10}")


def _cprofile(root: Path, op: str, entries: int, count: int) -> int:
    def via_dispatch(name: str, a: dict[str, Any]) -> dict[str, Any]:
        return dict(dispatch(name, a)["result"])

    ops = _ops(root, entries, via_dispatch, "p")
    fn = {"append": ops["append"], "batch": ops["batch"], "retry": ops["retry"],
          "capture": ops["capture"], "noop": ops["noop"]}[op]
    fn()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(count):
        fn()
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    return 0


# Where each step of a request is entered: (label, module, attribute); a context manager's
# step is the time of its entry (the body is the steps inside it).
_STEPS = [
    ("items", "persyk_session.operations._write", "items_from_objects", False),
    ("resolve", "persyk_session.write._prologue", "resolve_session_file_for_mutation", False),
    ("version", "persyk_session.write._prologue", "refuse_other_version", False),
    ("locks", "persyk_session.write._prologue", "session_lock", True),
    ("live", "persyk_session.write._append", "open_live", True),
    ("planner", "persyk_session.write._append", "plan_append", False),
    ("write", "persyk_session.write._append", "_write_plan", False),
    ("frames", "persyk_session.operations._media", "write_frames", False),
    ("pcm", "persyk_session.operations._media", "_pcm_arg", False),
]


def _instrument(spent: dict[str, float]) -> None:
    import importlib

    def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            began = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - began
        return run

    def timed_entry(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @contextlib.contextmanager
        def run(*a: Any, **k: Any) -> Iterator[Any]:
            began = time.process_time()
            with fn(*a, **k) as value:
                spent[label] = spent.get(label, 0.0) + time.process_time() - began
                yield value
        return run

    for label, module_name, name, is_context in _STEPS:
        module = importlib.import_module(module_name)
        wrap = timed_entry if is_context else timed
        setattr(module, name, wrap(label, getattr(module, name)))


def _steps(root: Path, entries: int, count: int) -> int:
    os.fsync = lambda fd: None  # CPU only: this disk's fsync is not the implementation's
    spent: dict[str, float] = {}
    _instrument(spent)

    def via_dispatch(name: str, a: dict[str, Any]) -> dict[str, Any]:
        return dict(dispatch(name, a)["result"])

    ops = _ops(root, entries, via_dispatch, "t")
    print(f"entries={entries} repetitions={count}; CPU per request (median), fsync stubbed")
    for name in ("noop", "append", "batch", "retry", "capture"):
        ops[name]()  # warm up
        totals: list[float] = []
        parts: dict[str, list[float]] = {}
        for _ in range(count):
            spent.clear()
            began = time.process_time()
            ops[name]()
            totals.append(time.process_time() - began)
            for label, value in spent.items():
                parts.setdefault(label, []).append(value)
        steps = ", ".join(f"{label} {statistics.median(v) * 1e6:.0f}"
                          for label, v in parts.items())
        print(f"{name:8} {statistics.median(totals) * 1e6:7.0f} µs  ({steps})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
