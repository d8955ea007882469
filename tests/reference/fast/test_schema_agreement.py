"""The fast path (jsonschema-rs, ``_schema_fast``) and the readable validator (python-jsonschema,
``_schema``) implement one contract.

Entries are generated valid, then usually broken by one or two random edits near the places the
schemas constrain; both validators must reach the same verdict on every one of them.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import jsonschema_rs
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from persyk_conformance.strategies import headers, json_values, valid_entries
from persyk_session.fast import _schema_fast
from persyk_session.read import _schema
from persyk_session.read._schema import (
    KNOWN_ENTRY_TYPES,
    _validators,
    validate_entry,
    validate_header,
)

SETTINGS = settings(max_examples=200, deadline=None, database=None)

# The value and entry strategies are the package's own (persyk_conformance.strategies), which
# implementers use too; only the edits below are this test's.
texts = st.text(max_size=6)


# Replacement values chosen near the schemas' boundaries, plus arbitrary JSON.
# fmt: off
edge_values = st.one_of(
    st.sampled_from(
        [
            None, True, False, 0, 1, -1, 1.0, 1.5, 2**53 - 1, 2**53, "", "a", "a\n", "-a",
            "assets/x.wav", "assets/../x", "assets/.x", "2026-02-30T00:00:00Z",
            "2026-01-01T00:00:00Z", "2026-01-01T00:00:00", "https://h.example/", "wss://u@h/",
            "https://h/?k=v", "/a~1", "/a~2", "audio/wav", "png", "received", "send_attempt",
            "outgoing", "incoming", "available", "missing", "text", "image", "audio", "toolCall",
            "thinking", "user", "assistant", "toolResult", "complete", {}, [],
            {"type": "text"}, {"status": "missing"},
        ]
    ),
    json_values,
)
edge_keys = st.sampled_from(
    ["type", "id", "extra", "status", "path", "byteRange", "startMs", "endMs", "reason",
     "details", "text", "asset", "role", "media", "gaps", "encoding", "label", "data"]
)
# fmt: on


def containers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every object and array inside ``value``, ``value`` itself included."""
    found = []
    if isinstance(value, dict):
        found.append(path)
        for key, item in value.items():
            found.extend(containers(item, (*path, key)))
    elif isinstance(value, list):
        found.append(path)
        for index, item in enumerate(value):
            found.extend(containers(item, (*path, index)))
    return found


def fresh(value: Any) -> Any:
    # The sampled edge values are shared objects: a later edit of the same record could mutate
    # one in place and change what the strategy generates next (hypothesis then reports
    # inconsistent data generation). Each use gets its own copy.
    return copy.deepcopy(value)


@st.composite
def edited(draw: st.DrawFn, base: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    record = copy.deepcopy(draw(base))
    for _ in range(draw(st.integers(0, 2))):
        path = draw(st.sampled_from(containers(record)))
        target: Any = record
        for step in path:
            target = target[step]
        if isinstance(target, dict):
            action = draw(st.sampled_from(["replace", "delete", "add"]))
            if action == "add" or not target:
                target[draw(edge_keys | texts)] = fresh(draw(edge_values))
            elif action == "delete":
                del target[draw(st.sampled_from(sorted(target)))]
            else:
                target[draw(st.sampled_from(sorted(target)))] = fresh(draw(edge_values))
        elif target:
            target[draw(st.integers(0, len(target) - 1))] = fresh(draw(edge_values))
        else:
            target.append(fresh(draw(edge_values)))
    return record


@SETTINGS
@given(valid_entries())
def test_generated_valid_entry_is_accepted(record: dict[str, Any]) -> None:
    assert validate_entry(record) == []


@functools.cache
def rust_entry_schema() -> jsonschema_rs.Validator:
    """jsonschema-rs over the whole entry.json (the fast path asks each type's definition)."""
    schemas = _schema.schemas()
    registry = jsonschema_rs.Registry([(schema["$id"], schema) for schema in schemas.values()])
    return jsonschema_rs.validator_for(schemas["entry"], registry=registry)


@SETTINGS
@given(edited(valid_entries()))
def test_fast_path_and_oracle_agree_on_entries(record: dict[str, Any]) -> None:
    assert rust_entry_schema().is_valid(record) == _validators().entry.is_valid(record)
    assert _schema_fast.validate_entry(record) == _schema.validate_entry(record)


@SETTINGS
@given(edited(valid_entries()))
def test_type_dispatch_agrees_with_the_entry_schema(record: dict[str, Any]) -> None:
    # validate_entry's fast path asks the entry type's own definition, not entry.json.
    entry_type = record.get("type")
    assume(isinstance(entry_type, str) and entry_type in KNOWN_ENTRY_TYPES)
    by_type = _schema_fast._validators().entry_by_type[str(entry_type)]
    assert by_type.is_valid(record) == rust_entry_schema().is_valid(record)


@SETTINGS
@given(edited(valid_entries()))
def test_every_rejected_entry_has_attributed_diagnostics(record: dict[str, Any]) -> None:
    diagnostics = validate_entry(record)
    if not _validators().entry.is_valid(record):
        assert diagnostics
    # The root pointer is only used when the oracle finds nothing the fast path rejected.
    assert all(d.pointer for d in diagnostics)



@SETTINGS
@given(edited(headers))
def test_fast_path_and_oracle_agree_on_headers(record: dict[str, Any]) -> None:
    rust_valid = _schema_fast._validators().header.is_valid(record)
    assert rust_valid == _validators().header.is_valid(record)
    assert _schema_fast.validate_header(record) == _schema.validate_header(record)
    if not rust_valid:
        assert validate_header(record)
