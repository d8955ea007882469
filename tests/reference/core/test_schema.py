"""schemas/v1 and persyk_session.read._schema: the record contract and its error codes.

Every rejection names the exact list of (code, pointer) it must produce, so a cascade of extra
diagnostics fails the test as surely as a missing one.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from persyk_session import Code
from persyk_session.fast._schema_fast import _beyond_schema_may_apply
from persyk_session.read._schema import (
    KNOWN_BLOCK_TYPES,
    KNOWN_ENTRY_TYPES,
    _validators,
    load_schema,
    schema_files,
    validate_entry,
    validate_header,
)

# The seed's user-only example, byte for byte.
SEED_HEADER_LINE = (
    b'{"type":"session","version":1,"id":"00000000-0000-4000-8000-000000000002",'
    b'"timestamp":"2026-01-01T00:00:00.000Z"}'
)
SEED_MESSAGE_LINE = (
    b'{"type":"message","id":"user-message-1","parentId":null,'
    b'"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user",'
    b'"timestamp":1767225601000,"content":[{"type":"text",'
    b'"text":"User-only finalized transcription"}]}}'
)

ENVELOPE = {"id": "e2", "parentId": "e1", "timestamp": "2026-01-01T00:00:01.000Z"}
WAV = {"status": "available", "path": "assets/r1.wav", "mimeType": "audio/wav"}
PNG = {"status": "available", "path": "assets/p1.png", "mimeType": "image/png"}
MEDIA = {
    "pointer": "/delta",
    "asset": {
        "status": "available",
        "path": "assets/protocol-1.bin",
        "mimeType": "application/octet-stream",
        "byteRange": {"start": 0, "end": 10},
        "encoding": "base64",
    },
}


def entry(entry_type: str, **fields: Any) -> dict[str, Any]:
    return {"type": entry_type, **copy.deepcopy(ENVELOPE), **copy.deepcopy(fields)}


def user_message(*blocks: Any) -> dict[str, Any]:
    return entry("message", message={"role": "user", "content": list(blocks), "timestamp": 1})


# One minimal valid entry per type: only the required fields.
MINIMAL: dict[str, dict[str, Any]] = {
    "message": user_message(),
    "custom": entry("custom", customType="x", data=None),
    "custom_message": entry("custom_message", customType="x", content=[], display=False),
    "session_info": entry("session_info"),
    "label": entry("label", targetId="e1", label=None),
    "model_change": entry("model_change", provider="openai", modelId="gpt"),
    "api_connection": entry(
        "api_connection",
        connectionId="c1",
        provider="openai",
        endpoint="wss://api.example.com/v1/realtime",
        requestedModel="gpt",
        api="realtime",
        originId=None,
    ),
    "realtime_event": entry(
        "realtime_event",
        connectionId="c1",
        direction="incoming",
        observation="received",
        observedAt="2026-01-01T00:00:01Z",
        sequence=0,
        payload={"type": "session.created"},
    ),
    "recording.started": entry("recording.started", recordingId="r1", asset=WAV),
    "recording.finished": entry(
        "recording.finished", recordingId="r1", durationMs=0, outcome="complete"
    ),
    "recording.interrupted": entry("recording.interrupted", recordingId="r1", reason="crash"),
    "message.removed": entry("message.removed", targetId="e1"),
}


def changed(base: dict[str, Any], *edits: tuple[tuple[str | int, ...], Any]) -> dict[str, Any]:
    """A copy of ``base`` with each (path, value) set; the value ``DROP`` deletes the key."""
    out = copy.deepcopy(base)
    for path, value in edits:
        parent: Any = out
        for step in path[:-1]:
            parent = parent[step]
        if value is DROP:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    return out


DROP = object()


def faults(diagnostics: list[Any]) -> list[tuple[Code, str | None]]:
    return [(d.code, d.pointer) for d in diagnostics]


# --- the schema files ------------------------------------------------------------------------

SCHEMA_NAMES = [f.name for f in schema_files()]


def test_schema_files_are_found_as_package_data() -> None:
    assert {"header.json", "entry.json", "entries.json", "blocks.json"} <= set(SCHEMA_NAMES)


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_file_is_valid_2020_12(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_id_names_its_file(name: str) -> None:
    assert load_schema(name)["$id"] == f"https://persyk.dev/schemas/v1/{name}"


def test_schema_ids_are_unique() -> None:
    ids = [load_schema(name)["$id"] for name in SCHEMA_NAMES]
    assert len(ids) == len(set(ids))


def test_load_schema_accepts_stem_or_file_name() -> None:
    assert load_schema("header") == load_schema("header.json")


def test_load_schema_returns_a_copy() -> None:
    load_schema("header")["properties"].clear()
    assert load_schema("header")["properties"]


def test_known_entry_types_are_the_twelve_v1_types() -> None:
    assert set(MINIMAL) == KNOWN_ENTRY_TYPES


def test_known_block_types_are_the_five_v1_types() -> None:
    assert {"text", "image", "thinking", "toolCall", "audio"} == KNOWN_BLOCK_TYPES


# --- the seed example ------------------------------------------------------------------------


def test_accept_seed_user_only_header() -> None:
    assert validate_header(orjson.loads(SEED_HEADER_LINE)) == []


def test_accept_seed_user_only_message() -> None:
    assert validate_entry(orjson.loads(SEED_MESSAGE_LINE)) == []


# --- header ----------------------------------------------------------------------------------

HEADER = orjson.loads(SEED_HEADER_LINE)

VALID_HEADERS = {
    "seed": HEADER,
    "version-1.0-is-integer-1": changed(HEADER, (("version",), 1.0)),
    "offset-timestamp": changed(HEADER, (("timestamp",), "2026-01-01T01:00:00+01:00")),
    "leap-day": changed(HEADER, (("timestamp",), "2024-02-29T00:00:00Z")),
    "nine-fraction-digits": changed(HEADER, (("timestamp",), "2026-01-01T00:00:00.123456789Z")),
}


@pytest.mark.parametrize("header", VALID_HEADERS.values(), ids=VALID_HEADERS.keys())
def test_accept_header(header: dict[str, Any]) -> None:
    assert validate_header(header) == []


BAD_HEADERS: dict[str, tuple[dict[str, Any], list[tuple[Code, str]]]] = {
    "version-2": (
        changed(HEADER, (("version",), 2)),
        [(Code.HEADER_VERSION_UNSUPPORTED, "/version")],
    ),
    "version-2-hides-other-faults": (
        changed(HEADER, (("version",), 2), (("extra",), 1), (("id",), DROP)),
        [(Code.HEADER_VERSION_UNSUPPORTED, "/version")],
    ),
    "version-0": (
        changed(HEADER, (("version",), 0)),
        [(Code.HEADER_VERSION_UNSUPPORTED, "/version")],
    ),
    "version-string": (changed(HEADER, (("version",), "1")), [(Code.HEADER_INVALID, "/version")]),
    "version-true": (changed(HEADER, (("version",), True)), [(Code.HEADER_INVALID, "/version")]),
    "version-1.5": (changed(HEADER, (("version",), 1.5)), [(Code.HEADER_INVALID, "/version")]),
    "version-missing": (changed(HEADER, (("version",), DROP)), [(Code.HEADER_INVALID, "/version")]),
    "type-not-session": (changed(HEADER, (("type",), "message")), [(Code.HEADER_INVALID, "/type")]),
    "id-missing": (changed(HEADER, (("id",), DROP)), [(Code.HEADER_INVALID, "/id")]),
    "id-bad-form": (changed(HEADER, (("id",), "a b")), [(Code.HEADER_INVALID, "/id")]),
    "timestamp-no-offset": (
        changed(HEADER, (("timestamp",), "2026-01-01T00:00:00")),
        [(Code.HEADER_INVALID, "/timestamp")],
    ),
    "timestamp-february-30": (
        changed(HEADER, (("timestamp",), "2026-02-30T00:00:00Z")),
        [(Code.HEADER_INVALID, "/timestamp")],
    ),
    "extra-field": (changed(HEADER, (("name",), "x")), [(Code.HEADER_INVALID, "/name")]),
    "two-faults-in-pointer-order": (
        changed(HEADER, (("timestamp",), 5), (("id",), 5)),
        [(Code.HEADER_INVALID, "/id"), (Code.HEADER_INVALID, "/timestamp")],
    ),
}


@pytest.mark.parametrize(("header", "expected"), BAD_HEADERS.values(), ids=BAD_HEADERS.keys())
def test_reject_header(header: dict[str, Any], expected: list[tuple[Code, str]]) -> None:
    assert faults(validate_header(header)) == expected


def test_diagnostics_leave_the_line_to_the_caller() -> None:
    (diagnostic,) = validate_header(changed(HEADER, (("id",), DROP)))
    assert diagnostic.line is None


# --- minimal entries and the envelope ---------------------------------------------------------


@pytest.mark.parametrize("record", MINIMAL.values(), ids=MINIMAL.keys())
def test_accept_minimal_entry(record: dict[str, Any]) -> None:
    assert validate_entry(record) == []


@pytest.mark.parametrize("record", MINIMAL.values(), ids=MINIMAL.keys())
def test_reject_unknown_top_level_field_for_every_type(record: dict[str, Any]) -> None:
    assert faults(validate_entry(changed(record, (("extra",), 1)))) == [
        (Code.ENVELOPE_FIELD_UNKNOWN, "/extra")
    ]


@pytest.mark.parametrize("record", MINIMAL.values(), ids=MINIMAL.keys())
def test_reject_missing_parent_id_for_every_type(record: dict[str, Any]) -> None:
    assert faults(validate_entry(changed(record, (("parentId",), DROP)))) == [
        (Code.ENVELOPE_INVALID, "/parentId")
    ]


M = MINIMAL["message"]

ENVELOPE_CASES: dict[str, tuple[dict[str, Any], list[tuple[Code, str]]]] = {
    "type-missing": (changed(M, (("type",), DROP)), [(Code.ENVELOPE_INVALID, "/type")]),
    "type-not-string": (changed(M, (("type",), 1)), [(Code.ENVELOPE_INVALID, "/type")]),
    "type-unknown": (changed(M, (("type",), "note")), [(Code.ENTRY_TYPE_UNKNOWN, "/type")]),
    "type-unknown-hides-other-faults": (
        changed(M, (("type",), "Message"), (("id",), DROP)),
        [(Code.ENTRY_TYPE_UNKNOWN, "/type")],
    ),
    "type-session-after-header": (
        changed(M, (("type",), "session")),
        [(Code.ENTRY_TYPE_UNKNOWN, "/type")],
    ),
    "id-missing": (changed(M, (("id",), DROP)), [(Code.ENVELOPE_INVALID, "/id")]),
    "id-leading-dash": (changed(M, (("id",), "-a")), [(Code.ENVELOPE_INVALID, "/id")]),
    "id-empty": (changed(M, (("id",), "")), [(Code.ENVELOPE_INVALID, "/id")]),
    "id-129-chars": (changed(M, (("id",), "a" * 129)), [(Code.ENVELOPE_INVALID, "/id")]),
    "id-trailing-newline": (changed(M, (("id",), "a\n")), [(Code.ENVELOPE_INVALID, "/id")]),
    "id-number": (changed(M, (("id",), 7)), [(Code.ENVELOPE_INVALID, "/id")]),
    "parent-id-bad-form": (
        changed(M, (("parentId",), "a/b")),
        [(Code.ENVELOPE_INVALID, "/parentId")],
    ),
    "parent-id-number": (changed(M, (("parentId",), 1)), [(Code.ENVELOPE_INVALID, "/parentId")]),
    "timestamp-missing": (
        changed(M, (("timestamp",), DROP)),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-epoch-number": (
        changed(M, (("timestamp",), 1767225601000)),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-lower-case-t": (
        changed(M, (("timestamp",), "2026-01-01t00:00:00Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-lower-case-z": (
        changed(M, (("timestamp",), "2026-01-01T00:00:00z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-space-separator": (
        changed(M, (("timestamp",), "2026-01-01 00:00:00Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-no-offset": (
        changed(M, (("timestamp",), "2026-01-01T00:00:00")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-ten-fraction-digits": (
        changed(M, (("timestamp",), "2026-01-01T00:00:00.1234567890Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-hour-24": (
        changed(M, (("timestamp",), "2026-01-01T24:00:00Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-leap-second": (
        changed(M, (("timestamp",), "2026-12-31T23:59:60Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-month-13": (
        changed(M, (("timestamp",), "2026-13-01T00:00:00Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-february-30": (
        changed(M, (("timestamp",), "2026-02-30T00:00:00Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-february-29-common-year": (
        changed(M, (("timestamp",), "2025-02-29T00:00:00Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-february-29-century": (
        changed(M, (("timestamp",), "2100-02-29T00:00:00Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "timestamp-april-31": (
        changed(M, (("timestamp",), "2026-04-31T00:00:00Z")),
        [(Code.ENVELOPE_INVALID, "/timestamp")],
    ),
    "field-of-another-type": (
        changed(M, (("customType",), "x")),
        [(Code.ENVELOPE_FIELD_UNKNOWN, "/customType")],
    ),
    "unknown-field-name-escaped-in-pointer": (
        changed(M, (("a/b~c",), 1)),
        [(Code.ENVELOPE_FIELD_UNKNOWN, "/a~1b~0c")],
    ),
    "unknown-field-beside-bad-envelope": (
        changed(M, (("id",), "-a"), (("zz",), 1)),
        [(Code.ENVELOPE_INVALID, "/id"), (Code.ENVELOPE_FIELD_UNKNOWN, "/zz")],
    ),
}


@pytest.mark.parametrize(("record", "expected"), ENVELOPE_CASES.values(), ids=ENVELOPE_CASES.keys())
def test_reject_envelope(record: dict[str, Any], expected: list[tuple[Code, str]]) -> None:
    assert faults(validate_entry(record)) == expected


VALID_ENVELOPES = {
    "parent-null": changed(M, (("parentId",), None)),
    "id-128-chars": changed(M, (("id",), "a" * 128)),
    "id-uuid": changed(M, (("id",), "00000000-0000-4000-8000-000000000002")),
    "id-dots-underscores": changed(M, (("id",), "a._-b")),
    "timestamp-negative-offset": changed(M, (("timestamp",), "2026-01-01T00:00:00-05:30")),
    "timestamp-leap-day-2000": changed(M, (("timestamp",), "2000-02-29T00:00:00Z")),
    "timestamp-december-31": changed(M, (("timestamp",), "2026-12-31T23:59:59.9Z")),
}


@pytest.mark.parametrize("record", VALID_ENVELOPES.values(), ids=VALID_ENVELOPES.keys())
def test_accept_envelope(record: dict[str, Any]) -> None:
    assert validate_entry(record) == []


# --- type-specific fields: one table row per field fault --------------------------------------

UM = user_message({"type": "text", "text": "hi"})
ASSISTANT = entry(
    "message",
    message={
        "role": "assistant",
        "content": [{"type": "text", "text": "hi"}],
        "timestamp": 2,
        "provider": "openai",
        "api": "responses",
        "model": "gpt",
        "responseId": "resp-1",
        "usage": {"input": 1},
        "stopReason": "stop",
        "errorMessage": "",
        "replay": {},
    },
)
TOOL_RESULT = entry(
    "message",
    message={
        "role": "toolResult",
        "toolCallId": "call-1",
        "toolName": "read",
        "isError": False,
        "content": [],
        "timestamp": 3,
        "details": [1, "x"],
    },
)
CM = MINIMAL["custom_message"]
API = MINIMAL["api_connection"]
RT = changed(MINIMAL["realtime_event"], (("media",), [MEDIA]), (("redactions",), ["/a/0", ""]))
RS = MINIMAL["recording.started"]
RF = changed(MINIMAL["recording.finished"], (("gaps",), [{"startMs": 0, "endMs": 5}]))

VALID_ENTRIES = {
    "assistant-all-optional-fields": ASSISTANT,
    "tool-result-with-details": TOOL_RESULT,
    "message-timestamp-integral-float": changed(UM, (("message", "timestamp"), 1767225601000.0)),
    "message-timestamp-max-safe": changed(UM, (("message", "timestamp"), 2**53 - 1)),
    "custom-data-object": changed(MINIMAL["custom"], (("data",), {"k": [1]})),
    "custom-type-any-namespace": changed(MINIMAL["custom"], (("customType",), "vendor:x/y")),
    "custom-message-with-details": changed(CM, (("details",), None), (("display",), True)),
    "session-info-empty-name": changed(MINIMAL["session_info"], (("name",), "")),
    "session-info-archived": changed(MINIMAL["session_info"], (("archived",), True)),
    "label-string": changed(MINIMAL["label"], (("label",), "")),
    "model-change-with-api": changed(MINIMAL["model_change"], (("api",), "responses")),
    "api-connection-https-port": changed(API, (("endpoint",), "https://h.example:8443/v1")),
    "api-connection-host-only": changed(API, (("endpoint",), "wss://h.example")),
    # ENT-9 (rev. 2): non-secret query parameters and loopback http/ws are what writers produce.
    "api-connection-query": changed(
        API, (("endpoint",), "wss://api.openai.com/v1/realtime?model=gpt-4o-realtime&intent=x")
    ),
    "api-connection-azure-query": changed(
        API, (("endpoint",), "https://r.openai.azure.com/openai/realtime?api-version=2024-10-01")
    ),
    "api-connection-loopback-ws": changed(API, (("endpoint",), "ws://127.0.0.1:8080/v1")),
    "api-connection-localhost-http": changed(API, (("endpoint",), "http://localhost:11434/api")),
    "api-connection-ipv6-loopback": changed(API, (("endpoint",), "ws://[::1]:9000")),
    "api-connection-port-65535": changed(API, (("endpoint",), "https://h.example:65535/")),
    # MSG-2, MSG-11 (rev. 2): a transcribed user message carries provenance.
    "user-message-provenance": changed(UM, (("message", "provider"), "openai")),
    "api-connection-origin": changed(API, (("originId",), "e1")),
    "realtime-event-media-and-redactions": RT,
    "realtime-event-outgoing-attempt": changed(
        RT, (("direction",), "outgoing"), (("observation",), "send_attempt")
    ),
    "realtime-event-outgoing-failed": changed(
        RT, (("direction",), "outgoing"), (("observation",), "send_failed")
    ),
    "realtime-event-remote-id": changed(RT, (("remoteEventId",), "event_1")),
    "realtime-event-any-payload-type": changed(RT, (("payload",), {"type": "x.y", "n": 1})),
    "recording-started-full-asset": changed(
        RS, (("asset", "sha256"), "0" * 64), (("asset", "byteRange"), {"start": 0, "end": 44})
    ),
    "recording-finished-gaps": changed(
        RF, (("gaps",), [{"startMs": 0, "endMs": 1, "reason": "net"}]), (("outcome",), "incomplete")
    ),
    "recording-interrupted-duration": changed(
        MINIMAL["recording.interrupted"], (("durationMs",), 10)
    ),
}


@pytest.mark.parametrize("record", VALID_ENTRIES.values(), ids=VALID_ENTRIES.keys())
def test_accept_entry(record: dict[str, Any]) -> None:
    assert validate_entry(record) == []


FIELD_CASES: dict[str, tuple[dict[str, Any], list[tuple[Code, str]]]] = {
    # message
    "message-missing": (
        changed(UM, (("message",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/message")],
    ),
    "message-not-object": (changed(UM, (("message",), "hi")), [(Code.MESSAGE_INVALID, "/message")]),
    "message-role-missing": (
        changed(UM, (("message", "role"), DROP)),
        [(Code.MESSAGE_INVALID, "/message/role")],
    ),
    "message-role-system": (
        changed(UM, (("message", "role"), "system")),
        [(Code.MESSAGE_INVALID, "/message/role")],
    ),
    "message-content-missing": (
        changed(UM, (("message", "content"), DROP)),
        [(Code.MESSAGE_INVALID, "/message/content")],
    ),
    "message-content-string": (
        changed(UM, (("message", "content"), "hi")),
        [(Code.MESSAGE_INVALID, "/message/content")],
    ),
    "message-timestamp-missing": (
        changed(UM, (("message", "timestamp"), DROP)),
        [(Code.MESSAGE_INVALID, "/message/timestamp")],
    ),
    "message-timestamp-negative": (
        changed(UM, (("message", "timestamp"), -1)),
        [(Code.MESSAGE_INVALID, "/message/timestamp")],
    ),
    "message-timestamp-fraction": (
        changed(UM, (("message", "timestamp"), 1.5)),
        [(Code.MESSAGE_INVALID, "/message/timestamp")],
    ),
    "message-timestamp-beyond-2-53": (
        changed(UM, (("message", "timestamp"), 2**53)),
        [(Code.MESSAGE_INVALID, "/message/timestamp")],
    ),
    "message-timestamp-iso-string": (
        changed(UM, (("message", "timestamp"), "2026-01-01T00:00:00Z")),
        [(Code.MESSAGE_INVALID, "/message/timestamp")],
    ),
    "user-message-closed": (
        changed(UM, (("message", "flavour"), "openai")),
        [(Code.MESSAGE_INVALID, "/message/flavour")],
    ),
    "user-message-provider-number": (
        changed(UM, (("message", "provider"), 1)),
        [(Code.MESSAGE_INVALID, "/message/provider")],
    ),
    "assistant-provider-number": (
        changed(ASSISTANT, (("message", "provider"), 1)),
        [(Code.MESSAGE_INVALID, "/message/provider")],
    ),
    "assistant-usage-string": (
        changed(ASSISTANT, (("message", "usage"), "1")),
        [(Code.MESSAGE_INVALID, "/message/usage")],
    ),
    "assistant-replay-array": (
        changed(ASSISTANT, (("message", "replay"), [])),
        [(Code.MESSAGE_INVALID, "/message/replay")],
    ),
    "assistant-closed": (
        changed(ASSISTANT, (("message", "toolName"), "x")),
        [(Code.MESSAGE_INVALID, "/message/toolName")],
    ),
    "tool-result-is-error-missing": (
        changed(TOOL_RESULT, (("message", "isError"), DROP)),
        [(Code.MESSAGE_INVALID, "/message/isError")],
    ),
    "tool-result-is-error-string": (
        changed(TOOL_RESULT, (("message", "isError"), "false")),
        [(Code.MESSAGE_INVALID, "/message/isError")],
    ),
    "tool-result-tool-call-id-missing": (
        changed(TOOL_RESULT, (("message", "toolCallId"), DROP)),
        [(Code.MESSAGE_INVALID, "/message/toolCallId")],
    ),
    "tool-result-tool-name-number": (
        changed(TOOL_RESULT, (("message", "toolName"), 1)),
        [(Code.MESSAGE_INVALID, "/message/toolName")],
    ),
    # custom
    "custom-type-empty": (
        changed(MINIMAL["custom"], (("customType",), "")),
        [(Code.ENTRY_FIELDS_INVALID, "/customType")],
    ),
    "custom-data-missing": (
        changed(MINIMAL["custom"], (("data",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/data")],
    ),
    # custom_message
    "custom-message-type-missing": (
        changed(CM, (("customType",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/customType")],
    ),
    "custom-message-content-missing": (
        changed(CM, (("content",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/content")],
    ),
    "custom-message-content-object": (
        changed(CM, (("content",), {})),
        [(Code.ENTRY_FIELDS_INVALID, "/content")],
    ),
    "custom-message-display-string": (
        changed(CM, (("display",), "yes")),
        [(Code.ENTRY_FIELDS_INVALID, "/display")],
    ),
    "custom-message-bad-block": (
        changed(CM, (("content",), [{"type": "text"}])),
        [(Code.BLOCK_INVALID, "/content/0/text")],
    ),
    # session_info
    "session-info-name-number": (
        changed(MINIMAL["session_info"], (("name",), 1)),
        [(Code.ENTRY_FIELDS_INVALID, "/name")],
    ),
    "session-info-archived-string": (
        changed(MINIMAL["session_info"], (("archived",), "no")),
        [(Code.ENTRY_FIELDS_INVALID, "/archived")],
    ),
    # label
    "label-target-missing": (
        changed(MINIMAL["label"], (("targetId",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/targetId")],
    ),
    "label-target-bad-form": (
        changed(MINIMAL["label"], (("targetId",), "../x")),
        [(Code.ENTRY_FIELDS_INVALID, "/targetId")],
    ),
    "label-missing": (
        changed(MINIMAL["label"], (("label",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/label")],
    ),
    "label-number": (
        changed(MINIMAL["label"], (("label",), 1)),
        [(Code.ENTRY_FIELDS_INVALID, "/label")],
    ),
    # model_change
    "model-change-provider-empty": (
        changed(MINIMAL["model_change"], (("provider",), "")),
        [(Code.ENTRY_FIELDS_INVALID, "/provider")],
    ),
    "model-change-model-id-missing": (
        changed(MINIMAL["model_change"], (("modelId",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/modelId")],
    ),
    "model-change-api-number": (
        changed(MINIMAL["model_change"], (("api",), 1)),
        [(Code.ENTRY_FIELDS_INVALID, "/api")],
    ),
    # api_connection
    "api-connection-id-bad-form": (
        changed(API, (("connectionId",), "a b")),
        [(Code.ENTRY_FIELDS_INVALID, "/connectionId")],
    ),
    "api-connection-provider-missing": (
        changed(API, (("provider",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/provider")],
    ),
    "api-connection-endpoint-http": (
        changed(API, (("endpoint",), "http://h.example/v1")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-endpoint-ws": (
        changed(API, (("endpoint",), "ws://h.example/v1")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-endpoint-userinfo": (
        changed(API, (("endpoint",), "https://user:pw@h.example/v1")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-endpoint-port-only": (
        changed(API, (("endpoint",), "https://:443")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-endpoint-empty-port": (
        changed(API, (("endpoint",), "wss://h.example:/v1")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-endpoint-port-65536": (
        changed(API, (("endpoint",), "wss://h.example:65536/v1")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-endpoint-trailing-newline": (
        changed(API, (("endpoint",), "wss://h.example/v1\n")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-endpoint-fragment": (
        changed(API, (("endpoint",), "https://h.example/v1#token")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-endpoint-no-host": (
        changed(API, (("endpoint",), "https:///v1")),
        [(Code.ENTRY_FIELDS_INVALID, "/endpoint")],
    ),
    "api-connection-requested-model-missing": (
        changed(API, (("requestedModel",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/requestedModel")],
    ),
    "api-connection-api-number": (
        changed(API, (("api",), 1)),
        [(Code.ENTRY_FIELDS_INVALID, "/api")],
    ),
    "api-connection-origin-missing": (
        changed(API, (("originId",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/originId")],
    ),
    "api-connection-origin-bad-form": (
        changed(API, (("originId",), "")),
        [(Code.ENTRY_FIELDS_INVALID, "/originId")],
    ),
    # realtime_event
    "realtime-connection-missing": (
        changed(RT, (("connectionId",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/connectionId")],
    ),
    "realtime-direction-unknown": (
        changed(RT, (("direction",), "sideways")),
        [(Code.ENTRY_FIELDS_INVALID, "/direction")],
    ),
    "realtime-observation-unknown": (
        changed(RT, (("observation",), "acknowledged")),
        [(Code.ENTRY_FIELDS_INVALID, "/observation")],
    ),
    "realtime-incoming-send-attempt": (
        changed(RT, (("observation",), "send_attempt")),
        [(Code.ENTRY_FIELDS_INVALID, "/observation")],
    ),
    "realtime-incoming-send-failed": (
        changed(RT, (("observation",), "send_failed")),
        [(Code.ENTRY_FIELDS_INVALID, "/observation")],
    ),
    "realtime-outgoing-received": (
        changed(RT, (("direction",), "outgoing")),
        [(Code.ENTRY_FIELDS_INVALID, "/observation")],
    ),
    "realtime-observed-at-missing": (
        changed(RT, (("observedAt",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/observedAt")],
    ),
    "realtime-observed-at-epoch": (
        changed(RT, (("observedAt",), 1767225601000)),
        [(Code.ENTRY_FIELDS_INVALID, "/observedAt")],
    ),
    "realtime-observed-at-february-30": (
        changed(RT, (("observedAt",), "2026-02-30T00:00:00Z")),
        [(Code.ENTRY_FIELDS_INVALID, "/observedAt")],
    ),
    "realtime-sequence-negative": (
        changed(RT, (("sequence",), -1)),
        [(Code.ENTRY_FIELDS_INVALID, "/sequence")],
    ),
    "realtime-sequence-string": (
        changed(RT, (("sequence",), "1")),
        [(Code.ENTRY_FIELDS_INVALID, "/sequence")],
    ),
    "realtime-payload-missing": (
        changed(RT, (("payload",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/payload")],
    ),
    "realtime-payload-array": (
        changed(RT, (("payload",), [])),
        [(Code.ENTRY_FIELDS_INVALID, "/payload")],
    ),
    "realtime-payload-type-missing": (
        changed(RT, (("payload",), {"delta": "x"})),
        [(Code.ENTRY_FIELDS_INVALID, "/payload/type")],
    ),
    "realtime-remote-id-number": (
        changed(RT, (("remoteEventId",), 1)),
        [(Code.ENTRY_FIELDS_INVALID, "/remoteEventId")],
    ),
    "realtime-redaction-not-pointer": (
        changed(RT, (("redactions",), ["/ok", "a/b"])),
        [(Code.ENTRY_FIELDS_INVALID, "/redactions/1")],
    ),
    "realtime-redaction-bad-escape": (
        changed(RT, (("redactions",), ["/a~2"])),
        [(Code.ENTRY_FIELDS_INVALID, "/redactions/0")],
    ),
    "realtime-media-pointer-missing": (
        changed(RT, (("media", 0, "pointer"), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/media/0/pointer")],
    ),
    "realtime-media-closed": (
        changed(RT, (("media", 0, "extra"), 1)),
        [(Code.ENTRY_FIELDS_INVALID, "/media/0/extra")],
    ),
    "realtime-media-byte-range-missing": (
        changed(RT, (("media", 0, "asset", "byteRange"), DROP)),
        [(Code.ASSET_REF_INVALID, "/media/0/asset/byteRange")],
    ),
    "realtime-media-encoding-missing": (
        changed(RT, (("media", 0, "asset", "encoding"), DROP)),
        [(Code.ASSET_REF_INVALID, "/media/0/asset/encoding")],
    ),
    "realtime-media-missing-asset": (
        changed(RT, (("media", 0, "asset"), {"status": "missing", "reason": "gone"})),
        [
            (Code.ASSET_REF_INVALID, "/media/0/asset/byteRange"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/encoding"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/mimeType"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/path"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/reason"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/status"),
        ],
    ),
    "realtime-media-empty-range": (
        changed(RT, (("media", 0, "asset", "byteRange"), {"start": 10, "end": 10})),
        [(Code.ASSET_REF_INVALID, "/media/0/asset/byteRange/end")],
    ),
    # recording.started
    "recording-started-id-missing": (
        changed(RS, (("recordingId",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/recordingId")],
    ),
    "recording-started-asset-missing": (
        changed(RS, (("asset",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/asset")],
    ),
    "recording-started-asset-of-other-recording": (
        changed(RS, (("asset", "path"), "assets/r2.wav")),
        [(Code.ASSET_REF_INVALID, "/asset/path")],
    ),
    "recording-started-asset-not-wav": (
        changed(RS, (("asset", "path"), "assets/r1.bin")),
        [(Code.ASSET_REF_INVALID, "/asset/path")],
    ),
    "recording-started-mime-type": (
        changed(RS, (("asset", "mimeType"), "audio/mpeg")),
        [(Code.ASSET_REF_INVALID, "/asset/mimeType")],
    ),
    "recording-started-missing-asset": (
        changed(RS, (("asset",), {"status": "missing", "reason": "gone"})),
        [
            (Code.ASSET_REF_INVALID, "/asset/mimeType"),
            (Code.ASSET_REF_INVALID, "/asset/path"),
            (Code.ASSET_REF_INVALID, "/asset/reason"),
            (Code.ASSET_REF_INVALID, "/asset/status"),
        ],
    ),
    # recording.finished
    "recording-finished-duration-negative": (
        changed(RF, (("durationMs",), -1)),
        [(Code.ENTRY_FIELDS_INVALID, "/durationMs")],
    ),
    "recording-finished-duration-missing": (
        changed(RF, (("durationMs",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/durationMs")],
    ),
    "recording-finished-outcome-unknown": (
        changed(RF, (("outcome",), "done")),
        [(Code.ENTRY_FIELDS_INVALID, "/outcome")],
    ),
    "recording-finished-gaps-object": (
        changed(RF, (("gaps",), {})),
        [(Code.ENTRY_FIELDS_INVALID, "/gaps")],
    ),
    "recording-finished-gap-empty": (
        changed(RF, (("gaps", 0, "endMs"), 0)),
        [(Code.ENTRY_FIELDS_INVALID, "/gaps/0/endMs")],
    ),
    "recording-finished-gap-reversed": (
        changed(RF, (("gaps", 0), {"startMs": 9, "endMs": 5})),
        [(Code.ENTRY_FIELDS_INVALID, "/gaps/0/endMs")],
    ),
    "recording-finished-gap-start-missing": (
        changed(RF, (("gaps", 0, "startMs"), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/gaps/0/startMs")],
    ),
    "recording-finished-gap-closed": (
        changed(RF, (("gaps", 0, "note"), "x")),
        [(Code.ENTRY_FIELDS_INVALID, "/gaps/0/note")],
    ),
    # recording.interrupted
    "recording-interrupted-reason-empty": (
        changed(MINIMAL["recording.interrupted"], (("reason",), "")),
        [(Code.ENTRY_FIELDS_INVALID, "/reason")],
    ),
    "recording-interrupted-duration-string": (
        changed(MINIMAL["recording.interrupted"], (("durationMs",), "1")),
        [(Code.ENTRY_FIELDS_INVALID, "/durationMs")],
    ),
    "recording-interrupted-id-bad-form": (
        changed(MINIMAL["recording.interrupted"], (("recordingId",), ".r")),
        [(Code.ENTRY_FIELDS_INVALID, "/recordingId")],
    ),
    # message.removed
    "message-removed-target-missing": (
        changed(MINIMAL["message.removed"], (("targetId",), DROP)),
        [(Code.ENTRY_FIELDS_INVALID, "/targetId")],
    ),
    "message-removed-target-null": (
        changed(MINIMAL["message.removed"], (("targetId",), None)),
        [(Code.ENTRY_FIELDS_INVALID, "/targetId")],
    ),
}


@pytest.mark.parametrize(("record", "expected"), FIELD_CASES.values(), ids=FIELD_CASES.keys())
def test_reject_entry_field(record: dict[str, Any], expected: list[tuple[Code, str]]) -> None:
    assert faults(validate_entry(record)) == expected


ORDER_CASES: dict[str, tuple[dict[str, Any], list[tuple[Code, str]]]] = {
    "envelope-before-unknown-field-before-type-fields": (
        changed(
            MINIMAL["custom"],
            (("customType",), ""),
            (("aa",), 1),
            (("timestamp",), "2026-02-30T00:00:00Z"),
        ),
        [
            (Code.ENVELOPE_INVALID, "/timestamp"),
            (Code.ENVELOPE_FIELD_UNKNOWN, "/aa"),
            (Code.ENTRY_FIELDS_INVALID, "/customType"),
        ],
    ),
    "type-fields-by-location-whatever-their-code": (
        changed(
            MINIMAL["realtime_event"],
            (("media",), [{"pointer": "x", "asset": {}}]),
            (("direction",), "up"),
        ),
        [
            (Code.ENTRY_FIELDS_INVALID, "/direction"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/byteRange"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/encoding"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/mimeType"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/path"),
            (Code.ASSET_REF_INVALID, "/media/0/asset/status"),
            (Code.ENTRY_FIELDS_INVALID, "/media/0/pointer"),
        ],
    ),
}


@pytest.mark.parametrize(("record", "expected"), ORDER_CASES.values(), ids=ORDER_CASES.keys())
def test_diagnostics_follow_env_8_order(
    record: dict[str, Any], expected: list[tuple[Code, str]]
) -> None:
    assert faults(validate_entry(record)) == expected


def test_diagnostics_are_ordered_by_array_index_not_text() -> None:
    blocks = [{"type": "text", "text": "ok"}] * 2 + [{"type": "text"}] * 9
    record = user_message(*blocks)
    pointers = [d.pointer for d in validate_entry(record)]
    assert pointers == [f"/message/content/{i}/text" for i in range(2, 11)]


SECRET = "sk-SECRET-0123456789"
LEAK_CASES = {
    "endpoint-userinfo": changed(API, (("endpoint",), f"https://{SECRET}@h.example/")),
    "endpoint-fragment": changed(API, (("endpoint",), f"https://h.example/#{SECRET}")),
    "id": changed(M, (("id",), f"{SECRET} ")),
    "text-block": user_message({"type": "text", "text": SECRET, "x": SECRET}),
    "header-id": changed(HEADER, (("id",), f"/{SECRET}")),
}


@pytest.mark.parametrize("record", LEAK_CASES.values(), ids=LEAK_CASES.keys())
def test_diagnostics_never_quote_input_values(record: dict[str, Any]) -> None:
    diagnostics = (validate_header if record["type"] == "session" else validate_entry)(record)
    assert diagnostics
    assert SECRET not in orjson.dumps([d.to_json() for d in diagnostics]).decode()


# validate_entry skips the rules beyond the schema for a schema-valid entry when a cheap screen
# says none can apply; every rejection case that only such a rule catches must pass the screen.
BEYOND_SCHEMA_ONLY = {
    name: record
    for name, (record, _) in {**ENVELOPE_CASES, **FIELD_CASES}.items()
    if record.get("type") in KNOWN_ENTRY_TYPES and _validators().entry.is_valid(record)
}


def test_cases_beyond_the_schema_are_found() -> None:
    # Calendar days, audio and gap ordering, byte ranges, the recording asset name.
    assert len(BEYOND_SCHEMA_ONLY) >= 8, sorted(BEYOND_SCHEMA_ONLY)


@pytest.mark.parametrize("record", BEYOND_SCHEMA_ONLY.values(), ids=BEYOND_SCHEMA_ONLY.keys())
def test_screen_lets_every_rule_beyond_the_schema_apply(record: dict[str, Any]) -> None:
    assert _beyond_schema_may_apply(record, record["type"])
    assert validate_entry(record)
