"""Which process holds which file: descriptor tables as Linux keeps them, for the model.

Rule: a descriptor is (process, number), never a number alone. Each process has a table
(threads and CLONE_FILES children share one table object; fork copies it, slot by slot, the
file descriptions shared; ``execve`` and ``unshare(CLONE_FILES)`` make it private, and
``execve`` then drops the close-on-exec slots). A slot points at an open file description
(offset and O_APPEND shared by dup and fork) or at None: a file outside the workspace. A pid
first seen without the call that made it (a thread already running when strace attached)
shares the first process's table. Sans-IO.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._trace import CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE

__all__ = ["Description", "DescriptorTables", "Slot"]


@dataclass(slots=True)
class Description:
    """An open file description. ``dir``: a workspace directory's path (kept through
    renames); else ``inode`` is the workspace file's."""

    inode: int
    offset: int
    append: bool
    sync: bool
    dir: str | None = None


@dataclass(slots=True)
class Slot:
    """One descriptor of one table: its file description (None: not a workspace file) and
    its own close-on-exec flag."""

    description: Description | None
    cloexec: bool = False


Table = dict[int, Slot]


@dataclass(slots=True)
class DescriptorTables:
    tables: dict[int, Table] = field(default_factory=dict)
    _first: Table | None = None

    def table(self, pid: int) -> Table:
        table = self.tables.get(pid)
        if table is None:
            if self._first is None:
                self._first = {}
            table = self.tables[pid] = self._first
        return table

    def slot(self, pid: int, fd: int) -> Slot | None:
        return self.table(pid).get(fd)

    def put(self, pid: int, fd: int, slot: Slot) -> None:
        """``fd`` now holds ``slot``, whatever it held before (open, dup2 closing it first)."""
        self.table(pid)[fd] = slot

    def close(self, pid: int, fd: int) -> None:
        self.table(pid).pop(fd, None)

    def close_range(self, pid: int, first: int, last: int, flags: int) -> None:
        if flags & CLOSE_RANGE_UNSHARE:
            self.unshare(pid)
        table = self.table(pid)
        for fd in [fd for fd in table if first <= fd <= last]:
            if flags & CLOSE_RANGE_CLOEXEC:
                table[fd].cloexec = True
            else:
                del table[fd]

    def fork(self, parent: int, child: int, shared: bool) -> None:
        """``shared``: CLONE_FILES (a thread, or a child sharing the table)."""
        table = self.table(parent)
        self.tables[child] = table if shared else _copy(table)

    def unshare(self, pid: int) -> None:
        self.tables[pid] = _copy(self.table(pid))

    def exec(self, pid: int) -> None:
        """execve: a private table without the close-on-exec descriptors."""
        self.tables[pid] = {fd: s for fd, s in self.table(pid).items() if not s.cloexec}

    def descriptions(self) -> list[Description]:
        """Every open file description of the workspace, once per table."""
        tables = {id(t): t for t in self.tables.values()}.values()
        return [slot.description for table in tables for slot in table.values()
                if slot.description is not None]


def _copy(table: Table) -> Table:
    return {fd: Slot(s.description, s.cloexec) for fd, s in table.items()}
