"""Protocol JSON texts (not records), fast: what the adapter reads from every request line.

REC-9 (rev. 2): integers of any size are kept exactly, so a record sent as a protocol value
must not lose digits on the way in. orjson reads an integer literal outside 64 bits as a float,
so a text that may hold one goes to the json module instead. The shortest such literal has 19
digits (``-9223372036854775809``; positive ones need 20), so the test is "a run of 19 or more
ASCII digits anywhere in the text". Strings may hold such runs too (base64 frames, text); they
only cost the slower parser, never a wrong value.

The run is found by mapping every byte to one of two bytes with ``bytes.translate`` and
searching the map for 19 digits: the same answer as the regular expression ``[0-9]{19}``, at a
tenth of its cost on long lines (a 256-record batch is 67 KB, a capture write's 100 ms of
base64 audio 6.4 KB: the expression took 2.9 ms and 0.2 ms of them).
"""

from __future__ import annotations

import json
from typing import Any, Final

import orjson

__all__ = ["LONG_INTEGER_DIGITS", "has_digit_run", "loads_json"]

# The fewest digits of an integer literal orjson does not read exactly (below -2^63).
LONG_INTEGER_DIGITS: Final = 19
_DIGIT: Final = ord("0")
# Every ASCII digit becomes "0", every other byte "x".
_DIGITS_ONLY: Final = bytes(_DIGIT if 0x30 <= byte <= 0x39 else ord("x") for byte in range(256))
_RUN: Final = b"0" * LONG_INTEGER_DIGITS


def has_digit_run(data: bytes, length: int = LONG_INTEGER_DIGITS) -> bool:
    """True if ``data`` holds ``length`` or more ASCII digits in a row."""
    run = _RUN if length == LONG_INTEGER_DIGITS else b"0" * length
    return run in data.translate(_DIGITS_ONLY)


def loads_json(data: bytes) -> Any:
    """Parse a JSON text that is not a record (a protocol message); integers stay exact."""
    if has_digit_run(data):
        return json.loads(data)
    return orjson.loads(data)
