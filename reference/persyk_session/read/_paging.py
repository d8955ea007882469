"""Bounded paged reads of a session's entries (docs/spec.md CTX-24, CTX-25).

A page is at most ``page_size`` entries in file order, read by position from the index, so a
page costs its own bytes plus the (body-free) index. The cursor is opaque to callers; inside it
is ``<byte offset of the next entry>.<header fingerprint>`` in URL-safe base64. The fingerprint
(SHA-256 of the header's canonical JSON, 16 hex digits) makes a cursor from another session
``CURSOR_INVALID``; an offset that is not the start of an entry (a stale or forged cursor) is
``CURSOR_INVALID`` too. Reading never takes the lock or writes anything (CTX-19).

A page costs O(page), not O(session): :func:`read_page` asks a per-process
:class:`~._read_cache.ReadCache` for the session, which validates the whole file once and then
only the bytes appended since (or all of it again for a replaced or rewritten file).
:func:`read_page_validating` is its readable twin, validating the whole file for every page;
tests/reference/fast/test_read_cache.py holds the two to the same pages and errors.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from .._errors import Code, ContractError, Diagnostic, UsageError
from ._engine import READABLE_ENGINE, DumpsJson, Engine
from ._index import EntryMeta, SessionIndex
from ._read_cache import ReadCache
from ._store import open_session

__all__ = [
    "MAX_PAGE_SIZE",
    "PROCESS_CACHE",
    "Page",
    "decode_cursor",
    "encode_cursor",
    "read_page",
    "read_page_validating",
]

MAX_PAGE_SIZE: Final = 1000
_CURSOR_BODY: Final = re.compile(r"^(0|[1-9][0-9]{0,18})\.([0-9a-f]{16})$")


@dataclass(frozen=True, slots=True)
class Page:
    entries: tuple[dict[str, Any], ...]
    next_cursor: str | None

    def to_json(self) -> dict[str, Any]:
        return {"entries": list(self.entries), "nextCursor": self.next_cursor}


def header_fingerprint(header: dict[str, Any], dumps: DumpsJson) -> str:
    canonical = dumps(header, sort_keys=True)
    return hashlib.sha256(canonical).hexdigest()[:16]


def encode_cursor(offset: int, fingerprint: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}.{fingerprint}".encode()).decode().rstrip("=")


def _invalid() -> ContractError:
    return ContractError(
        [Diagnostic(Code.CURSOR_INVALID, detail="the cursor was not produced for this session")]
    )


def decode_cursor(cursor: str, fingerprint: str) -> int:
    """The entry offset inside ``cursor``; ContractError(CURSOR_INVALID) if it is not ours."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        body = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (ValueError, binascii.Error, UnicodeError):
        raise _invalid() from None
    match = _CURSOR_BODY.match(body)
    if match is None or match.group(2) != fingerprint:
        raise _invalid()
    offset = int(match.group(1))
    # CTX-24: only the exact string we produce is ours. The base64 decoder skips characters
    # outside its alphabet and tolerates extra padding, so "<cursor>!!" would otherwise pass.
    if encode_cursor(offset, fingerprint) != cursor:
        raise _invalid()
    return offset


def page_bounds(
    index: SessionIndex, page_size: int, cursor: str | None, dumps: DumpsJson
) -> tuple[int, int]:
    """The half-open range of entry positions of the page (pure, from the index alone)."""
    assert index.header is not None
    start = 0
    if cursor is not None:
        offset = decode_cursor(cursor, header_fingerprint(index.header, dumps))
        position = index.position_at_offset(offset)
        if position is None:
            raise _invalid()
        start = position
    return start, min(start + page_size, len(index.entries))


# The adapter process and library callers share this cache (one per process, as ``_live``); it
# serves every engine (each state remembers the one that validated it).
PROCESS_CACHE: Final = ReadCache()


def _check_page_size(page_size: int) -> None:
    if isinstance(page_size, bool) or not isinstance(page_size, int) or not (
        1 <= page_size <= MAX_PAGE_SIZE
    ):
        raise UsageError(Code.USAGE, "pageSize must be an integer from 1 to 1000")


def _first_fault(index: SessionIndex) -> ContractError:
    return ContractError([index.diagnostics[0]] if index.diagnostics else [Diagnostic(
        Code.HEADER_NOT_FIRST, line=1, detail="the session has no header")])


def _page(
    index: SessionIndex, load: Callable[[EntryMeta], dict[str, Any]], page_size: int,
    cursor: str | None, dumps: DumpsJson,
) -> Page:
    """The page of a valid session's index, its bodies read through ``load``."""
    assert index.header is not None
    start, stop = page_bounds(index, page_size, cursor, dumps)
    entries = tuple(load(entry) for entry in index.entries[start:stop])
    following = (
        encode_cursor(index.entries[stop].offset, header_fingerprint(index.header, dumps))
        if stop < len(index.entries)
        else None
    )
    return Page(entries, following)


def read_page(
    path: str | os.PathLike[str], page_size: int, cursor: str | None = None, *,
    cache: ReadCache = PROCESS_CACHE, engine: Engine = READABLE_ENGINE,
) -> Page:
    """One page of entries (full records, file order) and the cursor of the next page.

    Raises UsageError(USAGE) for a page size outside 1..1000, ContractError with the session's
    first fault for an invalid session (CTX-20), ContractError(CURSOR_INVALID) for a bad cursor.
    The session is validated through ``cache``: wholly the first time, then only what was
    appended since (see ``_read_cache``).
    """
    _check_page_size(page_size)
    with cache.session(path, engine) as session:
        if not session.index.valid:
            raise _first_fault(session.index)
        return _page(session.index, session.load, page_size, cursor, engine.dumps_json)


def read_page_validating(
    path: str | os.PathLike[str], page_size: int, cursor: str | None = None, *,
    engine: Engine = READABLE_ENGINE,
) -> Page:
    """:func:`read_page` validating the whole file for this page alone (the readable twin)."""
    _check_page_size(page_size)
    session = open_session(path, engine=engine)
    if not session.index.valid:
        raise _first_fault(session.index)
    with session.bodies() as load:
        return _page(session.index, load, page_size, cursor, engine.dumps_json)
