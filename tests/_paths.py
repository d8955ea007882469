"""Where the checkout and the tests are, for test modules at any depth under tests/."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CHECKOUT", "TESTS_DIR"]

TESTS_DIR = Path(__file__).resolve().parent
CHECKOUT = TESTS_DIR.parent
