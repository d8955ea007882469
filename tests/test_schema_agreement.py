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
from persyk_session import _schema, _schema_fast
from persyk_session._schema import KNOWN_ENTRY_TYPES, _validators, validate_entry, validate_header

SETTINGS = settings(max_examples=200, deadline=None, database=None)

ids = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,8}\Z")
timestamps = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}{}".format,
    st.integers(1970, 2100),
    st.integers(1, 12),
    st.integers(1, 28),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.sampled_from(["", ".1", ".123", ".123456789"]),
    st.sampled_from(["Z", "+00:00", "-05:30", "+14:00"]),
)
epoch_ms = st.integers(0, 2**53 - 1)
texts = st.text(max_size=6)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def available_assets(draw: st.DrawFn, *, media: bool = False) -> dict[str, Any]:
    asset: dict[str, Any] = {
        "status": "available",
        "path": "assets/" + draw(ids),
        "mimeType": draw(st.sampled_from(["audio/wav", "image/png", "application/octet-stream"])),
    }
    if media or draw(st.booleans()):
        start = draw(st.integers(0, 1000))
        asset["byteRange"] = {"start": start, "end": start + draw(st.integers(1, 1000))}
    if media or draw(st.booleans()):
        asset["encoding"] = draw(st.sampled_from(["pcm_s16le", "base64"]))
    if draw(st.booleans()):
        asset["sha256"] = draw(st.text("0123456789abcdef", min_size=64, max_size=64))
    return asset


asset_refs = available_assets() | st.fixed_dictionaries(
    {"status": st.just("missing"), "reason": st.text(min_size=1, max_size=4)},
    optional={"source": st.dictionaries(texts, json_values, max_size=2)},
)


@st.composite
def audio_blocks(draw: st.DrawFn) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "audio", "asset": draw(asset_refs)}
    if draw(st.booleans()):
        block["recordingId"] = draw(ids)
    if draw(st.booleans()):
        start = draw(st.integers(0, 10_000))
        block["startMs"], block["endMs"] = start, start + draw(st.integers(1, 10_000))
    return block


blocks = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("text"), "text": texts}, optional={"textSignature": texts}
    ),
    st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": texts},
        optional={"thinkingSignature": texts, "redacted": st.booleans()},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("toolCall"),
            "id": texts,
            "name": texts,
            "arguments": st.dictionaries(texts, json_values, max_size=2),
        },
        optional={"thoughtSignature": texts},
    ),
    st.fixed_dictionaries({"type": st.just("image"), "asset": asset_refs}),
    audio_blocks(),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["video", "sticker", "Text"])},
        optional={"data": json_values},
    ),
)
contents = st.lists(blocks, max_size=3)
messages = st.one_of(
    st.fixed_dictionaries(
        {"role": st.just("user"), "content": contents, "timestamp": epoch_ms},
    ),
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": contents, "timestamp": epoch_ms},
        optional={
            "provider": texts,
            "model": texts,
            "usage": st.dictionaries(texts, json_values, max_size=2),
            "stopReason": texts,
            "replay": st.builds(dict),
        },
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("toolResult"),
            "toolCallId": texts,
            "toolName": texts,
            "isError": st.booleans(),
            "content": contents,
            "timestamp": epoch_ms,
        },
        optional={"details": json_values},
    ),
)
direction_and_observation = st.sampled_from(
    [("outgoing", "send_attempt"), ("outgoing", "send_failed"), ("incoming", "received")]
)
non_empty = st.text(min_size=1, max_size=6)
safe_ints = st.integers(0, 2**53 - 1)


@st.composite
def realtime_fields(draw: st.DrawFn) -> dict[str, Any]:
    direction, observation = draw(direction_and_observation)
    fields: dict[str, Any] = {
        "connectionId": draw(ids),
        "direction": direction,
        "observation": observation,
        "observedAt": draw(timestamps),
        "sequence": draw(safe_ints),
        "payload": {"type": draw(texts)},
    }
    if draw(st.booleans()):
        fields["media"] = [{"pointer": "/delta", "asset": draw(available_assets(media=True))}]
    if draw(st.booleans()):
        fields["redactions"] = draw(st.lists(st.sampled_from(["", "/a", "/a~0b/~1/0"])))
    return fields


@st.composite
def recording_started_fields(draw: st.DrawFn) -> dict[str, Any]:
    recording_id = draw(ids)
    asset = {"status": "available", "path": f"assets/{recording_id}.wav", "mimeType": "audio/wav"}
    return {"recordingId": recording_id, "asset": asset}


@st.composite
def gaps(draw: st.DrawFn) -> dict[str, Any]:
    start = draw(st.integers(0, 10_000))
    return {"startMs": start, "endMs": start + draw(st.integers(1, 100))}


type_fields: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "message": st.fixed_dictionaries({"message": messages}),
    "custom": st.fixed_dictionaries({"customType": non_empty, "data": json_values}),
    "custom_message": st.fixed_dictionaries(
        {"customType": non_empty, "content": contents, "display": st.booleans()},
        optional={"details": json_values},
    ),
    "session_info": st.fixed_dictionaries({}, optional={"name": texts, "archived": st.booleans()}),
    "label": st.fixed_dictionaries({"targetId": ids, "label": st.none() | texts}),
    "model_change": st.fixed_dictionaries(
        {"provider": non_empty, "modelId": non_empty}, optional={"api": texts}
    ),
    "api_connection": st.fixed_dictionaries(
        {
            "connectionId": ids,
            "provider": texts,
            "endpoint": st.sampled_from(["https://h.example", "wss://h.example:443/v1/rt"]),
            "requestedModel": texts,
            "api": texts,
            "originId": st.none() | ids,
        }
    ),
    "realtime_event": realtime_fields(),
    "recording.started": recording_started_fields(),
    "recording.finished": st.fixed_dictionaries(
        {
            "recordingId": ids,
            "durationMs": safe_ints,
            "outcome": st.sampled_from(["complete", "incomplete"]),
        },
        optional={"gaps": st.lists(gaps(), max_size=2)},
    ),
    "recording.interrupted": st.fixed_dictionaries(
        {"recordingId": ids, "reason": non_empty}, optional={"durationMs": safe_ints}
    ),
    "message.removed": st.fixed_dictionaries({"targetId": ids}),
}


@st.composite
def valid_entries(draw: st.DrawFn) -> dict[str, Any]:
    entry_type = draw(st.sampled_from(sorted(type_fields)))
    envelope = {
        "type": entry_type,
        "id": draw(ids),
        "parentId": draw(st.none() | ids),
        "timestamp": draw(timestamps),
    }
    return {**envelope, **draw(type_fields[entry_type])}


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


headers = st.fixed_dictionaries(
    {"type": st.just("session"), "version": st.just(1), "id": ids, "timestamp": timestamps}
)


@SETTINGS
@given(edited(headers))
def test_fast_path_and_oracle_agree_on_headers(record: dict[str, Any]) -> None:
    rust_valid = _schema_fast._validators().header.is_valid(record)
    assert rust_valid == _validators().header.is_valid(record)
    assert _schema_fast.validate_header(record) == _schema.validate_header(record)
    if not rust_valid:
        assert validate_header(record)
