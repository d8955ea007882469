"""The column-wise entry table: ``_entries.EntryList``'s contract in a third of the memory.

One machine integer per entry and field in an ``array``, entries referring to each other by
position, and the id strings held once. A session of many small records costs about a third of
what one :class:`EntryMeta` tuple per entry does; an :class:`EntryMeta` is made only when an
entry is looked at. The fast engine's ``new_table`` (``read/_engine.NewEntryTable``).

The lanes (``_lanes``) commit the message entries they proved through
:func:`add_linked_message` and :func:`add_linked_messages`: ID-3 and TREE-1 checked and the
entries appended in one step, on any ``EntryTable`` (a column table does it in a few passes of C).

A forked table shares the columns of the table it came from (they can be large) and sees only
the first ``count`` positions; should two forks both grow, the second copies its part first.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from itertools import accumulate, islice, repeat
from operator import add, lt
from typing import Final

from ..read._entries import EntryMeta, EntryTable
from ..read._schema import KNOWN_ENTRY_TYPES

__all__ = ["ColumnTable", "add_linked_message", "add_linked_messages"]

# An entry's type is stored as its position in this tuple (one byte an entry); an entry is
# committed only after its schema check, so its type is always one of these.
_TYPE_NAMES: Final[tuple[str, ...]] = tuple(sorted(KNOWN_ENTRY_TYPES))
_TYPE_CODES: Final = {name: code for code, name in enumerate(_TYPE_NAMES)}
_MESSAGE_CODE: Final = _TYPE_CODES["message"]
# A root's parent, or a non-targeting entry's target, in a position column.
_NO_POSITION: Final = -1
_new_tuple = tuple.__new__
# A parent that is no committed entry, while a block is checked (add_linked_messages).
_MISSING: Final = -2
_NO_TARGETS: Final = array("i", [_NO_POSITION])


class _Columns:
    """The entries, one column per field, indexed by position in file order (append-only)."""

    __slots__ = (
        "depths", "ids", "lengths", "lines", "offsets", "parents", "positions", "recording_ids",
        "targets", "types",
    )

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.positions: dict[str, int] = {}
        self.types = array("B")  # index into _TYPE_NAMES
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

    def prefix(self, count: int) -> _Columns:
        """A copy of the first ``count`` entries."""
        copy = _Columns()
        copy.ids = self.ids[:count]
        copy.positions = {entry_id: position for position, entry_id in enumerate(copy.ids)}
        for name in ("types", "lines", "offsets", "lengths", "depths", "parents", "targets"):
            setattr(copy, name, getattr(self, name)[:count])
        copy.recording_ids = {p: r for p, r in self.recording_ids.items() if p < count}
        return copy


class ColumnTable:
    """An ``_entries.EntryTable`` over shared columns: the first ``count`` entries."""

    __slots__ = ("_columns", "_count")

    def __init__(self, columns: _Columns | None = None, count: int = 0) -> None:
        self._columns = columns if columns is not None else _Columns()
        self._count = count

    def _find(self, entry_id: object) -> int:
        if not isinstance(entry_id, str):
            return _NO_POSITION
        position = self._columns.positions.get(entry_id, _NO_POSITION)
        return position if position < self._count else _NO_POSITION

    def __len__(self) -> int:
        return self._count

    def __contains__(self, entry_id: object) -> bool:
        # Inlined _find: the graph rules ask this two or three times for every entry read.
        if not isinstance(entry_id, str):
            return False
        return 0 <= self._columns.positions.get(entry_id, _NO_POSITION) < self._count

    def get(self, entry_id: str) -> EntryMeta | None:
        position = self._find(entry_id)
        return None if position == _NO_POSITION else self.at(position)

    def at(self, position: int) -> EntryMeta:
        columns = self._columns
        ids = columns.ids
        parent = columns.parents[position]
        target = columns.targets[position]
        fields = (
            ids[position],
            None if parent == _NO_POSITION else ids[parent],
            _TYPE_NAMES[columns.types[position]],
            columns.lines[position],
            columns.offsets[position],
            columns.lengths[position],
            columns.depths[position],
            None if target == _NO_POSITION else ids[target],
            columns.recording_ids.get(position),
        )
        # tuple.__new__ skips the generated EntryMeta.__new__, a Python-level call.
        return _new_tuple(EntryMeta, fields)

    def ids(self) -> Iterator[str]:
        return islice(self._columns.ids, self._count)

    def add(
        self, entry_id: str, parent_id: str | None, entry_type: str, *, line: int, offset: int,
        length: int, target_id: str | None, recording_id: str | None,
    ) -> None:
        position = self._count
        if len(self._columns.ids) != position:
            # Another fork grew the shared columns first: continue from a copy of ours.
            self._columns = self._columns.prefix(position)
        columns = self._columns
        parent = _NO_POSITION if parent_id is None else columns.positions[parent_id]
        target = _NO_POSITION if target_id is None else columns.positions[target_id]
        type_code = _TYPE_CODES[entry_type]
        # Everything is resolved before the first append, so a failure leaves no partial entry.
        columns.ids.append(entry_id)
        columns.positions[entry_id] = position
        columns.types.append(type_code)
        columns.lines.append(line)
        columns.offsets.append(offset)
        columns.lengths.append(length)
        columns.depths.append(0 if parent == _NO_POSITION else columns.depths[parent] + 1)
        columns.parents.append(parent)
        columns.targets.append(target)
        if recording_id is not None:
            columns.recording_ids[position] = recording_id
        self._count = position + 1

    def add_linked_message(
        self, entry_id: str, parent_id: str | None, *, line: int, offset: int, length: int
    ) -> bool:
        # ``add`` for the common entry (the typed lane's), with the ID-3 and TREE-1 lookups
        # folded in: one call and one dictionary lookup each per entry.
        position = self._count
        columns = self._columns
        if len(columns.ids) != position:
            columns = self._columns = columns.prefix(position)
        positions = columns.positions
        if entry_id in positions:
            return False
        if parent_id is None:
            parent = _NO_POSITION
            depth = 0
        else:
            parent = positions.get(parent_id, _NO_POSITION)
            if parent == _NO_POSITION:
                return False
            depth = columns.depths[parent] + 1
        columns.ids.append(entry_id)
        positions[entry_id] = position
        columns.types.append(_MESSAGE_CODE)
        columns.lines.append(line)
        columns.offsets.append(offset)
        columns.lengths.append(length)
        columns.depths.append(depth)
        columns.parents.append(parent)
        columns.targets.append(_NO_POSITION)
        self._count = position + 1
        return True

    def add_linked_messages(
        self, ids: list[str], parents: list[str | None], lengths: list[int], *, line: int,
        offset: int,
    ) -> bool:
        # The block lane's commit (``_messages_block``): ID-3 and TREE-1 for the whole block in
        # a few passes of C, then each column extended once. ID-3 costs no lookup: the id
        # lookup grows by the block's size exactly when every id is new.
        position = self._count
        count = len(ids)
        columns = self._columns
        if len(columns.ids) != position:
            columns = self._columns = columns.prefix(position)
        positions = columns.positions
        if len(parents) != count or len(lengths) != count:
            return False
        positions.update(zip(ids, range(position, position + count), strict=False))
        if len(positions) != position + count:
            # ID-3: an id repeated in the block, or committed before and now overwritten, so
            # the lookup is built again: O(entries), which a caller that feeds no further block
            # after a refusal pays once (_lanes.add_plain_messages).
            columns.positions = dict(zip(columns.ids, range(position), strict=False))
            return False
        parent_positions = self._linked_parents(ids, parents, position)
        if parent_positions is None:
            for entry_id in ids:
                del positions[entry_id]
            return False
        columns.ids.extend(ids)
        columns.types.frombytes(bytes((_MESSAGE_CODE,)) * count)
        columns.lines.extend(range(line, line + count))
        columns.offsets.extend(islice(accumulate(map(add, lengths, repeat(1)), initial=offset),
                                      count))
        columns.lengths.extend(lengths)
        columns.parents.extend(parent_positions)
        columns.targets.extend(_NO_TARGETS * count)
        self._count = position + count
        return True

    def _linked_parents(
        self, ids: list[str], parents: list[str | None], position: int
    ) -> list[int] | range | None:
        """The parent positions of a block about to be committed at ``position`` (its ids
        already in ``positions``), its depths appended; None, appending nothing, if TREE-1
        fails: a parent is neither None nor an entry before its child."""
        count = len(ids)
        columns = self._columns
        depths = columns.depths
        first = parents[0]
        if parents[1:] == ids[:-1]:
            # A chain (each entry the child of the one before, the common case): one lookup.
            parent = _NO_POSITION if first is None else columns.positions.get(first, _MISSING)
            if parent == _MISSING or parent >= position:
                return None
            depth = 0 if parent == _NO_POSITION else depths[parent] + 1
            depths.extend(range(depth, depth + count))
            return [parent, *range(position, position + count - 1)]
        get = columns.positions.get
        parent_positions = [
            _NO_POSITION if parent_id is None else get(parent_id, _MISSING)
            for parent_id in parents
        ]
        # TREE-1: each parent committed before its child (a later entry of the block is not).
        if _MISSING in parent_positions or not all(
                map(lt, parent_positions, range(position, position + count))):
            return None
        for parent in parent_positions:
            depths.append(0 if parent == _NO_POSITION else depths[parent] + 1)
        return parent_positions

    def fork(self) -> ColumnTable:
        return ColumnTable(self._columns, self._count)


def add_linked_message(
    table: EntryTable, entry_id: str, parent_id: str | None, *, line: int, offset: int,
    length: int,
) -> bool:
    """Append a ``message`` entry to ``table`` if ID-3 and TREE-1 hold (its id is new, its
    parent is None or committed); False, appending nothing, if either fails."""
    if isinstance(table, ColumnTable):
        return table.add_linked_message(entry_id, parent_id, line=line, offset=offset,
                                        length=length)
    if entry_id in table or (parent_id is not None and parent_id not in table):
        return False
    table.add(entry_id, parent_id, "message", line=line, offset=offset, length=length,
              target_id=None, recording_id=None)
    return True


def add_linked_messages(
    table: EntryTable, ids: list[str], parents: list[str | None], lengths: list[int], *,
    line: int, offset: int,
) -> bool:
    """:func:`add_linked_message` for consecutive lines from ``line`` and byte ``offset``
    (``lengths`` without their LF), all or nothing: False, appending nothing, unless every id
    is new and every parent None, committed or an earlier one of ``ids``."""
    if isinstance(table, ColumnTable):
        return table.add_linked_messages(ids, parents, lengths, line=line, offset=offset)
    earlier: set[str] = set()
    for entry_id, parent_id in zip(ids, parents, strict=True):
        if entry_id in table or entry_id in earlier or (
                parent_id is not None and parent_id not in table and parent_id not in earlier):
            return False
        earlier.add(entry_id)
    for entry_id, parent_id, length in zip(ids, parents, lengths, strict=True):
        table.add(entry_id, parent_id, "message", line=line, offset=offset, length=length,
                  target_id=None, recording_id=None)
        line += 1
        offset += length + 1
    return True
