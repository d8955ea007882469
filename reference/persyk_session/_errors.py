"""The one error family of the reference implementation, and the closed catalog of codes.

Every code here is listed in docs/spec.md (section "Error catalog") with its phase and meaning;
fixtures/build.py extracts that catalog into the contract package
(``persyk_contract.error_catalog``), the one place that says in which phase each code bites.
A test proves ``Code`` names exactly the catalog's codes, and the fixture sanity check proves
every code is exercised by a case.

Two kinds of failure, split by who is at fault (as h11 splits Local/Remote protocol errors):

* :class:`ContractError` -- the *input* breaks the v1 contract (a bad record, a missing parent,
  a batch too large ...). It carries one or more :class:`Diagnostic` values.
* :class:`UsageError` -- the *caller* misused the API or CLI (a missing path, a bad flag).

A diagnostic never contains message bodies, string values from the input, or secrets: only
codes, positions, JSON pointers and fixed texts written here.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Code",
    "ContractError",
    "Diagnostic",
    "PersykError",
    "UsageError",
    "io_failures",
]


class Code(enum.StrEnum):
    """DIAG-2: the closed error catalog of docs/spec.md; no other code is ever reported."""

    # --- records (phase: read) -------------------------------------------------------------
    RECORD_INVALID_UTF8 = "RECORD_INVALID_UTF8"
    RECORD_BYTE_ORDER_MARK = "RECORD_BYTE_ORDER_MARK"
    RECORD_JSON_SYNTAX = "RECORD_JSON_SYNTAX"
    RECORD_NOT_OBJECT = "RECORD_NOT_OBJECT"
    RECORD_DUPLICATE_KEY = "RECORD_DUPLICATE_KEY"
    RECORD_LONE_SURROGATE = "RECORD_LONE_SURROGATE"
    RECORD_NUMBER_OUT_OF_RANGE = "RECORD_NUMBER_OUT_OF_RANGE"
    RECORD_TOO_LARGE = "RECORD_TOO_LARGE"
    RECORD_TOO_DEEP = "RECORD_TOO_DEEP"
    RECORD_UNTERMINATED = "RECORD_UNTERMINATED"
    # --- header (phase: read) --------------------------------------------------------------
    SESSION_EMPTY = "SESSION_EMPTY"
    HEADER_NOT_FIRST = "HEADER_NOT_FIRST"
    HEADER_INVALID = "HEADER_INVALID"
    HEADER_VERSION_UNSUPPORTED = "HEADER_VERSION_UNSUPPORTED"
    HEADER_REPEATED = "HEADER_REPEATED"
    # --- entries (phase: read) -------------------------------------------------------------
    ENTRY_TYPE_UNKNOWN = "ENTRY_TYPE_UNKNOWN"
    ENVELOPE_FIELD_UNKNOWN = "ENVELOPE_FIELD_UNKNOWN"
    ENVELOPE_INVALID = "ENVELOPE_INVALID"
    ENTRY_FIELDS_INVALID = "ENTRY_FIELDS_INVALID"
    MESSAGE_INVALID = "MESSAGE_INVALID"
    BLOCK_INVALID = "BLOCK_INVALID"
    ASSET_REF_INVALID = "ASSET_REF_INVALID"
    # --- graph (phase: read) ---------------------------------------------------------------
    ID_DUPLICATE = "ID_DUPLICATE"
    PARENT_NOT_FOUND = "PARENT_NOT_FOUND"
    LABEL_TARGET_NOT_FOUND = "LABEL_TARGET_NOT_FOUND"
    REMOVAL_TARGET_NOT_FOUND = "REMOVAL_TARGET_NOT_FOUND"
    REMOVAL_TARGET_NOT_ANCESTOR = "REMOVAL_TARGET_NOT_ANCESTOR"
    REMOVAL_TARGET_WRONG_TYPE = "REMOVAL_TARGET_WRONG_TYPE"
    RECORDING_NOT_STARTED = "RECORDING_NOT_STARTED"
    RECORDING_DUPLICATE = "RECORDING_DUPLICATE"
    RECORDING_ALREADY_ENDED = "RECORDING_ALREADY_ENDED"
    # --- context (phase: read) -------------------------------------------------------------
    LEAF_NOT_FOUND = "LEAF_NOT_FOUND"
    # --- append (phase: append) ------------------------------------------------------------
    SESSION_EXISTS = "SESSION_EXISTS"
    SESSION_BLOCKED = "SESSION_BLOCKED"
    APPEND_BATCH_TOO_LARGE = "APPEND_BATCH_TOO_LARGE"
    APPEND_ID_CONFLICT = "APPEND_ID_CONFLICT"
    APPEND_LEAF_MISMATCH = "APPEND_LEAF_MISMATCH"
    LOCK_UNAVAILABLE = "LOCK_UNAVAILABLE"
    SESSION_PATH_REFUSED = "SESSION_PATH_REFUSED"
    IO_FAILED = "IO_FAILED"
    # --- paged reads (phase: read) ---------------------------------------------------------
    CURSOR_INVALID = "CURSOR_INVALID"
    # --- recovery (phase: recover) ---------------------------------------------------------
    RECOVER_INTERIOR_DAMAGE = "RECOVER_INTERIOR_DAMAGE"
    RECOVER_TAIL_SYNTAX = "RECOVER_TAIL_SYNTAX"
    RECOVER_TAIL_LIMIT = "RECOVER_TAIL_LIMIT"
    RECOVER_TAIL_INVALID_RECORD = "RECOVER_TAIL_INVALID_RECORD"
    # --- assets and capture (phase: capture) ----------------------------------------------
    ASSET_PATH_REFUSED = "ASSET_PATH_REFUSED"
    ASSET_NOT_FOUND = "ASSET_NOT_FOUND"
    ASSET_MISMATCH = "ASSET_MISMATCH"
    ASSET_EXISTS = "ASSET_EXISTS"
    ASSET_IDENTITY_CHANGED = "ASSET_IDENTITY_CHANGED"
    ASSET_LOCKED = "ASSET_LOCKED"
    RECORDING_UNKNOWN = "RECORDING_UNKNOWN"
    WAV_UNRECOVERABLE = "WAV_UNRECOVERABLE"
    DELETE_NOT_CONFIRMED = "DELETE_NOT_CONFIRMED"
    HANDLE_INVALID = "HANDLE_INVALID"
    CAPTURE_BACKPRESSURE = "CAPTURE_BACKPRESSURE"
    # --- roots and search (phase: search) -------------------------------------------------
    SETTINGS_INVALID = "SETTINGS_INVALID"
    ROOT_MISSING = "ROOT_MISSING"
    ROOT_UNREADABLE = "ROOT_UNREADABLE"
    LINK_OUTSIDE_ROOT = "LINK_OUTSIDE_ROOT"
    SESSION_UNREADABLE = "SESSION_UNREADABLE"
    SESSION_INVALID = "SESSION_INVALID"
    SEARCH_CURSOR_INVALID = "SEARCH_CURSOR_INVALID"
    RESULT_STALE = "RESULT_STALE"
    # --- usage (phase: usage; exit status 2) -----------------------------------------------
    PATH_NOT_FOUND = "PATH_NOT_FOUND"
    USAGE = "USAGE"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: a stable code, a position where there is one, and a fixed text.

    DIAG-3: ``line`` and ``column`` are 1-based; ``column`` counts bytes within the record.
    ``pointer`` is an RFC 6901 JSON pointer into the record. DIAG-1, DIAG-9, DIAG-10:
    ``detail`` is written by this package only and never quotes input values, so no diagnostic
    of reading, writing or recovery carries a message body, a string value or a secret.
    """

    code: Code
    line: int | None = None
    column: int | None = None
    pointer: str | None = None
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": str(self.code)}
        if self.line is not None:
            out["line"] = self.line
        if self.column is not None:
            out["column"] = self.column
        if self.pointer is not None:
            out["pointer"] = self.pointer
        out["message"] = self.render()
        return out

    def render(self) -> str:
        where = ""
        if self.line is not None:
            where = f" (at line {self.line}" + (
                f", column {self.column})" if self.column is not None else ")"
            )
        at = f" at {self.pointer}" if self.pointer else ""
        text = self.detail or self.code.replace("_", " ").lower()
        return f"{self.code}: {text}{at}{where}"


class PersykError(Exception):
    """Base of every error this package raises on purpose."""


class ContractError(PersykError):
    """The input breaks the v1 contract."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        if not self.diagnostics:
            raise ValueError("ContractError needs at least one diagnostic")
        super().__init__(self.diagnostics[0].render())

    @property
    def code(self) -> Code:
        return self.diagnostics[0].code


class UsageError(PersykError):
    """The caller misused the API or the command line (exit status 2)."""

    def __init__(self, code: Code, detail: str) -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {detail}")


@contextmanager
def io_failures(detail: str) -> Iterator[None]:
    """APP-19 rev. 2: an ``OSError`` raised inside the body (a full disk, no inode left, a file
    size limit, EIO) is ``IO_FAILED`` with ``detail``, exit status 2. The operating system's
    message is dropped, since it may name a path (DIAG-1)."""
    try:
        yield
    except OSError:
        raise ContractError([Diagnostic(Code.IO_FAILED, detail=detail)]) from None
