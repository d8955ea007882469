"""A batch record given as a JSON value, encoded and read back fast (fast mode only; issue 27).

The careful path (``_append_plan._item_from_object``) walks the value in Python to refuse what
would break a read rule (``_records.check_encodable``: lone surrogates, depth, non-finite
numbers, values with no JSON form), encodes it, and parses its own bytes back: two thirds of
the CPU of a 256-record batch went to that walk. Here orjson encodes first and the walk is
replaced by proofs that cost C-speed passes; the value is accepted only when all hold:

1. ``orjson.dumps`` succeeded: it refuses lone surrogates (REC-5), non-string keys, integers
   beyond 64 bits (which the careful path writes with the json module, REC-9 rev. 2), nesting
   past its own limit, every type it does not know, and (passed through to no default)
   dataclasses, ``datetime`` values and subclasses of ``str``, ``int``, ``dict``, ``list``;
2. the bytes fit a record (REC-11) and ``parse_record`` (the fast reader every read uses)
   accepts them as a JSON object: no record fault, depth at most 128 (REC-12) included;
3. the value read back equals the value given (Python ``==``, type by type where it matters).
   This is what catches what orjson writes *without* refusing: ``NaN`` and infinities become
   ``null`` (REC-8: refused), tuples become arrays, ``UUID`` values and enumerations become
   strings or numbers (all "no JSON form" for the careful path; an ``IntEnum`` is an ``int``
   for both). None of them equals what it was turned into.

Anything else returns None and the caller takes the careful path, which then decides the
fault or accepts exactly as before; so both paths give the same items (tests/test_items_fast.py
holds them to one table of values).
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from .._errors import ContractError
from ..read._records import MAX_RECORD_BYTES
from ..read._records_fast import parse_record

__all__ = ["encode_and_read_back"]

# No default function is given, so what is passed through raises: the careful path decides it.
_PASS_THROUGH: Final = (
    orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def encode_and_read_back(obj: Any) -> tuple[bytes, dict[str, Any]] | None:
    """``(record bytes with LF, the value a reader sees)``, or None: take the careful path."""
    if type(obj) is not dict:
        return None  # REC-4 and dict subclasses: the careful path says what they are
    try:
        encoded = orjson.dumps(obj, option=_PASS_THROUGH)
    except (orjson.JSONEncodeError, TypeError, ValueError):
        return None
    if len(encoded) > MAX_RECORD_BYTES:
        return None
    try:
        value = parse_record(encoded, line=1)
    except ContractError:
        return None
    if value != obj:  # proof 3: nothing was turned into something else
        return None
    return encoded + b"\n", value
