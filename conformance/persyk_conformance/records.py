"""The record kit: builders of Persyk v1 records and session bytes, shared by the fixture case
sources, the runner's built-in harness checks, the unit tests and the benchmarks.

One kit, so that a record spelled for a case, a test or a benchmark is spelled the same way
everywhere, and a contributor learns one vocabulary (docs/implementers/fixtures.md, "The record
kit"). The builders only spell records: none of them validates or runs an implementation. Timestamps
are deterministic: ``t`` counts seconds after 2026-01-01T00:00:00.000Z.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "BASE_MS",
    "HEADER",
    "HEADER_ID",
    "JSON",
    "api_connection",
    "assistant",
    "assistant_msg",
    "chain",
    "custom",
    "custom_message",
    "entry",
    "header",
    "jsonl",
    "label",
    "line",
    "media_asset",
    "message",
    "model_change",
    "ms",
    "raw",
    "realtime_event",
    "rec_finished",
    "rec_interrupted",
    "rec_started",
    "record",
    "removed",
    "session_info",
    "text",
    "tool_result_msg",
    "ts",
    "user",
    "user_msg",
    "wav_asset",
    "with_fields",
]

JSON = Any

# ---------------------------------------------------------------------------------------------
# Bytes of a session file


def record(value: JSON) -> bytes:
    """One record as a conforming writer emits it: compact JSON, raw UTF-8, no LF (REC-22)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def jsonl(*lines: JSON | bytes) -> bytes:
    """Join records into session bytes. A dict becomes a record plus LF; bytes are used as is.

    Raw bytes carry their own LF (or deliberately none), so that faults stay byte-exact.
    """
    out = bytearray()
    for item in lines:
        if isinstance(item, bytes):
            out += item
        else:
            out += record(item) + b"\n"
    return bytes(out)


def line(value: JSON) -> bytes:
    """One record followed by its LF."""
    return record(value) + b"\n"


def raw(text: str) -> bytes:
    """A hand-written line (UTF-8) followed by LF."""
    return text.encode("utf-8") + b"\n"


# ---------------------------------------------------------------------------------------------
# Records

HEADER_ID: Final = "00000000-0000-4000-8000-0000000000c1"
BASE_MS: Final = 1767225600000  # 2026-01-01T00:00:00.000Z
_EPOCH: Final = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def ts(second: int = 0) -> str:
    """The envelope timestamp ``second`` seconds after 2026-01-01T00:00:00.000Z."""
    moment = _EPOCH + datetime.timedelta(seconds=second)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def ms(second: int = 0) -> int:
    """The epoch milliseconds of ``ts(second)``."""
    return BASE_MS + 1000 * second


def header(id: str = HEADER_ID, timestamp: str = "2026-01-01T00:00:00.000Z") -> dict[str, JSON]:
    return {"type": "session", "version": 1, "id": id, "timestamp": timestamp}


HEADER: Final = header()


def entry(type_: str, id: str, parent: str | None, t: int = 1, **fields: JSON) -> dict[str, JSON]:
    """An entry: the envelope in its usual order, then the type's own members."""
    return {"type": type_, "id": id, "parentId": parent, "timestamp": ts(t), **fields}


def text(value: str, **extra: JSON) -> dict[str, JSON]:
    return {"type": "text", "text": value, **extra}


def user_msg(content: JSON, t: int = 1) -> dict[str, JSON]:
    if isinstance(content, str):
        content = [text(content)]
    return {"role": "user", "content": content, "timestamp": ms(t)}


def user(id: str, parent: str | None, content: JSON = "hello", t: int = 1) -> dict[str, JSON]:
    return entry("message", id, parent, t, message=user_msg(content, t))


def assistant_msg(content: JSON, t: int = 2, **optional: JSON) -> dict[str, JSON]:
    if isinstance(content, str):
        content = [text(content)]
    return {"role": "assistant", "content": content, "timestamp": ms(t), **optional}


def assistant(
    id: str, parent: str | None, content: JSON = "hi", t: int = 2, **optional: JSON
) -> dict[str, JSON]:
    return entry("message", id, parent, t, message=assistant_msg(content, t, **optional))


def tool_result_msg(
    call_id: str = "call-1",
    name: str = "lookup",
    content: JSON = "42",
    t: int = 3,
    is_error: bool = False,
    **optional: JSON,
) -> dict[str, JSON]:
    if isinstance(content, str):
        content = [text(content)]
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "isError": is_error,
        "content": content,
        "timestamp": ms(t),
        **optional,
    }


def message(id: str, parent: str | None, msg: JSON, t: int = 1) -> dict[str, JSON]:
    return entry("message", id, parent, t, message=msg)


def custom(
    id: str, parent: str | None, custom_type: str = "x.state", data: JSON = None, t: int = 1
) -> dict[str, JSON]:
    return entry("custom", id, parent, t, customType=custom_type, data=data)


def custom_message(
    id: str,
    parent: str | None,
    custom_type: str = "note",
    content: JSON = "remember this",
    display: bool = True,
    t: int = 1,
    **optional: JSON,
) -> dict[str, JSON]:
    if isinstance(content, str):
        content = [text(content)]
    return entry(
        "custom_message", id, parent, t, customType=custom_type, content=content, display=display,
        **optional,
    )


def session_info(id: str, parent: str | None, t: int = 1, **fields: JSON) -> dict[str, JSON]:
    return entry("session_info", id, parent, t, **fields)


def label(
    id: str, parent: str | None, target: str, value: str | None, t: int = 1
) -> dict[str, JSON]:
    return entry("label", id, parent, t, targetId=target, label=value)


def removed(id: str, parent: str | None, target: str, t: int = 1) -> dict[str, JSON]:
    return entry("message.removed", id, parent, t, targetId=target)


def model_change(id: str, parent: str | None, t: int = 1, **fields: JSON) -> dict[str, JSON]:
    members: dict[str, JSON] = {"provider": "openai", "modelId": "gpt-realtime"}
    members.update(fields)
    return entry("model_change", id, parent, t, **members)


def api_connection(id: str, parent: str | None, t: int = 1, **fields: JSON) -> dict[str, JSON]:
    members: dict[str, JSON] = {
        "connectionId": "conn-1",
        "provider": "openai",
        "endpoint": "wss://api.openai.com/v1/realtime",
        "requestedModel": "gpt-realtime",
        "api": "openai-realtime",
        "originId": None,
    }
    members.update(fields)
    return entry("api_connection", id, parent, t, **members)


def wav_asset(recording_id: str) -> dict[str, JSON]:
    return {"status": "available", "path": f"assets/{recording_id}.wav", "mimeType": "audio/wav"}


def media_asset(start: int = 44, end: int = 4844) -> dict[str, JSON]:
    return {
        "status": "available",
        "path": "assets/rec-1.wav",
        "mimeType": "audio/wav",
        "byteRange": {"start": start, "end": end},
        "encoding": "pcm_s16le",
    }


def realtime_event(id: str, parent: str | None, t: int = 1, **fields: JSON) -> dict[str, JSON]:
    members: dict[str, JSON] = {
        "connectionId": "conn-1",
        "direction": "incoming",
        "observation": "received",
        "observedAt": ts(t),
        "sequence": 0,
        "payload": {"type": "session.created"},
    }
    members.update(fields)
    return entry("realtime_event", id, parent, t, **members)


def rec_started(
    id: str, parent: str | None, recording: str = "rec-1", t: int = 1
) -> dict[str, JSON]:
    return entry(
        "recording.started", id, parent, t, recordingId=recording, asset=wav_asset(recording)
    )


def rec_finished(
    id: str, parent: str | None, recording: str = "rec-1", t: int = 9, **fields: JSON
) -> dict[str, JSON]:
    members: dict[str, JSON] = {"recordingId": recording, "durationMs": 8000, "outcome": "complete"}
    members.update(fields)
    return entry("recording.finished", id, parent, t, **members)


def rec_interrupted(
    id: str, parent: str | None, recording: str = "rec-1", t: int = 9, **fields: JSON
) -> dict[str, JSON]:
    members: dict[str, JSON] = {"recordingId": recording, "reason": "app quit"}
    members.update(fields)
    return entry("recording.interrupted", id, parent, t, **members)


def with_fields(
    record: Mapping[str, JSON], drop: Iterable[str] = (), **changes: JSON
) -> dict[str, JSON]:
    """A copy of ``record`` without the ``drop`` members and with ``changes`` applied in place."""
    out = {k: v for k, v in record.items() if k not in set(drop)}
    out.update(changes)
    return out


def chain(prefix: str, count: int, parent: str | None = None, t: int = 1) -> list[dict[str, JSON]]:
    """``count`` user messages ``<prefix>0``, ``<prefix>1`` ..., each the child of the one before
    (the first is the child of ``parent``)."""
    records = []
    for i in range(count):
        entry_id = f"{prefix}{i}"
        records.append(user(entry_id, parent, t=t))
        parent = entry_id
    return records
