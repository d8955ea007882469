"""Where a dsh-v0 log lives (DSH-1, DSH-2, DSH-3). Pure: names only, no file system."""

from __future__ import annotations

import hashlib
import re

from ._errors import DshCode, DshError

__all__ = [
    "LOG_SUFFIX",
    "NO_CWD_BUCKET",
    "bucket_name",
    "encode_id",
    "is_bucket_name",
    "is_log_name",
    "log_name",
]

LOG_SUFFIX = ".jsonl"
NO_CWD_BUCKET = "_no-cwd"
# DSH-3: the bytes that stay literal. The dot is not among them, so "." and ".." never appear.
_LITERAL = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_MAX_FILE_NAME_BYTES = 255
_BUCKET = re.compile(r"cwd-[0-9a-f]{12}|_no-cwd")
_ENCODED_LOG = re.compile(r"(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+\.jsonl")


def encode_id(session_id: object) -> str:
    """DSH-3: the id's UTF-8 bytes, every byte but ``A-Za-z0-9-_`` written as ``%XX``."""
    if not isinstance(session_id, str) or not session_id:
        raise DshError.of(DshCode.ID_INVALID, detail="it is empty or not a string")
    try:
        raw = session_id.encode("utf-8")
    except UnicodeEncodeError:
        raise DshError.of(DshCode.ID_INVALID, detail="it holds a lone surrogate") from None
    encoded = "".join(chr(b) if b in _LITERAL else f"%{b:02X}" for b in raw)
    if len(encoded) + len(LOG_SUFFIX) > _MAX_FILE_NAME_BYTES:
        raise DshError.of(DshCode.ID_INVALID, detail="its file name would exceed 255 bytes")
    return encoded


def log_name(session_id: object) -> str:
    return encode_id(session_id) + LOG_SUFFIX


def bucket_name(cwd: str | None) -> str:
    """DSH-2: ``cwd-`` + the first 12 hex digits of SHA-256(cwd), or ``_no-cwd``."""
    if cwd is None:
        return NO_CWD_BUCKET
    return "cwd-" + hashlib.sha256(cwd.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def is_bucket_name(name: str) -> bool:
    return _BUCKET.fullmatch(name) is not None


def is_log_name(name: str) -> bool:
    """DSH-1: only ``<encoded id>.jsonl`` is a log (never a temporary or compressed file)."""
    return _ENCODED_LOG.fullmatch(name) is not None
