"""Argument types shared by the commands of ``persyk-conformance`` (run, bench, fuzz)."""

from __future__ import annotations

import argparse

__all__ = ["positive_int", "positive_number"]


def positive_number(text: str) -> float:
    """A number above 0 (seconds, a scale, a size)."""
    value = float(text)
    if not value > 0:  # also refuses nan
        raise argparse.ArgumentTypeError("must be a positive number")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive whole number")
    return value
