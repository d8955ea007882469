"""Search's text tap on the block lane (SRCH-12, SRCH-13, SRCH-31, SRCH-38).

A block of plain message entries the fast engine proved whole (fast/_messages_block.py) is
committed without its records (fast/_tapped_blocks.py); if the byte screen did not clear its
bytes, it is matched from those bytes: each line the screen cannot
clear alone is parsed and matched, the others are not parsed at all. The page must be the page
of the per-record path (every line through ``add_record`` and the tap), pins included.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.records import assistant, header, jsonl, text, user
from persyk_session.fast import FAST_ENGINE, _lanes
from persyk_session.operations import _search, op_search
from persyk_session.read._engine import READABLE_ENGINE


@pytest.fixture(autouse=True)
def fast_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    # The block lane is the fast engine's, whatever mode this run chose.
    monkeypatch.setattr(_search, "chosen_engine", lambda: FAST_ENGINE)

QUERY = "ZebraCorn"
PADDING = "caf\u00e9 Gr\u00fc\u00dfe \u6771\u4eac \U0001f3a7 nothing to find here"


def _chain(sid: str, words: list[Any]) -> bytes:
    """A linear session of plain messages, one per item of ``words`` (a string is a user
    text, a list an assistant's content)."""
    records: list[Any] = [header(sid)]
    parent = None
    for i, item in enumerate(words):
        if isinstance(item, str):
            records.append(user(f"m{i}", parent, [text(PADDING), text(item)], t=i))
        else:
            records.append(assistant(f"m{i}", parent, item, t=i))
        parent = f"m{i}"
    return jsonl(*records)


SESSIONS = {
    # One match in the middle: the pin is still the last record's.
    "s-middle": [PADDING, PADDING, "the zebracorn ran", PADDING, PADDING],
    # SRCH-13: thinking and tool calls never match, even inside a block the screen holds.
    "s-thinking": [PADDING, [{"type": "thinking", "thinking": "a zebracorn"},
                             {"type": "toolCall", "id": "c1", "name": "find",
                              "arguments": {"q": "zebracorn"}}], PADDING],
    # Matches in two records, the last one last: the first surviving one gives the excerpt.
    "s-two": [PADDING, "ZEBRACORN first", PADDING, "zebracorn again"],
    "s-none": [PADDING, PADDING, PADDING],
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for sid, words in SESSIONS.items():
        (tmp_path / sid).mkdir()
        (tmp_path / sid / "session.jsonl").write_bytes(_chain(sid, words))
    return tmp_path


def _page(root: Path) -> dict[str, Any]:
    return op_search({"query": QUERY, "roots": [str(root)]})


def test_block_tap_gives_the_page_of_the_per_record_path(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tapped = _page(root)
    assert sorted(r["sessionId"] for r in tapped["results"]) == ["s-middle", "s-two"]
    # Every line through add_record and the tap.
    per_record = dataclasses.replace(FAST_ENGINE, feed_lines=READABLE_ENGINE.feed_lines)
    monkeypatch.setattr(_search, "chosen_engine", lambda: per_record)
    assert _page(root) == tapped


def test_block_tap_parses_only_the_lines_the_screen_cannot_clear(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[int] = []

    def counting(data: bytes, *, line: int) -> dict[str, Any]:
        parsed.append(line)
        return FAST_ENGINE.parse_record(data, line=line)

    counting_engine = dataclasses.replace(FAST_ENGINE, parse_record=counting)
    monkeypatch.setattr(_search, "chosen_engine", lambda: counting_engine)
    committed: list[int] = []
    real_commit = _lanes.add_plain_messages

    def counting_commit(builder: Any, ids: list[str], *args: Any, **kwargs: Any) -> bool:
        taken = real_commit(builder, ids, *args, **kwargs)
        committed.append(len(ids) if taken else 0)
        return taken

    monkeypatch.setattr(_lanes, "add_plain_messages", counting_commit)
    _page(root)
    # Every session's entries went through the block lane (the tap had them all)...
    assert sorted(committed) == sorted(len(words) for words in SESSIONS.values())
    # ...and of the entries (the headers, line 1, are parsed by discovery and the scan) only
    # the lines holding the query's letters were parsed: m2 of s-middle, m1 of s-thinking (its
    # strings do, though no text block), m1 and m3 of s-two (line = m + 2).
    assert sorted(line for line in parsed if line > 1) == [3, 3, 4, 5]
