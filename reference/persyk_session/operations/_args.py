"""Reading the arguments of a protocol operation (shared by the read and write operations).

A malformed argument is the caller's fault: :class:`UsageError` with the ``USAGE`` code, which
the adapter turns into a result ``{"error": ...}`` (docs/implementers/protocol.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import Code, Diagnostic, UsageError

if TYPE_CHECKING:  # imported by leaf_selector: validate and info select no leaf, load no context
    from ..read._context import LeafSelector

__all__ = [
    "error_result", "leaf_selector", "lock_timeout_arg", "path_arg", "session_arg", "string_arg",
]


def error_result(diagnostic: Diagnostic) -> dict[str, Any]:
    """A domain failure as a result (docs/implementers/protocol.md): ``{"error": diagnostic}``."""
    return {"error": diagnostic.to_json()}


def lock_timeout_arg(args: dict[str, Any]) -> float | None:
    """APP-6: the caller may bound the wait for the locks; absent = our own bound."""
    value = args.get("lockTimeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(Code.USAGE, "the argument 'lockTimeout' must be a non-negative number")
    from ..write._lock import check_lock_timeout  # here: the read operations take no lock

    return check_lock_timeout(value, "the argument 'lockTimeout'")


def string_arg(args: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise UsageError(Code.USAGE, f"the argument '{name}' must be a non-empty string")
    return value


def path_arg(args: dict[str, Any], name: str) -> str:
    """A required path argument: a non-empty string without a NUL byte (no file system can
    name such a path, and the OS would refuse it with an exception, not an answer)."""
    value = string_arg(args, name)
    assert value is not None  # required=True never returns None
    if "\x00" in value:
        raise UsageError(Code.USAGE, f"the argument '{name}' must not contain a NUL byte")
    return value


def session_arg(args: dict[str, Any]) -> str:
    return path_arg(args, "session")


def leaf_selector(args: dict[str, Any]) -> LeafSelector:
    """CTX-1/2/3, APP-16: ``leaf`` absent selects the default, null the empty ancestry, a
    string that entry."""
    from ..read._context import LeafSelector

    if "leaf" not in args:
        return LeafSelector.default()
    leaf = args["leaf"]
    if leaf is None:
        return LeafSelector.null()
    if isinstance(leaf, str):
        return LeafSelector.explicit(leaf)
    raise UsageError(Code.USAGE, "the argument 'leaf' must be absent, null or a string")
