"""Paged reads: CTX-24 (bounded pages, opaque cursors), CTX-19 (reading writes nothing)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
from _writes import append, chain, header_line, line, new_session, user, write_session
from persyk_session import Code, ContractError, UsageError
from persyk_session.read._paging import MAX_PAGE_SIZE, encode_cursor, read_page
from persyk_session.write._append import create_session


def _all_pages(directory: Path, page_size: int) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = read_page(directory, page_size, cursor)
        pages.append([entry["id"] for entry in page.entries])
        cursor = page.next_cursor
        if cursor is None:
            return pages


@pytest.mark.parametrize(
    ("count", "size", "expected"),
    [
        (5, 2, [["m0", "m1"], ["m2", "m3"], ["m4"]]),
        (4, 2, [["m0", "m1"], ["m2", "m3"]]),
        (3, 1000, [["m0", "m1", "m2"]]),
        (0, 3, [[]]),
        (1, 1, [["m0"]]),
    ],
    ids=["uneven", "even-last-page-has-null-cursor", "one-page", "header-only", "size-1"],
)
def test_pages_cover_every_entry_in_file_order(
    tmp_path: Path, count: int, size: int, expected: list[list[str]]
) -> None:
    new_session(tmp_path / "s", *chain("m", count))
    assert _all_pages(tmp_path / "s", size) == expected


def test_page_entries_are_the_stored_records(tmp_path: Path) -> None:
    records = chain("m", 3)
    new_session(tmp_path / "s", *records)
    assert list(read_page(tmp_path / "s", 10).entries) == records


def test_cursor_survives_later_appends(tmp_path: Path) -> None:
    new_session(tmp_path / "s", *chain("m", 3))
    first = read_page(tmp_path / "s", 2)
    append(tmp_path / "s", [user("m3", "m2")])
    second = read_page(tmp_path / "s", 2, first.next_cursor)
    assert [e["id"] for e in second.entries] == ["m2", "m3"]


@pytest.mark.parametrize(
    "cursor",
    ["", "not base64 !", "AAAA", encode_cursor(0, "0" * 16), encode_cursor(5, "f" * 16)],
    ids=["empty", "garbage", "wrong-shape", "other-session", "not-an-entry-start"],
)
def test_foreign_or_malformed_cursor_is_invalid(tmp_path: Path, cursor: str) -> None:
    new_session(tmp_path / "s", *chain("m", 3))
    with pytest.raises(ContractError) as caught:
        read_page(tmp_path / "s", 2, cursor)
    assert caught.value.code is Code.CURSOR_INVALID


@pytest.mark.parametrize(
    "spoil",
    # Each spoiler adds a multiple of 4 characters that a lenient base64 decoder ignores.
    [lambda c: c + "!!!!", lambda c: c + "====", lambda c: c[:4] + "\n\n\n\n" + c[4:]],
    ids=["junk-appended", "extra-padding", "newlines-inside"],
)
def test_altered_spelling_of_a_valid_cursor_is_invalid(
    tmp_path: Path, spoil: Callable[[str], str]
) -> None:
    new_session(tmp_path / "s", *chain("m", 3))
    valid = read_page(tmp_path / "s", 1).next_cursor
    assert valid is not None
    with pytest.raises(ContractError) as caught:
        read_page(tmp_path / "s", 1, spoil(valid))
    assert caught.value.code is Code.CURSOR_INVALID


def test_cursor_of_another_session_is_invalid(tmp_path: Path) -> None:
    new_session(tmp_path / "a", *chain("m", 3))
    create_session(tmp_path / "b", id="another")
    append(tmp_path / "b", chain("m", 3))
    cursor = read_page(tmp_path / "a", 1).next_cursor
    with pytest.raises(ContractError) as caught:
        read_page(tmp_path / "b", 1, cursor)
    assert caught.value.code is Code.CURSOR_INVALID


def test_cursor_pointing_inside_a_record_is_invalid(tmp_path: Path) -> None:
    new_session(tmp_path / "s", *chain("m", 3))
    valid = read_page(tmp_path / "s", 1).next_cursor
    assert valid is not None
    body = base64.urlsafe_b64decode(valid + "=" * (-len(valid) % 4)).decode()
    offset, fingerprint = body.split(".")
    with pytest.raises(ContractError) as caught:
        read_page(tmp_path / "s", 1, encode_cursor(int(offset) + 1, fingerprint))
    assert caught.value.code is Code.CURSOR_INVALID


@pytest.mark.parametrize("size", [0, -1, MAX_PAGE_SIZE + 1], ids=["zero", "negative", "1001"])
def test_page_size_out_of_bounds_is_a_usage_error(tmp_path: Path, size: int) -> None:
    new_session(tmp_path / "s")
    with pytest.raises(UsageError):
        read_page(tmp_path / "s", size)


def test_invalid_session_fails_with_its_first_error(tmp_path: Path) -> None:
    data = header_line() + line(user("m0", None)) + b"broken\n"
    write_session(tmp_path / "s", data)
    with pytest.raises(ContractError) as caught:
        read_page(tmp_path / "s", 10)
    assert caught.value.code is Code.RECORD_JSON_SYNTAX
    assert caught.value.diagnostics[0].line == 3


def test_reading_pages_writes_nothing(tmp_path: Path) -> None:
    file = new_session(tmp_path / "s", *chain("m", 3))
    before = file.read_bytes()
    names = sorted(p.name for p in (tmp_path / "s").iterdir())
    _all_pages(tmp_path / "s", 1)
    assert file.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == names
