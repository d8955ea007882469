"""Reference implementation of the Persyk session format v1 (see docs/spec.md)."""

from ._context import (
    History,
    LeafSelector,
    Omission,
    ancestry,
    effective_history,
    select_leaf,
    to_generic_context,
    validate_for_target,
)
from ._errors import Code, ContractError, Diagnostic, PersykError, UsageError
from ._session import EntryMeta, IndexBuilder, SessionIndex
from ._store import OpenSession, open_session, resolve_session_file

__all__ = [
    "Code",
    "ContractError",
    "Diagnostic",
    "EntryMeta",
    "History",
    "IndexBuilder",
    "LeafSelector",
    "Omission",
    "OpenSession",
    "PersykError",
    "SessionIndex",
    "UsageError",
    "ancestry",
    "effective_history",
    "open_session",
    "resolve_session_file",
    "select_leaf",
    "to_generic_context",
    "validate_for_target",
]
__version__ = "0.1.0"
