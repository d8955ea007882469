"""Bounded excerpts of what an adapter said: nothing an adapter sends reaches a report whole.

An adapter may answer with a 60 MB reply that breaks the schemas, an ``internal`` message of any
length, or endless stderr; a report keeps a bounded excerpt of each, saying how much was cut.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MAX_ITEMS", "MAX_ITEM_CHARS", "MAX_REASON_CHARS", "excerpt", "excerpts"]

MAX_REASON_CHARS = 2000
MAX_ITEM_CHARS = 1000
MAX_ITEMS = 100


def excerpt(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` itself when short; else its head and tail around a note of what was cut."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 2)
    head, tail = keep * 3 // 4, keep // 4
    return f"{text[:head]} [... {len(text) - head - tail} characters cut ...] {text[-tail:]}"


def excerpts(
    items: Iterable[str], each: int = MAX_ITEM_CHARS, count: int = MAX_ITEMS
) -> tuple[str, ...]:
    """At most ``count`` items, each an excerpt; a last line says how many were left out."""
    kept: list[str] = []
    left = 0
    for item in items:
        if len(kept) < count:
            kept.append(excerpt(item, each))
        else:
            left += 1
    if left:
        kept.append(f"... and {left} more")
    return tuple(kept)
