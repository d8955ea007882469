"""The equalsRecords file check: records compared by JSON value, committed lines by bytes."""

from __future__ import annotations

import pytest
from persyk_conformance.run._record_lines import record_file_problems

BEFORE = b'{"type":"session","version":1}\r\n'
WANT = BEFORE + b'{"a":1,"b":"\xc3\xa9"}\n'


@pytest.mark.parametrize(
    "actual",
    [WANT, BEFORE + b'{"b":"\xc3\xa9","a":1}\n', BEFORE + b'{"a": 1.0, "b": "\\u00e9"}\n'],
    ids=["same-bytes", "other-key-order", "other-spelling"],
)
def test_same_records_in_another_spelling_pass(actual: bytes) -> None:
    assert record_file_problems("f", actual, WANT, BEFORE, compact=False) == []


@pytest.mark.parametrize(
    ("actual", "wanted"),
    [
        (BEFORE + b'{"a":2,"b":"\xc3\xa9"}\n', "a different JSON value"),
        (BEFORE + b'{"a":1,"b":"\xc3\xa9"}', "does not end with LF"),
        (BEFORE + b'{"a":1,"b":"\xc3\xa9"}\n{}\n', "expected 1 written record line(s), got 2"),
        (b'{"type":"session","version":1}\n{"a":1,"b":"\xc3\xa9"}\n', "held before the case"),
        (BEFORE + b"{oops\n", "not a JSON text"),
        (BEFORE + b'{"a":1,"b":"\xc3\xa9"}\r\n', "a CR before its LF (REC-22)"),
    ],
    ids=["other-value", "no-final-lf", "extra-line", "committed-line-rewritten", "not-json",
         "written-crlf"],
)
def test_different_records_fail(actual: bytes, wanted: str) -> None:
    problems = record_file_problems("f", actual, WANT, BEFORE, compact=False)
    assert any(wanted in p for p in problems), problems


@pytest.mark.parametrize(
    ("line", "compact"),
    [
        (b'{"b":"\xc3\xa9","a":1}', True),
        (b'{"a":"x y\\\\u00e9"}', True),  # an escaped backslash, then plain text
        (b'{"a": 1}', False),
        (b'{"a":"\\u00e9"}', False),
        (b'{"a":"\\ud834\\udd1e"}', False),
    ],
    ids=["other-key-order", "escaped-backslash", "space", "escaped-e-acute", "escaped-astral"],
)
def test_compact_is_rec_24_on_each_line(line: bytes, compact: bool) -> None:
    want = b'{"a":1}\n' if line in (b'{"a": 1}',) else line + b"\n"
    problems = record_file_problems("f", line + b"\n", want, None, compact=True)
    assert (problems == []) is compact, problems
