"""The one switch between the readable reference and its fast paths (``PERSYK_SESSION_MODE``).

``PERSYK_SESSION_MODE=readable`` runs the readable core alone: the strict record reader
(``_records``, ``_json_grammar``), the python-jsonschema validator (``_schema``) and the entry
table of plain tuples (``_entries``); neither orjson nor jsonschema_rs is imported, and every
mutation validates the whole committed file (no live index, ``_live``). Unset or ``fast``
(the default) runs the fast paths beside them: ``_records_fast`` (orjson with its equivalence
proofs), ``_schema_fast`` (jsonschema-rs) and ``_entries_fast`` (the column-wise index), with
the live index, reads the common record (a plain message entry) through ``_messages_block``
(msgspec, a read chunk at once) and ``_messages_typed`` (record by record) when no body is
kept and the read is large enough to pay for their import (:func:`typed_lane_pays`), and keeps
the bodies ``context`` projects from its validating pass (``_bodies_fast.KeptBodies``). Both
modes give the same results; the agreement tests (tests/test_records*.py,
tests/test_jsontestsuite.py, tests/test_schema_agreement.py, tests/test_context_one_pass.py,
tests/test_messages_typed.py, tests/test_messages_block.py) and the conformance suite, run in
both modes, hold them to it.

The I/O edge and the builder import the chosen functions from here; the core modules never do.
The dsh-v0 profile, which shares nothing of v1's reader, has its own switch (``dsh/_json.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeAlias

from .._mode_name import MODE

if TYPE_CHECKING:
    from ._messages_block import MessageBlock

__all__ = [
    "KEEP_PARSED_BODIES",
    "MODE",
    "READABLE",
    "TYPED_LANE_MIN_BYTES",
    "EntryTable",
    "PlainMessageBlock",
    "PlainMessageIds",
    "dumps_json",
    "encode_record",
    "loads_json",
    "parse_record",
    "typed_block_lane",
    "typed_lane_pays",
    "typed_message_lane",
    "validate_entry",
    "validate_header",
]

READABLE: Final = MODE == "readable"
# ``_messages_typed.plain_message_ids``: (id, parentId) of a record proven to be a valid plain
# message entry, or None (the record then takes parse_record and the schema).
PlainMessageIds: TypeAlias = Callable[[bytes], "tuple[str, str | None] | None"]
# ``_messages_block.plain_message_block``: the ids, parentIds and lengths of a chunk's whole
# lines, each proven a valid plain message entry, or None (its lines then go one by one).
PlainMessageBlock: TypeAlias = Callable[[bytes, list[bytes]], "MessageBlock | None"]
# The fast mode keeps the bodies a read is about to project from its validating pass
# (``_bodies_fast.KeptBodies``); the readable mode reads each of them again.
KEEP_PARSED_BODIES: Final = not READABLE

if READABLE:
    from ._entries import EntryList as EntryTable
    from ._records import dumps_json, encode_record, loads_json, parse_record
    from ._schema import validate_entry, validate_header
else:
    from ._entries_fast import ColumnTable as EntryTable  # type: ignore[assignment]
    from ._json_fast import loads_json  # the adapter's request lines (issue 27)
    from ._records_fast import dumps_json, encode_record, parse_record
    from ._schema_fast import validate_entry, validate_header


@functools.cache
def typed_message_lane() -> PlainMessageIds | None:
    """``_messages_typed.plain_message_ids`` in the fast mode, None in the readable one (which
    reads every record through parse_record and the schema). msgspec is imported on the first
    read that asks, never by a command that reads no session."""
    if READABLE:
        return None
    from ._messages_typed import plain_message_ids

    return plain_message_ids


# The typed lane's value is throughput: importing msgspec and the lane costs about 10 ms, and
# the lane saves about 3 us of a plain message entry of 650 bytes (4-5 ns a byte; measured
# 2026-12-03, docs/results/2026-12-03-parallel-run.md), so it pays for itself from about 2 MiB.
# A smaller read takes parse_record and the schema, with the same results (the agreement tests
# of tests/test_messages_typed.py), and a small validate never imports msgspec (issue 26).
TYPED_LANE_MIN_BYTES: Final = 2 << 20


def typed_lane_pays(size: int) -> bool:
    """Whether a read of ``size`` bytes should take the typed lane: from TYPED_LANE_MIN_BYTES,
    or at any size once an earlier read of this process has imported it (a long-lived reader
    pays for the import once)."""
    return size >= TYPED_LANE_MIN_BYTES or typed_message_lane.cache_info().currsize > 0


@functools.cache
def typed_block_lane() -> PlainMessageBlock | None:
    """``_messages_block.plain_message_block`` in the fast mode, None in the readable one;
    imported on the first read that asks, as :func:`typed_message_lane`."""
    if READABLE:
        return None
    from ._messages_block import plain_message_block

    return plain_message_block
