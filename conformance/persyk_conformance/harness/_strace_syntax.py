"""One line of ``strace -xx -yy`` text in, its parts out: the call's name, arguments, return
value and annotations, and the bytes of strings and paths.

Rule: everything that knows strace's punctuation is here. With ``-xx`` every byte of every
string and path is ``\\xNN``, so the punctuation this module scans for (quotes, ``<``/``>``,
brackets, commas, the ``)`` that ends the call) is always strace's own; the older ``-x`` form
(C escapes) is read too, for hand-written traces. Sans-IO.
"""

from __future__ import annotations

import contextlib
import re

__all__ = ["TraceError", "annotated", "decode_c_string", "split_call"]

_NAME = re.compile(r"^(?P<name>\w+)\(")
_RET = re.compile(r"\s*=\s+(?P<ret>-?\d+|0x[0-9a-f]+|\?)")
_ESCAPES = {"n": 10, "t": 9, "r": 13, "v": 11, "f": 12, "\\": 92, '"': 34, "'": 39, "a": 7,
            "b": 8}


class TraceError(ValueError):
    """The trace cannot be read (a line the parser does not understand, or cut data);
    carries the line number."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"{message} (at line {line} of the trace)")
        self.line = line


def decode_c_string(text: str) -> bytes:
    """The bytes of a C string literal as strace prints it (without the quotes)."""
    count = len(text) // 4
    if len(text) % 4 == 0 and text[::4] == "\\" * count and text[1::4] == "x" * count:
        with contextlib.suppress(ValueError):  # -xx: every byte as \xNN
            return bytes.fromhex(text.replace("\\x", ""))
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out += char.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "x":
            out.append(int(text[i + 2 : i + 4], 16))
            i += 4
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", text[i + 1 :])
            assert digits is not None
            out.append(int(digits.group(0), 8))
            i += 1 + len(digits.group(0))
        else:
            out.append(_ESCAPES[nxt])
            i += 2
    return bytes(out)


def _end_of_string(text: str, i: int) -> int:
    """``text[i]`` is a quote: the index after the closing one (and after a cut's ``...``).
    A quote preceded by an odd run of backslashes is escaped (the -x form; -xx has none)."""
    end = text.find('"', i + 1)
    while end >= 0:
        run = end
        while text[run - 1] == "\\":
            run -= 1
        if (end - run) % 2 == 0:
            end += 1
            return end + 3 if text.startswith("...", end) else end
        end = text.find('"', end + 1)
    raise ValueError("unclosed string")


def _end_of_group(text: str, i: int) -> int:
    """``text[i]`` opens a group (``<``, ``[``, ``{``, ``(``): the index after its close.
    Inside ``[...]`` a ``>`` is text (a socket's ``1->2``), not the end of an annotation."""
    closing = {"<": ">", "[": "]", "{": "}", "(": ")"}[text[i]]
    i += 1
    while i < len(text):
        char = text[i]
        if char == closing:
            return i + 1
        if char == '"':
            i = _end_of_string(text, i)
        elif char == "\\":
            i += 2
        elif char in "<[{(" and not (char == "<" and closing == "]"):
            i = _end_of_group(text, i)
        elif text.startswith("/*", i):
            end = text.find("*/", i)
            i = len(text) if end < 0 else end + 2
        else:
            i += 1
    raise ValueError("unclosed group")


def split_call(rest: str, line: int) -> tuple[str, list[str], str, str | None, str] | None:
    """(name, arguments, return value, the return's annotation, what follows) of a finished
    call; None for what is no call (signals, ``+++ exited``)."""
    match = _NAME.match(rest)
    if match is None:
        return None
    args: list[str] = []
    i = start = match.end()
    try:
        while i < len(rest) and rest[i] != ")":
            char = rest[i]
            if char == '"':
                i = _end_of_string(rest, i)
            elif char in "<[{(":
                i = _end_of_group(rest, i)
            elif rest.startswith("/*", i):
                end = rest.find("*/", i)
                i = len(rest) if end < 0 else end + 2
            elif char == ",":
                args.append(rest[start:i].strip())
                start = i = i + 1
            else:
                i += 1
    except ValueError:
        raise TraceError(f"cannot read the call {rest[:60]!r}", line) from None
    if i >= len(rest):
        raise TraceError(f"cannot read the call {rest[:60]!r}", line)
    if rest[start:i].strip():
        args.append(rest[start:i].strip())
    ret = _RET.match(rest, i + 1)
    if ret is None:
        raise TraceError(f"no return value in {rest[:60]!r}", line)
    j = ret.end()
    annotation = None
    if rest.startswith("<", j):
        end = _end_of_group(rest, j)
        annotation, j = rest[j:end], end
    return match.group("name"), args, ret.group("ret"), annotation, rest[j:]


def annotated(text: str) -> tuple[str | None, bool]:
    """The path in a ``-yy`` annotation (``<\\x2f\\x77>``, ``<...<char 1:3>>``,
    ``<...>(deleted)``) and whether the file was removed; sockets and the like keep strace's
    own words (``TCP:[5]``), which name no path."""
    deleted = text.endswith("(deleted)")
    body = text.removesuffix("(deleted)")
    if not (body.startswith("<") and body.endswith(">")):
        return None, deleted
    inner = body[1:-1]
    if not inner.startswith("\\"):  # strace's words for a socket, or a hand-written path
        cut = inner.find("<")
        plain = inner if cut < 0 or "[" in inner[:cut] else inner[:cut]
        return decode_c_string(plain).decode("utf-8", "surrogateescape"), deleted
    end = 0
    while inner.startswith("\\", end):
        end += 4 if inner[end + 1] == "x" else 2
    return decode_c_string(inner[:end]).decode("utf-8", "surrogateescape"), deleted
