"""Quantities in the units a reader says them in: ``1.645e-05`` seconds is ``16.4 µs``. Shared
by every page and table that shows a measured duration (the bench's Markdown, the site)."""

from __future__ import annotations

__all__ = ["human_seconds"]


def human_seconds(value: float) -> str:
    """A duration in s, ms, µs or ns, three significant digits, never in exponent notation."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{_three_digits(value / scale)} {unit}"
    return f"{_three_digits(value * 1e9)} ns"


def _three_digits(number: float) -> str:
    return f"{number:.3g}" if number < 1000 else f"{number:.0f}"
