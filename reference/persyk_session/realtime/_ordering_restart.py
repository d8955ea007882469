"""What a restart finds unfinished in a session's realtime evidence (CAP-16, RT-22). Sans-IO.

The records of the continuation's ancestry are read again: the evidence (``realtime_event``) is
fed to a fresh ordering engine, which says which items the conversation had resolved; the
``message`` entries (``message.replay.itemId``) say which were saved. What the evidence resolved
but no message saved is *unmaterialized* and is reported, never generated (CAP-16): the text of a
conversation is saved only by the capture that heard it in order. A removal the provider
acknowledged (a ``conversation.item.deleted`` after our ``conversation.item.delete``) whose
``message.removed`` is missing is the kept intent of RT-22: it is applied locally, and the
remote delete is not sent again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._ordering import OrderingEngine
from ._ordering_model import canonical_type

__all__ = ["RestartReport", "Unfinished", "restart_report"]


@dataclass(frozen=True, slots=True)
class Unfinished:
    """One piece of unfinished work: the provider item, the work (``message`` | ``removal``)
    and its state (message: unmaterialized | provisional | unresolved; removal: applied |
    unacknowledged)."""

    item: str
    work: str
    state: str

    def to_json(self) -> dict[str, str]:
        return {"item": self.item, "work": self.work, "state": self.state}


@dataclass(frozen=True, slots=True)
class RestartReport:
    """The unfinished work, and the removals to apply now: (item, target message entry id)."""

    unfinished: tuple[Unfinished, ...]
    apply: tuple[tuple[str, str], ...]


def _item_of(record: Mapping[str, Any]) -> str | None:
    replay = record.get("message", {}).get("replay")
    item = replay.get("itemId") if isinstance(replay, dict) else None
    return item if isinstance(item, str) else None


def restart_report(records: Sequence[Mapping[str, Any]]) -> RestartReport:
    """CAP-16, RT-22: the unfinished work of ``records`` (an ancestry, root first)."""
    engine = OrderingEngine()
    saved: dict[str, str] = {}  # item -> message entry id
    removed: set[str] = set()  # message entry ids removed
    deletes: list[str] = []  # items whose delete we sent, in order
    acknowledged: set[str] = set()
    for record in records:
        kind = record.get("type")
        if kind == "message" and (item := _item_of(record)) is not None:
            saved[item] = str(record["id"])
        elif kind == "message.removed":
            removed.add(str(record.get("targetId")))
        elif kind == "realtime_event" and isinstance(record.get("payload"), dict):
            payload, connection = record["payload"], str(record.get("connectionId"))
            name = canonical_type(str(payload.get("type")))
            if record.get("observation") == "received":
                engine.received(0, connection, payload)
                if name == "conversation.item.deleted":
                    acknowledged.add(str(payload.get("item_id")))
            elif record.get("observation") == "send_attempt" and name == "conversation.item.delete":
                deletes.append(str(payload.get("item_id")))
    unfinished = [Unfinished(item, "message", "unmaterialized")
                  for item in engine.alive if item not in saved]
    for entry in engine.pending:
        held = entry.text is not None and entry.resolution in (None, "message")
        unfinished.append(Unfinished(entry.id, "message", "provisional" if held else "unresolved"))
    apply: list[tuple[str, str]] = []
    for item in dict.fromkeys(deletes):
        target = saved.get(item)
        if target is None or target in removed:
            continue
        if item in acknowledged:  # RT-22: confirmed remotely, never saved locally
            apply.append((item, target))
            unfinished.append(Unfinished(item, "removal", "applied"))
        else:
            unfinished.append(Unfinished(item, "removal", "unacknowledged"))
    return RestartReport(tuple(unfinished), tuple(apply))
