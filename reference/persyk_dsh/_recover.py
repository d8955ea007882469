"""Close an orphaned turn (DSH-14, DSH-15). Pure: the logical log in, the closers out."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["INTERRUPTED_TEXT", "closers", "orphaned_turn_start"]

# DSH-15: the exact text of every closing result (the seed's words, which are the contract).
INTERRUPTED_TEXT = "Tool call interrupted by a crash; no result was recorded."

Event = Mapping[str, Any]


def orphaned_turn_start(events: Sequence[Event]) -> int | None:
    """The index of the last ``turn/start`` when no ``turn/end`` follows it."""
    for index in range(len(events) - 1, -1, -1):
        kind = events[index]["type"]
        if kind == "turn/end":
            return None
        if kind == "turn/start":
            return index
    return None


def _calls_of(event: Event) -> Iterator[str]:
    """DSH-15: the call ids an event asks for."""
    data = event["data"]
    if event["type"] == "tool/call":
        yield data["callId"]
    elif event["type"] == "assistant/message":
        message = data.get("message", data)  # the older flattened shape has content in data
        for part in message.get("content", ()):
            if part.get("type") == "tool-call":
                yield part["id"]


def _answers_of(event: Event) -> Iterator[str]:
    """DSH-15: the call ids a tool/result answers (current and flattened shapes)."""
    data = event["data"]
    message = data.get("message", data)
    source = message.get("source")
    if isinstance(source, dict) and isinstance(source.get("callId"), str):
        yield source["callId"]
    if isinstance(message.get("callId"), str):
        yield message["callId"]
    for part in message.get("content", ()) if isinstance(message.get("content"), list) else ():
        if isinstance(part, dict) and isinstance(part.get("toolCallId"), str):
            yield part["toolCallId"]


def _interrupted_result(call_id: str, turn: Any, step: Any, seq: int, time: int) -> dict[str, Any]:
    text = {"type": "text", "text": INTERRUPTED_TEXT}
    part = {"type": "tool-result", "toolCallId": call_id, "isError": True, "content": [text]}
    message = {"role": "user", "source": {"kind": "tool", "callId": call_id}, "content": [part]}
    return {
        "type": "tool/result", "seq": seq, "time": time,
        "data": {"turn": turn, "step": step, "message": message},
        "surfaceOp": "append",
    }


def closers(events: Sequence[Event], time: int) -> list[dict[str, Any]]:
    """The events that close the orphaned turn, with ``seq`` continuing the log (DSH-14)."""
    start = orphaned_turn_start(events)
    if start is None:
        return []
    turn = events[start]["data"]["turn"]
    calls: dict[str, tuple[Any, Any]] = {}
    answered: set[str] = set()
    open_step: tuple[Any, Any] | None = None
    for event in events[start:]:
        kind, data = event["type"], event["data"]
        if kind == "step/start":
            open_step = (data["turn"], data["step"])
        elif kind == "step/end":
            open_step = None
        elif kind == "tool/result":
            answered.update(_answers_of(event))
        for call_id in _calls_of(event):
            calls.setdefault(call_id, (data["turn"], data["step"]))
    out: list[dict[str, Any]] = []
    seq = len(events)
    for call_id, (call_turn, call_step) in calls.items():
        if call_id not in answered:
            out.append(_interrupted_result(call_id, call_turn, call_step, seq + len(out), time))
    if open_step is not None:
        out.append({"type": "step/end", "seq": seq + len(out), "time": time,
                    "data": {"turn": open_step[0], "step": open_step[1]}})
    out.append({"type": "turn/end", "seq": seq + len(out), "time": time,
                "data": {"turn": turn, "reason": {"kind": "interrupted"}}})
    return out
