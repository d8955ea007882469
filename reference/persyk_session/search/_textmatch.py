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
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "COMMON_STABLE",
    "EXCERPT_LIMIT",
    "FOLDS_TO_ASCII",
    "QUERY_LIMIT",
    "TITLE_LIMIT",
    "ByteScreen",
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


# --- the byte screen: a prefilter, never the verdict (SRCH-30) ------------------------------

# Every code point above ASCII whose full case folding holds an ASCII character, with its
# folding: the only way text with no ASCII run equal to an ASCII query can fold into one, once
# the text is known to be in NFC (tests/reference/fast/test_search_screen.py recomputes these tables
# from the Unicode database Python ships).
FOLDS_TO_ASCII: Final = {
    chr(code): chr(code).casefold()
    for code in (
        0xDF, 0x130, 0x149, 0x17F, 0x1F0, 0x1E96, 0x1E97, 0x1E98, 0x1E99, 0x1E9A, 0x1E9E,
        0x212A, 0xFB00, 0xFB01, 0xFB02, 0xFB03, 0xFB04, 0xFB05, 0xFB06,
    )
}
# The characters of combining class 0 that NFC may still compose with the character before
# them (NFC_Quick_Check=Maybe): the second character of a canonical pair, and the Hangul
# vowel and trailing consonant jamo (composed by the algorithm, not the table).
COMPOSES_WITH_PREVIOUS: Final = frozenset(
    [chr(code) for code in (
        0x9BE, 0x9D7, 0xB3E, 0xB56, 0xB57, 0xBBE, 0xBD7, 0xCC2, 0xCD5, 0xCD6, 0xD3E, 0xD57,
        0xDCF, 0xDDF, 0xFB5, 0xFB7, 0x102E, 0x1B35, 0x11127, 0x1133E, 0x11357, 0x114B0,
        0x114BA, 0x114BD, 0x115AF, 0x11930,
    )]
    + [chr(code) for code in range(0x1100, 0x1200)]  # the whole Hangul Jamo block
)
# Ranges of code points that are all stable code points of NFC (:func:`_stable`; recomputed by
# tests/reference/fast/test_search_screen.py): the letters, punctuation, symbols, CJK, kana, Hangul
# syllables and emoji most text above ASCII is made of. Lines whose characters above ASCII all lie
# here need no character-by-character check; any other character takes that check.
COMMON_STABLE: Final = (
    (0xA0, 0x24F), (0x388, 0x3FF), (0x400, 0x482), (0x48A, 0x4FF), (0x2010, 0x2027),
    (0x2030, 0x205E), (0x20A0, 0x20C0), (0x2190, 0x2328), (0x232B, 0x23FF), (0x2500, 0x27BF),
    (0x3000, 0x3029), (0x3030, 0x303F), (0x3041, 0x3096), (0x30A1, 0x30FA), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3), (0xFF01, 0xFF5E), (0x1F300, 0x1FAFF),
)
_OUTSIDE_COMMON_STABLE: Final = re.compile(
    "[^" + "".join(f"{chr(low)}-{chr(high)}" for low, high in COMMON_STABLE) + "]")
# What a JSON escape other than \uXXXX decodes to (RFC 8259 section 7).
_ESCAPED: Final = frozenset('"\\/\b\f\n\r\t')
_ASCII_BYTES: Final = bytes(range(0x80))


@functools.lru_cache(maxsize=4096)
def _stable(char: str) -> bool:
    """A stable code point of NFC (UAX #15): combining class 0, NFC_Quick_Check=Yes, and never
    composed with the character before it. NFC leaves text made only of these as it is, and
    so every piece of it."""
    return (
        not unicodedata.combining(char)
        and unicodedata.normalize("NFC", char) == char
        and char not in COMPOSES_WITH_PREVIOUS
    )


@dataclass(frozen=True, slots=True)
class ByteScreen:
    """Says of whole JSONL lines, from their bytes, whether any JSON string in them *may*
    fold to contain the query; only ``False`` is acted on (the lines' records need not be
    matched one by one), ``True`` sends them through the exact match.

    ``False`` is proved, never guessed, and only for a non-empty ASCII query:

    * an escape may hide any character (``\\u005a`` is ``Z``): lines holding ``\\u`` are
      always matched exactly, and so are lines holding any escape when the query holds a
      character an escape decodes to (otherwise an escape only puts an ASCII character the
      query lacks where the bytes hold two, which splits a match in both or in neither);
    * every character above ASCII in the lines must be a stable code point of NFC: then the
      text, and every string in it, is in NFC already, and folding it is plain case folding,
      character by character;
    * case folding turns an ASCII letter into its lower case and maps just the characters of
      :data:`FOLDS_TO_ASCII` to anything ASCII; with those replaced by their folding, an ASCII
      run of the folded text is an ASCII run of the lower-cased bytes.

    So a query found in none of the lower-cased lines is found in none of their strings.
    """

    needle: bytes | None  # the folded query's bytes; None when it cannot be screened
    escapable: bool  # the query holds a character an escape other than \\u decodes to
    # The FOLDS_TO_ASCII characters whose folding shares a character with the query: only
    # those can take part in a match (any other one, replaced or not, is a character the
    # query lacks), so only those are replaced.
    folds: frozenset[str] = frozenset()

    @classmethod
    def of(cls, query: Query) -> ByteScreen:
        folded = query.folded
        if not folded or not folded.isascii():
            return cls(None, True)
        folds = frozenset(char for char, folding in FOLDS_TO_ASCII.items()
                          if any(c in folded for c in folding))
        return cls(folded.encode(), any(c in _ESCAPED or c < " " for c in folded), folds)

    def may_hold(self, lines: bytes) -> bool:
        needle = self.needle
        if needle is None:
            return True
        if b"\\" in lines and (self.escapable or b"\\u" in lines):
            return True
        if not lines.isascii():
            # The characters above ASCII alone: UTF-8 gives them bytes of 0x80 and more only.
            try:
                above = lines.translate(None, _ASCII_BYTES).decode()
            except UnicodeDecodeError:
                return True  # such a line is no record (REC-3): leave it to the exact path
            # One scan of C for the common case (every character in COMMON_STABLE, none to
            # replace); set() of the characters costs a string per CJK character or emoji.
            if _OUTSIDE_COMMON_STABLE.search(above) or any(c in above for c in self.folds):
                folded = self._folded_above(lines, set(above))
                if folded is None:
                    return True
                lines = folded
        return needle in lines.lower()

    def _folded_above(self, lines: bytes, above: set[str]) -> bytes | None:
        """``lines`` with the characters of :attr:`folds` replaced by their folding; None if
        a character in ``above`` is not a stable code point of NFC."""
        for char in above:
            if not _stable(char):
                return None
            if char in self.folds:
                lines = lines.replace(char.encode(), FOLDS_TO_ASCII[char].encode())
        return lines
