"""A batch record given as a JSON value, encoded and read back fast (the fast engine's batch lane).

The careful path (``_append_plan._item_from_object``) walks the value in Python to refuse what
would break a read rule (``_records.check_encodable``: lone surrogates, depth, non-finite
numbers, values with no JSON form), encodes it, and parses its own bytes back: two thirds of
the CPU of a 256-record batch went to that walk. Here orjson encodes first and the walk is
replaced by proofs that cost C-speed passes; the value is accepted only when all hold:

1. ``orjson.dumps`` succeeded: it refuses lone surrogates (REC-5), non-string keys, integers
   beyond 64 bits (which the careful path writes with the json module, REC-9 rev. 2), nesting
   past its own limit, every type it does not know, and (passed through to no default)
   dataclasses, ``datetime`` values and subclasses of ``str``, ``int``, ``dict``, ``list``;
2. the bytes fit a record (REC-11) and ``parse_record`` (the fast reader every read uses)
   accepts them as a JSON object: no record fault, depth at most 128 (REC-12) included;
3. the value read back equals the value given (Python ``==``, type by type where it matters).
   This is what catches what orjson writes *without* refusing: ``NaN`` and infinities become
   ``null`` (REC-8: refused), tuples become arrays, ``UUID`` values and enumerations become
   strings or numbers (all "no JSON form" for the careful path; an ``IntEnum`` is an ``int``
   for both). None of them equals what it was turned into.

Anything else returns None and the caller takes the careful path, which then decides the
fault or accepts exactly as before; so both paths give the same items
(tests/reference/fast/test_items_fast.py holds them to one table of values).

The schema check of a plain message, its patterns once per batch
-----------------------------------------------------------------
After those proofs the bytes are a record the fast reader accepts; the planner still checked
each of them against the entry schema (jsonschema-rs, ``_schema_fast``) and the graph rules
(``graph_findings``) under the lock: half the CPU of a 256-record batch. For the common record,
a ``message`` entry of text, thinking and tool-call blocks, :func:`plain_messages` decides the
schema once per batch, before the planner's first record (``_append_plan._plain_proofs``; a
retry of a committed id is compared, never checked, so it is left out), with the typed lane's
Structs (``read/_messages_typed``: ``message.json``, ``blocks.json`` and the envelope, member
for member), decoded by msgspec from the bytes just proven, in any member order. The read lane
proves more from the same Structs (its bytes must be msgspec's own encoding, which also proves
the grammar and the absence of duplicate members); here the grammar is proven already, and the
bytes hold no duplicate member (an ``orjson.dumps`` of a dict repeats none, and the strict
reader, REC-7, accepted the careful path's), so only what that re-encoding proved of the schema
is checked by hand: the message's required ``timestamp`` is present (the Struct defaults it,
see ``_messages_typed``). ENV-5's days 29..31 and every other block type (image and audio carry
rules beyond the schema) are declined, as the read lane does.

The envelope's three patterns (defs.json Id, NullableId, Timestamp) are the schema's, but not
checked by msgspec string by string (a call into ``re`` per string: half the cost of the
decode): the batch's ids and parents are joined with LF, which no Id holds, and matched by one
regular expression, its timestamps by another. A batch in which a string fails (or holds an
LF) is checked record by record, so each record's verdict is its own. The planner then applies
the only rules left for such an entry, ID-3 and TREE-1 (``IndexBuilder.add_plain_message``),
and everything declined takes the schema and graph path unchanged.
tests/reference/fast/test_batch_plain_lane.py holds the lane to ``_schema.validate_entry`` (the
readable definition) on generated and altered entries, and plans with it to plans without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec
import orjson
from msgspec import Struct

from .._errors import ContractError
from ..read._records import MAX_RECORD_BYTES
from ._messages_block import TIMESTAMPS, all_match, ids_match
from ._messages_typed import AssistantMessage, ToolResultMessage, UserMessage
from ._records_fast import parse_record

__all__ = ["encode_and_read_back", "plain_messages"]

# No default function is given, so what is passed through raises: the careful path decides it.
_PASS_THROUGH: Final = (
    orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def encode_and_read_back(obj: Any) -> tuple[bytes, dict[str, Any]] | None:
    """``(record bytes with LF, the value a reader sees)``, or None: take the careful path."""
    if type(obj) is not dict:
        return None  # REC-4 and dict subclasses: the careful path says what they are
    try:
        encoded = orjson.dumps(obj, option=_PASS_THROUGH)
    except (orjson.JSONEncodeError, TypeError, ValueError):
        return None
    if len(encoded) > MAX_RECORD_BYTES:
        return None
    try:
        value = parse_record(encoded, line=1)
    except ContractError:
        return None
    if value != obj:  # proof 3: nothing was turned into something else
        return None
    return encoded + b"\n", value



class _MessageShape(Struct, tag_field="type", tag="message", forbid_unknown_fields=True):
    """``_messages_typed.MessageEntry`` without the envelope's patterns (checked batch-wise)."""

    id: str
    parentId: str | None
    timestamp: str
    message: UserMessage | AssistantMessage | ToolResultMessage


_decode_shape: Final = msgspec.json.Decoder(_MessageShape).decode


def _shape(data: bytes, value: dict[str, Any]) -> _MessageShape | None:
    if value.get("type") != "message":
        return None
    try:
        entry = _decode_shape(data)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
    # MSG-2..MSG-4: a message's timestamp is required; the Struct defaults it (written last).
    if "timestamp" not in value["message"]:
        return None
    return entry if entry.timestamp[8:10] <= "28" else None  # ENV-5: 29..31 need the calendar


def plain_messages(records: Sequence[tuple[bytes, dict[str, Any]] | None]) -> list[bool]:
    """For each record (its bytes and the value read back from them, or None), whether it is
    a schema-valid plain message entry with no rule beyond the schema to apply (see the module
    docstring); False declines: the planner then checks the schema as for any record."""
    shapes = [None if r is None else _shape(*r) for r in records]
    found = [s for s in shapes if s is not None]
    ids = [s.id for s in found] + [s.parentId for s in found if s.parentId is not None]
    if ids_match(ids) and all_match(TIMESTAMPS, [s.timestamp for s in found]):
        return [s is not None for s in shapes]
    return [s is not None and _envelope_matches(s) for s in shapes]


def _envelope_matches(shape: _MessageShape) -> bool:
    ids = [shape.id] if shape.parentId is None else [shape.id, shape.parentId]
    return ids_match(ids) and all_match(TIMESTAMPS, [shape.timestamp])
