"""Sessions on disk for the write-path tests; records come from the shared record kit
(persyk_conformance.records), re-exported here for the tests that import them from this module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from persyk_conformance.records import chain, custom, header, line, user
from persyk_session.read._context import LeafSelector
from persyk_session.write._append import (
    AppendResult,
    append_records,
    create_session,
    items_from_objects,
)

HEADER_ID = "00000000-0000-4000-8000-0000000000aa"
T0 = "2026-01-01T00:00:00.000Z"

__all__ = [
    "HEADER_ID",
    "T0",
    "append",
    "chain",
    "custom",
    "header_line",
    "line",
    "new_session",
    "user",
    "write_session",
]


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
    return line(header(HEADER_ID, T0))


def append(
    directory: Path, records: list[Any], leaf: LeafSelector | None = None, **kwargs: Any
) -> AppendResult:
    return append_records(directory, items_from_objects(records), leaf=leaf, **kwargs)
