"""The dsh-v0 error catalog (docs/spec-dsh-v0.md, "Error catalog") and its one error type.

Separate from the v1 catalog on purpose: the two profiles share no rule and no code. A
diagnostic's message is fixed text of ours; it never repeats log data. The one exception the
spec asks for is ``eventType`` (DSH-21), which names the type of a refused event, bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["MAX_EVENT_TYPE_CHARS", "DshCode", "DshDiagnostic", "DshError"]

# An event type longer than this is not repeated in a diagnostic (it would be data, not a tag).
MAX_EVENT_TYPE_CHARS = 100


class DshCode(StrEnum):
    USAGE = "DSH_USAGE"
    NOT_FOUND = "DSH_NOT_FOUND"
    AMBIGUOUS = "DSH_AMBIGUOUS"
    ID_INVALID = "DSH_ID_INVALID"
    HEADER_INVALID = "DSH_HEADER_INVALID"
    VERSION_UNSUPPORTED = "DSH_VERSION_UNSUPPORTED"
    HEADER_MISMATCH = "DSH_HEADER_MISMATCH"
    LINE_UNPARSEABLE = "DSH_LINE_UNPARSEABLE"
    EVENT_INVALID = "DSH_EVENT_INVALID"
    ROW_INVALID = "DSH_ROW_INVALID"
    SEQ_GAP = "DSH_SEQ_GAP"
    SEQ_MISMATCH = "DSH_SEQ_MISMATCH"
    EVENT_NOT_JSON = "DSH_EVENT_NOT_JSON"
    EXISTS = "DSH_EXISTS"
    IO = "DSH_IO"


# The phase of each code, as the spec's catalog states it (the fixture check uses it).
PHASE_OF: dict[DshCode, str] = {
    DshCode.USAGE: "usage",
    DshCode.NOT_FOUND: "read",
    DshCode.AMBIGUOUS: "read",
    DshCode.ID_INVALID: "layout",
    DshCode.HEADER_INVALID: "read",
    DshCode.VERSION_UNSUPPORTED: "read",
    DshCode.HEADER_MISMATCH: "read",
    DshCode.LINE_UNPARSEABLE: "read",
    DshCode.EVENT_INVALID: "read",
    DshCode.ROW_INVALID: "read",
    DshCode.SEQ_GAP: "read",
    DshCode.SEQ_MISMATCH: "append",
    DshCode.EVENT_NOT_JSON: "append",
    DshCode.EXISTS: "append",
    DshCode.IO: "usage",
}

_MESSAGES: dict[DshCode, str] = {
    DshCode.USAGE: "the request is malformed",
    DshCode.NOT_FOUND: "no log of this session id",
    DshCode.AMBIGUOUS: "logs of this session id are in more than one bucket",
    DshCode.ID_INVALID: "the session id cannot name a log file",
    DshCode.HEADER_INVALID: "the first line is not a session header",
    DshCode.VERSION_UNSUPPORTED: "the log is of a format version this reader does not read",
    DshCode.HEADER_MISMATCH: "the header does not identify the place of its log",
    DshCode.LINE_UNPARSEABLE: "a line before the last is not a JSON object",
    DshCode.EVENT_INVALID: "an event is malformed",
    DshCode.ROW_INVALID: "a packed chunk row is malformed",
    DshCode.SEQ_GAP: "the event sequence numbers are not contiguous from 0",
    DshCode.SEQ_MISMATCH: "the batch does not continue the stored log",
    DshCode.EVENT_NOT_JSON: "an event has no JSON form",
    DshCode.EXISTS: "a log of this session is already published",
    DshCode.IO: "the file system refused an operation",
}


@dataclass(frozen=True, slots=True)
class DshDiagnostic:
    code: DshCode
    line: int | None = None
    pointer: str | None = None
    event_type: str | None = None
    detail: str | None = None  # fixed text of ours that narrows the message; never input

    @property
    def message(self) -> str:
        text = _MESSAGES[self.code]
        if self.detail:
            text += f": {self.detail}"
        if self.line is not None:
            text += f" (at line {self.line})"
        return text

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": str(self.code), "message": self.message}
        if self.line is not None:
            out["line"] = self.line
        if self.pointer is not None:
            out["pointer"] = self.pointer
        if self.event_type is not None and len(self.event_type) <= MAX_EVENT_TYPE_CHARS:
            out["eventType"] = self.event_type
        return out


class DshError(Exception):
    """A dsh-v0 contract failure or a refused request, carrying its diagnostic."""

    def __init__(self, diagnostic: DshDiagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic

    @classmethod
    def of(cls, code: DshCode, **kwargs: Any) -> DshError:
        return cls(DshDiagnostic(code, **kwargs))
