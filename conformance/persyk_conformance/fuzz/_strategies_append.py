"""Hypothesis strategies for append scenarios: a valid session, then a few appends and removals
as a writer sends them (docs/implementers/protocol.md, ``append`` and ``remove``): batches that
continue a leaf or start a branch, identical retries (APP-12), retries with other content (APP-13),
batches that do not start at the caller's leaf (APP-16), batches refused part-way (APP-9, APP-14),
batches at and over the size limit (APP-8), removals (APP-18), from a leaf that names
no entry too (APP-18 rev. 3).

The generator models what each step would commit if it succeeded; it does not predict results
(the reference does, when the fuzzer compares), so a later step may well reference a record
that an earlier one never committed: that is a scenario too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ._strategies_sessions import REMOVABLE, EntryGraph, Session, draw_entry, sessions
from ._strategies_values import timestamps

__all__ = ["APPEND_STEP_KINDS", "AppendScenario", "AppendStep", "append_scenarios"]

APPEND_STEP_KINDS: tuple[str, ...] = (
    "batch", "continuation", "retry", "conflicting-retry", "leaf-mismatch", "faulty-batch",
    "batch-limit", "remove",
)
_MAX_BATCH_RECORDS = 256  # APP-8


@dataclass(frozen=True, slots=True)
class AppendStep:
    """One request: ``op`` (``append`` or ``remove``) with its protocol ``args`` less
    ``session``; ``kind`` is one of APPEND_STEP_KINDS."""

    kind: str
    op: str
    args: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class AppendScenario:
    """A valid session and the steps a writer sends to it, in order."""

    session: Session
    steps: tuple[AppendStep, ...]


def _chain(draw: st.DrawFn, graph: EntryGraph, start: str | None, count: int) -> list[Any]:
    """``count`` records, each the child of the one before, the first a child of ``start``."""
    records: list[Any] = []
    parent = start
    for _ in range(count):
        record = draw_entry(draw, graph, parent=parent)
        records.append(record)
        parent = record["id"]
    return records


def _start(draw: st.DrawFn, graph: EntryGraph) -> str | None:
    return draw(st.sampled_from([graph.last, None, *graph.types]))


def _batch(draw: st.DrawFn, graph: EntryGraph, kind: str) -> dict[str, Any]:
    start = graph.last if kind == "batch" else _start(draw, graph)
    records = _chain(draw, graph, start, draw(st.integers(1, 4)))
    args: dict[str, Any] = {"records": records}
    if kind == "continuation" or draw(st.booleans()):
        args["leaf"] = start  # APP-16: the first record's parentId, exactly
    return args


def _leaf_mismatch(draw: st.DrawFn, graph: EntryGraph) -> dict[str, Any]:
    start = _start(draw, graph)
    others = [leaf for leaf in [None, *graph.types] if leaf != start] or [graph.fresh_id(draw)]
    return {"records": _chain(draw, graph, start, draw(st.integers(1, 3))),
            "leaf": draw(st.sampled_from(others))}


def _faulty_batch(draw: st.DrawFn, graph: EntryGraph) -> dict[str, Any]:
    records = _chain(draw, graph, graph.last, draw(st.integers(1, 4)))
    at = draw(st.integers(0, len(records) - 1))
    broken = dict(records[at])
    fault = draw(st.sampled_from(["parent", "member", "type", "header", "taken-id"]))
    if fault == "parent":
        broken["parentId"] = graph.fresh_id(draw)  # TREE-1
    elif fault == "member":
        broken["unexpected"] = True  # ENV-3
    elif fault == "type":
        broken["type"] = "unknown_type"  # ENV-2
    elif fault == "header":  # HDR-7, and APP-13 too when the id is taken
        header_id = draw(st.sampled_from(["h", *graph.types]))
        broken = {"type": "session", "version": 1, "id": header_id,
                  "timestamp": broken["timestamp"]}
    elif graph.types:  # APP-13 and ENV-3 at once: which code wins is no rule (docs/spec.md)
        broken = {**broken, "id": draw(st.sampled_from(list(graph.types))), "unexpected": True}
    else:
        broken["unexpected"] = True
    records[at] = broken
    return {"records": records}


def _batch_limit(draw: st.DrawFn, graph: EntryGraph) -> dict[str, Any]:
    """APP-8 from both sides: 256 and 257 small records; four and five records of 900 kB
    (3.6 MB, accepted, and 4.5 MB, refused whole)."""
    count, size = draw(st.sampled_from([
        (_MAX_BATCH_RECORDS, 0), (_MAX_BATCH_RECORDS + 1, 0), (4, 900_000), (5, 900_000)]))
    parent = graph.last
    records = []
    for _ in range(count):
        entry_id = graph.fresh_id(draw)
        record = {"type": "custom", "id": entry_id, "parentId": parent,
                  "timestamp": "2026-01-01T00:00:00Z", "customType": "n", "data": "a" * size}
        graph.add(record)
        records.append(record)
        parent = entry_id
    return {"records": records}


def _conflict(draw: st.DrawFn, earlier: Mapping[str, Any]) -> dict[str, Any]:
    records = [dict(record) for record in earlier["records"]]
    at = draw(st.integers(0, len(records) - 1))
    stamp = draw(timestamps)
    if stamp == records[at].get("timestamp"):
        stamp = "2001-01-01T00:00:00Z" if stamp == "2000-01-01T00:00:00Z" else (
            "2000-01-01T00:00:00Z")
    records[at]["timestamp"] = stamp  # APP-13: same id, other content
    return {**earlier, "records": records}


def _remove(draw: st.DrawFn, graph: EntryGraph) -> dict[str, Any] | None:
    if draw(st.integers(0, 4)) == 0:  # APP-18 rev. 3: a leaf that names no entry
        target = draw(st.sampled_from([graph.fresh_id(draw), *graph.types]))
        return {"targetId": target, "id": graph.fresh_id(draw), "timestamp": draw(timestamps),
                "leaf": graph.fresh_id(draw)}
    leaf = _start(draw, graph)
    targets = [i for i in graph.chain(leaf) if graph.types[i] in REMOVABLE]
    if not targets:
        return None
    entry_id = graph.fresh_id(draw)
    target = draw(st.sampled_from(targets))
    graph.add({"type": "message.removed", "id": entry_id, "parentId": leaf,
               "timestamp": "2026-01-01T00:00:00Z", "targetId": target})
    return {"targetId": target, "id": entry_id, "timestamp": draw(timestamps), "leaf": leaf}


@st.composite
def append_scenarios(
    draw: st.DrawFn,
    *,
    max_steps: int = 4,
    kinds: Sequence[str] = APPEND_STEP_KINDS,
    base: st.SearchStrategy[Session] | None = None,
) -> AppendScenario:
    """A session from ``base`` (default: small valid sessions) and 1 to ``max_steps`` steps of
    ``kinds`` (retries fall back to a batch when nothing was sent yet, a removal to a batch
    when no message is on the chosen chain)."""
    session = draw(base if base is not None else sessions(max_entries=5, near_limits=()))
    graph = EntryGraph.of(session.entries)
    sent: list[Mapping[str, Any]] = []
    steps: list[AppendStep] = []
    for _ in range(draw(st.integers(1, max_steps))):
        kind = draw(st.sampled_from(list(kinds)))
        if kind in ("retry", "conflicting-retry") and not sent:
            kind = "batch"
        args: dict[str, Any] | None
        if kind == "remove":
            args = _remove(draw, graph)
            if args is not None:
                steps.append(AppendStep(kind, "remove", args))
                continue
            kind = "batch"
        if kind == "retry":
            args = dict(draw(st.sampled_from(sent)))
        elif kind == "conflicting-retry":
            args = _conflict(draw, draw(st.sampled_from(sent)))
        elif kind == "leaf-mismatch":
            args = _leaf_mismatch(draw, graph)
        elif kind == "faulty-batch":
            args = _faulty_batch(draw, graph)
        elif kind == "batch-limit":
            args = _batch_limit(draw, graph)
        else:
            args = _batch(draw, graph, kind)
        sent.append(args)
        steps.append(AppendStep(kind, "append", args))
    return AppendScenario(session, tuple(steps))
