"""Which mode runs (``PERSYK_SESSION_MODE``: ``fast``, the default, or ``readable``), checked
when the package is imported, so that a misspelt mode never runs silently as the default.
``read/_mode.py`` chooses the functions of the mode named here."""

from __future__ import annotations

import os
from typing import Final

__all__ = ["MODE", "MODES"]

MODES: Final = ("fast", "readable")
MODE: Final = os.environ.get("PERSYK_SESSION_MODE") or "fast"
if MODE not in MODES:
    raise ImportError(f"PERSYK_SESSION_MODE must be one of {', '.join(MODES)}")
