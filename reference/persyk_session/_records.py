"""Strict record layer: one line of ``session.jsonl`` in, one JSON object (or one fault) out.

Sans-IO: bytes in, values or :class:`ContractError` out (``_lines`` cuts a stream into lines).

Rules implemented here (docs/spec.md, section REC): REC-2..REC-13, REC-17..REC-20, REC-23.
Blank lines (REC-15) are recognised by :func:`is_blank` and skipped by the store before any
record is parsed; a CR before the LF is insignificant whitespace (REC-14, rev. 2).

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

How it stays fast (the hot path of every read)
----------------------------------------------
The fast path is ``orjson.loads`` plus checks that cost a fraction of it. orjson 3.x already
rejects (verified on 3.13, and by tests/test_jsontestsuite.py on every corpus case): invalid
UTF-8 including encoded surrogates, overlongs, 5/6-byte forms and code points above U+10FFFF;
escaped lone surrogates in keys and values; ``NaN``/``Infinity``; numbers overflowing a double
(``1e400``, ``-1e400``, 400-digit integers); a BOM; every other RFC 8259 syntax error. It
accepts, and so we must check ourselves: duplicate keys (it keeps the last), integers beyond
2^53 (exact up to 64 bits, beyond that silently a float, which we must not keep: REC-9), and any
depth up to its own limit of 1024.

* Duplicate keys and integer range: ``orjson.dumps(value, option=OPT_STRICT_INTEGER)``.
  If it equals the record byte for byte, the record holds no duplicate key: parsing is
  deterministic, the two texts are the same bytes, and ``dumps`` of a ``dict`` cannot repeat a
  key (distinct ``str`` keys serialize to distinct JSON strings). The same equality proves the
  integer range: ``OPT_STRICT_INTEGER`` raises for any int outside +-(2^53-1), and an integer
  literal that orjson turned into a float (beyond 64 bits) cannot reappear unchanged, because
  orjson always writes floats with a ``.`` or an exponent. Compact writers (orjson, JavaScript's
  ``JSON.stringify``) mostly produce exactly these bytes; JavaScript differs in float spelling
  (``0.000005`` against orjson's ``5e-6``). For those records the comparison is repeated with
  the bytes ``0-9 . e E -`` deleted from both texts. None of them is ``"``, ``\\``, a
  structural byte or an escape letter, so the deletion keeps every string literal's
  boundaries and every structural byte outside strings: equal images mean the same count of
  object members, and a duplicate key would have made ``dumps`` drop at least one member.
  ``+`` is kept on purpose: an integer literal beyond 64 bits (which orjson turns into a float
  of magnitude >= 2^63) comes back from ``dumps`` as ``...e+18`` or larger, with a ``+`` the
  literal never had, so the images differ; integers within 64 bits are range-checked by
  ``OPT_STRICT_INTEGER``. Anything else (whitespace between tokens, escapes such as
  ``\\u00e9`` or ``\\/``, ``1E5``) goes to the slow path: the standard ``json`` module with
  hooks that detect duplicate keys and out-of-range integer literals.
* Depth: a record shorter than 258 bytes, or with at most 128 opening brackets, cannot nest
  deeper than 128. Otherwise, and for every record over 16 KiB (where counting bytes costs
  more than walking the few containers of a string-heavy record), the parsed value is walked
  level by level (iteratively). orjson's own limit of 1024 never decides a code: when it
  trips, the record goes to the scanner below, which counts depth itself and stops at
  container 129.
* Every rejection, and every suspicion raised by the checks above, is classified by
  :func:`_scan`: an iterative (never recursive) RFC 8259 scanner that finds the first parse
  fault in byte order, with its column. It runs only on bad or unusual records. A recursive
  parser (the standard ``json`` module) only ever sees records proven to nest at most 128 deep.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

import orjson
from orjson import OPT_STRICT_INTEGER, JSONDecodeError, JSONEncodeError
from orjson import dumps as _dumps
from orjson import loads as _loads

from ._errors import Code, ContractError, Diagnostic, UsageError

__all__ = [
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "MAX_SAFE_INTEGER",
    "dumps_json",
    "encode_record",
    "is_blank",
    "loads_json",
    "parse_record",
]

# REC-11: bytes of one record, not counting its LF.
MAX_RECORD_BYTES: Final = 1_048_576
# REC-12: nested containers; `{}` is depth 1.
MAX_DEPTH: Final = 128
# The largest integer every double-based reader holds exactly; beyond it the reference still
# keeps integer literals exactly (REC-9, rev. 2), and the schemas bound integer members by it.
MAX_SAFE_INTEGER: Final = 2**53 - 1
# REC-8 for integer literals: 10^309 overflows a double, so an integer literal with more than 309
# digits (no leading zeros, REC-3) always does, and one with fewer never reaches CPython's limit
# on int() conversions.
_MAX_INTEGER_DIGITS: Final = 309

_BOM: Final = b"\xef\xbb\xbf"
# Valid JSON nesting 129 containers holds at least 129 opening and 129 closing brackets.
_SHORTEST_TOO_DEEP: Final = 2 * (MAX_DEPTH + 1)
# Above this size a record is walked for depth without counting brackets first: large records
# are mostly long strings (tool output, code), where two byte counts cost more than the walk.
_WALK_WITHOUT_COUNTING: Final = 16_384

# Fixed texts (diagnostics never quote the input).
_END_INSIDE_VALUE: Final = "record ends inside a JSON value"
_UNEXPECTED_BYTE: Final = "unexpected byte in JSON text"


class _Fault(Exception):
    """Internal: one fault at a byte offset; :func:`parse_record` turns it into a Diagnostic."""

    def __init__(self, code: Code, offset: int | None, detail: str) -> None:
        super().__init__(code)
        self.code = code
        self.offset = offset
        self.detail = detail

    def at_line(self, line: int) -> ContractError:
        column = None if self.offset is None else self.offset + 1  # 1-based byte column
        return ContractError(
            [Diagnostic(self.code, line=line, column=column, detail=self.detail)]
        )


class _Suspect(Exception):
    """Internal: a json hook saw a fault; the scanner then finds the first one and its offset."""


def parse_record(data: bytes, *, line: int) -> dict[str, Any]:
    """Parse one record (``data`` without its LF) strictly; raise ContractError on any fault."""
    # The fast path is inlined here: this function runs once per line of every read.
    try:
        if len(data) > MAX_RECORD_BYTES:  # REC-11: never parse an over-limit record
            _check_line(data)
        try:
            value = _loads(data)
        except JSONDecodeError:
            value = _classify_rejected(data)
        else:
            if (
                len(data) >= _SHORTEST_TOO_DEEP
                and (
                    len(data) > _WALK_WITHOUT_COUNTING
                    or data.count(b"[") + data.count(b"{") > MAX_DEPTH
                )
                and _deeper_than_limit(value)
            ):
                _scan(data)  # raises TOO_DEEP, or an earlier duplicate key / number fault
                raise AssertionError("scanner missed a depth fault")
            try:
                canonical = _dumps(value, None, OPT_STRICT_INTEGER)
            except JSONEncodeError:
                canonical = b""  # an integer beyond 2^53: take the slow path
            if canonical != data and not _same_members(canonical, data):
                value = _parse_slow_valid(data)
        if type(value) is not dict:
            raise _Fault(Code.RECORD_NOT_OBJECT, 0, "the record is not a JSON object")
    except _Fault as fault:
        raise fault.at_line(line) from None
    return value


def _parse_record_reference(data: bytes, *, line: int) -> dict[str, Any]:
    """The slow path alone, with parse_record's contract: the oracle of the differential tests."""
    try:
        value = _classify_rejected(data)
        if type(value) is not dict:
            raise _Fault(Code.RECORD_NOT_OBJECT, 0, "the record is not a JSON object")
    except _Fault as fault:
        raise fault.at_line(line) from None
    return value


def is_blank(data: bytes) -> bool:
    """REC-15 (rev. 2): a line of nothing but JSON whitespace (none at all included) is blank:
    not a record, skipped by readers. ``{}\r`` is a record (REC-14, rev. 2); ``\r`` is blank."""
    return not data.strip(b" \t\r")


def _check_line(data: bytes) -> None:
    """Steps 1-2 of the order: faults visible without decoding."""
    if len(data) > MAX_RECORD_BYTES:
        raise _Fault(Code.RECORD_TOO_LARGE, MAX_RECORD_BYTES, "record exceeds 1,048,576 bytes")
    if data.startswith(_BOM):
        raise _Fault(Code.RECORD_BYTE_ORDER_MARK, 0, "record starts with a byte order mark")


def _check_utf8(data: bytes) -> str:
    """Step 5 (REC-2): Python's strict codec rejects exactly RFC 3629's ill-formed bytes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Fault(Code.RECORD_INVALID_UTF8, error.start, "invalid UTF-8") from None


def _classify_rejected(data: bytes) -> Any:
    """orjson refused the record: name the fault by the order in the module docstring.

    Also a complete strict parser on its own (the scanner checks every REC rule).
    """
    _check_line(data)
    text = _check_utf8(data)
    _scan(data)
    # Our scanner found no fault where orjson did: the spec (RFC 8259 plus REC rules) decides,
    # so accept. The scanner proved depth <= 128, so the recursive parser is safe here.
    return json.loads(text, parse_int=_exact_int)


def _parse_slow_valid(data: bytes) -> Any:
    """orjson accepted ``data``; check duplicates and integer range with the json module."""
    try:
        return json.loads(
            data.decode("utf-8"), object_pairs_hook=_unique_members, parse_int=_safe_int
        )
    except _Suspect:
        _scan(data)
        raise AssertionError("scanner missed a fault the json hooks saw") from None


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):  # REC-7
        raise _Suspect
    return members


def _safe_int(literal: str) -> int:
    # REC-8 for an integer literal; REC-9 (rev. 2): any other integer is kept exactly.
    if len(literal.lstrip("-")) > _MAX_INTEGER_DIGITS or math.isinf(float(literal)):
        raise _Suspect
    return int(literal)


def _exact_int(literal: str) -> int:
    return int(literal)  # only reached after _scan proved the literal within range


# --- fast-path helpers -------------------------------------------------------------------------

# Bytes a number can be spelled with, except `+` (see the module docstring); none of them is
# `"`, `\`, a structural byte or an escape letter.
_NUMBER_BYTES_BUT_PLUS: Final = b"0123456789.eE-"


def _same_members(canonical: bytes, data: bytes) -> bool:
    """True if ``data`` differs from orjson's rendering of its value only in number spelling."""
    return bool(canonical) and (
        canonical.translate(None, _NUMBER_BYTES_BUT_PLUS)
        == data.translate(None, _NUMBER_BYTES_BUT_PLUS)
    )


def _deeper_than_limit(value: Any) -> bool:
    """REC-12 on a value orjson parsed: walk containers level by level, never recursing.

    Cost follows the number of values, not bytes: records with many brackets are mostly ones
    with code or JSON inside long strings, where a walk over a handful of containers is far
    cheaper than any lexical pass over the bytes.
    """
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH):  # `level` holds the containers at depth 1, 2, ... 128
        deeper: list[Any] = []
        for container in level:
            members = container.values() if type(container) is dict else container
            deeper += [item for item in members if type(item) is dict or type(item) is list]
        if not deeper:
            return False
        level = deeper
    return True


# --- the strict scanner ------------------------------------------------------------------------

_WHITESPACE: Final = re.compile(rb"[ \t\n\r]*")
# REC-3: unescaped control characters end the match; so do bad escapes and the closing quote.
_STRING_BODY: Final = re.compile(rb'(?:[^"\\\x00-\x1f]+|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*')
_ESCAPE: Final = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_NUMBER: Final = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_LITERALS: Final = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}

# Scanner states.
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _AFTER_VALUE = range(5)


def _scan(data: bytes) -> None:
    """Raise the first parse fault of ``data`` (valid UTF-8) in byte order; return if none.

    Iterative: a stack of open containers (a key set per object, None per array), so nesting
    depth never touches Python's recursion limit and stops counting at container 129.
    """
    size = len(data)
    stack: list[set[str] | None] = []
    state = _VALUE
    pos = _WHITESPACE.match(data, 0).end()  # type: ignore[union-attr]
    while True:
        if state == _AFTER_VALUE:
            pos = _WHITESPACE.match(data, pos).end()  # type: ignore[union-attr]
            if not stack:
                if pos != size:
                    raise _Fault(Code.RECORD_JSON_SYNTAX, pos, "content after the JSON value")
                return
            if pos == size:
                raise _Fault(Code.RECORD_JSON_SYNTAX, pos, _END_INSIDE_VALUE)
            byte = data[pos]
            in_object = stack[-1] is not None
            if byte == 0x2C:  # ,
                state = _KEY if in_object else _VALUE
            elif byte == (0x7D if in_object else 0x5D):  # } or ]
                stack.pop()
            else:
                raise _Fault(Code.RECORD_JSON_SYNTAX, pos, _UNEXPECTED_BYTE)
            pos += 1
            continue

        pos = _WHITESPACE.match(data, pos).end()  # type: ignore[union-attr]
        if pos == size:
            raise _Fault(Code.RECORD_JSON_SYNTAX, pos, _END_INSIDE_VALUE)
        byte = data[pos]

        if state in (_KEY, _KEY_OR_CLOSE):
            if byte == 0x7D and state == _KEY_OR_CLOSE:  # }
                stack.pop()
                pos += 1
                state = _AFTER_VALUE
                continue
            if byte != 0x22:
                raise _Fault(Code.RECORD_JSON_SYNTAX, pos, _UNEXPECTED_BYTE)
            end = _scan_string(data, pos)
            keys = stack[-1]
            assert keys is not None
            key = _decode_string(data[pos:end])
            if key in keys:  # REC-7
                raise _Fault(Code.RECORD_DUPLICATE_KEY, pos, "duplicate object key")
            keys.add(key)
            pos = _WHITESPACE.match(data, end).end()  # type: ignore[union-attr]
            if pos == size:
                raise _Fault(Code.RECORD_JSON_SYNTAX, pos, _END_INSIDE_VALUE)
            if data[pos] != 0x3A:  # :
                raise _Fault(Code.RECORD_JSON_SYNTAX, pos, _UNEXPECTED_BYTE)
            pos += 1
            state = _VALUE
            continue

        if state == _VALUE_OR_CLOSE and byte == 0x5D:  # ]
            stack.pop()
            pos += 1
            state = _AFTER_VALUE
            continue

        # state is _VALUE or _VALUE_OR_CLOSE: one value starts here.
        state = _AFTER_VALUE
        if byte in (0x7B, 0x5B):  # { [
            if len(stack) == MAX_DEPTH:  # REC-12
                raise _Fault(Code.RECORD_TOO_DEEP, pos, "more than 128 nested containers")
            stack.append(set() if byte == 0x7B else None)
            state = _KEY_OR_CLOSE if byte == 0x7B else _VALUE_OR_CLOSE
            pos += 1
        elif byte == 0x22:
            pos = _scan_string(data, pos)
        elif byte == 0x2D or 0x30 <= byte <= 0x39:
            pos = _scan_number(data, pos)
        elif byte in _LITERALS:
            pos = _scan_literal(data, pos, _LITERALS[byte])
        else:
            raise _Fault(Code.RECORD_JSON_SYNTAX, pos, _UNEXPECTED_BYTE)


def _scan_string(data: bytes, start: int) -> int:
    """Check the string literal opening at ``start``; return the offset after its closing quote."""
    end = _STRING_BODY.match(data, start + 1).end()  # type: ignore[union-attr]
    if data.find(b"\\u", start + 1, end) >= 0:
        _check_surrogates(data, start + 1, end)
    if end == len(data):
        raise _Fault(Code.RECORD_JSON_SYNTAX, end, _END_INSIDE_VALUE)
    if data[end] != 0x22:
        raise _Fault(Code.RECORD_JSON_SYNTAX, end, "invalid escape or control character")
    return end + 1


def _check_surrogates(data: bytes, start: int, end: int) -> None:
    """REC-5/REC-6: each escaped high surrogate must be directly followed by an escaped low one."""
    escapes = list(_ESCAPE.finditer(data, start, end))
    index = 0
    while index < len(escapes):
        escape = escapes[index]
        index += 1
        if escape.group(1) is None:
            continue
        unit = int(escape.group(1), 16)
        if 0xDC00 <= unit <= 0xDFFF:
            raise _Fault(Code.RECORD_LONE_SURROGATE, escape.start(), "lone low surrogate escape")
        if 0xD800 <= unit <= 0xDBFF:
            follower = escapes[index] if index < len(escapes) else None
            if (
                follower is None
                or follower.start() != escape.end()
                or follower.group(1) is None
                or not 0xDC00 <= int(follower.group(1), 16) <= 0xDFFF
            ):
                raise _Fault(
                    Code.RECORD_LONE_SURROGATE, escape.start(), "lone high surrogate escape"
                )
            index += 1  # the pair is one code point


def _decode_string(literal: bytes) -> str:
    if b"\\" not in literal:
        return literal[1:-1].decode("utf-8")
    decoded: str = json.loads(literal)
    return decoded


def _scan_number(data: bytes, start: int) -> int:
    match = _NUMBER.match(data, start)
    if match is None:  # a minus sign not followed by a digit
        offset = start + 1
        detail = _END_INSIDE_VALUE if offset == len(data) else _UNEXPECTED_BYTE
        raise _Fault(Code.RECORD_JSON_SYNTAX, offset, detail)
    literal = match.group(0)
    if match.group(1) is None and match.group(2) is None:
        digits = len(literal) - (literal[0] == 0x2D)
        if digits > _MAX_INTEGER_DIGITS or math.isinf(float(literal)):  # REC-8; REC-9 (rev. 2)
            raise _Fault(Code.RECORD_NUMBER_OUT_OF_RANGE, start, "number overflows a double")
    elif math.isinf(float(literal)):  # REC-8; underflow to 0.0 is fine (REC-10)
        raise _Fault(Code.RECORD_NUMBER_OUT_OF_RANGE, start, "number overflows a double")
    return match.end()


def _scan_literal(data: bytes, start: int, word: bytes) -> int:
    end = start + len(word)
    if data.startswith(word, start):
        return end
    common = 0
    while start + common < len(data) and data[start + common] == word[common]:
        common += 1
    offset = start + common
    raise _Fault(
        Code.RECORD_JSON_SYNTAX,
        offset,
        _END_INSIDE_VALUE if offset == len(data) else _UNEXPECTED_BYTE,
    )


# --- writing -----------------------------------------------------------------------------------

_SURROGATE_CHAR: Final = re.compile("[\ud800-\udfff]")


def encode_record(obj: dict[str, Any]) -> bytes:
    """Canonical compact form of one record, LF included (REC-22); always passes parse_record.

    Raises ContractError with the read-phase code the bytes would earn (APP-9), or UsageError
    for Python values that have no JSON form (sets, bytes, non-string keys ...).
    """
    big_integers = _check_encodable(obj)
    try:
        encoded = _dumps_exact(obj) if big_integers else orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError, ValueError):
        raise UsageError(Code.USAGE, "record holds a value with no JSON form") from None
    if len(encoded) > MAX_RECORD_BYTES:
        raise ContractError([Diagnostic(Code.RECORD_TOO_LARGE, detail="record exceeds 1 MiB")])
    return encoded + b"\n"


def dumps_json(value: object, *, indent: bool = False) -> bytes:
    """JSON bytes of a result that may hold integers beyond 64 bits (REC-9, rev. 2), which
    orjson refuses: those results are written by the json module, with the same digits."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else None)
    except TypeError:
        return json.dumps(
            value, ensure_ascii=False, indent=2 if indent else None,
            separators=None if indent else (",", ":"),
        ).encode()


_LONG_INTEGER: Final = re.compile(rb"[0-9]{20}")


def loads_json(data: bytes) -> Any:
    """Parse a JSON text (not a record) keeping integers beyond 64 bits exact: orjson would
    read them as floats, so texts holding 20 or more digits in a row go to the json module."""
    if _LONG_INTEGER.search(data) is None:
        return orjson.loads(data)
    return json.loads(data)


def _dumps_exact(obj: object) -> bytes:
    """The compact form for a value holding integers orjson cannot write (beyond 64 bits)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _check_encodable(obj: object) -> bool:
    """Walk the value iteratively; orjson alone would write NaN as null. Return whether the
    value holds an integer beyond 64 bits (REC-9, rev. 2: written exactly, not by orjson)."""
    big = False

    def refuse(code: Code, detail: str) -> ContractError:
        return ContractError([Diagnostic(code, detail=detail)])

    if not isinstance(obj, dict):
        raise refuse(Code.RECORD_NOT_OBJECT, "the record is not a JSON object")
    pending: list[tuple[object, int]] = [(obj, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                raise refuse(Code.RECORD_TOO_DEEP, "more than 128 nested containers")
            for key, member in value.items():
                if not isinstance(key, str):
                    raise UsageError(Code.USAGE, "object keys must be strings")
                if _SURROGATE_CHAR.search(key):
                    raise refuse(Code.RECORD_LONE_SURROGATE, "key holds a lone surrogate")
                pending.append((member, depth + 1))
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                raise refuse(Code.RECORD_TOO_DEEP, "more than 128 nested containers")
            pending.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            if _SURROGATE_CHAR.search(value):
                raise refuse(Code.RECORD_LONE_SURROGATE, "string holds a lone surrogate")
        elif isinstance(value, bool) or value is None:
            pass
        elif isinstance(value, int):
            if abs(value) >= 2**63:
                try:
                    float(value)  # REC-8: OverflowError where the literal would overflow
                except OverflowError:
                    raise refuse(
                        Code.RECORD_NUMBER_OUT_OF_RANGE, "number overflows a double"
                    ) from None
                big = True
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise refuse(Code.RECORD_NUMBER_OUT_OF_RANGE, "number is not finite")
        else:
            raise UsageError(Code.USAGE, "record holds a value with no JSON form")
    return big
