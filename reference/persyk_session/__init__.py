"""Reference implementation of the Persyk session format v1 (see docs/spec.md).

The public names resolve on first use (PEP 562): ``import persyk_session`` imports nothing of
the reader or the writer, so that a command loads only what it runs.

The core has no mode and no I/O beyond its shells; read it in this order:

1. ``_errors`` (the one error family and its codes), ``_lines`` (cutting bytes into lines);
2. ``read/_grammar`` and ``read/_records`` (one line to one JSON object: REC);
3. ``read/_schema`` (header and entry schemas: ENV, HDR, MSG, BLK, ENT);
4. ``read/_entries``, ``read/_graph``, ``read/_index`` (the entry table, the graph rules, the
   index builder: ID, TREE);
5. ``read/_engine`` (the steps a faster twin may take over, as Protocols, and the readable
   engine), ``read/_feed`` (the per-line rules), ``read/_store`` (the read-only shell);
6. ``read/_context`` and ``read/_paging`` (leaf selection, history, pages: CTX), with the
   caches that keep them incremental, ``read/_live`` and ``read/_read_cache``;
7. ``write/_append_plan`` then ``write/_append``, ``write/_lock``, ``write/_prologue``,
   ``write/_versions``, ``write/_recovery_plan`` then ``write/_recovery`` (APP, RCV);
8. ``search/_textmatch``, ``search/_roots``, ``search/_judge``, ``search/_discovery`` (SRCH);
9. ``media/`` (assets and capture) and ``realtime/`` (sanitising and replay).

The edge chooses the engine: ``operations`` (which the CLI, ``cli/``, and the conformance
adapter, ``adapter.py``, call) reads ``PERSYK_SESSION_MODE``; ``fast/`` holds the fast engine.
Every public function takes ``engine`` and defaults to the readable one: the results are the
same.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:  # the names as mypy sees them
    from ._errors import Code, ContractError, Diagnostic, PersykError, UsageError
    from .read._context import (
        History,
        LeafSelector,
        Omission,
        ancestry,
        effective_history,
        select_leaf,
        to_generic_context,
        validate_for_target,
    )
    from .read._index import EntryMeta, IndexBuilder, SessionIndex
    from .read._paging import Page, read_page
    from .read._store import OpenSession, open_session, resolve_session_file
    from .write._append import (
        AppendResult,
        BatchItem,
        append_records,
        create_session,
        items_from_jsonl,
        items_from_objects,
        read_records_file,
        remove_entry,
    )
    from .write._recovery import RecoveryResult, recover

__all__ = [
    "AppendResult",
    "BatchItem",
    "Code",
    "ContractError",
    "Diagnostic",
    "EntryMeta",
    "History",
    "IndexBuilder",
    "LeafSelector",
    "Omission",
    "OpenSession",
    "Page",
    "PersykError",
    "RecoveryResult",
    "SessionIndex",
    "UsageError",
    "ancestry",
    "append_records",
    "create_session",
    "effective_history",
    "items_from_jsonl",
    "items_from_objects",
    "open_session",
    "read_page",
    "read_records_file",
    "recover",
    "remove_entry",
    "resolve_session_file",
    "select_leaf",
    "to_generic_context",
    "validate_for_target",
]

# Each public name and the module that defines it.
_HOME: dict[str, str] = {
    **dict.fromkeys(("Code", "ContractError", "Diagnostic", "PersykError", "UsageError"),
                    "._errors"),
    **dict.fromkeys(("History", "LeafSelector", "Omission", "ancestry", "effective_history",
                     "select_leaf", "to_generic_context", "validate_for_target"),
                    ".read._context"),
    **dict.fromkeys(("EntryMeta", "IndexBuilder", "SessionIndex"), ".read._index"),
    **dict.fromkeys(("Page", "read_page"), ".read._paging"),
    **dict.fromkeys(("OpenSession", "open_session", "resolve_session_file"), ".read._store"),
    **dict.fromkeys(("AppendResult", "BatchItem", "append_records", "create_session",
                     "items_from_jsonl", "items_from_objects", "read_records_file",
                     "remove_entry"), ".write._append"),
    **dict.fromkeys(("RecoveryResult", "recover"), ".write._recovery"),
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
