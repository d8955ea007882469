"""The floors of ``persyk-conformance bench`` and what it records about the machine.

A floor is the least work any implementation must do for a workload's input, measured in the
runner's own process in the same run, between the implementations' repetitions: parse every line
of the same file with orjson, a bare write+fsync of the same bytes, read the tail. Every figure
of a report is a ratio to its workload's floor, because on a shared machine only ratios measured
together mean anything (docs/maintainers/performance.md).
"""

from __future__ import annotations

import mmap
import os
import platform
import struct
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from ._proc import read_process_table, tree

__all__ = [
    "bare_appends",
    "conforming_capture",
    "machine",
    "parse_every_line",
    "parse_every_line_mapped",
    "peak_rss_kib",
    "preserve_and_cut",
    "read_tail_record",
    "scan_for",
    "write_pcm",
]

CHUNK = 1 << 20


def parse_every_line(path: Path) -> int:
    """Read the file in 1 MiB chunks, split on LF and parse each line with orjson."""
    count = 0
    rest = b""
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                orjson.loads(line)
                count += 1
    return count


def parse_every_line_mapped(path: Path) -> int:
    """For lines of hundreds of KiB: map the file and parse each line from one copy (chunked
    splitting would copy a long line twice and flatter the implementation)."""
    count = 0
    with open(path, "rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        find, loads, start = mm.find, orjson.loads, 0
        while (end := find(b"\n", start)) >= 0:
            loads(mm[start:end])
            count += 1
            start = end + 1
    return count


def bare_appends(path: Path, chunks: list[bytes]) -> None:
    """Each chunk written and fsynced on its own, on a descriptor opened once with O_APPEND."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        for chunk in chunks:
            os.write(fd, chunk)
            os.fsync(fd)
    finally:
        os.close(fd)


def read_tail_record(path: Path, expected: dict[str, Any]) -> bool:
    """Read the session's last record from its tail and compare it with ``expected``: the least
    an identical-retry decision reads. The last 4 KiB first, four times more while they hold no
    earlier line end (until 2026-12-04 always the last 64 KiB: more than the least, and a 64 KiB
    block the allocator placed differently from one repetition to the next)."""
    size = path.stat().st_size
    fd = os.open(path, os.O_RDONLY)
    try:
        length = 4096
        while True:
            length = min(size, length)
            tail = os.pread(fd, length, size - length)
            end = tail.rfind(b"\n", 0, len(tail) - 1)
            if end >= 0 or length == size:
                break
            length *= 4
    finally:
        os.close(fd)
    return bool(orjson.loads(tail[end + 1:]) == expected)


def preserve_and_cut(file: Path, tail_length: int, keep: Path) -> None:
    """The least I/O of a recovery of a torn tail: read the tail, write and fsync a copy of it,
    truncate the session after its last LF and fsync."""
    size = file.stat().st_size
    fd = os.open(file, os.O_RDWR)
    try:
        tail = os.pread(fd, tail_length, size - tail_length)
        out = os.open(keep, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(out, tail)
            os.fsync(out)
        finally:
            os.close(out)
        os.ftruncate(fd, size - tail_length)
        os.fsync(fd)
    finally:
        os.close(fd)


def scan_for(root: Path, needle: str) -> int:
    """Every session file under ``root`` read in 1 MiB chunks and searched for ``needle``,
    case-insensitively (ASCII): the least a literal search reads. Returns the files holding it."""
    wanted = needle.lower().encode()
    found = 0
    for file in sorted(root.glob("*/session.jsonl")):
        with open(file, "rb") as stream:
            while chunk := stream.read(CHUNK):
                if chunk.lower().find(wanted) >= 0:
                    found += 1
                    break
    return found


def write_pcm(path: Path, chunks: list[bytes]) -> None:
    """Create a file, write the frames as they come, fsync once: the I/O of the frames alone,
    less than any capture the contract allows (see :func:`conforming_capture`)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for chunk in chunks:
            os.write(fd, chunk)
        os.fsync(fd)
    finally:
        os.close(fd)


_PLACEHOLDER = 0xFFFFFFFF  # CAP-8


def _wav_header(rate: int, data_size: int = _PLACEHOLDER) -> bytes:
    riff_size = _PLACEHOLDER if data_size == _PLACEHOLDER else data_size + 36
    return (b"RIFF" + struct.pack("<I", riff_size) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
            + b"data" + struct.pack("<I", data_size))


def _append_synced(path: Path, line: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def conforming_capture(session: Path, chunks: list[bytes], rate: int, started: bytes,
                       finished: bytes, *, name: str = "r1.wav") -> None:
    """The least I/O of a capture the contract allows, of mono 16-bit frames at ``rate`` into
    ``assets/name``; ``started`` and ``finished`` are the two record lines.

    Six syncs (five when ``assets/`` exists), each one a rule demands before the reply or the
    write that depends on it, and none per write (a ``captureWrite`` reply promises nothing
    durable, docs/implementers/protocol.md H-208): a missing ``assets/`` made and the session
    directory fsynced (DUR-3: a new name); the WAV created
    exclusively with its 44-byte placeholder header, fsynced, and ``assets/`` fsynced (CAP-20,
    DUR-3); ``recording.started`` appended and fsynced before the first frame (CAP-1, APP-11);
    the frames written as they come; the real sizes written and the WAV fsynced, then
    ``recording.finished`` appended and fsynced (CAP-22, DUR-4, DUR-5). :func:`write_pcm`,
    this bench's floor until 2026-12-03, did one sync of the six: the capture ratio measured
    against it charged the implementation with syncs the contract itself demands.
    """
    if not (session / "assets").is_dir():
        session_fd = os.open(session, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.mkdir(session / "assets", 0o755)
            os.fsync(session_fd)
        finally:
            os.close(session_fd)
    assets_fd = os.open(session / "assets", os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=assets_fd)
        os.write(fd, _wav_header(rate))
        os.fsync(fd)
        os.fsync(assets_fd)
    finally:
        os.close(assets_fd)
    try:
        _append_synced(session / "session.jsonl", started)
        size = 0
        for chunk in chunks:
            size += os.write(fd, chunk)
        os.pwrite(fd, _wav_header(rate, size), 0)
        os.fsync(fd)
    finally:
        os.close(fd)
    _append_synced(session / "session.jsonl", finished)


# --- peak memory -------------------------------------------------------------------------------


def peak_rss_kib(pid: int) -> int | None:
    """The largest VmHWM (peak resident set of the process image, KiB) among the adapter process
    and its descendants; None where /proc is not there. VmHWM, not getrusage: ru_maxrss survives
    execve, so a wrapper started by a large parent would report the parent's peak."""
    peak: int | None = None
    for process in tree([pid], read_process_table()):
        try:
            status = Path(f"/proc/{process}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                value = int(line.split()[1])
                peak = value if peak is None else max(peak, value)
    return peak


# --- the machine -------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_mib() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def _filesystem(path: Path) -> str:
    """The type of the file system holding ``path`` (the longest mount point above it)."""
    best, kind = "", "unknown"
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return kind
    target = str(path.resolve())
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind


def machine(workspace: Path) -> dict[str, Any]:
    """CPU model, cores, memory, kernel, Python, the workspace's file system, load average."""
    try:
        load = list(os.getloadavg())
    except OSError:
        load = []
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count() or 0,
        "memoryMiB": _memory_mib(),
        "system": platform.system(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "orjson": metadata.version("orjson"),
        "filesystem": _filesystem(workspace),
        "loadAverage": [round(x, 2) for x in load],
    }
