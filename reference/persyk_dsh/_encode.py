"""Check and encode an append batch (DSH-20, DSH-21, DSH-22). Pure."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ._codec import DshCodec
from ._errors import DshCode, DshError
from ._records import check_envelope, check_recovery_data

__all__ = ["encode_batch", "encode_header", "encode_record"]


def encode_record(value: Any, *, pointer: str, event_type: str | None) -> bytes:
    """DSH-21: strict JSON (no NaN/Infinity, no lone surrogate, only JSON types), one line."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        raise DshError.of(
            DshCode.EVENT_NOT_JSON, pointer=pointer, event_type=event_type
        ) from None


def encode_header(header: dict[str, Any]) -> bytes:
    return encode_record(header, pointer="/header", event_type=None)


def encode_batch(events: Sequence[Any], next_seq: int, codec: DshCodec) -> bytes:
    """The batch as JSON Lines, one event a line, after every check; nothing on any fault."""
    lines: list[bytes] = []
    for index, event in enumerate(events):
        pointer = f"/{index}"
        check_envelope(event, line=None, pointer=pointer)  # DSH-22
        lines.append(encode_record(event, pointer=pointer, event_type=event["type"]))
        check_recovery_data(event, codec, line=None, pointer=pointer)
        # DSH-20: the batch continues the stored log, one seq after another.
        if event["seq"] != next_seq + index:
            raise DshError.of(DshCode.SEQ_MISMATCH, pointer=pointer + "/seq")
    return b"".join(lines)
