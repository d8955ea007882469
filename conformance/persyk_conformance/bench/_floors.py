"""The floors of ``persyk-conformance bench`` and what it records about the machine.

A floor is the least work any implementation must do for a workload's input, measured in the
runner's own process in the same run, between the implementations' repetitions: parse every line
of the same file with orjson, a bare write+fsync of the same bytes, read the tail. Every figure
of a report is a ratio to its workload's floor, because on a shared machine only ratios measured
together mean anything (docs/performance.md).
"""

from __future__ import annotations

import mmap
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "bare_appends",
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
    an identical-retry decision reads."""
    size = path.stat().st_size
    fd = os.open(path, os.O_RDONLY)
    try:
        tail = os.pread(fd, min(size, 1 << 16), max(size - (1 << 16), 0))
    finally:
        os.close(fd)
    start = tail.rfind(b"\n", 0, len(tail) - 1) + 1
    return bool(orjson.loads(tail[start:]) == expected)


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
    """The least a capture writes: create a file, write the frames as they come, fsync once."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for chunk in chunks:
            os.write(fd, chunk)
        os.fsync(fd)
    finally:
        os.close(fd)


# --- peak memory -------------------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def peak_rss_kib(pid: int) -> int | None:
    """The largest VmHWM (peak resident set of the process image, KiB) among the adapter process
    and its descendants; None where /proc is not there. VmHWM, not getrusage: ru_maxrss survives
    execve, so a wrapper started by a large parent would report the parent's peak."""
    peak: int | None = None
    for process in _descendants(pid):
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
