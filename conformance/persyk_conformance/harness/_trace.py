"""strace text in, file-system operations out: the sans-IO half of the power-loss harness.

Rule: this module never opens a file or starts a process. It reads the text that
``strace -f -qq -X raw -x -yy -s BIG -e trace=TRACED_SYSCALLS`` writes (one call a line, the
pid first, descriptors annotated with their paths, flags as raw numbers, strings with their
non-printable bytes as ``\\xNN``) and turns every *successful* call that can change what a power
cut leaves behind into an :class:`Op`. Failed calls change nothing and are dropped; a call split
by another thread (``<unfinished ...>`` / ``<... resumed>``) is joined first.

The operations name files by absolute path (resolved against the directory descriptor for
``*at`` calls); what belongs to the workspace is the model's business (``_fsmodel``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["TRACED_SYSCALLS", "Op", "TraceError", "decode_c_string", "parse_trace"]

# What the harness asks strace for. The reads of the request are not needed: the replies
# (writes to the adapter's standard output) mark where each operation ends.
TRACED_SYSCALLS: tuple[str, ...] = (
    "open", "openat", "creat", "write", "pwrite64", "writev", "pwritev", "pwritev2", "lseek",
    "fsync", "fdatasync", "sync_file_range", "ftruncate", "truncate", "rename", "renameat",
    "renameat2", "link", "linkat", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "close",
    "dup", "dup2", "dup3", "sync", "syncfs",
)

# Open flags, x86-64 and aarch64 Linux values except where noted (strace -X raw prints numbers).
O_ACCMODE, O_CREAT, O_TRUNC, O_APPEND = 0o3, 0o100, 0o1000, 0o2000
O_DSYNC = 0o10000  # the DUR rules: a write through such a descriptor is durable on return
O_SYNC = 0o4010000
AT_REMOVEDIR = 0x200

_LINE = re.compile(r"^(?:\[pid\s+)?(?P<pid>\d+)\]?\s+(?P<rest>.*)$")
_CALL = re.compile(r"^(?P<name>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\d+|0x[0-9a-f]+|\?)"
                   r"(?:<(?P<ret_path>[^>]*)>)?(?P<tail>.*)$", re.S)
_UNFINISHED = " <unfinished ...>"
_RESUMED = re.compile(r"^<\.\.\. (?P<name>\w+) resumed>(?P<rest>.*)$", re.S)
# -yy marks a descriptor whose file has no name any more: ``4</w/s/session.jsonl>(deleted)``.
_FD = re.compile(r"^(?P<fd>-?\d+)(?:<(?P<path>.*)>)?(?:\(deleted\))?$", re.S)
_ESCAPES = {"n": 10, "t": 9, "r": 13, "v": 11, "f": 12, "\\": 92, '"': 34, "'": 39, "a": 7,
            "b": 8}


class TraceError(ValueError):
    """The trace cannot be read (a line the parser does not understand, or cut data);
    carries the line number."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"{message} (at line {line} of the trace)")
        self.line = line


@dataclass(frozen=True, slots=True)
class Op:
    """One successful call that matters to the model, numbered by its line in the trace.

    ``kind``: open, write, truncate, sync, datasync, syncall, link, rename, unlink, mkdir,
    rmdir, close, dup, seek. ``fd``/``path`` name the file (``path`` absolute; for ``link``
    and ``rename`` ``path`` is the source, ``target`` the new name). ``data`` is the bytes
    written, ``offset`` the position of a positional write (None: the descriptor's offset),
    ``size`` the truncation length or a seek's new offset; ``flags`` the open flags."""

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


def decode_c_string(text: str) -> bytes:
    """The bytes of a C string literal as strace prints it (without the quotes)."""
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "x":
            out.append(int(text[i + 2 : i + 4], 16))
            i += 4
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", text[i + 1 :])
            assert digits is not None
            out.append(int(digits.group(0), 8))
            i += 1 + len(digits.group(0))
        else:
            out.append(_ESCAPES[nxt])
            i += 2
    return bytes(out)


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments; quotes, brackets and path annotations nest."""
    args: list[str] = []
    depth, start, i, quoted = 0, 0, 0, False
    while i < len(text):
        char = text[i]
        if quoted:
            if char == "\\":
                i += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "[{<(":
            depth += 1
        elif char in "]}>)":
            depth -= 1
        elif char == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
        i += 1
    if text[start:].strip():
        args.append(text[start:].strip())
    return args


def _string(arg: str, line: int) -> bytes:
    if not (arg.startswith('"') and arg.endswith('"')):
        # strace appends "..." after the closing quote when -s cut the data: bytes unknown.
        raise TraceError("written data was cut by strace (raise -s)", line)
    return decode_c_string(arg[1:-1])


def _fd(arg: str, line: int) -> tuple[int, str | None]:
    match = _FD.match(arg)
    if match is None:
        raise TraceError(f"not a descriptor: {arg[:40]!r}", line)
    path = match.group("path")
    if path is not None:
        path = decode_c_string(path).decode("utf-8", "surrogateescape")
    return int(match.group("fd")), path


def _join(base: str | None, name: bytes) -> str:
    text = name.decode("utf-8", "surrogateescape")
    if text.startswith("/") or base is None:
        return text
    return base.rstrip("/") + "/" + text


def _at_path(dirfd: str, name: str, line: int) -> str:
    _, base = _fd(dirfd, line)
    return _join(base, _string(name, line))


def _iovec(arg: str, line: int) -> bytes:
    """The bytes of an iovec array: ``[{iov_base="..", iov_len=N}, ...]``."""
    return b"".join(_string(m.group(1), line)
                    for m in re.finditer(r'iov_base=("(?:[^"\\]|\\.)*"(?:\.\.\.)?)', arg))


def _joined_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(line number, pid, call text) with split calls put back together."""
    pending: dict[int, tuple[int, str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _LINE.match(raw)
        if match is None:
            continue
        pid, rest = int(match.group("pid")), match.group("rest")
        if rest.endswith(_UNFINISHED):
            pending[pid] = (number, rest[: -len(_UNFINISHED)])
            continue
        resumed = _RESUMED.match(rest)
        if resumed is not None:
            if pid not in pending:
                continue
            first, head = pending.pop(pid)
            sep = "" if head.endswith("(") or resumed.group("rest").startswith(")") else ", "
            yield first, pid, head + sep + resumed.group("rest").lstrip(", ")
            continue
        yield number, pid, rest


def parse_trace(text: str) -> list[Op]:
    """The operations of a trace, in trace order (see the module documentation)."""
    ops: list[Op] = []
    for number, pid, rest in _joined_lines(text):
        match = _CALL.match(rest)
        if match is None:
            continue  # signals, "+++ exited", "--- SIG..."
        ret = match.group("ret")
        if ret == "?" or ret.startswith("-"):
            continue  # a failed call changed nothing
        op = _op(number, pid, match.group("name"), _split_args(match.group("args")),
                 int(ret, 0), match.group("ret_path"))
        if op is not None:
            ops.append(op)
    return ops


def _op(n: int, pid: int, name: str, a: list[str], ret: int, ret_path: str | None) -> Op | None:
    path: str | None
    if name in ("open", "openat", "creat"):
        if name == "openat":
            where, flags = _at_path(a[0], a[1], n), int(a[2], 0)
        elif name == "open":
            where, flags = _join(None, _string(a[0], n)), int(a[1], 0)
        else:
            where, flags = _join(None, _string(a[0], n)), O_CREAT | O_TRUNC | 1
        if ret_path is not None:  # -yy: the kernel's own name for what was opened
            where = decode_c_string(ret_path).decode("utf-8", "surrogateescape")
        return Op(n, pid, "open", fd=ret, path=where, flags=flags)
    if name in ("write", "pwrite64"):
        fd, path = _fd(a[0], n)
        data = _string(a[1], n)[:ret]  # a short write wrote only its first ``ret`` bytes
        offset = int(a[3], 0) if name == "pwrite64" else None
        return Op(n, pid, "write", fd=fd, path=path, data=data, offset=offset)
    if name in ("writev", "pwritev", "pwritev2"):
        fd, path = _fd(a[0], n)
        offset = int(a[3], 0) if name != "writev" else None
        return Op(n, pid, "write", fd=fd, path=path, data=_iovec(a[1], n)[:ret], offset=offset)
    if name == "lseek":
        fd, path = _fd(a[0], n)
        return Op(n, pid, "seek", fd=fd, path=path, size=ret)
    if name in ("fsync", "fdatasync", "sync_file_range"):
        fd, path = _fd(a[0], n)
        # sync_file_range makes no durability promise (no metadata, no cache flush): ignored.
        if name == "sync_file_range":
            return None
        return Op(n, pid, "sync" if name == "fsync" else "datasync", fd=fd, path=path)
    if name in ("sync", "syncfs"):
        return Op(n, pid, "syncall")
    if name == "ftruncate":
        fd, path = _fd(a[0], n)
        return Op(n, pid, "truncate", fd=fd, path=path, size=int(a[1], 0))
    if name == "truncate":
        return Op(n, pid, "truncate", path=_join(None, _string(a[0], n)), size=int(a[1], 0))
    if name in ("rename", "link"):
        return Op(n, pid, name, path=_join(None, _string(a[0], n)),
                  target=_join(None, _string(a[1], n)))
    if name in ("renameat", "renameat2", "linkat"):
        return Op(n, pid, "rename" if name != "linkat" else "link",
                  path=_at_path(a[0], a[1], n), target=_at_path(a[2], a[3], n))
    if name in ("unlink", "rmdir"):
        return Op(n, pid, name, path=_join(None, _string(a[0], n)))
    if name == "unlinkat":
        kind = "rmdir" if int(a[2], 0) & AT_REMOVEDIR else "unlink"
        return Op(n, pid, kind, path=_at_path(a[0], a[1], n))
    if name == "mkdir":
        return Op(n, pid, "mkdir", path=_join(None, _string(a[0], n)))
    if name == "mkdirat":
        return Op(n, pid, "mkdir", path=_at_path(a[0], a[1], n))
    if name == "close":
        fd, path = _fd(a[0], n)
        return Op(n, pid, "close", fd=fd, path=path)
    if name in ("dup", "dup2", "dup3"):
        fd, path = _fd(a[0], n)
        return Op(n, pid, "dup", fd=fd, path=path, new_fd=ret)
    return None
