"""The protocol operations of the ``assets`` and ``capture`` capabilities
(docs/implementers/protocol.md).

Resolved through :mod:`persyk_session.operations`, the one operations surface. Each returns the
JSON result object; a domain failure is ``{"error": diagnostic}``; a :class:`UsageError`
propagates (the adapter turns it into a result with its catalog code).
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

from .._errors import Code, ContractError, UsageError
from ..media._assets import byte_range_arg, data_arg, verify_asset, write_protocol_asset
from ..media._capture import (
    finish_capture,
    gaps_arg,
    lookup,
    recover_recording,
    start_capture,
    write_frames,
)
from ..media._delete import delete_session
from ._args import leaf_selector, lock_timeout_arg, session_arg, string_arg
from ._mode import chosen_engine

__all__ = [
    "op_asset_verify",
    "op_asset_write",
    "op_capture_finish",
    "op_capture_start",
    "op_capture_write",
    "op_delete_session",
    "op_recover_recording",
]


def _int_arg(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(Code.USAGE, f"the argument '{name}' must be an integer")
    return value


def _domain(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return run()
    except ContractError as error:
        return {"error": error.diagnostics[0].to_json()}


def op_asset_verify(args: dict[str, Any]) -> dict[str, Any]:
    """AST-15..AST-17: ``{"path", "size", "sha256", "byteRange"?}`` or ``{"error"}``."""
    path = string_arg(args, "path")
    assert path is not None
    sha256 = string_arg(args, "sha256", required=False)
    byte_range = byte_range_arg(args.get("byteRange"))
    session = session_arg(args)
    return _domain(lambda: verify_asset(session, path, sha256=sha256, byte_range=byte_range))


def op_asset_write(args: dict[str, Any]) -> dict[str, Any]:
    """AST-18: ``{"asset": reference}`` or ``{"error"}``."""
    data = data_arg(args.get("data"))
    mime_type = string_arg(args, "mimeType")
    assert mime_type is not None
    session = session_arg(args)
    return _domain(lambda: {"asset": write_protocol_asset(session, data, mime_type)})


def op_capture_start(args: dict[str, Any]) -> dict[str, Any]:
    """CAP-19..CAP-21: ``{"handle", "recordingId", "started", "asset"}`` or ``{"error"}``."""
    recording_id = string_arg(args, "recordingId")
    assert recording_id is not None
    if "leaf" not in args:
        raise UsageError(Code.USAGE, "a capture needs an explicit leaf (an entry id, or null)")
    leaf = leaf_selector(args)
    session = session_arg(args)
    rate, channels = _int_arg(args, "rate", 24000), _int_arg(args, "channels", 1)
    entry_id = string_arg(args, "id", required=False)
    timestamp = string_arg(args, "timestamp", required=False)
    timeout = lock_timeout_arg(args)
    return _domain(lambda: start_capture(
        session, recording_id, leaf=leaf, rate=rate, channels=channels, id=entry_id,
        timestamp=timestamp, timeout=timeout, engine=chosen_engine())[1])


def _pcm_arg(value: Any) -> bytes:
    """``base64.b64decode(value, validate=True)`` without its wrapper: on Python 3.11 and later
    that is the ASCII text given to ``binascii.a2b_base64`` in strict mode (alphabet, padding
    only at the end and at most two, nothing after it), all in C; a capture write decodes
    100 ms of audio, many times a second."""
    if not isinstance(value, str):
        raise UsageError(Code.USAGE, "the argument 'pcm' must be a base64 string")
    try:
        return binascii.a2b_base64(value.encode("ascii"), strict_mode=True)
    except (UnicodeEncodeError, binascii.Error):
        raise UsageError(Code.USAGE, "the argument 'pcm' is not valid base64") from None


def op_capture_write(args: dict[str, Any]) -> dict[str, Any]:
    """Frames for a running capture: ``{"frames", "durationMs"}`` or ``{"error"}``
    (HANDLE_INVALID for a handle this process did not issue or has revoked, AST-20)."""
    pcm = _pcm_arg(args.get("pcm"))
    return _domain(lambda: write_frames(lookup(args.get("handle")), pcm))


def op_capture_finish(args: dict[str, Any]) -> dict[str, Any]:
    """CAP-22: ``{"recordingId", "finished", "frames", "durationMs", "outcome"}``."""
    gaps = gaps_arg(args.get("gaps"))
    entry_id = string_arg(args, "id", required=False)
    timestamp = string_arg(args, "timestamp", required=False)
    timeout = lock_timeout_arg(args)
    return _domain(lambda: finish_capture(
        lookup(args.get("handle")), gaps=gaps, id=entry_id, timestamp=timestamp,
        timeout=timeout, engine=chosen_engine()))


def op_recover_recording(args: dict[str, Any]) -> dict[str, Any]:
    """CAP-5..CAP-7, CAP-23..CAP-27: ``{"action", "frames", "interrupted"}``."""
    recording_id = string_arg(args, "recordingId")
    assert recording_id is not None
    session = session_arg(args)
    entry_id = string_arg(args, "id", required=False)
    timestamp = string_arg(args, "timestamp", required=False)
    timeout = lock_timeout_arg(args)
    return _domain(lambda: recover_recording(
        session, recording_id, id=entry_id, timestamp=timestamp, timeout=timeout,
        engine=chosen_engine()))


def op_delete_session(args: dict[str, Any]) -> dict[str, Any]:
    """CAP-9, CAP-10, CAP-28..CAP-30: ``{"action": "deleted" | "resumed"}``."""
    session = session_arg(args)
    confirm = args.get("confirm") is True
    timeout = lock_timeout_arg(args)
    return _domain(lambda: delete_session(session, confirm=confirm, timeout=timeout))
