"""Mistakes of search: containment, order, excerpt windows and pins (SRCH-24, SRCH-34,
SRCH-35, SRCH-39), each a function of the reference replaced (``unittest.mock``)."""

from __future__ import annotations

import builtins
import os
import unicodedata
from collections.abc import Callable, Sized
from typing import Any
from unittest import mock

from persyk_session.search import _discovery, _judge, _textmatch

from ._model import Mistake, patching


def _starts_with_root(root: str, path: str) -> bool:
    # SRCH-24 done as a string prefix: /roots/a2/s9 "starts with" /roots/a.
    return path.startswith(root.rstrip(os.sep))


class _Collated(str):
    """A location compared by ``key`` in place of code points."""

    key: Callable[[str], Any]

    def __lt__(self, other: object) -> bool:
        return bool(self.key(str(self)) < self.key(str(other)))

    def __gt__(self, other: object) -> bool:
        return bool(self.key(str(self)) > self.key(str(other)))

    def __le__(self, other: object) -> bool:
        return not self > other

    def __ge__(self, other: object) -> bool:
        return not self < other

    __hash__ = str.__hash__


def _locale_key(text: str) -> list[tuple[int, str]]:
    """Roughly localeCompare: symbols before letters, accents and case second, U+FFFD last."""
    key = []
    for char in text:
        if char == "\ufffd":
            key.append((3, char))
        elif unicodedata.category(char).startswith("S"):
            key.append((0, char))
        else:
            base = unicodedata.normalize("NFD", char)[0].casefold()
            key.append((2 if base.isalpha() else 1, base))
    return key


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be")


def _ordered_by(key: Callable[[str], Any]) -> Callable[[], Any]:
    collated = type("Collated", (_Collated,), {"key": staticmethod(key)})
    original = _judge.SortKey.of

    def of(created: str, location: str) -> _judge.SortKey:
        plain = original(created, location)
        return _judge.SortKey(plain.newer, collated(location))

    return lambda: mock.patch.object(_judge.SortKey, "of", staticmethod(of))


def _utf16_length(value: Sized) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-16-le")) // 2
    return builtins.len(value)


def _same_leaf_digest(record: bytes) -> str:
    return "0" * 32


MISTAKES: tuple[Mistake, ...] = (
    Mistake("js-root-starts-with", "JavaScript",
            "a link's target is inside the root when its path startsWith the root's: a sibling "
            "/roots/a2 passes for /roots/a", patching(
                lambda: mock.patch.object(_discovery, "_inside", _starts_with_root)),
            breaks=("SRCH-24",)),
    Mistake("js-locale-compare-locations", "JavaScript",
            "locations of results created at the same instant compared with localeCompare",
            patching(_ordered_by(_locale_key)), breaks=("SRCH-35",)),
    Mistake("js-utf16-order-locations", "JavaScript",
            "locations compared as JavaScript strings: UTF-16 code units, not code points",
            patching(_ordered_by(_utf16_key)), breaks=("SRCH-35",)),
    Mistake("js-excerpt-in-utf16-units", "JavaScript",
            "excerpt and title limits measured with string length (UTF-16 code units)",
            patching(lambda: mock.patch.object(_textmatch, "len", _utf16_length, create=True)),
            breaks=("SRCH-34",)),
    Mistake("pin-without-leaf-bytes", "cursors",
            "a result's pin holds the file and the leaf's offset, not the leaf's bytes",
            patching(lambda: mock.patch.object(_judge.Pin, "digest",
                                               staticmethod(_same_leaf_digest))),
            breaks=("SRCH-39",)),
)
