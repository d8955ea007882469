"""The strict record layer: one line of ``session.jsonl`` in, one JSON object (or one fault) out.

Sans-IO: bytes in, values or :class:`ContractError` out (``_lines`` cuts a stream into lines).
This is the readable reference and the readable engine's codec (``_engine``);
``fast/_records_fast`` computes the same results faster with orjson.

Rules implemented here (docs/spec.md, section REC): REC-2, REC-4, REC-11, REC-13, REC-15, REC-19,
REC-22; the JSON text itself (REC-3, REC-5..REC-10, REC-12, REC-17, REC-18, REC-20, REC-23) is
read by the one grammar in ``_grammar``, which recovery shares. A CR before the LF is
insignificant whitespace (REC-14, rev. 2).

Order of checks (REC-19, REC-20)
--------------------------------
A record with several faults reports exactly one, chosen in this order:

1. ``RECORD_TOO_LARGE``        -- more than :data:`MAX_RECORD_BYTES`; checked before any parsing.
2. ``RECORD_BYTE_ORDER_MARK``  -- the record starts with EF BB BF. A BOM anywhere else is just
   bytes: U+FEFF is not JSON whitespace, so between tokens it is ``RECORD_JSON_SYNTAX`` and
   inside a string it is an ordinary character.
3. ``RECORD_INVALID_UTF8``     -- strict RFC 3629 decoding of the whole record fails.
4. The *parse faults*, first in byte order (lowest offset wins):
   ``RECORD_JSON_SYNTAX`` (offset of the first byte the grammar cannot accept, or the record's
   length when it ends inside a value), ``RECORD_LONE_SURROGATE`` (offset of the backslash of
   the unpaired ``\\u`` escape), ``RECORD_NUMBER_OUT_OF_RANGE`` (offset of the number's first
   byte), ``RECORD_DUPLICATE_KEY`` (offset of the repeated key's opening quote) and
   ``RECORD_TOO_DEEP`` (offset of the bracket that opens container 129).
5. ``RECORD_NOT_OBJECT``       -- a record free of all the above whose value is not an object.

Columns in diagnostics are 1-based byte columns (offset + 1).

Integers (REC-9, rev. 2): every integer literal a double can hold without overflowing (REC-8) is
accepted and kept *exactly* as a Python ``int``, however many digits it has, so that
``12345678901234567890`` reads, compares (APP-13) and is written back with the same digits.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from .._errors import Code, ContractError, Diagnostic, UsageError
from ._grammar import MAX_DEPTH, JsonFault, parse_json

__all__ = [
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "MAX_SAFE_INTEGER",
    "dumps_json",
    "encode_record",
    "is_blank",
    "loads_json",
    "parse_record",
    "record_fault",
]

# REC-11: bytes of one record, not counting its LF.
MAX_RECORD_BYTES: Final = 1_048_576
# The largest integer every double-based reader holds exactly; beyond it the reference still
# keeps integer literals exactly (REC-9, rev. 2), and the schemas bound integer members by it.
MAX_SAFE_INTEGER: Final = 2**53 - 1

_BOM: Final = b"\xef\xbb\xbf"


def parse_record(data: bytes, *, line: int) -> dict[str, Any]:
    """Parse one record (``data`` without its LF) strictly; raise ContractError on any fault."""
    try:
        return _parse(data)
    except JsonFault as fault:
        raise record_fault(fault, line) from None


def record_fault(fault: JsonFault, line: int) -> ContractError:
    """The diagnostic of a fault at a byte offset of line ``line`` (1-based byte column)."""
    diagnostic = Diagnostic(fault.code, line=line, column=fault.offset + 1, detail=fault.detail)
    return ContractError([diagnostic])


def _parse(data: bytes) -> dict[str, Any]:
    if len(data) > MAX_RECORD_BYTES:  # REC-11: never parse an over-limit record
        raise JsonFault(Code.RECORD_TOO_LARGE, MAX_RECORD_BYTES, "record exceeds 1,048,576 bytes")
    if data.startswith(_BOM):  # REC-13
        raise JsonFault(Code.RECORD_BYTE_ORDER_MARK, 0, "record starts with a byte order mark")
    try:
        data.decode("utf-8")  # REC-2: Python's strict codec rejects exactly RFC 3629's faults
    except UnicodeDecodeError as error:
        raise JsonFault(Code.RECORD_INVALID_UTF8, error.start, "invalid UTF-8") from None
    value = parse_json(data)
    if type(value) is not dict:  # REC-4
        raise JsonFault(Code.RECORD_NOT_OBJECT, 0, "the record is not a JSON object")
    return value


def is_blank(data: bytes) -> bool:
    """REC-15 (rev. 2): a line of nothing but JSON whitespace (none at all included) is blank:
    not a record, skipped by readers. ``{}\\r`` is a record (REC-14, rev. 2); ``\\r`` is blank."""
    return not data.strip(b" \t\r")


# --- writing -----------------------------------------------------------------------------------

_SURROGATE_CHAR: Final = re.compile("[\ud800-\udfff]")


def encode_record(obj: dict[str, Any]) -> bytes:
    """Canonical compact form of one record, LF included (REC-22, REC-24); always passes
    :func:`parse_record`.

    Raises ContractError with the read-phase code the bytes would earn (APP-9), or UsageError
    for Python values that have no JSON form (sets, bytes, non-string keys ...).
    """
    check_encodable(obj)
    encoded = _compact(obj)
    if len(encoded) > MAX_RECORD_BYTES:  # REC-11
        raise ContractError([Diagnostic(Code.RECORD_TOO_LARGE, detail="record exceeds 1 MiB")])
    return encoded + b"\n"


def _compact(value: object, *, sort_keys: bool = False) -> bytes:
    # REC-24: no insignificant whitespace, non-ASCII text as raw UTF-8.
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=sort_keys
    ).encode("utf-8")


def dumps_json(value: object, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """JSON bytes of a result (compact, or indented by two spaces); integers keep their digits."""
    if indent:
        return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=sort_keys).encode()
    return _compact(value, sort_keys=sort_keys)


def loads_json(data: bytes) -> Any:
    """Parse a JSON text that is not a record (a protocol message); integers stay exact."""
    return json.loads(data)


def check_encodable(obj: object) -> bool:
    """Refuse a value whose record would break a read rule, walking it iteratively.

    Returns whether the value holds an integer beyond 64 bits (REC-9, rev. 2: such integers are
    written exactly; ``fast/_records_fast`` cannot write them with orjson).
    """
    if not isinstance(obj, dict):
        raise _refuse(Code.RECORD_NOT_OBJECT, "the record is not a JSON object")  # REC-4
    big = False
    pending: list[tuple[object, int]] = [(obj, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict | list) and depth > MAX_DEPTH:  # REC-12
            raise _refuse(Code.RECORD_TOO_DEEP, "more than 128 nested containers")
        if isinstance(value, dict):
            for key, member in value.items():
                if not isinstance(key, str):
                    raise UsageError(Code.USAGE, "object keys must be strings")
                _check_text(key, "key holds a lone surrogate")
                pending.append((member, depth + 1))
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            _check_text(value, "string holds a lone surrogate")
        elif isinstance(value, bool) or value is None:
            pass
        elif isinstance(value, int):
            big = big or _check_integer(value)
        elif isinstance(value, float):
            if not math.isfinite(value):  # REC-8: JSON has no NaN or Infinity
                raise _refuse(Code.RECORD_NUMBER_OUT_OF_RANGE, "number is not finite")
        else:
            raise UsageError(Code.USAGE, "record holds a value with no JSON form")
    return big


def _check_text(text: str, detail: str) -> None:
    if _SURROGATE_CHAR.search(text):  # REC-5: no encoding of a lone surrogate is a record
        raise _refuse(Code.RECORD_LONE_SURROGATE, detail)


def _check_integer(value: int) -> bool:
    """REC-8 for an integer; True if it lies beyond 64 bits."""
    if abs(value) < 2**63:
        return False
    try:
        float(value)  # OverflowError where the literal would overflow a double
    except OverflowError:
        raise _refuse(Code.RECORD_NUMBER_OUT_OF_RANGE, "number overflows a double") from None
    return True


def _refuse(code: Code, detail: str) -> ContractError:
    return ContractError([Diagnostic(code, detail=detail)])
