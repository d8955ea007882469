"""Read a whole dsh-v0 log from its bytes (DSH-4..DSH-13). Pure: bytes in, a scan out.

Only the last line of a file may be a torn write (DSH-13): bytes after the last LF, or a last
complete line that is not JSON. Every other fault is fatal and reported with its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._mode_name import MODE
from . import _json
from ._errors import DshCode, DshError
from ._header import MAX_SAFE, parse_header
from ._records import NOT_EVENT_TYPES, ROW_TAGS, Unparseable, expand_row, parse_record
from ._schemas import recovery_validators

__all__ = ["LogScan", "scan_log"]

LF = 0x0A
# Whether the common record (an event that is valid and next in seq) is checked inline in the
# loop rather than through parse_record: the same rules, without four calls per line. The
# readable mode reads every line through parse_record alone, and so do the mutation tests
# (tests/test_dsh_mutations.py), which break parse_record's rules one by one;
# tests/test_dsh_scan_agreement.py holds the inline path to the plain one.
INLINE_COMMON_RECORDS: bool = MODE != "readable"


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
    if start > last_lf:
        return LogScan(header, events, start, len(data) - start)
    lines = _record_lines(data)
    last = len(lines) - 1
    validators = recovery_validators()
    loads, decode_error = _json.loads, _json.DecodeError  # orjson's own in the fast mode
    inline = INLINE_COMMON_RECORDS
    expected = 0  # the next seq: len(events)
    for index, line in enumerate(lines):
        if inline:
            # The common record, checked inline: an event whose envelope holds (DSH-8), whose
            # seq is the next one (DSH-11) and whose data, for a type recovery reads, is valid
            # (DSH-12); or a packed row (DSH-10). Anything else takes parse_record below,
            # which raises what it raises.
            try:
                value = loads(line)
            except decode_error:
                value = None
            kind = value.get("type") if type(value) is dict else None
            if type(kind) is str:
                seq, time = value.get("seq"), value.get("time")
                if (
                    type(seq) is int
                    and seq == expected
                    and type(time) is int
                    and -MAX_SAFE <= time <= MAX_SAFE
                    and kind
                    and kind not in NOT_EVENT_TYPES
                    and "data" in value
                    and ((validator := validators.get(kind)) is None
                         or validator.is_valid(value["data"]))
                ):
                    events.append(value)
                    expected += 1
                    continue
                if kind in ROW_TAGS:
                    _extend_row(events, expand_row(value, line=index + 2), index + 2)
                    expected = len(events)
                    continue
        try:
            stored = parse_record(line, line_number=index + 2)
        except Unparseable:
            # DSH-13: a torn write only if this is the last line of the file.
            if index == last and last_lf == len(data) - 1:
                keep = last_lf - len(line)  # where the last line starts
                return LogScan(header, events, keep, len(data) - keep)
            raise DshError.of(DshCode.LINE_UNPARSEABLE, line=index + 2) from None
        _extend(events, stored, index + 2)
        expected = len(events)
    return LogScan(header, events, last_lf + 1, len(data) - last_lf - 1)


def _record_lines(data: bytes) -> list[bytes]:
    """The lines between the header and the last LF (there is one after the header), split out
    of ``data`` itself: slicing them out first copied the whole log once more (100 MB of new
    pages for a 100 MB log)."""
    lines = data.split(b"\n")
    del lines[0]  # the header
    lines.pop()  # the bytes after the last LF (none, or a torn write)
    return lines


def _extend(events: list[dict[str, Any]], stored: list[dict[str, Any]], line: int) -> None:
    for event in stored:
        # DSH-11: seq runs 0, 1, 2, ... over the logical log.
        if event["seq"] != len(events):
            raise DshError.of(DshCode.SEQ_GAP, line=line)
        events.append(event)


def _extend_row(events: list[dict[str, Any]], expanded: list[dict[str, Any]], line: int) -> None:
    """:func:`_extend` for the events of one packed row: their seqs run on from the row's seq0
    (``expand_row``), so DSH-11 holds for all of them when it holds for the first."""
    if expanded and expanded[0]["seq"] != len(events):
        raise DshError.of(DshCode.SEQ_GAP, line=line)
    events.extend(expanded)
