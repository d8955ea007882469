"""Reading what others hand over without following it out or letting it grow unbounded.

Release archives, contract sides, case folders, ``--save`` and ``--data`` directories come from
people the runner does not trust. Everything here refuses rather than follows:

* **trees**: a walk that never follows a link and refuses symbolic links, devices, FIFOs and
  sockets, naming the path (``refuse_special``);
* **archives**: members are counted and their declared sizes summed before anything is written,
  against a member count, a total size and a ratio to the compressed size (``extract_tar``); the
  member filter of :mod:`tarfile` (``filter="data"``) still refuses ``..``, absolute names,
  links out and devices;
* **files**: opened without following a link and without blocking on a FIFO, checked to be
  regular, their size checked against what a manifest says before one byte is hashed, hashed as
  a stream (``sha256_file``);
* **JSON**: bounded in bytes and in nesting depth before it is parsed (``read_json``).

Every refusal is a :class:`Refused`: a stable code, the path, and what is wrong, never the
content (it may be a message body).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CODES",
    "ArchiveLimits",
    "JsonLimits",
    "Refused",
    "extract_tar",
    "read_json",
    "read_regular",
    "refuse_special",
    "sha256_file",
]

_CHUNK = 1 << 20

# The stable codes of a refusal (docs/maintainers/runner-isolation.md, "Threat model", lists them
# all).
CODES = frozenset({
    "LINK_REFUSED", "SPECIAL_FILE_REFUSED", "TREE_TOO_LARGE", "NOT_A_FILE", "UNREADABLE",
    "FILE_TOO_LARGE", "SIZE_MISMATCH", "JSON_TOO_LARGE", "JSON_TOO_DEEP", "JSON_INVALID",
    "ARCHIVE_TOO_MANY_MEMBERS", "ARCHIVE_MEMBER_TOO_LARGE", "ARCHIVE_TOO_LARGE",
    "ARCHIVE_MEMBER_REFUSED", "ARCHIVE_UNREADABLE", "MANIFEST_INVALID", "PACKAGE_DIR_REFUSED",
    "PYPROJECT_INVALID", "SCHEMA_INVALID", "SIDE_TOO_LARGE",
})


class Refused(Exception):
    """Input the runner will not follow or read: ``code`` is stable, ``path`` names it."""

    def __init__(self, code: str, path: str | Path, detail: str) -> None:
        if code not in CODES:
            raise ValueError(f"{code}: not a refusal code of _bounded.CODES")
        super().__init__(f"{code}: {detail} (at {path})")
        self.code, self.path, self.detail = code, str(path), detail


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Bounds of one extraction; a release of the contract is about 2,000 files and 10 MiB."""

    members: int = 20_000
    total_bytes: int = 256 << 20
    member_bytes: int = 64 << 20
    ratio: int = 200  # unpacked bytes per compressed byte; text packs at about 10


@dataclass(frozen=True, slots=True)
class JsonLimits:
    """Bounds of one JSON document: the largest file of the contract is well under 1 MiB."""

    max_bytes: int = 16 << 20
    max_depth: int = 256  # the deepest case.json nests 136 levels; json recurses per level


# -- trees -------------------------------------------------------------------------------------

_KINDS = (
    (stat.S_ISLNK, "LINK_REFUSED", "a symbolic link"),
    (stat.S_ISCHR, "SPECIAL_FILE_REFUSED", "a character device"),
    (stat.S_ISBLK, "SPECIAL_FILE_REFUSED", "a block device"),
    (stat.S_ISFIFO, "SPECIAL_FILE_REFUSED", "a FIFO"),
    (stat.S_ISSOCK, "SPECIAL_FILE_REFUSED", "a socket"),
)


def _refuse_kind(path: Path, mode: int) -> None:
    for test, code, what in _KINDS:
        if test(mode):
            raise Refused(code, path, f"{what} is not followed or read")


def refuse_special(root: Path, *, max_entries: int = 200_000) -> Iterator[Path]:
    """Every regular file below ``root`` (sorted per directory), never following a link; raise
    :class:`Refused` at the first link, device, FIFO or socket, or past ``max_entries``."""
    mode = os.lstat(root).st_mode
    _refuse_kind(root, mode)
    if stat.S_ISREG(mode):
        yield root
        return
    pending = [root]
    seen = 0
    while pending:
        directory = pending.pop()
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda e: e.name, reverse=True)
        for entry in entries:
            seen += 1
            if seen > max_entries:
                raise Refused("TREE_TOO_LARGE", root, f"more than {max_entries} entries")
            path = Path(entry.path)
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                pending.append(path)
            elif stat.S_ISREG(mode):
                yield path
            else:
                _refuse_kind(path, mode)


# -- files -------------------------------------------------------------------------------------


def _open_regular(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the last component is a link
            raise Refused("LINK_REFUSED", path, "a symbolic link is not followed") from None
        raise Refused("UNREADABLE", path, exc.strerror or "cannot be opened") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        _refuse_kind(path, mode)
        if stat.S_ISDIR(mode):
            raise Refused("NOT_A_FILE", path, "a directory where a file is expected")
    return fd


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``."""
    fd = _open_regular(path)
    with os.fdopen(fd, "rb") as stream:
        if os.fstat(stream.fileno()).st_size > max_bytes:
            raise Refused("FILE_TOO_LARGE", path, f"larger than {max_bytes} bytes")
        data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise Refused("FILE_TOO_LARGE", path, f"larger than {max_bytes} bytes")
    return data


def sha256_file(path: Path, expected_size: int | None = None) -> str:
    """The SHA-256 of a regular file, as a stream; the size is checked first when it is known."""
    fd = _open_regular(path)
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if expected_size is not None and size != expected_size:
            raise Refused("SIZE_MISMATCH", path,
                          f"size differs from the manifest ({size} bytes, {expected_size} listed)")
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# -- JSON --------------------------------------------------------------------------------------

_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(rb"[^\[\]{}]+")


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects, strings skipped (json's own parser recurses,
    so a deep document is measured before it is parsed)."""
    brackets = _NOT_BRACKETS.sub(b"", _STRINGS.sub(b"", data))
    depth = deepest = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def loads_bounded(data: bytes, where: str | Path, limits: JsonLimits = JsonLimits()) -> Any:
    if len(data) > limits.max_bytes:
        raise Refused("JSON_TOO_LARGE", where, f"larger than {limits.max_bytes} bytes")
    # A document cannot nest deeper than it has opening brackets (those inside strings only
    # add to the count), so the exact measure runs only where it might find too much: two
    # counts in C instead of two regular expressions over every case.json.
    if (data.count(b"[") + data.count(b"{") > limits.max_depth
            and json_depth(data) > limits.max_depth):
        raise Refused("JSON_TOO_DEEP", where, f"nested deeper than {limits.max_depth} levels")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        detail = f"not JSON (line {exc.lineno}, column {exc.colno})" if isinstance(
            exc, json.JSONDecodeError) else "not JSON"
        raise Refused("JSON_INVALID", where, detail) from None


def read_json(path: Path, limits: JsonLimits = JsonLimits()) -> Any:
    """A JSON file, bounded in size and depth; a link, device or FIFO is refused, not read."""
    return loads_bounded(read_regular(path, limits.max_bytes), path, limits)


# -- archives ----------------------------------------------------------------------------------


def extract_tar(
    tar: tarfile.TarFile, into: Path, packed_bytes: int | None, where: str | Path,
    limits: ArchiveLimits = ArchiveLimits(),
) -> None:
    """Extract ``tar`` into ``into`` after checking every member header against ``limits``
    (``packed_bytes``: the compressed size, for the ratio; None for an uncompressed stream)."""
    members: list[tarfile.TarInfo] = []
    total = 0
    budget = limits.total_bytes
    if packed_bytes is not None:
        budget = min(budget, max(packed_bytes, 1) * limits.ratio)
    try:
        while (member := tar.next()) is not None:
            members.append(member)
            if len(members) > limits.members:
                raise Refused("ARCHIVE_TOO_MANY_MEMBERS", where,
                              f"more than {limits.members} members")
            if member.size > limits.member_bytes:
                raise Refused("ARCHIVE_MEMBER_TOO_LARGE", f"{where}:{member.name}",
                              f"a member of {member.size} bytes (limit {limits.member_bytes})")
            total += member.size
            if total > budget:
                raise Refused("ARCHIVE_TOO_LARGE", where,
                              f"unpacks to more than {budget} bytes")
        for member in members:
            tar.extract(member, into, filter="data")
    except tarfile.FilterError as exc:  # held: `..`, absolute names, links out, devices
        raise Refused("ARCHIVE_MEMBER_REFUSED", f"{where}:{exc.tarinfo.name}",
                      type(exc).__name__) from None
    except (tarfile.TarError, OSError, EOFError, KeyError) as exc:  # KeyError: a hard link
        raise Refused("ARCHIVE_UNREADABLE", where, type(exc).__name__) from None  # to nothing
