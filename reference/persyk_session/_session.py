"""The session graph, built incrementally from parsed records (no I/O).

:class:`IndexBuilder` is fed one parsed record at a time (by the reader in ``_store`` or, for an
append, by the writer checking new records against a committed session) and applies the graph
rules of spec.md. It keeps only ids, positions and the few fields the graph rules need, never a
body, so the index of a session with gigabytes of audio or protocol payloads stays small; bodies
are read again on demand by position.

The index is column-wise (:class:`_Columns`): one machine integer per entry and field in an
``array``, entries referring to each other by position, and the id strings held once. A session
of many small records costs about a third of what one :class:`EntryMeta` tuple per entry did;
:class:`EntryMeta` is made only when an entry is looked at.

The few global fields that ``info`` reports (session name, archive flag, labels) are tiny and
resolved while indexing, so ``info`` needs no second pass over the file.
"""

from __future__ import annotations

import bisect
from array import array
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any, NamedTuple, overload

from . import _schema
from ._errors import Code, Diagnostic

__all__ = [
    "MAX_REPORTED_DIAGNOSTICS",
    "EntriesById",
    "EntryMeta",
    "EntryView",
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

# The index stores an entry's type as its position in this tuple (one byte an entry); an entry
# is committed only after its schema check, so its type is always one of these.
ENTRY_TYPE_NAMES: tuple[str, ...] = tuple(sorted(_schema.KNOWN_ENTRY_TYPES))
_TYPE_CODES = {name: code for code, name in enumerate(ENTRY_TYPE_NAMES)}
_REMOVABLE_CODES = frozenset(_TYPE_CODES[name] for name in REMOVABLE_TYPES)
_new_tuple = tuple.__new__
# No entry (a root's parent, a non-targeting entry's target) in a position column.
_NONE = -1


class EntryMeta(NamedTuple):
    """What the index keeps of one committed entry: no body, only positions and graph fields.

    ``offset``/``length`` locate the record's bytes in ``session.jsonl`` (``length`` excludes the
    LF). ``depth`` is the number of ancestors (a root entry has depth 0); it bounds the ancestor
    check. ``target_id`` is the ``targetId`` of a ``label`` or ``message.removed`` entry;
    ``recording_id`` the ``recordingId`` of a ``recording.*`` entry.

    The index does not hold these: it stores columns (:class:`_Columns`) and makes an
    ``EntryMeta`` each time an entry is looked at. A named tuple rather than a frozen dataclass:
    both are immutable, but a tuple is built about four times faster (0.5 us against 2 us).
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


class _Columns:
    """The committed entries, one column per field, indexed by position in file order.

    Append-only: :class:`IndexBuilder` appends, and a :class:`SessionIndex` sees the first
    ``count`` positions it was built with. Entries refer to each other by position (``_NONE`` for
    none), so each id string is held once, by ``ids``, and shared by ``positions``.
    """

    __slots__ = (
        "depths",
        "ids",
        "lengths",
        "lines",
        "offsets",
        "parents",
        "positions",
        "recording_ids",
        "targets",
        "types",
    )

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.positions: dict[str, int] = {}
        self.types = array("B")  # index into ENTRY_TYPE_NAMES
        # Lines and offsets count every byte of the file, entries or not: 64 bits.
        self.lines = array("q")
        self.offsets = array("q")
        # A committed record is at most MAX_RECORD_BYTES (1 MiB) long.
        self.lengths = array("I")
        # Depths and positions are below the entry count, and 2**31 entries could not be held
        # in memory anyway (the ids alone would take over 100 GB): 32 bits.
        self.depths = array("i")
        self.parents = array("i")
        self.targets = array("i")
        # Only recording.* entries carry a recordingId: few, so a table rather than a column.
        self.recording_ids: dict[int, str] = {}

    def find(self, entry_id: object, count: int) -> int:
        """The position of ``entry_id`` among the first ``count`` entries, else ``_NONE``."""
        position = self.positions.get(entry_id, _NONE) if isinstance(entry_id, str) else _NONE
        return position if position < count else _NONE

    def meta(self, position: int) -> EntryMeta:
        ids = self.ids
        parent = self.parents[position]
        target = self.targets[position]
        fields = (
            ids[position],
            None if parent == _NONE else ids[parent],
            ENTRY_TYPE_NAMES[self.types[position]],
            self.lines[position],
            self.offsets[position],
            self.lengths[position],
            self.depths[position],
            None if target == _NONE else ids[target],
            self.recording_ids.get(position),
        )
        # tuple.__new__ skips the generated EntryMeta.__new__, a Python-level call.
        return _new_tuple(EntryMeta, fields)

    def prefix(self, count: int) -> _Columns:
        """A copy of the first ``count`` entries (for a builder whose columns another extended)."""
        copy = _Columns()
        copy.ids = self.ids[:count]
        copy.positions = {entry_id: position for position, entry_id in enumerate(copy.ids)}
        for name in ("types", "lines", "offsets", "lengths", "depths", "parents", "targets"):
            setattr(copy, name, getattr(self, name)[:count])
        copy.recording_ids = {p: r for p, r in self.recording_ids.items() if p < count}
        return copy


class EntryView(Sequence[EntryMeta]):
    """The entries of a :class:`SessionIndex` in file order, each made on access.

    Behaves as the tuple of :class:`EntryMeta` it replaces: indexing, slicing (a tuple),
    iteration, and equality with a tuple of the same entries.
    """

    __slots__ = ("_columns", "_count")

    def __init__(self, columns: _Columns, count: int) -> None:
        self._columns = columns
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> EntryMeta: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[EntryMeta, ...]: ...

    def __getitem__(self, index: int | slice) -> EntryMeta | tuple[EntryMeta, ...]:
        if isinstance(index, slice):
            meta = self._columns.meta
            return tuple(meta(position) for position in range(*index.indices(self._count)))
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("entry position out of range")
        return self._columns.meta(index)

    def __iter__(self) -> Iterator[EntryMeta]:
        meta = self._columns.meta
        return (meta(position) for position in range(self._count))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (EntryView, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EntryView(<{self._count} entries>)"


class EntriesById(Mapping[str, EntryMeta]):
    """The entries of a :class:`SessionIndex` by id (iteration in file order), made on access."""

    __slots__ = ("_columns", "_count")

    def __init__(self, columns: _Columns, count: int) -> None:
        self._columns = columns
        self._count = count

    def __getitem__(self, entry_id: str) -> EntryMeta:
        position = self._columns.find(entry_id, self._count)
        if position == _NONE:
            raise KeyError(entry_id)
        return self._columns.meta(position)

    def get(self, entry_id: str, default: Any = None) -> Any:
        position = self._columns.find(entry_id, self._count)
        return default if position == _NONE else self._columns.meta(position)

    def __contains__(self, entry_id: object) -> bool:
        return self._columns.find(entry_id, self._count) != _NONE

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return islice(self._columns.ids, self._count)

    def __repr__(self) -> str:
        return f"EntriesById(<{self._count} entries>)"


@dataclass(frozen=True, slots=True)
class SessionIndex:
    """The result of indexing a session: header, entries in file order, findings, global fields.

    ``entries`` and ``by_id`` are views over the builder's columns, which :meth:`IndexBuilder.build`
    hands over without a copy; they see only the entries committed before ``build``.
    """

    header: dict[str, Any] | None
    entries: EntryView
    by_id: EntriesById
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
    def valid(self) -> bool:
        return self.diagnostic_count == 0 and self.header is not None

    @property
    def truncated(self) -> bool:
        return self.diagnostic_count > len(self.diagnostics)

    @property
    def default_leaf(self) -> str | None:
        # CTX-1: omitting a leaf selects the last appended entry of any type.
        count = len(self.entries)
        return self.entries._columns.ids[count - 1] if count else None

    def counts_by_type(self) -> dict[str, int]:
        """Entries per type, types in order of first appearance."""
        count = len(self.entries)
        counts = Counter(self.entries._columns.types[:count])
        return {ENTRY_TYPE_NAMES[code]: n for code, n in counts.items()}

    def ancestry(self, leaf: str | None) -> list[EntryMeta]:
        """``leaf`` and its ancestors, root first; empty for None or an id that is no entry."""
        columns = self.entries._columns
        parents = columns.parents
        position = _NONE if leaf is None else columns.find(leaf, len(self.entries))
        chain: list[int] = []
        while position != _NONE:
            chain.append(position)
            position = parents[position]
        meta = columns.meta
        return [meta(position) for position in reversed(chain)]

    def position_at_offset(self, offset: int) -> int | None:
        """The position of the entry whose record starts at byte ``offset``, if one does."""
        count = len(self.entries)
        offsets = self.entries._columns.offsets
        position = bisect.bisect_left(offsets, offset, 0, count)
        return position if position < count and offsets[position] == offset else None


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
        self._columns = _Columns()
        # The builder's entries are the first ``_count`` of ``_columns`` (see from_index).
        self._count = 0
        self._diagnostics: list[Diagnostic] = []
        self._diagnostic_count = 0
        self._name: str | None = None
        self._archived = False
        self._labels: dict[str, str] = {}
        self._recordings: dict[str, bool] = {}
        self._lines = 0

    @classmethod
    def from_index(cls, index: SessionIndex) -> IndexBuilder:
        """A builder that continues after a committed session (for appends).

        It shares the index's columns instead of copying them (they can be large) and appends
        to them; the index still sees only its own entries. Should another builder have
        appended to the shared columns first, this one copies its part before committing.
        """
        builder = cls()
        builder._header = index.header
        builder._first_seen = True
        builder._first_was_header = index.header is not None
        builder._columns = index.entries._columns
        builder._count = len(index.entries)
        builder._diagnostics = list(index.diagnostics)
        builder._diagnostic_count = index.diagnostic_count
        builder._name = index.name
        builder._archived = index.archived
        builder._labels = dict(index.labels)
        builder._recordings = dict(index.recordings)
        builder._lines = index.lines
        return builder

    # --- feeding -------------------------------------------------------------------------------

    @property
    def lines(self) -> int:
        """Physical lines fed so far, blank ones included (the next line is ``lines + 1``)."""
        return self._lines

    def note_line(self, line: int) -> None:
        """Count a physical line (a blank one, REC-15, is never fed otherwise)."""
        self._lines = max(self._lines, line)

    @property
    def first_seen(self) -> bool:
        """Whether any line other than a blank one (REC-15) was fed."""
        return self._first_seen

    @property
    def has_header(self) -> bool:
        return self._header is not None

    @property
    def entry_count(self) -> int:
        return self._count

    @property
    def last_entry_id(self) -> str | None:
        return self._columns.ids[self._count - 1] if self._count else None

    def recording_ended(self, recording_id: str) -> bool | None:
        """None: no ``recording.started`` of that id yet; False: started, no terminal entry;
        True: ended (TREE-9..TREE-11; capture and recovery ask, CAP-26)."""
        return self._recordings.get(recording_id)

    def __contains__(self, entry_id: object) -> bool:
        return self._columns.find(entry_id, self._count) != _NONE

    def get(self, entry_id: str) -> EntryMeta | None:
        position = self._columns.find(entry_id, self._count)
        return None if position == _NONE else self._columns.meta(position)

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
        """The index so far. ``empty`` says the file held no record (SESSION_EMPTY, HDR-1).

        The index takes over the columns without a copy (they can be large), so the builder
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
            entries=EntryView(self._columns, self._count),
            by_id=EntriesById(self._columns, self._count),
            diagnostics=tuple(diagnostics),
            diagnostic_count=count,
            name=self._name,
            archived=self._archived,
            labels=dict(self._labels),
            recordings=dict(self._recordings),
            lines=self._lines,
        )

    # --- rules ---------------------------------------------------------------------------------

    def _graph_findings(self, obj: dict[str, Any], line: int) -> list[Diagnostic]:
        # Only called for a schema-valid entry: the envelope members are present and well typed,
        # and so is the ``targetId`` / ``recordingId`` of the types that require one.
        found: list[Diagnostic] = []
        columns = self._columns
        count = self._count
        entry_type: str = obj["type"]
        parent_id: str | None = obj["parentId"]

        # ID-3: entry ids are unique within a session.
        if columns.find(obj["id"], count) != _NONE:
            found.append(
                Diagnostic(
                    Code.ID_DUPLICATE,
                    line=line,
                    pointer="/id",
                    detail="an earlier entry has the same id",
                )
            )
        # TREE-1, ID-4: a parent is an earlier entry (the header is not an entry).
        parent = _NONE if parent_id is None else columns.find(parent_id, count)
        if parent_id is not None and parent == _NONE:
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
            if columns.find(obj["targetId"], count) == _NONE:
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
        self, target_id: object, parent: int, parent_id: object, line: int
    ) -> list[Diagnostic]:
        # ``parent`` is the parent's position, or _NONE.
        target = self._columns.find(target_id, self._count)
        if target == _NONE:
            return [
                Diagnostic(
                    Code.REMOVAL_TARGET_NOT_FOUND,
                    line=line,
                    pointer="/targetId",
                    detail="the removal target is not an earlier entry",
                )
            ]
        if parent_id is not None and parent == _NONE:
            return []  # PARENT_NOT_FOUND already says why the chain cannot be followed
        # TREE-6: the target is on the removal's own parent chain.
        if parent == _NONE or not self._is_ancestor_or_self(target, parent):
            return [
                Diagnostic(
                    Code.REMOVAL_TARGET_NOT_ANCESTOR,
                    line=line,
                    pointer="/targetId",
                    detail="the removal target is not an ancestor of the removal",
                )
            ]
        # TREE-7: only message and custom_message entries can be removed.
        if self._columns.types[target] not in _REMOVABLE_CODES:
            return [
                Diagnostic(
                    Code.REMOVAL_TARGET_WRONG_TYPE,
                    line=line,
                    pointer="/targetId",
                    detail="the removal target is not a message or custom message",
                )
            ]
        return []

    def _is_ancestor_or_self(self, target: int, start: int) -> bool:
        # Positions. Walk up from ``start`` only as far as the target's depth: O(depth difference).
        depths = self._columns.depths
        parents = self._columns.parents
        target_depth = depths[target]
        node = start
        while node != _NONE and depths[node] > target_depth:
            node = parents[node]
        return node == target

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
        self._lines = max(self._lines, line)
        columns = self._columns
        position = self._count
        if len(columns.ids) != position:
            # Another builder continued the same index first: continue from a copy of ours.
            columns = self._columns = columns.prefix(position)
        entry_id: str = obj["id"]
        entry_type: str = obj["type"]
        type_code = _TYPE_CODES[entry_type]
        parent_id = obj["parentId"]
        parent = _NONE if parent_id is None else columns.positions[parent_id]
        target = columns.positions[obj["targetId"]] if entry_type in TARGETING_TYPES else _NONE
        recording_id = obj["recordingId"] if entry_type in RECORDING_TYPES else None
        # Everything is resolved before the first append, so a failure leaves no partial entry.
        columns.ids.append(entry_id)
        columns.positions[entry_id] = position
        columns.types.append(type_code)
        columns.lines.append(line)
        columns.offsets.append(offset)
        columns.lengths.append(length)
        columns.depths.append(0 if parent == _NONE else columns.depths[parent] + 1)
        columns.parents.append(parent)
        columns.targets.append(target)
        if recording_id is not None:
            columns.recording_ids[position] = recording_id
        self._count = position + 1

        if entry_type == "session_info":
            # CTX-12, CTX-13: name and archived resolve globally, each field independently;
            # the last entry in file order that carries the field wins.
            if "name" in obj:
                self._name = obj["name"]
            if "archived" in obj:
                self._archived = bool(obj["archived"])
        elif entry_type == "label" and target != _NONE:
            # CTX-14: labels resolve globally, last wins; null clears.
            target_id = columns.ids[target]  # the index's own copy of the id string
            label = obj["label"]
            if label is None:
                self._labels.pop(target_id, None)
            else:
                self._labels[target_id] = label
        elif entry_type == "recording.started" and recording_id is not None:
            self._recordings[recording_id] = False
        elif entry_type in RECORDING_TERMINAL_TYPES and recording_id is not None:
            self._recordings[recording_id] = True

    def _extend(self, diagnostics: list[Diagnostic]) -> None:
        self._diagnostic_count += len(diagnostics)
        room = MAX_REPORTED_DIAGNOSTICS - len(self._diagnostics)
        if room > 0:
            self._diagnostics.extend(diagnostics[:room])
