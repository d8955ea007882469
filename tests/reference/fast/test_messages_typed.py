"""The fast engine's typed lane for plain message entries (``fast/_messages_typed``, msgspec)
against the readable core (``_records.parse_record`` and ``_schema.validate_entry``).

The lane may decline any record (it then takes the existing path); what it must never do is
accept a record the readable core rejects, or report other ids than the record holds. Through
``_store.index_stream`` the fast engine must leave every diagnostic (code and line) and every
committed entry as the same engine without its lanes does.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from _paths import CHECKOUT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_conformance.strategies import json_values, messages, timestamps
from persyk_maintainers.bench._data import conversation_records
from persyk_session._errors import Code, ContractError, Diagnostic
from persyk_session.fast import FAST_ENGINE, _lanes
from persyk_session.fast._entries_fast import ColumnTable, add_linked_message
from persyk_session.fast._messages_typed import plain_message_ids
from persyk_session.read import _records, _schema, _store
from persyk_session.read._engine import READABLE_ENGINE, Engine
from persyk_session.read._entries import EntryList, EntryTable
from persyk_session.read._feed import CHUNK_SIZE, NO_BODIES
from persyk_session.read._index import IndexBuilder

# The fast engine feeding every line through parse_record and the schema (no lane).
WITHOUT_LANES = dataclasses.replace(FAST_ENGINE, feed_lines=READABLE_ENGINE.feed_lines)

SETTINGS = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

Verdict = tuple[str, str | None] | tuple[Code, ...] | str


def readable_verdict(data: bytes) -> Verdict:
    """(id, parentId) for a valid message entry; the codes (or a reason) otherwise."""
    try:
        obj = _records.parse_record(data, line=1)
    except ContractError as error:
        return tuple(d.code for d in error.diagnostics)
    if obj.get("type") != "message":
        return "not a message entry"
    found = _schema.validate_entry(obj)
    if found:
        return tuple(d.code for d in found)
    return obj["id"], obj["parentId"]


def assert_lane_sound(data: bytes) -> None:
    accepted = plain_message_ids(data)
    if accepted is not None:
        assert readable_verdict(data) == accepted


# Members of a message in the order the lane's Structs encode them (the writers' order).
_ORDER = ["role", "toolCallId", "toolName", "isError", "content", "provider", "api", "model",
          "responseId", "usage", "stopReason", "errorMessage", "replay", "details", "timestamp"]


def in_writer_order(message: dict[str, Any]) -> dict[str, Any]:
    return {key: message[key] for key in sorted(message, key=_ORDER.index)}


ids = st.sampled_from(["a", "b", "c", "e1", "x.y_z-9"])


@st.composite
def message_entries(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "type": "message", "id": draw(ids), "parentId": draw(st.none() | ids),
        "timestamp": draw(timestamps), "message": in_writer_order(draw(messages)),
    }


# Byte-level faults and near-faults, inserted anywhere in an encoded record.
_SNIPPETS = [
    b" ", b"\r", b"\t", b"\\ud800", b"\\udfff", b"\\u0061", b"\\/", b"\xef\xbb\xbf",
    b"\xed\xa0\x80", b"\xc0\xaf", b"-0", b"NaN", b"Infinity", b"1e400", b"9" * 309,
    b"1" * 400, b"1.0", b",",
    b'"id":"a",', b'"role":"user",', b'"type":"text",', b'"extra":1,', b"[" * 130, b"{", b"}",
    b"]", b'"', b"\\", b"\x00", b"0", b"e5", b"true", b"null",
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = orjson.dumps(draw(message_entries()))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(data)))
        cut = draw(st.integers(0, 3))
        data = data[:at] + draw(st.sampled_from(_SNIPPETS)) + data[at + cut:]
    return data


@SETTINGS
@given(message_entries())
def test_lane_accepts_only_what_the_readable_core_accepts(record: dict[str, Any]) -> None:
    assert_lane_sound(orjson.dumps(record))


@SETTINGS
@given(mutated())
def test_lane_is_sound_on_mutated_records(data: bytes) -> None:
    assert_lane_sound(data)


@SETTINGS
@given(st.data())
def test_lane_is_sound_on_replaced_values(data: st.DataObject) -> None:
    # A member of the message replaced by any JSON value: types, required members, enums.
    record = data.draw(message_entries())
    message = record["message"]
    key = data.draw(st.sampled_from([*sorted(message), "extra"]))
    message[key] = data.draw(json_values)
    assert_lane_sound(orjson.dumps(record))


def test_lane_accepts_the_bench_records() -> None:
    # The lane is worth its place only if it takes the common record: every line of the
    # bench's own generator (the validate-short workload).
    records = list(conversation_records(random.Random(1), 50))
    accepted = [plain_message_ids(line.rstrip(b"\n")) for line in records]
    assert all(accepted)
    assert [a for a in accepted if a] == [readable_verdict(line.rstrip(b"\n")) for line in records]


BASE = orjson.dumps({
    "type": "message", "id": "e1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
    "message": {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "name": "read",
                     "arguments": {"path": "a.txt"}}],
        "usage": {"input": 1}, "timestamp": 1,
    },
})

# (id, old bytes, new bytes): each a fault the readable core reports.
FAULTS = [
    ("duplicate-envelope-key", b'"id":"e1"', b'"id":"e0","id":"e1"'),
    ("duplicate-tag", b'"type":"message"', b'"type":"message","type":"message"'),
    ("duplicate-role", b'"role":"assistant"', b'"role":"assistant","role":"assistant"'),
    ("duplicate-block-key", b'"name":"read"', b'"name":"x","name":"read"'),
    ("duplicate-free-form-key", b'{"path":"a.txt"}', b'{"path":"b","path":"a.txt"}'),
    ("lone-surrogate-escape", b'"a.txt"', b'"\\ud800"'),
    ("encoded-surrogate", b'"a.txt"', b'"\xed\xa0\x80"'),
    ("overlong-utf8", b'"a.txt"', b'"\xc0\xaf"'),
    ("integer-of-400-digits", b'"input":1', b'"input":' + b"1" * 400),
    ("integer-of-309-digits-overflowing", b'"input":1', b'"input":' + b"9" * 309),
    ("nan-literal", b'"input":1', b'"input":NaN'),
    ("float-overflow", b'"input":1', b'"input":1e400'),
    ("too-deep", b'{"path":"a.txt"}', b'{"p":' + b"[" * 130 + b"]" * 130 + b"}"),
    ("bom", b'{"type":"message"', b'\xef\xbb\xbf{"type":"message"'),
    ("timestamp-as-string", b'"timestamp":1}', b'"timestamp":"1"}'),
    ("timestamp-negative", b'"timestamp":1}', b'"timestamp":-1}'),
    ("timestamp-beyond-2-53", b'"timestamp":1}', b'"timestamp":9007199254740992}'),
    ("timestamp-missing", b',"timestamp":1}', b"}"),
    ("timestamp-true", b'"timestamp":1}', b'"timestamp":true}'),
    ("usage-not-object", b'{"input":1}', b"[1]"),
    ("arguments-null", b'{"path":"a.txt"}', b"null"),
    ("parent-not-id", b'"parentId":null', b'"parentId":1'),
    ("id-pattern", b'"id":"e1"', b'"id":"-e1"'),
    ("id-too-long", b'"id":"e1"', b'"id":"' + b"e" * 129 + b'"'),
    ("envelope-timestamp-form", b'00.000Z"', b'00.000z"'),
    ("impossible-day", b'"2026-01-01T', b'"2026-02-30T'),
    ("extra-entry-member", b'"id":"e1"', b'"id":"e1","extra":1'),
    ("extra-message-member", b'"usage"', b'"extra":1,"usage"'),
    ("unknown-role", b'"assistant"', b'"system"'),
    ("known-block-malformed", b'"name":"read",', b""),
    ("image-block-without-asset", b'{"type":"toolCall","id":"c1","name":"read",'
     b'"arguments":{"path":"a.txt"}}', b'{"type":"image"}'),
    ("tool-result-is-error-integer", b'"role":"assistant"',
     b'"role":"toolResult","toolCallId":"c","toolName":"t","isError":1'),
    ("content-not-array", b'"content":[', b'"content":{"a":['),
    ("trailing-comma", b'"input":1}', b'"input":1,}'),
]

# Valid records the lane declines: they take the existing path (correct, only slower).
DECLINED = [
    ("whitespace", b'"id":"e1"', b'"id": "e1"'),
    ("negative-zero", b'"input":1', b'"input":-0'),
    ("integer-written-as-float", b'"timestamp":1}', b'"timestamp":1.0}'),
    ("escape", b'"a.txt"', b'"\\u0061.txt"'),
    ("other-member-order", b'"usage":{"input":1},"timestamp":1',
     b'"timestamp":1,"usage":{"input":1}'),
    ("day-29", b'"2026-01-01T', b'"2026-01-29T'),
    ("unknown-block",
     b'{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.txt"}}',
     b'{"type":"sticker"}'),
]


def _edit(old: bytes, new: bytes) -> bytes:
    assert BASE.count(old) == 1, old
    return BASE.replace(old, new)


def test_lane_accepts_the_base_record() -> None:
    assert plain_message_ids(BASE) == ("e1", None) == readable_verdict(BASE)


@pytest.mark.parametrize(("old", "new"), [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS])
def test_lane_declines_a_faulty_record(old: bytes, new: bytes) -> None:
    data = _edit(old, new)
    verdict = readable_verdict(data)
    assert verdict == "not a message entry" or (
        isinstance(verdict, tuple) and verdict and all(isinstance(c, Code) for c in verdict))
    assert plain_message_ids(data) is None


@pytest.mark.parametrize(("old", "new"), [f[1:] for f in DECLINED], ids=[f[0] for f in DECLINED])
def test_lane_declines_an_unusual_valid_record(old: bytes, new: bytes) -> None:
    data = _edit(old, new)
    assert readable_verdict(data) == ("e1", None)
    assert plain_message_ids(data) is None


def lanes_at_any_size() -> Any:
    """The lanes taken whatever the read's size (a small read would not take them)."""
    return mock.patch.object(_lanes, "typed_lane_pays", lambda size: True)


def index_of(data: bytes, engine: Engine = FAST_ENGINE) -> tuple[Any, ...]:
    # Both lanes, at any size: the block lane (tests/reference/fast/test_messages_block.py) takes
    # these lines first.
    chunks = [data]
    with lanes_at_any_size():
        index = _store.index_stream(lambda _n: chunks.pop() if chunks else b"", engine=engine)
    found = tuple((d.code, d.line, d.pointer) for d in index.diagnostics)
    entries = tuple((e.id, e.parent_id, e.line, e.offset, e.length) for e in index.entries)
    return found, entries, index.valid, index.lines


HEADER = b'{"type":"session","version":1,"id":"s1","timestamp":"2026-01-01T00:00:00Z"}\n'


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.one_of(message_entries().map(orjson.dumps), mutated()), max_size=8),
       st.booleans())
def test_lane_leaves_every_diagnostic_and_entry_unchanged(lines: list[bytes], torn: bool) -> None:
    # Small id alphabet: duplicates (ID-3) and missing parents (TREE-1) are frequent.
    data = HEADER + b"".join(line.replace(b"\n", b"") + b"\n" for line in lines)
    if torn and lines:
        data = data[:-1]  # REC-16: the last record has no LF
    assert index_of(data, WITHOUT_LANES) == index_of(data)


# Every session file of the v1 cases: a validate through the CLI takes the lane only past
# fast/_lanes.TYPED_LANE_MIN_BYTES, so the conformance suite's own small sessions no longer pass
# through it; here each of them does, against the path without it.
V1 = CHECKOUT / "fixtures" / "v1"
FIXTURE_SESSIONS = sorted(p for p in V1.glob("*/*/tree/**/session.jsonl") if p.is_file())


def test_fixture_sessions_were_found() -> None:
    assert len(FIXTURE_SESSIONS) > 500


@pytest.mark.parametrize("session", FIXTURE_SESSIONS,
                         ids=[p.relative_to(V1).as_posix() for p in FIXTURE_SESSIONS])
def test_lane_leaves_every_case_session_unchanged(session: Path) -> None:
    data = session.read_bytes()
    assert index_of(data, WITHOUT_LANES) == index_of(data)


@pytest.mark.parametrize("table_type", [EntryList, ColumnTable], ids=["readable", "columns"])
def test_add_linked_message_commits_only_a_new_id_under_a_committed_parent(
    table_type: type[EntryTable],
) -> None:
    table = table_type()
    assert add_linked_message(table, "a", None, line=2, offset=10, length=5)
    assert not add_linked_message(table, "a", None, line=3, offset=16, length=5)  # ID-3
    assert not add_linked_message(table, "b", "zz", line=4, offset=22, length=5)  # TREE-1
    assert add_linked_message(table, "b", "a", line=5, offset=28, length=5)
    assert [tuple(table.at(p)) for p in range(len(table))] == [
        ("a", None, "message", 2, 10, 5, 0, None, None),
        ("b", "a", "message", 5, 28, 5, 1, None, None),
    ]


class _TappingBuilder(IndexBuilder):
    """Like search's builder: sees every committed record through add_record."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def add_record(
        self, obj: dict[str, Any], *, line: int, offset: int, length: int
    ) -> list[Diagnostic]:
        found = super().add_record(obj, line=line, offset=offset, length=length)
        self.seen.append(obj["id"])
        return found


@pytest.mark.parametrize("engine", [READABLE_ENGINE, FAST_ENGINE], ids=["readable", "fast"])
def test_feed_lines_hands_every_record_to_a_tapping_builder(engine: Engine) -> None:
    # The lanes build no record, so a builder that taps add_record never gets them, however
    # large the read.
    data = HEADER + b"".join(conversation_records(random.Random(1), 5))
    chunks = [data]
    builder = _TappingBuilder()
    with lanes_at_any_size():
        for _ in engine.feed_lines(
            builder, lambda _n: chunks.pop() if chunks else b"", parse=engine.parse_record,
            chunk_size=CHUNK_SIZE, first_line=1, start_offset=0, kept=NO_BODIES,
        ):
            pass
    assert builder.seen == ["s1", "e00000000", "e00000001", "e00000002", "e00000003", "e00000004"]
