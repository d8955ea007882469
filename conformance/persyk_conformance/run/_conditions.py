"""What the runner arranges and checks for the assets and capture cases
(docs/implementers/fixtures.md, "Harness conditions" and the ``files`` checks), kept apart from the
generic runner:

* ``{"$resultOf": N, "pointer": "/handle"}`` in a step's arguments is replaced by that member of
  step N's result (a capture's handle, a protocol asset's path), before the paths are made
  absolute;
* ``prepare`` actions change the workspace just before a step's snapshot, for what a fixture
  tree cannot ship: a symbolic link, a FIFO, a directory, a file swapped for a copy of itself
  (a new inode, the same bytes: AST-19), a rename (an interrupted deletion's staged tree);
* file checks ``locked`` (another holder's ``flock(LOCK_EX | LOCK_NB)`` fails, CAP-19) and
  ``wav`` (header fields and the bytes after the `data` header, read by the runner's own chunk
  walk, never by the implementation under test).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import struct
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..cases._steps import confined

__all__ = [
    "LOCK_WAIT_MARGIN_SECONDS", "capture_file_check", "held_lock", "is_locked",
    "late_under_held_lock", "prepare_workspace", "resolve_results", "wav_fields",
]


def resolve_results(value: Any, results: Sequence[Mapping[str, Any] | None]) -> Any:
    """``value`` with every ``{"$resultOf": N, "pointer": P}`` replaced (N is 1-based)."""
    if isinstance(value, dict):
        if set(value) == {"$resultOf", "pointer"}:
            return _lookup(value["$resultOf"], value["pointer"], results)
        return {key: resolve_results(item, results) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_results(item, results) for item in value]
    return value


def _lookup(step: Any, pointer: Any, results: Sequence[Mapping[str, Any] | None]) -> Any:
    if not isinstance(step, int) or not 1 <= step <= len(results) or not isinstance(pointer, str):
        raise ValueError(f"$resultOf names step {step!r}, which has not run")
    node: Any = results[step - 1]
    for part in pointer.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]  # RFC 6901: an array index
        else:
            # The earlier step did not answer what this one needs: send a value no
            # implementation issued, so the step fails on its own expectation.
            return "persyk-missing-result"
    return node


def prepare_workspace(workspace: Path, actions: Sequence[Mapping[str, Any]]) -> None:
    """Carry out a step's ``prepare`` actions, in order, inside the workspace: every path they
    name is confined to it (OutsideWorkspace otherwise; a symlink's target may point anywhere,
    since the link is what the case plants)."""
    for action in actions:
        if "symlink" in action:
            link = confined(workspace, action["symlink"], "prepare symlink")
            if link.is_dir() and not link.is_symlink():
                shutil.rmtree(link)
            elif link.exists() or link.is_symlink():
                link.unlink()
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(action["target"], link)
        elif "fifo" in action:
            path = confined(workspace, action["fifo"], "prepare fifo")
            path.parent.mkdir(parents=True, exist_ok=True)
            os.mkfifo(path)
        elif "directory" in action:
            directory = confined(workspace, action["directory"], "prepare directory")
            directory.mkdir(parents=True, exist_ok=True)
        elif "swap" in action:
            path = confined(workspace, action["swap"], "prepare swap")
            copy = path.with_name(path.name + ".persyk-swap")
            shutil.copyfile(path, copy)
            os.rename(copy, path)
        elif "overwrite" in action:
            # SRCH-39: the same file (device and inode), other bytes, as an in-place editor.
            path = confined(workspace, action["overwrite"], "prepare overwrite")
            data = confined(workspace, action["from"], "prepare from").read_bytes()
            with open(path, "r+b") as out:
                out.write(data)
                out.truncate()
        elif "remove" in action:
            path = confined(workspace, action["remove"], "prepare remove")
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        elif "rename" in action:
            target = confined(workspace, action["to"], "prepare to")
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(confined(workspace, action["rename"], "prepare rename"), target)
        else:
            raise ValueError(f"unknown prepare action {sorted(action)}")


def capture_file_check(rel: str, check: Mapping[str, Any], path: Path) -> list[str] | None:
    """The problems of a ``locked`` or ``wav`` check; None for any other check."""
    if "locked" in check:
        held = is_locked(path)
        if held is None:
            return [f"{rel}: expected a {'locked' if check['locked'] else 'free'} file, "
                    "but it cannot be opened"]
        if held != check["locked"]:
            return [f"{rel}: expected {'held' if check['locked'] else 'free'}: another "
                    f"process's flock(LOCK_EX | LOCK_NB) {'succeeded' if not held else 'failed'}"]
        return []
    if "wav" in check:
        try:
            data = _head(path)
            size = os.lstat(path).st_size
        except OSError:
            return [f"{rel}: expected a WAV file, but it cannot be read"]
        fields = wav_fields(data, size)
        if fields is None:
            return [f"{rel}: expected a WAV file with a complete header before its data"]
        return [f"{rel}: WAV {key} is {fields.get(key)!r}, expected {want!r}"
                for key, want in check["wav"].items() if fields.get(key) != want]
    return None


def is_locked(path: Path) -> bool | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        return error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)  # releases our probe's lock at once
    return False


def _head(path: Path, limit: int = 1 << 16) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        return os.pread(fd, limit, 0)
    finally:
        os.close(fd)


def wav_fields(data: bytes, size: int) -> dict[str, int] | None:
    """Header fields of a RIFF/WAVE file: ``riffSize``, ``format``, ``channels``, ``rate``,
    ``bitsPerSample``, ``blockAlign``, ``dataOffset``, ``dataSize`` (declared) and
    ``dataBytes`` (what the file holds after the `data` header)."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    out = {"riffSize": struct.unpack_from("<I", data, 4)[0]}
    offset = 12
    while offset + 8 <= len(data):
        chunk, length = data[offset:offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        if chunk == b"data":
            if "format" not in out:
                return None
            out.update(dataOffset=offset + 8, dataSize=length, dataBytes=size - offset - 8)
            return out
        if chunk == b"fmt " and length >= 16 and offset + 24 <= len(data):
            tag, channels, rate, _rate, align, bits = struct.unpack_from("<HHIIHH", data,
                                                                         offset + 8)
            out.update(format=tag, channels=channels, rate=rate, blockAlign=align,
                       bitsPerSample=bits)
        offset += 8 + length + (length & 1)
    return None


# The protocol's lockTimeout: "wait at most that long for the session lock, then answer
# LOCK_UNAVAILABLE" (APP-6). A step that passes it while the runner holds the lock must answer
# within it and this margin (a round trip, a start, a loaded machine), not within the step's
# deadline alone: an implementation that waits for a bound of its own is caught here.
LOCK_WAIT_MARGIN_SECONDS = 2.0


@contextlib.contextmanager
def held_lock(workspace: Path, relative: str | Sequence[str] | None) -> Iterator[None]:
    """Hold ``flock(LOCK_EX)`` on a workspace file (or on each of a list) for the duration of a
    step (APP-5, APP-6; an asset lock, CAP-19).

    The lock file is created before the step's snapshot, so creating it is not blamed on the
    implementation; a conforming implementation must then wait and give up with
    LOCK_UNAVAILABLE (ASSET_LOCKED for an asset lock, which is never waited for).
    """
    names = [] if relative is None else [relative] if isinstance(relative, str) else relative
    held: list[int] = []
    try:
        for name in names:
            path = confined(workspace, name, "holdLock")
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            held.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in held:
            os.close(fd)  # closing the descriptor releases the flock


def late_under_held_lock(conditions: Mapping[str, Any], args: Mapping[str, Any],
                          took: float) -> str | None:
    """Why a step under a held lock answered too late for its ``lockTimeout``; None when in
    time or when the step holds no lock or passes no bound."""
    bound = args.get("lockTimeout")
    if (not conditions.get("holdLock") or isinstance(bound, bool)
            or not isinstance(bound, (int, float))):
        return None
    if took <= bound + LOCK_WAIT_MARGIN_SECONDS:
        return None
    return (f"the answer under a held lock came after {took:.2f} s, more than lockTimeout "
            f"{bound} s and {LOCK_WAIT_MARGIN_SECONDS} s: the lock wait ignores lockTimeout")
