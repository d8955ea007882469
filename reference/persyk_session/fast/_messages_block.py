"""The fast engine's block lane: a whole read chunk of plain ``message`` entries at once.

The per-record lane (``_messages_typed``) pays a Python call, a decode, an encode and two
screens for every record. Here the complete lines of one read chunk (``_blocks.split_blocks``)
are decoded by one ``msgspec.json.Decoder.decode_lines`` call, proved by one
``Encoder.encode_lines`` comparison and screened by a few passes of C over the chunk, and the
index commits them in one call (``ColumnTable.add_linked_messages``: ID-3 and TREE-1 for the
whole block). :func:`plain_message_block` says only "every line of this block is a schema-valid
plain message entry with no rule beyond the schema to apply, given that its parentId, if not
null, names a committed entry"; anything it cannot prove returns None, and the block's lines
take the per-record path one by one, which finds every fault with its code and line.
tests/reference/fast/test_messages_block.py holds it to the readable core.

Why an accepted block is what the per-record lane would accept, line for line
------------------------------------------------------------------------------
The Structs are ``_messages_typed``'s, member for member, untracked by the cyclic collector
(``gc=False``: decoded JSON holds no cycle, and tracking the block's tens of thousands of
objects cost as much as decoding them), with three differences, each made good by a check of
the whole block:

* **No patterns in msgspec.** msgspec calls back into ``re`` for every patterned string (the
  Id and Timestamp patterns were a third of the decode). The ids and envelope timestamps of
  the block are joined with LF and matched once by the pattern repeated (:func:`all_match`;
  the Id's without its bound, which is slow inside a repeat, and the longest id measured:
  :func:`ids_match`); an LF inside a value would add a separator, so the separators are
  counted too. The batch planner (``write/_items_fast``) matches its records the same way.
  A parentId is not matched: the index resolves it to a committed entry or an earlier one of
  the block (TREE-1), whose id matched, or the block is declined.
* **``text`` and ``thinking`` as ``msgspec.Raw``** (their bytes left undecoded: most of a
  record, and decoding them was most of the decode), only for a block with no backslash at
  all. ``Raw`` takes any JSON value and checks neither UTF-8 nor escapes, so the raw lane also
  needs (1) no backslash in the block: a string without escapes is its bytes between quotes,
  which msgspec's scanner has checked hold no control character; (2) the block valid UTF-8
  (REC-2, :func:`_valid_utf8`: no encoded surrogate, overlong or code point above U+10FFFF);
  (3) every ``"text":`` and ``"thinking":`` followed by a quote (:data:`_NON_STRING_TEXT`): in
  JSON without escapes such bytes can only be a key (a closing quote is never followed by a
  letter), and the re-encoding writes each key's value right after it, so every Raw value is a
  string. A block with a backslash is decoded with ``text`` as ``str`` instead (msgspec checks
  its UTF-8 and escapes, and the re-encoding its form).
* **Screens per block.** REC-12 and REC-8 as ``_messages_typed`` screens them, for every line
  of the block in one ``translate``: a line with at most MAX_DEPTH opening brackets and digits
  together passes both; failing that, no run of 309 digits (REC-8) and no line with more than
  MAX_DEPTH opening brackets (REC-12). ENV-5: the days 29..31 of the block are checked against
  the calendar (``_schema.impossible_day``).

The re-encoding proves the rest as in ``_messages_typed`` (compact form, no repeated key, the
members in the writers' order, the message's ``timestamp`` present, and no blank line, which
``decode_lines`` skips).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import orjson
from msgspec import UNSET, Raw, Struct, UnsetType

from ..read._grammar import MAX_DEPTH
from ..read._schema import impossible_day
from ._messages_typed import _ID_PATTERN, _TIMESTAMP_PATTERN, AnyObject, EpochMs

__all__ = ["ID_CORE", "TIMESTAMPS", "TIMESTAMP_CORE", "MessageBlock", "all_match", "ids_match",
           "plain_message_block", "unanchored"]


@dataclass(frozen=True, slots=True)
class MessageBlock:
    """The lines of a block the lane proved: each one's id, parentId and length (no LF)."""

    ids: list[str]
    parents: list[str | None]
    lengths: list[int]


class RawTextBlock(Struct, gc=False, tag_field="type", tag="text", forbid_unknown_fields=True):
    """BLK-2, ``text`` undecoded (see the module docstring)."""

    text: Raw
    textSignature: str | UnsetType = UNSET


class RawThinkingBlock(Struct, gc=False, tag_field="type", tag="thinking",
                       forbid_unknown_fields=True):
    """BLK-3, ``thinking`` undecoded."""

    thinking: Raw
    thinkingSignature: str | UnsetType = UNSET
    redacted: bool | UnsetType = UNSET


class TextBlock(Struct, gc=False, tag_field="type", tag="text", forbid_unknown_fields=True):
    """BLK-2."""

    text: str
    textSignature: str | UnsetType = UNSET


class ThinkingBlock(Struct, gc=False, tag_field="type", tag="thinking",
                    forbid_unknown_fields=True):
    """BLK-3."""

    thinking: str
    thinkingSignature: str | UnsetType = UNSET
    redacted: bool | UnsetType = UNSET


class ToolCallBlock(Struct, gc=False, tag_field="type", tag="toolCall",
                    forbid_unknown_fields=True):
    """BLK-4."""

    id: str
    name: str
    arguments: AnyObject
    thoughtSignature: str | UnsetType = UNSET


# The members of a message after ``content``, in the writers' order (MSG-2..MSG-4, MSG-10,
# MSG-11); ``timestamp`` last with a default for the reason _messages_typed gives.
_OPTIONAL: Final[list[tuple[str, Any, Any]]] = [
    ("provider", str | UnsetType, UNSET),
    ("api", str | UnsetType, UNSET),
    ("model", str | UnsetType, UNSET),
    ("responseId", str | UnsetType, UNSET),
    ("usage", AnyObject | UnsetType, UNSET),
    ("stopReason", str | UnsetType, UNSET),
    ("errorMessage", str | UnsetType, UNSET),
    ("replay", AnyObject | UnsetType, UNSET),
]
_TIMESTAMP: Final[tuple[str, Any, Any]] = ("timestamp", EpochMs, 0)


def _entry_struct(block: Any, name: str) -> type[Struct]:
    """``_messages_typed.MessageEntry`` over the blocks ``block``, without patterns."""

    def message(role: str, head: list[tuple[str, Any]], tail: list[tuple[str, Any, Any]]) -> Any:
        return msgspec.defstruct(
            f"{name}{role}", [*head, ("content", list[block]), *_OPTIONAL, *tail, _TIMESTAMP],
            tag_field="role", tag=role, forbid_unknown_fields=True, gc=False)

    user = message("user", [], [])
    assistant = message("assistant", [], [])
    tool_result = message(
        "toolResult", [("toolCallId", str), ("toolName", str), ("isError", bool)],
        [("details", Any | UnsetType, UNSET)])
    return msgspec.defstruct(
        name, [("id", str), ("parentId", str | None), ("timestamp", str),
               ("message", user | assistant | tool_result)],
        tag_field="type", tag="message", forbid_unknown_fields=True, gc=False)


_RawEntry: Final = _entry_struct(RawTextBlock | RawThinkingBlock | ToolCallBlock, "RawEntry")
_StrEntry: Final = _entry_struct(TextBlock | ThinkingBlock | ToolCallBlock, "StrEntry")
_decode_raw: Final = msgspec.json.Decoder(_RawEntry).decode_lines
_decode_str: Final = msgspec.json.Decoder(_StrEntry).decode_lines
_encode_lines: Final = msgspec.json.Encoder().encode_lines



def unanchored(pattern: str) -> str:
    """A schema pattern (defs.json anchors each at both ends) without its anchors: a batch of
    values joined by LF is anchored by ``fullmatch`` instead (:func:`all_match`)."""
    head, tail = "^", r"(?![\s\S])"
    assert pattern.startswith(head) and pattern.endswith(tail), pattern
    return pattern[len(head):-len(tail)]


ID_CORE: Final = unanchored(_ID_PATTERN)
TIMESTAMP_CORE: Final = unanchored(_TIMESTAMP_PATTERN)
# The Id pattern without its bound, which a counted repeat inside a repeated group makes slow;
# the length (1..128) is checked on its own (:func:`ids_match`).
_ID_UNBOUNDED: Final = "[A-Za-z0-9][A-Za-z0-9._-]*"
_ID_MAX_LENGTH: Final = 128
assert ID_CORE == "[A-Za-z0-9][A-Za-z0-9._-]{0,127}", ID_CORE
_IDS: Final = re.compile(f"(?:{_ID_UNBOUNDED}\n)*")
TIMESTAMPS: Final = re.compile(f"(?:(?:{TIMESTAMP_CORE})\n)*")


def all_match(pattern: re.Pattern[str], values: list[str]) -> bool:
    """Whether every value matches the one-value pattern ``pattern`` repeats: one ``fullmatch``
    over the values joined by LF, whose count proves no value held one."""
    joined = "\n".join(values) + "\n" if values else ""
    return joined.count("\n") == len(values) and pattern.fullmatch(joined) is not None


def ids_match(ids: list[str]) -> bool:
    """Every string is an Id (defs.json): the unbounded pattern, and at most 128 characters."""
    return all_match(_IDS, ids) and (not ids or max(map(len, ids)) <= _ID_MAX_LENGTH)


# ENV-5: a day the calendar must confirm (after TIMESTAMPS, "-DDT" is only ever the day).
_LATE_DAY: Final = re.compile(r"-(?:29|3[01])T")
# A text or thinking key whose value is not a string (meaningful in a block without
# backslashes only: see the module docstring).
_NON_STRING_TEXT: Final = re.compile(rb'"(?:text|thinking)":[^"]')
# Records above 16 KiB take the per-record path (as in _messages_typed; REC-11 included).
_LONGEST_LINE: Final = 16_384
# REC-12 and REC-8 screens (see the module docstring): the counted bytes become "[", LF stays.
_COUNTED: Final = b"[{0123456789"
_TO_BRACKET: Final = bytes(ord("[") if i in _COUNTED else i for i in range(256))
_NOT_COUNTED_OR_LF: Final = bytes(i for i in range(256) if i not in _COUNTED + b"\n")
_NOT_OPENER_OR_LF: Final = bytes(i for i in range(256) if i not in b"[{\n")
_DIGITS_TO_ZERO: Final = bytes(ord("0") if 0x30 <= i <= 0x39 else ord("x") for i in range(256))
_TOO_MANY: Final = b"[" * (MAX_DEPTH + 1)
_OVERFLOWING_RUN: Final = b"0" * 309


def plain_message_block(block: bytes, lines: list[bytes]) -> MessageBlock | None:
    """The ids, parentIds and lengths of ``lines``, the lines of ``block`` (whole lines, each
    ending in LF, none a header), if every one is proven a valid plain message entry, given
    that each parentId names a committed entry; else None."""
    lengths = list(map(len, lines))
    if not lengths or max(lengths) > _LONGEST_LINE or _screened_out(block):
        return None
    raw = (ORJSON_CHECKS_UTF8_FIRST and b"\\" not in block
           and (block.isascii() or _valid_utf8(block)) and not _NON_STRING_TEXT.search(block))
    try:
        entries: list[Any] = (_decode_raw if raw else _decode_str)(block)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
    # A blank line (REC-15), which decode_lines skips, is missing from the encoding too.
    if _encode_lines(entries) != block:
        return None
    ids = [entry.id for entry in entries]
    stamps = [entry.timestamp for entry in entries]
    if not (ids_match(ids) and all_match(TIMESTAMPS, stamps)):
        return None
    if _LATE_DAY.search("".join(stamps)) and any(
            impossible_day(stamp) for stamp in stamps if stamp[8:10] > "28"):
        return None
    return MessageBlock(ids, [entry.parentId for entry in entries], lengths)


def _screened_out(block: bytes) -> bool:
    """True if a line may nest too deep (REC-12) or hold an overflowing integer (REC-8)."""
    if _TOO_MANY not in block.translate(_TO_BRACKET, _NOT_COUNTED_OR_LF):
        return False
    return (_OVERFLOWING_RUN in block.translate(_DIGITS_TO_ZERO)
            or _TOO_MANY in block.translate(_TO_BRACKET, _NOT_OPENER_OR_LF))


def _valid_utf8(block: bytes) -> bool:
    """REC-2 for the whole block, without building a str (``bytes.decode`` would, at three
    times the cost): orjson checks the UTF-8 of all of its input before it parses, so a block
    of several records is refused for its second document when and only when it is valid
    UTF-8. :data:`ORJSON_CHECKS_UTF8_FIRST` pins that behaviour when the module loads."""
    try:
        orjson.loads(block)
    except orjson.JSONDecodeError as error:
        return error.msg.startswith(_SECOND_DOCUMENT)
    return False  # one record alone is not a block the raw lane needs


_SECOND_DOCUMENT: Final = "unexpected content after document"


def _orjson_checks_utf8_first() -> bool:
    """True if orjson refuses invalid UTF-8 after a first document and names a second one in
    valid UTF-8 as such: without both, the raw lane is off (a block then decodes as str)."""
    return (not _valid_utf8(b'{}\n{"a":"\xed\xa0\x80"}\n')
            and _valid_utf8(b'{}\n{"a":"\xc3\xa9"}\n'))


# Without it (a later orjson that validates lazily) every block decodes its text as str.
ORJSON_CHECKS_UTF8_FIRST: Final = _orjson_checks_utf8_first()
