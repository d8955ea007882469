"""Remove credentials from a provider payload before it is persisted or named (RT-1, RT-2).

Pure functions, no I/O. :func:`sanitize` takes one JSON value (a provider event as parsed) and
returns a copy in which every credential is replaced, with the JSON pointer of every replaced
value (RT-2). :func:`sanitize_url` does the same for one URL (an ``api_connection`` endpoint).
What counts as a credential is docs/spec.md's list (RT-29..RT-33); it may grow in a compatible
contract version, never shrink. The lists are read by meaning (RT-29..RT-32 rev. 2): names are
compared without case in every header shape, member names are scanned like values, a value is
also checked percent- and base64-decoded, a string holding JSON is sanitized as JSON, and text
naming a credential header (``Authorization: Token ...``) loses the header's value.

How a credential is replaced (RT-2): the whole JSON value becomes the string ``"[REDACTED]"``,
so that every pointer in ``redactions`` still resolves and no array index moves; inside a longer
string only the secret itself becomes ``[REDACTED]`` and the string's pointer is listed; inside a
URL the user information is dropped and a credential query parameter keeps its name with the
value ``REDACTED``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

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


_SEPARATORS = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=4096)
def _spellings(name: str) -> tuple[tuple[str, ...], ...]:
    """RT-29 rev. 2, RT-30 rev. 2: a name's words read two ways, so that case never hides a
    credential: split at case changes (``apiKey``), and lower-cased then split at separators
    only (``AuThOrIzAtIoN``, ``X-API-KEY``: HTTP header names have no case)."""
    plain = tuple(word for word in _SEPARATORS.split(name.lower()) if word)
    return (name_words(name), plain)


def is_secret_member(name: str) -> bool:
    """RT-29: ``api_key``, ``apiKey``, ``access_token``, ``client_secret``, ``password``, ..."""
    return any(
        words and (words[-1] in _SECRET_LAST_WORDS or tuple(words[-2:]) in _SECRET_PAIRS)
        for words in _spellings(name)
    )


# RT-30: an HTTP header (or a URL query parameter) whose name says it carries a credential.
_CREDENTIAL_WORDS = frozenset({
    "key", "apikey", "token", "secret", "password", "passwd", "signature", "sig", "credential",
    "credentials", "auth", "authorization", "cookie",
})


def is_secret_header(name: str) -> bool:
    """RT-30: ``Authorization``, ``api-key``, ``x-api-key``, ``X-Amz-Signature``, ``Cookie``..."""
    return any(word in _CREDENTIAL_WORDS for words in _spellings(name) for word in words)


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
    # RT-31 rev. 2: a credential header written out in text ("Authorization: Token abc",
    # "x-api-key=abc"); its value goes, after an optional scheme word, which stays readable.
    r"|(?i:\b(?:proxy-)?authorization|\bx-api-key|\bapi-key|\bx-goog-api-key|\bcookie)"
    r"[ \t]*[:=][ \t]*[\"']?(?!(?i:(?:bearer|basic|token|digest|key)[ \t]+)?\[?REDACTED\b)"
    r"(?i:(?:bearer|basic|token|digest|key)[ \t]+)?(?P<secret7>[^\s,;\"']{4,})"
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


# RT-31 rev. 2: an encoded secret is a secret. Runs that may be percent-encoded or base64 are
# decoded (twice at most: base64 of a percent-encoded key) and replaced whole when what they
# decode to holds a secret. Runs longer than _DECODE_LIMIT are not decoded: they are media
# (base64 audio), and decoding them all would make replay quadratic in practice
# (docs/implementers/realtime.md states the limit).
_ENCODED_RUN = re.compile(r"[A-Za-z0-9%+/=_.~-]{12,}")
_DECODE_LIMIT = 4096


# Base64 of text below 0x80 starts every 4-character group with one of the first 32 symbols of
# either alphabet (a byte below 0x80 has its top bit clear): speed-up only, so that audio and
# other binary runs are not decoded at all.
_LOW_SYMBOLS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef")


def _may_be_text(run: str) -> bool:
    return all(symbol in _LOW_SYMBOLS for symbol in run[::4])


def _decodings(run: str, depth: int = 2) -> Iterator[str]:
    if depth == 0:
        return
    if "%" in run:
        plain = unquote(run)
        if plain != run:
            yield plain
            yield from _decodings(plain, depth - 1)
    if len(run) >= 16 and _may_be_text(run):
        body = run.rstrip("=")
        padded = body + "=" * (-len(body) % 4)
        for alphabet in (b"+/", b"-_"):
            try:
                raw = base64.b64decode(padded, altchars=alphabet, validate=True)
                text = raw.decode("utf-8")
            except (binascii.Error, ValueError):
                continue
            if text.isprintable():
                yield text
                yield from _decodings(text, depth - 1)


def _holds_secret(text: str) -> bool:
    return _SECRET_VALUES.search(text) is not None


def _replace_encoded(text: str) -> str:
    def hide(match: re.Match[str]) -> str:
        run = match.group(0)
        if len(run) > _DECODE_LIMIT:
            return run
        if any(_holds_secret(view) for view in _decodings(run)):
            return PLACEHOLDER
        return run

    return _ENCODED_RUN.sub(hide, text)


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

        def secret(name: str, value: str) -> bool:
            # RT-32 rev. 2: parse_qsl decodes, so a percent-encoded value is judged decoded
            return is_secret_header(name) or sanitize_text(value) != value

        if any(secret(name, value) for name, value in pairs):
            query = "&".join(
                f"{quote(name, safe='')}="
                + (URL_PLACEHOLDER if secret(name, value) else quote(value, safe=""))
                for name, value in pairs
            )
    cleaned = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return _replace_secrets(cleaned)


# Every shape of RT-31 contains one of these (lower-cased); a string holding none of them, such
# as base64 audio, cannot hold a secret by shape. Speed-up only: the patterns decide.
_SHAPE_ANCHORS = ("sk-", "ek_", "eyj", "aiza", "bearer", "openai-insecure-api-key.",
                  "authorization", "api-key", "cookie")
# A string this long is not parsed as JSON (RT-31 rev. 2): a bound on work, not a rule.
_JSON_TEXT_LIMIT = 1 << 20


def sanitize_text(text: str) -> str:
    """RT-31 and RT-32 on free text: secrets by shape, encoded or not, and every URL in it."""
    if "://" in text:
        text = _URL.sub(lambda m: sanitize_url(m.group(0)), text)
    lowered = text.lower()
    if any(anchor in lowered for anchor in _SHAPE_ANCHORS):
        text = _replace_secrets(text)
    return _replace_encoded(text)


def _sanitize_json_text(text: str) -> str | None:
    """RT-31 rev. 2: a string that holds a JSON object or array (a function call's
    ``arguments``) is sanitized as JSON, so ``{"api_key": ...}`` inside it goes too. None when
    it holds no JSON container; the text re-serialized when something in it was removed."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or len(stripped) > _JSON_TEXT_LIMIT:
        return None
    try:
        inner = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if not isinstance(inner, (dict, list)):
        return None
    cleaned = sanitize(inner)
    if not cleaned.redactions:
        return text
    return json.dumps(cleaned.payload, ensure_ascii=False)


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
        if _is_header_pair(value) and (headers or is_secret_member(value[0])):
            return _clean_header_pair(value, at, redactions)
        return [_clean(item, _pointer(at, i), redactions, headers=headers)
                for i, item in enumerate(value)]
    if isinstance(value, str):
        cleaned = _sanitize_json_text(value)
        if cleaned is None:
            cleaned = sanitize_text(value)
        if cleaned != value:
            redactions.append(at)
        return cleaned
    return value


def _member_named(members: dict[str, Any], name: str) -> str | None:
    """RT-30 rev. 2: ``name``/``value`` of a header object are matched without case."""
    for key in members:
        if key.lower() == name:
            return key
    return None


def _clean_members(
    members: dict[str, Any], at: str, redactions: list[str], *, headers: bool
) -> Iterator[tuple[str, Any]]:
    # RT-30: a header given as {"name": "Authorization", "value": "..."}, in any case; outside
    # headers too when the name is a credential member's (RT-29 rev. 2).
    name_key, value_key = _member_named(members, "name"), _member_named(members, "value")
    header_name = members[name_key] if name_key is not None and value_key is not None else None
    named = isinstance(header_name, str)
    secret_named = isinstance(header_name, str) and (
        (headers and is_secret_header(header_name)) or is_secret_member(header_name))
    shown_names = _member_names(members)
    for key, item in members.items():
        shown = shown_names[key]
        where = _pointer(at, shown)
        secret = (
            (secret_named and key == value_key)
            or (headers and not named and is_secret_header(key))
            or is_secret_member(key)  # RT-29
        )
        if secret:
            yield shown, _redact_whole(item, where, redactions)
            continue
        is_headers = any(words[-1:] == ("headers",) for words in _spellings(key))
        cleaned = _clean(item, where, redactions, headers=is_headers)
        if shown != key and (not redactions or redactions[-1] != where):
            redactions.append(where)  # RT-2: the member changed, by its name
        yield shown, cleaned


@lru_cache(maxsize=4096)  # speed-up only: provider events repeat the same few names
def _sanitized_name(name: str) -> str:
    return sanitize_text(name)


def _member_names(members: dict[str, Any]) -> dict[str, str]:
    """RT-29 rev. 2: a member name is scanned like a value (``sk-proj-...`` as a name). RT-2
    rev. 2: names that sanitize alike stay distinct members (``[REDACTED]#2``, ...), numbered
    around the names that did not change, so no collision loses a member."""
    cleaned = {key: _sanitized_name(key) for key in members}
    taken = {key for key, shown in cleaned.items() if shown == key}
    names: dict[str, str] = {}
    for key, shown in cleaned.items():
        if shown != key:
            base, number = shown, 2
            while shown in taken:
                shown, number = f"{base}#{number}", number + 1
            taken.add(shown)
        names[key] = shown
    return names


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
