"""The committed entries of a session: what the index keeps of each, and how it is looked up.

No I/O and no bodies: an entry is kept as an :class:`EntryMeta` (ids, positions and the few
fields the graph rules need), so the index of a session with gigabytes of audio stays small;
bodies are read again on demand by position.

The graph rules (``_graph``) see the entries through :class:`EntryLookup`, two questions
only; the index and the builder (``_session``) use the rest of :class:`EntryTable`.
:class:`EntryList` is the readable table, a list and a dictionary; ``fast/_entries_fast`` holds
the column-wise table the fast engine uses for sessions of many small records
(``_engine.NewEntryTable``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, overload

__all__ = [
    "EntriesById",
    "EntryList",
    "EntryLookup",
    "EntryMeta",
    "EntryTable",
    "EntryView",
]


class EntryMeta(NamedTuple):
    """What the index keeps of one committed entry: no body, only positions and graph fields.

    ``offset``/``length`` locate the record's bytes in ``session.jsonl`` (``length`` excludes the
    LF). ``depth`` is the number of ancestors (a root entry has depth 0); it bounds the ancestor
    check. ``target_id`` is the ``targetId`` of a ``label`` or ``message.removed`` entry;
    ``recording_id`` the ``recordingId`` of a ``recording.*`` entry.
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


class EntryLookup(Protocol):
    """What the graph rules ask about the entries committed so far."""

    def __contains__(self, entry_id: object) -> bool: ...

    def get(self, entry_id: str) -> EntryMeta | None: ...


class EntryTable(EntryLookup, Protocol):
    """The committed entries in file order, append-only."""

    def __len__(self) -> int: ...

    def at(self, position: int) -> EntryMeta:
        """The entry at ``position`` (0 is the first entry after the header)."""
        ...

    def ids(self) -> Iterator[str]: ...

    def add(
        self, entry_id: str, parent_id: str | None, entry_type: str, *, line: int, offset: int,
        length: int, target_id: str | None, recording_id: str | None,
    ) -> None:
        """Append an entry; its parent and target are committed entries (the rules said so).
        The table works out its depth."""
        ...

    def fork(self) -> EntryTable:
        """A table holding the same entries that can grow without changing this one."""
        ...


class EntryList:
    """The readable table: the entries in a list, and each id's position in a dictionary."""

    def __init__(self, entries: Sequence[EntryMeta] = ()) -> None:
        self._entries = list(entries)
        self._positions = {entry.id: position for position, entry in enumerate(self._entries)}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and entry_id in self._positions

    def get(self, entry_id: str) -> EntryMeta | None:
        position = self._positions.get(entry_id)
        return None if position is None else self._entries[position]

    def at(self, position: int) -> EntryMeta:
        return self._entries[position]

    def ids(self) -> Iterator[str]:
        return (entry.id for entry in self._entries)

    def add(
        self, entry_id: str, parent_id: str | None, entry_type: str, *, line: int, offset: int,
        length: int, target_id: str | None, recording_id: str | None,
    ) -> None:
        parent = None if parent_id is None else self.get(parent_id)
        depth = 0 if parent is None else parent.depth + 1
        entry = EntryMeta(
            entry_id, parent_id, entry_type, line, offset, length, depth, target_id, recording_id
        )
        self._positions[entry_id] = len(self._entries)
        self._entries.append(entry)

    def fork(self) -> EntryList:
        return EntryList(self._entries)


class EntryView(Sequence[EntryMeta]):
    """The entries of a table in file order: indexing, slicing (a tuple), iteration, and
    equality with a tuple of the same entries."""

    __slots__ = ("_table",)

    def __init__(self, table: EntryTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    @overload
    def __getitem__(self, index: int) -> EntryMeta: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[EntryMeta, ...]: ...

    def __getitem__(self, index: int | slice) -> EntryMeta | tuple[EntryMeta, ...]:
        count = len(self._table)
        if isinstance(index, slice):
            return tuple(self._table.at(position) for position in range(*index.indices(count)))
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("entry position out of range")
        return self._table.at(index)

    def __iter__(self) -> Iterator[EntryMeta]:
        at = self._table.at
        return (at(position) for position in range(len(self._table)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (EntryView, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EntryView(<{len(self)} entries>)"


class EntriesById(Mapping[str, EntryMeta]):
    """The entries of a table by id, iterated in file order."""

    __slots__ = ("_table",)

    def __init__(self, table: EntryTable) -> None:
        self._table = table

    def __getitem__(self, entry_id: str) -> EntryMeta:
        entry = self._table.get(entry_id) if isinstance(entry_id, str) else None
        if entry is None:
            raise KeyError(entry_id)
        return entry

    def get(self, entry_id: str, default: Any = None) -> Any:
        entry = self._table.get(entry_id) if isinstance(entry_id, str) else None
        return default if entry is None else entry

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._table

    def __len__(self) -> int:
        return len(self._table)

    def __iter__(self) -> Iterator[str]:
        return self._table.ids()

    def __repr__(self) -> str:
        return f"EntriesById(<{len(self)} entries>)"
