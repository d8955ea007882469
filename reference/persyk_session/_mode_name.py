"""Which mode runs (``PERSYK_SESSION_MODE``: ``fast``, the default, or ``readable``), checked
when this module is imported, so that a misspelt mode never runs silently as the default.

Part of the edge: ``operations/_mode.py`` chooses the v1 engine of the mode named here, and
the dsh-v0 profile reads its own switch from it (``persyk_dsh.operations``); no core module imports
it.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["MODE", "MODES"]

MODES: Final = ("fast", "readable")
MODE: Final = os.environ.get("PERSYK_SESSION_MODE") or "fast"
if MODE not in MODES:
    raise ImportError(f"PERSYK_SESSION_MODE must be one of {', '.join(MODES)}")
