"""The reference's search (SRCH): what the conformance cases cannot set up.

The cases (fixtures/_cases/search_golden.py, search_scenarios.py) check the contract through the
adapter. These tests check what a case cannot express: FIFOs and hard links, files rewritten in
place, forged cursors, the Documents folder per platform, excerpt boundaries over many inputs, the
command line's exit statuses, and real text from the shared corpora.
"""

from __future__ import annotations

import json
import os
import threading
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import regex  # type: ignore[import-untyped]
from _corpora import CORPORA
from hypothesis import given, settings
from hypothesis import strategies as st
from persyk_conformance.records import header, jsonl, label, session_info, text, user
from persyk_session.cli import main
from persyk_session.operations import op_discover, op_open_result, op_search
from persyk_session.search._judge import instant_ns
from persyk_session.search._roots import Root, documents_folder, roots_from_args
from persyk_session.search._textmatch import EXCERPT_LIMIT, TITLE_LIMIT, Query, excerpt, title_piece

DAY1 = "2026-01-01T00:00:00.000Z"


def make(root: Path, name: str, data: bytes) -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "session.jsonl").write_bytes(data)
    return directory


def said(sid: str, words: str, created: str = DAY1) -> bytes:
    return jsonl(header(sid, created), user("m1", None, words))


def codes(result: dict[str, Any]) -> list[str]:
    return [d["code"] for d in result["diagnostics"]]


# --- matching, titles, excerpts (SRCH-29..SRCH-34) -----------------------------------------


@pytest.mark.parametrize(
    ("query", "haystack", "found"),
    [
        ("STRASSE", "Straße", True),
        ("ς", "Σ", True),
        ("cafe\u0301", "caf\u00e9", True),
        ("i", "I", True),
        ("\u0131", "I", False),
        ("K", "\u212a", True),  # KELVIN SIGN folds to k
        (".*", "anything", False),
        ("", "", True),
    ],
    ids=["sharp-s", "sigma", "nfd-nfc", "ascii-i", "dotless-i", "kelvin", "regex-chars", "empty"],
)
def test_query_folds_both_sides(query: str, haystack: str, found: bool) -> None:
    assert Query.of(query).found_in(haystack) is found


def _clusters(value: str) -> list[str]:
    found: list[str] = regex.findall(r"\X", value)
    return found


_PIECES = st.sampled_from(["a", "e\u0301", "\U0001f468\u200d\U0001f469", "\u1100\u1161\u11a8",
                           "x", " ", "\U0001f1e9\U0001f1ea", "\u0915\u094d\u0937"])


@settings(max_examples=150, deadline=None)
@given(before=st.lists(_PIECES, max_size=160), after=st.lists(_PIECES, max_size=160))
def test_excerpt_is_whole_clusters_holding_the_match(before: list[str], after: list[str]) -> None:
    block = "".join(before) + "NEEDLE" + "".join(after)
    piece = excerpt(block, Query.of("needle"))
    assert "NEEDLE" in piece and piece in block
    assert len(piece) <= EXCERPT_LIMIT
    start = block.index(piece) if piece else 0
    # SRCH-34: both ends fall between clusters of the whole block.
    boundaries = {0}
    for cluster in _clusters(block):
        boundaries.add(max(boundaries) + len(cluster))
    assert start in boundaries and start + len(piece) in boundaries


def test_title_is_cut_between_clusters() -> None:
    long = "e\u0301" * 100  # 200 code points, 100 clusters
    assert title_piece(long) == "e\u0301" * (TITLE_LIMIT // 2)
    assert title_piece("short") == "short"


def test_instant_applies_offsets_fractions_and_leap_seconds() -> None:
    assert instant_ns("2026-01-01T10:00:00+02:00") == instant_ns("2026-01-01T08:00:00.000Z")
    assert instant_ns("2026-01-01T00:00:00.000000001Z") - instant_ns(DAY1) == 1
    assert instant_ns("2016-12-31T23:59:60Z") == instant_ns("2017-01-01T00:00:00Z")


# --- roots and the Documents folder (SRCH-20..SRCH-22) -------------------------------------


def test_documents_folder_follows_xdg_on_linux() -> None:
    files = {"/home/u/.config/user-dirs.dirs": 'XDG_DOCUMENTS_DIR="$HOME/Dokumente"\n'}
    assert documents_folder("linux", {"HOME": "/home/u"}, files.get) == "/home/u/Dokumente"
    custom = {"/x/user-dirs.dirs": 'XDG_DOCUMENTS_DIR="/data/docs"\n'}
    assert documents_folder("linux", {"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, custom.get) == (
        "/data/docs")
    assert documents_folder("linux", {"HOME": "/home/u"}, {}.get) == "/home/u/Documents"


def test_documents_folder_on_macos_and_windows() -> None:
    assert documents_folder("darwin", {"HOME": "/Users/u"}, {}.get) == "/Users/u/Documents"
    assert documents_folder("win32", {"USERPROFILE": "C:\\Users\\u"}, {}.get,
                            lambda: "D:\\Docs") == "D:\\Docs"
    assert documents_folder("win32", {"USERPROFILE": "C:\\Users\\u"}, {}.get) == (
        "C:\\Users\\u\\Documents")


def test_roots_from_settings_in_order_without_repeats() -> None:
    roots = roots_from_args({
        "settings": {"sessions": {"directory": "/w", "additionalDirectories": ["/x", "/w/"]}},
    })
    assert roots == (Root("/w", True), Root("/x", True))
    default = roots_from_args({"settings": {}, "mode": "development"},
                              find_documents=lambda: "/docs")
    assert default == (Root("/docs/persyk-dev/sessions", False),)


# --- what a case cannot set up: special files, hard links, in-place rewrites ---------------


def test_fifo_session_file_never_blocks(tmp_path: Path) -> None:
    (tmp_path / "s1").mkdir()
    os.mkfifo(tmp_path / "s1" / "session.jsonl")
    make(tmp_path, "s2", said("s2", "hello"))
    os.mkfifo(tmp_path / "pipe")  # a FIFO child of the root is not a directory: ignored
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.update(
        op_search({"query": "hello", "roots": [str(tmp_path)]})), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "search blocked on a FIFO"
    assert [r["sessionId"] for r in outcome["results"]] == ["s2"]
    assert outcome["diagnostics"] == [
        {"code": "SESSION_UNREADABLE", "location": str(tmp_path / "s1"),
         "message": "SESSION_UNREADABLE: session unreadable"}]


def test_hard_linked_session_files_are_two_sessions(tmp_path: Path) -> None:
    first = make(tmp_path, "a", said("same", "hello"))
    (tmp_path / "b").mkdir()
    os.link(first / "session.jsonl", tmp_path / "b" / "session.jsonl")
    sessions = op_discover({"roots": [str(tmp_path)]})["sessions"]
    assert [(s["location"], s["duplicates"]) for s in sessions] == [
        (str(tmp_path / "a"), [str(tmp_path / "b")]),
        (str(tmp_path / "b"), [str(tmp_path / "a")]),
    ]


def test_session_file_linked_inside_the_root_is_followed(tmp_path: Path) -> None:
    store = make(tmp_path, "store", said("s1", "hello"))
    (tmp_path / "alias").mkdir()
    os.symlink(store / "session.jsonl", tmp_path / "alias" / "session.jsonl")
    result = op_discover({"roots": [str(tmp_path)]})
    assert [s["location"] for s in result["sessions"]] == [
        str(tmp_path / "alias"), str(tmp_path / "store")]


def _one_result(root: Path, query: str = "hello") -> dict[str, Any]:
    results = op_search({"query": query, "roots": [str(root)]})["results"]
    assert len(results) == 1
    result: dict[str, Any] = results[0]
    return result


def test_leaf_rewritten_in_place_is_stale(tmp_path: Path) -> None:
    directory = make(tmp_path, "s1", said("s1", "hello"))
    result = _one_result(tmp_path)
    file = directory / "session.jsonl"
    data = file.read_bytes()
    with open(file, "r+b") as f:  # same inode, same size, another leaf record
        f.write(data.replace(b"hello", b"HELLO"))
    assert op_open_result({"result": result}) == {"error": {
        "code": "RESULT_STALE",
        "message": "RESULT_STALE: the pinned session was replaced, deleted or rewritten"}}


def test_session_broken_after_search_fails_with_its_first_error(tmp_path: Path) -> None:
    directory = make(tmp_path, "s1", said("s1", "hello"))
    result = _one_result(tmp_path)
    with open(directory / "session.jsonl", "ab") as f:
        f.write(b"{not json}\n")
    opened = op_open_result({"result": result})
    assert opened["error"]["code"] == "RECORD_JSON_SYNTAX" and opened["error"]["line"] == 3


def test_tampered_cursor_is_refused(tmp_path: Path) -> None:
    for i in range(3):
        make(tmp_path, f"s{i}", said(f"s{i}", "hello"))
    page = op_search({"query": "hello", "roots": [str(tmp_path)], "limit": 1})
    cursor = page["nextCursor"]
    for forged in (cursor + "!", cursor[:-2], cursor.upper()):
        refused = op_search({"query": "hello", "roots": [str(tmp_path)], "cursor": forged})
        assert refused["error"]["code"] == "SEARCH_CURSOR_INVALID"


def test_diagnostics_carry_no_session_text(tmp_path: Path) -> None:
    make(tmp_path, "s1", jsonl(header("s1", DAY1), user("m1", None, "persyk-canary-search"))
         + b'{"type":"message","id":"m2","parentId":"m1","secret":"persyk-canary-search"}\n')
    result = op_search({"query": "persyk", "roots": [str(tmp_path)]})
    assert result["results"] == []
    assert "persyk-canary" not in json.dumps(result["diagnostics"])
    assert codes(result) == ["SESSION_INVALID"]


def test_labels_and_names_are_current_values(tmp_path: Path) -> None:
    make(tmp_path, "s1", jsonl(
        header("s1", DAY1), user("m1", None, [text("a"), text("b")]),
        label("l1", "m1", "m1", "tagged"), session_info("i1", "l1", name="named"),
    ))
    found = _one_result(tmp_path, "TAGGED")
    assert found["matched"] == ["label"] and found["title"] == "named"


# --- the command line (DIAG-7 for the search commands) --------------------------------------


def test_cli_exit_statuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make(tmp_path / "root", "s1", said("s1", "hello"))
    root = str(tmp_path / "root")
    assert main(["discover", "--root", root, "--root", str(tmp_path / "gone")]) == 0
    assert "ROOT_MISSING" in capsys.readouterr().err
    assert main(["search", "hello", "--root", "relative"]) == 1
    assert main(["discover", "--config", str(tmp_path / "none.json")]) == 2
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"sessions": {"directory": root}}))
    capsys.readouterr()
    assert main(["search", "HELLO", "--config", str(config), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["results"][0]
    assert main(["open-result", json.dumps(result)]) == 0
    capsys.readouterr()
    (tmp_path / "root" / "s1" / "session.jsonl").unlink()
    assert main(["open-result", json.dumps(result)]) == 1
    assert main(["search", "x", "--root", root, "--limit", "0"]) == 2


# --- real text from the shared corpora (used in place) --------------------------------------


def _corpus_texts(limit: int) -> list[str]:
    texts: list[str] = []
    for file in sorted((CORPORA / "pi-sessions").glob("*.jsonl")):
        with open(file, "rb") as f:
            for raw in f:
                try:
                    value = json.loads(raw)
                except ValueError:
                    continue
                stack = [value]
                while stack and len(texts) < limit:
                    node = stack.pop()
                    if isinstance(node, dict):
                        stack.extend(node.values())
                    elif isinstance(node, list):
                        stack.extend(node)
                    elif isinstance(node, str) and len(node) > 40 and "\x00" not in node:
                        texts.append(node)
                if len(texts) >= limit:
                    return texts
    return texts


@pytest.mark.skipif(not (CORPORA / "pi-sessions").is_dir(),
                    reason=f"the shared corpora are not at {CORPORA}")
def test_real_text_is_found_with_an_excerpt_of_stored_clusters(tmp_path: Path) -> None:
    texts = _corpus_texts(60)
    assert len(texts) >= 20
    for i, words in enumerate(texts):
        make(tmp_path, f"s{i:03d}", said(f"s{i:03d}", words))
    for i, words in enumerate(texts[:20]):
        middle = words[len(words) // 2 : len(words) // 2 + 12]
        if not middle.strip():
            continue
        page = op_search({"query": middle.upper(), "roots": [str(tmp_path)], "limit": 100})
        found = {r["sessionId"]: r for r in page["results"]}
        assert f"s{i:03d}" in found
        piece = found[f"s{i:03d}"]["excerpt"]
        assert piece in words and len(piece) <= EXCERPT_LIMIT
        assert Query.of(middle).found_in(unicodedata.normalize("NFC", piece))
