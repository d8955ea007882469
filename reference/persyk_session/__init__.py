"""Reference implementation of the Persyk session format v1 (see docs/spec.md)."""

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
from ._version import __version__ as __version__
