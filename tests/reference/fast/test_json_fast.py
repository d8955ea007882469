"""The adapter's request lines in fast mode (fast/_json_fast.py): integers of any size stay exact
(REC-9, rev. 2) and the digit-run probe answers as the regular expression it replaced."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from persyk_session.fast._json_fast import LONG_INTEGER_DIGITS, has_digit_run, loads_json

INTEGERS = [
    ("below-int64", -9223372036854775809),
    ("int64-min", -9223372036854775808),
    ("uint64-max", 18446744073709551615),
    ("beyond-uint64", 18446744073709551616),
    ("huge", 10**40),
    ("negative-huge", -(10**40)),
]


@pytest.mark.parametrize("value", [v for _, v in INTEGERS], ids=[i for i, _ in INTEGERS])
def test_integers_in_a_request_keep_every_digit(value: int) -> None:
    parsed = loads_json(b'{"args":{"records":[{"data":%d}]}}' % value)
    number = parsed["args"]["records"][0]["data"]
    assert type(number) is int and number == value


@pytest.mark.parametrize(
    ("data", "found"),
    [
        (b"1" * 18, False),
        (b"1" * 19, True),
        (b"x" + b"0123456789" * 2 + b"x", True),
        (b"123456789-123456789-123", False),
        (b"\xd9" * 40, False),  # bytes above ASCII are never digits
        (b"", False),
    ],
    ids=["18-digits", "19-digits", "inside-text", "interrupted", "non-ascii", "empty"],
)
def test_digit_run_probe(data: bytes, found: bool) -> None:
    assert has_digit_run(data) is found


@given(st.binary(max_size=80) | st.text("0123456789ab", max_size=80).map(str.encode))
def test_digit_run_probe_agrees_with_the_regular_expression(data: bytes) -> None:
    expected = re.search(rb"[0-9]{%d}" % LONG_INTEGER_DIGITS, data) is not None
    assert has_digit_run(data) is expected
