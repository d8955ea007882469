"""The reference with SRCH-26, SRCH-27 and SRCH-35's code-point order replaced by UTF-16 order
(JavaScript's default string comparison): a location holding a character above U+FFFF sorts
before one holding U+E000..U+FFFF. Search and discovery must be found out by the fuzzer."""

import builtins
import sys
from typing import Any

from persyk_session import adapter
from persyk_session.search import _discovery


def _utf16(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16-be")
    if isinstance(value, tuple):
        return tuple(_utf16(item) for item in value)
    key = getattr(value, "key", None)  # a Candidate: newest first, then its location
    return (key.newer, _utf16(key.location)) if key is not None else value


def utf16_sorted(items: Any, key: Any = None, reverse: bool = False) -> list[Any]:
    return builtins.sorted(items, key=lambda item: _utf16(item), reverse=reverse)


_discovery.sorted = utf16_sorted  # type: ignore[attr-defined]
sys.exit(adapter.main())
