"""The byte screen of search (SRCH-30): a prefilter that may only ever say "cannot match" when
no string of the lines can fold to contain the query, whatever escapes, normalization or case
folding do. Each case below is a way the bytes alone would lie."""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from persyk_conformance.records import header, jsonl, text, user
from persyk_session.operations import op_search
from persyk_session.search import _discovery
from persyk_session.search._textmatch import (
    COMMON_STABLE,
    COMPOSES_WITH_PREVIOUS,
    FOLDS_TO_ASCII,
    ByteScreen,
    Query,
)


def _line(value: str, *, ascii_only: bool = False) -> bytes:
    record = {"type": "message", "message": {"content": [{"type": "text", "text": value}]}}
    return json.dumps(record, ensure_ascii=ascii_only).encode() + b"\n"


def _code_points() -> list[str]:
    return [chr(c) for c in range(0x80, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def test_folds_to_ascii_lists_every_character_whose_folding_holds_ascii() -> None:
    expected = {c for c in _code_points() if any(ord(f) < 0x80 for f in c.casefold())}
    assert set(FOLDS_TO_ASCII) == expected


def test_composes_with_previous_holds_every_second_character_of_class_zero() -> None:
    seconds = set()
    for c in _code_points():
        parts = unicodedata.decomposition(c).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            second = chr(int(parts[1], 16))
            assert ord(second) >= 0x80  # no composition ever ends in an ASCII character
            if not unicodedata.combining(second):
                seconds.add(second)
    hangul_vowels_and_trailers = {chr(c) for c in [*range(0x1161, 0x1176), *range(0x11A8, 0x11C3)]}
    assert seconds | hangul_vowels_and_trailers <= COMPOSES_WITH_PREVIOUS


@pytest.mark.parametrize(("low", "high"), COMMON_STABLE,
                         ids=[f"U+{low:04X}..U+{high:04X}" for low, high in COMMON_STABLE])
def test_common_stable_ranges_hold_only_stable_code_points_of_nfc(low: int, high: int) -> None:
    # The screen's one-scan check trusts these ranges as the per-character check would.
    unstable = [
        f"U+{c:04X}" for c in range(low, high + 1)
        if unicodedata.combining(chr(c)) or unicodedata.normalize("NFC", chr(c)) != chr(c)
        or chr(c) in COMPOSES_WITH_PREVIOUS
    ]
    assert unstable == []


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("zebracorn", "\\u005aebracorn"),  # an escaped letter
        ("zebracorn", "zebr\\u0061corn"),
        ("a/b", "a\\/b"),  # an escape the query holds the result of
        ('say "hi"', 'say \\"hi\\"'),
        ("strasse", "Stra\u00dfe"),  # folds to ss
        ("k", "\u212a"),  # KELVIN SIGN: NFC gives K, folding k
        (";", "a\u037eb"),  # GREEK QUESTION MARK: NFC gives ;
        ("i", "\u0130"),  # folds to i + U+0307
        ("office", "o\ufb03ce"),  # the ffi ligature folds to ffi
        ("strasse", "caf\u00e9 Stra\u00dfe \u6771\u4eac"),  # folds to ss, beside common ones
        ("song", "\u017fong \u00e9"),  # LONG S (in COMMON_STABLE) folds to s
        ("k", "caf\u00e9 \u212a \U0001f3a7"),  # KELVIN beside common characters
    ],
    ids=["escaped-first-letter", "escaped-inner-letter", "escaped-solidus", "escaped-quote",
         "sharp-s", "kelvin", "greek-question-mark", "dotted-capital-i", "ligature",
         "sharp-s-among-common", "long-s-among-common", "kelvin-among-common"],
)
def test_screen_never_clears_a_line_whose_text_folds_to_the_query(
    query: str, stored: str
) -> None:
    line = b'{"type":"message","text":"' + stored.encode() + b'"}\n'
    value = json.loads(line)["text"]
    assert Query.of(query).found_in(value)
    assert ByteScreen.of(Query.of(query)).may_hold(line)


@pytest.mark.parametrize(
    "stored",
    ["nothing here", "caf\u00e9 Gr\u00fc\u00dfe \u6771\u4eac \U0001f3a7", "line\\nbreak"],
    ids=["ascii", "stable-non-ascii", "escaped-newline"],
)
def test_screen_clears_lines_that_cannot_match(stored: str) -> None:
    line = b'{"text":"' + stored.encode() + b'"}\n'
    assert not ByteScreen.of(Query.of("zebracorn")).may_hold(line)


def test_non_ascii_and_empty_queries_are_never_screened() -> None:
    for query in ("gr\u00fc\u00dfe", ""):
        assert ByteScreen.of(Query.of(query)).may_hold(b'{"text":"x"}\n')


_ALPHABET = st.sampled_from([
    "a", "b", "k", "K", "s", "S", "i", "f", "/", '"', "\\", "\n", ";", " ",
    "\u00df", "\u017f", "\u212a", "\u0130", "\ufb00", "\u037e", "\u00e9", "e\u0301", "\u0301",
    "\u0327", "\u1100", "\u1161", "\u09be", "\u09c7", "\u6771", "\U0001f3a7",
])
_QUERIES = st.sampled_from(["ss", "k", "ks", ";", "ab", "s/", 'a"', "fi", "i", "e", "sk"])


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(_ALPHABET, max_size=12), query=_QUERIES, ascii_only=st.booleans())
def test_screen_cleared_lines_never_match(pieces: list[str], query: str, ascii_only: bool) -> None:
    value = "".join(pieces)
    if not ByteScreen.of(Query.of(query)).may_hold(_line(value, ascii_only=ascii_only)):
        assert not Query.of(query).found_in(value)


# --- through the search ------------------------------------------------------------------


def _session(root: Path, name: str, value: str) -> None:
    (root / name).mkdir()
    body = jsonl(header(name), user("m1", None, [text("padding " * 20), text(value)]))
    (root / name / "session.jsonl").write_bytes(body)


def test_search_finds_matches_only_an_escape_or_folding_reveals(tmp_path: Path) -> None:
    _session(tmp_path, "plain", "no such word")
    (tmp_path / "escaped").mkdir()
    escaped = jsonl(header("escaped"), user("m1", None, "x")).replace(
        b'"text":"x"', b'"text":"the \\u005aEBRACORN"')
    (tmp_path / "escaped" / "session.jsonl").write_bytes(escaped)
    _session(tmp_path, "ligature", "ze\u00dfbracorn zebra\ufb03corn")  # neither
    result = op_search({"query": "zebracorn", "roots": [str(tmp_path)]})
    assert [r["sessionId"] for r in result["results"]] == ["escaped"]
    found = op_search({"query": "zebraffIcorn", "roots": [str(tmp_path)]})
    assert [r["sessionId"] for r in found["results"]] == ["ligature"]


@pytest.mark.parametrize("chunk", [3, 40, 97, 1 << 20], ids=["3", "40", "97", "1MiB"])
def test_search_results_do_not_depend_on_where_reads_cut_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    for i in range(6):
        _session(tmp_path, f"s{i}", "the zebracorn" if i % 2 else "a zebra, a unicorn")
    monkeypatch.setattr(_discovery, "SCAN_CHUNK", chunk)
    result = op_search({"query": "zebracorn", "roots": [str(tmp_path)]})
    assert sorted(r["sessionId"] for r in result["results"]) == ["s1", "s3", "s5"]
    assert all(r["excerpt"] == "the zebracorn" for r in result["results"])
