"""CTX-19, "reading writes nothing", checked as identity, not only as contents.

Rule: a read-only step (validate, context, info, read; ``list`` of dsh-v0) may leave no trace
in the workspace, and a write that restores the same bytes is still a write. Contents alone
(``_workspace.snapshot``) miss two writes an implementation can make on every read:

* replacing ``session.jsonl`` through a temporary file and a rename, with the same bytes;
* creating ``session.lock`` and removing it again before it replies.

So the runner compares two more things around each read-only step:

1. :func:`identities`: every entry's type, device, inode, mode, size, mtime and ctime (the
   workspace directory itself included). A rename-replace gives the file a new inode; a write of
   the same bytes moves its mtime and ctime; an entry created or removed in a directory moves
   the directory's. This holds on every platform, but a timestamp moves only by the file
   system's granularity (on Linux before multigrain timestamps, a clock tick of a few ms), so a
   lock made and removed within one tick of the step's start may leave the directory's times as
   they were.
2. :class:`Watch`, on Linux: an inotify watch on every directory of the workspace for the
   length of the step. The kernel queues each create, remove, rename, write, attribute change
   and close of a file opened for writing as the system call happens, so the lock made and
   removed is seen whatever the clock says, with its name. No privilege is needed; where inotify
   cannot be had (another system, the watch limit reached) the identities alone decide.

Strace could see the same calls, but needs ptrace permission and costs a traced process per
step; inotify costs one file descriptor per read-only step and nothing where no event comes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import stat
import struct
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Identities", "Identity", "ReadWatch", "Watch", "identities", "identity_changes"]


@dataclass(frozen=True, slots=True)
class Identity:
    """What ``lstat`` says of one entry, beside its contents."""

    kind: str  # "dir", "file", "link", "special"
    device: int
    inode: int
    mode: int
    size: int
    mtime_ns: int
    ctime_ns: int


# relative path ('/'-separated; "." for the root) -> its identity
Identities = dict[str, Identity]


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    return "special"


def _identity(info: os.stat_result) -> Identity:
    return Identity(_kind(info.st_mode), info.st_dev, info.st_ino, stat.S_IMODE(info.st_mode),
                    info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def identities(root: Path, limit: int = 20_000) -> Identities:
    """The identity of ``root`` and of every entry under it, never following a link; at most
    ``limit`` entries (a tree past it was refused by the content snapshot already)."""
    found: Identities = {}
    try:
        found["."] = _identity(os.lstat(root))
    except OSError:
        return found
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack and len(found) < limit:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = prefix + entry.name
            found[rel] = _identity(info)
            if stat.S_ISDIR(info.st_mode):
                stack.append((entry.path, rel + "/"))
    return found


def _name(rel: str) -> str:
    return "the workspace directory" if rel == "." else rel


def identity_changes(before: Mapping[str, Identity], after: Mapping[str, Identity]) -> list[str]:
    """What the identities say changed, for entries whose contents did not: a file replaced by
    another (a new inode), a write of the same bytes, a new mode, a directory in which an entry
    was created or removed (its mtime or ctime moved)."""
    changes: list[str] = []
    for rel in sorted(before.keys() & after.keys()):
        old, new = before[rel], after[rel]
        if old == new:
            continue
        if (old.device, old.inode) != (new.device, new.inode):
            changes.append(f"replaced {_name(rel)} (another {new.kind} with the same contents, "
                           "as a write to a temporary file renamed over it leaves)")
        elif old.mode != new.mode:
            changes.append(f"changed the mode of {_name(rel)} ({old.mode:o} -> {new.mode:o})")
        elif old.kind == "dir":
            changes.append(f"created, removed or renamed an entry of {_name(rel)} (its "
                           "modification or change time moved)")
        elif (old.mtime_ns, old.ctime_ns, old.size) != (new.mtime_ns, new.ctime_ns, new.size):
            changes.append(f"wrote to {_name(rel)} (the same contents; its modification or "
                           "change time moved)")
    return changes


# --- inotify (Linux) ---------------------------------------------------------------------------

# <sys/inotify.h>: what a read-only step must not cause in a watched directory.
_IN_MODIFY = 0x00000002
_IN_ATTRIB = 0x00000004
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
# Each event the step caused, in the words of a finding (the first bit of the mask that is set).
_EVENTS: tuple[tuple[int, str], ...] = (
    (_IN_CREATE, "created {}"),
    (_IN_DELETE, "removed {}"),
    (_IN_MOVED_FROM, "renamed {} away"),
    (_IN_MOVED_TO, "renamed a file to {}"),
    (_IN_MODIFY, "wrote to {}"),
    (_IN_CLOSE_WRITE, "opened {} for writing"),
    (_IN_ATTRIB, "changed the attributes of {}"),
    (_IN_DELETE_SELF, "removed {}"),
    (_IN_MOVE_SELF, "renamed {}"),
)
_MASK = sum(bit for bit, _ in _EVENTS)  # distinct bits
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


class Watch:
    """An inotify watch on directories of a workspace, for the length of one step."""

    def __init__(self, fd: int, directories: Mapping[int, str]) -> None:
        self._fd = fd
        self._directories = directories  # watch descriptor -> relative path ("" the root)

    @classmethod
    def start(cls, root: Path, directories: Iterable[str]) -> Watch | None:
        """Watch ``root`` and its subdirectories ``directories`` (relative); None where inotify
        cannot be had (not Linux, no libc, the limits reached): the identities decide alone."""
        if _LIBC is None:
            return None
        fd = _LIBC.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        watched: dict[int, str] = {}
        for rel in ("", *directories):
            path = os.fsencode(root / rel if rel else root)
            wd = _LIBC.inotify_add_watch(fd, path, _MASK | _IN_ONLYDIR | _IN_DONT_FOLLOW)
            if wd < 0:
                os.close(fd)
                return None
            watched[wd] = rel
        return cls(fd, watched)

    def changes(self) -> list[str]:
        """What happened in the watched directories since the start, one finding per entry and
        kind of event, in order; the watch is closed."""
        data = b""
        try:
            while True:
                try:
                    chunk = os.read(self._fd, 65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(self._fd)
        findings: list[str] = []
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
            offset += _HEADER.size + length
            if mask & _IN_Q_OVERFLOW:
                findings.append("changed the workspace (more events than the kernel queues)")
                continue
            name = os.fsdecode(raw.rstrip(b"\0"))
            directory = self._directories.get(wd, "?")
            rel = f"{directory}/{name}" if directory and name else (name or directory)
            for bit, words in _EVENTS:
                if mask & bit:
                    finding = words.format(_name(rel or "."))
                    if finding not in findings:
                        findings.append(finding)
                    break
        return findings


@dataclass(slots=True)
class ReadWatch:
    """CTX-19 around one step of the runner: for a read-only step, the entries' identities
    before it and an inotify watch for its length; nothing for any other step."""

    before: Identities = field(default_factory=dict)
    watch: Watch | None = None
    seen: list[str] = field(default_factory=list)

    @classmethod
    def begin(cls, workspace: Path, snapshot: Mapping[str, str], read_only: bool) -> ReadWatch:
        """``snapshot``: the content snapshot just before the step (its "dir" entries are the
        directories watched besides the workspace itself)."""
        if not read_only:
            return cls()
        directories = [rel for rel, state in snapshot.items() if state == "dir"]
        return cls(identities(workspace), Watch.start(workspace, directories))

    def end(self) -> None:
        """Stop watching: call it as soon as the adapter replied, before the runner itself
        touches the workspace again."""
        if self.watch is not None:
            self.seen, self.watch = self.watch.changes(), None

    def changes(self, workspace: Path) -> list[str]:
        """What the step did that left the contents as they were (empty: nothing)."""
        if not self.before:
            return []
        return self.seen or identity_changes(self.before, identities(workspace))
