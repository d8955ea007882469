"""Read a whole dsh-v0 log from its bytes (DSH-4..DSH-13). Pure: bytes in, a scan out.

Only the last line of a file may be a torn write (DSH-13): bytes after the last LF, or a last
complete line that is not JSON. Every other fault is fatal and reported with its line. Every line
is read through ``parse_record``; the fast codec's twin (``persyk_dsh.fast``) checks the common
record inline and gives the same scans (tests/dsh/test_dsh_scan_agreement.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._codec import DshCodec
from ._errors import DshCode, DshError
from ._header import parse_header
from ._records import Unparseable, parse_record

__all__ = ["LF", "LogScan", "extend_events", "record_lines", "scan_log"]

LF = 0x0A


@dataclass(frozen=True, slots=True)
class LogScan:
    header: dict[str, Any]
    events: list[dict[str, Any]]
    keep: int  # the byte length that holds the header and every kept record
    torn: int  # the bytes after ``keep`` that are a torn write (DSH-13)


def scan_log(data: bytes, codec: DshCodec) -> LogScan:
    first_lf = data.find(LF)
    if first_lf < 0:
        raise DshError.of(DshCode.HEADER_INVALID, line=1, detail="the line is not complete")
    header = parse_header(data[:first_lf], codec)
    events: list[dict[str, Any]] = []
    last_lf = data.rfind(LF)
    start = first_lf + 1
    if start > last_lf:
        return LogScan(header, events, start, len(data) - start)
    lines = record_lines(data)
    last = len(lines) - 1
    for index, line in enumerate(lines):
        try:
            stored = parse_record(line, codec, line_number=index + 2)
        except Unparseable:
            # DSH-13: a torn write only if this is the last line of the file.
            if index == last and last_lf == len(data) - 1:
                keep = last_lf - len(line)  # where the last line starts
                return LogScan(header, events, keep, len(data) - keep)
            raise DshError.of(DshCode.LINE_UNPARSEABLE, line=index + 2) from None
        extend_events(events, stored, index + 2)
    return LogScan(header, events, last_lf + 1, len(data) - last_lf - 1)


def record_lines(data: bytes) -> list[bytes]:
    """The lines between the header and the last LF (there is one after the header), split out
    of ``data`` itself: slicing them out first copied the whole log once more (100 MB of new
    pages for a 100 MB log)."""
    lines = data.split(b"\n")
    del lines[0]  # the header
    lines.pop()  # the bytes after the last LF (none, or a torn write)
    return lines


def extend_events(events: list[dict[str, Any]], stored: list[dict[str, Any]], line: int) -> None:
    for event in stored:
        # DSH-11: seq runs 0, 1, 2, ... over the logical log.
        if event["seq"] != len(events):
            raise DshError.of(DshCode.SEQ_GAP, line=line)
        events.append(event)
