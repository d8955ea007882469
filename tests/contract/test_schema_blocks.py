"""Content blocks and asset references in schemas/v1: known blocks are closed, unknown blocks pass
through unchanged, and asset paths stay confined to the session's assets/ directory."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from persyk_session import Code
from persyk_session.read._schema import validate_entry

ENVELOPE = {"id": "e2", "parentId": "e1", "timestamp": "2026-01-01T00:00:01.000Z"}
PNG = {"status": "available", "path": "assets/p1.png", "mimeType": "image/png"}
BLOCK = "/message/content/0"


def with_blocks(*blocks: Any) -> dict[str, Any]:
    """A user message entry holding ``blocks``."""
    return {
        "type": "message",
        **ENVELOPE,
        "message": {"role": "user", "content": copy.deepcopy(list(blocks)), "timestamp": 1},
    }


def image(**asset: Any) -> dict[str, Any]:
    return {"type": "image", "asset": asset}


def faults(record: dict[str, Any]) -> list[tuple[Code, str | None]]:
    return [(d.code, d.pointer) for d in validate_entry(record)]


VALID_BLOCKS: dict[str, dict[str, Any]] = {
    "text": {"type": "text", "text": ""},
    "text-signed": {"type": "text", "text": "hi", "textSignature": "sig"},
    "thinking": {"type": "thinking", "thinking": "hm"},
    "thinking-redacted": {
        "type": "thinking",
        "thinking": "",
        "thinkingSignature": "s",
        "redacted": True,
    },
    "tool-call": {"type": "toolCall", "id": "call-1", "name": "read", "arguments": {}},
    "tool-call-signed": {
        "type": "toolCall",
        "id": "",
        "name": "read",
        "arguments": {"path": "/etc/passwd"},
        "thoughtSignature": "s",
    },
    "image-available": image(**PNG),
    "image-available-all-fields": image(
        **PNG, byteRange={"start": 0, "end": 1}, encoding="base64", sha256="ab" * 32
    ),
    "image-missing": image(status="missing", reason="deleted"),
    "image-missing-with-source": image(status="missing", reason="x", source={"url": "u"}),
    "audio": {"type": "audio", "asset": {**PNG, "mimeType": "audio/wav"}},
    "audio-with-range": {
        "type": "audio",
        "asset": {**PNG, "mimeType": "audio/wav"},
        "recordingId": "r1",
        "startMs": 0,
        "endMs": 1,
    },
    "asset-name-with-dots": image(**{**PNG, "path": "assets/a..b.wav"}),
    "asset-name-128-chars": image(**{**PNG, "path": "assets/" + "a" * 128}),
    "asset-name-132-chars": image(**{**PNG, "path": "assets/" + "a" * 132}),
}


@pytest.mark.parametrize("block", VALID_BLOCKS.values(), ids=VALID_BLOCKS.keys())
def test_accept_known_block(block: dict[str, Any]) -> None:
    assert validate_entry(with_blocks(block)) == []


UNKNOWN_BLOCKS: dict[str, dict[str, Any]] = {
    "video": {"type": "video", "asset": {"path": "../../etc/passwd"}, "n": [1, {"x": None}]},
    "case-differs-from-known": {"type": "Text", "text": 5},
    "empty-type": {"type": ""},
    "vendor-namespaced": {"type": "vendor:sticker", "id": 1},
}


@pytest.mark.parametrize("block", UNKNOWN_BLOCKS.values(), ids=UNKNOWN_BLOCKS.keys())
def test_accept_unknown_block_unchanged(block: dict[str, Any]) -> None:
    record = with_blocks(block)
    before = copy.deepcopy(record)
    assert validate_entry(record) == []
    assert record == before


def test_accept_unknown_block_in_custom_message() -> None:
    record = {
        "type": "custom_message",
        **ENVELOPE,
        "customType": "x",
        "content": [{"type": "sticker", "anything": True}],
        "display": True,
    }
    assert validate_entry(record) == []


BAD_BLOCKS: dict[str, tuple[Any, list[tuple[Code, str]]]] = {
    "not-an-object": ("hi", [(Code.BLOCK_INVALID, BLOCK)]),
    "null": (None, [(Code.BLOCK_INVALID, BLOCK)]),
    "type-missing": ({"text": "hi"}, [(Code.BLOCK_INVALID, f"{BLOCK}/type")]),
    "type-not-string": ({"type": 1}, [(Code.BLOCK_INVALID, f"{BLOCK}/type")]),
    "text-missing-text": ({"type": "text"}, [(Code.BLOCK_INVALID, f"{BLOCK}/text")]),
    "text-number": ({"type": "text", "text": 1}, [(Code.BLOCK_INVALID, f"{BLOCK}/text")]),
    "text-closed": (
        {"type": "text", "text": "", "cache": True},
        [(Code.BLOCK_INVALID, f"{BLOCK}/cache")],
    ),
    "text-signature-number": (
        {"type": "text", "text": "", "textSignature": 1},
        [(Code.BLOCK_INVALID, f"{BLOCK}/textSignature")],
    ),
    "thinking-missing": ({"type": "thinking"}, [(Code.BLOCK_INVALID, f"{BLOCK}/thinking")]),
    "thinking-redacted-string": (
        {"type": "thinking", "thinking": "", "redacted": "yes"},
        [(Code.BLOCK_INVALID, f"{BLOCK}/redacted")],
    ),
    "tool-call-id-missing": (
        {"type": "toolCall", "name": "n", "arguments": {}},
        [(Code.BLOCK_INVALID, f"{BLOCK}/id")],
    ),
    "tool-call-name-number": (
        {"type": "toolCall", "id": "c", "name": 1, "arguments": {}},
        [(Code.BLOCK_INVALID, f"{BLOCK}/name")],
    ),
    "tool-call-arguments-string": (
        {"type": "toolCall", "id": "c", "name": "n", "arguments": "{}"},
        [(Code.BLOCK_INVALID, f"{BLOCK}/arguments")],
    ),
    "tool-call-closed-even-for-asset-key": (
        {"type": "toolCall", "id": "c", "name": "n", "arguments": {}, "asset": {}},
        [(Code.BLOCK_INVALID, f"{BLOCK}/asset")],
    ),
    "image-asset-missing": ({"type": "image"}, [(Code.BLOCK_INVALID, f"{BLOCK}/asset")]),
    "image-closed": (
        {"type": "image", "asset": PNG, "alt": "x"},
        [(Code.BLOCK_INVALID, f"{BLOCK}/alt")],
    ),
    "audio-asset-missing": ({"type": "audio"}, [(Code.BLOCK_INVALID, f"{BLOCK}/asset")]),
    "audio-start-without-end": (
        {"type": "audio", "asset": PNG, "startMs": 0},
        [(Code.BLOCK_INVALID, f"{BLOCK}/endMs")],
    ),
    "audio-end-without-start": (
        {"type": "audio", "asset": PNG, "endMs": 5},
        [(Code.BLOCK_INVALID, f"{BLOCK}/startMs")],
    ),
    "audio-empty-range": (
        {"type": "audio", "asset": PNG, "startMs": 5, "endMs": 5},
        [(Code.BLOCK_INVALID, f"{BLOCK}/endMs")],
    ),
    "audio-reversed-range": (
        {"type": "audio", "asset": PNG, "startMs": 9, "endMs": 5},
        [(Code.BLOCK_INVALID, f"{BLOCK}/endMs")],
    ),
    "audio-negative-start": (
        {"type": "audio", "asset": PNG, "startMs": -1, "endMs": 5},
        [(Code.BLOCK_INVALID, f"{BLOCK}/startMs")],
    ),
    "audio-fractional-end": (
        {"type": "audio", "asset": PNG, "startMs": 0, "endMs": 1.5},
        [(Code.BLOCK_INVALID, f"{BLOCK}/endMs")],
    ),
    "audio-recording-id-bad-form": (
        {"type": "audio", "asset": PNG, "recordingId": "a/b"},
        [(Code.BLOCK_INVALID, f"{BLOCK}/recordingId")],
    ),
}


@pytest.mark.parametrize(("block", "expected"), BAD_BLOCKS.values(), ids=BAD_BLOCKS.keys())
def test_reject_malformed_known_block(block: Any, expected: list[tuple[Code, str]]) -> None:
    assert faults(with_blocks(block)) == expected


def test_reject_only_the_malformed_block_among_good_ones() -> None:
    record = with_blocks({"type": "text", "text": "a"}, {"type": "video"}, {"type": "text"})
    assert faults(record) == [(Code.BLOCK_INVALID, "/message/content/2/text")]


ASSET = f"{BLOCK}/asset"

TRAVERSALS = {
    "dot-dot": "assets/../x",
    "absolute": "/etc/passwd",
    "sub-directory": "assets/a/b",
    "hidden": "assets/.hidden",
    "dot-dot-name": "assets/..",
    "no-name": "assets/",
    "outside-assets": "session.jsonl",
    "upper-case-dir": "Assets/x.wav",
    "backslash": "assets\\x.wav",
    "windows-drive": "C:/assets/x.wav",
    "trailing-newline": "assets/x.wav\n",
    "nul": "assets/x\u0000.wav",
    "133-char-name": "assets/" + "a" * 133,  # AST-3 rev. 2: up to 132 (a 128-char Id + .wav)
    "not-a-string": 5,
}


@pytest.mark.parametrize("path", TRAVERSALS.values(), ids=TRAVERSALS.keys())
def test_reject_asset_path_outside_assets_directory(path: Any) -> None:
    assert faults(with_blocks(image(**{**PNG, "path": path}))) == [
        (Code.ASSET_REF_INVALID, f"{ASSET}/path")
    ]


BAD_ASSETS: dict[str, tuple[Any, list[tuple[Code, str]]]] = {
    "not-an-object": ("assets/p1.png", [(Code.ASSET_REF_INVALID, ASSET)]),
    "status-missing": (
        {"path": "assets/p1.png", "mimeType": "image/png"},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/status")],
    ),
    "status-unknown": ({**PNG, "status": "gone"}, [(Code.ASSET_REF_INVALID, f"{ASSET}/status")]),
    "available-path-missing": (
        {"status": "available", "mimeType": "image/png"},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/path")],
    ),
    "available-mime-type-missing": (
        {"status": "available", "path": "assets/p1.png"},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/mimeType")],
    ),
    "available-closed": ({**PNG, "reason": "x"}, [(Code.ASSET_REF_INVALID, f"{ASSET}/reason")]),
    "mime-type-no-subtype": (
        {**PNG, "mimeType": "png"},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/mimeType")],
    ),
    "mime-type-with-parameters": (
        {**PNG, "mimeType": "audio/L16; rate=16000"},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/mimeType")],
    ),
    "sha256-upper-case": (
        {**PNG, "sha256": "AB" * 32},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/sha256")],
    ),
    "sha256-short": ({**PNG, "sha256": "ab"}, [(Code.ASSET_REF_INVALID, f"{ASSET}/sha256")]),
    "encoding-number": ({**PNG, "encoding": 1}, [(Code.ASSET_REF_INVALID, f"{ASSET}/encoding")]),
    "byte-range-end-missing": (
        {**PNG, "byteRange": {"start": 0}},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/byteRange/end")],
    ),
    "byte-range-negative-start": (
        {**PNG, "byteRange": {"start": -1, "end": 2}},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/byteRange/start")],
    ),
    "byte-range-end-zero": (
        {**PNG, "byteRange": {"start": 0, "end": 0}},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/byteRange/end")],
    ),
    "byte-range-empty": (
        {**PNG, "byteRange": {"start": 7, "end": 7}},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/byteRange/end")],
    ),
    "byte-range-reversed": (
        {**PNG, "byteRange": {"start": 9, "end": 7}},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/byteRange/end")],
    ),
    "byte-range-closed": (
        {**PNG, "byteRange": {"start": 0, "end": 1, "length": 1}},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/byteRange/length")],
    ),
    "missing-reason-absent": (
        {"status": "missing"},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/reason")],
    ),
    "missing-reason-empty": (
        {"status": "missing", "reason": ""},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/reason")],
    ),
    "missing-source-string": (
        {"status": "missing", "reason": "x", "source": "u"},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/source")],
    ),
    "missing-closed": (
        {"status": "missing", "reason": "x", "path": "assets/p1.png"},
        [(Code.ASSET_REF_INVALID, f"{ASSET}/path")],
    ),
}


@pytest.mark.parametrize(("asset", "expected"), BAD_ASSETS.values(), ids=BAD_ASSETS.keys())
def test_reject_asset_reference(asset: Any, expected: list[tuple[Code, str]]) -> None:
    assert faults(with_blocks({"type": "image", "asset": asset})) == expected


def test_reject_asset_fault_inside_audio_block_as_asset_fault() -> None:
    block = {"type": "audio", "asset": {**PNG, "path": "assets/../r1.wav"}, "startMs": 0}
    assert faults(with_blocks(block)) == [
        (Code.ASSET_REF_INVALID, f"{ASSET}/path"),
        (Code.BLOCK_INVALID, f"{BLOCK}/endMs"),
    ]


def test_reject_asset_fault_inside_custom_message_block() -> None:
    record = {
        "type": "custom_message",
        **ENVELOPE,
        "customType": "x",
        "content": [image(**{**PNG, "path": "/etc/passwd"})],
        "display": True,
    }
    assert faults(record) == [(Code.ASSET_REF_INVALID, "/content/0/asset/path")]


def custom_message(*blocks: Any) -> dict[str, Any]:
    content = copy.deepcopy(list(blocks))
    return {
        "type": "custom_message",
        **ENVELOPE,
        "customType": "x",
        "content": content,
        "display": True,
    }


# Rules beyond the schema inside blocks are checked only when validate_entry's screen sees an
# image or audio block: the screen must look past the harmless blocks before it.
TEXT = {"type": "text", "text": "a"}
REVERSED_AUDIO = {"type": "audio", "asset": PNG, "startMs": 9, "endMs": 5}
EMPTY_RANGE_IMAGE = image(**PNG, byteRange={"start": 7, "end": 7})
BEYOND_SCHEMA_IN_BLOCKS: dict[str, tuple[dict[str, Any], list[tuple[Code, str]]]] = {
    "audio-reversed-after-text": (
        with_blocks(TEXT, REVERSED_AUDIO),
        [(Code.BLOCK_INVALID, "/message/content/1/endMs")],
    ),
    "image-empty-range-after-unknown-block": (
        with_blocks({"type": "x-note"}, EMPTY_RANGE_IMAGE),
        [(Code.ASSET_REF_INVALID, "/message/content/1/asset/byteRange/end")],
    ),
    "custom-message-audio-reversed-after-text": (
        custom_message(TEXT, TEXT, REVERSED_AUDIO),
        [(Code.BLOCK_INVALID, "/content/2/endMs")],
    ),
    "custom-message-image-empty-range": (
        custom_message(EMPTY_RANGE_IMAGE),
        [(Code.ASSET_REF_INVALID, "/content/0/asset/byteRange/end")],
    ),
}


@pytest.mark.parametrize(
    ("record", "expected"), BEYOND_SCHEMA_IN_BLOCKS.values(), ids=BEYOND_SCHEMA_IN_BLOCKS.keys()
)
def test_reject_block_rule_beyond_schema_after_other_blocks(
    record: dict[str, Any], expected: list[tuple[Code, str]]
) -> None:
    assert faults(record) == expected
