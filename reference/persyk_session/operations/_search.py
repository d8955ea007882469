"""The search operations: discover, search and open-result (docs/spec.md section SRCH). Roots
and sessions that cannot be read are diagnostics of a successful result (SRCH-6, SRCH-23..25)."""

from __future__ import annotations

import os
from typing import Any

from .._errors import Code, ContractError, UsageError
from ..search._discovery import discover, open_result, search
from ..search._judge import DEFAULT_LIMIT, MAX_LIMIT, Pin
from ..search._roots import documents_folder, roots_from_args
from ..search._textmatch import QUERY_LIMIT, Query
from ._args import error_result
from ._mode import chosen_engine

__all__ = ["op_discover", "op_open_result", "op_search"]


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
        return error_result(error.diagnostics[0])
    return discover(roots, engine=chosen_engine()).to_json()


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
        page = search(roots, Query.of(text), min(limit, MAX_LIMIT), cursor,
                      engine=chosen_engine())
    except ContractError as error:
        return error_result(error.diagnostics[0])
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
        return open_result(location, session_id, leaf, pin, engine=chosen_engine())
    except ContractError as error:
        return error_result(error.diagnostics[0])


