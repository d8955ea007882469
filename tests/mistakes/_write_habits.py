"""Mistakes of the write and paging paths: cursors, locks, bytes on write, prefix commits,
the cleanup of a failed create, recovery. fsync mistakes are the power-loss harness's."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from persyk_session.read import _index, _paging
from persyk_session.write import _append, _append_plan, _lock, _recovery, _recovery_plan

from ._model import (
    Dispatch,
    Mistake,
    around,
    patching,
    result_of,
    rewrite_new_bytes,
    session_file,
    size_of,
)

WRITING_OPS: frozenset[str] = frozenset({"create", "append", "remove"})
_END = "end-of-session"


# Cursors (CTX-24).


def _cursor_is_an_index(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    size, cursor = args.get("pageSize"), args.get("cursor")
    if op != "read" or not isinstance(size, int) or not 1 <= size <= 1000:
        return inner(op, args)
    start = 0
    if cursor is not None:
        if not isinstance(cursor, str) or not cursor.isdigit():
            return inner(op, args)  # not ours: the reference's CURSOR_INVALID
        start = int(cursor)
    entries: list[Any] = []
    following: str | None = None
    while True:
        body = inner(op, {**args, "cursor": following,
                          "pageSize": min(1000, start + size + 1 - len(entries))})
        result = result_of(body)
        if result is None or "error" in result:
            return body
        entries += result["entries"]
        following = result["nextCursor"]
        if following is None or len(entries) > start + size:
            break
    page = entries[start:start + size]
    more = following is not None or len(entries) > start + size
    return {"result": {"entries": page, "nextCursor": str(start + len(page)) if more else None}}


def _offset_alone(cursor: str, fingerprint: str) -> int:
    try:
        body = base64.urlsafe_b64decode((cursor + "=" * (-len(cursor) % 4)).encode("ascii"))
        match = re.fullmatch(rb"([0-9]{1,19})\.[0-9a-f]{16}", body)
    except (ValueError, UnicodeError):
        match = None
    if match is None:
        raise _paging._invalid()
    return int(match.group(1))


def _next_entry_at_or_after(self: _index.SessionIndex, offset: int) -> int | None:
    positions = [i for i, entry in enumerate(self.entries) if entry.offset >= offset]
    return positions[0] if positions else None


def _cursor_after_full_last_page(inner: Dispatch, op: str, args: dict[str, Any]
                                 ) -> dict[str, Any]:
    if op == "read" and args.get("cursor") == _END:
        return {"result": {"entries": [], "nextCursor": None}}
    body = inner(op, args)
    result = result_of(body)
    if (op == "read" and result is not None and "entries" in result
            and result["nextCursor"] is None and len(result["entries"]) == args.get("pageSize")):
        return {"result": {**result, "nextCursor": _END}}
    return body


# Locks (APP-5, APP-6, APP-7, RCV-2).


def _lock_patch(replacement: Any) -> Any:
    def make() -> AbstractContextManager[Any]:
        stack = contextlib.ExitStack()
        # Every mutation takes the lock through the one write prologue; deletion its own.
        for module in ("persyk_session.write._prologue", "persyk_session.media._delete"):
            stack.enter_context(mock.patch(f"{module}.session_lock", replacement))
        return stack

    return make


@contextmanager
def _in_process_only(directory: Path, *, timeout: float | None = None,
                     file: Path | None = None) -> Iterator[None]:
    with _lock._thread_lock(directory):
        yield


@contextmanager
def _data_file_only(directory: Path, *, timeout: float | None = None,
                    file: Path | None = None) -> Iterator[None]:
    with _lock._thread_lock(directory):
        if file is None:
            yield
        else:
            with _lock._identity_lock(file, _deadline(timeout)):
                yield


def _deadline(timeout: float | None) -> float:
    import time

    return time.monotonic() + _lock.lock_timeout(timeout)


_REAL_LOCK = _lock.session_lock


@contextmanager
def _deleted_after(directory: Path, *, timeout: float | None = None,
                   file: Path | None = None) -> Iterator[None]:
    try:
        with _REAL_LOCK(directory, timeout=timeout, file=file):
            yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(directory / "session.lock")


def _validated_before_locking(inner: Dispatch, op: str, args: dict[str, Any]
                              ) -> dict[str, Any]:
    if op in ("append", "remove", "recover"):
        checked = result_of(inner("validate", {"session": args.get("session")}))
        if checked is not None and checked.get("valid") is False:
            with _lock_patch(_in_process_only)():
                return inner(op, args)  # refuses on what it read without the lock
    return inner(op, args)


# Bytes on write (REC-22, REC-24, APP-10).


def _after_write(change: Any, *, ops: frozenset[str] = WRITING_OPS, whole: bool = False
                 ) -> Any:
    def wrap(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
        if op not in ops:
            return inner(op, args)
        file = _session_path(op, args)
        before = size_of(file)
        body = inner(op, args)
        if file is not None and file.is_file() and size_of(file) > before:
            rewrite_new_bytes(file, 0 if whole else before, change)
        return body

    return wrap


def _session_path(op: str, args: dict[str, Any]) -> Path | None:
    if op == "create" and isinstance(args.get("session"), str):
        path = Path(args["session"])
        return path if path.name == "session.jsonl" else path / "session.jsonl"
    return session_file(args)


def _each_line(encode: Any) -> Any:
    def change(tail: bytes) -> bytes:
        lines = tail.split(b"\n")
        out = [encode(json.loads(line)).encode("utf-8") if line.strip() else line
               for line in lines[:-1]]
        return b"".join(line + b"\n" for line in out) + lines[-1]

    return change


def _go_marshal(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _terminate_first(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    file = session_file(args) if op in ("append", "remove") else None
    if file is not None and file.is_file():
        data = file.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(file, "ab") as out:
                out.write(b"\n")
    return inner(op, args)


# Prefix commits (APP-12..APP-15).


def _all_or_nothing(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    file = session_file(args) if op == "append" else None
    before = size_of(file)
    body = inner(op, args)
    result = result_of(body)
    if file is not None and result is not None and "error" in result and result["committed"]:
        os.truncate(file, before)
        return {"result": {**result, "committed": [], "alreadyPresent": []}}
    return body


def _continues_after_refusal(inner: Dispatch, op: str, args: dict[str, Any]
                             ) -> dict[str, Any]:
    body = inner(op, args)
    result = result_of(body)
    records = args.get("records")
    if op != "append" or result is None or "error" not in result or "committed" not in result \
            or not isinstance(records, list):
        return body
    refused = len(result["committed"]) + len(result["alreadyPresent"])
    rest = records[refused + 1:]
    if not rest:
        return body
    more = result_of(inner(op, {**{k: v for k, v in args.items() if k != "leaf"},
                                "records": rest})) or {}
    return {"result": {**result,
                       "committed": result["committed"] + list(more.get("committed", [])),
                       "alreadyPresent": result["alreadyPresent"] + list(
                           more.get("alreadyPresent", []))}}


def _present_written_again(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    body = inner(op, args)
    result = result_of(body)
    file = session_file(args)
    records = args.get("records")
    if op == "append" and result and result.get("alreadyPresent") and isinstance(
            records, list) and file is not None:
        again = [r for r in records if isinstance(r, dict)
                 and r.get("id") in result["alreadyPresent"]]
        with open(file, "ab") as out:
            for record in again:
                out.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    return body


def _rebased_onto_tip(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    file = session_file(args)
    records = args.get("records")
    if (op != "append" or "leaf" in args or not isinstance(records, list) or not records
            or file is None or not file.is_file() or not isinstance(records[0], dict)):
        return inner(op, args)
    lines = [line for line in file.read_bytes().split(b"\n") if line.strip()]
    try:
        tip = json.loads(lines[-1]).get("id") if len(lines) > 1 else None
    except ValueError:
        return inner(op, args)
    if tip is None or records[0].get("parentId") == tip:
        return inner(op, args)
    return inner(op, {**args, "records": [{**records[0], "parentId": tip}, *records[1:]]})


def _conflict_by_bytes(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    file = session_file(args)
    records = args.get("records")
    if op != "append" or not isinstance(records, list) or file is None or not file.is_file():
        return inner(op, args)
    stored: dict[str, bytes] = {}
    for line in file.read_bytes().split(b"\n"):
        with contextlib.suppress(ValueError, AttributeError):
            stored.setdefault(json.loads(line).get("id"), line.rstrip(b"\r"))
    for index, record in enumerate(records):
        if not isinstance(record, dict) or record.get("id") not in stored:
            continue
        mine = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
        if mine != stored[record["id"]] and json.loads(stored[record["id"]]) == record:
            other = "2000-01-01T00:00:00Z" if record.get("timestamp") != \
                "2000-01-01T00:00:00Z" else "2000-01-02T00:00:00Z"
            changed = [*records[:index], {**record, "timestamp": other}, *records[index + 1:]]
            return inner(op, {**args, "records": changed})
    return inner(op, args)


# The cleanup of a failed create (APP-2, APP-27).


def _publish_without_cleanup(target_dir: Path, final: Path, data: bytes) -> None:
    _append._make_directories(target_dir)
    _append._publish_in(target_dir, final, data)


def _create_truncates(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    file = _session_path(op, args) if op == "create" else None
    if file is not None and file.is_file() and not file.is_symlink():
        file.unlink()
    return inner(op, args)


def _temp_left_behind(target_dir: Path, final: Path, data: bytes) -> None:
    from persyk_session import _fsutil

    temp = target_dir / f".session.jsonl.{os.getpid()}.left.tmp"
    _fsutil.write_new_file(temp, data)
    try:
        _fsutil.link_new(temp, final)
    except FileExistsError:
        raise _append._exists() from None
    _fsutil.unlink_quietly(temp)
    _fsutil.fsync_directory(target_dir)


# Recovery (RCV-1, RCV-4, RCV-6).


def _recovers_on_read(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    if op in ("validate", "context", "info", "read") and isinstance(args.get("session"), str):
        inner("recover", {"session": args["session"]})
    return inner(op, args)


def _fragment_dropped(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    body = inner(op, args)
    result = result_of(body)
    file = session_file(args)
    if op == "recover" and result and result.get("preserved") and file is not None:
        with contextlib.suppress(OSError):
            (file.parent / result["preserved"]).unlink()
        return {"result": {**result, "preserved": None}}
    return body


def _valid_tail_truncated(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    file = session_file(args)
    before = file.read_bytes() if op == "recover" and file is not None and file.is_file() else b""
    body = inner(op, args)
    result = result_of(body)
    if file is None or result is None or result.get("action") != "newline-added":
        return body
    cut = before.rfind(b"\n") + 1
    fragment = before[cut:]
    name = f"recovery/fragment-{hashlib.sha256(fragment).hexdigest()[:16]}"
    (file.parent / "recovery").mkdir(exist_ok=True)
    (file.parent / name).write_bytes(fragment)
    os.truncate(file, cut)
    return {"result": {"action": "truncated", "preserved": name}}


def _tail_limit_one_byte_over() -> AbstractContextManager[Any]:
    # RCV-10: "longer than 1,048,576 bytes" read as "longer than the record and its LF".
    stack = contextlib.ExitStack()
    for module in (_recovery, _recovery_plan):
        stack.enter_context(mock.patch.object(module, "MAX_RECORD_BYTES", 1_048_577))
    return stack


# Batch size (APP-8).


def _utf16_units(data: bytes) -> int:
    return len(data.decode("utf-8", "replace").encode("utf-16-le")) // 2


def _batch_in_utf16_units(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    """APP-8's 4 MiB measured as a string's length: UTF-16 code units, not bytes."""
    if op != "append":
        return inner(op, args)
    records, file = args.get("records"), args.get("recordsFile")
    if isinstance(records, list):
        units = sum(_utf16_units(json.dumps(item, ensure_ascii=False,
                                            separators=(",", ":")).encode()) + 1
                    for item in records)
    elif isinstance(file, str) and Path(file).is_file():
        units = _utf16_units(Path(file).read_bytes())
    else:
        return inner(op, args)
    if units > _append_plan.MAX_BATCH_BYTES:
        return inner(op, args)
    with mock.patch.object(_append_plan, "MAX_BATCH_BYTES", 4 * _append_plan.MAX_BATCH_BYTES):
        return inner(op, args)


def _records_file_lines_copied(inner: Dispatch, op: str, args: dict[str, Any]
                               ) -> dict[str, Any]:
    """REC-22: each recordsFile line written as given, the CR of a CRLF kept."""
    file = args.get("recordsFile")
    crlf = (op == "append" and isinstance(file, str) and Path(file).is_file()
            and b"\r\n" in Path(file).read_bytes())
    if not crlf:
        return inner(op, args)
    return _after_write(lambda tail: tail.replace(b"\n", b"\r\n"),
                        ops=frozenset({"append"}))(inner, op, args)


_thread_guard = threading.Lock()

MISTAKES: tuple[Mistake, ...] = (
    Mistake("cursor-is-an-entry-index", "cursors",
            "the cursor is the next entry's index as text: readable, not bound to a session",
            around(_cursor_is_an_index), breaks=("CTX-24",)),
    Mistake("cursor-session-unchecked", "cursors",
            "the cursor's session fingerprint is never compared", patching(
                lambda: mock.patch.object(_paging, "decode_cursor", _offset_alone)),
            breaks=("CTX-24",)),
    Mistake("cursor-resyncs-to-next-entry", "cursors",
            "an offset cursor into a replaced file continues at the next entry start",
            patching(lambda: mock.patch.object(_index.SessionIndex, "position_at_offset",
                                               _next_entry_at_or_after)),
            allowed="no rule says what a cursor means once session.jsonl is replaced by "
            "another file under the same header (CTX-24 ties it to the session, APP-10 only "
            "appends); a gap for the contract, not a case"),
    Mistake("cursor-after-full-last-page", "cursors",
            "a full last page still hands out a cursor (to an empty page)",
            around(_cursor_after_full_last_page), breaks=("CTX-24",)),
    Mistake("lock-none", "locks", "no file lock at all, only a lock inside the process",
            patching(_lock_patch(_in_process_only)), breaks=("APP-5", "RCV-2")),
    Mistake("lock-data-file-only", "locks",
            "the lock is taken on session.jsonl, never on session.lock",
            patching(_lock_patch(_data_file_only)), breaks=("APP-5",)),
    Mistake("lock-file-deleted", "locks", "session.lock unlinked after each mutation",
            patching(_lock_patch(_deleted_after)), breaks=("APP-5",)),
    Mistake("lock-after-validation", "locks",
            "the committed file validated before the lock is taken, refused without waiting",
            around(_validated_before_locking), breaks=("APP-7", "APP-6")),
    Mistake("lock-waits-forever", "locks", "flock without LOCK_NB: lockTimeout ignored",
            patching(lambda: mock.patch.object(_lock, "lock_timeout",
                                               lambda timeout=None: 3600.0)),
            breaks=("APP-6",)),
    Mistake("lock-own-bound", "locks",
            "lockTimeout ignored: a held lock is waited for a bound of the writer's own (5 s)",
            patching(lambda: mock.patch.object(_lock, "lock_timeout",
                                               lambda timeout=None: 5.0)),
            breaks=("APP-6",)),
    Mistake("write-crlf", "CR/LF and bytes on write", "records written with CRLF endings",
            around(_after_write(lambda tail: tail.replace(b"\n", b"\r\n"))),
            breaks=("REC-22",)),
    Mistake("write-records-file-lines-copied", "CR/LF and bytes on write",
            "the lines of a recordsFile copied as given: the CR of a CRLF line written back",
            around(_records_file_lines_copied), breaks=("REC-22",)),
    Mistake("write-lf-before-record", "CR/LF and bytes on write",
            "the separator written before each record, none after the last",
            around(_after_write(lambda tail: b"\n" + tail[:-1])), breaks=("REC-22", "APP-10")),
    Mistake("write-bom-on-create", "CR/LF and bytes on write",
            "create writes a UTF-8 byte order mark (a Windows text writer)",
            around(_after_write(lambda tail: b"\xef\xbb\xbf" + tail,
                                ops=frozenset({"create"}))), breaks=("REC-13", "REC-22")),
    Mistake("write-normalizes-line-endings", "CR/LF and bytes on write",
            "an append rewrites the file with LF endings", around(_after_write(
                lambda data: data.replace(b"\r\n", b"\n"), ops=frozenset({"append", "remove"}),
                whole=True)), breaks=("APP-10", "REC-22")),
    Mistake("write-terminates-unterminated-tail", "CR/LF and bytes on write",
            "an append first adds the LF a torn last line lacks", around(_terminate_first),
            breaks=("RCV-1", "APP-7")),
    Mistake("write-go-html-escape", "CR/LF and bytes on write",
            "Go's json.Marshal: <, >, &, U+2028 and U+2029 written as \\u escapes",
            around(_after_write(_each_line(_go_marshal))),
            allowed="the written records are JSON-value-equal; REC-24 (SHOULD) asks for raw "
            "UTF-8 only for non-ASCII text"),
    Mistake("write-py-ensure-ascii", "CR/LF and bytes on write",
            "json.dumps default ensure_ascii=True: non-ASCII written as \\u escapes",
            around(_after_write(_each_line(lambda v: json.dumps(v, separators=(",", ":"))))),
            allowed="REC-24 is a SHOULD; the records are JSON-value-equal"),
    Mistake("write-py-sort-keys", "CR/LF and bytes on write",
            "json.dumps(sort_keys=True): members written in sorted order", around(_after_write(
                _each_line(lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False,
                                                separators=(",", ":"))))),
            allowed="member order is free: writes are compared as JSON values (equalsRecords)"),
    Mistake("write-py-default-separators", "CR/LF and bytes on write",
            "json.dumps default separators: a space after , and :", around(_after_write(
                _each_line(lambda v: json.dumps(v, ensure_ascii=False)))),
            allowed="REC-24 (no insignificant whitespace) is a SHOULD"),
    Mistake("js-batch-size-in-utf16-units", "JavaScript",
            "the 4 MiB batch limit measured as string length (UTF-16 code units), not bytes",
            around(_batch_in_utf16_units), breaks=("APP-8",)),
    Mistake("batch-all-or-nothing", "prefix commits",
            "a refused record rolls the whole batch back (a transaction habit)",
            around(_all_or_nothing), breaks=("APP-14",)),
    Mistake("batch-continues-after-refusal", "prefix commits",
            "the records after a refused one are still written", around(
                _continues_after_refusal), breaks=("APP-14",)),
    Mistake("batch-present-written-again", "prefix commits",
            "a record already present is written again", around(_present_written_again),
            breaks=("APP-12",)),
    Mistake("batch-rebased-onto-tip", "prefix commits",
            "the first record's parentId replaced by the last entry's id", around(
                _rebased_onto_tip), breaks=("APP-15",)),
    Mistake("batch-equality-by-bytes", "prefix commits",
            "an existing id compared by its serialized bytes: the same record with another "
            "member order is a conflict", around(_conflict_by_bytes), breaks=("APP-12",)),
    Mistake("create-leaves-directories", "cleanup of a failed create",
            "a failed create leaves the directories it made", patching(
                lambda: mock.patch.object(_append, "_publish", _publish_without_cleanup)),
            breaks=("APP-27",)),
    Mistake("create-truncates-existing", "cleanup of a failed create",
            "create opens with O_TRUNC, not O_EXCL: an existing session is replaced",
            around(_create_truncates), breaks=("APP-2",)),
    Mistake("create-leaves-temp-file", "cleanup of a failed create",
            "a create that finds a session leaves its temporary header file", patching(
                lambda: mock.patch.object(_append, "_publish_in", _temp_left_behind)),
            allowed="no rule forbids a leftover file inside the session directory (APP-27 "
            "speaks of directories); and a create that checks for session.jsonl first leaves "
            "one only when another creator wins the race to the link, which no case arranges"),
    Mistake("recover-on-read", "recovery", "validate, context, info and read repair first",
            around(_recovers_on_read), breaks=("RCV-1", "CTX-19")),
    Mistake("recover-drops-fragment", "recovery", "the cut fragment is not preserved",
            around(_fragment_dropped), breaks=("RCV-6",)),
    Mistake("recover-tail-limit-off-by-one", "recovery",
            "a tail of 1,048,577 bytes recovered: the limit counts the LF recovery would add",
            patching(_tail_limit_one_byte_over), breaks=("RCV-10",)),
    Mistake("recover-truncates-valid-tail", "recovery",
            "an unterminated last line that is a valid record is cut, not completed",
            around(_valid_tail_truncated), breaks=("RCV-4",)),
)
