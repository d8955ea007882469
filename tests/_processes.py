"""Processes a test started, found by a mark in their environment (they may have escaped their
process group or been re-parented, so neither a pid list nor a group finds them all)."""

from __future__ import annotations

import os

__all__ = ["MARK", "processes_marked"]

MARK = "PERSYK_TEST_LEFTOVER_MARK"


def processes_marked(token: str) -> list[int]:
    """The pids of the live processes whose environment holds ``MARK=token``."""
    needle = f"{MARK}={token}".encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(int(name))
            except OSError:
                continue
    return found
