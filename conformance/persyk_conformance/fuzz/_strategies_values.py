"""Hypothesis strategies for the values inside records: ids, timestamps, JSON values, content
blocks, messages and the members of each entry type (schemas/v1).

These are the strategies the project's own property tests used
(tests/reference/fast/test_schema_agreement.py, tests/reference/fast/test_records_properties.py),
moved here so that implementers, the tests and the fuzzer draw from one vocabulary. Every value
drawn is valid where the schemas put it; the graph (parents, targets, recordings) is arranged by
``_strategies_sessions``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = [
    "ENTRY_TYPES",
    "MAX_SAFE_INTEGER",
    "asset_refs",
    "available_assets",
    "blocks",
    "contents",
    "entry_members",
    "epoch_ms",
    "headers",
    "ids",
    "json_scalars",
    "json_values",
    "messages",
    "scalar_text",
    "timestamps",
    "valid_entries",
]

MAX_SAFE_INTEGER = 2**53 - 1  # I-JSON; EpochMs and SafeInteger (schemas/v1/defs.json)

# ID-1: 1 to 128 characters, first alphanumeric (kept short here; near_limit_entries reaches 128).
ids = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,8}\Z")
# ENV-4, ENV-5: the RFC 3339 profile, every offset form and fraction length.
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
epoch_ms = st.integers(0, MAX_SAFE_INTEGER)  # MSG-5
# Unicode scalar values only: no surrogate code points (REC-5, REC-17).
scalar_text = st.text(st.characters(codec="utf-8"), max_size=12)
_short_text = st.text(max_size=6)
_non_empty = st.text(min_size=1, max_size=6)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | scalar_text
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(scalar_text, children, max_size=4)
    ),
    max_leaves=20,
)
_small_json = st.recursive(
    st.none() | st.booleans() | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER) | _short_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_short_text, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def available_assets(draw: st.DrawFn, *, media: bool = False) -> dict[str, Any]:
    """An available asset reference (AST-2..AST-6); ``media``: with byteRange and encoding."""
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
    optional={"source": st.dictionaries(_short_text, _small_json, max_size=2)},
)


@st.composite
def _audio_blocks(draw: st.DrawFn) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "audio", "asset": draw(asset_refs)}
    if draw(st.booleans()):
        block["recordingId"] = draw(ids)
    if draw(st.booleans()):
        start = draw(st.integers(0, 10_000))
        block["startMs"], block["endMs"] = start, start + draw(st.integers(1, 10_000))
    return block


# BLK: every known block type, and unknown ones (stored unchanged, BLK-8).
blocks = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("text"), "text": scalar_text}, optional={"textSignature": _short_text}
    ),
    st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": scalar_text},
        optional={"thinkingSignature": _short_text, "redacted": st.booleans()},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("toolCall"),
            "id": _short_text,
            "name": _short_text,
            "arguments": st.dictionaries(_short_text, _small_json, max_size=2),
        },
        optional={"thoughtSignature": _short_text},
    ),
    st.fixed_dictionaries({"type": st.just("image"), "asset": asset_refs}),
    _audio_blocks(),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["video", "sticker", "Text"])},
        optional={"data": _small_json},
    ),
)
contents = st.lists(blocks, max_size=3)
# MSG: every role.
messages = st.one_of(
    st.fixed_dictionaries(
        {"role": st.just("user"), "content": contents, "timestamp": epoch_ms},
    ),
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": contents, "timestamp": epoch_ms},
        optional={
            "provider": _short_text,
            "model": _short_text,
            "usage": st.dictionaries(_short_text, _small_json, max_size=2),
            "stopReason": _short_text,
            "replay": st.builds(dict),
        },
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("toolResult"),
            "toolCallId": _short_text,
            "toolName": _short_text,
            "isError": st.booleans(),
            "content": contents,
            "timestamp": epoch_ms,
        },
        optional={"details": _small_json},
    ),
)
_direction_and_observation = st.sampled_from(
    [("outgoing", "send_attempt"), ("outgoing", "send_failed"), ("incoming", "received")]
)
_safe_ints = st.integers(0, MAX_SAFE_INTEGER)


@st.composite
def _realtime_fields(draw: st.DrawFn) -> dict[str, Any]:
    direction, observation = draw(_direction_and_observation)
    fields: dict[str, Any] = {
        "connectionId": draw(ids),
        "direction": direction,
        "observation": observation,
        "observedAt": draw(timestamps),
        "sequence": draw(_safe_ints),
        "payload": {"type": draw(_short_text)},
    }
    if draw(st.booleans()):
        fields["media"] = [{"pointer": "/delta", "asset": draw(available_assets(media=True))}]
    if draw(st.booleans()):
        fields["redactions"] = draw(st.lists(st.sampled_from(["", "/a", "/a~0b/~1/0"])))
    return fields


@st.composite
def _recording_started_fields(draw: st.DrawFn) -> dict[str, Any]:
    recording_id = draw(ids)
    asset = {"status": "available", "path": f"assets/{recording_id}.wav", "mimeType": "audio/wav"}
    return {"recordingId": recording_id, "asset": asset}


@st.composite
def _gaps(draw: st.DrawFn) -> dict[str, Any]:
    start = draw(st.integers(0, 10_000))
    return {"startMs": start, "endMs": start + draw(st.integers(1, 100))}


# ENT: the members of each of the twelve entry types (ENV-2), each valid on its own.
entry_members: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "message": st.fixed_dictionaries({"message": messages}),
    "custom": st.fixed_dictionaries({"customType": _non_empty, "data": json_values}),
    "custom_message": st.fixed_dictionaries(
        {"customType": _non_empty, "content": contents, "display": st.booleans()},
        optional={"details": _small_json},
    ),
    "session_info": st.fixed_dictionaries(
        {}, optional={"name": scalar_text, "archived": st.booleans()}
    ),
    "label": st.fixed_dictionaries({"targetId": ids, "label": st.none() | scalar_text}),
    "model_change": st.fixed_dictionaries(
        {"provider": _non_empty, "modelId": _non_empty}, optional={"api": _short_text}
    ),
    "api_connection": st.fixed_dictionaries(
        {
            "connectionId": ids,
            "provider": _short_text,
            "endpoint": st.sampled_from(["https://h.example", "wss://h.example:443/v1/rt"]),
            "requestedModel": _short_text,
            "api": _short_text,
            "originId": st.none() | ids,
        }
    ),
    "realtime_event": _realtime_fields(),
    "recording.started": _recording_started_fields(),
    "recording.finished": st.fixed_dictionaries(
        {
            "recordingId": ids,
            "durationMs": _safe_ints,
            "outcome": st.sampled_from(["complete", "incomplete"]),
        },
        optional={"gaps": st.lists(_gaps(), max_size=2)},
    ),
    "recording.interrupted": st.fixed_dictionaries(
        {"recordingId": ids, "reason": _non_empty}, optional={"durationMs": _safe_ints}
    ),
    "message.removed": st.fixed_dictionaries({"targetId": ids}),
}
# The twelve types, the simplest first: a failing example shrinks towards the front.
ENTRY_TYPES: tuple[str, ...] = (
    "session_info", "custom", "message", "custom_message", "label", "message.removed",
    "model_change", "api_connection", "realtime_event", "recording.started",
    "recording.finished", "recording.interrupted",
)
assert set(ENTRY_TYPES) == set(entry_members)


@st.composite
def valid_entries(draw: st.DrawFn) -> dict[str, Any]:
    """One entry valid on its own (schemas/v1/entry.json): any type, any parent. Its graph
    references (parentId, targetId, recordingId) are arbitrary: use ``sessions`` for a file."""
    entry_type = draw(st.sampled_from(ENTRY_TYPES))
    envelope = {
        "type": entry_type,
        "id": draw(ids),
        "parentId": draw(st.none() | ids),
        "timestamp": draw(timestamps),
    }
    return {**envelope, **draw(entry_members[entry_type])}


# HDR-3..HDR-6: a header has exactly these four members.
headers = st.fixed_dictionaries(
    {"type": st.just("session"), "version": st.just(1), "id": ids, "timestamp": timestamps}
)
