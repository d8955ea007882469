"""Every operation of the reference, read and write: one function each, returning the JSON
result object.

The CLI (``--json``), the conformance adapter and the runner's in-process fast path all call
these, so their results are the same objects and there is one path per operation
(docs/architecture.md, "JSON results"). A domain failure is a result ``{"error": diagnostic}``
(append and remove add ``committed`` and ``alreadyPresent``); a :class:`UsageError` propagates.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .._errors import Code, ContractError, Diagnostic, UsageError
from ..read._context import (
    DEFAULT_TARGET,
    HISTORY_BODY_TYPES,
    TARGETS,
    LeafSelector,
    ancestry,
    effective_history,
    select_leaf,
    to_generic_context,
    validate_for_target,
)
from ..read._paging import read_page
from ..read._store import OpenSession, open_session
from ..realtime._replay_run import read_script_file, replay
from ..realtime._sanitize import sanitize, sanitize_url
from ..search._discovery import discover, open_result, search
from ..search._judge import DEFAULT_LIMIT, MAX_LIMIT, Pin
from ..search._roots import documents_folder, roots_from_args
from ..search._textmatch import QUERY_LIMIT, Query
from ..write._append import (
    append_records,
    create_session,
    items_from_jsonl_stream,
    items_from_objects,
    read_records_file,
    remove_entry,
)
from ..write._lock import check_lock_timeout
from ..write._recovery import recover
from ._args import leaf_selector, path_arg, session_arg, string_arg
from ._media import (
    CAPTURE_OPERATIONS,
    op_asset_verify,
    op_asset_write,
    op_capture_finish,
    op_capture_start,
    op_capture_write,
    op_delete_session,
    op_recover_recording,
)

__all__ = [
    "OPERATIONS",
    "Operation",
    "op_append",
    "op_asset_verify",
    "op_asset_write",
    "op_capture_finish",
    "op_capture_start",
    "op_capture_write",
    "op_context",
    "op_create",
    "op_delete_session",
    "op_discover",
    "op_info",
    "op_open_result",
    "op_read",
    "op_recover",
    "op_recover_recording",
    "op_remove",
    "op_replay",
    "op_sanitize",
    "op_search",
    "op_validate",
]

Operation = Callable[[dict[str, Any]], dict[str, Any]]

VIEWS = frozenset({"history", "generic", "target"})


def _error(diagnostic: Diagnostic) -> dict[str, Any]:
    return {"error": diagnostic.to_json()}



def _first_problem(session: OpenSession) -> Diagnostic | None:
    """The first diagnostic of an invalid session (DIAG-5: the lowest line): it blocks every
    projection (CTX-20)."""
    if session.index.valid:
        return None
    if session.index.diagnostics:
        return session.index.diagnostics[0]
    # Unreachable with a valid index builder (no header means a diagnostic), kept for safety.
    return Diagnostic(Code.HEADER_NOT_FIRST, line=1, detail="the session has no header")


def op_validate(args: dict[str, Any]) -> dict[str, Any]:
    """``{"valid", "errors", "truncated"}``; DIAG-4: errors sorted by line, at most 100, and
    ``truncated`` when the index saw more."""
    session = open_session(session_arg(args))
    index = session.index
    return {
        "valid": index.valid,
        "errors": [d.to_json() for d in index.diagnostics],
        "truncated": index.truncated,
    }


def op_context(args: dict[str, Any]) -> dict[str, Any]:
    """The effective history of the selected leaf (``view`` "history", the default), or the
    generic context (``view`` "generic"), or what a target API accepts (``view`` "target",
    optional ``target``)."""
    view = args.get("view", "history")
    if view not in VIEWS:
        raise UsageError(Code.USAGE, "the argument 'view' must be history, generic or target")
    target = args.get("target", DEFAULT_TARGET)
    if target not in TARGETS:
        raise UsageError(Code.USAGE, "the argument 'target' names no known target")
    selector = leaf_selector(args)
    # The path's bodies come from the validating pass, parsed once (issue 27).
    session = open_session(session_arg(args), keep=HISTORY_BODY_TYPES)
    problem = _first_problem(session)
    if problem is not None:
        return _error(problem)
    try:
        leaf = select_leaf(session.index, selector)
        with session.bodies() as load:
            history = effective_history(session.index, leaf, load)
    except ContractError as error:
        return _error(error.diagnostics[0])
    if view == "history":
        return history.to_json()
    generic = to_generic_context(history)
    if view == "generic":
        return {"leaf": leaf, "messages": generic}
    messages, omissions = validate_for_target(generic, target)
    return {
        "leaf": leaf,
        "target": target,
        "messages": messages,
        "omissions": [o.to_json() for o in omissions],
    }


def op_info(args: dict[str, Any]) -> dict[str, Any]:
    """Header, global name/archive/labels, counts and default leaf, from the index alone; the
    session's identity is its header ``id``, never the directory name (HDR-9)."""
    session = open_session(session_arg(args))
    problem = _first_problem(session)
    if problem is not None:
        return _error(problem)
    index = session.index
    return {
        "header": index.header,
        "name": index.name,
        "archived": index.archived,
        "labels": dict(index.labels),
        "counts": {"entries": len(index.entries), "byType": index.counts_by_type()},
        "defaultLeaf": index.default_leaf,
    }


# --- the append, recover and paged-read capabilities ---------------------------------------


def _lock_timeout(args: dict[str, Any]) -> float | None:
    # APP-6: the caller may bound the wait for the session lock; absent = our own bound.
    value = args.get("lockTimeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(Code.USAGE, "the argument 'lockTimeout' must be a non-negative number")
    return check_lock_timeout(value, "the argument 'lockTimeout'")


def _append_failure(error: ContractError) -> dict[str, Any]:
    return {"error": error.diagnostics[0].to_json(), "committed": [], "alreadyPresent": []}


def op_create(args: dict[str, Any]) -> dict[str, Any]:
    """``{"header": {...}}`` or ``{"error": D}`` (SESSION_EXISTS, HEADER_INVALID, IO_FAILED)."""
    try:
        header = create_session(
            session_arg(args),
            id=string_arg(args, "id", required=False),
            timestamp=string_arg(args, "timestamp", required=False),
        )
    except ContractError as error:
        return {"error": error.diagnostics[0].to_json()}
    return {"header": header}


def op_append(
    args: dict[str, Any], *, records_stream: Callable[[int], bytes] | None = None
) -> dict[str, Any]:
    """Append ``records`` (JSON values) or ``recordsFile`` (raw JSONL bytes) as one batch.

    ``records_stream`` is the CLI's ``--records -``: raw JSONL read from standard input in
    place of either argument (the adapter never passes it: its stdin is the protocol).
    """
    given = ("records" in args) + ("recordsFile" in args) + (records_stream is not None)
    if given != 1:
        raise UsageError(Code.USAGE, "give exactly one of 'records' and 'recordsFile'")
    if records_stream is not None:
        items = items_from_jsonl_stream(records_stream)
    elif "records" in args:
        records = args["records"]
        if not isinstance(records, list):
            raise UsageError(Code.USAGE, "the argument 'records' must be an array")
        items = items_from_objects(records)
    else:
        items = read_records_file(path_arg(args, "recordsFile"))
    leaf = leaf_selector(args)
    try:
        result = append_records(session_arg(args), items, leaf=leaf, timeout=_lock_timeout(args))
    except ContractError as error:
        return _append_failure(error)
    return result.to_json()


def op_remove(args: dict[str, Any]) -> dict[str, Any]:
    """Append a ``message.removed`` of ``targetId`` onto the caller's explicit leaf (APP-18)."""
    target = string_arg(args, "targetId")
    assert target is not None
    try:
        result = remove_entry(
            session_arg(args),
            target,
            id=string_arg(args, "id"),
            timestamp=string_arg(args, "timestamp"),
            leaf=leaf_selector(args),
            timeout=_lock_timeout(args),
        )
    except ContractError as error:
        return _append_failure(error)
    return result.to_json()


def op_recover(args: dict[str, Any]) -> dict[str, Any]:
    """``{"action", "preserved"}`` or ``{"error": D}``."""
    try:
        result = recover(session_arg(args), timeout=_lock_timeout(args))
    except ContractError as error:
        return {"error": error.diagnostics[0].to_json()}
    return result.to_json()


def op_read(args: dict[str, Any]) -> dict[str, Any]:
    """``{"entries", "nextCursor"}`` or ``{"error": D}``."""
    page_size = args.get("pageSize")
    if isinstance(page_size, bool) or not isinstance(page_size, int):
        raise UsageError(Code.USAGE, "the argument 'pageSize' must be an integer")
    cursor = args.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise UsageError(Code.USAGE, "the argument 'cursor' must be a string or null")
    try:
        page = read_page(session_arg(args), page_size, cursor)
    except ContractError as error:
        return {"error": error.diagnostics[0].to_json()}
    return page.to_json()


def op_sanitize(args: dict[str, Any]) -> dict[str, Any]:
    """``{"payload", "redactions"}``, and ``"url"`` when one is given: the credentials of a
    provider payload and of an endpoint removed (RT-1, RT-2, RT-29..RT-32). Pure: no file."""
    if "payload" not in args:
        raise UsageError(Code.USAGE, "the argument 'payload' is required")
    cleaned = sanitize(args["payload"])
    result: dict[str, Any] = {"payload": cleaned.payload, "redactions": list(cleaned.redactions)}
    url = string_arg(args, "url", required=False)
    if url is not None:
        result["url"] = sanitize_url(url)
    return result
# --- the search capability (SRCH) ----------------------------------------------------------


def _find_documents() -> str:
    """SRCH-22 on this machine: only when the caller named no Documents folder."""
    import sys

    def read_text(path: str) -> str | None:
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(1 << 16)
        except (OSError, ValueError):
            return None

    return documents_folder(sys.platform, os.environ, read_text)


def op_discover(args: dict[str, Any]) -> dict[str, Any]:
    """``{"sessions", "diagnostics"}`` from headers alone (SRCH-28), or ``{"error": D}``."""
    try:
        roots = roots_from_args(args, find_documents=_find_documents)
    except ContractError as error:
        return _error(error.diagnostics[0])
    return discover(roots).to_json()


def op_search(args: dict[str, Any]) -> dict[str, Any]:
    """``{"results", "nextCursor", "diagnostics"}`` or ``{"error": D}`` (SRCH-29..SRCH-38)."""
    text = args.get("query")
    if not isinstance(text, str) or len(text) > QUERY_LIMIT:
        raise UsageError(Code.USAGE, "the argument 'query' must be a string of at most 256 "
                         "code points")
    limit = args.get("limit", DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UsageError(Code.USAGE, "the argument 'limit' must be a positive integer")
    cursor = args.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise UsageError(Code.USAGE, "the argument 'cursor' must be a string or null")
    try:
        roots = roots_from_args(args, find_documents=_find_documents)
        page = search(roots, Query.of(text), min(limit, MAX_LIMIT), cursor)
    except ContractError as error:
        return _error(error.diagnostics[0])
    return page.to_json()


def op_open_result(args: dict[str, Any]) -> dict[str, Any]:
    """The context of a result's pinned leaf, or ``{"error": D}`` (RESULT_STALE, SRCH-39)."""
    result = args.get("result")
    if not isinstance(result, dict):
        raise UsageError(Code.USAGE, "the argument 'result' must be a search result object")
    location, session_id = result.get("location"), result.get("sessionId")
    leaf, pin_text = result.get("leaf", ...), result.get("pin")
    pin = Pin.decode(pin_text) if isinstance(pin_text, str) else None
    if (
        not isinstance(location, str) or not os.path.isabs(location)
        or not isinstance(session_id, str)
        or not (leaf is None or isinstance(leaf, str))
        or pin is None
    ):
        raise UsageError(Code.USAGE, "the result needs location, sessionId, leaf and pin as "
                         "search returned them")
    try:
        return open_result(location, session_id, leaf, pin)
    except ContractError as error:
        return _error(error.diagnostics[0])


# CAP-16: the records a restart reads again (evidence, messages and removals of the ancestry).
_RESTART_TYPES = frozenset({"realtime_event", "message", "message.removed"})


def _realtime_ancestry(opened: OpenSession, leaf: LeafSelector) -> list[dict[str, Any]]:
    """The evidence, messages and removals on the continuation's ancestry, root first."""
    if leaf.kind != "id":
        return []
    chain = [meta for meta in ancestry(opened.index, leaf.id) if meta.type in _RESTART_TYPES]
    with opened.bodies() as load:
        return [load(meta) for meta in chain]


def op_replay(args: dict[str, Any]) -> dict[str, Any]:
    """Play a provider-event script into the session from the caller's explicit leaf (RT-3..RT-10,
    RT-34..RT-37), with a capture of ``recording`` beside it when given: ``{"appended",
    "evidence", "connections", "media", "assets", "notReplayed", "halted"}``."""
    session = session_arg(args)
    script = string_arg(args, "script")
    assert script is not None
    if "leaf" not in args:
        raise UsageError(Code.USAGE, "replay needs an explicit leaf (an entry id, or null)")
    leaf = leaf_selector(args)
    data = read_script_file(script)
    opened = open_session(session)
    problem = _first_problem(opened)
    if problem is not None:
        return _error(problem)
    header = opened.index.header or {}  # a valid session always has its header (HDR-1)
    start = str(header["timestamp"])  # RT-35: the virtual clock's start
    recording = string_arg(args, "recording", required=False)
    try:
        result = replay(session, data, leaf, start, recording=recording,
                        timeout=_lock_timeout(args), prior=_realtime_ancestry(opened, leaf))
    except ContractError as error:
        return _error(error.diagnostics[0])
    return result.to_json()


# Dispatch table of the protocol operations; the adapter and the CLI go through it.
OPERATIONS: dict[str, Operation] = {
    "validate": op_validate,
    "context": op_context,
    "info": op_info,
    "create": op_create,
    "append": op_append,
    "remove": op_remove,
    "recover": op_recover,
    "read": op_read,
    # the assets and capture capabilities (_capture_ops)
    **CAPTURE_OPERATIONS,
    "sanitize": op_sanitize,
    "replay": op_replay,
    "discover": op_discover,
    "search": op_search,
    "open-result": op_open_result,
}
