"""Small builders shared by the write-path tests (records and sessions on disk)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from persyk_session._append import AppendResult, append_records, create_session, items_from_objects
from persyk_session._context import LeafSelector

HEADER_ID = "00000000-0000-4000-8000-0000000000aa"
T0 = "2026-01-01T00:00:00.000Z"


def ts(second: int = 1) -> str:
    minutes, seconds = divmod(second, 60)
    return f"2026-01-01T00:{minutes:02d}:{seconds:02d}.000Z"


def user(entry_id: str, parent: str | None, text: str = "hello", second: int = 1) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts(second),
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "timestamp": 1767225600000 + 1000 * second,
        },
    }


def custom(entry_id: str, parent: str | None, data: Any = None) -> dict[str, Any]:
    return {
        "type": "custom", "id": entry_id, "parentId": parent, "timestamp": ts(),
        "customType": "test", "data": data,
    }


def chain(prefix: str, count: int, parent: str | None = None) -> list[dict[str, Any]]:
    """``count`` user messages, each the child of the one before."""
    records = []
    for i in range(count):
        entry_id = f"{prefix}{i}"
        records.append(user(entry_id, parent))
        parent = entry_id
    return records


def line(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


def new_session(directory: Path, *records: dict[str, Any]) -> Path:
    """A session made by the reference (create + append); returns its session.jsonl."""
    create_session(directory, id=HEADER_ID, timestamp=T0)
    if records:
        result = append_records(directory, items_from_objects(list(records)))
        assert result.error is None, result
    return directory / "session.jsonl"


def write_session(directory: Path, data: bytes) -> Path:
    """A session with exactly ``data`` as its file (for damaged files)."""
    directory.mkdir(parents=True, exist_ok=True)
    file = directory / "session.jsonl"
    file.write_bytes(data)
    return file


def header_line() -> bytes:
    return line({"type": "session", "version": 1, "id": HEADER_ID, "timestamp": T0})


def append(
    directory: Path, records: list[Any], leaf: LeafSelector | None = None, **kwargs: Any
) -> AppendResult:
    return append_records(directory, items_from_objects(records), leaf=leaf, **kwargs)
