"""Every operation of the reference, read and write: one function each, returning the JSON
result object; resolved on first use, so a command imports only its own operations' modules.

The CLI (``--json``), the conformance adapter and the runner's in-process fast path all call
these, so their results are the same objects and there is one path per operation
(docs/maintainers/architecture.md, "JSON results"). A domain failure is a result ``{"error":
diagnostic}`` (append and remove add ``committed`` and ``alreadyPresent``); a :class:`UsageError`
propagates. Each passes the engine of ``PERSYK_SESSION_MODE`` (``_mode.chosen_engine``) into the
core.

Where each lives: ``_read`` (validate, context, info, read), ``_write`` (create, append,
remove, recover), ``_media`` (assets, capture, deletion), ``_search`` (discover, search,
open-result), ``_realtime`` (sanitize, replay). :data:`OPERATIONS` maps protocol names to them
without importing any (PEP 562 ``__getattr__`` for the ``op_*`` names).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from . import _mode  # noqa: F401  (refuses a misspelt PERSYK_SESSION_MODE at import)

if TYPE_CHECKING:  # the names as mypy sees them; at run time __getattr__ imports on first use
    from ._media import (
        op_asset_verify,
        op_asset_write,
        op_capture_finish,
        op_capture_start,
        op_capture_write,
        op_delete_session,
        op_recover_recording,
    )
    from ._read import op_context, op_info, op_read, op_validate
    from ._realtime import op_replay, op_sanitize
    from ._search import op_discover, op_open_result, op_search
    from ._write import op_append, op_create, op_recover, op_remove

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

# The protocol's operations (docs/implementers/protocol.md): name -> (module, function), in
# protocol order.
_TABLE: Mapping[str, tuple[str, str]] = {
    "validate": ("_read", "op_validate"),
    "context": ("_read", "op_context"),
    "info": ("_read", "op_info"),
    "create": ("_write", "op_create"),
    "append": ("_write", "op_append"),
    "remove": ("_write", "op_remove"),
    "recover": ("_write", "op_recover"),
    "read": ("_read", "op_read"),
    # the assets and capture capabilities
    "assetVerify": ("_media", "op_asset_verify"),
    "assetWrite": ("_media", "op_asset_write"),
    "captureStart": ("_media", "op_capture_start"),
    "captureWrite": ("_media", "op_capture_write"),
    "captureFinish": ("_media", "op_capture_finish"),
    "recoverRecording": ("_media", "op_recover_recording"),
    "deleteSession": ("_media", "op_delete_session"),
    "sanitize": ("_realtime", "op_sanitize"),
    "replay": ("_realtime", "op_replay"),
    "discover": ("_search", "op_discover"),
    "search": ("_search", "op_search"),
    "open-result": ("_search", "op_open_result"),
}
_HOME: Mapping[str, str] = {function: module for module, function in _TABLE.values()}


def _resolve(function: str) -> Operation:
    operation: Operation = getattr(importlib.import_module(f".{_HOME[function]}", __name__),
                                   function)
    return operation


class _Operations(MutableMapping[str, Operation]):
    """The dispatch table: its keys are known without an import; a lookup imports the one
    module that holds the operation. Assigning a name replaces that operation for the adapter
    and the CLI (the test fakes wrap the reference this way); deleting it restores it."""

    def __init__(self) -> None:
        self._replaced: dict[str, Operation] = {}
        # Resolved once: import_module on every request cost 5 us of each, a measurable share
        # of the adapter's small requests.
        self._resolved: dict[str, Operation] = {}

    def __getitem__(self, name: str) -> Operation:
        if name in self._replaced:
            return self._replaced[name]
        operation = self._resolved.get(name)
        if operation is None:
            module_function = _TABLE.get(name)
            if module_function is None:
                raise KeyError(name)
            operation = self._resolved[name] = _resolve(module_function[1])
        return operation

    def __setitem__(self, name: str, operation: Operation) -> None:
        if name not in _TABLE:
            raise KeyError(f"{name}: no such operation")
        self._replaced[name] = operation

    def __delitem__(self, name: str) -> None:
        del self._replaced[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_TABLE)

    def __len__(self) -> int:
        return len(_TABLE)

    def __contains__(self, name: object) -> bool:
        return name in _TABLE


# The adapter and the CLI go through it.
OPERATIONS: MutableMapping[str, Operation] = _Operations()


def __getattr__(name: str) -> Operation:
    if name in _HOME:
        operation = _resolve(name)
        globals()[name] = operation  # later lookups skip __getattr__
        return operation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
