"""Properties of the record layer: round trips, injected faults, the fast path (``_records_fast``)
against the readable reader (``_records``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_conformance.strategies import json_values, scalar_text
from persyk_session._errors import Code, ContractError, Diagnostic
from persyk_session.fast import _records_fast
from persyk_session.read._records import encode_record, parse_record

# Generating these values takes longer on a loaded machine; that says nothing about the code.
SLOW_MACHINE = [HealthCheck.too_slow]

# Unicode scalar values only (REC-5, REC-17): the package's strategies, which implementers use too.
records = st.dictionaries(scalar_text, json_values, max_size=6)
nonempty_records = st.dictionaries(scalar_text, json_values, min_size=1, max_size=6)

high_surrogates = st.integers(0xD800, 0xDBFF)
low_surrogates = st.integers(0xDC00, 0xDFFF)


def code_of(data: bytes) -> Code:
    with pytest.raises(ContractError) as caught:
        parse_record(data, line=1)
    return caught.value.code


def json_string(text: str) -> bytes:
    return orjson.dumps(text)


@pytest.mark.slow
@settings(max_examples=200, suppress_health_check=SLOW_MACHINE)
@given(records)
def test_encoded_record_parses_back_equal(obj: dict[str, Any]) -> None:
    encoded = encode_record(obj)
    assert encoded.endswith(b"\n")
    assert b"\n" not in encoded[:-1]
    assert parse_record(encoded[:-1], line=1) == obj


@settings(max_examples=200, suppress_health_check=SLOW_MACHINE)
@given(
    records,
    scalar_text,
    scalar_text,
    st.one_of(
        high_surrogates.map(lambda unit: b"\\u%04x" % unit),
        low_surrogates.map(lambda unit: b"\\u%04X" % unit),
    ),
    st.booleans(),
)
def test_inserted_lone_surrogate_escape_is_rejected(
    obj: dict[str, Any], before: str, after: str, lone: bytes, in_key: bool
) -> None:
    # orjson never writes a surrogate escape, so `before` cannot end with a high one and
    # `after` cannot start with a low one: the inserted escape stays unpaired.
    text = json_string(before)[:-1] + lone + json_string(after)[1:]
    member = text + b":1" if in_key else b'"k":' + text
    rest = encode_record(obj)[1:-1]
    data = b"{" + member + (b"," + rest if obj else b"}")
    assert code_of(data) == Code.RECORD_LONE_SURROGATE


@pytest.mark.slow
@settings(max_examples=200, suppress_health_check=SLOW_MACHINE)
@given(nonempty_records, st.data(), json_values, st.booleans(), st.booleans())
def test_repeated_key_is_rejected(
    obj: dict[str, Any], data: st.DataObject, value: Any, ascii_spelling: bool, nested: bool
) -> None:
    key = data.draw(st.sampled_from(sorted(obj)))
    # The repeat may be spelled differently (\\u escapes); keys compare after unescaping.
    spelled = json.dumps(key).encode() if ascii_spelling else json_string(key)
    record = encode_record(obj)[:-2] + b"," + spelled + b":" + orjson.dumps(value) + b"}"
    if nested:
        record = b'{"outer":' + record + b"}"
    assert code_of(record) == Code.RECORD_DUPLICATE_KEY


def outcome(parse: Callable[..., dict[str, Any]], data: bytes) -> dict[str, Any] | Diagnostic:
    try:
        return parse(data, line=1)
    except ContractError as error:
        return error.diagnostics[0]


@pytest.mark.slow
@settings(max_examples=300, suppress_health_check=SLOW_MACHINE)
@given(records, st.data())
def test_fast_path_agrees_with_scanner_on_mutated_records(
    obj: dict[str, Any], data: st.DataObject
) -> None:
    encoded = encode_record(obj)[:-1]
    position = data.draw(st.integers(0, len(encoded)))
    insert = data.draw(st.binary(max_size=3) | st.sampled_from([b'"', b"\\", b",", b"1e400"]))
    cut = data.draw(st.integers(0, 2))
    mutated = encoded[:position] + insert + encoded[position + cut :]
    assert outcome(_records_fast.parse_record, mutated) == outcome(parse_record, mutated)


@settings(max_examples=300, suppress_health_check=SLOW_MACHINE)
@given(st.binary(max_size=40))
def test_fast_path_agrees_with_scanner_on_arbitrary_bytes(data: bytes) -> None:
    assert outcome(_records_fast.parse_record, data) == outcome(parse_record, data)


@pytest.mark.slow
@settings(max_examples=200, suppress_health_check=SLOW_MACHINE)
@given(records)
def test_fast_writer_and_readable_writer_write_the_same_value(obj: dict[str, Any]) -> None:
    fast, readable = _records_fast.encode_record(obj), encode_record(obj)
    assert parse_record(fast[:-1], line=1) == parse_record(readable[:-1], line=1) == obj
