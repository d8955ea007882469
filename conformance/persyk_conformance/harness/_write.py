"""Write-path harness checks: procedures no static fixture can express.

* ``H-101`` torn tails (RCV-4..RCV-7, RCV-12..RCV-14): a valid session is cut at *every* byte
  offset within its last three records; each cut is recovered through the adapter, and the
  result must be exactly the records wholly before the cut (or, when only the LF is missing,
  that record too), the preserved fragment must hold the cut-off bytes, the session must be
  valid, and a further append must succeed.
* ``H-102`` concurrent writers (APP-5, APP-10, APP-11): four adapter processes append 200
  records each, one per append, every writer on its own branch with its continuation leaf;
  every acknowledged record must be on disk exactly once, each writer's records in its own
  order, and the file valid.
* ``H-103`` paged read walk (CTX-24): following ``nextCursor`` from the first page yields every
  entry once, in file order, for several page sizes.
* ``H-104`` recovery killed at every step (RCV-18, RCV-19): the adapter is killed (SIGKILL, on
  entry to a file-changing system call) at the first and last call of each kind of a
  ``recover``, then at seeded moments up to ``--crash-moments``; after each, a fresh adapter's
  ``recover`` must finish the job and leave the file a reader accepts. See ``_crash``.
* ``H-150`` capture killed while writing (CAP-1, CAP-5..CAP-7, CAP-25, CAP-26): the adapter is
  killed (SIGKILL, on entry to a file-changing system call) at the first and last call of each
  kind, then at seeded moments up to ``--crash-moments``, of a capture, mono and stereo; after
  each, a fresh adapter's ``recoverRecording`` must leave a WAV that libsndfile reads, whose
  samples are exactly the first frames sent, as many as the header and the answer say, no
  partial frame kept; the session gains one ``recording.interrupted`` and nothing else, and a
  second recovery changes nothing. See ``_capture_kill``.
* ``H-151`` recovery killed while repairing (CAP-6, CAP-27): interrupted-WAV recovery of three
  crashed captures is killed at its file-changing system calls, then rerun: every rerun ends in
  the bytes one uninterrupted recovery leaves, with one ``recording.interrupted``.
* ``H-152`` a live capture against an append and a recovery (CAP-2..CAP-4, CAP-19, CAP-27,
  CAP-29), in three adapter processes: the asset lock is taken before the session lock, appends
  never wait for the capture, recovery and deletion are refused with ``ASSET_LOCKED`` at once,
  and nothing deadlocks. See ``_capture_race``.
* ``H-153`` deletion killed in the middle (CAP-9, CAP-10, CAP-29, CAP-30): at every moment the
  session is whole at its place or gone from it (and from discovery); a retry finishes it; the
  session beside it and its copies are untouched.

The checks are rows of ``_registry.HARNESS_CHECKS``, which runs them. Every step has the run's
deadline (``timeout``); every adapter a check starts is closed (and so every process of it
killed) however the check ends. For H-102 each writer gets its own adapter, so a subprocess
adapter gives four processes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import records as kit
from .._protocol import Result
from ..adapters._interface import Adapter
from ..run._workspace import remove_tree

__all__ = ["concurrent_writers", "cursor_walk", "torn_tails"]

TS = "2026-01-01T00:00:00.000Z"
MS = 1767225600000
WRITERS = 4
RECORDS_PER_WRITER = 200


class _Failed(Exception):
    pass


def _call(adapter: Adapter, op: str, args: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    reply = adapter.run(op, args, timeout)
    if not isinstance(reply, Result):
        raise _Failed(f"{op}: the adapter did not return a result ({type(reply).__name__})")
    return dict(reply.value)


@dataclass(slots=True)
class _Problems:
    items: list[str] = field(default_factory=list)

    def check(self, condition: bool, text: str) -> None:
        if not condition and len(self.items) < 50:
            self.items.append(text)


# --- H-101: torn tails -------------------------------------------------------------------------

HEADER = {"type": "session", "version": 1, "id": "harness-write", "timestamp": TS}
TAIL_RECORDS = [
    kit.user("m0", None, "first"),
    kit.user("m1", "m0", "second"),
    # Multi-byte characters and escapes: cuts land inside UTF-8 sequences and \u escapes.
    kit.user("m2", "m1", "Grüße 東京 🎧 \\ \"quoted\" \u2028"),
    {"type": "custom", "id": "c3", "parentId": "m2", "timestamp": TS, "customType": "x",
     "data": {"list": [1, -2.5e-3, True, None], "nested": {"k": "v"}}},
]


def torn_tails(factory: Callable[[], Adapter], workdir: Path, timeout: float) -> list[str]:
    lines = [kit.line(HEADER), *(kit.line(r) for r in TAIL_RECORDS)]
    data = b"".join(lines)
    ends = []  # file offset after each line's LF
    total = 0
    for line in lines:
        total += len(line)
        ends.append(total)
    first_cut = ends[-4]  # the last three records
    problems = _Problems()
    adapter = factory()
    try:
        adapter.start(timeout)
        for cut in range(first_cut, len(data)):
            _check_cut(adapter, workdir / f"cut-{cut}", data, ends, cut, problems, timeout)
    finally:
        adapter.close()
    return problems.items


def _check_cut(
    adapter: Adapter, case: Path, data: bytes, ends: Sequence[int], cut: int, problems: _Problems,
    timeout: float,
) -> None:
    session = case / "session"
    session.mkdir(parents=True)
    file = session / "session.jsonl"
    file.write_bytes(data[:cut])
    kept = max(end for end in ends if end <= cut)  # bytes of the records wholly before the cut
    fragment = data[kept:cut]
    where = f"cut at byte {cut}"
    result = _call(adapter, "recover", {"session": str(session)}, timeout)
    if not fragment:
        problems.check(result.get("action") == "none",
                       f"{where}: expected action none, got {result}")
        expected = data[:kept]
    elif cut + 1 in ends:  # only the LF is missing: the record is complete
        problems.check(result.get("action") == "newline-added",
                       f"{where}: expected newline-added, got {result}")
        expected = data[: cut + 1]
    else:
        problems.check(result.get("action") == "truncated",
                       f"{where}: expected truncated, got {result}")
        preserved = result.get("preserved")
        if isinstance(preserved, str):
            kept_file = session / preserved
            problems.check(kept_file.is_file() and kept_file.read_bytes() == fragment,
                           f"{where}: the preserved file does not hold the fragment's bytes")
        else:
            problems.check(False, f"{where}: no preserved path in {result}")
        expected = data[:kept]
    problems.check(file.read_bytes() == expected,
                   f"{where}: the file is not exactly the complete prefix")
    valid = _call(adapter, "validate", {"session": str(session)}, timeout)
    problems.check(valid.get("valid") is True, f"{where}: not valid after recovery: {valid}")
    again = _call(adapter, "recover", {"session": str(session)}, timeout)
    problems.check(again.get("action") == "none", f"{where}: recovery not idempotent: {again}")
    extra = kit.user("after", None, "appended after recovery")
    appended = _call(adapter, "append", {"session": str(session), "records": [extra]}, timeout)
    problems.check(appended.get("committed") == ["after"],
                   f"{where}: append after recovery failed: {appended}")
    remove_tree(case)


# --- H-102: concurrent writers -----------------------------------------------------------------


def concurrent_writers(factory: Callable[[], Adapter], workdir: Path, timeout: float
                        ) -> list[str]:
    session = workdir / "concurrent" / "session"
    session.mkdir(parents=True)
    root = kit.user("root", None, "shared root")
    (session / "session.jsonl").write_bytes(kit.line(HEADER) + kit.line(root))
    acknowledged: dict[int, list[str]] = {w: [] for w in range(WRITERS)}
    errors: list[str] = []
    adapters = [factory() for _ in range(WRITERS)]
    try:
        for adapter in adapters:
            adapter.start(timeout)
        errors += _write_concurrently(adapters, session, acknowledged, timeout)
    finally:
        for adapter in adapters:
            adapter.close()
    return errors + _check_concurrent_file(session / "session.jsonl", acknowledged)


def _write_concurrently(
    adapters: Sequence[Adapter], session: Path, acknowledged: dict[int, list[str]], timeout: float
) -> list[str]:
    errors: list[str] = []
    start = threading.Barrier(WRITERS)

    def write(writer: int) -> None:
        adapter = adapters[writer]
        leaf = "root"
        start.wait()
        try:
            for n in range(RECORDS_PER_WRITER):
                entry_id = f"w{writer}-{n}"
                result = _call(adapter, "append", {
                    "session": str(session), "records": [kit.user(entry_id, leaf, f"{writer}/{n}")],
                    "leaf": leaf,
                }, timeout)
                if "error" in result:
                    errors.append(f"writer {writer}, record {n}: {result['error']}")
                    return
                acknowledged[writer].extend(result.get("committed", []))
                leaf = entry_id
        except Exception as exc:  # a crash or timeout of this writer's adapter
            errors.append(f"writer {writer}: {exc}")

    threads = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def _check_concurrent_file(file: Path, acknowledged: Mapping[int, list[str]]) -> list[str]:
    problems = _Problems()
    raw = file.read_bytes()
    problems.check(raw.endswith(b"\n"), "the file does not end with LF")
    records = []
    for number, line in enumerate(raw.split(b"\n")[:-1], start=1):
        try:
            records.append(json.loads(line))
        except ValueError:
            problems.check(False, f"line {number} is not JSON: writes were interleaved")
    ids = [r.get("id") for r in records[1:] if isinstance(r, dict)]
    problems.check(len(ids) == len(set(ids)), "an entry appears more than once")
    on_disk = set(ids)
    for writer, acked in acknowledged.items():
        problems.check(len(acked) == RECORDS_PER_WRITER,
                       f"writer {writer}: {len(acked)} of {RECORDS_PER_WRITER} acknowledged")
        missing = [i for i in acked if i not in on_disk]
        problems.check(not missing, f"writer {writer}: {len(missing)} acknowledged records lost")
        mine = [i for i in ids if isinstance(i, str) and i.startswith(f"w{writer}-")]
        problems.check(mine == acked, f"writer {writer}: records out of order on disk")
    by_id = {r.get("id"): r for r in records[1:] if isinstance(r, dict)}
    for writer in acknowledged:
        parent = "root"
        for n in range(RECORDS_PER_WRITER):
            entry = by_id.get(f"w{writer}-{n}")
            if entry is None:
                break
            problems.check(entry.get("parentId") == parent,
                           f"writer {writer}: record {n} was rebased onto another parent")
            parent = f"w{writer}-{n}"
    return problems.items


# --- H-103: cursor walk ------------------------------------------------------------------------


def cursor_walk(factory: Callable[[], Adapter], workdir: Path, timeout: float) -> list[str]:
    session = workdir / "pages" / "session"
    session.mkdir(parents=True)
    records = [kit.user(f"p{i}", f"p{i - 1}" if i else None, f"page entry {i}") for i in range(23)]
    (session / "session.jsonl").write_bytes(kit.jsonl(HEADER, *records))
    expected = [r["id"] for r in records]
    problems = _Problems()
    adapter = factory()
    try:
        adapter.start(timeout)
        for size in (1, 2, 5, 22, 23, 24, 1000):
            seen: list[str] = []
            cursor: str | None = None
            for _ in range(len(records) + 2):
                args: dict[str, Any] = {"session": str(session), "pageSize": size}
                if cursor is not None:
                    args["cursor"] = cursor
                page = _call(adapter, "read", args, timeout)
                entries = page.get("entries", [])
                problems.check(len(entries) <= size, f"pageSize {size}: a page is too long")
                seen.extend(e.get("id") for e in entries)
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            problems.check(seen == expected, f"pageSize {size}: the pages do not cover the file")
    finally:
        adapter.close()
    return problems.items
