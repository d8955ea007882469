"""The strict record layer (docs/spec.md REC-*): one table per code, at and just over each limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from persyk_session._errors import Code, ContractError, Diagnostic, UsageError
from persyk_session._lines import RawLine, split_lines
from persyk_session.read._records import (
    MAX_DEPTH,
    MAX_RECORD_BYTES,
    MAX_SAFE_INTEGER,
    encode_record,
    is_blank,
    parse_record,
)

# An otherwise valid entry; `wrap(value)` puts one JSON value at /data.
ENVELOPE = (
    b'{"type":"custom","id":"c1","parentId":null,'
    b'"timestamp":"2026-01-01T00:00:00.000Z","customType":"t","data":'
)
DATA_AT = len(ENVELOPE)  # byte offset of the wrapped value


def wrap(value: bytes) -> bytes:
    return ENVELOPE + value + b"}"


def sized(total: int) -> bytes:
    """A valid record of exactly ``total`` bytes."""
    return wrap(b'"' + b"x" * (total - len(wrap(b'""'))) + b'"')


def arrays(depth: int) -> bytes:
    """A record nesting ``depth`` containers: the record object, then arrays."""
    return wrap(b"[" * (depth - 1) + b"]" * (depth - 1))


def objects(depth: int) -> bytes:
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


def mixed(depth: int) -> bytes:
    """Alternating objects and arrays: `{"a":[{"a":[...]}]}`."""
    opens, closes = [b"{"], [b"}"]
    for level in range(2, depth + 1):
        if level % 2 == 0:
            opens.append(b'"a":[')
            closes.append(b"]")
        else:
            opens.append(b"{")
            closes.append(b"}")
    return b"".join(opens) + b"".join(reversed(closes))


def reject(data: bytes, *, line: int = 7) -> Diagnostic:
    with pytest.raises(ContractError) as caught:
        parse_record(data, line=line)
    assert len(caught.value.diagnostics) == 1
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.line == line
    return diagnostic


def ids(table: list[tuple[Any, ...]]) -> list[str]:
    return [row[0] for row in table]


# --- accepted ----------------------------------------------------------------------------------

ACCEPTED: list[tuple[str, bytes]] = [
    ("smallest object", b"{}"),
    ("exactly 1 MiB", sized(MAX_RECORD_BYTES)),
    ("depth 128 arrays", arrays(MAX_DEPTH)),
    ("depth 128 objects", objects(MAX_DEPTH)),
    ("depth 128 mixed", mixed(MAX_DEPTH)),
    ("brackets inside strings do not nest", wrap(b'"' + b"[{" * 300 + b'"')),
    ("brackets after an escaped quote", wrap(b'"\\"' + b"[" * 300 + b'"')),
    ("largest safe integer", wrap(b"9007199254740991")),
    ("smallest safe integer", wrap(b"-9007199254740991")),
    ("largest finite double", wrap(b"1.7976931348623157e308")),
    ("1e308", wrap(b"1e308")),
    ("integer value written with exponent (REC-23)", wrap(b"1e300")),
    ("integer value beyond 2^53 with a fraction (REC-23)", wrap(b"9007199254740993.0")),
    ("underflow to zero", wrap(b"1e-400")),
    ("negative underflow", wrap(b"-1e-400")),
    ("smallest subnormal", wrap(b"5e-324")),
    ("negative zero", wrap(b"-0")),
    ("16-digit run inside a string", wrap(b'"12345678901234567890"')),
    ("valid surrogate pair", wrap(b'"\\ud834\\udd1e"')),
    ("valid surrogate pair, upper-case hex", wrap(b'"\\uD834\\uDD1E"')),
    ("valid surrogate pair in a key", wrap(b'{"\\ud834\\udd1e":1}')),
    ("escaped backslash then the text ud800", wrap(b'"\\\\ud800"')),
    ("escaped NUL", wrap(b'"\\u0000"')),
    ("raw U+10FFFF", wrap('"\U0010ffff"'.encode())),
    ("raw noncharacters", wrap('"\ufffe\uffff\ufdd0"'.encode())),
    ("a BOM inside a string is a character", wrap(b'"\xef\xbb\xbf"')),
    ("interior CR is whitespace", b'{"a":\r1}'),
    ("spaces and tabs around the record", b' \t{ "a" : 1 }\t '),
    ("same key in sibling objects", wrap(b'[{"a":1},{"a":2}]')),
    ("keys that differ in case", b'{"a":1,"A":2}'),
    ("JavaScript float spelling", b'{"cost":0.000005,"big":1e+21}'),
    ("escaped slash and unicode escapes", b'{"url":"https:\\/\\/x","e":"\\u00e9"}'),
    ("empty key", b'{"":1}'),
]


@pytest.mark.parametrize(("name", "data"), ACCEPTED, ids=ids(ACCEPTED))
def test_accept_valid_record(name: str, data: bytes) -> None:
    assert parse_record(data, line=1) == json.loads(data)


def test_allow_integer_exponent_record_to_parse_as_float() -> None:
    assert parse_record(b'{"a":1e2}', line=1) == {"a": 100.0}


# --- RECORD_BYTE_ORDER_MARK; a CR before the LF is whitespace (REC-14, rev. 2) ---------------

LINE_FAULTS: list[tuple[str, bytes, Code, int | None]] = [
    ("BOM before the record", b"\xef\xbb\xbf{}", Code.RECORD_BYTE_ORDER_MARK, 1),
    ("BOM alone", b"\xef\xbb\xbf", Code.RECORD_BYTE_ORDER_MARK, 1),
]

CR_BEFORE_LF: list[tuple[str, bytes]] = [
    ("CR before the LF", b"{}\r"),
    ("CR after trailing space", b'{"a":1} \r'),
    ("CR after a string ending in an escaped CR", b'{"a":"x\\r"}\r'),
]


@pytest.mark.parametrize(("name", "data"), CR_BEFORE_LF, ids=ids(CR_BEFORE_LF))
def test_accept_carriage_return_before_the_lf_as_whitespace(name: str, data: bytes) -> None:
    assert parse_record(data, line=1) == json.loads(data)


@pytest.mark.parametrize(
    ("data", "blank"),
    [(b"", True), (b"\r", True), (b" \t \r", True), (b"{}\r", False), (b"\xef\xbb\xbf", False),
     (b"\x0c", False)],
    ids=["empty", "cr", "spaces-tab-cr", "record-with-cr", "bom", "form-feed"],
)
def test_blank_line_is_json_whitespace_only(data: bytes, blank: bool) -> None:
    assert is_blank(data) is blank


@pytest.mark.parametrize(("name", "data", "code", "column"), LINE_FAULTS, ids=ids(LINE_FAULTS))
def test_reject_line_fault(name: str, data: bytes, code: Code, column: int | None) -> None:
    diagnostic = reject(data)
    assert (diagnostic.code, diagnostic.column) == (code, column)


# --- RECORD_TOO_LARGE ----------------------------------------------------------------------------

TOO_LARGE: list[tuple[str, bytes]] = [
    ("one byte over 1 MiB", sized(MAX_RECORD_BYTES + 1)),
    ("over 1 MiB and not JSON at all", b"\xff" * (MAX_RECORD_BYTES + 1)),
    ("over 1 MiB and starting with a BOM", b"\xef\xbb\xbf" + sized(MAX_RECORD_BYTES)),
]


@pytest.mark.parametrize(("name", "data"), TOO_LARGE, ids=ids(TOO_LARGE))
def test_reject_record_over_one_mebibyte(name: str, data: bytes) -> None:
    diagnostic = reject(data)
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_TOO_LARGE, MAX_RECORD_BYTES + 1)


# --- RECORD_INVALID_UTF8 -------------------------------------------------------------------------

INVALID_UTF8: list[tuple[str, bytes]] = [
    ("encoded high surrogate ED A0 80", b"\xed\xa0\x80"),
    ("encoded low surrogate ED BF BF", b"\xed\xbf\xbf"),
    ("overlong 2-byte slash C0 AF", b"\xc0\xaf"),
    ("overlong 3-byte E0 80 AF", b"\xe0\x80\xaf"),
    ("5-byte form", b"\xf8\x88\x80\x80\x80"),
    ("6-byte form", b"\xfc\x84\x80\x80\x80\x80"),
    ("above U+10FFFF", b"\xf4\x90\x80\x80"),
    ("lone continuation byte", b"\x80"),
    ("truncated sequence", b"\xe6\x97"),
    ("byte FF", b"\xff"),
    ("Latin-1 e acute", b"\xe9"),
]


@pytest.mark.parametrize(("name", "bad"), INVALID_UTF8, ids=ids(INVALID_UTF8))
def test_reject_invalid_utf8_in_a_string(name: str, bad: bytes) -> None:
    diagnostic = reject(wrap(b'"ab' + bad + b'"'))
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_INVALID_UTF8, DATA_AT + 4)


@pytest.mark.parametrize(("name", "bad"), INVALID_UTF8, ids=ids(INVALID_UTF8))
def test_reject_invalid_utf8_in_a_key(name: str, bad: bytes) -> None:
    diagnostic = reject(b'{"' + bad + b'":1}')
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_INVALID_UTF8, 3)


def test_reject_invalid_utf8_between_tokens() -> None:
    diagnostic = reject(b'{"a":1,\xff"b":2}')
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_INVALID_UTF8, 8)


# --- RECORD_JSON_SYNTAX --------------------------------------------------------------------------

SYNTAX: list[tuple[str, bytes, int]] = [
    ("NaN", wrap(b"NaN"), DATA_AT + 1),
    ("Infinity", wrap(b"Infinity"), DATA_AT + 1),
    ("minus Infinity", wrap(b"-Infinity"), DATA_AT + 2),
    ("trailing comma in object", b'{"a":1,}', 8),
    ("trailing comma in array", wrap(b"[1,]"), DATA_AT + 4),
    ("single quotes", b"{'a':1}", 2),
    ("comment", b'{"a":1/*x*/}', 7),
    ("leading zero", wrap(b"01"), DATA_AT + 2),
    ("leading plus", wrap(b"+1"), DATA_AT + 1),
    ("fraction without digits", wrap(b"1."), DATA_AT + 2),
    ("raw control character in a string", wrap(b'"a\x01"'), DATA_AT + 3),
    ("raw tab in a string", wrap(b'"a\tb"'), DATA_AT + 3),
    ("invalid escape", wrap(b'"\\x41"'), DATA_AT + 2),
    ("short unicode escape", wrap(b'"\\u12"'), DATA_AT + 2),
    ("content after the object", b'{"a":1}x', 8),
    ("second object on the line", b"{}{}", 3),
    ("unterminated object", b'{"a":1', 7),
    ("unterminated string", b'{"a":"xy', 9),
    ("truncated literal", b'{"a":tru', 9),
    ("misspelled literal", b'{"a":trux}', 9),
    ("lone minus", b'{"a":-}', 7),
    ("missing colon", b'{"a" 1}', 6),
    ("BOM in the middle of a record", b'{"a":\xef\xbb\xbf1}', 6),
    ("form feed is not whitespace", b'{"a":\x0c1}', 6),
    ("NUL after the record", b"{}\x00", 3),
    ("only whitespace", b"   ", 4),
]


@pytest.mark.parametrize(("name", "data", "column"), SYNTAX, ids=ids(SYNTAX))
def test_reject_json_syntax(name: str, data: bytes, column: int) -> None:
    diagnostic = reject(data)
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_JSON_SYNTAX, column)


# --- RECORD_NOT_OBJECT ---------------------------------------------------------------------------

NOT_OBJECT: list[tuple[str, bytes]] = [
    ("array", b"[]"),
    ("array holding an object", b'[{"type":"session"}]'),
    ("string", b'"session"'),
    ("number", b"1"),
    ("null", b"null"),
    ("true", b"true"),
    ("array of big integers", b"[1,2,3]"),
]


@pytest.mark.parametrize(("name", "data"), NOT_OBJECT, ids=ids(NOT_OBJECT))
def test_reject_top_level_value_that_is_not_an_object(name: str, data: bytes) -> None:
    diagnostic = reject(data)
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_NOT_OBJECT, 1)


# --- RECORD_DUPLICATE_KEY ------------------------------------------------------------------------

DUPLICATES: list[tuple[str, bytes, int]] = [
    ("top level", b'{"a":1,"a":2}', 8),
    ("top level, same value", b'{"a":1,"a":1}', 8),
    ("nested object", wrap(b'{"k":{"x":1,"x":2}}'), DATA_AT + 13),
    ("object inside an array", wrap(b'[1,{"x":1,"y":2,"x":3}]'), DATA_AT + 17),
    ("equal after unescaping", b'{"a":1,"\\u0061":2}', 8),
    ("equal after unescaping a pair", b'{"\\ud834\\udd1e":1,"\xf0\x9d\x84\x9e":2}', 19),
    ("with spaces between tokens", b'{ "a" : 1 , "a" : 2 }', 13),
    ("next to a JavaScript float", b'{"c":0.000005,"c":1}', 15),
    ("next to a long integer", b'{"n":1234567890123456,"n":1}', 23),
    ("second key repeats the envelope", wrap(b"1").replace(b'"data":', b'"type":'), DATA_AT - 6),
]


@pytest.mark.parametrize(("name", "data", "column"), DUPLICATES, ids=ids(DUPLICATES))
def test_reject_duplicate_key(name: str, data: bytes, column: int) -> None:
    diagnostic = reject(data)
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_DUPLICATE_KEY, column)


# --- RECORD_LONE_SURROGATE -----------------------------------------------------------------------

LONE_SURROGATES: list[tuple[str, bytes, int]] = [
    ("high in a value", wrap(b'"ab\\ud800"'), DATA_AT + 4),
    ("low in a value", wrap(b'"\\udc00"'), DATA_AT + 2),
    ("high in a key", b'{"\\ud800":1}', 3),
    ("low in a key", b'{"x\\udfff":1}', 4),
    ("high, upper-case hex", wrap(b'"\\uD800"'), DATA_AT + 2),
    ("high followed by a raw character", wrap(b'"\\ud800x"'), DATA_AT + 2),
    ("high followed by another high", wrap(b'"\\ud800\\ud800"'), DATA_AT + 2),
    ("high followed by a non-surrogate escape", wrap(b'"\\ud800\\u0041"'), DATA_AT + 2),
    ("high followed by a short escape", wrap(b'"\\ud800\\n"'), DATA_AT + 2),
    ("pair in reverse order", wrap(b'"\\udd1e\\ud834"'), DATA_AT + 2),
    ("low after a complete pair", wrap(b'"\\ud834\\udd1e\\udd1e"'), DATA_AT + 14),
    ("deep inside an array", wrap(b'[[["ok","\\udbff"]]]'), DATA_AT + 10),
]


@pytest.mark.parametrize(("name", "data", "column"), LONE_SURROGATES, ids=ids(LONE_SURROGATES))
def test_reject_lone_surrogate_escape(name: str, data: bytes, column: int) -> None:
    diagnostic = reject(data)
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_LONE_SURROGATE, column)


# --- RECORD_NUMBER_OUT_OF_RANGE ------------------------------------------------------------------

OUT_OF_RANGE: list[tuple[str, bytes]] = [
    ("400 digits", b"9" * 400),
    ("310 digits", b"1" + b"0" * 309),
    ("1e309", b"1e309"),
    ("-1e309", b"-1e309"),
    ("1e400", b"1e400"),
    ("-1e400", b"-1e400"),
    ("just past the largest double", b"1.7976931348623159e308"),
    ("huge exponent", b"1.5e+9999"),
]


@pytest.mark.parametrize(("name", "number"), OUT_OF_RANGE, ids=ids(OUT_OF_RANGE))
def test_reject_number_out_of_range(name: str, number: bytes) -> None:
    diagnostic = reject(wrap(b"[1," + number + b"]"))
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_NUMBER_OUT_OF_RANGE, DATA_AT + 4)


BIG_INTEGERS: list[tuple[str, bytes]] = [
    ("2^53", b"9007199254740992"),
    ("-2^53", b"-9007199254740992"),
    ("2^53+1, not a double", b"9007199254740993"),
    ("1e20 as JSON.stringify writes it", b"100000000000000000000"),
    ("2^63", b"9223372036854775808"),
    ("2^64, beyond what orjson keeps exact", b"18446744073709551616"),
    ("-2^63-1", b"-9223372036854775809"),
    ("a twenty-digit account number", b"12345678901234567890"),
    ("309 digits (1e308) still fits a double", b"1" + b"0" * 308),
]


@pytest.mark.parametrize(("name", "number"), BIG_INTEGERS, ids=ids(BIG_INTEGERS))
def test_accept_and_keep_integer_literal_beyond_two_to_the_53_exactly(
    name: str, number: bytes
) -> None:
    # REC-9 (rev. 2): accepted, and the reference keeps the exact integer, not a double.
    value = parse_record(wrap(b"[1," + number + b"]"), line=1)
    assert value["data"] == [1, int(number)]
    assert encode_record(value) == wrap(b"[1," + number + b"]") + b"\n"


@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "negative"])
def test_safe_integer_limit_is_two_to_the_53_minus_one(sign: int) -> None:
    assert parse_record(b'{"n":%d}' % (sign * MAX_SAFE_INTEGER), line=1) == {
        "n": sign * MAX_SAFE_INTEGER
    }


# --- RECORD_TOO_DEEP -----------------------------------------------------------------------------

TOO_DEEP: list[tuple[str, bytes, int]] = [
    ("depth 129 arrays", arrays(MAX_DEPTH + 1), DATA_AT + MAX_DEPTH),
    ("depth 129 objects", objects(MAX_DEPTH + 1), 5 * MAX_DEPTH + 1),
    ("depth 129 mixed", mixed(MAX_DEPTH + 1), len(mixed(MAX_DEPTH)) - MAX_DEPTH + 1),
    ("depth 200, valid otherwise", arrays(200), DATA_AT + MAX_DEPTH),
    ("100,000 open arrays", wrap(b"[" * 100_000), DATA_AT + MAX_DEPTH),
    ("100,000 nested arrays", arrays(100_000), DATA_AT + MAX_DEPTH),
    ("100,000 nested objects", objects(100_000), 5 * MAX_DEPTH + 1),
    ("deep after a string full of brackets", wrap(b'["]]]]",' + b"[" * 200), DATA_AT + 135),
]


@pytest.mark.parametrize(("name", "data", "column"), TOO_DEEP, ids=ids(TOO_DEEP))
def test_reject_nesting_deeper_than_128(name: str, data: bytes, column: int) -> None:
    diagnostic = reject(data)  # and no RecursionError
    assert (diagnostic.code, diagnostic.column) == (Code.RECORD_TOO_DEEP, column)


# --- order of checks (REC-19, REC-20) ------------------------------------------------------------

PRECEDENCE: list[tuple[str, bytes, Code]] = [
    ("too large beats invalid UTF-8", b"{" + b"\xff" * MAX_RECORD_BYTES, Code.RECORD_TOO_LARGE),
    ("BOM beats CR", b"\xef\xbb\xbf{}\r", Code.RECORD_BYTE_ORDER_MARK),
    ("invalid UTF-8 before a CR", b'{"a":"\xff"}\r', Code.RECORD_INVALID_UTF8),
    ("invalid UTF-8 beats an earlier syntax error", b'{x"\xff"}', Code.RECORD_INVALID_UTF8),
    ("invalid UTF-8 beats depth", b"[" * 200 + b"\xff", Code.RECORD_INVALID_UTF8),
    ("earlier syntax error beats a later surrogate", b'{x:"\\ud800"}', Code.RECORD_JSON_SYNTAX),
    ("earlier surrogate beats later syntax", b'{"a":"\\ud800",}', Code.RECORD_LONE_SURROGATE),
    ("surrogate before an unterminated string", b'{"a":"\\ud800', Code.RECORD_LONE_SURROGATE),
    (
        "earlier number beats a later duplicate",
        b'{"a":1e400,"a":1}',
        Code.RECORD_NUMBER_OUT_OF_RANGE,
    ),
    ("earlier duplicate beats a later number", b'{"a":1,"a":1e400}', Code.RECORD_DUPLICATE_KEY),
    (
        "earlier duplicate beats a later big integer",
        b'{"a":1,"a":' + b"9" * 400 + b"}",
        Code.RECORD_DUPLICATE_KEY,
    ),
    ("earlier duplicate beats later depth", b'{"a":1,"a":' + b"[" * 200, Code.RECORD_DUPLICATE_KEY),
    (
        "earlier depth beats a later duplicate",
        arrays(200)[:-1] + b',"data":1}',
        Code.RECORD_TOO_DEEP,
    ),
    (
        "earlier big integer beats later syntax",
        b'{"a":' + b"9" * 400 + b",}",
        Code.RECORD_NUMBER_OUT_OF_RANGE,
    ),
    ("a parse fault beats not-an-object", b"[1e400]", Code.RECORD_NUMBER_OUT_OF_RANGE),
    ("an overflowing integer beats not-an-object", b"[" + b"9" * 400 + b"]",
     Code.RECORD_NUMBER_OUT_OF_RANGE),
    ("a duplicate beats not-an-object", b'[{"a":1,"a":2}]', Code.RECORD_DUPLICATE_KEY),
]


@pytest.mark.parametrize(("name", "data", "code"), PRECEDENCE, ids=ids(PRECEDENCE))
def test_report_the_fault_that_comes_first_in_check_order(
    name: str, data: bytes, code: Code
) -> None:
    assert reject(data).code == code


# --- diagnostics never quote the input ------------------------------------------------------------

SECRET = b"sk-live-SECRET"

QUOTING: list[tuple[str, bytes]] = [
    ("syntax", b'{"k":"' + SECRET + b'",x}'),
    ("lone surrogate", b'{"k":"' + SECRET + b'\\ud800"}'),
    ("duplicate key", b'{"' + SECRET + b'":1,"' + SECRET + b'":2}'),
    ("invalid UTF-8", b'{"k":"' + SECRET + b'\xff"}'),
    ("number", b'{"' + SECRET + b'":1e999}'),
]


@pytest.mark.parametrize(("name", "data"), QUOTING, ids=ids(QUOTING))
def test_diagnostic_never_contains_input_text(name: str, data: bytes) -> None:
    rendered = json.dumps(reject(data).to_json())
    assert SECRET.decode() not in rendered


# --- split_lines ---------------------------------------------------------------------------------

SPLITS: list[tuple[str, bytes, dict[str, int], list[RawLine]]] = [
    ("empty buffer", b"", {}, []),
    ("one terminated line", b"{}\n", {}, [RawLine(1, 0, b"{}", True)]),
    ("one unterminated line", b"{}", {}, [RawLine(1, 0, b"{}", False)]),
    ("empty line", b"\n", {}, [RawLine(1, 0, b"", True)]),
    (
        "two lines and a torn tail",
        b"a\nbc\nd",
        {},
        [RawLine(1, 0, b"a", True), RawLine(2, 2, b"bc", True), RawLine(3, 5, b"d", False)],
    ),
    (
        "blank line in the middle",
        b"a\n\nb\n",
        {},
        [RawLine(1, 0, b"a", True), RawLine(2, 2, b"", True), RawLine(3, 3, b"b", True)],
    ),
    ("CR stays in the data", b"a\r\n", {}, [RawLine(1, 0, b"a\r", True)]),
    (
        "numbering continues from a chunk",
        b"a\nb",
        {"first_line": 10, "first_offset": 4096},
        [RawLine(10, 4096, b"a", True), RawLine(11, 4098, b"b", False)],
    ),
]


@pytest.mark.parametrize(("name", "buf", "kwargs", "expected"), SPLITS, ids=ids(SPLITS))
def test_split_lines(
    name: str, buf: bytes, kwargs: dict[str, int], expected: list[RawLine]
) -> None:
    assert list(split_lines(buf, **kwargs)) == expected


# --- encode_record -------------------------------------------------------------------------------

ENCODED: list[tuple[str, dict[str, Any], bytes]] = [
    ("compact, LF-terminated", {"a": 1, "b": [True, None]}, b'{"a":1,"b":[true,null]}\n'),
    ("no ASCII escaping", {"t": "h\u00e9 \U0001d11e"}, '{"t":"h\u00e9 \U0001d11e"}\n'.encode()),
    ("control characters escaped", {"t": "a\nb\x01"}, b'{"t":"a\\nb\\u0001"}\n'),
    ("largest safe integer", {"n": MAX_SAFE_INTEGER}, b'{"n":9007199254740991}\n'),
    ("beyond 64 bits, same digits", {"n": 2**70}, b'{"n":1180591620717411303424}\n'),
    ("depth 128", json.loads(objects(MAX_DEPTH)), objects(MAX_DEPTH) + b"\n"),
]


@pytest.mark.parametrize(("name", "obj", "expected"), ENCODED, ids=ids(ENCODED))
def test_encode_record_writes_canonical_line(
    name: str, obj: dict[str, Any], expected: bytes
) -> None:
    encoded = encode_record(obj)
    assert encoded == expected
    assert parse_record(encoded[:-1], line=1) == obj


UNENCODABLE: list[tuple[str, Any, Code]] = [
    ("not an object", [1], Code.RECORD_NOT_OBJECT),
    ("NaN", {"x": float("nan")}, Code.RECORD_NUMBER_OUT_OF_RANGE),
    ("infinity", {"x": [float("-inf")]}, Code.RECORD_NUMBER_OUT_OF_RANGE),
    ("an integer that overflows a double", {"x": 10**400}, Code.RECORD_NUMBER_OUT_OF_RANGE),
    ("its negative", {"x": [-(10**309)]}, Code.RECORD_NUMBER_OUT_OF_RANGE),
    ("lone surrogate in a value", {"x": "\ud800"}, Code.RECORD_LONE_SURROGATE),
    ("lone surrogate in a key", {"\udc00": 1}, Code.RECORD_LONE_SURROGATE),
    ("depth 129", json.loads(objects(MAX_DEPTH + 1)), Code.RECORD_TOO_DEEP),
    ("over 1 MiB", {"x": "y" * MAX_RECORD_BYTES}, Code.RECORD_TOO_LARGE),
]


@pytest.mark.parametrize(("name", "obj", "code"), UNENCODABLE, ids=ids(UNENCODABLE))
def test_encode_record_refuses_what_parse_record_would_reject(
    name: str, obj: Any, code: Code
) -> None:
    with pytest.raises(ContractError) as caught:
        encode_record(obj)
    assert caught.value.code == code


NOT_JSON: list[tuple[str, Any]] = [
    ("set", {"x": {1}}),
    ("bytes", {"x": b"1"}),
    ("integer key", {1: "x"}),
]


@pytest.mark.parametrize(("name", "obj"), NOT_JSON, ids=ids(NOT_JSON))
def test_encode_record_refuses_python_values_without_json_form(name: str, obj: Any) -> None:
    with pytest.raises(UsageError):
        encode_record(obj)
