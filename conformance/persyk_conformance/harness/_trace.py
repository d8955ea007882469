"""strace text in, file-system operations out: the sans-IO half of the power-loss harness.

Rule 1: this module never opens a file or starts a process. It reads the text that
``strace -f -qq -X raw -xx -yy -s BIG -e trace=TRACED_SYSCALLS`` writes (one call a line, the
pid first, descriptors annotated with their paths, flags as raw numbers) and turns every call
that can change what a power cut leaves behind, or which process holds which descriptor, into
an :class:`Op`. Failed calls change nothing and are dropped (except ``close``: Linux frees the
descriptor even when close fails); a call split by another thread (``<unfinished ...>`` /
``<... resumed>``) is joined first.

Rule 2: nothing an adapter names can be mistaken for syntax. ``-xx`` prints *every* byte of
every string and every ``-yy`` path as ``\\xNN``, so a file named ``c"d``, ``m) = 0`` or with a
newline or invalid UTF-8 in it is hex like any other, and ``"``, ``<``, ``>``, ``(``, ``)`` and
``,`` in a line are always strace's own (``_strace_syntax`` reads that punctuation, and only
it). Text in the older ``-x`` form, with C escapes, is read too, for hand-written traces; the
harness never asks for it.

Rule 3: a child appears after the call that made it. A ``clone``/``fork``/``vfork`` split by
its child's first calls is emitted when it returns the child's pid; the child's calls seen
before that are held back until then (:class:`TraceReader`).

The operations name files by absolute path (resolved against the directory descriptor for
``*at`` calls); what belongs to the workspace is the model's business (``_fsmodel``).
"""

from __future__ import annotations

import platform
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ._strace_syntax import TraceError, annotated, decode_c_string, split_call

__all__ = [
    "DEFAULT_TRACE_BUDGET",
    "TRACED_SYSCALLS",
    "UNVERIFIABLE_SYSCALLS",
    "Op",
    "TraceBudget",
    "TraceError",
    "TraceReader",
    "TraceTooLarge",
    "decode_c_string",
    "parse_trace",
]

# What the model understands: calls that write, sync, name or remove files, and the calls that
# decide which process holds which descriptor (fork/clone, dup*, fcntl, close*, execve).
TRACED_SYSCALLS: tuple[str, ...] = (
    "open", "openat", "openat2", "creat", "write", "pwrite64", "writev", "pwritev", "pwritev2",
    "lseek", "fsync", "fdatasync", "sync_file_range", "ftruncate", "truncate", "rename",
    "renameat", "renameat2", "link", "linkat", "unlink", "unlinkat", "mkdir", "mkdirat",
    "rmdir", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "sync", "syncfs",
    "clone", "clone3", "fork", "vfork", "execve", "execveat", "unshare",
)
# What it does not: calls that change a file's bytes, or make them durable, in ways the trace
# does not show (a shared writable mapping, asynchronous or kernel-side copies, O_DIRECT).
# A check that meets one on the workspace cannot be verified and says which call it was.
UNVERIFIABLE_SYSCALLS: tuple[str, ...] = (
    "mmap", "copy_file_range", "sendfile", "splice", "fallocate", "io_uring_setup",
    "io_uring_enter", "io_submit", "symlink", "symlinkat", "mknodat", "mknod",
    "open_by_handle_at",
)

# Open flags (strace -X raw prints numbers); x86-64 and aarch64 agree except for O_DIRECT.
O_ACCMODE, O_CREAT, O_TRUNC, O_APPEND = 0o3, 0o100, 0o1000, 0o2000
O_DSYNC = 0o10000  # the DUR rules: a write through such a descriptor is durable on return
O_SYNC = 0o4010000
O_CLOEXEC = 0o2000000
O_DIRECT = 0o200000 if platform.machine() in ("aarch64", "arm64") else 0o40000
AT_REMOVEDIR = 0x200
CLONE_FILES = 0x400
RENAME_EXCHANGE = 0x2
F_DUPFD, F_SETFD, F_SETFL, F_DUPFD_CLOEXEC = 0, 2, 4, 1030
FD_CLOEXEC = 1
CLOSE_RANGE_UNSHARE, CLOSE_RANGE_CLOEXEC = 0x2, 0x4
RWF_DSYNC, RWF_SYNC, RWF_APPEND = 0x2, 0x4, 0x10
MAP_SHARED, MAP_SHARED_VALIDATE, PROT_WRITE = 0x1, 0x3, 0x2

_LINE = re.compile(r"^(?:\[pid\s+)?(?P<pid>\d+)\]?\s+(?P<rest>.*)$", re.S)
_UNFINISHED = " <unfinished ...>"
_RESUMED = re.compile(r"^<\.\.\. (?P<name>\w+) resumed>(?P<rest>.*)$", re.S)
_CLONES = frozenset({"clone", "clone3", "fork", "vfork"})


class TraceTooLarge(TraceError):
    """One step's trace passed the budget (TRACE_TOO_LARGE): the adapter is ended, the check
    fails naming the budget."""

    code = "TRACE_TOO_LARGE"


@dataclass(frozen=True, slots=True)
class TraceBudget:
    """What one step (from a reply to the next) may write into the trace, at most."""

    bytes: int = 64 << 20
    lines: int = 200_000

    def words(self) -> str:
        return f"{self.bytes:,} bytes or {self.lines:,} lines of trace per step"


DEFAULT_TRACE_BUDGET = TraceBudget()


@dataclass(frozen=True, slots=True)
class Op:
    """One successful call that matters to the model, numbered by its line in the trace.

    ``kind``: open, write, truncate, sync, datasync, syncfs, syncall, link, rename, unlink,
    mkdir, rmdir, close, close_range, dup, setfd, setfl, fork, exec, unshare, seek,
    unverifiable. ``fd``/``path`` name the file (``path`` absolute, as strace names it; for
    ``link`` and ``rename`` ``path`` is the source, ``target`` the new name). ``data`` is the
    bytes written, ``offset`` the position of a positional write (None: the descriptor's
    offset), ``size`` the truncation length, a seek's new offset or the last descriptor of a
    close_range; ``flags`` the open flags (dup: O_CLOEXEC; setfd: FD_CLOEXEC; fork: the clone
    flags; write: RWF_* of pwritev2); ``new_fd`` a dup's new descriptor, ``new_pid`` a fork's
    child; ``syscall`` the call's own name."""

    call: int
    pid: int
    kind: str
    fd: int | None = None
    path: str | None = None
    target: str | None = None
    data: bytes = b""
    offset: int | None = None
    size: int | None = None
    flags: int = 0
    new_fd: int | None = None
    new_pid: int | None = None
    syscall: str = ""
    deleted: bool = False


def _string(arg: str, line: int) -> bytes:
    if not (arg.startswith('"') and arg.endswith('"')):
        # strace appends "..." after the closing quote when -s cut the data: bytes unknown.
        raise TraceError("written data was cut by strace (raise -s)", line)
    return decode_c_string(arg[1:-1])


@dataclass(frozen=True, slots=True)
class _Fd:
    number: int
    path: str | None
    deleted: bool


def _fd(arg: str, line: int) -> _Fd:
    match = re.match(r"^(-?\d+)", arg)
    if match is None:
        raise TraceError(f"not a descriptor: {arg[:40]!r}", line)
    path, deleted = annotated(arg[match.end():]) if len(arg) > match.end() else (None, False)
    return _Fd(int(match.group(1)), path, deleted)


def _join(base: str | None, name: bytes) -> str:
    text = name.decode("utf-8", "surrogateescape")
    if text.startswith("/") or base is None:
        return text
    return base.rstrip("/") + "/" + text


def _at_path(dirfd: str, name: str, line: int) -> str:
    return _join(_fd(dirfd, line).path, _string(name, line))


def _iovec(arg: str, line: int) -> bytes:
    """The bytes of an iovec array: ``[{iov_base="..", iov_len=N}, ...]``."""
    return b"".join(_string(m.group(1), line)
                    for m in re.finditer(r'iov_base=("[^"\\]*(?:\\.[^"\\]*)*"(?:\.\.\.)?)', arg))


def _number(arg: str) -> int:
    """A raw number, as -X raw prints it (``0x1200000|17``: the parts or'ed)."""
    value = 0
    for part in arg.split("|"):
        value |= int(part.strip(), 0)
    return value


def _field(arg: str, name: str) -> int:
    match = re.search(rf"\b{name}=([0-9a-fx|]+)", arg)
    return _number(match.group(1)) if match is not None else 0


# --- the reader ------------------------------------------------------------------------------

@dataclass(slots=True)
class TraceReader:
    """Trace bytes in (as strace writes them, in any chunks), operations out, in trace order.

    ``budget``: past it within one step (from one reply on standard output to the next),
    :meth:`feed` raises :class:`TraceTooLarge`; None reads without a bound. ``root``: the
    workspace; the data of writes elsewhere is dropped as it is read."""

    budget: TraceBudget | None = None
    # The workspace: the bytes written anywhere else (a flood to /dev/null) are not kept.
    root: str | None = None
    ops: list[Op] = field(default_factory=list)
    _pieces: list[bytes] = field(default_factory=list)  # the line not ended yet
    _partial_size: int = 0
    _line: int = 0
    _step_bytes: int = 0
    _step_lines: int = 0
    _pending: dict[int, tuple[int, str]] = field(default_factory=dict)
    _known: set[int] = field(default_factory=set)
    _held: list[tuple[int, Op]] = field(default_factory=list)

    def feed(self, chunk: bytes) -> None:
        if b"\n" not in chunk:  # a long line arriving in pieces: no copy per piece
            self._pieces.append(chunk)
            self._partial_size += len(chunk)
            if self.budget is not None and self._partial_size > self.budget.bytes:
                self._over()
            return
        data = b"".join((*self._pieces, chunk))
        self._pieces.clear()
        lines = data.split(b"\n")
        last = lines.pop()
        self._pieces.append(last)
        self._partial_size = len(last)
        if self.budget is not None and self._partial_size > self.budget.bytes:
            self._over()
        for raw in lines:
            self._read_line(raw.decode("utf-8", "surrogateescape"))

    def end(self) -> list[Op]:
        """The operations of the whole trace (a last line without LF is read too)."""
        rest = b"".join(self._pieces)
        self._pieces.clear()
        if rest:
            self._read_line(rest.decode("utf-8", "surrogateescape"))
        for _, op in self._held:
            self.ops.append(op)
        self._held.clear()
        return self.ops

    @property
    def line(self) -> int:
        """The number of the last line read."""
        return self._line

    def _over(self) -> None:
        assert self.budget is not None
        raise TraceTooLarge(f"{TraceTooLarge.code}: one step wrote more than the budget of "
                            f"{self.budget.words()} (raise it with --trace-budget)", self._line)

    def _read_line(self, raw: str) -> None:
        self._line += 1
        if self.budget is not None:
            self._step_bytes += len(raw) + 1
            self._step_lines += 1
            if self._step_bytes > self.budget.bytes or self._step_lines > self.budget.lines:
                self._over()
        for number, pid, rest in self._joined(raw):
            self._read_call(number, pid, rest)

    def _joined(self, raw: str) -> Iterator[tuple[int, int, str]]:
        match = _LINE.match(raw)
        if match is None:
            return
        pid, rest = int(match.group("pid")), match.group("rest")
        if not self._known:
            self._known.add(pid)  # the traced process itself (or the thread strace met first)
        if rest.endswith(_UNFINISHED):
            self._pending[pid] = (self._line, rest[: -len(_UNFINISHED)])
            return
        resumed = _RESUMED.match(rest)
        if resumed is not None:
            if pid not in self._pending:
                return
            first, head = self._pending.pop(pid)
            sep = "" if head.endswith("(") or resumed.group("rest").startswith(")") else ", "
            yield first, pid, head + sep + resumed.group("rest").lstrip(", ")
            return
        yield self._line, pid, rest

    def _read_call(self, number: int, pid: int, rest: str) -> None:
        split = split_call(rest, number)
        if split is None:
            return
        name, args, ret, ret_annotation, _tail = split
        if ret == "?" or (ret.startswith("-") and name != "close"):
            return  # a failed call changed nothing (a failed close still freed the descriptor)
        op = _op(number, pid, name, args, int(ret, 0), ret_annotation)
        if op is None:
            return
        if op.kind == "write" and op.fd == 1 and (op.path or "").startswith("pipe:"):
            self._step_bytes = self._step_lines = 0  # a reply: the next step begins
        elif op.kind == "write" and self.root is not None and op.path is not None and not (
                op.path == self.root or op.path.startswith(self.root.rstrip("/") + "/")):
            op = replace(op, data=b"")
        self._emit(op)

    def _emit(self, op: Op) -> None:
        """Rule 3: a child's calls wait for the call that made it."""
        if op.kind == "fork" and op.new_pid is not None:
            self._known.add(op.pid)
            self.ops.append(op)
            self._known.add(op.new_pid)
            released = [held for pid, held in self._held if pid == op.new_pid]
            self._held = [(pid, held) for pid, held in self._held if pid != op.new_pid]
            self.ops += released
            self._release_if_nothing_pending()
            return
        if op.pid not in self._known and any(
                head.split("(", 1)[0] in _CLONES for _, head in self._pending.values()):
            self._held.append((op.pid, op))
            return
        self._known.add(op.pid)
        self._release_if_nothing_pending()
        self.ops.append(op)

    def _release_if_nothing_pending(self) -> None:
        if self._held and not any(head.split("(", 1)[0] in _CLONES
                                  for _, head in self._pending.values()):
            for pid, held in self._held:
                self._known.add(pid)
                self.ops.append(held)
            self._held.clear()


def parse_trace(text: str) -> list[Op]:
    """The operations of a whole trace, in trace order (see the module documentation)."""
    reader = TraceReader()
    reader.feed(text.encode("utf-8", "surrogateescape"))
    return reader.end()


def _op(n: int, pid: int, name: str, a: list[str], ret: int, ret_path: str | None) -> Op | None:
    if name in ("open", "openat", "openat2", "creat"):
        return _open(n, pid, name, a, ret, ret_path)
    if name in ("write", "pwrite64", "writev", "pwritev", "pwritev2"):
        return _write(n, pid, name, a, ret)
    if name in _CLONES:
        if ret <= 0:
            return None  # the child's own return from the call: it is already known
        flags = _field(", ".join(a), "flags")
        return Op(n, pid, "fork", flags=flags, new_pid=ret, syscall=name)
    if name in ("execve", "execveat"):
        return Op(n, pid, "exec", syscall=name)
    if name == "unshare":
        return Op(n, pid, "unshare", flags=_number(a[0]), syscall=name)
    if name in UNVERIFIABLE_SYSCALLS:
        return _unverifiable(n, pid, name, a)
    if name in ("dup", "dup2", "dup3", "fcntl", "close", "close_range"):
        return _descriptor(n, pid, name, a, ret)
    return _named(n, pid, name, a, ret)


def _open(n: int, pid: int, name: str, a: list[str], ret: int, ret_path: str | None) -> Op:
    if name == "openat":
        where, flags = _at_path(a[0], a[1], n), _number(a[2])
    elif name == "openat2":
        where, flags = _at_path(a[0], a[1], n), _field(a[2], "flags")
    elif name == "open":
        where, flags = _join(None, _string(a[0], n)), _number(a[1])
    else:
        where, flags = _join(None, _string(a[0], n)), O_CREAT | O_TRUNC | 1
    if ret_path is not None:  # -yy: the kernel's own name for what was opened
        where = annotated(ret_path)[0] or where
    return Op(n, pid, "open", fd=ret, path=where, flags=flags, syscall=name)


def _write(n: int, pid: int, name: str, a: list[str], ret: int) -> Op:
    fd = _fd(a[0], n)
    if name in ("write", "pwrite64"):
        data = _string(a[1], n)[:ret]  # a short write wrote only its first ``ret`` bytes
        offset = _number(a[3]) if name == "pwrite64" else None
    else:
        data = _iovec(a[1], n)[:ret]
        offset = _number(a[3]) if name != "writev" else None
    flags = _number(a[4]) if name == "pwritev2" and len(a) > 4 else 0
    if offset == -1 or flags & RWF_APPEND:
        offset = None  # pwritev2: -1 is the descriptor's offset; RWF_APPEND its end
    return Op(n, pid, "write", fd=fd.number, path=fd.path, data=data, offset=offset,
              flags=flags, syscall=name, deleted=fd.deleted)


def _descriptor(n: int, pid: int, name: str, a: list[str], ret: int) -> Op | None:
    fd = _fd(a[0], n)
    if name == "close":
        return Op(n, pid, "close", fd=fd.number, path=fd.path, syscall=name)
    if name == "close_range":
        return Op(n, pid, "close_range", fd=fd.number, size=_number(a[1]), flags=_number(a[2]),
                  syscall=name)
    if name in ("dup", "dup2", "dup3"):
        flags = _number(a[2]) & O_CLOEXEC if name == "dup3" else 0
        return Op(n, pid, "dup", fd=fd.number, path=fd.path, new_fd=ret, flags=flags,
                  syscall=name)
    command = _number(a[1])
    if command in (F_DUPFD, F_DUPFD_CLOEXEC):
        return Op(n, pid, "dup", fd=fd.number, path=fd.path, new_fd=ret,
                  flags=O_CLOEXEC if command == F_DUPFD_CLOEXEC else 0, syscall=name)
    if command == F_SETFD:
        return Op(n, pid, "setfd", fd=fd.number, flags=_number(a[2]), syscall=name)
    if command == F_SETFL:
        return Op(n, pid, "setfl", fd=fd.number, path=fd.path, flags=_number(a[2]),
                  syscall=name)
    return None


def _unverifiable(n: int, pid: int, name: str, a: list[str]) -> Op | None:
    """A call the model cannot follow, named with the descriptor or path it writes through
    (none: io_uring and AIO name no file in the call)."""
    fd: _Fd | None = None
    path: str | None = None
    if name == "mmap":
        if not (_number(a[2]) & PROT_WRITE and _number(a[3]) & 0x3 in (MAP_SHARED,
                                                                       MAP_SHARED_VALIDATE)):
            return None  # a private or read-only mapping writes no file
        fd = _fd(a[4], n)
    elif name in ("copy_file_range", "splice"):
        fd = _fd(a[2], n)
    elif name in ("sendfile", "fallocate"):
        fd = _fd(a[0], n)
    elif name == "symlink":
        path = _join(None, _string(a[1], n))
    elif name == "symlinkat":
        path = _at_path(a[1], a[2], n)
    elif name == "mknod":
        path = _join(None, _string(a[0], n))
    elif name == "mknodat":
        path = _at_path(a[0], a[1], n)
    if fd is not None:
        return Op(n, pid, "unverifiable", fd=fd.number, path=fd.path, syscall=name)
    return Op(n, pid, "unverifiable", path=path, syscall=name)


def _named(n: int, pid: int, name: str, a: list[str], ret: int) -> Op | None:
    if name == "lseek":
        fd = _fd(a[0], n)
        return Op(n, pid, "seek", fd=fd.number, path=fd.path, size=ret, syscall=name)
    if name in ("fsync", "fdatasync", "syncfs"):
        fd = _fd(a[0], n)
        kind = {"fsync": "sync", "fdatasync": "datasync", "syncfs": "syncfs"}[name]
        return Op(n, pid, kind, fd=fd.number, path=fd.path, syscall=name, deleted=fd.deleted)
    # sync_file_range makes no durability promise (no metadata, no cache flush): ignored.
    if name == "sync":
        return Op(n, pid, "syncall", syscall=name)
    if name == "ftruncate":
        fd = _fd(a[0], n)
        return Op(n, pid, "truncate", fd=fd.number, path=fd.path, size=_number(a[1]),
                  syscall=name, deleted=fd.deleted)
    if name == "truncate":
        return Op(n, pid, "truncate", path=_join(None, _string(a[0], n)), size=_number(a[1]),
                  syscall=name)
    if name in ("rename", "link"):
        return Op(n, pid, name, path=_join(None, _string(a[0], n)),
                  target=_join(None, _string(a[1], n)), syscall=name)
    if name in ("renameat", "renameat2", "linkat"):
        if name == "renameat2" and _number(a[4]) & RENAME_EXCHANGE:
            return Op(n, pid, "unverifiable", path=_at_path(a[0], a[1], n),
                      target=_at_path(a[2], a[3], n), syscall="renameat2 (RENAME_EXCHANGE)")
        return Op(n, pid, "rename" if name != "linkat" else "link",
                  path=_at_path(a[0], a[1], n), target=_at_path(a[2], a[3], n), syscall=name)
    if name in ("unlink", "rmdir"):
        return Op(n, pid, name, path=_join(None, _string(a[0], n)), syscall=name)
    if name == "unlinkat":
        kind = "rmdir" if _number(a[2]) & AT_REMOVEDIR else "unlink"
        return Op(n, pid, kind, path=_at_path(a[0], a[1], n), syscall=name)
    if name == "mkdir":
        return Op(n, pid, "mkdir", path=_join(None, _string(a[0], n)), syscall=name)
    if name == "mkdirat":
        return Op(n, pid, "mkdir", path=_at_path(a[0], a[1], n), syscall=name)
    return None
