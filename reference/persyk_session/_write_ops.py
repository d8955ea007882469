"""The protocol operations of the append, recover and paged-read capabilities.

Each returns the JSON result object of docs/architecture.md ("Adapter operations"); a domain
failure is a result with an ``error`` key, a :class:`UsageError` propagates (as in
``operations.py``, which lists these in ``OPERATIONS``).
"""

from __future__ import annotations

from typing import Any

from ._append import (
    append_records,
    create_session,
    items_from_objects,
    read_records_file,
    remove_entry,
)
from ._args import leaf_selector, session_arg, string_arg
from ._errors import Code, ContractError, UsageError
from ._paging import read_page
from ._recovery import recover

__all__ = ["op_append", "op_create", "op_read", "op_recover", "op_remove"]


def _lock_timeout(args: dict[str, Any]) -> float | None:
    # APP-6: the caller may bound the wait for the session lock; absent = our own bound.
    value = args.get("lockTimeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise UsageError(Code.USAGE, "the argument 'lockTimeout' must be a non-negative number")
    return float(value)


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


def op_append(args: dict[str, Any]) -> dict[str, Any]:
    """Append ``records`` (JSON values) or ``recordsFile`` (raw JSONL bytes) as one batch."""
    has_records = "records" in args
    has_file = "recordsFile" in args
    if has_records == has_file:
        raise UsageError(Code.USAGE, "give exactly one of 'records' and 'recordsFile'")
    if has_records:
        records = args["records"]
        if not isinstance(records, list):
            raise UsageError(Code.USAGE, "the argument 'records' must be an array")
        items = items_from_objects(records)
    else:
        name = string_arg(args, "recordsFile")
        assert name is not None
        items = read_records_file(name)
    leaf = leaf_selector(args)
    try:
        result = append_records(session_arg(args), items, leaf=leaf, timeout=_lock_timeout(args))
    except ContractError as error:
        return _append_failure(error)
    return result.to_json()


def op_remove(args: dict[str, Any]) -> dict[str, Any]:
    """Append a ``message.removed`` of ``targetId`` onto the selected leaf (APP-18)."""
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
