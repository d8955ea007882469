"""The write operations: create, append (one batch), remove and recover
(docs/implementers/protocol.md; docs/spec.md sections APP and RCV). A refused write is a result
``{"error": D}``; append and remove add ``committed`` and ``alreadyPresent``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import Code, ContractError, UsageError
from ..write._append import (
    append_records,
    create_session,
    items_from_jsonl_stream,
    items_from_objects,
    read_records_file,
    remove_entry,
)
from ..write._recovery import recover
from ._args import leaf_selector, lock_timeout_arg, path_arg, session_arg, string_arg
from ._mode import chosen_engine

__all__ = ["op_append", "op_create", "op_recover", "op_remove"]


def _append_failure(error: ContractError) -> dict[str, Any]:
    return {"error": error.diagnostics[0].to_json(), "committed": [], "alreadyPresent": []}


def op_create(args: dict[str, Any]) -> dict[str, Any]:
    """``{"header": {...}}`` or ``{"error": D}`` (SESSION_EXISTS, HEADER_INVALID, IO_FAILED)."""
    try:
        header = create_session(
            session_arg(args),
            id=string_arg(args, "id", required=False),
            timestamp=string_arg(args, "timestamp", required=False),
            engine=chosen_engine(),
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
    engine = chosen_engine()
    if records_stream is not None:
        items = items_from_jsonl_stream(records_stream, engine=engine)
    elif "records" in args:
        records = args["records"]
        if not isinstance(records, list):
            raise UsageError(Code.USAGE, "the argument 'records' must be an array")
        items = items_from_objects(records, engine=engine)
    else:
        items = read_records_file(path_arg(args, "recordsFile"), engine=engine)
    leaf = leaf_selector(args)
    try:
        result = append_records(session_arg(args), items, leaf=leaf,
                                timeout=lock_timeout_arg(args), engine=engine)
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
            timeout=lock_timeout_arg(args),
            engine=chosen_engine(),
        )
    except ContractError as error:
        return _append_failure(error)
    return result.to_json()


def op_recover(args: dict[str, Any]) -> dict[str, Any]:
    """``{"action", "preserved"}`` or ``{"error": D}``."""
    try:
        result = recover(session_arg(args), timeout=lock_timeout_arg(args),
                         engine=chosen_engine())
    except ContractError as error:
        return {"error": error.diagnostics[0].to_json()}
    return result.to_json()


