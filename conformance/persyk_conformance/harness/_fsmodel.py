"""An abstract file system that keeps what is durable apart from what is only written (DUR-1..).

Rule: everything the harness assumes about persistence lives here, as the DUR rules of
docs/spec.md state it, and nowhere else:

* DUR-1: a file's bytes (writes and truncations) become durable when an ``fsync`` or
  ``fdatasync`` of that file returns, or at once for a descriptor opened with O_SYNC/O_DSYNC;
* DUR-2: until then a crash may keep any *prefix* of the file's unsynced changes, in the order
  they were made, and tear the last kept write (a prefix of its bytes) (Decision: no
  reordering of one file's unsynced writes);
* DUR-3: a new name (create, link, mkdir), a rename or a removal becomes durable when its
  parent directory is fsynced; until then any prefix of that directory's unsynced changes
  survives (a rename counts in the directory it lands in);
* DUR-4: the files and the directories are independent of each other: one may keep all of its
  unsynced changes and another none (this is the reordering a power cut really does).

Sans-IO: the model is fed :class:`~._trace.Op` values and the bytes the workspace held before
the trace (all durable); it answers with crash states as plain ``{relative path: bytes}``
mappings, and with the unsynced changes in words for the sync-order analysis.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import overload

from ._descriptors import Description, DescriptorTables, Slot
from ._trace import (
    CLONE_FILES,
    FD_CLOEXEC,
    O_ACCMODE,
    O_APPEND,
    O_CLOEXEC,
    O_CREAT,
    O_DIRECT,
    O_DSYNC,
    O_TRUNC,
    RWF_APPEND,
    RWF_DSYNC,
    RWF_SYNC,
    Op,
)

__all__ = ["Change", "CrashState", "FileSystemModel", "Pending", "Unverifiable"]


@dataclass(frozen=True, slots=True)
class Change:
    """One unsynced change: a file's write or truncation, or a directory's entry change."""

    call: int
    kind: str  # write, truncate | create, link, mkdir, unlink, rmdir, rename
    path: str  # the file's (or the new entry's) path, relative to the workspace
    data: bytes = b""
    offset: int = 0
    size: int = 0
    inode: int = -1
    source: str = ""  # rename: the old path


@dataclass(frozen=True, slots=True)
class Pending:
    """What is written but not durable at one moment, per file and per directory."""

    files: Mapping[int, tuple[Change, ...]]  # inode -> its unsynced changes, in order
    directories: Mapping[str, tuple[Change, ...]]  # parent path -> unsynced entry changes


@dataclass(frozen=True, slots=True)
class CrashState:
    """What one power cut may leave: every file (relative path -> bytes) and directory."""

    files: Mapping[str, bytes]
    directories: frozenset[str]
    kept: str  # how the unsynced changes were cut, in words (for the report)

    def key(self) -> tuple[tuple[tuple[str, bytes], ...], tuple[str, ...]]:
        return tuple(sorted(self.files.items())), tuple(sorted(self.directories))


class Unverifiable(Exception):
    """The trace holds a call the model does not understand on the workspace (a shared
    writable mapping, io_uring, O_DIRECT, copy_file_range, ...), or a descriptor whose path
    strace printed disagrees with the model: nothing it did can be taken as durable. The
    message starts ``unverifiable: <call>``."""


@dataclass(slots=True)
class FileSystemModel:
    """The workspace ``root`` as a program changes it, durable state kept apart.

    Descriptors are per process (``fds``, ``_descriptors``) and checked against the path
    strace prints for them. ``same_fs``: paths outside the workspace that the edge found on
    the workspace's file system (a ``syncfs`` through them syncs it)."""

    root: str
    names: dict[str, int] = field(default_factory=dict)  # what the program sees
    dirs: set[str] = field(default_factory=set)
    data: dict[int, bytes] = field(default_factory=dict)
    durable_names: dict[str, int] = field(default_factory=dict)
    durable_dirs: set[str] = field(default_factory=set)
    durable_data: dict[int, bytes] = field(default_factory=dict)
    file_changes: dict[int, list[Change]] = field(default_factory=dict)
    dir_changes: dict[str, list[Change]] = field(default_factory=dict)
    fds: DescriptorTables = field(default_factory=DescriptorTables)
    same_fs: frozenset[str] = frozenset()
    _next_inode: int = 0

    @classmethod
    def start(cls, root: str, files: Mapping[str, bytes], dirs: Iterable[str],
              same_fs: Iterable[str] = ()) -> FileSystemModel:
        """The workspace before the trace: everything in it is durable."""
        model = cls(root.rstrip("/"), same_fs=frozenset(same_fs))
        model.dirs = {"", *dirs}
        model.durable_dirs = set(model.dirs)
        for path, content in files.items():
            inode = model._inode()
            model.names[path] = model.durable_names[path] = inode
            model.data[inode] = model.durable_data[inode] = content
        return model

    def _inode(self) -> int:
        self._next_inode += 1
        return self._next_inode

    def relative(self, path: str | None) -> str | None:
        """``path`` inside the workspace, or None for anything else (the interpreter's files)."""
        if path is None:
            return None
        path = path.removesuffix(" (deleted)")
        if path == self.root:
            return ""
        if path.startswith(self.root + "/"):
            return path[len(self.root) + 1 :]
        return None

    # --- descriptors ---------------------------------------------------------------------

    def _slot(self, op: Op) -> Slot | None:
        """The slot ``op``'s descriptor names, checked against the path strace printed for it:
        a workspace file the model does not hold there, or a workspace file of the model that
        the kernel names outside, is a model that lost track (Unverifiable)."""
        if op.fd is None:
            return None
        slot = self.fds.slot(op.pid, op.fd)
        opened = slot.description if slot is not None else None
        rel = self.relative(op.path)
        if rel is not None and (opened is None or not (op.deleted or self._names(opened, rel))):
            held = "no workspace file" if opened is None else self._held(opened)
            raise Unverifiable(
                f"unverifiable: {op.syscall or op.kind} at call {op.call}: strace names "
                f"descriptor {op.fd} of process {op.pid} {rel or '(workspace)'}, the model "
                f"holds {held} there")
        if (rel is None and op.path is not None and opened is not None and not op.deleted
                and (opened.dir is not None or self._name_of(opened.inode, None) is not None)):
            raise Unverifiable(
                f"unverifiable: {op.syscall or op.kind} at call {op.call}: strace names "
                f"descriptor {op.fd} of process {op.pid} {op.path}, outside the workspace; the "
                f"model holds {self._held(opened)} there")
        return slot

    def _names(self, opened: Description, rel: str) -> bool:
        if opened.dir is not None:
            return opened.dir == rel
        return self.names.get(rel) == opened.inode

    def _held(self, opened: Description) -> str:
        if opened.dir is not None:
            return f"the directory {opened.dir or '(workspace)'}"
        return self._name_of(opened.inode)

    def _opened(self, op: Op) -> Description | None:
        slot = self._slot(op)
        return slot.description if slot is not None else None

    def holds_workspace_file(self, op: Op) -> bool:
        """Whether ``op``'s descriptor is a workspace file or directory (never raises)."""
        if op.fd is None:
            return False
        slot = self.fds.slot(op.pid, op.fd)
        return slot is not None and slot.description is not None

    # --- feeding ---------------------------------------------------------------------------

    def apply(self, op: Op) -> None:
        """Change the program's view by ``op``, and the durable state where DUR-1/DUR-3 say;
        raises Unverifiable for what the model cannot follow on the workspace."""
        handler = getattr(self, f"_on_{op.kind}")
        handler(op)

    def _on_open(self, op: Op) -> None:
        if op.fd is None:
            return
        cloexec = bool(op.flags & O_CLOEXEC)
        self.fds.put(op.pid, op.fd, Slot(None, cloexec))  # whatever was there before is gone
        rel = self.relative(op.path)
        if rel is None:
            return
        if op.flags & O_DIRECT:
            raise Unverifiable(f"unverifiable: {op.syscall} with O_DIRECT of {rel} at call "
                               f"{op.call}")
        if rel in self.dirs:
            self.fds.put(op.pid, op.fd, Slot(Description(-1, 0, False, False, dir=rel), cloexec))
            return
        if rel not in self.names:
            if not op.flags & O_CREAT:
                return
            inode = self._inode()
            self.names[rel] = inode
            self.data[inode] = b""
            self.durable_data[inode] = b""
            self._dir_change(Change(op.call, "create", rel, inode=inode))
        inode = self.names[rel]
        self.fds.put(op.pid, op.fd, Slot(Description(inode, 0, bool(op.flags & O_APPEND),
                                                     bool(op.flags & O_DSYNC)), cloexec))
        if op.flags & O_TRUNC and op.flags & O_ACCMODE and self.data[inode]:
            self._file_change(inode, Change(op.call, "truncate", rel, size=0, inode=inode))

    def _on_write(self, op: Op) -> None:
        opened = self._opened(op)
        if opened is None or opened.dir is not None:
            return
        inode = opened.inode
        if op.offset is not None:
            at = op.offset
        elif opened.append or op.flags & RWF_APPEND:
            at = len(self.data[inode])
        else:
            at = opened.offset
        rel = self._name_of(inode)
        self._file_change(inode, Change(op.call, "write", rel, data=op.data, offset=at,
                                        inode=inode))
        if op.offset is None:
            opened.offset = at + len(op.data)
        if opened.sync or op.flags & (RWF_DSYNC | RWF_SYNC):  # DUR-1: durable on return
            self._sync_file(inode)

    def _on_seek(self, op: Op) -> None:
        opened = self._opened(op)
        if opened is not None and op.size is not None:
            opened.offset = op.size

    def _on_truncate(self, op: Op) -> None:
        if op.fd is not None:
            opened = self._opened(op)
            inode = opened.inode if opened is not None and opened.dir is None else -1
        else:
            rel = self.relative(op.path)
            inode = self.names.get(rel, -1) if rel is not None else -1
        if inode < 0:
            return
        self._file_change(inode, Change(op.call, "truncate", self._name_of(inode),
                                        size=op.size or 0, inode=inode))

    def _on_sync(self, op: Op) -> None:
        opened = self._opened(op)
        if opened is None:
            return  # DUR-1: a sync counts for the object it names, and nothing else
        if opened.dir is not None:
            self._sync_dir(opened.dir)
        else:
            self._sync_file(opened.inode)

    # Decision (DUR-1): fdatasync counts as fsync for the file's bytes and size (Linux flushes
    # the metadata needed to read the data back); for a directory it persists its entries.
    _on_datasync = _on_sync

    def _on_syncfs(self, op: Op) -> None:
        """syncfs syncs the file system its descriptor is on: the workspace's only through a
        workspace descriptor or a path the edge found on the same device (never /proc)."""
        if self._opened(op) is not None or (op.path is not None and op.path in self.same_fs):
            self._on_syncall(op)

    def _on_syncall(self, op: Op) -> None:
        for inode in list(self.file_changes):
            self._sync_file(inode)
        for parent in list(self.dir_changes):
            self._sync_dir(parent)

    def _on_link(self, op: Op) -> None:
        source, target = self.relative(op.path), self.relative(op.target)
        if target is not None and (source is None or source not in self.names):
            raise Unverifiable(f"unverifiable: {op.syscall or 'link'} at call {op.call} names "
                               f"{target} after a file the model does not hold ({op.path})")
        if source is None or target is None:
            return
        inode = self.names[source]
        self.names[target] = inode
        self._dir_change(Change(op.call, "link", target, inode=inode))

    def _on_rename(self, op: Op) -> None:
        source, target = self.relative(op.path), self.relative(op.target)
        if target is not None and (source is None or (source not in self.names
                                                      and source not in self.dirs)):
            raise Unverifiable(f"unverifiable: {op.syscall or 'rename'} at call {op.call} "
                               f"moves {op.path}, which the model does not hold, to {target}")
        if source is None:
            return
        if target is None:  # moved out of the workspace: gone from it, like a removal
            if source in self.dirs:
                self._drop_tree(source)
                self._dir_change(Change(op.call, "rmdir", source))
            elif source in self.names:
                self._dir_change(Change(op.call, "unlink", source,
                                        inode=self.names.pop(source)))
            return
        if source in self.dirs:
            self.dirs = {target + d[len(source):] if d == source or d.startswith(source + "/")
                         else d for d in self.dirs}
            for name in [n for n in self.names if n.startswith(source + "/")]:
                self.names[target + name[len(source):]] = self.names.pop(name)
            for opened in self.fds.descriptions():
                if opened.dir is not None and (opened.dir == source
                                               or opened.dir.startswith(source + "/")):
                    opened.dir = target + opened.dir[len(source):]
            self._dir_change(Change(op.call, "rename", target, source=source))
            return
        inode = self.names.pop(source)
        self.names[target] = inode
        self._dir_change(Change(op.call, "rename", target, inode=inode, source=source))

    def _drop_tree(self, top: str) -> None:
        self.dirs = {d for d in self.dirs if not (d == top or d.startswith(top + "/"))}
        for name in [n for n in self.names if n.startswith(top + "/")]:
            del self.names[name]

    def _on_unlink(self, op: Op) -> None:
        rel = self.relative(op.path)
        if rel is None or rel not in self.names:
            return
        inode = self.names.pop(rel)
        self._dir_change(Change(op.call, "unlink", rel, inode=inode))

    def _on_mkdir(self, op: Op) -> None:
        rel = self.relative(op.path)
        if rel is None:
            return
        self.dirs.add(rel)
        self._dir_change(Change(op.call, "mkdir", rel))

    def _on_rmdir(self, op: Op) -> None:
        rel = self.relative(op.path)
        if rel is None:
            return
        self.dirs.discard(rel)
        self._dir_change(Change(op.call, "rmdir", rel))

    def _on_close(self, op: Op) -> None:
        if op.fd is not None:
            self.fds.close(op.pid, op.fd)

    def _on_close_range(self, op: Op) -> None:
        if op.fd is not None and op.size is not None:
            self.fds.close_range(op.pid, op.fd, op.size, op.flags)

    def _on_dup(self, op: Op) -> None:
        if op.fd is None or op.new_fd is None:
            return
        slot = self._slot(op)
        # The new descriptor is exactly the old one's file (None: not a workspace file).
        self.fds.put(op.pid, op.new_fd, Slot(slot.description if slot is not None else None,
                                             bool(op.flags & O_CLOEXEC)))

    def _on_setfd(self, op: Op) -> None:
        slot = self.fds.slot(op.pid, op.fd) if op.fd is not None else None
        if slot is not None:
            slot.cloexec = bool(op.flags & FD_CLOEXEC)

    def _on_setfl(self, op: Op) -> None:
        opened = self._opened(op)
        if opened is None:
            return
        if op.flags & O_DIRECT:
            raise Unverifiable(f"unverifiable: fcntl(F_SETFL, O_DIRECT) of {self._held(opened)} "
                               f"at call {op.call}")
        opened.append = bool(op.flags & O_APPEND)

    def _on_fork(self, op: Op) -> None:
        if op.new_pid is not None:
            self.fds.fork(op.pid, op.new_pid, shared=bool(op.flags & CLONE_FILES))

    def _on_unshare(self, op: Op) -> None:
        if op.flags & CLONE_FILES:
            self.fds.unshare(op.pid)

    def _on_exec(self, op: Op) -> None:
        self.fds.exec(op.pid)

    def _on_unverifiable(self, op: Op) -> None:
        """A call the model cannot follow: harmless unless it touches the workspace (io_uring
        and AIO name no file: they always count)."""
        opened = self._opened(op) if op.fd is not None else None
        where = self.relative(op.path) if op.fd is None else None
        target = self.relative(op.target)
        if op.fd is None and op.path is None:
            raise Unverifiable(f"unverifiable: {op.syscall} at call {op.call} (the model cannot "
                               "see which files it writes)")
        if opened is not None or where is not None or target is not None:
            what = self._held(opened) if opened is not None else (where or target)
            raise Unverifiable(f"unverifiable: {op.syscall} of {what} at call {op.call} (the "
                               "model cannot see what it writes or makes durable)")

    # --- durable state ---------------------------------------------------------------------

    @overload
    def _name_of(self, inode: int) -> str: ...

    @overload
    def _name_of(self, inode: int, unnamed: None) -> str | None: ...

    def _name_of(self, inode: int, unnamed: str | None = "") -> str | None:
        for name, node in self.names.items():
            if node == inode:
                return name
        return f"(an unnamed file, inode {inode})" if unnamed is not None else None

    def _file_change(self, inode: int, change: Change) -> None:
        self.data[inode] = _changed(self.data[inode], change)
        self.file_changes.setdefault(inode, []).append(change)

    def _dir_change(self, change: Change) -> None:
        self.dir_changes.setdefault(_parent(change.path), []).append(change)

    def _sync_file(self, inode: int) -> None:
        self.durable_data[inode] = self.data[inode]
        self.file_changes.pop(inode, None)

    def _sync_dir(self, parent: str) -> None:
        for change in self.dir_changes.pop(parent, []):
            _apply_entry(self.durable_names, self.durable_dirs, change)

    def pending(self) -> Pending:
        return Pending({i: tuple(c) for i, c in self.file_changes.items() if c},
                       {d: tuple(c) for d, c in self.dir_changes.items() if c})

    # --- crash states ----------------------------------------------------------------------

    def crash_states(self, limit: int, seed: int) -> list[CrashState]:
        """The crash states DUR-1..DUR-4 allow now, at most ``limit`` of them: always the one
        that keeps no unsynced change, the one that keeps all, and each dimension alone kept
        or alone dropped; the rest a seeded sample. Identical states are built once."""
        dims = self._dimensions()
        if not dims:
            return [self._state({}, "everything was durable")]
        picks: list[dict[str, int]] = [
            {name: 0 for name, _ in dims},
            {name: len(options) - 1 for name, options in dims},
        ]
        for name, _options in dims:
            picks.append({n: (len(o) - 1 if n == name else 0) for n, o in dims})
            picks.append({n: (0 if n == name else len(o) - 1) for n, o in dims})
        total = 1
        for _, options in dims:
            total *= len(options)
        if total <= limit * 4:
            everything = itertools.product(*(range(len(o)) for _, o in dims))
            picks += [dict(zip((n for n, _ in dims), combo, strict=True)) for combo in everything]
        else:
            rng = random.Random(seed)
            picks += [{n: rng.randrange(len(o)) for n, o in dims} for _ in range(limit * 2)]
        states: dict[object, CrashState] = {}
        for pick in picks:
            state = self._state({n: dict(dims)[n][i] for n, i in pick.items()},
                                _words(pick, dims, self.label))
            states.setdefault(state.key(), state)
            if len(states) >= limit:
                break
        return list(states.values())

    def _dimensions(self) -> list[tuple[str, list[tuple[int, int]]]]:
        """Per file and directory with unsynced changes: its options as (changes kept, bytes
        of the next write kept; -1 none): DUR-2's prefixes and one tear of each write."""
        dims: list[tuple[str, list[tuple[int, int]]]] = []
        for inode, changes in sorted(self.file_changes.items()):
            options: list[tuple[int, int]] = []
            for kept, change in enumerate(changes):
                options.append((kept, -1))
                if change.kind == "write" and len(change.data) > 1:
                    options.append((kept, len(change.data) // 2))  # DUR-2: torn
            options.append((len(changes), -1))
            dims.append((f"file:{inode}", options))
        for parent, entry_changes in sorted(self.dir_changes.items()):
            dims.append((f"dir:{parent}", [(k, -1) for k in range(len(entry_changes) + 1)]))
        return dims

    def label(self, dimension: str) -> str:
        """A dimension in words: the file's name, or the directory's."""
        kind, _, key = dimension.partition(":")
        if kind == "file":
            return self._name_of(int(key))
        return f"directory {key or '(workspace)'}"

    def _state(self, chosen: Mapping[str, tuple[int, int]], kept: str) -> CrashState:
        names, dirs = dict(self.durable_names), set(self.durable_dirs)
        for parent, changes in self.dir_changes.items():
            count, _ = chosen.get(f"dir:{parent}", (0, -1))
            for change in changes[:count]:
                _apply_entry(names, dirs, change)
        data = dict(self.durable_data)
        for inode, changes in self.file_changes.items():
            count, torn = chosen.get(f"file:{inode}", (0, -1))
            content = data[inode]
            for change in changes[:count]:
                content = _changed(content, change)
            if torn >= 0:
                content = _changed(content, _torn(changes[count], torn))
            data[inode] = content
        visible = {path: data[inode] for path, inode in names.items()
                   if _reachable(path, dirs) and inode in data}
        return CrashState(visible, frozenset(d for d in dirs if _reachable(d, dirs)), kept)


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _reachable(path: str, dirs: set[str]) -> bool:
    """A name is there after the cut only if every directory above it is."""
    parent = _parent(path)
    while parent:
        if parent not in dirs:
            return False
        parent = _parent(parent)
    return True


def _changed(content: bytes, change: Change) -> bytes:
    if change.kind == "truncate":
        return content[: change.size].ljust(change.size, b"\0")
    end = change.offset + len(change.data)
    padded = content.ljust(change.offset, b"\0")
    return padded[: change.offset] + change.data + padded[end:]


def _torn(change: Change, keep: int) -> Change:
    return Change(change.call, change.kind, change.path, change.data[:keep], change.offset)


def _apply_entry(names: dict[str, int], dirs: set[str], change: Change) -> None:
    if change.kind in ("create", "link"):
        names[change.path] = change.inode
    elif change.kind == "unlink":
        names.pop(change.path, None)
    elif change.kind == "mkdir":
        dirs.add(change.path)
    elif change.kind == "rmdir":
        dirs.discard(change.path)
    elif change.kind == "rename" and change.inode < 0:  # a directory moved
        moved = {d for d in dirs if d == change.source or d.startswith(change.source + "/")}
        dirs -= moved
        dirs |= {change.path + d[len(change.source):] for d in moved}
        for name in [n for n in names if n.startswith(change.source + "/")]:
            names[change.path + name[len(change.source):]] = names.pop(name)
    elif change.kind == "rename":
        names.pop(change.source, None)
        names[change.path] = change.inode


def _words(pick: Mapping[str, int], dims: list[tuple[str, list[tuple[int, int]]]],
           label: Callable[[str], str]) -> str:
    """"session/session.jsonl kept 0 of 2 unsynced changes; directory session kept 1 of 3"."""
    parts = []
    for name, options in dims:
        kept, torn = options[pick[name]]
        total = options[-1][0]
        torn_words = f" and {torn} bytes of the next write" if torn >= 0 else ""
        parts.append(f"{label(name)} kept {kept} of {total} unsynced changes{torn_words}")
    return "; ".join(parts)
