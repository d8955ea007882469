"""The fast engine's block lane (``fast/_messages_block``, ``_entries_fast.add_linked_messages``
and ``_blocks.split_blocks``) against the readable core and the per-record path.

The lane may decline any block (its lines then go one by one); what it must never do is accept
a block holding a line the readable core rejects, other than for a parentId the index then
refuses. Through ``_store.index_stream`` both lanes together must leave every diagnostic (code
and line) and every committed entry as the per-record path without them does, whatever the
chunk size.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_maintainers.bench._data import conversation_records
from persyk_session._errors import Code
from persyk_session._lines import split_stream
from persyk_session.fast import FAST_ENGINE, _lanes, _messages_block
from persyk_session.fast._blocks import Block, lines_of_block, split_blocks
from persyk_session.fast._entries_fast import (
    ColumnTable,
    add_linked_message,
    add_linked_messages,
)
from persyk_session.fast._messages_block import MessageBlock
from persyk_session.fast._messages_block import plain_message_block as lane_of_lines
from persyk_session.read import _store
from persyk_session.read._engine import Engine
from persyk_session.read._entries import EntryList, EntryTable
from test_messages_typed import (
    FAULTS,
    HEADER,
    WITHOUT_LANES,
    lanes_at_any_size,
    message_entries,
    mutated,
    readable_verdict,
)

SETTINGS = settings(
    max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def plain_message_block(block: bytes) -> MessageBlock | None:
    return lane_of_lines(block, block.split(b"\n")[:-1])


def assert_block_sound(block: bytes) -> None:
    proven = plain_message_block(block)
    if proven is None:
        return
    lines = block.split(b"\n")[:-1]
    assert proven.lengths == [len(line) for line in lines]
    for line, entry_id, parent in zip(lines, proven.ids, proven.parents, strict=True):
        verdict = readable_verdict(line)
        # A parentId that is no Id is no committed entry either: the index refuses the block.
        assert verdict == (entry_id, parent) or (
            parent is not None and _ID.fullmatch(parent) is None), (line, verdict)


def bench_lines(count: int = 20) -> list[bytes]:
    return [line.rstrip(b"\n") for line in conversation_records(random.Random(3), count)]


def joined(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def with_line(middle: bytes) -> bytes:
    """A bench block whose eleventh line is ``middle``."""
    lines = bench_lines()
    lines[10] = middle
    return joined(lines)


# --- the lane itself ---------------------------------------------------------------------------

def test_block_lane_accepts_the_bench_records() -> None:
    lines = bench_lines(200)
    proven = plain_message_block(joined(lines))
    assert proven is not None
    assert [(i, p) for i, p in zip(proven.ids, proven.parents, strict=True)] == [
        readable_verdict(line) for line in lines]


@SETTINGS
@given(st.lists(st.one_of(message_entries().map(orjson.dumps), mutated()), min_size=1,
                max_size=6))
def test_block_lane_is_sound_on_generated_and_mutated_lines(lines: list[bytes]) -> None:
    assert_block_sound(joined([line.replace(b"\n", b"") for line in lines]))


@SETTINGS
@given(st.lists(message_entries().map(orjson.dumps), min_size=1, max_size=6))
def test_block_lane_is_sound_on_generated_lines(lines: list[bytes]) -> None:
    assert_block_sound(joined(lines))


def _base_edit(old: bytes, new: bytes) -> bytes:
    from test_messages_typed import BASE

    assert BASE.count(old) == 1, old
    return BASE.replace(old, new)


@pytest.mark.parametrize(("old", "new"), [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS])
def test_block_lane_declines_a_block_holding_a_faulty_record(old: bytes, new: bytes) -> None:
    assert plain_message_block(with_line(_base_edit(old, new))) is None


TEXT = b'"text":"a.txt"'
# (id, the text member of a text block, or a whole line): each a fault the readable core
# reports, that only the raw lane's own checks catch.
RAW_FAULTS = [
    # REC-2 (the UTF-8 check of the whole block)
    ("encoded-surrogate-in-text", b'"text":"a\xed\xa0\x80"'),
    ("overlong-two-bytes-in-text", b'"text":"a\xc0\xaf"'),
    ("overlong-three-bytes-in-text", b'"text":"a\xe0\x80\xaf"'),
    ("above-u10ffff-in-text", b'"text":"a\xf4\x90\x80\x80"'),
    ("byte-ff-in-text", b'"text":"a\xff"'),
    ("lone-continuation-in-text", b'"text":"a\x80"'),
    ("truncated-sequence-in-text", b'"text":"a\xe6\x9d"'),
    ("encoded-surrogate-in-thinking", b'"thinking":"\xed\xbf\xbf"'),
    # the text must be a string (the check that every text key is followed by a quote)
    ("text-number", b'"text":5'),
    ("text-null", b'"text":null'),
    ("text-object", b'"text":{"a":1}'),
    ("text-array", b'"text":["a"]'),
    ("thinking-true", b'"thinking":true'),
    # REC-3 inside a raw string (msgspec's scanner)
    ("control-byte-in-text", b'"text":"a\x01b"'),
    ("tab-in-text", b'"text":"a\tb"'),
    # escapes: any backslash sends the block to the str lane, which decodes them
    ("lone-surrogate-escape-in-text", b'"text":"a\\ud800"'),
    ("low-surrogate-first-in-text", b'"text":"\\udc00\\ud800"'),
    ("lone-low-surrogate-escape-in-text", b'"text":"a\\udc00"'),
    ("bad-escape-in-text", b'"text":"a\\x41"'),
    ("unfinished-escape-in-text", b'"text":"a\\u00"'),
]


def _text_line(member: bytes) -> bytes:
    if member.startswith(b'"thinking"'):
        return (b'{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:00Z",'
                b'"message":{"role":"assistant","content":[{"type":"thinking",' + member
                + b'}],"timestamp":1}}')
    return (b'{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:00Z",'
            b'"message":{"role":"user","content":[{"type":"text",' + member
            + b'}],"timestamp":1}}')


def test_text_line_is_valid_as_written() -> None:
    # The rows below differ from this line in the member only.
    assert readable_verdict(_text_line(TEXT)) == ("m1", None)
    assert plain_message_block(with_line(_text_line(TEXT))) is not None


@pytest.mark.parametrize("member", [r[1] for r in RAW_FAULTS], ids=[r[0] for r in RAW_FAULTS])
def test_block_lane_declines_what_raw_text_would_let_through(member: bytes) -> None:
    line = _text_line(member)
    verdict = readable_verdict(line)
    assert isinstance(verdict, tuple) and verdict and all(isinstance(c, Code) for c in verdict)
    assert plain_message_block(with_line(line)) is None


# Valid blocks the lane must still accept (through the str lane where it holds escapes).
ACCEPTED = [
    ("escapes-in-text", _text_line(b'"text":"a\\n\\"b\\\\\\t\\u001f"')),
    ("key-text-with-string-in-arguments", bench_lines(2)[1].replace(
        b'{"path":"a.txt"}', b'{"text":"x","thinking":"y"}')),
    ("many-digits-in-text", _text_line(b'"text":"' + b"7" * 300 + b'"')),
    ("leap-day", _text_line(TEXT).replace(b"2026-01-01", b"2028-02-29")),
    ("thirty-first", _text_line(TEXT).replace(b"2026-01-01", b"2026-01-31")),
]


@pytest.mark.parametrize("line", [r[1] for r in ACCEPTED], ids=[r[0] for r in ACCEPTED])
def test_block_lane_accepts_a_valid_unusual_line(line: bytes) -> None:
    verdict = readable_verdict(line)
    proven = plain_message_block(with_line(line))
    assert proven is not None
    assert (proven.ids[10], proven.parents[10]) == verdict


# Blocks the lane declines although the readable core accepts or judges them otherwise.
DECLINED = [
    # msgspec writes these characters raw, so the encoding differs from the record
    ("surrogate-pair-escape-in-text", _text_line(b'"text":"\\ud83c\\udfa7"')),
    ("escaped-letter-in-text", _text_line(b'"text":"\\u0061"')),
    ("blank-line", b""),
    ("blank-line-of-spaces", b"  "),
    ("header", HEADER.rstrip(b"\n")),
    ("impossible-day", _text_line(TEXT).replace(b"2026-01-01", b"2026-02-30")),
    ("no-leap-day", _text_line(TEXT).replace(b"2026-01-01", b"2026-02-29")),
    ("integer-of-309-digits-in-arguments", bench_lines(2)[1].replace(
        b'{"path":"a.txt"}', b'{"n":' + b"9" * 309 + b"}")),
    ("nesting-129-deep-in-arguments", bench_lines(2)[1].replace(
        b'{"path":"a.txt"}', b'{"n":' + b"[" * 128 + b"]" * 128 + b"}")),
    ("id-holding-an-escaped-lf", _text_line(TEXT).replace(b'"id":"m1"', b'"id":"m\\n1"')),
    ("id-pattern", _text_line(TEXT).replace(b'"id":"m1"', b'"id":".m1"')),
    ("timestamp-pattern", _text_line(TEXT).replace(b"00:00:00Z", b"24:00:00Z")),
    ("record-over-16-kib", _text_line(b'"text":"' + b"x" * 16_400 + b'"')),
]


@pytest.mark.parametrize("line", [r[1] for r in DECLINED], ids=[r[0] for r in DECLINED])
def test_block_lane_declines_an_unusual_line(line: bytes) -> None:
    assert plain_message_block(with_line(line)) is None


def test_orjson_checks_the_utf8_of_its_whole_input_first() -> None:
    # The raw lane's UTF-8 check rests on this; without it the lane decodes text as str.
    assert _messages_block.ORJSON_CHECKS_UTF8_FIRST
    assert not _messages_block._valid_utf8(b'{}\n{}\n{"a":"\xf4\x90\x80\x80"}\n')
    assert _messages_block._valid_utf8(joined(bench_lines()))


@pytest.mark.parametrize("values", [["a", "b\nc"], ["a\n", "b"], ["a", ""]],
                         ids=["inner-lf", "trailing-lf", "empty"])
def test_all_match_refuses_a_value_holding_a_separator_or_nothing(values: list[str]) -> None:
    assert not _messages_block.ids_match(values)


# --- the index ---------------------------------------------------------------------------------

TABLES = pytest.mark.parametrize("table_type", [EntryList, ColumnTable],
                                 ids=["readable", "columns"])


def _committed(table: EntryTable) -> list[tuple[Any, ...]]:
    return [tuple(table.at(p)) for p in range(len(table))]


def _seeded(table_type: type[EntryTable]) -> EntryTable:
    table = table_type()
    assert add_linked_message(table, "a", None, line=2, offset=10, length=5)
    assert add_linked_message(table, "b", "a", line=3, offset=16, length=5)
    return table


@TABLES
@pytest.mark.parametrize(("ids", "parents"), [
    (["c", "d", "c"], ["b", "c", "d"]),  # ID-3 within the block
    (["c", "a"], ["b", "c"]),  # ID-3 against a committed entry
    (["c", "d"], ["zz", "c"]),  # TREE-1: no such parent
    (["c", "d"], ["d", "c"]),  # TREE-1: the parent comes later
    (["c", "d"], ["b", "d"]),  # TREE-1: its own parent
    (["c", "d"], ["c", None]),  # TREE-1: the first its own parent (a chain otherwise)
], ids=["repeated", "committed", "missing-parent", "later-parent", "own-parent", "own-first"])
def test_add_linked_messages_commits_nothing_unless_every_entry_holds(
    table_type: type[EntryTable], ids: list[str], parents: list[str | None],
) -> None:
    table = _seeded(table_type)
    before = _committed(table)
    assert not add_linked_messages(table, ids, parents, [5] * len(ids), line=4, offset=22)
    assert _committed(table) == before
    # The lookup is intact: the old entries are found, none of the refused block is.
    assert table.get("a") == table.at(0) and table.get("b") == table.at(1)
    assert all(table.get(i) is None for i in set(ids) - {"a", "b"})
    assert add_linked_message(table, "e", "b", line=9, offset=40, length=5)
    assert table.get("e") == table.at(2)


@TABLES
@pytest.mark.parametrize(("ids", "parents"), [
    (["c", "d", "e"], ["b", "c", "d"]),
    (["c", "d", "e"], [None, "a", "c"]),
    (["c", "d", "e"], ["a", "a", "d"]),
], ids=["chain", "branches", "fork-from-committed"])
def test_add_linked_messages_commits_as_one_by_one_would(
    table_type: type[EntryTable], ids: list[str], parents: list[str | None],
) -> None:
    block, single = _seeded(table_type), _seeded(table_type)
    assert add_linked_messages(block, ids, parents, [5, 6, 7], line=4, offset=22)
    offset = 22
    rows = zip(ids, parents, [5, 6, 7], strict=True)
    for line, (entry_id, parent, length) in enumerate(rows, start=4):
        assert add_linked_message(single, entry_id, parent, line=line, offset=offset,
                                  length=length)
        offset += length + 1
    assert _committed(block) == _committed(single)
    assert [block.get(i) for i in ids] == [single.get(i) for i in ids]


# --- the splitter ------------------------------------------------------------------------------

def _flattened(pieces: Iterator[Any], limit: int) -> list[Any]:
    out: list[Any] = []
    for piece in pieces:
        if isinstance(piece, Block):
            assert piece.data == b"".join(line + b"\n" for line in piece.lines)
            out.extend(lines_of_block(piece, limit=limit))
        else:
            out.append(piece)
    return out


def _reader(data: bytes) -> Any:
    view = memoryview(data)
    position = 0

    def read(size: int) -> bytes:
        nonlocal position
        chunk = bytes(view[position:position + size])
        position += len(chunk)
        return chunk

    return read


@SETTINGS
@given(st.lists(st.sampled_from([b"a", b"bcdefgh", b"", b"\n", b"x" * 40]), max_size=30)
       .map(b"".join), st.integers(1, 64), st.integers(1, 30), st.integers(1, 5))
def test_split_blocks_gives_split_streams_lines(
    data: bytes, chunk_size: int, limit: int, first_line: int,
) -> None:
    expected = list(split_stream(_reader(data), chunk_size=chunk_size, limit=limit,
                                 first_line=first_line, first_offset=7))
    got = _flattened(split_blocks(_reader(data), chunk_size=chunk_size, limit=limit,
                                  first_line=first_line, first_offset=7), limit)
    assert got == expected


# --- through the read --------------------------------------------------------------------------

def index_of(data: bytes, chunk_size: int, engine: Engine = FAST_ENGINE) -> tuple[Any, ...]:
    with lanes_at_any_size():
        index = _store.index_stream(_reader(data), engine=engine, chunk_size=chunk_size)
    found = tuple((d.code, d.line, d.pointer) for d in index.diagnostics)
    entries = tuple((e.id, e.parent_id, e.line, e.offset, e.length, e.depth)
                    for e in index.entries)
    return found, entries, index.valid, index.lines


def assert_lanes_leave_the_index_unchanged(data: bytes, chunk_size: int) -> None:
    assert index_of(data, chunk_size, WITHOUT_LANES) == index_of(data, chunk_size)


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.one_of(message_entries().map(orjson.dumps), mutated()), max_size=10),
       st.sampled_from([64, 512, 4096, 1 << 20]), st.booleans())
def test_lanes_leave_every_diagnostic_and_entry_unchanged(
    lines: list[bytes], chunk_size: int, torn: bool,
) -> None:
    data = HEADER + joined([line.replace(b"\n", b"") for line in lines])
    if torn and lines:
        data = data[:-1]  # REC-16
    assert_lanes_leave_the_index_unchanged(data, chunk_size)


_BENCH = bench_lines(60)
SESSIONS = [
    ("bench", HEADER + joined(_BENCH)),
    ("blank-lines-before-header", b"\n \n" + HEADER + joined(_BENCH)),
    ("duplicate-id-late", HEADER + joined([*_BENCH, _BENCH[3]])),
    ("duplicate-id-in-one-block", HEADER + joined([*_BENCH[:30], _BENCH[5], *_BENCH[30:]])),
    ("missing-parent", HEADER + joined(_BENCH[:20] + _BENCH[21:])),
    ("raw-fault", HEADER + joined(
        [*_BENCH[:20], _text_line(b'"text":"\xed\xa0\x80"'), *_BENCH[20:]])),
    ("no-header", joined(_BENCH)),
    ("header-twice", HEADER + joined(_BENCH[:10]) + HEADER + joined(_BENCH[10:])),
    ("torn-tail", (HEADER + joined(_BENCH))[:-1]),
]


@pytest.mark.parametrize("chunk_size", [97, 4096, 1 << 20])
@pytest.mark.parametrize("data", [s[1] for s in SESSIONS], ids=[s[0] for s in SESSIONS])
def test_lanes_leave_a_sessions_index_unchanged(data: bytes, chunk_size: int) -> None:
    assert_lanes_leave_the_index_unchanged(data, chunk_size)


def test_the_bench_session_is_committed_in_blocks() -> None:
    # The lane is worth its place only if the common session takes it.
    index, taken = index_counting_the_lane(HEADER + joined(_BENCH))
    assert index.valid and len(index.entries) == 60
    assert len(taken) > 3 and all(taken)


def index_counting_the_lane(data: bytes) -> tuple[Any, list[MessageBlock | None]]:
    """The index of ``data`` read in chunks of 4 KiB, and what the block lane answered each
    time it was asked."""
    taken: list[MessageBlock | None] = []

    def counting(block: bytes, lines: list[bytes]) -> MessageBlock | None:
        taken.append(lane_of_lines(block, lines))
        return taken[-1]

    saved = _lanes.typed_block_lane
    _lanes.typed_block_lane = lambda: counting
    try:
        with lanes_at_any_size():
            return _store.index_stream(_reader(data), engine=FAST_ENGINE, chunk_size=4096), taken
    finally:
        _lanes.typed_block_lane = saved


@SETTINGS
@given(st.lists(st.sampled_from([b"a", b"bcdefgh", b"", b"\n", b"x" * 40]), max_size=30)
       .map(b"".join), st.integers(1, 64), st.integers(1, 30),
       st.lists(st.booleans(), max_size=12))
def test_split_blocks_gives_split_streams_lines_whatever_want_says(
    data: bytes, chunk_size: int, limit: int, wants: list[bool],
) -> None:
    answers = iter(wants)
    expected = list(split_stream(_reader(data), chunk_size=chunk_size, limit=limit))
    got = _flattened(split_blocks(_reader(data), chunk_size=chunk_size, limit=limit,
                                  want=lambda: next(answers, False)), limit)
    assert got == expected


def _custom_lines(count: int, first_parent: str | None = None) -> list[bytes]:
    parent, lines = first_parent, []
    for n in range(count):
        lines.append(orjson.dumps({"type": "custom", "id": f"c{n}", "parentId": parent,
                                   "timestamp": "2026-01-01T00:00:00Z", "customType": "t",
                                   "data": "x" * 200}))
        parent = f"c{n}"
    return lines


def test_a_session_the_lane_cannot_take_is_read_line_by_line_after_four_blocks() -> None:
    # Realtime events, custom entries: every block the lane declines was copied and split for
    # nothing (validate-events was 1.6x slower with the lane than without), so after four in
    # a row the read stops cutting blocks. Without the switch the lane is asked for every one.
    data = HEADER + joined(_custom_lines(400))
    index, asked = index_counting_the_lane(data)
    assert index.valid and len(index.entries) == 400
    assert len(data) // 4096 > 20 and len(asked) == 4


@pytest.mark.parametrize("chunk_size", [97, 4096])
def test_messages_after_many_declined_blocks_leave_the_index_unchanged(chunk_size: int) -> None:
    data = HEADER + joined(_custom_lines(60)) + joined(bench_lines(60))
    assert_lanes_leave_the_index_unchanged(data, chunk_size)
