"""Kept-body stores (``persyk_session.fast._bodies_fast.KeptBodies``) each lacking exactly one
guarantee, so that tests/reference/fast/test_context_one_pass.py can show every check fails without
it."""

from __future__ import annotations

from typing import Any

from persyk_session.fast._bodies_fast import KeptBodies


class ForgetsBodies(KeptBodies):
    """Keeps nothing: every body on the path is read and parsed a second time."""

    def offer(self, obj: dict[str, Any], offset: int, length: int) -> None:
        return None


class IgnoresBudget(KeptBodies):
    """Keeps every body it is offered of the asked types, whatever the budget."""

    def offer(self, obj: dict[str, Any], offset: int, length: int) -> None:
        if obj["type"] in self.types:
            self._bodies[offset] = obj
            self.kept_bytes += length


class KeepsEveryType(KeptBodies):
    """Keeps bodies of entries nobody projects (removals, realtime events ...), spending the
    budget on them."""

    def offer(self, obj: dict[str, Any], offset: int, length: int) -> None:
        if self.kept_bytes + length <= self.budget:
            self._bodies[offset] = obj
            self.kept_bytes += length



class KeyedCoarsely(KeptBodies):
    """Keys bodies by a 4 KiB bucket of their offset instead of the offset itself: records
    that share a bucket get each other's bodies."""

    def offer(self, obj: dict[str, Any], offset: int, length: int) -> None:
        super().offer(obj, offset - offset % 4096, length)

    def get(self, offset: int) -> dict[str, Any] | None:
        return super().get(offset - offset % 4096)
