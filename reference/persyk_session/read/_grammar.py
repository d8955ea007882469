"""The one strict JSON grammar (RFC 8259 plus the record rules), shared by reading and recovery.

Sans-IO: bytes in, a Python value out, or the first fault with its byte offset. The caller has
already checked the bytes as UTF-8 (REC-2); this module checks everything else that a record's
JSON text must satisfy and builds the value as it goes:

* REC-3   one JSON text: the grammar itself, no control character in a string, no bad escape;
* REC-5   an escaped surrogate must be the high half of a high-then-low pair (REC-6);
* REC-7   no object holds two equal keys (compared after unescaping);
* REC-8   no number overflows a double; REC-9 integers are kept exactly as ``int``;
  REC-10, REC-23 every other number is accepted (underflow to zero included);
* REC-12  at most 128 nested containers: the parser is iterative (a stack of open containers),
  so depth never touches Python's recursion limit, and it stops at container 129.

Faults are found left to right, so the first one raised is the first in byte order (REC-20).

Two modes
---------
``parse_json(data)`` reads a whole record: running out of bytes inside a value is a syntax
fault.

``parse_json(data, prefix=True)`` reads the unterminated last line that recovery must judge
(RCV-5, RCV-9..RCV-12). Running out of bytes is then not a fault: the result is
:class:`Incomplete`. What is already written is judged as in a whole record, with three
allowances, because the next bytes could still change them: a number or a literal still being
written at the very end, an escape cut off at the end (unless every way to finish it makes a
lone surrogate), and an escaped high surrogate at the end (its low half may follow). A key still
being written is not compared with the others (it may still grow). Record-rule faults
(REC-5, REC-7, REC-8) do not stop the scan in this mode: a grammar fault anywhere in the line
decides first (RCV-9 before RCV-11), as does container 129 (RCV-10).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Final

from .._errors import Code

__all__ = ["MAX_DEPTH", "Incomplete", "JsonFault", "parse_json"]

# REC-12: nested containers; `{}` is depth 1.
MAX_DEPTH: Final = 128
# REC-8 for integer literals: 10^309 overflows a double, so an integer literal with more than
# 309 digits always does, and one with fewer never reaches CPython's limit on int() conversions.
_MAX_INTEGER_DIGITS: Final = 309

# Fixed texts (diagnostics never quote the input).
END_INSIDE_VALUE: Final = "record ends inside a JSON value"
UNEXPECTED_BYTE: Final = "unexpected byte in JSON text"
_BAD_STRING_BYTE: Final = "invalid escape or control character"

# REC-18: insignificant whitespace (space, tab, CR; LF only inside a fragment) anywhere
# between tokens.
_WHITESPACE: Final = re.compile(rb"[ \t\n\r]*")
# REC-3: a run of string bytes ends at a quote, a backslash or a control character.
_STRING_RUN: Final = re.compile(rb'[^"\\\x00-\x1f]*')
_ESCAPE: Final = re.compile(rb'\\(?:(["\\/bfnrt])|u([0-9a-fA-F]{4}))')
_PARTIAL_ESCAPE: Final = re.compile(rb"\\(?:u([0-9a-fA-F]{0,3}))?")
_NUMBER: Final = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
# What a number still being written can look like at the very end of a fragment.
_NUMBER_PREFIX: Final = re.compile(
    rb"-|-?(?:0|[1-9][0-9]*)(?:\.(?:[0-9]+(?:[eE][+-]?[0-9]*)?)?|[eE][+-]?[0-9]*)?"
)
_LITERALS: Final = {
    ord("t"): (b"true", True), ord("f"): (b"false", False), ord("n"): (b"null", None)
}
_SIMPLE_ESCAPES: Final = {
    b'"': '"', b"\\": "\\", b"/": "/", b"b": "\b", b"f": "\f", b"n": "\n", b"r": "\r", b"t": "\t"
}

# What the grammar accepts next.
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _COLON, _AFTER_VALUE = range(6)


class JsonFault(Exception):
    """The first fault of a JSON text: its code, the byte offset where it is, a fixed text."""

    def __init__(self, code: Code, offset: int, detail: str) -> None:
        super().__init__(code)
        self.code = code
        self.offset = offset
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Incomplete:
    """A fragment that ran out inside a value (prefix mode only).

    ``object_root`` is False when the value that started is not an object (REC-4: no
    continuation makes it a record); ``in_string`` says the bytes end inside a string;
    ``open_containers`` counts the objects and arrays still open.
    """

    object_root: bool
    in_string: bool
    open_containers: int


class _EndOfInput(Exception):
    """Prefix mode: the bytes ran out inside a value."""

    def __init__(self, *, in_string: bool = False) -> None:
        super().__init__()
        self.in_string = in_string


@dataclass(slots=True)
class _Open:
    """A container still open: the object or array, and the key its next value goes under."""

    container: dict[str, Any] | list[Any]
    key: str | None = None


def parse_json(data: bytes, *, prefix: bool = False) -> Any:
    """The value of the JSON text ``data`` (UTF-8 already checked); raise :class:`JsonFault`.

    With ``prefix`` (recovery), bytes that end inside a value give :class:`Incomplete`.
    """
    parser = _Parser(data, prefix)
    try:
        value = parser.parse()
    except _EndOfInput as end:
        parser.raise_deferred()
        return Incomplete(parser.root_is_object(), end.in_string, len(parser.stack))
    parser.raise_deferred()
    return value


def is_high_surrogate(unit: int) -> bool:
    return 0xD800 <= unit <= 0xDBFF


def is_low_surrogate(unit: int) -> bool:
    return 0xDC00 <= unit <= 0xDFFF


class _Parser:
    """One pass over ``data``: a state (what may come next) and a stack of open containers."""

    def __init__(self, data: bytes, prefix: bool) -> None:
        self.data = data
        self.size = len(data)
        self.prefix = prefix
        self.stack: list[_Open] = []
        self.root: Any = None
        self.started = False
        self.deferred: JsonFault | None = None

    # --- the main loop -------------------------------------------------------------------------

    def parse(self) -> Any:
        state = _VALUE
        pos = 0
        while True:
            pos = self.skip_whitespace(pos)
            if pos == self.size:
                if state == _AFTER_VALUE and not self.stack:
                    return self.root
                self.end_inside_value(pos)
            byte = self.data[pos]
            if state == _AFTER_VALUE:
                state, pos = self.after_value(byte, pos)
            elif state in (_KEY, _KEY_OR_CLOSE):
                state, pos = self.key(byte, pos, may_close=state == _KEY_OR_CLOSE)
            elif state == _COLON:
                if byte != 0x3A:  # :
                    raise JsonFault(Code.RECORD_JSON_SYNTAX, pos, UNEXPECTED_BYTE)
                state, pos = _VALUE, pos + 1
            elif state == _VALUE_OR_CLOSE and byte == 0x5D:  # ] of an empty array
                state, pos = self.close(pos)
            else:
                state, pos = self.value(byte, pos)

    def skip_whitespace(self, pos: int) -> int:
        return _WHITESPACE.match(self.data, pos).end()  # type: ignore[union-attr]

    def end_inside_value(self, pos: int, *, in_string: bool = False) -> None:
        if self.prefix:
            raise _EndOfInput(in_string=in_string)
        raise JsonFault(Code.RECORD_JSON_SYNTAX, pos, END_INSIDE_VALUE)

    def after_value(self, byte: int, pos: int) -> tuple[int, int]:
        if not self.stack:
            raise JsonFault(Code.RECORD_JSON_SYNTAX, pos, "content after the JSON value")
        in_object = isinstance(self.stack[-1].container, dict)
        if byte == 0x2C:  # ,
            return (_KEY if in_object else _VALUE), pos + 1
        if byte == (0x7D if in_object else 0x5D):  # } or ]
            return self.close(pos)
        raise JsonFault(Code.RECORD_JSON_SYNTAX, pos, UNEXPECTED_BYTE)

    def close(self, pos: int) -> tuple[int, int]:
        closed = self.stack.pop()
        self.attach(closed.container)
        return _AFTER_VALUE, pos + 1

    def attach(self, value: Any) -> None:
        """Put a finished value where it belongs: the root, an array, or under its key."""
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        if isinstance(top.container, list):
            top.container.append(value)
        else:
            assert top.key is not None
            top.container[top.key] = value

    # --- keys ----------------------------------------------------------------------------------

    def key(self, byte: int, pos: int, *, may_close: bool) -> tuple[int, int]:
        if byte == 0x7D and may_close:  # } of an empty object
            return self.close(pos)
        if byte != 0x22:  # "
            raise JsonFault(Code.RECORD_JSON_SYNTAX, pos, UNEXPECTED_BYTE)
        judged_so_far = self.deferred
        try:
            key, end = self.string(pos)
        except _EndOfInput:
            self.deferred = judged_so_far  # a key still being written is not judged (RCV-5)
            raise
        top = self.stack[-1]
        assert isinstance(top.container, dict)
        if key in top.container:  # REC-7: equal after unescaping
            self.record_fault(Code.RECORD_DUPLICATE_KEY, pos, "duplicate object key")
        top.key = key
        return _COLON, end

    # --- values --------------------------------------------------------------------------------

    def value(self, byte: int, pos: int) -> tuple[int, int]:
        self.started = self.started or not self.stack
        if byte in (0x7B, 0x5B):  # { [
            if len(self.stack) == MAX_DEPTH:  # REC-12, RCV-10: container 129
                raise JsonFault(Code.RECORD_TOO_DEEP, pos, "more than 128 nested containers")
            container: dict[str, Any] | list[Any] = {} if byte == 0x7B else []
            if not self.stack:
                self.root = container
            self.stack.append(_Open(container))
            return (_KEY_OR_CLOSE if byte == 0x7B else _VALUE_OR_CLOSE), pos + 1
        if byte == 0x22:  # "
            text, end = self.string(pos)
            self.attach(text)
            return _AFTER_VALUE, end
        if byte == 0x2D or 0x30 <= byte <= 0x39:  # - 0-9
            number, end = self.number(pos)
            self.attach(number)
            return _AFTER_VALUE, end
        if byte in _LITERALS:
            word, literal = _LITERALS[byte]
            self.attach(literal)
            return _AFTER_VALUE, self.literal(pos, word)
        raise JsonFault(Code.RECORD_JSON_SYNTAX, pos, UNEXPECTED_BYTE)

    def number(self, start: int) -> tuple[int | float, int]:
        if self.prefix and _NUMBER_PREFIX.fullmatch(self.data, start):
            raise _EndOfInput  # a number still being written is not judged
        match = _NUMBER.match(self.data, start)
        if match is None:  # a minus sign not followed by a digit
            offset = start + 1
            if offset == self.size:
                self.end_inside_value(offset)
            raise JsonFault(Code.RECORD_JSON_SYNTAX, offset, UNEXPECTED_BYTE)
        literal = match.group(0)
        is_integer = match.group(1) is None and match.group(2) is None
        digits = len(literal) - literal.startswith(b"-")
        if (is_integer and digits > _MAX_INTEGER_DIGITS) or math.isinf(float(literal)):
            # REC-8; REC-10: underflow to zero is fine
            self.record_fault(Code.RECORD_NUMBER_OUT_OF_RANGE, start, "number overflows a double")
            return 0, match.end()
        # REC-9 (rev. 2): an integer literal is kept exactly, however many digits it has.
        return (int(literal) if is_integer else float(literal)), match.end()

    def literal(self, start: int, word: bytes) -> int:
        if self.data.startswith(word, start):
            return start + len(word)
        common = 0
        while start + common < self.size and self.data[start + common] == word[common]:
            common += 1
        if start + common == self.size:
            self.end_inside_value(self.size)
        raise JsonFault(Code.RECORD_JSON_SYNTAX, start + common, UNEXPECTED_BYTE)

    # --- strings -------------------------------------------------------------------------------

    def string(self, start: int) -> tuple[str, int]:
        """The string opening at ``start`` and the offset after its closing quote."""
        data = self.data
        pieces: list[str] = []
        pending_high: int | None = None  # offset of an escaped high surrogate awaiting its pair
        pos = start + 1
        while True:
            run_end = _STRING_RUN.match(data, pos).end()  # type: ignore[union-attr]
            if run_end > pos:
                self.lone_high(pending_high)
                pending_high = None
                if run_end < self.size:  # at the end, a cut UTF-8 sequence may be held back
                    pieces.append(data[pos:run_end].decode("utf-8"))
                pos = run_end
            if pos == self.size:
                self.string_ends(pending_high, pos)
            byte = data[pos]
            if byte == 0x22:  # "
                self.lone_high(pending_high)
                return "".join(pieces), pos + 1
            if byte != 0x5C:  # REC-3: a raw control character
                self.lone_high(pending_high)  # REC-20: its offset is lower
                raise JsonFault(Code.RECORD_JSON_SYNTAX, pos, _BAD_STRING_BYTE)
            escape = _ESCAPE.match(data, pos)
            if escape is None:
                self.bad_escape(pending_high, pos)
            assert escape is not None
            pending_high = self.escaped(escape, pending_high, pieces)
            pos = escape.end()

    def escaped(
        self, escape: re.Match[bytes], pending_high: int | None, pieces: list[str]
    ) -> int | None:
        """Add one escape to ``pieces``; return the offset of a high surrogate left waiting."""
        if escape.group(1) is not None:
            self.lone_high(pending_high)
            pieces.append(_SIMPLE_ESCAPES[escape.group(1)])
            return None
        unit = int(escape.group(2), 16)
        if pending_high is not None:
            if is_low_surrogate(unit):  # REC-6: the pair is one code point
                high = int(self.data[pending_high + 2 : pending_high + 6], 16)
                pieces.append(chr(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)))
                return None
            self.lone_high(pending_high)
        if is_low_surrogate(unit):  # REC-5
            self.record_fault(
                Code.RECORD_LONE_SURROGATE, escape.start(), "lone low surrogate escape"
            )
            return None
        if is_high_surrogate(unit):
            return escape.start()
        pieces.append(chr(unit))  # REC-17: U+0000 and noncharacters are scalar values
        return None

    def lone_high(self, pending_high: int | None) -> None:
        """REC-5: an escaped high surrogate not directly followed by an escaped low one."""
        if pending_high is not None:
            self.record_fault(
                Code.RECORD_LONE_SURROGATE, pending_high, "lone high surrogate escape"
            )

    def string_ends(self, pending_high: int | None, pos: int) -> None:
        """The bytes ran out inside a string: never a value, whatever the mode."""
        if not self.prefix:
            self.lone_high(pending_high)  # lower offset than the end of the record
        self.end_inside_value(pos, in_string=True)

    def bad_escape(self, pending_high: int | None, pos: int) -> None:
        """A backslash that starts no valid escape: cut off at the end (prefix mode), or bad."""
        partial = _PARTIAL_ESCAPE.fullmatch(self.data, pos)
        if partial is not None and self.prefix:
            self.judge_cut_escape(partial.group(1) or b"", pending_high, pos)
            raise _EndOfInput
        self.lone_high(pending_high)  # its offset is lower than the bad escape's
        raise JsonFault(Code.RECORD_JSON_SYNTAX, pos, _BAD_STRING_BYTE)

    def judge_cut_escape(self, digits: bytes, pending_high: int | None, pos: int) -> None:
        """RCV-5: a ``\\u`` escape cut off at the end is a fault only if every way to finish it
        makes a lone surrogate (REC-5)."""
        hex_digits = digits.decode("ascii").upper()
        could_be_low = hex_digits[:1] in ("", "D") and hex_digits[1:2] in ("", "C", "D", "E", "F")
        if pending_high is not None and not could_be_low:
            self.lone_high(pending_high)
        if pending_high is None and len(digits) >= 2 and could_be_low:
            self.record_fault(Code.RECORD_LONE_SURROGATE, pos, "lone low surrogate escape")

    # --- faults and the result -----------------------------------------------------------------

    def record_fault(self, code: Code, offset: int, detail: str) -> None:
        """A record-rule fault: raised at once, or in prefix mode kept until the scan ends."""
        fault = JsonFault(code, offset, detail)
        if not self.prefix:
            raise fault
        if self.deferred is None:
            self.deferred = fault

    def raise_deferred(self) -> None:
        if self.deferred is not None:
            raise self.deferred

    def root_is_object(self) -> bool:
        return not self.started or isinstance(self.root, dict)
