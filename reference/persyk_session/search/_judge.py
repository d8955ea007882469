"""Search without I/O: diagnostics, the sort key, cursors, pins, and judging one session.

The I/O edge (:mod:`._discovery`) walks the roots and streams each session once; everything
here works on what it hands over: parsed records (:class:`TextTap`), the finished index, and the
few bodies :func:`judge` asks for (the matching entry, for its excerpt; user messages, for a
fallback title).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .._errors import Code, ContractError, Diagnostic
from ..read._entries import EntryTable
from ..read._index import EntryMeta, IndexBuilder, SessionIndex
from ..read._records import MAX_RECORD_BYTES
from ._textmatch import ByteScreen, Query, excerpt, fold, is_blank, title_piece

if TYPE_CHECKING:
    from ..read._engine import SchemaRules

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "Pin",
    "Result",
    "Screened",
    "SearchDiagnostic",
    "SortKey",
    "TappedBuilder",
    "TextTap",
    "decode_cursor",
    "encode_cursor",
    "instant_ns",
    "judge",
    "stale",
]

# SRCH-36: every implementation accepts 1..50; the reference's maximum and default.
MAX_LIMIT: Final = 100
DEFAULT_LIMIT: Final = 20

LoadBody = Callable[[EntryMeta], dict[str, Any]]

# SRCH-32: the entry types whose text blocks are searched.
TEXT_TYPES: Final = frozenset({"message", "custom_message"})


@dataclass(frozen=True, slots=True)
class SearchDiagnostic:
    """A finding about a root or a session under it (SRCH-6, SRCH-19, SRCH-23..SRCH-25).

    ``root`` is a root as given; ``location`` an absolute path; ``cause`` and ``line`` the first
    error of an invalid session. No text of any session is ever put here (DIAG-1).
    """

    code: Code
    root: str | None = None
    location: str | None = None
    cause: Code | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": str(self.code)}
        if self.root is not None:
            out["root"] = self.root
        if self.location is not None:
            out["location"] = self.location
        if self.cause is not None:
            out["cause"] = str(self.cause)
        if self.line is not None:
            out["line"] = self.line
        out["message"] = f"{self.code}: {self.code.replace('_', ' ').lower()}"
        return out


# --- the sort key (SRCH-15, SRCH-35) -----------------------------------------------------

_TIMESTAMP: Final = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$"
)
_EPOCH_ORDINAL: Final = datetime.date(1970, 1, 1).toordinal()


def instant_ns(timestamp: str) -> int:
    """SRCH-35: a header timestamp (ENV-4's profile, already validated) as nanoseconds since
    the epoch, the offset applied. Plain arithmetic, so a leap second (:60) sorts too."""
    m = _TIMESTAMP.match(timestamp)
    if m is None:
        raise ValueError("not an ENV-4 timestamp")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    days = datetime.date(year, month, day).toordinal() - _EPOCH_ORDINAL
    seconds = days * 86400 + hour * 3600 + minute * 60 + second
    if m.group(9):
        offset = int(m.group(10)) * 3600 + int(m.group(11)) * 60
        seconds -= offset if m.group(9) == "+" else -offset
    fraction = int((m.group(7) or "0").ljust(9, "0"))
    return seconds * 1_000_000_000 + fraction


@dataclass(frozen=True, slots=True, order=True)
class SortKey:
    """Newest first, then canonical location in code-point order (SRCH-15, SRCH-35)."""

    newer: int  # minus the creation instant, so that ascending order is newest first
    location: str

    @classmethod
    def of(cls, created: str, location: str) -> SortKey:
        return cls(-instant_ns(created), location)


# --- cursors (SRCH-37) -------------------------------------------------------------------


def _fingerprint(value: Any) -> str:
    return hashlib.sha256(_compact(value)).hexdigest()[:16]


def _compact(value: Any) -> bytes:
    # The standard library's json: the core imports no orjson
    # (tests/reference/core/test_core_purity.py).
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def encode_cursor(key: SortKey, query: Query, roots: Sequence[str]) -> str:
    """The cursor after ``key``: the key itself, bound to the query and the canonical roots."""
    body = _compact([1, key.newer, key.location, _fingerprint([query.text, list(roots)])])
    return base64.urlsafe_b64encode(body).decode("ascii").rstrip("=")


def _cursor_invalid() -> ContractError:
    return ContractError([Diagnostic(
        Code.SEARCH_CURSOR_INVALID, detail="the cursor was not produced for this query and roots"
    )])


def decode_cursor(cursor: str, query: Query, roots: Sequence[str]) -> SortKey:
    """The key a cursor continues after; SEARCH_CURSOR_INVALID unless it is exactly ours."""
    try:
        body = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(body)
    except (ValueError, binascii.Error):
        raise _cursor_invalid() from None
    if not (
        isinstance(value, list)
        and len(value) == 4
        and value[0] == 1
        and isinstance(value[1], int)
        and isinstance(value[2], str)
        and value[3] == _fingerprint([query.text, list(roots)])
    ):
        raise _cursor_invalid()
    key = SortKey(value[1], value[2])
    # Only the exact string we produce is ours (base64 decoding forgives stray characters).
    if encode_cursor(key, query, roots) != cursor:
        raise _cursor_invalid()
    return key


# --- pins (SRCH-38, SRCH-39) -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pin:
    """What a result pins besides its location, id and leaf: the file (device and inode) and
    the leaf record's place and bytes. An append changes none of these."""

    device: int
    inode: int
    leaf_offset: int  # -1 for the null leaf
    leaf_digest: str  # SHA-256 of the leaf record's bytes, 32 hex digits; "" for the null leaf

    @staticmethod
    def digest(record: bytes) -> str:
        return hashlib.sha256(record).hexdigest()[:32]

    def encode(self) -> str:
        body = f"1.{self.device}.{self.inode}.{self.leaf_offset}.{self.leaf_digest}"
        return base64.urlsafe_b64encode(body.encode()).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Pin | None:
        try:
            body = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
        except (ValueError, binascii.Error, UnicodeError):
            return None
        m = re.fullmatch(r"1\.(\d{1,20})\.(\d{1,20})\.(-1|\d{1,20})\.([0-9a-f]{32}|)", body)
        if m is None:
            return None
        pin = cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4))
        return pin if pin.encode() == text else None


def stale() -> ContractError:
    return ContractError([Diagnostic(
        Code.RESULT_STALE, detail="the pinned session was replaced, deleted or rewritten"
    )])


# --- one session ---------------------------------------------------------------------------


# A line longer than this is no record (REC-11): the screen stops holding its bytes.
_HELD: Final = MAX_RECORD_BYTES + 1


class Screened(NamedTuple):
    """The whole lines that ended in one chunk, as the byte screen judged them: from byte
    ``start``, their bytes (each line ending in LF), and whether the screen ``cleared`` them
    (the query cannot be in any of their strings)."""

    start: int
    data: bytes
    cleared: bool


@dataclass(slots=True)
class TextTap:
    """Fed every committed record while a session streams by; keeps only the ids of entries
    with a matching text block (SRCH-31, SRCH-32) and where the last record lies."""

    query: Query
    hits: set[str] = field(default_factory=set)
    last: tuple[int, int] | None = None  # offset and length of the last entry's record
    screen: ByteScreen | None = None  # a prefilter of the bytes :meth:`see` is shown
    screened: Screened | None = None  # the latest lines :meth:`see` screened
    _seen: int = 0  # bytes shown so far
    _open: bytes | None = b""  # the line still open after them; None when over the limit

    def see(self, chunk: bytes) -> None:
        """Shown each chunk of the session's bytes, in order, before its records: the whole
        lines that end in it are screened at once (one byte scan instead of one match per
        record); records inside lines the screen clears are not matched one by one."""
        if self.screen is None:
            return
        base = self._seen
        self._seen += len(chunk)
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            held = self._open
            self._open = None if held is None or len(held) + len(chunk) > _HELD else held + chunk
            return
        if self._open is None:  # the first line here ends one over the limit: no record
            first = chunk.find(b"\n") + 1
            lines, start = chunk[first:cut], base + first
        else:
            lines, start = self._open + chunk[:cut], base - len(self._open)
        self.screened = Screened(start, lines, not self.screen.may_hold(lines))
        self._open = chunk[cut:]

    def record(self, obj: dict[str, Any], offset: int, length: int) -> None:
        # The hot path of search: one call per record of every session, so kept flat.
        kind = obj["type"]
        if kind == "session":
            return
        self.last = (offset, length)
        if self.screened is not None:
            start, data, cleared = self.screened
            if cleared and start <= offset and offset + length < start + len(data):
                return  # its line was screened: the query cannot be in any of its strings
        if kind == "message":
            content = obj["message"]["content"]
        elif kind == "custom_message":
            content = obj["content"]
        else:
            return
        folded = self.query.folded
        if not folded:
            return
        for block in content:
            # SRCH-13: only text blocks; thinking, tool calls and other blocks never match.
            if block.get("type") == "text":
                value = block["text"]
                if folded in (value.lower() if value.isascii() else fold(value)):
                    self.hits.add(obj["id"])
                    return


class TappedBuilder(IndexBuilder):
    """The read-phase index builder, also handing each committed record to its text tap, so a
    session is validated and searched in one streaming pass with one record in memory."""

    def __init__(self, tap: TextTap, table: EntryTable, *, schema: SchemaRules) -> None:
        super().__init__(table, schema=schema)
        self.tap = tap

    def add_record(
        self, obj: dict[str, Any], *, line: int, offset: int, length: int
    ) -> list[Diagnostic]:
        findings = super().add_record(obj, line=line, offset=offset, length=length)
        if not findings:
            self.tap.record(obj, offset, length)
        return findings


def _blocks(obj: dict[str, Any]) -> list[Any]:
    content = obj["message"]["content"] if obj["type"] == "message" else obj["content"]
    return content if isinstance(content, list) else []


def _texts(obj: dict[str, Any]) -> list[str]:
    # SRCH-13: only text blocks; thinking, tool calls and every other block never match.
    return [
        block["text"]
        for block in _blocks(obj)
        if isinstance(block, dict) and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


@dataclass(frozen=True, slots=True)
class Result:
    """One search result (SRCH-38), JSON through :meth:`to_json`."""

    location: str
    session_id: str
    leaf: str | None
    created: str
    title: str | None
    excerpt: str | None
    matched: tuple[str, ...]
    archived: bool
    duplicates: tuple[str, ...]
    pin: str

    def to_json(self) -> dict[str, Any]:
        return {
            "location": self.location,
            "sessionId": self.session_id,
            "leaf": self.leaf,
            "created": self.created,
            "title": self.title,
            "excerpt": self.excerpt,
            "matched": list(self.matched),
            "archived": self.archived,
            "duplicates": list(self.duplicates),
            "pin": self.pin,
        }


def surviving(index: SessionIndex) -> list[EntryMeta]:
    """SRCH-12: the message and custom_message entries of the default leaf's ancestry, root
    first, less those a removal on the same path excludes (CTX-7)."""
    path = index.ancestry(index.default_leaf)
    removed = {e.target_id for e in path if e.type == "message.removed"}
    return [e for e in path if e.type in TEXT_TYPES and e.id not in removed]


def judge(
    index: SessionIndex,
    tap: TextTap,
    load: LoadBody,
    *,
    location: str,
    duplicates: tuple[str, ...],
    pin: Pin,
) -> Result | None:
    """The result for a valid session, or None when the query matches nothing in it.

    SRCH-14: the title and the excerpt come only from ``kept``, the surviving entries."""
    assert index.header is not None
    query = tap.query
    matched: list[str] = []
    text_entry: EntryMeta | None = None
    if not query.empty:
        if isinstance(index.name, str) and query.found_in(index.name):
            matched.append("name")
        if any(query.found_in(label) for label in index.labels.values()):
            matched.append("label")
        if not matched and not tap.hits:
            return None  # most sessions of a search: no need to walk the leaf's ancestry
    kept = surviving(index)
    if not query.empty:
        text_entry = next((e for e in kept if e.id in tap.hits), None)
        if text_entry is not None:
            matched.append("text")
        if not matched:
            return None
    found = None
    if text_entry is not None:
        found = next(t for t in _texts(load(text_entry)) if query.found_in(t))
    return Result(
        location=location,
        session_id=index.header["id"],
        leaf=index.default_leaf,
        created=index.header["timestamp"],
        title=_title(index, kept, load),
        excerpt=None if found is None else excerpt(found, query),
        matched=tuple(matched),
        archived=index.archived,
        duplicates=duplicates,
        pin=pin.encode(),
    )


def _title(index: SessionIndex, kept: list[EntryMeta], load: LoadBody) -> str | None:
    # SRCH-33: the name; else the first non-blank text of a surviving user message.
    if isinstance(index.name, str) and index.name:
        return index.name
    for entry in kept:
        if entry.type != "message":
            continue
        body = load(entry)
        if body["message"].get("role") != "user":
            continue
        for text in _texts(body):
            if not is_blank(text):
                return title_piece(text)
    return None
