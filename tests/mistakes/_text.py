"""Byte-level helpers for lenient parsers: the parts of a line outside string literals."""

from __future__ import annotations

import re
from collections.abc import Callable


def segments(line: bytes) -> list[tuple[bool, bytes]]:
    """``(inside_string, bytes)`` pieces of ``line``; an unterminated string runs to the end."""
    pieces: list[tuple[bool, bytes]] = []
    start, index, size = 0, 0, len(line)
    while index < size:
        if line[index] == 0x22:  # '"'
            if index > start:
                pieces.append((False, line[start:index]))
            end = index + 1
            while end < size and line[end] != 0x22:
                end += 2 if line[end] == 0x5C else 1
            end = min(end + 1, size)
            pieces.append((True, line[index:end]))
            start = index = end
        else:
            index += 1
    if start < size:
        pieces.append((False, line[start:]))
    return pieces


def outside_strings(change: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    return lambda line: b"".join(
        piece if inside else change(piece) for inside, piece in segments(line))


def inside_strings(change: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    return lambda line: b"".join(
        change(piece) if inside else piece for inside, piece in segments(line))


def substitute(pattern: bytes, replacement: bytes) -> Callable[[bytes], bytes]:
    compiled = re.compile(pattern)
    return lambda piece: compiled.sub(replacement, piece)
