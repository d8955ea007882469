"""Hypothesis strategies for whole valid sessions: a header, then entries of every type whose
graph holds (TREE-1..TREE-13), spelled in every way a reader must accept (REC-14, REC-15,
REC-17, REC-18), with records near every limit (ID-1, REC-9, REC-11, REC-12, MSG-5).

``EntryGraph`` is the state a generator keeps while it adds entries one by one; the append
scenarios (``_strategies_append``) continue from it, so that a batch's parents and targets are
those a writer would see.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import strategies as st

from ..records import record
from ._strategies_values import (
    ENTRY_TYPES,
    MAX_SAFE_INTEGER,
    entry_members,
    headers,
    ids,
    timestamps,
)

__all__ = [
    "NEAR_LIMITS",
    "SPELLINGS",
    "EntryGraph",
    "Line",
    "Session",
    "draw_entry",
    "near_limit_entry",
    "sessions",
    "spell",
]

MAX_RECORD_BYTES = 1_048_576  # REC-11, not counting the LF
MAX_DEPTH = 128  # REC-12: containers, the record object included
MAX_ID_LENGTH = 128  # ID-1
# How a line may spell a record: as a conforming writer does (REC-22, REC-24), with \u escapes
# for everything beyond ASCII (surrogate pairs included, REC-6), or with insignificant
# whitespace before, inside and after it and a CR before its LF (REC-14, REC-18).
SPELLINGS: tuple[str, ...] = ("compact", "escaped", "spaced")
# REC-15: blank lines are skipped but keep their physical line numbers.
_BLANK_LINES = (b"\n", b" \t\r\n", b"\r\n")
# Entry types that a removal may target (TREE-7) and the terminal recording entries (TREE-11).
REMOVABLE = frozenset({"message", "custom_message"})
TERMINAL = ("recording.finished", "recording.interrupted")


@dataclass(frozen=True, slots=True)
class Line:
    """One physical line with its LF: a record (``value`` is what it spells) or a blank line
    (``value`` None)."""

    data: bytes
    value: Any = None

    @property
    def is_record(self) -> bool:
        return self.value is not None


@dataclass(frozen=True, slots=True)
class Session:
    """The bytes of one ``session.jsonl``, line by line, with the records they spell."""

    lines: tuple[Line, ...]

    @property
    def data(self) -> bytes:
        return b"".join(line.data for line in self.lines)

    @property
    def records(self) -> tuple[Any, ...]:
        """Every record in file order, the header first."""
        return tuple(line.value for line in self.lines if line.is_record)

    @property
    def entries(self) -> tuple[dict[str, Any], ...]:
        return tuple(self.records[1:])

    @property
    def entry_ids(self) -> tuple[str, ...]:
        # A mutant's faulty entry may have no id, or one that is not a string.
        return tuple(e["id"] for e in self.entries if isinstance(e, dict) and isinstance(
            e.get("id"), str))

    def line_of(self, record_index: int) -> int:
        """The 1-based physical line (DIAG-3) of ``records[record_index]``."""
        seen = -1
        for number, line in enumerate(self.lines, start=1):
            if line.is_record:
                seen += 1
                if seen == record_index:
                    return number
        raise IndexError(record_index)


@dataclass(slots=True)
class EntryGraph:
    """What a generator knows of the entries so far: types, parents, recordings (mutable)."""

    types: dict[str, str] = field(default_factory=dict)
    parents: dict[str, str | None] = field(default_factory=dict)
    started: set[str] = field(default_factory=set)
    ended: set[str] = field(default_factory=set)
    reserved: set[str] = field(default_factory=set)  # ids fresh_id must avoid besides types

    @classmethod
    def of(cls, entries: Sequence[dict[str, Any]]) -> EntryGraph:
        graph = cls()
        for entry in entries:
            graph.add(entry)
        return graph

    @property
    def last(self) -> str | None:
        return next(reversed(self.types), None)

    def add(self, entry: dict[str, Any]) -> None:
        self.types[entry["id"]] = entry["type"]
        self.parents[entry["id"]] = entry["parentId"]
        if entry["type"] == "recording.started":
            self.started.add(entry["recordingId"])
        elif entry["type"] in TERMINAL:
            self.ended.add(entry["recordingId"])

    def chain(self, entry_id: str | None) -> list[str]:
        """``entry_id`` and its ancestors, nearest first (CTX-4 read backwards)."""
        out: list[str] = []
        while entry_id is not None and entry_id in self.types:
            out.append(entry_id)
            entry_id = self.parents[entry_id]
        return out

    def fresh_id(self, draw: st.DrawFn, taken: Sequence[str] = ()) -> str:
        """An id no entry has (ID-3), drawn from ``ids``."""
        base = draw(ids)
        candidate, n = base, 0
        while candidate in self.types or candidate in self.reserved or candidate in taken:
            n += 1
            candidate = f"{base}-{n}"
        return candidate


def spell(value: Any, spelling: str = "compact") -> bytes:
    """One record as a line, LF included, in one of ``SPELLINGS``."""
    if spelling == "escaped":
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
    if spelling == "spaced":
        text = json.dumps(value, ensure_ascii=False, separators=(" , ", ":\t"))
        return b" " + text.encode() + b" \t\r\n"
    return record(value) + b"\n"  # the record kit's spelling of a conforming writer


# draw_entry's default parent: any earlier entry or none (never an Id: it holds a NUL).
ANY_PARENT: Final = "\x00any"


def draw_entry(
    draw: st.DrawFn,
    graph: EntryGraph,
    types: Sequence[str] = ENTRY_TYPES,
    parent: str | None = ANY_PARENT,
) -> dict[str, Any]:
    """One entry that may follow ``graph`` (and is added to it): a parent on an earlier line or
    none (TREE-1, TREE-2), a label target on an earlier line (TREE-4), a removal target that is
    a message on its own chain (TREE-5..TREE-8), recordings started once and ended once in file
    order (TREE-9..TREE-11, TREE-13). A type whose references cannot hold yet becomes a message.
    """
    if parent == ANY_PARENT:
        known = list(graph.types)
        choices: list[Any] = [None]
        if known:
            choices = [graph.last, None, *known]
        chosen_parent: str | None = draw(st.sampled_from(choices))
    else:
        chosen_parent = parent
    entry_type = draw(st.sampled_from(list(types)))
    members = dict(draw(entry_members[entry_type]))
    if entry_type == "label":
        if not graph.types:
            entry_type, members = "message", draw(entry_members["message"])
        else:
            members["targetId"] = draw(st.sampled_from(list(graph.types)))
    elif entry_type == "message.removed":
        targets = [i for i in graph.chain(chosen_parent) if graph.types[i] in REMOVABLE]
        if not targets:
            entry_type, members = "message", draw(entry_members["message"])
        else:
            members["targetId"] = draw(st.sampled_from(targets))
    elif entry_type == "recording.started" and members["recordingId"] in graph.started:
        entry_type, members = "message", draw(entry_members["message"])
    elif entry_type in TERMINAL:
        open_ = sorted(graph.started - graph.ended)
        if not open_:
            entry_type, members = "message", draw(entry_members["message"])
        else:
            members["recordingId"] = draw(st.sampled_from(open_))
    entry = {
        "type": entry_type,
        "id": graph.fresh_id(draw),
        "parentId": chosen_parent,
        "timestamp": draw(timestamps),
        **members,
    }
    graph.add(entry)
    return entry


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


# The records near a limit that near_limit_entry builds, each naming the rule whose limit it
# reaches from the valid side.
NEAR_LIMITS: tuple[str, ...] = ("long-id", "deepest", "largest", "numbers", "unicode")


def near_limit_entry(
    draw: st.DrawFn, graph: EntryGraph, kind: str, spelling: str = "compact"
) -> dict[str, Any]:
    """A valid custom or message entry at a limit (``kind``, one of ``NEAR_LIMITS``): an id of
    128 characters (ID-1), 128 nested containers (REC-12), a record of exactly 1,048,576 bytes
    as ``spelling`` spells it (REC-11), numbers at the edges of a double and of I-JSON (REC-9,
    REC-10, REC-23, MSG-5), scalar values that look suspicious but are valid (REC-17)."""
    parent = graph.last
    entry_id = graph.fresh_id(draw)
    base: dict[str, Any] = {"type": "custom", "id": entry_id, "parentId": parent,
            "timestamp": draw(timestamps), "customType": "limit", "data": None}
    if kind == "long-id":
        base["id"] = (entry_id + "x" * MAX_ID_LENGTH)[:MAX_ID_LENGTH]
        if base["id"] in graph.types:
            base["id"] = base["id"][:-1] + "y"
    elif kind == "deepest":
        base["data"] = _nested(MAX_DEPTH - 1)  # the record object is the 128th container
    elif kind == "largest":
        base["data"] = ""
        size = len(spell(base, spelling)) - 1
        filler = "\u00e9" if spelling == "compact" else "a"  # two bytes raw, one escaped: "a"
        if filler == "\u00e9":
            base["data"] = "a" * ((MAX_RECORD_BYTES - size) % 2) + filler * (
                (MAX_RECORD_BYTES - size) // 2)
        else:
            base["data"] = "a" * (MAX_RECORD_BYTES - size)
    elif kind == "numbers":
        base["data"] = [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 1.7976931348623157e308, 5e-324,
                        -0.0, 1e300, 0.1]
    else:  # unicode
        base["data"] = {"\u0000": "\uffff\ufdd0\U0010ffff", "\U0001f600": "e\u0301 \u2028"}
    graph.add(base)
    return base


@st.composite
def sessions(
    draw: st.DrawFn,
    *,
    min_entries: int = 0,
    max_entries: int = 12,
    entry_types: Sequence[str] = ENTRY_TYPES,
    spellings: Sequence[str] = SPELLINGS,
    blank_lines: bool = True,
    near_limits: Sequence[str] = NEAR_LIMITS,
) -> Session:
    """A valid session (every read-phase MUST holds): a header and ``min_entries`` to
    ``max_entries`` entries of ``entry_types`` forming branching trees, spelled line by line in
    one of ``spellings``, with blank lines between them when ``blank_lines``, and perhaps one
    entry at one of ``near_limits`` (pass ``()`` for none)."""
    graph = EntryGraph()
    header = draw(headers)
    lines = [Line(spell(header, draw(st.sampled_from(list(spellings)))), header)]
    with_limit: bool = draw(st.booleans()) and bool(near_limits)
    entries = 0
    # One "more?" choice before each entry, as hypothesis's own lists do: a shrink deletes an
    # entry anywhere by deleting its span of choices, not only the last ones.
    while entries < max_entries and (entries < min_entries or draw(st.integers(0, 5)) > 0):
        entries += 1
        if blank_lines and draw(st.integers(0, 7)) == 0:
            lines.append(Line(draw(st.sampled_from(_BLANK_LINES))))
        spelling = draw(st.sampled_from(list(spellings)))
        if with_limit and draw(st.integers(0, 3)) == 0:
            with_limit = False  # at most one record at a limit
            entry = near_limit_entry(draw, graph, draw(st.sampled_from(list(near_limits))),
                                     spelling)
        else:
            entry = draw_entry(draw, graph, entry_types)
        lines.append(Line(spell(entry, spelling), entry))
    return Session(tuple(lines))
