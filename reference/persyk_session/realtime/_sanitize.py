"""Remove credentials from a provider payload before it is persisted or named (RT-1, RT-2).

Pure functions, no I/O. :func:`sanitize` takes one JSON value (a provider event as parsed) and
returns a copy in which every credential is replaced, with the JSON pointer of every replaced
value (RT-2). :func:`sanitize_url` does the same for one URL (an ``api_connection`` endpoint).
What counts as a credential is docs/spec.md's list (RT-29..RT-33); it may grow in a compatible
contract version, never shrink.

How a credential is replaced (RT-2): the whole JSON value becomes the string ``"[REDACTED]"``,
so that every pointer in ``redactions`` still resolves and no array index moves; inside a longer
string only the secret itself becomes ``[REDACTED]`` and the string's pointer is listed; inside a
URL the user information is dropped and a credential query parameter keeps its name with the
value ``REDACTED``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

__all__ = ["PLACEHOLDER", "Sanitized", "sanitize", "sanitize_text", "sanitize_url"]

PLACEHOLDER = "[REDACTED]"
URL_PLACEHOLDER = "REDACTED"

# -- names ---------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@lru_cache(maxsize=4096)  # speed-up only: provider events repeat the same few names
def name_words(name: str) -> tuple[str, ...]:
    """``"X-Api-Key"``, ``"apiKey"`` and ``"api_key"`` all give ``("x", "api", "key")`` or
    ``("api", "key")``: names are compared word by word, case and separators aside."""
    return tuple(word.lower() for word in _WORD.findall(name))


# RT-29: a member holding a credential wherever it appears in a payload, by its last word(s).
_SECRET_LAST_WORDS = frozenset({
    "secret", "password", "passwd", "passphrase", "authorization", "credential", "credentials",
    "apikey", "accesstoken", "refreshtoken", "idtoken", "authtoken", "sessiontoken", "apitoken",
    "privatekey", "secretkey", "accesskey", "clientsecret",
})
_SECRET_PAIRS = frozenset({
    ("api", "key"), ("private", "key"), ("secret", "key"), ("access", "key"),
    ("access", "token"), ("refresh", "token"), ("id", "token"), ("auth", "token"),
    ("session", "token"), ("bearer", "token"), ("api", "token"), ("client", "token"),
})


def is_secret_member(name: str) -> bool:
    """RT-29: ``api_key``, ``apiKey``, ``access_token``, ``client_secret``, ``password``, ..."""
    words = name_words(name)
    if not words:
        return False
    return words[-1] in _SECRET_LAST_WORDS or tuple(words[-2:]) in _SECRET_PAIRS


# RT-30: an HTTP header (or a URL query parameter) whose name says it carries a credential.
_CREDENTIAL_WORDS = frozenset({
    "key", "apikey", "token", "secret", "password", "passwd", "signature", "sig", "credential",
    "credentials", "auth", "authorization", "cookie",
})


def is_secret_header(name: str) -> bool:
    """RT-30: ``Authorization``, ``api-key``, ``x-api-key``, ``X-Amz-Signature``, ``Cookie``..."""
    return any(word in _CREDENTIAL_WORDS for word in name_words(name))


# -- values --------------------------------------------------------------------------------------

# RT-31: secrets recognised by their shape wherever they sit. Each pattern's group "secret" is
# the part replaced (a "Bearer " prefix or a subprotocol name stays readable).
_SECRET_VALUES = re.compile(
    r"(?P<secret>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,})"  # OpenAI API keys
    r"|(?P<secret2>ek_[A-Za-z0-9_-]{16,})"  # OpenAI Realtime ephemeral client secrets
    r"|(?P<secret3>eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*)"  # JSON Web Tokens
    r"|(?P<secret4>AIza[0-9A-Za-z_-]{35})"  # Google API keys
    r"|\b(?i:bearer)[ \t]+(?P<secret5>[A-Za-z0-9._~+/=-]{8,})"  # a bearer token in text
    r"|openai-insecure-api-key\.(?P<secret6>[^\s,;\"']+)"  # OpenAI's WebSocket subprotocol
)
# RT-32: a URL anywhere in a string.
_URL = re.compile(r"\b(?:https?|wss?)://[^\s\"'<>\\]+", re.IGNORECASE)


def _replace_secrets(text: str) -> str:
    def hide(match: re.Match[str]) -> str:
        name = next(g for g in match.groupdict() if match.group(g) is not None)
        start, end = match.span(name)
        whole_start = match.start()
        return match.group(0)[: start - whole_start] + PLACEHOLDER + match.group(0)[
            end - whole_start:
        ]

    return _SECRET_VALUES.sub(hide, text)


def sanitize_url(url: str) -> str:
    """RT-32: drop user information; replace the value of every credential query parameter."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _replace_secrets(url)
    netloc = parts.netloc.rpartition("@")[2]  # user information ends at the last "@"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_header(name) for name, _ in pairs):
            query = "&".join(
                f"{quote(name, safe='')}="
                + (URL_PLACEHOLDER if is_secret_header(name) else quote(value, safe=""))
                for name, value in pairs
            )
    cleaned = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return _replace_secrets(cleaned)


# Every shape of RT-31 contains one of these (lower-cased); a string holding none of them, such
# as base64 audio, cannot hold a secret by shape. Speed-up only: the patterns decide.
_SHAPE_ANCHORS = ("sk-", "ek_", "eyj", "aiza", "bearer", "openai-insecure-api-key.")


def sanitize_text(text: str) -> str:
    """RT-31 and RT-32 on free text: secrets by shape, and every URL in it."""
    if "://" in text:
        text = _URL.sub(lambda m: sanitize_url(m.group(0)), text)
    lowered = text.lower()
    if not any(anchor in lowered for anchor in _SHAPE_ANCHORS):
        return text
    return _replace_secrets(text)


# -- payloads ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sanitized:
    """A sanitized payload and the JSON pointers (RFC 6901) of every value changed in it."""

    payload: Any
    redactions: tuple[str, ...]


def _pointer(parent: str, key: str | int) -> str:
    return f"{parent}/{str(key).replace('~', '~0').replace('/', '~1')}"


def sanitize(payload: Any) -> Sanitized:
    """RT-1, RT-2: the payload with every credential replaced, and where (document order)."""
    redactions: list[str] = []
    cleaned = _clean(payload, "", redactions, headers=False)
    return Sanitized(cleaned, tuple(redactions))


def _clean(value: Any, at: str, redactions: list[str], *, headers: bool) -> Any:
    if isinstance(value, dict):
        return dict(_clean_members(value, at, redactions, headers=headers))
    if isinstance(value, list):
        if headers and _is_header_pair(value):
            return _clean_header_pair(value, at, redactions)
        return [_clean(item, _pointer(at, i), redactions, headers=headers)
                for i, item in enumerate(value)]
    if isinstance(value, str):
        cleaned = sanitize_text(value)
        if cleaned != value:
            redactions.append(at)
        return cleaned
    return value


def _clean_members(
    members: dict[str, Any], at: str, redactions: list[str], *, headers: bool
) -> Iterator[tuple[str, Any]]:
    # RT-30: a header given as {"name": "Authorization", "value": "..."}.
    named = headers and isinstance(members.get("name"), str) and "value" in members
    secret_named = named and is_secret_header(members["name"])
    for key, item in members.items():
        where = _pointer(at, key)
        secret = (
            (secret_named and key == "value")
            or (headers and not named and is_secret_header(key))
            or is_secret_member(key)  # RT-29
        )
        if secret:
            yield key, _redact_whole(item, where, redactions)
        else:
            is_headers = name_words(key)[-1:] == ("headers",)
            yield key, _clean(item, where, redactions, headers=is_headers)


def _is_header_pair(value: list[Any]) -> bool:
    return len(value) == 2 and all(isinstance(v, str) for v in value)


def _clean_header_pair(pair: list[Any], at: str, redactions: list[str]) -> list[Any]:
    """RT-30: a header given as ``["Authorization", "Bearer ..."]``."""
    name, value = pair
    if is_secret_header(name):
        return [name, _redact_whole(value, _pointer(at, 1), redactions)]
    return [name, _clean(value, _pointer(at, 1), redactions, headers=False)]


def _redact_whole(value: Any, at: str, redactions: list[str]) -> Any:
    """RT-2: the whole value becomes the placeholder. null and booleans carry no secret, and a
    value already redacted is not listed twice (sanitizing twice changes nothing)."""
    if value is None or isinstance(value, bool) or value == PLACEHOLDER:
        return value
    redactions.append(at)
    return PLACEHOLDER
