"""The I/O edge of a replay: append the planned evidence records to a session, one at a time.

Each record is appended and fsynced on its own (APP-8), chained onto the previous one from the
caller's explicit leaf, as a capture appends each observation when it happens. The planner
(``_replay``) decides what to append; this module gives each record its envelope and writes it.
A failed append halts the replay (CAP-12): the result says so, and nothing after it is written.
"""

from __future__ import annotations

import os
import stat
import uuid
from dataclasses import dataclass
from typing import Any

from ._append import AppendResult, append_records, items_from_objects
from ._context import LeafSelector
from ._errors import Code, ContractError, UsageError
from ._replay import Halt, parse_script, plan_replay, timestamp_at

__all__ = ["MAX_SCRIPT_BYTES", "ReplayResult", "read_script_file", "replay"]

# A script is read whole; past this size it is refused rather than read into memory.
MAX_SCRIPT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a replay appended, and where and why it halted."""

    appended: tuple[str, ...]
    evidence: int  # realtime_event records appended
    connections: int  # api_connection records appended
    not_replayed: int  # audio and local lines, which this replay does not act on
    halted: Halt | None

    def to_json(self) -> dict[str, Any]:
        return {
            "appended": list(self.appended),
            "evidence": self.evidence,
            "connections": self.connections,
            "notReplayed": self.not_replayed,
            "halted": None if self.halted is None else {
                "code": self.halted.code, "line": self.halted.line},
        }


def read_script_file(name: str) -> bytes:
    """The bytes of a script file: a regular file, opened without blocking (a FIFO with no
    writer never hangs the replay), at most MAX_SCRIPT_BYTES; otherwise PATH_NOT_FOUND."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        raise UsageError(Code.PATH_NOT_FOUND, "the script file cannot be opened") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCRIPT_BYTES:
            raise UsageError(Code.PATH_NOT_FOUND, "the script is not a regular file of at most "
                                                  f"{MAX_SCRIPT_BYTES} bytes")
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the script file cannot be read") from None
    finally:
        os.close(fd)


def replay(
    session: str,
    script: bytes,
    leaf: LeafSelector,
    start: str,
    *,
    timeout: float | None = None,
) -> ReplayResult:
    """Play ``script`` into ``session`` from the explicit ``leaf`` (an id or null); the virtual
    clock starts at ``start`` (RT-36: the session header's timestamp, by default)."""
    if leaf.kind == "default":
        raise UsageError(Code.USAGE, "replay needs an explicit leaf (an entry id, or null)")
    lines = parse_script(script)
    parent = leaf.id if leaf.kind == "id" else None
    selector = leaf
    appended: list[str] = []
    counts = {"api_connection": 0, "realtime_event": 0}
    halted: Halt | None = None
    for planned in plan_replay(lines, start):
        if isinstance(planned, Halt):
            halted = planned
            break
        entry_id = str(uuid.uuid4())
        record = {"type": planned.record["type"], "id": entry_id, "parentId": parent,
                  "timestamp": timestamp_at(start, planned.at), **planned.record}
        try:
            result = append_records(session, items_from_objects([record]), leaf=selector,
                                    timeout=timeout)
        except ContractError as error:  # the lock could not be had
            result = AppendResult(error=error.diagnostics[0])
        if result.error is not None:
            halted = Halt(result.error.code, planned.line)  # CAP-12: capture halts visibly
            break
        appended.append(entry_id)
        counts[str(record["type"])] += 1
        parent, selector = entry_id, LeafSelector.explicit(entry_id)
    return ReplayResult(
        appended=tuple(appended),
        evidence=counts["realtime_event"],
        connections=counts["api_connection"],
        not_replayed=sum(1 for line in lines if line.kind in ("audio", "local")),
        halted=halted,
    )
