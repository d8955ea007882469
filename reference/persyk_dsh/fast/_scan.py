"""The fast codec's scan of a whole dsh-v0 log (DSH-4..DSH-13): ``_scan.scan_log`` with the
common record checked inline in the loop rather than through ``parse_record``, the same rules
without four calls per line. Anything else takes ``parse_record``, which raises what it raises;
tests/dsh/test_dsh_scan_agreement.py holds this scan to the plain one."""

from __future__ import annotations

from typing import Any

from .._codec import DshCodec
from .._errors import DshCode, DshError
from .._header import MAX_SAFE, parse_header
from .._records import NOT_EVENT_TYPES, ROW_TAGS, Unparseable, expand_row, parse_record
from .._scan import LF, LogScan, extend_events, record_lines

__all__ = ["scan_log_inline"]


def scan_log_inline(data: bytes, codec: DshCodec) -> LogScan:
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
    validators = codec.recovery_validators()
    loads, decode_error = codec.loads, codec.decode_error
    expected = 0  # the next seq: len(events)
    for index, line in enumerate(lines):
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
            stored = parse_record(line, codec, line_number=index + 2)
        except Unparseable:
            # DSH-13: a torn write only if this is the last line of the file.
            if index == last and last_lf == len(data) - 1:
                keep = last_lf - len(line)  # where the last line starts
                return LogScan(header, events, keep, len(data) - keep)
            raise DshError.of(DshCode.LINE_UNPARSEABLE, line=index + 2) from None
        extend_events(events, stored, index + 2)
        expected = len(events)
    return LogScan(header, events, last_lf + 1, len(data) - last_lf - 1)


def _extend_row(events: list[dict[str, Any]], expanded: list[dict[str, Any]], line: int) -> None:
    """``extend_events`` for the events of one packed row: their seqs run on from the row's
    seq0 (``expand_row``), so DSH-11 holds for all of them when it holds for the first."""
    if expanded and expanded[0]["seq"] != len(events):
        raise DshError.of(DshCode.SEQ_GAP, line=line)
    events.extend(expanded)
