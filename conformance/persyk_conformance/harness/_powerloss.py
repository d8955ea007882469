"""Power-loss checks (H-201.., DH-103..): filled in below (issue 25)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..adapters._adapters import Adapter
from ._capture_kit import HarnessOptions

__all__ = ["DEFAULT_STATES", "POWERLOSS_CHECKS", "PowerlossCheck"]

DEFAULT_STATES = 24


@dataclass(frozen=True, slots=True)
class PowerlossCheck:
    id: str
    title: str
    rules: tuple[str, ...]
    requires: tuple[str, ...]
    run: Callable[[Callable[[], Adapter], Path, HarnessOptions], list[str]]


POWERLOSS_CHECKS: tuple[PowerlossCheck, ...] = ()
