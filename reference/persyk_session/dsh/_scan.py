"""Read a whole dsh-v0 log from its bytes (DSH-4..DSH-13). Pure: bytes in, a scan out.

Only the last line of a file may be a torn write (DSH-13): bytes after the last LF, or a last
complete line that is not JSON. Every other fault is fatal and reported with its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._errors import DshCode, DshError
from ._header import parse_header
from ._records import Unparseable, parse_record

__all__ = ["LogScan", "scan_log"]

LF = 0x0A


@dataclass(frozen=True, slots=True)
class LogScan:
    header: dict[str, Any]
    events: list[dict[str, Any]]
    keep: int  # the byte length that holds the header and every kept record
    torn: int  # the bytes after ``keep`` that are a torn write (DSH-13)


def scan_log(data: bytes) -> LogScan:
    first_lf = data.find(LF)
    if first_lf < 0:
        raise DshError.of(DshCode.HEADER_INVALID, line=1, detail="the line is not complete")
    header = parse_header(data[:first_lf])
    events: list[dict[str, Any]] = []
    last_lf = data.rfind(LF)
    start = first_lf + 1
    line_number = 1
    keep = start
    while start <= last_lf:
        end = data.index(LF, start)
        line_number += 1
        try:
            stored = parse_record(data[start:end], line_number=line_number)
        except Unparseable:
            # DSH-13: a torn write only if this is the last line of the file.
            if end == last_lf and last_lf == len(data) - 1:
                return LogScan(header, events, keep, len(data) - keep)
            raise DshError.of(DshCode.LINE_UNPARSEABLE, line=line_number) from None
        for event in stored:
            # DSH-11: seq runs 0, 1, 2, ... over the logical log.
            if event["seq"] != len(events):
                raise DshError.of(DshCode.SEQ_GAP, line=line_number)
            events.append(event)
        start = end + 1
        keep = start
    return LogScan(header, events, keep, len(data) - keep)
