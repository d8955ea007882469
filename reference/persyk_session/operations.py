"""One function per protocol operation, returning the JSON result object.

The CLI (``--json``), the conformance adapter and the runner's in-process fast path all call
these, so their results are the same objects (docs/architecture.md, "JSON results").
A domain failure is a result ``{"error": diagnostic}``; a :class:`UsageError` propagates.
Other engineers add operations to :data:`OPERATIONS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._args import leaf_selector, session_arg
from ._context import (
    DEFAULT_TARGET,
    TARGETS,
    effective_history,
    select_leaf,
    to_generic_context,
    validate_for_target,
)
from ._errors import Code, ContractError, Diagnostic, UsageError
from ._store import OpenSession, open_session
from ._write_ops import op_append, op_create, op_read, op_recover, op_remove

__all__ = [
    "OPERATIONS",
    "Operation",
    "leaf_selector",
    "op_context",
    "op_info",
    "op_validate",
]

Operation = Callable[[dict[str, Any]], dict[str, Any]]

VIEWS = frozenset({"history", "generic", "target"})


def _error(diagnostic: Diagnostic) -> dict[str, Any]:
    return {"error": diagnostic.to_json()}


def _first_problem(session: OpenSession) -> Diagnostic | None:
    """The first diagnostic of an invalid session: it blocks authoritative projection (PROJ-1)."""
    if session.index.valid:
        return None
    if session.index.diagnostics:
        return session.index.diagnostics[0]
    # Unreachable with a valid index builder (no header means a diagnostic), kept for safety.
    return Diagnostic(Code.HEADER_NOT_FIRST, line=1, detail="the session has no header")


def op_validate(args: dict[str, Any]) -> dict[str, Any]:
    """``{"valid", "errors", "truncated"}``; errors sorted by line, at most 100."""
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
    session = open_session(session_arg(args))
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
    """Header, global name/archive/labels, counts and default leaf, from the index alone."""
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


# Dispatch table of the protocol operations; the adapter and the CLI go through it.
OPERATIONS: dict[str, Operation] = {
    "validate": op_validate,
    "context": op_context,
    "info": op_info,
    # append, recover and paged-read capabilities (_write_ops.py)
    "create": op_create,
    "append": op_append,
    "remove": op_remove,
    "recover": op_recover,
    "read": op_read,
}
