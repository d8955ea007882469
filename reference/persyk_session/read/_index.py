"""The session index, built incrementally from parsed records (no I/O).

:class:`IndexBuilder` is fed one parsed record at a time (by the reader in ``_store`` or, for an
append, by the planner checking new records against a committed session) and applies the header
rules, the entry schema and the graph rules (``_graph``). It keeps only what ``_entries`` keeps
of each entry, never a body. The few global fields that ``info`` reports (session name, archive
flag, labels) are tiny and resolved while indexing, so ``info`` needs no second pass.

Rule: a record with any finding is never committed, so it never becomes a parent or a target.
The entry table and the schema checks are the ones the caller passes in (an engine's, see
``_engine``; by default ``_entries.EntryList`` and ``_schema``); the rules here are the same
whichever they are.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from .._errors import Code, Diagnostic
from . import _schema
from ._entries import EntriesById, EntryList, EntryMeta, EntryTable, EntryView
from ._graph import RECORDING_TERMINAL_TYPES, RECORDING_TYPES, TARGETING_TYPES, graph_findings

if TYPE_CHECKING:
    from ._engine import SchemaRules

__all__ = [
    "MAX_REPORTED_DIAGNOSTICS",
    "EntriesById",
    "EntryMeta",
    "EntryView",
    "IndexBuilder",
    "SessionIndex",
]

# validate reports at most this many diagnostics (docs/maintainers/architecture.md, "JSON results").
MAX_REPORTED_DIAGNOSTICS: Final = 100


@dataclass(frozen=True, slots=True)
class SessionIndex:
    """The result of indexing a session: header, entries in file order, findings, global fields.

    ``entries`` and ``by_id`` are views of the entry table, which :meth:`IndexBuilder.build`
    hands over without a copy.
    """

    header: dict[str, Any] | None
    table: EntryTable
    # The first MAX_REPORTED_DIAGNOSTICS findings, sorted by line; ``diagnostic_count`` counts all.
    diagnostics: tuple[Diagnostic, ...]
    diagnostic_count: int
    name: str | None = None
    archived: bool = False
    labels: Mapping[str, str] = field(default_factory=dict)
    # recordingId -> whether a terminal entry was seen (needed to continue with an append).
    recordings: Mapping[str, bool] = field(default_factory=dict)
    # Physical lines read, blank ones (REC-15) included: the next record's line is lines + 1.
    lines: int = 0

    @property
    def entries(self) -> EntryView:
        return EntryView(self.table)

    @property
    def by_id(self) -> EntriesById:
        return EntriesById(self.table)

    @property
    def valid(self) -> bool:
        # HDR-8: a valid header alone is a valid session; MSG-8: no rule asks for an
        # assistant message, so user messages alone are valid too.
        return self.diagnostic_count == 0 and self.header is not None

    @property
    def truncated(self) -> bool:
        return self.diagnostic_count > len(self.diagnostics)

    @property
    def default_leaf(self) -> str | None:
        # CTX-1: omitting a leaf selects the last appended entry of any type.
        count = len(self.table)
        return self.table.at(count - 1).id if count else None

    def counts_by_type(self) -> dict[str, int]:
        """Entries per type, types in order of first appearance."""
        return dict(Counter(entry.type for entry in self.entries))

    def ancestry(self, leaf: str | None) -> list[EntryMeta]:
        """``leaf`` and its ancestors, root first; empty for None or an id that is no entry."""
        chain: list[EntryMeta] = []
        entry = None if leaf is None else self.table.get(leaf)
        while entry is not None:
            chain.append(entry)
            entry = None if entry.parent_id is None else self.table.get(entry.parent_id)
        chain.reverse()
        return chain

    def position_at_offset(self, offset: int) -> int | None:
        """The position of the entry whose record starts at byte ``offset``, if one does."""
        entries = self.entries
        position = bisect.bisect_left(entries, offset, key=_offset_of)
        return position if position < len(entries) and entries[position].offset == offset else None


def _offset_of(entry: EntryMeta) -> int:
    return entry.offset


def _line_key(diagnostic: Diagnostic) -> int:
    # Findings without a line (SESSION_EMPTY) concern the whole file and sort first.
    return diagnostic.line if diagnostic.line is not None else 0


class IndexBuilder:
    """Applies the header, schema and graph rules to records fed in file order.

    The reader calls :meth:`add_record` for every parsed record and :meth:`report` for records
    that failed to parse; :meth:`check_entry` and :meth:`commit_checked` let the append planner
    check new records against a committed session (see :meth:`from_index`). A record with any
    finding is not committed, so it never becomes a parent or a target.
    """

    def __init__(self, table: EntryTable | None = None, *, schema: SchemaRules = _schema) -> None:
        self._table: EntryTable = table if table is not None else EntryList()
        self._schema = schema
        self._header: dict[str, Any] | None = None
        self._first_seen = False
        self._first_was_header = False
        self._built = False
        self._diagnostics: list[Diagnostic] = []
        self._diagnostic_count = 0
        self._name: str | None = None
        self._archived = False
        self._labels: dict[str, str] = {}
        self._recordings: dict[str, bool] = {}
        self._lines = 0

    @classmethod
    def from_index(cls, index: SessionIndex, *, schema: SchemaRules = _schema) -> IndexBuilder:
        """A builder that continues after a committed session (for appends and recovery); the
        index keeps seeing only its own entries."""
        builder = cls(index.table.fork(), schema=schema)
        builder._header = index.header
        builder._first_seen = True
        builder._first_was_header = index.header is not None
        builder._diagnostics = list(index.diagnostics)
        builder._diagnostic_count = index.diagnostic_count
        builder._name = index.name
        builder._archived = index.archived
        builder._labels = dict(index.labels)
        builder._recordings = dict(index.recordings)
        builder._lines = index.lines
        return builder

    # --- what has been fed so far --------------------------------------------------------------

    @property
    def lines(self) -> int:
        """Physical lines fed so far, blank ones included (the next line is ``lines + 1``)."""
        return self._lines

    def note_line(self, line: int) -> None:
        """Count a physical line (a blank one, REC-15, is never fed otherwise)."""
        self._lines = max(self._lines, line)

    @property
    def table(self) -> EntryTable:
        """The committed entries so far (the index takes the table over at :meth:`build`)."""
        return self._table

    @property
    def built(self) -> bool:
        """Whether :meth:`build` was called: then nothing more is committed."""
        return self._built

    @property
    def recordings(self) -> Mapping[str, bool]:
        """recordingId -> whether its terminal entry was committed (TREE-9..TREE-11)."""
        return self._recordings

    @property
    def first_seen(self) -> bool:
        """Whether any line other than a blank one (REC-15) was fed."""
        return self._first_seen

    @property
    def last_entry_id(self) -> str | None:
        count = len(self._table)
        return self._table.at(count - 1).id if count else None

    def recording_ended(self, recording_id: str) -> bool | None:
        """None: no ``recording.started`` of that id yet; False: started, no terminal entry;
        True: ended (TREE-9..TREE-11; capture and recovery ask, CAP-26)."""
        return self._recordings.get(recording_id)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._table

    def get(self, entry_id: str) -> EntryMeta | None:
        return self._table.get(entry_id)

    # --- feeding -------------------------------------------------------------------------------

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
            found = [Diagnostic(
                Code.HEADER_NOT_FIRST, line=line, pointer="/type",
                detail="the first record is not a session header")]
        else:
            self._first_was_header = True
            found = [replace(d, line=line) for d in self._schema.validate_header(obj)]
            if not found:
                self._header = obj
        self._extend(found)
        return found

    def check_entry(self, obj: dict[str, Any], *, line: int) -> list[Diagnostic]:
        """The findings for ``obj`` as the next entry, against the entries committed so far.

        Commits nothing. Schema findings come first; graph rules are applied only to an entry
        that passed the schema (its fields cannot be trusted otherwise), so one fault yields
        one diagnostic (DIAG-6).
        """
        if obj.get("type") == "session":
            if not self._first_was_header:
                # The missing header is already reported at line 1 (HEADER_NOT_FIRST); a session
                # record later is the same fault, not a second one.
                return []
            # HDR-7: exactly one header.
            return [Diagnostic(
                Code.HEADER_REPEATED, line=line, pointer="/type", detail="a second session header")]
        found = self._schema.validate_entry(obj)
        if found:
            return [replace(d, line=line) for d in found]
        return graph_findings(obj, line, self._table, self._recordings)

    def add_entry(
        self, obj: dict[str, Any], *, line: int, offset: int, length: int
    ) -> list[Diagnostic]:
        """Check ``obj`` as the next entry and commit it when there is no finding."""
        found = self.check_entry(obj, line=line)
        if found:
            self._extend(found)
        elif obj.get("type") != "session":  # a later session record is reported once, at line 1
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
        """The index so far. ``empty`` says the file held no record (SESSION_EMPTY, HDR-1).

        The index takes over the entry table without a copy (it can be large), so the builder
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
            table=self._table,
            diagnostics=tuple(diagnostics),
            diagnostic_count=count,
            name=self._name,
            archived=self._archived,
            labels=dict(self._labels),
            recordings=dict(self._recordings),
            lines=self._lines,
        )

    # --- state ---------------------------------------------------------------------------------

    def _commit(self, obj: dict[str, Any], *, line: int, offset: int, length: int) -> None:
        # Only called after check_entry found nothing: the entry is schema-valid and its
        # references resolve.
        if self._built:
            raise RuntimeError("IndexBuilder.build() was called; use from_index() to continue")
        self._lines = max(self._lines, line)
        entry_type: str = obj["type"]
        target_id = obj["targetId"] if entry_type in TARGETING_TYPES else None
        recording_id = obj["recordingId"] if entry_type in RECORDING_TYPES else None
        self._table.add(
            obj["id"], obj["parentId"], entry_type, line=line, offset=offset, length=length,
            target_id=target_id, recording_id=recording_id,
        )
        self._resolve_globals(obj, entry_type, recording_id)

    def _resolve_globals(
        self, obj: dict[str, Any], entry_type: str, recording_id: str | None
    ) -> None:
        if entry_type == "session_info":
            # CTX-12, CTX-13: name and archived resolve globally, each field independently;
            # the last entry in file order that carries the field wins.
            if "name" in obj:
                self._name = obj["name"]
            if "archived" in obj:
                self._archived = bool(obj["archived"])
        elif entry_type == "label":
            # CTX-14: labels resolve globally, last wins; null clears.
            if obj["label"] is None:
                self._labels.pop(obj["targetId"], None)
            else:
                self._labels[obj["targetId"]] = obj["label"]
        elif entry_type == "recording.started" and recording_id is not None:
            self._recordings[recording_id] = False
        elif entry_type in RECORDING_TERMINAL_TYPES and recording_id is not None:
            self._recordings[recording_id] = True

    def _extend(self, diagnostics: list[Diagnostic]) -> None:
        self._diagnostic_count += len(diagnostics)
        room = MAX_REPORTED_DIAGNOSTICS - len(self._diagnostics)
        if room > 0:
            self._diagnostics.extend(diagnostics[:room])
