"""The session graph, built incrementally from parsed records (no I/O).

:class:`IndexBuilder` is fed one parsed record at a time (by the reader in ``_store`` or, for an
append, by the writer checking new records against a committed session) and applies the graph
rules of spec.md. It keeps only a small :class:`EntryMeta` per entry -- ids, positions and the few
fields the graph rules need -- never a body, so the index of a session with gigabytes of audio or
protocol payloads stays small; bodies are read again on demand by position.

The few global fields that ``info`` reports (session name, archive flag, labels) are tiny and
resolved while indexing, so ``info`` needs no second pass over the file.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from . import _schema
from ._errors import Code, Diagnostic

__all__ = [
    "MAX_REPORTED_DIAGNOSTICS",
    "EntryMeta",
    "IndexBuilder",
    "SessionIndex",
]

# validate reports at most this many diagnostics (docs/architecture.md, "JSON results").
MAX_REPORTED_DIAGNOSTICS = 100

# TREE-7: a removal may only target conversation content.
REMOVABLE_TYPES = frozenset({"message", "custom_message"})

# TREE-11: the entry types that end a recording (at most one per recording, after its start).
RECORDING_TERMINAL_TYPES = frozenset({"recording.finished", "recording.interrupted"})
RECORDING_TYPES = frozenset({"recording.started", *RECORDING_TERMINAL_TYPES})
# TREE-4, TREE-5: the entry types whose ``targetId`` names an earlier entry.
TARGETING_TYPES = frozenset({"label", "message.removed"})


class EntryMeta(NamedTuple):
    """What the index keeps of one committed entry: no body, only positions and graph fields.

    ``offset``/``length`` locate the record's bytes in ``session.jsonl`` (``length`` excludes the
    LF). ``depth`` is the number of ancestors (a root entry has depth 0); it bounds the ancestor
    check. ``target_id`` is the ``targetId`` of a ``label`` or ``message.removed`` entry;
    ``recording_id`` the ``recordingId`` of a ``recording.*`` entry.

    A named tuple rather than a frozen dataclass: both are immutable, but one is made per entry
    of every read, and a tuple is built about four times faster (0.5 us against 2 us).
    """

    id: str
    parent_id: str | None
    type: str
    line: int
    offset: int
    length: int
    depth: int = 0
    target_id: str | None = None
    recording_id: str | None = None


@dataclass(frozen=True, slots=True)
class SessionIndex:
    """The result of indexing a session: header, entries in file order, findings, global fields."""

    header: dict[str, Any] | None
    entries: tuple[EntryMeta, ...]
    by_id: Mapping[str, EntryMeta]
    # The first MAX_REPORTED_DIAGNOSTICS findings, sorted by line; ``diagnostic_count`` counts all.
    diagnostics: tuple[Diagnostic, ...]
    diagnostic_count: int
    name: str | None = None
    archived: bool = False
    labels: Mapping[str, str] = field(default_factory=dict)
    # recordingId -> whether a terminal entry was seen (needed to continue with an append).
    recordings: Mapping[str, bool] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.diagnostic_count == 0 and self.header is not None

    @property
    def truncated(self) -> bool:
        return self.diagnostic_count > len(self.diagnostics)

    @property
    def default_leaf(self) -> str | None:
        # CTX-1: omitting a leaf selects the last appended entry of any type.
        return self.entries[-1].id if self.entries else None

    def counts_by_type(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for entry in self.entries:
            counts[entry.type] = counts.get(entry.type, 0) + 1
        return counts


def _line_key(diagnostic: Diagnostic) -> int:
    # Findings without a line (SESSION_EMPTY) concern the whole file and sort first.
    return diagnostic.line if diagnostic.line is not None else 0


class IndexBuilder:
    """Applies the header and graph rules to records fed in file order.

    The reader calls :meth:`add_record` for every parsed record and :meth:`report` for records
    that failed to parse; :meth:`check_entry` and :meth:`add_entry` are public so that the append
    path can check new records against a committed session (see :meth:`from_index`).
    A record with any finding is not committed, so it never becomes a parent or a target.
    """

    def __init__(self) -> None:
        self._header: dict[str, Any] | None = None
        self._first_seen = False
        self._built = False
        self._first_was_header = False
        self._entries: list[EntryMeta] = []
        self._by_id: dict[str, EntryMeta] = {}
        self._diagnostics: list[Diagnostic] = []
        self._diagnostic_count = 0
        self._name: str | None = None
        self._archived = False
        self._labels: dict[str, str] = {}
        self._recordings: dict[str, bool] = {}

    @classmethod
    def from_index(cls, index: SessionIndex) -> IndexBuilder:
        """A builder that continues after a committed session (for appends)."""
        builder = cls()
        builder._header = index.header
        builder._first_seen = True
        builder._first_was_header = index.header is not None
        builder._entries = list(index.entries)
        builder._by_id = dict(index.by_id)
        builder._diagnostics = list(index.diagnostics)
        builder._diagnostic_count = index.diagnostic_count
        builder._name = index.name
        builder._archived = index.archived
        builder._labels = dict(index.labels)
        builder._recordings = dict(index.recordings)
        return builder

    # --- feeding -------------------------------------------------------------------------------

    @property
    def has_header(self) -> bool:
        return self._header is not None

    @property
    def entry_count(self) -> int:
        return len(self._entries)

    @property
    def last_entry_id(self) -> str | None:
        return self._entries[-1].id if self._entries else None

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_id

    def get(self, entry_id: str) -> EntryMeta | None:
        return self._by_id.get(entry_id)

    def report(self, diagnostics: list[Diagnostic]) -> None:
        """Record findings about a line that never became a record (parse or size failures)."""
        self._first_seen = True
        self._extend(diagnostics)

    def add_record(
        self, obj: dict[str, Any], *, line: int, offset: int, length: int
    ) -> list[Diagnostic]:
        """Feed the next parsed record of the file: the header if it is the first, else an entry."""
        if not self._first_seen:
            return self.add_header(obj, line=line)
        return self.add_entry(obj, line=line, offset=offset, length=length)

    def add_header(self, obj: dict[str, Any], *, line: int = 1) -> list[Diagnostic]:
        """Check and keep the first record of the file as the header."""
        self._first_seen = True
        if obj.get("type") != "session":
            # HDR-2: the first record is the header.
            found = [
                Diagnostic(
                    Code.HEADER_NOT_FIRST,
                    line=line,
                    pointer="/type",
                    detail="the first record is not a session header",
                )
            ]
        else:
            self._first_was_header = True
            found = [replace(d, line=line) for d in _schema.validate_header(obj)]
            if not found:
                self._header = obj
        self._extend(found)
        return found

    def check_entry(self, obj: dict[str, Any], *, line: int) -> list[Diagnostic]:
        """The findings for ``obj`` as the next entry, against the entries committed so far.

        Commits nothing. Schema findings come first; graph rules are applied only to an entry
        that passed the schema (its fields cannot be trusted otherwise).
        """
        if obj.get("type") == "session":
            if not self._first_was_header:
                # The missing header is already reported at line 1 (HEADER_NOT_FIRST); a session
                # record later is the same fault, not a second one.
                return []
            # HDR-7: exactly one header.
            return [
                Diagnostic(
                    Code.HEADER_REPEATED,
                    line=line,
                    pointer="/type",
                    detail="a second session header",
                )
            ]
        found = _schema.validate_entry(obj)
        if found:
            return [replace(d, line=line) for d in found]
        return self._graph_findings(obj, line)

    def add_entry(
        self, obj: dict[str, Any], *, line: int, offset: int, length: int
    ) -> list[Diagnostic]:
        """Check ``obj`` as the next entry and commit it when there is no finding."""
        found = self.check_entry(obj, line=line)
        if found:
            self._extend(found)
            return found
        if obj.get("type") == "session" and not self._first_was_header:
            return found  # reported once at line 1; never an entry
        self._commit(obj, line=line, offset=offset, length=length)
        return found

    def commit_checked(
        self, obj: dict[str, Any], *, line: int, offset: int, length: int
    ) -> None:
        """Commit ``obj`` as the next entry; :meth:`check_entry` found nothing for it at this
        position (the append planner checks, then commits, without checking twice)."""
        if not self._first_was_header or obj.get("type") == "session":
            # check_entry returns no finding for a session record after a missing header
            # (already reported at line 1), yet such a record is never an entry.
            raise ValueError("commit_checked needs an entry of a session with a valid header")
        self._commit(obj, line=line, offset=offset, length=length)

    def build(self, *, empty: bool = False) -> SessionIndex:
        """The index so far. ``empty`` says the file had zero bytes (SESSION_EMPTY).

        The index takes over the id table without a copy (it can be large), so the builder
        commits nothing afterwards; continue a built index with :meth:`from_index`.
        """
        self._built = True
        diagnostics = list(self._diagnostics)
        count = self._diagnostic_count
        if empty:
            # HDR-1: a session file holds at least its header.
            diagnostics.insert(
                0, Diagnostic(Code.SESSION_EMPTY, detail="the session file is empty")
            )
            count += 1
            del diagnostics[MAX_REPORTED_DIAGNOSTICS:]
        diagnostics.sort(key=_line_key)
        return SessionIndex(
            header=self._header,
            entries=tuple(self._entries),
            by_id=self._by_id,
            diagnostics=tuple(diagnostics),
            diagnostic_count=count,
            name=self._name,
            archived=self._archived,
            labels=dict(self._labels),
            recordings=dict(self._recordings),
        )

    # --- rules ---------------------------------------------------------------------------------

    def _graph_findings(self, obj: dict[str, Any], line: int) -> list[Diagnostic]:
        # Only called for a schema-valid entry: the envelope members are present and well typed,
        # and so is the ``targetId`` / ``recordingId`` of the types that require one.
        found: list[Diagnostic] = []
        by_id = self._by_id
        entry_type: str = obj["type"]
        parent_id: str | None = obj["parentId"]

        # ID-3: entry ids are unique within a session.
        if obj["id"] in by_id:
            found.append(
                Diagnostic(
                    Code.ID_DUPLICATE,
                    line=line,
                    pointer="/id",
                    detail="an earlier entry has the same id",
                )
            )
        # TREE-1, ID-4: a parent is an earlier entry (the header is not an entry).
        parent = None if parent_id is None else by_id.get(parent_id)
        if parent_id is not None and parent is None:
            found.append(
                Diagnostic(
                    Code.PARENT_NOT_FOUND,
                    line=line,
                    pointer="/parentId",
                    detail="the parent is not an earlier entry",
                )
            )

        if entry_type == "label":
            # TREE-4: the target is an earlier entry.
            if obj["targetId"] not in by_id:
                found.append(
                    Diagnostic(
                        Code.LABEL_TARGET_NOT_FOUND,
                        line=line,
                        pointer="/targetId",
                        detail="the label target is not an earlier entry",
                    )
                )
        elif entry_type == "message.removed":
            found.extend(self._removal_findings(obj["targetId"], parent, parent_id, line))
        elif entry_type in RECORDING_TYPES:
            found.extend(self._recording_findings(entry_type, obj["recordingId"], line))
        return found

    def _removal_findings(
        self, target_id: object, parent: EntryMeta | None, parent_id: object, line: int
    ) -> list[Diagnostic]:
        target = self._by_id.get(target_id) if isinstance(target_id, str) else None
        if target is None:
            return [
                Diagnostic(
                    Code.REMOVAL_TARGET_NOT_FOUND,
                    line=line,
                    pointer="/targetId",
                    detail="the removal target is not an earlier entry",
                )
            ]
        if parent_id is not None and parent is None:
            return []  # PARENT_NOT_FOUND already says why the chain cannot be followed
        # TREE-6: the target is on the removal's own parent chain.
        if parent is None or not self._is_ancestor_or_self(target, parent):
            return [
                Diagnostic(
                    Code.REMOVAL_TARGET_NOT_ANCESTOR,
                    line=line,
                    pointer="/targetId",
                    detail="the removal target is not an ancestor of the removal",
                )
            ]
        # TREE-7: only message and custom_message entries can be removed.
        if target.type not in REMOVABLE_TYPES:
            return [
                Diagnostic(
                    Code.REMOVAL_TARGET_WRONG_TYPE,
                    line=line,
                    pointer="/targetId",
                    detail="the removal target is not a message or custom message",
                )
            ]
        return []

    def _is_ancestor_or_self(self, target: EntryMeta, start: EntryMeta) -> bool:
        # Walk up from ``start`` only as far as the target's depth: O(depth difference).
        node: EntryMeta | None = start
        while node is not None and node.depth > target.depth:
            node = self._by_id.get(node.parent_id) if node.parent_id is not None else None
        return node is target

    def _recording_findings(
        self, entry_type: str, recording_id: object, line: int
    ) -> list[Diagnostic]:
        if not isinstance(recording_id, str):
            return []
        ended = self._recordings.get(recording_id)
        # TREE-9..TREE-11: one recording.started per recording, at most one terminal entry after
        # it, in file order only (TREE-13).
        if entry_type == "recording.started":
            if ended is not None:
                return [
                    Diagnostic(
                        Code.RECORDING_DUPLICATE,
                        line=line,
                        pointer="/recordingId",
                        detail="the recording was already started",
                    )
                ]
        elif entry_type in RECORDING_TERMINAL_TYPES:
            if ended is None:
                return [
                    Diagnostic(
                        Code.RECORDING_NOT_STARTED,
                        line=line,
                        pointer="/recordingId",
                        detail="the recording was not started earlier",
                    )
                ]
            if ended:
                return [
                    Diagnostic(
                        Code.RECORDING_ALREADY_ENDED,
                        line=line,
                        pointer="/recordingId",
                        detail="the recording already has a terminal entry",
                    )
                ]
        return []

    # --- state ---------------------------------------------------------------------------------

    def _commit(self, obj: dict[str, Any], *, line: int, offset: int, length: int) -> None:
        # Only called after check_entry found nothing: the entry is schema-valid and its
        # references resolve.
        if self._built:
            raise RuntimeError("IndexBuilder.build() was called; use from_index() to continue")
        by_id = self._by_id
        # Type names repeat millions of times in a large session: keep one copy of each.
        entry_type = sys.intern(obj["type"])
        parent_id = obj["parentId"]
        parent = None if parent_id is None else by_id[parent_id]
        target = by_id[obj["targetId"]] if entry_type in TARGETING_TYPES else None
        recording_id = obj["recordingId"] if entry_type in RECORDING_TYPES else None
        meta = EntryMeta(
            obj["id"],
            # Share the id strings already held by the index instead of keeping copies.
            None if parent is None else parent.id,
            entry_type,
            line,
            offset,
            length,
            0 if parent is None else parent.depth + 1,
            None if target is None else target.id,
            recording_id,
        )
        self._entries.append(meta)
        by_id[meta.id] = meta

        if entry_type == "session_info":
            # CTX-12, CTX-13: name and archived resolve globally, each field independently;
            # the last entry in file order that carries the field wins.
            if "name" in obj:
                self._name = obj["name"]
            if "archived" in obj:
                self._archived = bool(obj["archived"])
        elif entry_type == "label" and meta.target_id is not None:
            # CTX-14: labels resolve globally, last wins; null clears.
            label = obj["label"]
            if label is None:
                self._labels.pop(meta.target_id, None)
            else:
                self._labels[meta.target_id] = label
        elif entry_type == "recording.started" and recording_id is not None:
            self._recordings[recording_id] = False
        elif entry_type in RECORDING_TERMINAL_TYPES and recording_id is not None:
            self._recordings[recording_id] = True

    def _extend(self, diagnostics: list[Diagnostic]) -> None:
        self._diagnostic_count += len(diagnostics)
        room = MAX_REPORTED_DIAGNOSTICS - len(self._diagnostics)
        if room > 0:
            self._diagnostics.extend(diagnostics[:room])
