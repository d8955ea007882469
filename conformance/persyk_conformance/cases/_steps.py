"""Workspace paths in a case's steps (no adapter I/O).

``{"$path": "rel"}`` anywhere in a step's arguments or expectation stands for the absolute path
of that workspace path, so a search case can name its roots and the canonical locations its
results must report (SRCH-20, SRCH-26), and still send a relative path on purpose where the
contract refuses one (SETTINGS_INVALID).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["resolve_paths"]


def resolve_paths(value: Any, workspace: Path) -> Any:
    """``value`` with every ``{"$path": rel}`` object replaced by that absolute path."""
    if isinstance(value, dict):
        if value.keys() == {"$path"}:
            return str(workspace / value["$path"])
        return {k: resolve_paths(v, workspace) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_paths(v, workspace) for v in value]
    return value
