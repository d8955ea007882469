"""Builders of v1 records for the reference's unit tests (parsed records, no files)."""

from __future__ import annotations

from typing import Any

TS = "2026-01-01T00:00:00.000Z"
SESSION_ID = "00000000-0000-4000-8000-000000000002"


def header() -> dict[str, Any]:
    return {"type": "session", "version": 1, "id": SESSION_ID, "timestamp": TS}


def entry(type_: str, id_: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": type_, "id": id_, "parentId": parent, "timestamp": TS, **fields}


def user(id_: str, parent: str | None, text: str = "hello") -> dict[str, Any]:
    message = {
        "role": "user",
        "timestamp": 1767225601000,
        "content": [{"type": "text", "text": text}],
    }
    return entry("message", id_, parent, message=message)


def custom(id_: str, parent: str | None, data: Any = None) -> dict[str, Any]:
    return entry("custom", id_, parent, customType="x.state", data=data)


def label(id_: str, parent: str | None, target: str, text: str | None) -> dict[str, Any]:
    return entry("label", id_, parent, targetId=target, label=text)


def removal(id_: str, parent: str | None, target: str) -> dict[str, Any]:
    return entry("message.removed", id_, parent, targetId=target)


def started(id_: str, parent: str | None, recording: str) -> dict[str, Any]:
    asset = {"status": "available", "path": f"assets/{recording}.wav", "mimeType": "audio/wav"}
    return entry("recording.started", id_, parent, recordingId=recording, asset=asset)


def finished(id_: str, parent: str | None, recording: str) -> dict[str, Any]:
    return entry(
        "recording.finished", id_, parent, recordingId=recording, durationMs=10, outcome="complete"
    )


def interrupted(id_: str, parent: str | None, recording: str) -> dict[str, Any]:
    return entry("recording.interrupted", id_, parent, recordingId=recording, reason="crash")


def info(id_: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return entry("session_info", id_, parent, **fields)
