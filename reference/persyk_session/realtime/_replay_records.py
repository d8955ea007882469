"""The records and the result a replay's ordered publication produces (RT-12..RT-28,
CAP-11..CAP-16). Sans-IO: plain values in, plain values out.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ._evidence import timestamp_at
from ._ordering_model import Gap, PublishMessage
from ._replay_plan import ReplayDriver
from ._sanitize import sanitize_text

__all__ = ["located_gaps", "message_record", "ordering_report", "removal_record"]


def epoch_ms(start: str, at: int) -> int:
    """MSG-5: the message timestamp, ``at`` virtual milliseconds after ``start``."""
    moment = datetime.strptime(start, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000) + at


def message_record(effect: PublishMessage, start: str, parent: str | None) -> dict[str, Any]:
    """RT-12, RT-15: a canonical message; ``replay`` names its provider item (MSG-11), which is
    how a restart tells saved items from unsaved ones (CAP-16)."""
    message: dict[str, Any] = {
        "role": effect.role,
        "content": [{"type": "text", "text": sanitize_text(effect.text)}],  # RT-1
        "timestamp": epoch_ms(start, effect.resolved_at),
        "replay": {"connectionId": effect.connection, "itemId": effect.item},
    }
    if effect.response_id is not None:
        message["responseId"] = effect.response_id
    return {"type": "message", "id": str(uuid.uuid4()), "parentId": parent,
            "timestamp": timestamp_at(start, effect.at), "message": message}


def removal_record(target: str, timestamp: str, parent: str | None) -> dict[str, Any]:
    """RT-18, RT-23: the removal entry; the message and its audio stay in the file."""
    return {"type": "message.removed", "id": str(uuid.uuid4()), "parentId": parent,
            "timestamp": timestamp, "targetId": target}


def located_gaps(gaps: Sequence[Gap], duration: int) -> list[dict[str, Any]]:
    """RT-14, CAP-15: the gaps whose speech lies in the recording, as ENT-16 gaps (clipped to
    the recording's duration); the others are reported by the replay only."""
    located = []
    for gap in gaps:
        if gap.start_ms is None or gap.end_ms is None:
            continue
        end = min(gap.end_ms, duration)
        if gap.start_ms < end:
            located.append({"startMs": gap.start_ms, "endMs": end, "reason": gap.reason})
    return located


def _gap_json(gap: Gap) -> dict[str, Any]:
    found: dict[str, Any] = {"item": gap.item, "reason": gap.reason}
    if gap.start_ms is not None and gap.end_ms is not None and gap.start_ms < gap.end_ms:
        found.update(startMs=gap.start_ms, endMs=gap.end_ms)
    return found


def ordering_report(
    driver: ReplayDriver,
    published: list[dict[str, str]],
    removed: list[dict[str, str]],
    copies: list[dict[str, Any]],
    unfinished: list[dict[str, str]],
) -> dict[str, Any]:
    """The members the ordering engine adds to a replay's result (docs/implementers/realtime.md)."""
    engine = driver.engine
    stopped = None if engine.stopped is None or engine.phase != "closed" else {
        "reason": engine.stopped[0], "atMs": engine.stopped[1], "closedMs": engine.closed_at}
    # A halt can leave effects the engine decided but the shell never performed: what was to be
    # published stays unsaved (RT-24), a removal the provider confirmed is not yet applied.
    saved = {entry["item"] for entry in published}
    applied = {entry["item"] for entry in removed}
    unsaved = [item for item in engine.published if item not in saved]
    outcomes = {item: "acknowledged" if outcome == "removed" and item not in applied else outcome
                for item, outcome in engine.outcomes.items()}
    return {
        "published": published,
        "provisional": unsaved + engine.provisional(),
        "gaps": [_gap_json(gap) for gap in engine.gaps],
        "removals": [{"item": item, "outcome": outcome} for item, outcome in outcomes.items()],
        "removed": removed,
        "canonical": [item for item in engine.alive if item in saved or item not in unsaved],
        "copies": copies,
        "evidenceOnly": engine.evidence_only,
        "stopped": stopped,
        "unfinished": unfinished,
        "queues": {"observationJobs": driver.queue.peak_jobs,
                   "observationBytes": driver.queue.peak_bytes,
                   "orderedItems": engine.peak_items, "orderedTextBytes": engine.peak_text},
    }
