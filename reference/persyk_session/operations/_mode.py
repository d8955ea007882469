"""The one place the engine is chosen: that of ``PERSYK_SESSION_MODE`` (``fast``, the default,
or ``readable``; ``_mode_name`` reads it once and refuses a misspelt one).

The CLI, the conformance adapter and the runner's in-process path all reach the core through
``operations``, which passes :func:`chosen_engine` into every core call; the core itself has no
mode (``read/_engine.py``). Both engines give the same results: the readable one is the
reference to read, the fast one (``persyk_session.fast``) the one to run.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from .._mode_name import MODE, MODES

if TYPE_CHECKING:
    from ..read._engine import Engine

__all__ = ["MODE", "MODES", "chosen_engine"]


@functools.cache
def chosen_engine() -> Engine:
    """The engine of :data:`MODE`, imported on first use (a command that reads no session
    loads neither)."""
    if MODE == "readable":
        from ..read._engine import READABLE_ENGINE

        return READABLE_ENGINE
    from ..fast import FAST_ENGINE

    return FAST_ENGINE
