"""The fast engine's batch lane for plain message entries (``fast/_items_fast.plain_messages``,
``fast/_batch.ProvenBatch``) against the readable definition.

The lane may decline any record (it then takes the schema and graph checks as before); what it
must never do is call a record plain that ``_schema.validate_entry`` (python-jsonschema, the
plain definition) rejects, nor change a plan: the same batch, planned with the lane's proofs and
without them, writes the same bytes, acknowledges the same ids, stops at the same diagnostic and
leaves the same index.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import orjson
import pytest
from _paths import CHECKOUT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_conformance.strategies import json_values, messages, timestamps
from persyk_maintainers.bench._data import conversation_records
from persyk_maintainers.bench._writes import _user
from persyk_session.fast import FAST_ENGINE
from persyk_session.fast._messages_block import ID_CORE, TIMESTAMP_CORE
from persyk_session.read import _schema
from persyk_session.read._context import LeafSelector
from persyk_session.read._engine import READABLE_ENGINE, Engine
from persyk_session.read._index import IndexBuilder
from persyk_session.write._append_plan import AppendPlan, BatchItem, _proofs, plan_append
from persyk_session.write._append_plan import items_from_objects as items_of_engine

# The fast engine without its batch lane: every record takes the careful path.
WITHOUT_LANE = dataclasses.replace(FAST_ENGINE, batch=READABLE_ENGINE.batch)


def items_from_objects(records: Sequence[Any]) -> list[BatchItem]:
    return items_of_engine(records, engine=FAST_ENGINE)


def _plain_proofs(builder: IndexBuilder, items: Sequence[BatchItem]) -> list[bool]:
    return _proofs(builder, items, FAST_ENGINE.batch)


def _new_builder() -> IndexBuilder:
    return IndexBuilder(FAST_ENGINE.new_table(), schema=FAST_ENGINE.schema)

SETTINGS = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
HEADER = {"type": "session", "version": 1, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z"}
ids = st.sampled_from(["a", "b", "c", "e1", "x.y_z-9"])


def _shuffled(draw: st.DrawFn, members: dict[str, Any]) -> dict[str, Any]:
    keys = draw(st.permutations(sorted(members)))
    return {key: members[key] for key in keys}


@st.composite
def message_entries(draw: st.DrawFn) -> dict[str, Any]:
    """Message entries in any member order (the lane, unlike the read lane, accepts any)."""
    return _shuffled(draw, {
        "type": "message", "id": draw(ids), "parentId": draw(st.none() | ids),
        "timestamp": draw(timestamps), "message": _shuffled(draw, draw(messages)),
    })


@st.composite
def altered_entries(draw: st.DrawFn) -> dict[str, Any]:
    """A message entry with one member (of the envelope or the message) replaced by any JSON
    value, removed, or added: types, required members, enumerations, unknown members."""
    record = draw(message_entries())
    where = record["message"] if draw(st.booleans()) else record
    key = draw(st.sampled_from([*sorted(where), "extra"]))
    if draw(st.booleans()):
        where.pop(key, None)
    else:
        where[key] = draw(json_values)
    return record


def _proofs_of(records: list[dict[str, Any]]) -> list[bool]:
    return _plain_proofs(_new_builder(), items_from_objects(records))


def _plain(record: dict[str, Any]) -> bool:
    return _proofs_of([record])[0]


def _assert_sound(records: list[dict[str, Any]]) -> None:
    items = items_from_objects(records)
    for item, plain in zip(items, _plain_proofs(_new_builder(), items), strict=True):
        if plain:
            assert item.value is not None and item.value["type"] == "message"
            assert _schema.validate_entry(item.value) == []


@SETTINGS
@given(message_entries())
def test_lane_calls_plain_only_what_the_readable_schema_accepts(record: dict[str, Any]) -> None:
    _assert_sound([record])


@SETTINGS
@given(altered_entries())
def test_lane_is_sound_on_altered_entries(record: dict[str, Any]) -> None:
    _assert_sound([record])


@pytest.mark.slow
@SETTINGS
@given(st.lists(message_entries() | altered_entries(), min_size=2, max_size=6))
def test_lane_is_sound_record_by_record_in_a_batch(records: list[dict[str, Any]]) -> None:
    # The patterns are matched once per batch: one record's bad id or timestamp must decline
    # that record, and only that one.
    _assert_sound(records)
    assert _proofs_of(records) == [_plain(record) for record in records]


@pytest.mark.parametrize("bad_id", ["-e1", "a\nb", "", "e" * 129, "é"],
                         ids=["leading-dash", "lf-inside", "empty", "too-long", "not-ascii"])
def test_a_bad_id_in_a_batch_declines_that_record_alone(bad_id: str) -> None:
    records = [_user("a", None), _user(bad_id, "a"), _user("b", "a"), _user("c", bad_id)]
    assert _proofs_of(records) == [True, False, True, False]


def test_the_lanes_patterns_are_the_schemas() -> None:
    defs = orjson.loads((CHECKOUT / "schemas/v1/defs.json").read_bytes())
    patterns = {name: d.get("pattern") for name, d in defs["$defs"].items()}
    assert f"^{ID_CORE}(?![\\s\\S])" == patterns["Id"]
    assert f"^{TIMESTAMP_CORE}(?![\\s\\S])" == patterns["Timestamp"]


def test_lane_takes_the_bench_records_in_their_member_order() -> None:
    # The bench's records put the message's timestamp before its content (the read lane, which
    # needs msgspec's own member order, declines them); the lane is worth its place only if it
    # takes them and the generator's conversation records.
    conversation = [orjson.loads(line) for line in conversation_records(random.Random(1), 50)]
    assert all(_plain(record) for record in [_user("n1", "n0"), *conversation])


BASE: dict[str, Any] = {
    "type": "message", "id": "e1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
    "message": {"role": "user", "timestamp": 1, "content": [{"type": "text", "text": "hi"}]},
}


def _edited(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    record = orjson.loads(orjson.dumps(BASE))
    where = record
    for key in path[:-1]:
        where = where[key]
    if value is _REMOVE:
        del where[path[-1]]
    else:
        where[path[-1]] = value
    return record


_REMOVE = object()
# Schema-valid or not, each is a record the lane must leave to the schema and graph checks.
DECLINED = [
    ("message-timestamp-missing", ("message", "timestamp"), _REMOVE),  # MSG-2 (required)
    ("impossible-day", ("timestamp",), "2026-02-30T00:00:00.000Z"),  # ENV-5
    ("day-29-valid", ("timestamp",), "2026-01-29T00:00:00.000Z"),  # ENV-5 needs the calendar
    ("image-block", ("message", "content"), [{"type": "image"}]),
    ("unknown-block", ("message", "content"), [{"type": "sticker"}]),
    ("extra-member", ("extra",), 1),
    ("not-a-message", ("type",), "custom_message"),
    ("timestamp-float", ("message", "timestamp"), 1.5),
    ("id-pattern", ("id",), "-e1"),
]


def test_lane_takes_the_base_record() -> None:
    assert _plain(BASE)


@pytest.mark.parametrize(("path", "value"), [(p, v) for _, p, v in DECLINED],
                         ids=[i for i, _, _ in DECLINED])
def test_lane_declines(path: tuple[str, ...], value: Any) -> None:
    assert not _plain(_edited(path, value))


# --- plans with and without the lane -----------------------------------------------------------

COMMITTED = [_user("e1", None), _user("x.y_z-9", "e1")]


def _builder() -> IndexBuilder:
    builder = _new_builder()
    assert builder.add_header(HEADER) == []
    for line, record in enumerate(COMMITTED, start=2):
        assert builder.add_entry(record, line=line, offset=100 * line, length=99) == []
    return builder


def _plan(items: list[BatchItem], engine: Engine = FAST_ENGINE) -> tuple[AppendPlan, Any]:
    """The plan of ``items`` after ``COMMITTED``, and the index it leaves."""
    builder = _builder()
    committed = {r["id"]: r for r in COMMITTED}
    plan = plan_append(
        builder, items, leaf=LeafSelector.default(), end_offset=1000, next_line=4,
        load_committed=lambda meta: committed[meta.id], engine=engine)
    index = builder.build()
    entries = [index.by_id.get(i) for i in ["a", "b", "c", "e1", "x.y_z-9"]]
    return plan, (entries, index.diagnostics, index.lines, index.default_leaf)


@pytest.mark.slow
@SETTINGS
@given(st.lists(message_entries() | altered_entries(), max_size=6))
def test_a_plan_is_the_same_with_the_lane_and_without(records: list[dict[str, Any]]) -> None:
    # Ids and parents from a small set: duplicates, retries, conflicts, missing parents and
    # parents earlier in the batch all occur.
    items = items_from_objects(records)
    assert _plan(items) == _plan(items, WITHOUT_LANE)


def test_a_retry_of_a_committed_id_is_left_out_of_the_proofs() -> None:
    # APP-12: compared with the committed record, never checked; the proof would be wasted.
    items = items_from_objects([COMMITTED[1], _user("a", "e1")])
    assert _plain_proofs(_builder(), items) == [False, True]


def test_a_plain_record_under_a_missing_parent_is_parent_not_found() -> None:
    items = items_from_objects([_user("a", None), _user("b", "nowhere")])
    assert _plain_proofs(_builder(), items) == [True, True]
    plan, _ = _plan(items)
    assert plan.committed == ("a",)
    assert plan.error is not None and str(plan.error.code) == "PARENT_NOT_FOUND"
    assert plan.error.line == 5
