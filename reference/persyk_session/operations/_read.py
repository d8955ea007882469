"""The read operations: validate, context, info and paged read (docs/implementers/protocol.md;
docs/spec.md sections CTX and DIAG). Each opens the session read-only and never takes a lock
(CTX-19)."""

from __future__ import annotations

from typing import Any

from .._errors import Code, ContractError, Diagnostic, UsageError
from ..read._store import OpenSession, open_session
from ._args import error_result, leaf_selector, session_arg
from ._mode import chosen_engine

# validate and info need the index alone: leaf selection and context (read/_context.py) are
# imported by op_context, paging and its read cache (read/_paging.py, read/_read_cache.py,
# read/_live.py) by op_read, so that a small validate, the commonest call, loads neither
# (tests/reference/cli/test_import_pins.py).

__all__ = ["first_problem", "op_context", "op_info", "op_read", "op_validate"]

VIEWS = frozenset({"history", "generic", "target"})


def first_problem(session: OpenSession) -> Diagnostic | None:
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
    session = open_session(session_arg(args), engine=chosen_engine())
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
    from ..read._context import (
        DEFAULT_TARGET,
        HISTORY_BODY_TYPES,
        TARGETS,
        effective_history,
        select_leaf,
        to_generic_context,
        validate_for_target,
    )

    view = args.get("view", "history")
    if view not in VIEWS:
        raise UsageError(Code.USAGE, "the argument 'view' must be history, generic or target")
    target = args.get("target", DEFAULT_TARGET)
    if target not in TARGETS:
        raise UsageError(Code.USAGE, "the argument 'target' names no known target")
    selector = leaf_selector(args)
    # The engine may keep the bodies of the history types from the validating pass (the fast
    # one does: fast/_bodies_fast.py), for the projection to read back from memory.
    session = open_session(session_arg(args), keep=HISTORY_BODY_TYPES, engine=chosen_engine())
    problem = first_problem(session)
    if problem is not None:
        return error_result(problem)
    try:
        leaf = select_leaf(session.index, selector)
        with session.bodies() as load:
            history = effective_history(session.index, leaf, load)
    except ContractError as error:
        return error_result(error.diagnostics[0])
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
    session = open_session(session_arg(args), engine=chosen_engine())
    problem = first_problem(session)
    if problem is not None:
        return error_result(problem)
    index = session.index
    return {
        "header": index.header,
        "name": index.name,
        "archived": index.archived,
        "labels": dict(index.labels),
        "counts": {"entries": len(index.entries), "byType": index.counts_by_type()},
        "defaultLeaf": index.default_leaf,
    }


def op_read(args: dict[str, Any]) -> dict[str, Any]:
    """``{"entries", "nextCursor"}`` or ``{"error": D}``."""
    from ..read._paging import read_page

    page_size = args.get("pageSize")
    if isinstance(page_size, bool) or not isinstance(page_size, int):
        raise UsageError(Code.USAGE, "the argument 'pageSize' must be an integer")
    cursor = args.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise UsageError(Code.USAGE, "the argument 'cursor' must be a string or null")
    try:
        page = read_page(session_arg(args), page_size, cursor, engine=chosen_engine())
    except ContractError as error:
        return {"error": error.diagnostics[0].to_json()}
    return page.to_json()


