"""The readable JSON reader and writer of dsh-v0 (_json_readable.py) agree with orjson, the
fast mode's: the same verdict on every text (both refuse, or equal values of equal types: 1 is
not 1.0) and the same bytes for every value, so that the two modes read and write one format."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from persyk_dsh import _json_readable as readable
from persyk_dsh.fast import _json as _json_fast

# Broken variants the property catches (shown while building it): a reader without the
# lone-surrogate check, and a parse_int without the float fallback beyond 64 bits.

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                               max_size=4),
    max_leaves=12,
)

EDGES = [
    b"NaN", b"-Infinity", b"Infinity", b"1e400", b"-1e400", b"1.0e-400", b"1" + b"0" * 400,
    b"1" + b"0" * 5000, b"18446744073709551615", b"18446744073709551616",
    b"-9223372036854775808", b"-9223372036854775809", b'"\\ud800"', b'{"\\udc00":1}',
    b'"\\ud800\\u0041"', b'"\\ud83d\\ude00"', b"\xef\xbb\xbf{}", b'"\x01"', b'"\x7f"',
    b"\x0c{}", b" \t\r\n{} ", b'{"a":1,"b":2,"a":3}', b"[" * 1024 + b"]" * 1024,
    b"[" * 1025 + b"]" * 1025, b'{"a":' * 1000 + b"1" + b"}" * 1000, b'"' + b"[" * 2000 + b'"',
    b"{}x", b"{} {}", b"", b" ", b"-0", b"-0.0", b"01", b"1.", b".1", b'"\xff"',
    b'"\xed\xa0\x80"', b"\xc0\x80", b"[1,]", b'"\\u0000"', b"1.5e-320", b"123456789012345678901",
]


def _canon(value: Any) -> Any:
    """A value with its types made visible (1 and 1.0 differ; so do 0.0 and -0.0)."""
    stack: list[Any] = [value]
    out: list[Any] = []
    while stack:  # no recursion: values nest 1024 deep
        item = stack.pop()
        if isinstance(item, dict):
            out.append(("dict", list(item)))
            stack.extend(item.values())
        elif isinstance(item, list):
            out.append(("list", len(item)))
            stack.extend(item)
        elif isinstance(item, float):
            out.append(("float", math.copysign(1, item), item))
        else:
            out.append((type(item).__name__, item))
    return out


def _verdict(loads: Any, data: bytes) -> Any:
    try:
        return _canon(loads(data))
    except (orjson.JSONDecodeError, readable.DecodeError):
        return "refused"


def assert_same_verdict(data: bytes) -> None:
    assert _verdict(readable.loads, data) == _verdict(orjson.loads, data)


@pytest.mark.parametrize("data", EDGES, ids=lambda d: repr(d[:24]))
def test_readable_reader_gives_orjson_verdict_on_edge_texts(data: bytes) -> None:
    assert_same_verdict(data)


@settings(max_examples=300, deadline=None)
@given(json_values, st.data())
def test_readable_reader_gives_orjson_verdict_on_texts_and_their_mutations(
    value: Any, data: st.DataObject
) -> None:
    text = readable.dumps_indented(value)
    assert_same_verdict(text)
    if text:
        at = data.draw(st.integers(0, len(text) - 1))
        piece = data.draw(st.sampled_from(
            [b"", b"\x00", b"\xff", b"\\ud800", b'"', b"[", b"}", b",", b"e400", b"NaN", b"\n",
             b"\x0c", b"0", b"-", b".", b"\xef\xbb\xbf"]))
        cut = data.draw(st.integers(0, 2))
        assert_same_verdict(text[:at] + piece + text[at + cut:])


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_readable_reader_reads_what_orjson_reads_of_its_own_output(value: Any) -> None:
    try:
        text = orjson.dumps(value)
    except TypeError:
        return  # integers beyond 64 bits: orjson writes none, the reader sees none from it
    assert_same_verdict(text)


@settings(max_examples=300, deadline=None)
@given(json_values)
@example({"f": [1e-5, 1e-7, 2.5e-5, -1.5e-9, 1e16, 1e-10, 0.0001, -0.0, 5e-324]})
@example({"s": "é\u2028\x7f\x00\x1f\"\\/\b\t\n\f\r\x0b\ufeff😀", "e": [[], {}]})
def test_readable_writer_gives_orjson_bytes(value: Any) -> None:
    try:
        expected = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        return  # integers beyond 64 bits, which no dsh value holds (the readers give floats)
    assert readable.dumps_indented(value) == expected


def test_readable_writer_writes_what_orjson_finds_too_deep() -> None:
    deep: Any = 1
    for _ in range(1000):  # orjson writes at most 254 levels, reads up to 1024
        deep = [deep]
    text = readable.dumps_indented({"a": deep})
    assert _canon(readable.loads(text)) == _canon(orjson.loads(text)) == _canon({"a": deep})


def test_fast_writer_writes_what_orjson_finds_too_deep_as_the_readable_one() -> None:
    # orjson refuses 255 levels (TypeError); an event's data may nest 1024 (DSH-7), and
    # ``dsh load --json`` of such a log once crashed with a traceback.
    deep: Any = {}
    for _ in range(300):
        deep = {"k": deep}
    result = {"events": [{"type": "note", "seq": 0, "time": 1, "data": deep}]}
    assert _json_fast.dumps_indented(result) == readable.dumps_indented(result)
