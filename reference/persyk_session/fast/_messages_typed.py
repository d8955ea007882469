"""The fast engine's lane for the common record: a plain ``message`` entry, decoded by msgspec.

A session is mostly ``message`` entries whose blocks are text, thinking and tool calls. For
such a record, :func:`plain_message_ids` replaces the record reader (``_records_fast``) and the
schema check (``_schema_fast``) with one typed msgspec decode and one msgspec encode, both in
C, and hands the index the two fields it keeps (``id``, ``parentId``). It only ever says "this
record is a schema-valid message entry with no rule beyond the schema to apply": anything it
cannot prove returns None, and the record takes the existing path, which finds every fault
with its code and line. ``_store.feed_lines`` uses it only when no body is kept (``validate``,
``info``, paging), since it builds no dict. tests/reference/fast/test_messages_typed.py holds it to
the readable core on generated and mutated records.

Why an accepted record passes the strict reader and the schema
---------------------------------------------------------------
* Grammar (REC-1..REC-20): msgspec parsed the bytes as JSON, and its compact re-encoding of the
  decoded value is the same bytes. msgspec writes no whitespace, no escape but ``\\"``,
  ``\\\\`` and ``\\u00XX`` for control characters, raw UTF-8 that it validated (no encoded
  surrogate, overlong or code point above U+10FFFF: it rejects those, and lone ``\\uD800``
  escapes), no NaN or infinity (it rejects those literals and ``1e400``), and each member of
  the decoded value once. So equal bytes leave no room for whitespace or escapes the strict
  reader would read otherwise, nor for a BOM, a CR, a trailing comma or a lenient number
  spelling, and they prove that no object repeated a key (REC-7; msgspec keeps the last, so a
  duplicate would make the encoding shorter): msgspec itself does not detect duplicates (its
  decoders take the last value of a repeated key, by design).
* REC-8 for integers: msgspec keeps any integer exactly, where the strict reader calls one of
  309 digits or more that overflows a double a fault. A run of 309 digits sends the record to
  the existing path; shorter integers are kept exactly by both (REC-9, rev. 2).
* REC-12 depth: the typed part nests 5 deep; the free-form members (``arguments``, ``usage``,
  ``replay``, ``details``) could nest deeper, so the bracket screen of ``_records_fast`` is
  applied first, unchanged.
* Schema: the Structs below are ``message.json``, ``blocks.json`` and the envelope, member for
  member: required members have no default, optional ones default to UNSET (so an absent
  member stays absent in the encoding), ``forbid_unknown_fields`` is ``additionalProperties:
  false`` and the entry's ``unevaluatedProperties: false``, the tags are the ``const`` members
  (``type``, ``role``), msgspec's ``int`` refuses booleans and floats, ``bool`` refuses 0 and 1,
  and the Id and Timestamp patterns are the schema's. A block of another type (image, audio,
  or an unknown one, BLK-10) matches no tag and takes the existing path. An integer member
  written as ``1.0`` (a JSON Schema integer) is refused here and decided there.
* Rules beyond the schema: for a message entry only ENV-5 (the day exists in its month) and
  the audio and asset ranges of image and audio blocks; days 29..31 take the existing path,
  and those blocks never get here.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from ..read._grammar import MAX_DEPTH
from ..read._records import MAX_RECORD_BYTES

__all__ = ["plain_message_ids"]

# The schema's patterns (defs.json: Id, NullableId, Timestamp); msgspec matches with re.search,
# and each pattern is anchored at both ends.
_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(?![\s\S])"
_TIMESTAMP_PATTERN: Final = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5]"
    r"[0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])(?![\s\S])"
)
Id = Annotated[str, Meta(pattern=_ID_PATTERN)]
Timestamp = Annotated[str, Meta(pattern=_TIMESTAMP_PATTERN)]
# defs.json SafeInteger / EpochMs (MSG-5): 0 <= t <= 2^53-1.
EpochMs = Annotated[int, Meta(ge=0, le=2**53 - 1)]
# "type": "object" with any members (MSG-10, BLK-4).
AnyObject = dict[str, Any]


class TextBlock(Struct, tag_field="type", tag="text", forbid_unknown_fields=True):
    """BLK-2."""

    text: str
    textSignature: str | UnsetType = UNSET


class ThinkingBlock(Struct, tag_field="type", tag="thinking", forbid_unknown_fields=True):
    """BLK-3."""

    thinking: str
    thinkingSignature: str | UnsetType = UNSET
    redacted: bool | UnsetType = UNSET


class ToolCallBlock(Struct, tag_field="type", tag="toolCall", forbid_unknown_fields=True):
    """BLK-4."""

    id: str
    name: str
    arguments: AnyObject
    thoughtSignature: str | UnsetType = UNSET


Block = TextBlock | ThinkingBlock | ToolCallBlock


class UserMessage(Struct, tag_field="role", tag="user", forbid_unknown_fields=True):
    """MSG-2, MSG-11. Members in the order writers put them: the encoding must give the same
    bytes, so a record in another order takes the existing path (correct, only slower)."""

    content: list[Block]
    provider: str | UnsetType = UNSET
    api: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    responseId: str | UnsetType = UNSET
    usage: AnyObject | UnsetType = UNSET
    stopReason: str | UnsetType = UNSET
    errorMessage: str | UnsetType = UNSET
    replay: AnyObject | UnsetType = UNSET
    timestamp: EpochMs = 0  # required: see _REQUIRED_LAST


class AssistantMessage(Struct, tag_field="role", tag="assistant", forbid_unknown_fields=True):
    """MSG-3, MSG-10, MSG-11."""

    content: list[Block]
    provider: str | UnsetType = UNSET
    api: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    responseId: str | UnsetType = UNSET
    usage: AnyObject | UnsetType = UNSET
    stopReason: str | UnsetType = UNSET
    errorMessage: str | UnsetType = UNSET
    replay: AnyObject | UnsetType = UNSET
    timestamp: EpochMs = 0  # required: see _REQUIRED_LAST


class ToolResultMessage(Struct, tag_field="role", tag="toolResult", forbid_unknown_fields=True):
    """MSG-4, MSG-11; ``details`` is any JSON value."""

    toolCallId: str
    toolName: str
    isError: bool
    content: list[Block]
    provider: str | UnsetType = UNSET
    api: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    responseId: str | UnsetType = UNSET
    usage: AnyObject | UnsetType = UNSET
    stopReason: str | UnsetType = UNSET
    errorMessage: str | UnsetType = UNSET
    replay: AnyObject | UnsetType = UNSET
    details: Any | UnsetType = UNSET
    timestamp: EpochMs = 0  # required: see _REQUIRED_LAST


class MessageEntry(Struct, tag_field="type", tag="message", forbid_unknown_fields=True):
    """ENV-1, ID-1, ENV-4, ENT-1: the envelope and ``message``, nothing else."""

    id: Id
    parentId: Id | None
    timestamp: Timestamp
    message: UserMessage | AssistantMessage | ToolResultMessage


_decode: Final = msgspec.json.Decoder(MessageEntry).decode
_encode: Final = msgspec.json.Encoder().encode
# A message's ``timestamp`` is required (MSG-2..MSG-4) yet written last, after optional
# members; a Struct cannot put a required field after defaulted ones, so it defaults to 0 and
# the encoding proves it was present: an absent one would be written as ``"timestamp":0`` and
# the bytes would differ from the record (which lacks it).

# Copied from _records_fast (the same REC-12 screen): valid JSON nesting 129 containers holds
# at least 2 * 129 brackets; records above 16 KiB are left to its walk (and so is every record
# over the REC-11 limit, which feed_lines never offers anyway).
_SHORTEST_TOO_DEEP: Final = 2 * (MAX_DEPTH + 1)
_WALK_WITHOUT_COUNTING: Final = 16_384
assert _WALK_WITHOUT_COUNTING < MAX_RECORD_BYTES
# One pass keeps only the bytes both screens count, opening brackets (REC-12) and digits
# (REC-8): a record with at most MAX_DEPTH of them together passes both without a second look.
_NOT_COUNTED: Final = bytes(i for i in range(256) if i not in b"[{0123456789")
# REC-8: an integer literal of 309 digits or more may overflow a double (see the docstring).
# Digits become "0" and every other byte "x", then a run of 309 zeros is searched for (a regex
# ``[0-9]{309}`` restarts at every digit and costs far more).
_LONGEST_SAFE_RUN: Final = 308
_DIGITS_TO_ZERO: Final = bytes(ord("0") if 0x30 <= i <= 0x39 else ord("x") for i in range(256))
_OVERFLOWING_RUN: Final = b"0" * (_LONGEST_SAFE_RUN + 1)


def plain_message_ids(data: bytes) -> tuple[str, str | None] | None:
    """``(id, parentId)`` of a record proven to be a valid plain message entry, else None."""
    if len(data) > _WALK_WITHOUT_COUNTING:
        return None
    counted = data.translate(None, _NOT_COUNTED)
    if len(counted) > MAX_DEPTH and _screened_out(data, counted):
        return None
    try:
        entry = _decode(data)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
    if _encode(entry) != data:  # see the module docstring: grammar, REC-7, required timestamp
        return None
    if entry.timestamp[8:10] > "28":  # ENV-5: days 29..31 need the calendar
        return None
    return entry.id, entry.parentId


def _screened_out(data: bytes, counted: bytes) -> bool:
    """True if the record may nest too deep (REC-12) or hold an overflowing integer (REC-8)."""
    openers = counted.count(b"[") + counted.count(b"{")
    if len(data) >= _SHORTEST_TOO_DEEP and openers > MAX_DEPTH:
        return True
    return len(counted) - openers > _LONGEST_SAFE_RUN and (
        _OVERFLOWING_RUN in data.translate(_DIGITS_TO_ZERO))
