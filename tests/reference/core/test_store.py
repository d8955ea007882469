"""The read path's I/O shell: path resolution, streaming, limits, bodies on demand, no writes."""

from __future__ import annotations

import io
import os
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from persyk_conformance.records import entry, header, user
from persyk_session import Code, UsageError, open_session, resolve_session_file
from persyk_session._lines import Line, split_lines, split_stream
from persyk_session.operations import op_context, op_info, op_validate
from persyk_session.read._records import MAX_RECORD_BYTES

HEADER = header("s-1")




class StreamedLine:
    """A line of :func:`split_stream` by name (the splitter yields plain tuples for speed)."""

    def __init__(self, line: Line) -> None:
        self.line, self.offset, self.length, self.data, self.terminated = line


def iter_lines(
    read: Callable[[int], bytes], *, chunk_size: int, limit: int
) -> Iterator[StreamedLine]:
    return (StreamedLine(line) for line in split_stream(read, chunk_size=chunk_size, limit=limit))


def jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def write_session(tmp_path: Path, data: bytes) -> Path:
    folder = tmp_path / "session"
    folder.mkdir()
    (folder / "session.jsonl").write_bytes(data)
    return folder


def custom_of_size(id_: str, parent: str | None, size: int) -> bytes:
    """A custom entry record of exactly ``size`` bytes (without LF)."""
    bare = orjson.dumps(entry("custom", id_, parent, customType="x", data=""))
    return orjson.dumps(entry("custom", id_, parent, customType="x", data="a" * (size - len(bare))))


def reader(data: bytes) -> Callable[[int], bytes]:
    return io.BytesIO(data).read


# --- resolving PATH -----------------------------------------------------------------------------


def test_session_directory_resolves_to_its_file(tmp_path: Path) -> None:
    folder = write_session(tmp_path, jsonl(HEADER))
    assert resolve_session_file(folder) == folder / "session.jsonl"


def test_session_file_resolves_to_itself(tmp_path: Path) -> None:
    folder = write_session(tmp_path, jsonl(HEADER))
    assert resolve_session_file(folder / "session.jsonl") == folder / "session.jsonl"


@pytest.mark.parametrize(
    "relative",
    [pytest.param("absent", id="missing"), pytest.param("", id="directory-without-session-file")],
)
def test_unresolvable_path_is_path_not_found(tmp_path: Path, relative: str) -> None:
    with pytest.raises(UsageError) as caught:
        resolve_session_file(tmp_path / relative)
    assert caught.value.code == Code.PATH_NOT_FOUND


# --- splitting lines ----------------------------------------------------------------------------

SPLIT_INPUTS = [
    pytest.param(b"", id="empty"),
    pytest.param(b"a\n", id="one-line"),
    pytest.param(b"ab\ncd\n\nef\n", id="with-empty-line"),
    pytest.param(b"ab\ncd", id="unterminated-tail"),
    pytest.param(b"\n\n", id="only-lfs"),
    pytest.param(b"abcdefgh\nij\nklmnopqrstuv\n", id="longer-than-chunks"),
]


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 1 << 20], ids=lambda n: f"chunk-{n}")
@pytest.mark.parametrize("data", SPLIT_INPUTS)
def test_streamed_lines_match_whole_buffer_split(data: bytes, chunk_size: int) -> None:
    streamed = [
        (r.line, r.offset, r.data, r.terminated)
        for r in iter_lines(reader(data), chunk_size=chunk_size, limit=MAX_RECORD_BYTES)
    ]
    whole = [(r.line, r.offset, r.data, r.terminated) for r in split_lines(data)]
    assert streamed == whole


@pytest.mark.parametrize("chunk_size", [1, 4, 64], ids=lambda n: f"chunk-{n}")
def test_over_limit_line_is_dropped_and_next_line_keeps_its_position(chunk_size: int) -> None:
    data = b"ok\n" + b"x" * 20 + b"\nexactly8\nnext\n"
    lines = list(iter_lines(reader(data), chunk_size=chunk_size, limit=8))
    assert [(r.line, r.offset, r.length, r.data) for r in lines] == [
        (1, 0, 2, b"ok"),
        (2, 3, 20, None),
        (3, 24, 8, b"exactly8"),
        (4, 33, 4, b"next"),
    ]


def test_over_limit_line_is_skipped_not_buffered() -> None:
    # 64 MiB in one line, streamed from a generator: a reader that held it would peak near that.
    size = 64 << 20

    def chunks() -> Iterator[bytes]:
        yield b'{"a":1}\n'
        for _ in range(size // (1 << 20)):
            yield b"y" * (1 << 20)
        yield b'\n{"b":2}\n'

    source = chunks()

    def read(_n: int) -> bytes:
        return next(source, b"")

    tracemalloc.start()
    try:
        lines = [
            (r.line, r.length, r.data)
            for r in iter_lines(read, chunk_size=1 << 20, limit=MAX_RECORD_BYTES)
        ]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines == [(1, 7, b'{"a":1}'), (2, size, None), (3, 7, b'{"b":2}')]
    assert peak < 3 * MAX_RECORD_BYTES + (1 << 20)


# --- indexing files -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "codes"),
    [
        pytest.param(MAX_RECORD_BYTES, [], id="at-limit-accepted"),
        pytest.param(MAX_RECORD_BYTES + 1, [("RECORD_TOO_LARGE", 3)], id="over-limit-rejected"),
    ],
)
def test_record_limit_is_one_mebibyte_without_lf(
    tmp_path: Path, size: int, codes: list[tuple[str, int]]
) -> None:
    data = jsonl(HEADER, user("m1", None)) + custom_of_size("big", "m1", size) + b"\n"
    data += jsonl(user("m2", "m1"))
    index = open_session(write_session(tmp_path, data)).index
    assert [(str(d.code), d.line) for d in index.diagnostics] == codes
    assert index.default_leaf == "m2"


def test_unterminated_final_record_reported_not_indexed(tmp_path: Path) -> None:
    data = jsonl(HEADER, user("m1", None)) + jsonl(user("m2", "m1"))[:-1]
    index = open_session(write_session(tmp_path, data)).index
    assert [(str(d.code), d.line) for d in index.diagnostics] == [("RECORD_UNTERMINATED", 3)]
    assert index.default_leaf == "m1"
    assert not index.valid


def test_over_limit_unterminated_tail_is_too_large(tmp_path: Path) -> None:
    data = jsonl(HEADER) + b"z" * (MAX_RECORD_BYTES + 1)
    index = open_session(write_session(tmp_path, data)).index
    assert [(str(d.code), d.line) for d in index.diagnostics] == [("RECORD_TOO_LARGE", 2)]


def test_empty_file_is_session_empty(tmp_path: Path) -> None:
    index = open_session(write_session(tmp_path, b"")).index
    assert [d.code for d in index.diagnostics] == [Code.SESSION_EMPTY]


def test_parse_failure_is_reported_with_its_line(tmp_path: Path) -> None:
    data = jsonl(HEADER, user("m1", None)) + b'{"type": \n' + jsonl(user("m2", "m1"))
    index = open_session(write_session(tmp_path, data)).index
    assert [(str(d.code), d.line) for d in index.diagnostics] == [("RECORD_JSON_SYNTAX", 3)]


@pytest.mark.parametrize("chunk_size", [1, 5, 1 << 20], ids=lambda n: f"chunk-{n}")
def test_index_does_not_depend_on_chunk_size(tmp_path: Path, chunk_size: int) -> None:
    data = jsonl(HEADER, user("m1", None), user("m2", "m1", "é" * 50), user("m3", "m1"))
    session = open_session(write_session(tmp_path, data), chunk_size=chunk_size)
    assert [(e.id, e.line, e.offset, e.length) for e in session.index.entries] == [
        (orjson.loads(r.data)["id"], r.line, r.offset, len(r.data))
        for r in split_lines(data)
        if r.line > 1
    ]


def test_read_entry_returns_the_body_by_position(tmp_path: Path) -> None:
    records = [HEADER, user("m1", None, "first"), user("m2", "m1", "second")]
    session = open_session(write_session(tmp_path, jsonl(*records)))
    assert session.read_entry(session.index.by_id["m2"]) == records[2]
    with session.bodies() as load:
        assert [load(e) for e in session.index.entries] == records[1:]


# --- reading never writes -----------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


READS: list[Any] = [
    pytest.param(lambda s: op_validate({"session": s}), id="validate"),
    pytest.param(lambda s: op_context({"session": s}), id="context"),
    pytest.param(lambda s: op_context({"session": s, "leaf": None}), id="context-null"),
    pytest.param(lambda s: op_info({"session": s}), id="info"),
]


@pytest.mark.parametrize("operation", READS)
@pytest.mark.parametrize(
    "tail",
    [pytest.param(b"", id="valid"), pytest.param(b'{"type":"mess', id="torn-tail")],
)
def test_read_never_modifies_file(
    tmp_path: Path, operation: Callable[[str], dict[str, Any]], tail: bytes
) -> None:
    folder = write_session(tmp_path, jsonl(HEADER, user("m1", None)) + tail)
    past = 1_600_000_000_000_000_000
    os.utime(folder / "session.jsonl", ns=(past, past))
    before = snapshot(folder)
    operation(str(folder))
    assert snapshot(folder) == before
    assert sorted(p.name for p in folder.iterdir()) == ["session.jsonl"]
