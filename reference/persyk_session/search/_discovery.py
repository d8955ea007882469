"""The search side's I/O edge: walk roots, read headers, stream sessions, open pinned results.

Nothing here writes, locks, moves or creates anything (SRCH-4, SRCH-18, SRCH-40). Only direct
children of a root are looked at (SRCH-7); a symbolic link is followed only while it stays
inside the root (SRCH-24); only regular files are opened, so a FIFO or a device never blocks
(SRCH-25). The decisions (what matches, the order, cursors, pins) are made by :mod:`._judge`
without I/O. The engine passed in (``read/_engine``) parses, checks, feeds each session's lines
and spreads the sessions over processes (its ``fan_out``); a page is the same whichever.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .._errors import Code, ContractError, Diagnostic
from ..read._context import effective_history
from ..read._engine import READABLE_ENGINE, Engine
from ..read._feed import NO_BODIES, feed_lines
from ..read._index import EntryMeta, IndexBuilder, SessionIndex
from ..read._records import parse_record
from ..read._store import SESSION_FILE
from ._judge import (
    Pin,
    Result,
    SearchDiagnostic,
    SortKey,
    TappedBuilder,
    TextTap,
    decode_cursor,
    encode_cursor,
    judge,
    stale,
)
from ._roots import Root
from ._textmatch import ByteScreen, Query

__all__ = ["Candidate", "Discovery", "Page", "discover", "open_result", "search"]

# Discovery reads headers in small chunks: a header is a few hundred bytes (SRCH-28).
HEADER_CHUNK = 4096
SCAN_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Candidate:
    """A session found under a root with a valid header (SRCH-26..SRCH-28)."""

    location: str  # canonical: the real path of the session directory
    file: str  # the real path of its session.jsonl
    session_id: str
    created: str
    key: SortKey
    duplicates: tuple[str, ...] = ()
    size: int = 0  # bytes of session.jsonl at discovery: what a scan of it will read

    def to_json(self) -> dict[str, Any]:
        return {
            "location": self.location,
            "sessionId": self.session_id,
            "created": self.created,
            "duplicates": list(self.duplicates),
        }


@dataclass(frozen=True, slots=True)
class Discovery:
    sessions: tuple[Candidate, ...]  # in sort order (SRCH-15)
    diagnostics: tuple[SearchDiagnostic, ...]
    roots: tuple[str, ...]  # canonical roots, for cursors (SRCH-37)

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": [c.to_json() for c in self.sessions],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def _inside(root: str, path: str) -> bool:
    # SRCH-24: strictly below the root's real path.
    return path.startswith(root.rstrip(os.sep) + os.sep)


def _resolve_link(path: str, root: str) -> str | SearchDiagnostic | None:
    """The real target of a link inside ``root``: None when dangling, a diagnostic when it
    leads outside (never followed further)."""
    target = os.path.realpath(path)
    if not os.path.exists(target):
        return None
    if not _inside(root, target):
        return SearchDiagnostic(Code.LINK_OUTSIDE_ROOT, location=path)
    return target


def _children(root: Root, found: list[SearchDiagnostic]) -> Iterator[tuple[str, str]]:
    """(root real path, child directory real path) for every child directory of ``root``."""
    try:
        info = os.stat(root.path)
    except FileNotFoundError:
        if root.explicit:  # SRCH-5, SRCH-23: the default root missing is simply empty
            found.append(SearchDiagnostic(Code.ROOT_MISSING, root=root.path))
        return
    except (OSError, ValueError):
        found.append(SearchDiagnostic(Code.ROOT_UNREADABLE, root=root.path))
        return
    if not stat.S_ISDIR(info.st_mode):
        found.append(SearchDiagnostic(Code.ROOT_UNREADABLE, root=root.path))
        return
    real = os.path.realpath(root.path)
    try:
        with os.scandir(real) as listing:
            children = sorted((entry.name, entry.is_symlink()) for entry in listing)
    except OSError:
        found.append(SearchDiagnostic(Code.ROOT_UNREADABLE, root=root.path))
        return
    for name, is_link in children:
        path = os.path.join(real, name)
        if is_link:
            target = _resolve_link(path, real)
            if isinstance(target, SearchDiagnostic):
                found.append(target)
                continue
            if target is None:
                continue
            path = target
        if os.path.isdir(path):
            yield real, path


def _session_file(root: str, directory: str) -> str | SearchDiagnostic | None:
    """The real path of a child's regular session.jsonl; None when the child is no session."""
    path = os.path.join(directory, SESSION_FILE)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return SearchDiagnostic(Code.SESSION_UNREADABLE, location=directory)
    if stat.S_ISLNK(info.st_mode):
        target = _resolve_link(path, root)
        if target is None or isinstance(target, SearchDiagnostic):
            return target
        path = target
        try:
            info = os.stat(path)
        except OSError:
            return SearchDiagnostic(Code.SESSION_UNREADABLE, location=directory)
    if not stat.S_ISREG(info.st_mode):
        # SRCH-25: a directory, FIFO, socket or device is never opened.
        return SearchDiagnostic(Code.SESSION_UNREADABLE, location=directory)
    return path


@contextmanager
def _open_regular(path: str) -> Iterator[tuple[int, Callable[[int], bytes], os.stat_result]]:
    """A descriptor and a reader of a regular file: O_NONBLOCK and a check of the opened file,
    so a FIFO or a device swapped in after the check of its name never blocks (SRCH-25)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as stream:
            yield fd, stream.read, info
    finally:
        os.close(fd)


def _first_error(index: SessionIndex) -> Diagnostic:
    if index.diagnostics:
        return index.diagnostics[0]
    return Diagnostic(Code.HEADER_NOT_FIRST, line=1)


def _invalid(location: str, error: Diagnostic) -> SearchDiagnostic:
    # SRCH-19: the first error's code and line, never its text.
    return SearchDiagnostic(
        Code.SESSION_INVALID, location=location, cause=error.code, line=error.line
    )


def _read_header(path: str, engine: Engine) -> tuple[SessionIndex, int]:
    """The index of the first record alone (and blank lines before it): SRCH-28; and the size
    of the file."""
    builder = IndexBuilder(engine.new_table(), schema=engine.schema)
    with _open_regular(path) as (_fd, read, info):
        for _ in feed_lines(builder, read, parse=engine.parse_record, chunk_size=HEADER_CHUNK):
            if builder.first_seen:
                break
    return builder.build(empty=not builder.first_seen), info.st_size


def discover(roots: Sequence[Root], *, engine: Engine = READABLE_ENGINE) -> Discovery:
    """Every session under ``roots`` once, by canonical location, in sort order."""
    found: list[SearchDiagnostic] = []
    candidates: list[Candidate] = []
    seen_paths: set[str] = set()
    seen_dirs: set[tuple[int, int]] = set()
    for root in roots:
        for real_root, directory in _children(root, found):
            if directory in seen_paths:
                continue  # SRCH-8, SRCH-26: reached again through a link or another root
            try:
                info = os.stat(directory)
            except OSError:
                continue
            identity = (info.st_dev, info.st_ino)
            if identity in seen_dirs:
                continue  # the same directory under another real path (a bind mount)
            file = _session_file(real_root, directory)
            if file is None:
                continue
            seen_paths.add(directory)
            seen_dirs.add(identity)
            if isinstance(file, SearchDiagnostic):
                found.append(file)
                continue
            try:
                index, size = _read_header(file, engine)
            except OSError:
                found.append(SearchDiagnostic(Code.SESSION_UNREADABLE, location=directory))
                continue
            if index.header is None or not index.valid:
                found.append(_invalid(directory, _first_error(index)))
                continue
            header = index.header
            candidates.append(Candidate(
                directory, file, header["id"], header["timestamp"],
                SortKey.of(header["timestamp"], directory), size=size,
            ))
    return Discovery(
        tuple(sorted(_mark_duplicates(candidates), key=lambda c: c.key)),
        tuple(found),
        tuple(os.path.realpath(root.path) for root in roots),
    )


def _mark_duplicates(candidates: list[Candidate]) -> list[Candidate]:
    # SRCH-9, SRCH-27: distinct locations sharing a header id are each reported, marked.
    by_id: dict[str, list[str]] = {}
    for candidate in candidates:
        by_id.setdefault(candidate.session_id, []).append(candidate.location)
    out = []
    for c in candidates:
        others = tuple(sorted(loc for loc in by_id[c.session_id] if loc != c.location))
        out.append(Candidate(c.location, c.file, c.session_id, c.created, c.key, others, c.size))
    return out


# --- search --------------------------------------------------------------------------------


def _loader(fd: int) -> Callable[[EntryMeta], dict[str, Any]]:
    def load(entry: EntryMeta) -> dict[str, Any]:
        return parse_record(os.pread(fd, entry.length, entry.offset), line=entry.line)

    return load


def _shown_to(tap: TextTap, read: Callable[[int], bytes]) -> Callable[[int], bytes]:
    def read_and_show(size: int) -> bytes:
        chunk = read(size)
        tap.see(chunk)
        return chunk

    return read_and_show


def _scan(
    candidate: Candidate, query: Query, engine: Engine
) -> Result | SearchDiagnostic | None:
    """Validate and search one session in a single pass (SRCH-19, SRCH-12)."""
    tap = TextTap(query, screen=ByteScreen.of(query))
    builder = TappedBuilder(tap, engine.new_table(), schema=engine.schema)
    try:
        with _open_regular(candidate.file) as (fd, read, info):
            for _ in engine.feed_lines(builder, _shown_to(tap, read), parse=engine.parse_record,
                                       chunk_size=SCAN_CHUNK, first_line=1, start_offset=0,
                                       kept=NO_BODIES):
                pass
            index = builder.build(empty=not builder.first_seen)
            if not index.valid or index.header is None:
                return _invalid(candidate.location, _first_error(index))
            pin = _pin_of(fd, info, tap.last)
            return judge(
                index, tap, _loader(fd), location=candidate.location,
                duplicates=candidate.duplicates, pin=pin,
            )
    except OSError:
        return SearchDiagnostic(Code.SESSION_UNREADABLE, location=candidate.location)


Outcome = Result | SearchDiagnostic | None


def _scan_run(run: tuple[Candidate, ...], query: Query, engine: Engine) -> list[Outcome]:
    """:func:`_scan` of consecutive sessions: the unit of work a search worker is sent."""
    return [_scan(candidate, query, engine) for candidate in run]


def _outcomes(
    candidates: Sequence[Candidate], query: Query, engine: Engine
) -> Generator[Outcome, None, None]:
    """The outcome of every candidate, in the candidates' order, however many processes scan
    (SRCH-15, SRCH-16: the engine's ``fan_out`` yields them in submission order)."""
    work = functools.partial(_scan_run, query=query, engine=engine)
    yield from engine.fan_out(work, candidates, [c.size for c in candidates])


def _pin_of(fd: int, info: os.stat_result, last: tuple[int, int] | None) -> Pin:
    if last is None:
        return Pin(info.st_dev, info.st_ino, -1, "")
    offset, length = last
    return Pin(info.st_dev, info.st_ino, offset, Pin.digest(os.pread(fd, length, offset)))


@dataclass(frozen=True, slots=True)
class Page:
    results: tuple[Result, ...]
    next_cursor: str | None
    diagnostics: tuple[SearchDiagnostic, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "results": [r.to_json() for r in self.results],
            "nextCursor": self.next_cursor,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def search(
    roots: Sequence[Root], query: Query, limit: int, cursor: str | None,
    *, engine: Engine = READABLE_ENGINE,
) -> Page:
    """One page of results (SRCH-16, SRCH-36, SRCH-37).

    Sessions are examined in sort order after the cursor, each streamed once, until ``limit``
    results are found and one more matching session proves that a next page exists. A page
    reports the root and discovery diagnostics, and the invalid sessions it examined up to its
    last result (all remaining ones on the last page). The engine's ``fan_out`` says how many
    processes scan; the page is the same whatever it says.
    """
    found = discover(roots, engine=engine)
    after = None if cursor is None else decode_cursor(cursor, query, found.roots)
    results: list[Result] = []
    examined: list[SearchDiagnostic] = []
    pending: list[SearchDiagnostic] = []
    more = False
    todo = [c for c in found.sessions if after is None or c.key > after]
    outcomes = _outcomes(todo, query, engine)
    for outcome in outcomes:
        if isinstance(outcome, SearchDiagnostic):
            pending.append(outcome)
        elif outcome is not None:
            if len(results) == limit:
                more = True
                break
            results.append(outcome)
            examined += pending
            pending = []
    outcomes.close()  # a full page: the batches still queued are never scanned
    if not more:
        examined += pending
    next_cursor = None
    if more:
        last = results[-1]
        next_cursor = encode_cursor(SortKey.of(last.created, last.location), query, found.roots)
    return Page(tuple(results), next_cursor, found.diagnostics + tuple(examined))


# --- opening a pinned result ----------------------------------------------------------------


def open_result(
    location: str, session_id: str, leaf: str | None, pin: Pin, *,
    engine: Engine = READABLE_ENGINE,
) -> dict[str, Any]:
    """The context of the pinned leaf (SRCH-17, SRCH-38), or RESULT_STALE (SRCH-39)."""
    file = os.path.join(location, SESSION_FILE)
    builder = IndexBuilder(engine.new_table(), schema=engine.schema)
    try:
        with _open_regular(file) as (fd, read, info):
            if (info.st_dev, info.st_ino) != (pin.device, pin.inode):
                raise stale()
            for _ in feed_lines(builder, read, parse=engine.parse_record, chunk_size=SCAN_CHUNK):
                pass
            index = builder.build(empty=not builder.first_seen)
            if not index.valid or index.header is None:
                raise ContractError([_first_error(index)])
            if index.header["id"] != session_id:
                raise stale()
            if leaf is not None:
                entry = index.by_id.get(leaf)
                if entry is None or entry.offset != pin.leaf_offset or Pin.digest(
                    os.pread(fd, entry.length, entry.offset)
                ) != pin.leaf_digest:
                    raise stale()
            elif pin.leaf_offset != -1:
                raise stale()
            return effective_history(index, leaf, _loader(fd)).to_json()
    except OSError:
        raise stale() from None
