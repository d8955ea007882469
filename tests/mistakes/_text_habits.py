"""Mistakes of time parsers, URL parsers, line readers and of ids and diagnostics."""

from __future__ import annotations

import calendar
import re
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ._model import Dispatch, Layer, Mistake, on_lines, on_result, result_of, viewing
from ._tree import map_members, through_tree

# ENV-4: the one Timestamp form.
TIMESTAMP = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$")
TIME_MEMBERS: frozenset[str] = frozenset({"timestamp", "observedAt"})
ID_MEMBERS: frozenset[str] = frozenset({"id", "parentId", "targetId"})


def _times(change: Any) -> Layer:
    def member(name: str, value: Any) -> Any:
        if name in TIME_MEMBERS and type(value) is str:
            return change(value)
        return value

    return viewing(on_lines(through_tree(map_members(member))))


def _offset_24(value: str) -> str:
    return re.sub(r"([+-])24:00$", r"\g<1>00:00", value)


def _missing_offset(value: str) -> str:
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?",
                    value):
        return value + "Z"
    return value


def _leap_second(value: str) -> str:
    return re.sub(r"^(.{10}T[0-9]{2}:[0-9]{2}):60", r"\1:59", value)


def _hour_24(value: str) -> str:
    return re.sub(r"^(.{10})T24:00:00(\.0+)?", r"\1T23:59:59", value)


def _day_overflow(value: str) -> str:
    match = re.match(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T", value)
    if match is None:
        return value
    year, month, day = (int(part) for part in match.groups())
    if 1 <= month <= 12 and calendar.monthrange(year, month)[1] < day <= 31:
        return value[:8] + "28" + value[10:]
    return value


def _fraction_3_or_6(value: str) -> str:
    match = TIMESTAMP.match(value)
    if match is not None and match.group(1) is not None and len(match.group(1)) - 1 not in (3, 6):
        return "x"
    return value


def _fromisoformat(value: str) -> str:
    if TIMESTAMP.match(value):
        return value
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    zone = "Z" if parsed.utcoffset() is None else parsed.strftime("%z")
    if zone != "Z":
        zone = zone[:3] + ":" + zone[3:5]
    return parsed.strftime("%Y-%m-%dT%H:%M:%S") + zone


def _chrono(value: str) -> str:
    match = re.fullmatch(r"(.{10})[Tt ](.{8}.*?)([Zz]|[+-].{5})", value)
    if match is None:
        return value
    day, time, zone = match.groups()
    return _leap_second(f"{day}T{time}{zone.upper()}")


def _urls(change: Any) -> Layer:
    def member(name: str, value: Any) -> Any:
        if name == "endpoint" and type(value) is str:
            return change(value)
        return value

    return viewing(on_lines(through_tree(map_members(member))))


def _any_scheme(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme and parts.netloc and parts.scheme not in ("https", "wss", "http", "ws"):
        return urlunsplit(parts._replace(scheme="https"))
    return value


def _http_anywhere(value: str) -> str:
    parts = urlsplit(value)
    secure = {"http": "https", "ws": "wss"}.get(parts.scheme)
    return urlunsplit(parts._replace(scheme=secure)) if secure else value


def _no_userinfo(value: str) -> str:
    parts = urlsplit(value)
    if "@" in parts.netloc:
        return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return value


def _no_fragment(value: str) -> str:
    return value.split("#", 1)[0] if "#" in value else value


def _port_unchecked(value: str) -> str:
    parts = urlsplit(value)
    match = re.fullmatch(r"(.*):([0-9]+)", parts.netloc)
    if match and not 1 <= int(match.group(2)) <= 65535:
        return urlunsplit(parts._replace(netloc=match.group(1)))
    return value


def _whatwg(value: str) -> str:
    cleaned = re.sub(r"[\t\n\r]", "", value.strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n"
                                                   "\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14"
                                                   "\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d"
                                                   "\x1e\x1f ")).replace("\\", "/")
    cleaned = re.sub(r"^(?i:(https?|wss?)):/*", lambda m: m.group(1).lower() + "://", cleaned)
    return cleaned


def _blank_lines_dropped(data: bytes) -> bytes:
    lines = data.split(b"\n")
    kept = [line for line in lines[:-1] if line.strip(b" \t\r")]
    return b"".join(line + b"\n" for line in kept) + lines[-1]


def _trailing_blanks_trimmed(data: bytes) -> bytes:
    # REC-16: blanks after the last LF are an unterminated line; this reader trims them away.
    last = data.rfind(b"\n") + 1
    return data[:last] if last and not data[last:].strip(b" \t\r") else data


def _cr_removed(data: bytes) -> bytes:
    return data.replace(b"\r", b"")


def _scanlines(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n")


def _ids_folded() -> Layer:
    def member(name: str, value: Any) -> Any:
        return value.lower() if name in ID_MEMBERS and type(value) is str else value

    seen = viewing(on_lines(through_tree(map_members(member))))

    def layer(inner: Dispatch) -> Dispatch:
        folded = seen(inner)

        def dispatch(op: str, args: dict[str, Any]) -> dict[str, Any]:
            changed = {key: value.lower() if key in ("leaf", "targetId") and
                       isinstance(value, str) else value for key, value in args.items()}
            if op == "append" and isinstance(args.get("records"), list):
                changed["records"] = [
                    {k: v.lower() if k in ID_MEMBERS and isinstance(v, str) else v
                     for k, v in record.items()} if isinstance(record, dict) else record
                    for record in args["records"]]
            return folded(op, changed)

        return dispatch

    return layer


def _first_error_only(op: str, args: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    result = result_of(body)
    if op == "validate" and result is not None and len(result.get("errors", [])) > 1:
        return {**body, "result": {**result, "errors": result["errors"][:1],
                                   "truncated": False}}
    return body


def _columns_from_zero(op: str, args: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    def shift(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (v - 1 if k == "column" and isinstance(v, int) else shift(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [shift(item) for item in value]
        return value

    return dict(shift(body))


def _lines_from_zero(op: str, args: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    def shift(value: Any) -> Any:
        if isinstance(value, dict):
            moved = "code" in value and isinstance(value.get("line"), int)
            return {k: (v - 1 if moved and k == "line" else shift(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [shift(item) for item in value]
        return value

    return dict(shift(body))


MISTAKES: tuple[Mistake, ...] = (
    Mistake("time-offset-24", "time parsers", "an offset of +24:00 accepted",
            _times(_offset_24), breaks=("ENV-5",)),
    Mistake("time-missing-offset-is-local", "time parsers",
            "a Timestamp with neither Z nor an offset read as local time",
            _times(_missing_offset), breaks=("ENV-4",)),
    Mistake("time-leap-second", "time parsers", "second 60 accepted (RFC 3339's leap second)",
            _times(_leap_second), breaks=("ENV-5",)),
    Mistake("time-hour-24", "time parsers", "24:00:00 accepted (ISO 8601's end of day)",
            _times(_hour_24), breaks=("ENV-5",)),
    Mistake("time-day-overflow", "time parsers",
            "V8's Date.parse: a day up to 31 in any month (2026-02-30) accepted",
            _times(_day_overflow), breaks=("ENV-5",)),
    Mistake("time-fraction-3-or-6-digits", "time parsers",
            "Python 3.10's fromisoformat: only 3 or 6 fraction digits", _times(_fraction_3_or_6),
            breaks=("ENV-4",)),
    Mistake("time-python-fromisoformat", "time parsers",
            "Python 3.11's fromisoformat: a space separator, no offset, basic format, a comma",
            _times(_fromisoformat), breaks=("ENV-4",)),
    Mistake("time-chrono-rfc3339", "time parsers",
            "chrono's parse_from_rfc3339: lower-case t and z, a space separator, second 60",
            _times(_chrono), breaks=("ENV-4", "ENV-5")),
    Mistake("url-scheme-unchecked", "URL parsers",
            "Go's url.Parse and a host check only: any scheme accepted", _urls(_any_scheme),
            breaks=("ENT-9",)),
    Mistake("url-plain-http-anywhere", "URL parsers",
            "http and ws accepted on any host, not only loopback", _urls(_http_anywhere),
            breaks=("ENT-9",)),
    Mistake("url-userinfo-accepted", "URL parsers", "user:password@ in the authority accepted",
            _urls(_no_userinfo), breaks=("ENT-9",)),
    Mistake("url-fragment-accepted", "URL parsers", "a #fragment accepted",
            _urls(_no_fragment), breaks=("ENT-9",)),
    Mistake("url-port-range-unchecked", "URL parsers",
            "url.Parse leaves the port unchecked: :0 and :70000 accepted",
            _urls(_port_unchecked), breaks=("ENT-9",)),
    Mistake("url-whatwg-lenient", "URL parsers",
            "new URL(): spaces trimmed, tabs removed, backslashes and https:host fixed up",
            _urls(_whatwg), breaks=("ENT-9",)),
    Mistake("lines-blank-lines-uncounted", "line readers",
            "blank lines skipped before numbering: later lines reported too low",
            viewing(_blank_lines_dropped), breaks=("DIAG-3",)),
    Mistake("lines-trailing-blanks-trimmed", "line readers",
            "trailing whitespace trimmed off the file before its last byte is checked for LF",
            viewing(_trailing_blanks_trimmed, records=False), breaks=("REC-16",)),
    Mistake("lines-every-cr-removed", "line readers",
            "every CR byte removed before parsing (a dos2unix habit)", viewing(_cr_removed),
            breaks=("REC-3",)),
    Mistake("lines-scanlines-drops-cr", "line readers",
            "Go's bufio.ScanLines drops the CR of a CRLF", viewing(_scanlines),
            allowed="REC-14 (rev. 2) makes a CR before the LF insignificant whitespace, so "
            "dropping it changes no verdict"),
    Mistake("ids-case-insensitive", "ids and diagnostics",
            "ids kept in a map keyed by their lower case (ID-2 wants exact equality)",
            _ids_folded(), breaks=("ID-2",)),
    Mistake("diag-first-error-only", "ids and diagnostics",
            "validate stops at the first error", on_result(_first_error_only),
            breaks=("DIAG-4",)),
    Mistake("diag-columns-from-zero", "ids and diagnostics", "0-based columns",
            on_result(_columns_from_zero), breaks=("DIAG-3",)),
    Mistake("diag-lines-from-zero", "ids and diagnostics",
            "0-based line numbers (enumerate() without start=1)", on_result(_lines_from_zero),
            breaks=("DIAG-3",)),
)
