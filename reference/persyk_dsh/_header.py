"""The dsh-v0 header line (DSH-4, DSH-5, DSH-6). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._codec import DshCodec
from ._errors import DshCode, DshError
from ._layout import bucket_name

__all__ = ["FORMAT_VERSION", "check_header", "check_location", "parse_header"]

FORMAT_VERSION = 0
MAX_SAFE = 2**53 - 1


def is_count(value: object) -> bool:
    """A non-negative safe integer (JSON numbers as a JavaScript writer emits them)."""
    return type(value) is int and 0 <= value <= MAX_SAFE


def is_safe_int(value: object) -> bool:
    return type(value) is int and -MAX_SAFE <= value <= MAX_SAFE


# DSH-4: the optional members and what each must be when present.
_OPTIONAL: Mapping[str, Any] = {
    "cwd": lambda v: isinstance(v, str) and v != "",
    "parentSession": lambda v: isinstance(v, str),
    "seedLength": is_count,
    "delegationDepth": is_count,
    "origin": lambda v: v == "subagent",
    "agentPreset": lambda v: isinstance(v, str),
}


def check_header(header: object, *, line: int | None = 1, pointer: str | None = None) -> None:
    """DSH-5 first (a later format is unsupported, not corrupt), then DSH-4's shape."""
    if not isinstance(header, dict):
        raise DshError.of(DshCode.HEADER_INVALID, line=line, pointer=pointer)
    version = header.get("version")
    if isinstance(version, int | float) and not isinstance(version, bool) and (
        version != FORMAT_VERSION
    ):
        raise DshError.of(DshCode.VERSION_UNSUPPORTED, line=line, pointer=pointer)
    shape_ok = (
        header.get("type") == "session"
        and type(version) is int
        and isinstance(header.get("id"), str)
        and header["id"] != ""
        and is_count(header.get("createdAt"))
        and all(check(header[key]) for key, check in _OPTIONAL.items() if key in header)
    )
    if not shape_ok:
        raise DshError.of(DshCode.HEADER_INVALID, line=line, pointer=pointer)


def parse_header(line: bytes, codec: DshCodec) -> dict[str, Any]:
    """The first line of a log (without its LF) as a checked header."""
    try:
        header = codec.loads(line)
    except codec.decode_error:
        raise DshError.of(DshCode.HEADER_INVALID, line=1, detail="not JSON") from None
    check_header(header)
    assert isinstance(header, dict)
    return header


def check_location(header: Mapping[str, Any], session_id: str, bucket: str) -> None:
    """DSH-6: the header names the id asked for and the bucket its log was found in."""
    if header["id"] != session_id or bucket_name(header.get("cwd")) != bucket:
        raise DshError.of(DshCode.HEADER_MISMATCH, line=1)
