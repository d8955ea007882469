"""Hypothesis strategies for search probes: a root of a few sessions and a query
(docs/implementers/strategies.md, "What is compared").

Each session is a header and a short conversation: user and assistant messages, perhaps a
session name (SRCH-33), a label (SRCH-32), a custom message, a removed message and a sibling
branch (SRCH-12, SRCH-13: neither is searched). What the contract fixes of a search must not
depend on a SHOULD, so the searched text is drawn from ASCII and from characters without case
(CJK, emoji with modifiers and flags, arrows): on these, ASCII case-insensitivity (SRCH-10, a
MUST) and full Unicode case folding (SRCH-30, a SHOULD) match alike. Directory names hold what
orders differently by code point, by UTF-16 unit, by locale and by case (SRCH-26, SRCH-35), and
header timestamps repeat the same instant in other spellings (SRCH-35: an instant, then the
location), so ties are common. A query is a piece of one searched string with its ASCII case
changed, a string of the same alphabet, or empty (every valid session, SRCH-29).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

__all__ = ["SearchRoot", "queries", "search_roots"]

# Directory names: code-point order B < Z < a < b < e < U+00E9 < U+FF3A < U+1F600, which a
# UTF-16 comparison (U+1F600 before U+FF3A), a locale collation (B beside b, U+00E9 beside e)
# and a case-blind one all break.
NAMES = ("B", "a", "b", "e", "é", "\uff3a", "\U0001f600", "a-1", "Z")
# The same instant spelt three ways, and a later one (SRCH-35: compared as instants).
CREATED = ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000Z", "2026-01-01T01:00:00+01:00",
           "2026-01-02T00:00:00Z")
# Pieces of searched text: ASCII in both cases, characters SRCH-29 takes literally, and
# characters without case, among them clusters of several code points (SRCH-33, SRCH-34).
PIECES = ("hello", "World", "FOO", "bar", "a", "B", " ", ".", "*", "?", "x1", "\u4e2d\u6587",
          "\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f1eb\U0001f1f7", "\u2192")
_T0 = 1767225600000  # 2026-01-01T00:00:00Z in epoch ms


@dataclass(frozen=True, slots=True)
class SearchRoot:
    """A root's sessions (directory name, ``session.jsonl`` bytes) and the strings a query
    may be cut from (names, labels and text blocks of every session, searched or not)."""

    sessions: tuple[tuple[str, bytes], ...]
    strings: tuple[str, ...]


@st.composite
def _text(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8))
    text = "".join(pieces)
    if draw(st.integers(0, 4)) == 0:  # past 80 and 200 code points: titles and excerpts cut
        text = text * draw(st.integers(20, 60))
    return text


def _message(entry_id: str, parent: str | None, role: str, text: str, n: int) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}],
                        "timestamp": _T0 + n * 1000}}


def _entry(kind: str, entry_id: str, parent: str | None, n: int, value: str,
           target: str | None) -> dict[str, Any]:
    base = {"id": entry_id, "parentId": parent, "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z"}
    if kind == "name":
        return {"type": "session_info", **base, "name": value}
    if kind == "label":
        return {"type": "label", **base, "targetId": target, "label": value}
    if kind == "removed":
        return {"type": "message.removed", **base, "targetId": target}
    return {"type": "custom_message", **base, "customType": "note",
            "content": [{"type": "text", "text": value}], "display": False}


@st.composite
def _session(draw: st.DrawFn, session_id: str) -> tuple[bytes, list[str]]:
    header = {"type": "session", "version": 1, "id": session_id,
              "timestamp": draw(st.sampled_from(CREATED))}
    records: list[dict[str, Any]] = [header]
    strings: list[str] = []
    chain: list[str] = []  # the messages and removals on the path to the last entry
    removable: set[str] = set()  # messages on no removal's target yet (TREE-5..TREE-7)
    for n in range(1, draw(st.integers(0, 6)) + 1):
        kind = draw(st.sampled_from(["user", "assistant", "user", "name", "label", "custom",
                                     "removed", "branch"]))
        value = draw(_text())
        parent = chain[-1] if chain else None
        entry_id = f"e{n}"
        if kind in ("user", "assistant") or (kind in ("removed", "branch") and not chain):
            entry = _message(entry_id, parent, "assistant" if kind == "assistant" else "user",
                             value, n)
            chain.append(entry_id)
            removable.add(entry_id)
        elif kind == "branch":  # a sibling of the last one: the path goes on from here
            entry = _message(entry_id, chain[-2] if len(chain) > 1 else None, "user", value, n)
            removable.discard(chain[-1])  # off the path now: no removal may target it
            chain[-1:] = [entry_id]
            removable.add(entry_id)
        else:
            targets = [e for e in chain if e in removable] if kind == "removed" else chain
            target = draw(st.sampled_from(targets)) if targets else None
            if target is None:
                kind = "name" if kind in ("label", "removed") else kind
            entry = _entry(kind, entry_id, parent, n, value, target)
            if kind == "removed":
                chain.append(entry_id)
                removable.discard(target or "")
        records.append(entry)
        strings.append(value)
    data = b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
                    for r in records)
    return data, strings


@st.composite
def search_roots(draw: st.DrawFn) -> SearchRoot:
    """One root of one to five sessions; two may share a header id (SRCH-9, SRCH-27), and one
    may end in a line that is no JSON (SESSION_INVALID, SRCH-19)."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True))
    sessions, strings = [], []
    for index, name in enumerate(names):
        session_id = "shared" if index and draw(st.integers(0, 4)) == 4 else f"s{index}"
        data, texts = draw(_session(session_id))
        if draw(st.integers(0, 9)) == 9:  # shrinks towards a valid session
            data += b'{"type":\n'  # RECORD_JSON_SYNTAX on the last line
        sessions.append((name, data))
        strings += texts
    return SearchRoot(tuple(sessions), tuple(strings))


def _flip_ascii_case(draw: st.DrawFn, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.swapcase() if flip and c.isascii() else c for c, flip in zip(text, flips,
                                                                                  strict=True))


@st.composite
def queries(draw: st.DrawFn, root: SearchRoot) -> str:
    """A piece of a searched string with its ASCII case changed, a drawn string, or empty."""
    how = draw(st.sampled_from(["piece", "piece", "drawn", "empty"]))
    if how == "piece" and root.strings:
        text = draw(st.sampled_from(root.strings))
        start = draw(st.integers(0, max(len(text) - 1, 0)))
        end = draw(st.integers(start + 1, min(len(text), start + 12)))
        return _flip_ascii_case(draw, text[start:end])[:256]
    if how == "drawn":
        return "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3)))
    return ""
