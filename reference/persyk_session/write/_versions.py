"""Refusing to mutate a session of another format version (APP-24, RCV-17).

A v1 writer cannot know the framing, members or repair rules of a later version, so append,
remove and recover look at the header *before* taking the session lock, and refuse a session
whose header names an integer version other than 1 with ``HEADER_VERSION_UNSUPPORTED``: no lock
file, no ``recovery/`` directory, no byte of the session changes. The header never changes once
written (HDR-10), so reading it outside the lock is safe.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from .. import _fsutil
from .._errors import Code, ContractError, Diagnostic
from ..read._records import MAX_RECORD_BYTES, is_blank, parse_record
from ..read._schema import is_other_version

__all__ = ["OtherVersion", "refuse_other_version"]

_CHUNK: Final = 1 << 16
# A header is about a hundred bytes: the first read is small (every mutation makes it).
_FIRST_CHUNK: Final = 1 << 12


class OtherVersion(ContractError):
    """HEADER_VERSION_UNSUPPORTED from the check before the lock (recovery answers it as a
    result, every other mutation as its failure)."""


def refuse_other_version(file: Path) -> None:
    """Raise OtherVersion (HEADER_VERSION_UNSUPPORTED) if the first record of ``file`` is a
    header of another version; otherwise return (every other fault is judged under the lock)."""
    found = _first_record(file)
    if found is None:
        return
    line, data = found
    try:
        header = parse_record(data, line=line)
    except ContractError:
        return
    # HDR-4: another version is reported before every other header fault, so it is this
    # predicate alone (validate_header's first check); the rest is judged under the lock.
    if header.get("type") == "session" and is_other_version(header.get("version")):
        raise OtherVersion([Diagnostic(
            Code.HEADER_VERSION_UNSUPPORTED, line=line, pointer="/version",
            detail="session format version is not supported; the session is left unchanged",
        )])


def _first_record(file: Path) -> tuple[int, bytes] | None:
    """(line, bytes) of the first line that is not blank (REC-15), read from the start and
    bounded by the record limit; None when there is none or the file cannot be read."""
    try:
        fd = _fsutil.open_regular(file)  # never a FIFO or a link (APP-25)
    except OSError:
        return None
    try:
        buffer = b""
        line = 1
        position = 0
        while len(buffer) <= MAX_RECORD_BYTES + 1:
            newline = buffer.find(b"\n")
            if newline >= 0:
                if not is_blank(buffer[:newline]):
                    return line, buffer[:newline]
                buffer = buffer[newline + 1 :]
                line += 1
                continue
            chunk = os.pread(fd, _CHUNK if position else _FIRST_CHUNK, position)
            if not chunk:
                return (line, buffer) if buffer and not is_blank(buffer) else None
            position += len(chunk)
            buffer += chunk
        return None
    except OSError:
        return None
    finally:
        os.close(fd)
