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

from ._trace import O_ACCMODE, O_APPEND, O_CREAT, O_DSYNC, O_TRUNC, Op

__all__ = ["Change", "CrashState", "FileSystemModel", "Pending"]


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


@dataclass(slots=True)
class _Open:
    inode: int
    offset: int
    append: bool
    sync: bool


@dataclass(slots=True)
class FileSystemModel:
    """The workspace ``root`` as a program changes it, durable state kept apart."""

    root: str
    names: dict[str, int] = field(default_factory=dict)  # what the program sees
    dirs: set[str] = field(default_factory=set)
    data: dict[int, bytes] = field(default_factory=dict)
    durable_names: dict[str, int] = field(default_factory=dict)
    durable_dirs: set[str] = field(default_factory=set)
    durable_data: dict[int, bytes] = field(default_factory=dict)
    file_changes: dict[int, list[Change]] = field(default_factory=dict)
    dir_changes: dict[str, list[Change]] = field(default_factory=dict)
    fds: dict[int, _Open] = field(default_factory=dict)
    dir_fds: dict[int, str] = field(default_factory=dict)  # descriptors of directories
    _next_inode: int = 0

    @classmethod
    def start(cls, root: str, files: Mapping[str, bytes], dirs: Iterable[str]) -> FileSystemModel:
        """The workspace before the trace: everything in it is durable."""
        model = cls(root.rstrip("/"))
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

    # --- feeding ---------------------------------------------------------------------------

    def apply(self, op: Op) -> None:
        """Change the program's view by ``op``, and the durable state where DUR-1/DUR-3 say."""
        handler = getattr(self, f"_on_{op.kind}")
        handler(op)

    def _on_open(self, op: Op) -> None:
        rel = self.relative(op.path)
        if rel is None or op.fd is None:
            return
        if rel in self.dirs:
            self.fds[op.fd] = _Open(-1, 0, False, False)
            self.dir_fds[op.fd] = rel
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
        self.fds[op.fd] = _Open(inode, 0, bool(op.flags & O_APPEND), bool(op.flags & O_DSYNC))
        self.dir_fds.pop(op.fd, None)
        if op.flags & O_TRUNC and op.flags & O_ACCMODE and self.data[inode]:
            self._file_change(inode, Change(op.call, "truncate", rel, size=0, inode=inode))

    def _on_write(self, op: Op) -> None:
        opened = self.fds.get(op.fd) if op.fd is not None else None
        if opened is None or opened.inode < 0:
            return
        inode = opened.inode
        if op.offset is not None:
            at = op.offset
        elif opened.append:
            at = len(self.data[inode])
        else:
            at = opened.offset
        rel = self._name_of(inode)
        self._file_change(inode, Change(op.call, "write", rel, data=op.data, offset=at,
                                        inode=inode))
        if op.offset is None:
            opened.offset = at + len(op.data)
        if opened.sync:  # DUR-1: O_SYNC/O_DSYNC writes are durable on return
            self._sync_file(inode)

    def _on_seek(self, op: Op) -> None:
        opened = self.fds.get(op.fd) if op.fd is not None else None
        if opened is not None and op.size is not None:
            opened.offset = op.size

    def _on_truncate(self, op: Op) -> None:
        if op.fd is not None:
            opened = self.fds.get(op.fd)
            inode = opened.inode if opened is not None else -1
        else:
            rel = self.relative(op.path)
            inode = self.names.get(rel, -1) if rel is not None else -1
        if inode < 0:
            return
        self._file_change(inode, Change(op.call, "truncate", self._name_of(inode),
                                        size=op.size or 0, inode=inode))

    def _on_sync(self, op: Op) -> None:
        if op.fd is None:
            return
        if op.fd in self.dir_fds:
            self._sync_dir(self.dir_fds[op.fd])
            return
        opened = self.fds.get(op.fd)
        if opened is not None and opened.inode >= 0:
            self._sync_file(opened.inode)

    # Decision (DUR-1): fdatasync counts as fsync for the file's bytes and size (Linux flushes
    # the metadata needed to read the data back); for a directory it persists its entries.
    _on_datasync = _on_sync

    def _on_syncall(self, op: Op) -> None:
        for inode in list(self.file_changes):
            self._sync_file(inode)
        for parent in list(self.dir_changes):
            self._sync_dir(parent)

    def _on_link(self, op: Op) -> None:
        source, target = self.relative(op.path), self.relative(op.target)
        if source is None or target is None or source not in self.names:
            return
        inode = self.names[source]
        self.names[target] = inode
        self._dir_change(Change(op.call, "link", target, inode=inode))

    def _on_rename(self, op: Op) -> None:
        source, target = self.relative(op.path), self.relative(op.target)
        if source is None or target is None:
            return
        if source in self.dirs:
            self.dirs = {target + d[len(source):] if d == source or d.startswith(source + "/")
                         else d for d in self.dirs}
            for name in [n for n in self.names if n.startswith(source + "/")]:
                self.names[target + name[len(source):]] = self.names.pop(name)
            self._dir_change(Change(op.call, "rename", target, source=source))
            return
        if source not in self.names:
            return
        inode = self.names.pop(source)
        self.names[target] = inode
        self._dir_change(Change(op.call, "rename", target, inode=inode, source=source))

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
            self.fds.pop(op.fd, None)
            self.dir_fds.pop(op.fd, None)

    def _on_dup(self, op: Op) -> None:
        if op.fd is None or op.new_fd is None:
            return
        if op.fd in self.dir_fds:
            self.dir_fds[op.new_fd] = self.dir_fds[op.fd]
        if op.fd in self.fds:
            self.fds[op.new_fd] = self.fds[op.fd]

    # --- durable state ---------------------------------------------------------------------

    def _name_of(self, inode: int) -> str:
        for name, node in self.names.items():
            if node == inode:
                return name
        return f"(an unnamed file, inode {inode})"

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
