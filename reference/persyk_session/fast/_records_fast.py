"""The record layer's fast path: the same results as ``_records``, computed with orjson.

The fast engine's codec (``read/_engine``: ``parse_record``, ``encode_record``,
``dumps_json``); tests/test_records*.py and tests/reference/core/test_jsontestsuite.py hold both to
the same table of records and faults.

How it stays fast (the hot path of every read)
----------------------------------------------
The fast path is ``orjson.loads`` plus checks that cost a fraction of it. orjson 3.x already
rejects (verified on 3.13, and by tests/reference/core/test_jsontestsuite.py on every corpus case):
invalid UTF-8 including encoded surrogates, overlongs, 5/6-byte forms and code points above
U+10FFFF; escaped lone surrogates in keys and values; ``NaN``/``Infinity``; numbers overflowing a
double (``1e400``, ``-1e400``, 400-digit integers); a BOM; every other RFC 8259 syntax error. It
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
* Every rejection, and every suspicion raised by the checks above, is decided by the readable
  reader (``_records.parse_record`` and its one grammar, ``read/_grammar``): it finds the first
  fault in the order of REC-19/REC-20, with its column, or accepts the record. It runs only on
  bad or unusual records. A recursive parser (the standard ``json`` module) only ever sees
  records proven to nest at most 128 deep.
"""


from __future__ import annotations

import json
import math
from typing import Any, Final

import orjson
from orjson import OPT_STRICT_INTEGER, JSONDecodeError, JSONEncodeError
from orjson import dumps as _dumps
from orjson import loads as _loads

from .._errors import Code, ContractError, Diagnostic, UsageError
from ..read import _records
from ..read._grammar import MAX_DEPTH
from ..read._records import MAX_RECORD_BYTES, check_encodable

__all__ = ["dumps_json", "encode_record", "parse_record"]

# Valid JSON nesting 129 containers holds at least 129 opening and 129 closing brackets.
_SHORTEST_TOO_DEEP: Final = 2 * (MAX_DEPTH + 1)
# Above this size a record is walked for depth without counting brackets first: large records
# are mostly long strings (tool output, code), where two byte counts cost more than the walk.
_WALK_WITHOUT_COUNTING: Final = 16_384
# REC-8 for integer literals (see read/_grammar): more than 309 digits always overflow.
_MAX_INTEGER_DIGITS: Final = 309


class _Suspect(Exception):
    """A json hook saw a fault; the readable reader then names it."""


def parse_record(data: bytes, *, line: int) -> dict[str, Any]:
    """``_records.parse_record``, fast: orjson plus the proofs in the module docstring."""
    # The fast path is inlined here: this function runs once per line of every read.
    if len(data) > MAX_RECORD_BYTES:  # REC-11: never parse an over-limit record
        return _records.parse_record(data, line=line)
    try:
        value = _loads(data)
    except JSONDecodeError:
        return _records.parse_record(data, line=line)  # raises the fault, or accepts
    if (
        len(data) >= _SHORTEST_TOO_DEEP
        and (
            len(data) > _WALK_WITHOUT_COUNTING
            or data.count(b"[") + data.count(b"{") > MAX_DEPTH
        )
        and _deeper_than_limit(value)
    ):
        return _records.parse_record(data, line=line)  # TOO_DEEP, or an earlier fault
    try:
        canonical = _dumps(value, None, OPT_STRICT_INTEGER)
    except JSONEncodeError:
        canonical = b""  # an integer beyond 2^53: take the slow path
    if canonical != data and not _same_members(canonical, data):
        value = _parse_slow_valid(data, line)
    if type(value) is not dict:
        raise ContractError([Diagnostic(
            Code.RECORD_NOT_OBJECT, line=line, column=1, detail="the record is not a JSON object")])
    return value


def _parse_slow_valid(data: bytes, line: int) -> Any:
    """orjson accepted ``data``; check duplicates and integer range with the json module."""
    try:
        return json.loads(
            data.decode("utf-8"), object_pairs_hook=_unique_members, parse_int=_safe_int
        )
    except _Suspect:
        _records.parse_record(data, line=line)
        raise AssertionError("the readable reader missed a fault the json hooks saw") from None


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


# --- writing -----------------------------------------------------------------------------------


def encode_record(obj: dict[str, Any]) -> bytes:
    """Canonical compact form of one record, LF included (REC-22); always passes parse_record.

    Raises ContractError with the read-phase code the bytes would earn (APP-9), or UsageError
    for Python values that have no JSON form (sets, bytes, non-string keys ...).
    """
    if check_encodable(obj):
        return _records.encode_record(obj)  # integers beyond 64 bits: orjson cannot write them
    try:
        encoded = orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError, ValueError):
        raise UsageError(Code.USAGE, "record holds a value with no JSON form") from None
    if len(encoded) > MAX_RECORD_BYTES:
        raise ContractError([Diagnostic(Code.RECORD_TOO_LARGE, detail="record exceeds 1 MiB")])
    return encoded + b"\n"


def dumps_json(value: object, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """JSON bytes of a result that may hold integers beyond 64 bits (REC-9, rev. 2), which
    orjson refuses: those results are written by the json module, with the same digits."""
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(value, option=option or None)
    except TypeError:
        return _records.dumps_json(value, indent=indent, sort_keys=sort_keys)
