"""dsh-v0 records after the header: events and packed chunk rows (DSH-7..DSH-12). Pure.

``parse_record`` turns one complete line into the events it stores; ``check_event`` is the
envelope and recovery-type check shared by the reader and the writer (DSH-22).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import accumulate, repeat
from typing import Any

from ._codec import DshCodec
from ._errors import DshCode, DshError
from ._header import MAX_SAFE, is_count, is_safe_int
from ._schemas import recovery_data_ok

__all__ = [
    "NOT_EVENT_TYPES",
    "ROW_TAGS",
    "Unparseable",
    "check_envelope",
    "check_event",
    "check_recovery_data",
    "expand_row",
    "parse_record",
]

# DSH-10: the storage tags of packed rows (never event types); DSH-8: "session" is the header.
ROW_TAGS = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
NOT_EVENT_TYPES = ROW_TAGS | {"session"}
_ROW_MEMBERS = frozenset({"type", "seq0", "time0", "data"})
_TEXT_DATA = frozenset({"turn", "step", "index", "dt", "texts"})
_CALL_DATA = frozenset({"turn", "step", "index", "id", "dt", "args"})
_DELTA_OF_ROW = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_event(
    event: object, codec: DshCodec, *, line: int | None, pointer: str | None = None
) -> None:
    """DSH-8 (envelope) and DSH-12 (the data of the types recovery reads)."""
    check_envelope(event, line=line, pointer=pointer)
    assert isinstance(event, dict)
    check_recovery_data(event, codec, line=line, pointer=pointer)


def check_envelope(event: object, *, line: int | None, pointer: str | None = None) -> None:
    """DSH-8: type, seq, time and data; other members are kept."""
    if not (
        isinstance(event, dict)
        and isinstance(event.get("type"), str)
        and event["type"] not in NOT_EVENT_TYPES
        and event["type"] != ""
        and is_count(event.get("seq"))
        and is_safe_int(event.get("time"))
        and "data" in event
    ):
        raise DshError.of(DshCode.EVENT_INVALID, line=line, pointer=pointer, detail="envelope")


def check_recovery_data(
    event: Mapping[str, Any], codec: DshCodec, *, line: int | None, pointer: str | None = None
) -> None:
    """DSH-12: the data of the types recovery reads."""
    # DSH-9: any other type passes on the envelope alone.
    if not recovery_data_ok(event["type"], event["data"], codec):
        raise DshError.of(
            DshCode.EVENT_INVALID, line=line, pointer=pointer, event_type=event["type"],
            detail="data of a type recovery reads",
        )


def _row_ok(row: Mapping[str, Any]) -> bool:
    """DSH-10: the exact shape of a packed row."""
    if row.keys() != _ROW_MEMBERS or not is_count(row["seq0"]) or not is_safe_int(row["time0"]):
        return False
    data = row["data"]
    if not isinstance(data, dict):
        return False
    if row["type"] == "tool-call-chunks":
        members = data.keys() - {"name"}
        if members != _CALL_DATA or not isinstance(data["id"], str):
            return False
        if "name" in data and not isinstance(data["name"], str):
            return False
        payload = data["args"]
    else:
        if data.keys() != _TEXT_DATA:
            return False
        payload = data["texts"]
    gaps = data["dt"]
    # map() over builtins rather than generators: a row holds tens of pieces, and every load
    # of a log checks every row.
    return (
        all(_is_number(data[k]) for k in ("turn", "step", "index"))
        and isinstance(payload, list)
        and len(payload) > 0
        and all(map(isinstance, payload, repeat(str)))
        and isinstance(gaps, list)
        and len(gaps) == len(payload) - 1
        # is_safe_int of every gap: exactly int (no bool), within the safe range
        and set(map(type, gaps)) <= {int}
        and (not gaps or (min(gaps) >= -MAX_SAFE and max(gaps) <= MAX_SAFE))
    )


def expand_row(row: Mapping[str, Any], *, line: int) -> list[dict[str, Any]]:
    """DSH-10: the assistant/chunk events a packed row stands for, in order."""
    if not _row_ok(row):
        raise DshError.of(DshCode.ROW_INVALID, line=line)
    data = row["data"]
    seq0 = row["seq0"]
    # The k-th piece's time: time0 plus the first k gaps.
    times = accumulate(data["dt"], initial=row["time0"])
    if row["type"] != "tool-call-chunks":
        delta = _DELTA_OF_ROW[row["type"]]
        turn, step, index = data["turn"], data["step"], data["index"]
        texts = data["texts"]
        # The seqs from a range rather than enumerate and an addition: 15% of the expansion.
        return [
            {"type": "assistant/chunk", "seq": seq, "time": time, "data": {
                "turn": turn, "step": step,
                "chunk": {"type": delta, "index": index, "text": piece}}}
            for seq, time, piece in zip(range(seq0, seq0 + len(texts)), times, texts,
                                        strict=True)
        ]
    events: list[dict[str, Any]] = []
    for k, (time, piece) in enumerate(zip(times, data["args"], strict=True)):
        chunk: dict[str, Any] = {"type": "tool-call-delta", "index": data["index"],
                                 "id": data["id"]}
        if "name" in data:
            chunk["name"] = data["name"]
        chunk["argumentsDelta"] = piece
        events.append({
            "type": "assistant/chunk",
            "seq": seq0 + k,
            "time": time,
            "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk},
        })
    return events


class Unparseable(Exception):
    """DSH-7: the line is not a JSON text (the caller decides whether it is a torn write)."""


def parse_record(line: bytes, codec: DshCodec, *, line_number: int) -> list[dict[str, Any]]:
    """One complete record (without its LF) as the events it stores.

    Raises :class:`Unparseable` when the bytes are not JSON (DSH-13 lets a last line be torn),
    and :class:`DshError` for every other fault.
    """
    try:
        value = codec.loads(line)
    except codec.decode_error:
        raise Unparseable from None
    if not isinstance(value, dict):
        raise DshError.of(DshCode.LINE_UNPARSEABLE, line=line_number, detail="not an object")
    kind = value.get("type")
    # DSH-8: a "type" that is no string (an array or an object is unhashable) is no row tag; the
    # envelope check refuses it as EVENT_INVALID.
    if isinstance(kind, str) and kind in ROW_TAGS:
        return expand_row(value, line=line_number)
    check_event(value, codec, line=line_number)
    return [value]
