"""The dsh-v0 harness checks: what no fixture can show (docs/spec-dsh-v0.md).

* ``DH-101`` (DSH-13, DSH-14, DSH-16): a log cut at every byte offset of its last three records
  (a crash mid-write) loads into a balanced log that keeps every complete event, cuts exactly
  the bytes after the last complete line, closes the orphaned turn with the right closers, keeps
  the kept bytes byte for byte, and loads again without a change.
* ``DH-102`` (DSH-18): two adapter processes race the first append of one id, over several
  rounds: exactly one publishes (``materialized``), the other is refused (``DSH_EXISTS``, or
  ``DSH_SEQ_MISMATCH`` when it saw the winner's log first), and the log holds the winner's
  events, never a mix and never the loser's.

Expectations are computed here from the log the check writes (which events are complete, which
calls are open), never by asking the reference.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._protocol import Result
from ..adapters._interface import Adapter
from ..cases._match import match
from ..run._workspace import remove_tree
from ._crash import CrashCheckUnsupported

__all__ = ["race", "torn_at_every_byte"]

INTERRUPTED = "Tool call interrupted by a crash; no result was recorded."
BUCKET = "cwd-d1bb8ca35467"  # sha256("/w")[:12], DSH-2
HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 1767225600000, "cwd": "/w"}
RACE_ROUNDS = 8


def _line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def _events() -> list[dict[str, Any]]:
    """An open turn whose last three records a crash may tear: a call answered, one not."""
    def ev(kind: str, seq: int, data: Any) -> dict[str, Any]:
        return {"type": kind, "seq": seq, "time": 1767225600100 + seq, "data": data}

    def call(seq: int, cid: str) -> dict[str, Any]:
        return ev("tool/call", seq, {"turn": 1, "step": 1, "callId": cid, "name": "bash",
                                     "arguments": "{\"cmd\":\"ls -l\"}"})

    return [
        ev("turn/start", 0, {"turn": 1}),
        ev("step/start", 1, {"turn": 1, "step": 1}),
        call(2, "c1"),
        ev("tool/result", 3, {"turn": 1, "step": 1, "message": {
            "role": "user", "source": {"kind": "tool", "callId": "c1"},
            "content": [{"type": "tool-result", "toolCallId": "c1", "isError": False,
                         "content": [{"type": "text", "text": "total 0"}]}]}}),
        call(4, "c2"),
        ev("step/end", 5, {"turn": 1, "step": 1}),
    ]


def _expected_closers(kept: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """DSH-14/15 for this check's log: open calls, then an open step, then the turn."""
    calls = [e["data"]["callId"] for e in kept if e["type"] == "tool/call"]
    answered = {e["data"]["message"]["source"]["callId"] for e in kept
                if e["type"] == "tool/result"}
    steps = [e["type"] for e in kept if e["type"] in ("step/start", "step/end")]
    out: list[dict[str, Any]] = []
    if not any(e["type"] == "turn/start" for e in kept):
        return out
    seq = len(kept)
    for cid in (c for c in calls if c not in answered):
        out.append({"type": "tool/result", "seq": seq + len(out), "surfaceOp": "append",
                    "data": {"$exact": {"turn": 1, "step": 1, "message": {
                        "role": "user", "source": {"kind": "tool", "callId": cid},
                        "content": [{"type": "tool-result", "toolCallId": cid, "isError": True,
                                     "content": [{"type": "text", "text": INTERRUPTED}]}]}}}})
    if steps and steps[-1] == "step/start":
        out.append({"type": "step/end", "seq": seq + len(out),
                    "data": {"$exact": {"turn": 1, "step": 1}}})
    out.append({"type": "turn/end", "seq": seq + len(out),
                "data": {"$exact": {"turn": 1, "reason": {"kind": "interrupted"}}}})
    return out


def _result(adapter: Adapter, op: str, args: Mapping[str, Any], timeout: float
            ) -> Mapping[str, Any]:
    reply = adapter.run(op, args, timeout)
    if not isinstance(reply, Result):
        raise _Broken(f"{op} did not return a result ({type(reply).__name__})")
    return reply.value


class _Broken(Exception):
    """The check cannot go on (a reply that is no result)."""


NOT_SPOKEN = "the adapter does not speak the profile dsh-v0"


def torn_at_every_byte(fresh_adapter: Callable[[], Adapter], workdir: Path, timeout: float
                       ) -> list[str]:
    """DH-101, with one adapter of its own."""
    adapter = fresh_adapter()
    try:
        adapter.start(timeout)
        if "dsh-v0" not in adapter.hello.profiles:
            raise CrashCheckUnsupported(NOT_SPOKEN)
        return _torn_logs(adapter, workdir, timeout)
    finally:
        adapter.close()


def _torn_logs(adapter: Adapter, workdir: Path, timeout: float) -> list[str]:
    events = _events()
    lines = [_line(HEADER)] + [_line(e) for e in events]
    data = b"".join(lines)
    ends = [sum(len(x) for x in lines[: i + 1]) for i in range(len(lines))]
    start = ends[-4]  # the last three records may be torn anywhere
    problems: list[str] = []
    for cut in range(start, len(data) + 1):
        root = workdir / "torn" / str(cut)
        log = root / BUCKET / "s1.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(data[:cut])
        complete = sum(1 for end in ends[1:] if end <= cut)
        keep = ends[complete]
        kept = events[:complete]
        want = {"header": {"$exact": HEADER},
                "events": [{"$exact": e} for e in kept] + _expected_closers(kept),
                "recovery": {"truncatedBytes": cut - keep}}
        args = {"root": str(root), "id": "s1"}
        loaded = _result(adapter, "load", args, timeout)
        problems += [f"cut at byte {cut}: {p}" for p in match(want, dict(loaded))]
        if log.read_bytes()[:keep] != data[:keep]:
            problems.append(f"cut at byte {cut}: the kept bytes changed")
        after = log.read_bytes()
        again = _result(adapter, "load", args, timeout)
        problems += [f"cut at byte {cut}, second load: {p}" for p in match(
            {"recovery": {"truncatedBytes": 0, "closers": 0}}, dict(again))]
        if log.read_bytes() != after:
            problems.append(f"cut at byte {cut}: a second load changed the log")
        remove_tree(root)
        if len(problems) > 20:
            problems.append("(stopped after 20 problems)")
            break
    return problems


def race(fresh_adapter: Callable[[], Adapter], workdir: Path, timeout: float) -> list[str]:
    problems: list[str] = []
    racers = [fresh_adapter(), fresh_adapter()]
    try:
        for racer in racers:
            racer.start(timeout)
            if "dsh-v0" not in racer.hello.profiles:
                raise CrashCheckUnsupported(NOT_SPOKEN)
        for round_ in range(RACE_ROUNDS):
            root = workdir / "race" / str(round_)
            batches = [[{"type": "note", "seq": 0, "time": 1, "data": {"writer": w}},
                        {"type": "note", "seq": 1, "time": 2, "data": {"writer": w}}]
                       for w in range(2)]
            replies = _race_round(racers, root, batches, timeout)
            problems += _judge_race(round_, replies, batches, root)
    finally:
        for racer in racers:
            racer.close()
    return problems


def _race_round(racers: Sequence[Adapter], root: Path,
                batches: Sequence[Sequence[Any]], timeout: float) -> list[Any]:
    """Both writers send their first append at once (a barrier releases them together)."""
    replies: list[Any] = [None] * len(racers)
    go = threading.Barrier(len(racers))

    def append(w: int) -> None:
        go.wait()
        try:
            replies[w] = _result(racers[w], "append", {
                "root": str(root), "header": HEADER, "events": list(batches[w])}, timeout)
        except Exception as exc:  # reported by the judge as that writer's problem
            replies[w] = exc

    threads = [threading.Thread(target=append, args=(w,)) for w in range(len(racers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout * 2)
    return replies


def _judge_race(round_: int, replies: list[Any], batches: list[list[dict[str, Any]]],
                root: Path) -> list[str]:
    where = f"round {round_}"
    if any(isinstance(r, Exception) or r is None for r in replies):
        return [f"{where}: a writer gave no result: {replies}"]
    won = [w for w in range(2) if replies[w].get("materialized") is True]
    lost = [w for w in range(2) if "error" in replies[w]]
    if len(won) != 1 or len(lost) != 1:
        return [f"{where}: expected one winner and one refusal, got {replies}"]
    code = replies[lost[0]]["error"].get("code")
    problems = []
    if code not in ("DSH_EXISTS", "DSH_SEQ_MISMATCH"):
        problems.append(f"{where}: the loser was refused with {code}, not DSH_EXISTS")
    logs = list(root.glob("*/*.jsonl"))
    if len(logs) != 1:
        return [*problems, f"{where}: expected one log, found {len(logs)}"]
    stored = [json.loads(x) for x in logs[0].read_bytes().splitlines()[1:]]
    if stored != batches[won[0]]:
        problems.append(f"{where}: the log does not hold exactly the winner's events")
    return problems
