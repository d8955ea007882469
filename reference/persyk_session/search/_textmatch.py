"""Literal, case-insensitive matching, titles and excerpts (no I/O).

SRCH-10, SRCH-29: the query is literal text, never a pattern. SRCH-11, SRCH-30: both sides are
compared after NFC normalization and full Unicode case folding (``str.casefold``:
CaseFolding.txt C+F, no Turkic mappings), so ``ß`` finds ``SS`` and a decomposed ``é`` finds a
precomposed one. SRCH-31: each searched string is matched alone. SRCH-33, SRCH-34: titles and
excerpts are pieces of the stored text cut on extended grapheme cluster boundaries (UAX #29,
the ``regex`` module's ``\\X``).
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "EXCERPT_LIMIT",
    "QUERY_LIMIT",
    "TITLE_LIMIT",
    "Query",
    "excerpt",
    "fold",
    "is_blank",
    "title_piece",
]

QUERY_LIMIT: Final = 256  # SRCH-29, in code points
EXCERPT_LIMIT: Final = 200  # SRCH-34
TITLE_LIMIT: Final = 80  # SRCH-33


@functools.cache
def _cluster_pattern() -> Any:
    """UAX #29 extended grapheme clusters (``\\X``), compiled on first use: discovery and the
    other commands never load ``regex``."""
    import regex  # type: ignore[import-untyped]  # no stubs

    return regex.compile(r"\X")


def fold(text: str) -> str:
    """SRCH-30: NFC, then full case folding. ASCII needs neither step beyond lower-casing."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFC", text).casefold()


@dataclass(frozen=True, slots=True)
class Query:
    """A search query: the text as given and its folded form (SRCH-29, SRCH-30)."""

    text: str
    folded: str

    @classmethod
    def of(cls, text: str) -> Query:
        return cls(text, fold(text))

    @property
    def empty(self) -> bool:
        # SRCH-29: every string contains the empty query, so it matches every valid session.
        return not self.text

    def found_in(self, text: str) -> bool:
        # SRCH-31: one searched string at a time; nothing is joined before matching.
        return self.folded in fold(text)


def is_blank(text: str) -> bool:
    """Only white space (or nothing): such a block never becomes a title (SRCH-33)."""
    return not text or text.isspace()


def _clusters(text: str) -> list[str]:
    clusters: list[str] = _cluster_pattern().findall(text)
    return clusters


def _prefix(clusters: list[str], start: int, limit: int) -> tuple[int, int]:
    """The end index and size of the longest run of whole clusters from ``start``."""
    end, size = start, 0
    while end < len(clusters) and size + len(clusters[end]) <= limit:
        size += len(clusters[end])
        end += 1
    return end, size


def title_piece(text: str) -> str:
    """SRCH-33: the longest prefix of whole clusters of at most TITLE_LIMIT code points."""
    if len(text) <= TITLE_LIMIT:
        return text
    clusters = _clusters(text)
    end, _ = _prefix(clusters, 0, TITLE_LIMIT)
    return "".join(clusters[:end])


def excerpt(text: str, query: Query) -> str:
    """SRCH-34: a piece of ``text`` (a block the query matched), as stored.

    A block of at most EXCERPT_LIMIT code points is its own excerpt. Otherwise the first match
    is located cluster by cluster (each cluster folded alone, so a match maps back to whole
    clusters of the stored text) and the window grows from it: some context before, then as
    much after as fits, then before again.
    """
    if len(text) <= EXCERPT_LIMIT:
        return text
    clusters = _clusters(text)
    first, last = _match_clusters(clusters, query)
    match_size = sum(len(c) for c in clusters[first : last + 1])
    if match_size >= EXCERPT_LIMIT:
        end, _ = _prefix(clusters, first, EXCERPT_LIMIT)
        return "".join(clusters[first : max(end, first)])
    start, size = last + 1, match_size
    # Up to a quarter of the window before the match, so the reader sees where it starts.
    before = (EXCERPT_LIMIT - match_size) // 4
    while first > 0 and len(clusters[first - 1]) <= before:
        first -= 1
        before -= len(clusters[first])
        size += len(clusters[first])
    end = start
    while end < len(clusters) and size + len(clusters[end]) <= EXCERPT_LIMIT:
        size += len(clusters[end])
        end += 1
    while first > 0 and size + len(clusters[first - 1]) <= EXCERPT_LIMIT:
        first -= 1
        size += len(clusters[first])
    return "".join(clusters[first:end])


def _match_clusters(clusters: list[str], query: Query) -> tuple[int, int]:
    """The first and last cluster index covering the first match (the first cluster when the
    cluster-wise folding finds no match, which only a query spanning a cluster oddly can do)."""
    folded = [fold(c) for c in clusters]
    joined = "".join(folded)
    at = joined.find(query.folded)
    if at < 0 or not query.folded:
        return 0, 0
    stop = at + len(query.folded)
    first = last = -1
    position = 0
    for index, piece in enumerate(folded):
        following = position + len(piece)
        if first < 0 and following > at:
            first = index
        if following >= stop:
            last = index
            break
        position = following
    return first, max(last, first)
