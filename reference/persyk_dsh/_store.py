"""The file-system edge of the dsh-v0 backend: create, append, load, list under one root.

Decisions live in the pure modules (_layout, _scan, _recover, _encode); this module only reads,
writes, links and fsyncs. Durable-write primitives are the project's (``persyk_session._fsutil``).
One process writes a root (the seed's assumption); a race of first appends is still safe because
publishing is a hard link that fails when the name exists (DSH-18).
"""

from __future__ import annotations

import contextlib
import gc
import os
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from persyk_session._fsutil import (
    append_all,
    fsync_directory,
    link_new,
    make_directory,
    open_append,
    truncate_durably,
    unlink_quietly,
    write_new_file,
)

from ._codec import DshCodec
from ._encode import encode_batch, encode_header
from ._errors import DshCode, DshError
from ._header import check_header, check_location, parse_header
from ._layout import bucket_name, is_bucket_name, is_log_name, log_name
from ._recover import closers

__all__ = ["AppendResult", "DshStore", "Loaded", "make_header"]

# list reads only a log's first line; a longer one is not a header we will hold in memory.
MAX_HEADER_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Loaded:
    header: dict[str, Any]
    events: list[dict[str, Any]]
    truncated_bytes: int
    closers: int


@dataclass(frozen=True, slots=True)
class AppendResult:
    appended: int
    next_seq: int
    materialized: bool


@dataclass(frozen=True, slots=True)
class _Cursor:
    """What this process knows of a log it wrote: its size and the next seq (the seed's cursor)."""

    size: int
    next_seq: int


def make_header(session_id: str, cwd: str | None = None, created_at: int | None = None,
                **members: Any) -> dict[str, Any]:
    """DSH-17: the header of a new session, checked; nothing is written."""
    log_name(session_id)  # DSH-3: an id with no file name is refused now, not at first append
    header: dict[str, Any] = {"type": "session", "version": 0, "id": session_id,
                              "createdAt": int(time.time() * 1000) if created_at is None
                              else created_at}
    if cwd is not None:
        header["cwd"] = cwd
    header.update({k: v for k, v in members.items() if v is not None})
    check_header(header, line=None, pointer="/header")
    return header


@dataclass
class DshStore:
    root: Path
    codec: DshCodec  # chosen by the edge (``operations.mode_codec``)
    _cursors: dict[Path, _Cursor] = field(default_factory=dict)

    def log_path(self, header: dict[str, Any]) -> Path:
        return self.root / bucket_name(header.get("cwd")) / log_name(header["id"])

    # --- append ---------------------------------------------------------------------------

    def append(self, header: dict[str, Any], events: Sequence[Any]) -> AppendResult:
        check_header(header, line=None, pointer="/header")
        path = self.log_path(header)
        if not path.exists():
            return self._materialize(path, header, events)
        cursor = self._cursor(path, header)
        data = encode_batch(events, cursor.next_seq, self.codec)
        if not data:
            return AppendResult(0, cursor.next_seq, False)
        fd = open_append(path)
        try:
            try:
                append_all(fd, data)  # DSH-19: at the end, fsync before acknowledging
            except OSError:
                truncate_durably(fd, cursor.size)  # leave no half batch to be read as torn
                raise
        finally:
            os.close(fd)
        next_seq = cursor.next_seq + len(events)
        self._cursors[path] = _Cursor(cursor.size + len(data), next_seq)
        return AppendResult(len(events), next_seq, False)

    def _cursor(self, path: Path, header: dict[str, Any]) -> _Cursor:
        known = self._cursors.get(path)
        if known is not None and path.stat().st_size == known.size:
            return known
        # DSH-19: an append to a log this process has not read continues the recovered log.
        self.load(header["id"], header.get("cwd"), exact_bucket=True)
        return self._cursors[path]

    def _materialize(
        self, path: Path, header: dict[str, Any], events: Sequence[Any]
    ) -> AppendResult:
        """DSH-18: temp file, fsync, hard link without overwrite, directory fsync."""
        body = encode_batch(events, 0, self.codec)
        if not body:
            return AppendResult(0, 0, False)  # an empty batch materializes nothing
        data = encode_header(header) + body
        root_made = _make_directories(self.root)
        bucket_made = make_directory(path.parent)
        temp = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")  # never a log name
        write_new_file(temp, data, mode=0o600)
        try:
            link_new(temp, path)
        except FileExistsError:
            raise DshError.of(DshCode.EXISTS) from None
        finally:
            unlink_quietly(temp)
        fsync_directory(path.parent)
        if bucket_made:
            fsync_directory(self.root)
        if root_made:
            fsync_directory(self.root.parent)
        self._cursors[path] = _Cursor(len(data), len(events))
        return AppendResult(len(events), len(events), True)

    # --- load -----------------------------------------------------------------------------

    def find(self, session_id: str, cwd: str | None = None, *, exact_bucket: bool = False) -> Path:
        """DSH-24: the one log of an id (in the cwd's bucket, or searched across buckets)."""
        name = log_name(session_id)
        if cwd is not None or exact_bucket:
            path = self.root / bucket_name(cwd) / name
            if not path.is_file():
                raise DshError.of(DshCode.NOT_FOUND)
            return path
        found = [self.root / bucket / name for bucket in self._buckets()
                 if (self.root / bucket / name).is_file()]
        if not found:
            raise DshError.of(DshCode.NOT_FOUND)
        if len(found) > 1:
            raise DshError.of(DshCode.AMBIGUOUS)
        only: Path = found[0]
        return only

    def load(self, session_id: str, cwd: str | None = None, *,
             exact_bucket: bool = False) -> Loaded:
        path = self.find(session_id, cwd, exact_bucket=exact_bucket)
        data = path.read_bytes()
        with _no_cyclic_gc():
            # DSH-13: any fatal fault is raised before a byte is changed
            scan = self.codec.scan_log(data)
        check_location(scan.header, session_id, path.parent.name)
        last_time = scan.events[-1]["time"] if scan.events else scan.header["createdAt"]
        added = closers(scan.events, last_time)
        size = scan.keep
        if scan.torn or added:
            closing = encode_batch(added, len(scan.events), self.codec)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
            try:
                if scan.torn:
                    truncate_durably(fd, scan.keep)  # DSH-13: cut the torn write first
                if closing:
                    append_all(fd, closing)  # DSH-14: closers durable before load returns
            finally:
                os.close(fd)
            size += len(closing)
        events = scan.events + added if added else scan.events  # no copy of a closed log
        self._cursors[path] = _Cursor(size, len(events))
        return Loaded(scan.header, events, scan.torn, len(added))

    # --- list -----------------------------------------------------------------------------

    def list_sessions(self) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
        """DSH-23: every log's header, read from its first line only; and the unreadable."""
        sessions: list[dict[str, Any]] = []
        unreadable: list[dict[str, str]] = []
        for bucket in self._buckets():
            for entry in sorted(os.scandir(self.root / bucket), key=lambda e: e.name):
                if not (is_log_name(entry.name) and entry.is_file()):
                    continue
                try:
                    header = _first_line_header(Path(entry.path), self.codec)
                    check_location(header, header["id"], bucket)
                    if log_name(header["id"]) != entry.name:
                        raise DshError.of(DshCode.HEADER_MISMATCH, line=1)
                except DshError as error:
                    unreadable.append({"bucket": bucket, "file": entry.name,
                                       "code": str(error.diagnostic.code)})
                    continue
                row = {"id": header["id"], "createdAt": header["createdAt"], "bucket": bucket}
                if "cwd" in header:
                    row["cwd"] = header["cwd"]
                sessions.append(row)
        return sessions, unreadable

    def _buckets(self) -> list[str]:
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except FileNotFoundError:
            return []  # no root yet: no session was ever appended
        return [e.name for e in entries if is_bucket_name(e.name) and e.is_dir()]


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Parsed JSON values hold no reference cycles, yet each few hundred allocations trigger
    the cyclic collector, which walks every event parsed so far: loading 100 MB took 2-3x
    longer with it (docs/maintainers/performance.md, "dsh-v0"). Reference counting still frees
    garbage.

    The parsed events are still in the youngest generation when the collector resumes, and
    its first collection would walk them all (a sixth of a 20 MB load): they are moved to the
    oldest generation first, uncollected (``freeze`` then ``unfreeze``), unless the program
    froze objects of its own, which ``unfreeze`` would release."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _first_line_header(path: Path, codec: DshCodec) -> dict[str, Any]:
    with path.open("rb") as handle:
        line = handle.readline(MAX_HEADER_BYTES + 1)
    if not line.endswith(b"\n"):
        raise DshError.of(DshCode.HEADER_INVALID, line=1)
    return parse_header(line[:-1], codec)


def _make_directories(root: Path) -> bool:
    """Create the root (and its parents) if missing; True when the root itself was made."""
    if root.is_dir():
        return False
    root.parent.mkdir(parents=True, exist_ok=True)
    return make_directory(root)
