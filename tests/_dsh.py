"""Event builders for the dsh-v0 tests (one place, so every test writes the same shapes)."""

from __future__ import annotations

import json
from typing import Any


def event(kind: str, seq: int, data: Any, time: int = 1000) -> dict[str, Any]:
    return {"type": kind, "seq": seq, "time": time, "data": data}


def closed_turn(first_seq: int = 0, turn: int = 1) -> list[dict[str, Any]]:
    """turn/start, step/start, a call and its result, step/end, turn/end."""
    s = first_seq
    return [
        event("turn/start", s, {"turn": turn}),
        event("step/start", s + 1, {"turn": turn, "step": 1}),
        event("tool/call", s + 2, {"turn": turn, "step": 1, "callId": f"c{turn}",
                                   "name": "bash", "arguments": "{}"}),
        event("tool/result", s + 3, {"turn": turn, "step": 1, "message": {
            "role": "user", "source": {"kind": "tool", "callId": f"c{turn}"},
            "content": [{"type": "tool-result", "toolCallId": f"c{turn}", "isError": False,
                         "content": [{"type": "text", "text": "ok"}]}]}}),
        event("step/end", s + 4, {"turn": turn, "step": 1}),
        event("turn/end", s + 5, {"turn": turn, "reason": {"kind": "completed"}}),
    ]


def header(session_id: str = "s1", cwd: str | None = "/w", created_at: int = 1) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "session", "version": 0, "id": session_id,
                           "createdAt": created_at}
    if cwd is not None:
        out["cwd"] = cwd
    return out


def log_bytes(head: dict[str, Any], events: list[dict[str, Any]]) -> bytes:
    lines = [head, *events]
    return b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in lines)


def is_balanced(events: list[dict[str, Any]]) -> bool:
    """Every turn/start and step/start closed, every call answered."""
    open_turns = open_steps = 0
    calls: set[str] = set()
    for e in events:
        kind, data = e["type"], e["data"]
        open_turns += {"turn/start": 1, "turn/end": -1}.get(kind, 0)
        open_steps += {"step/start": 1, "step/end": -1}.get(kind, 0)
        if kind == "tool/call":
            calls.add(data["callId"])
        if kind == "tool/result":
            calls.discard(data["message"]["source"]["callId"])
    return open_turns == 0 and open_steps == 0 and not calls
