"""The sanitizer (RT-1, RT-2, RT-29..RT-33): unit behaviour, a property over random payloads with
secrets planted in random credential positions, and the ``sanitize`` command."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_session.realtime._sanitize import (
    PLACEHOLDER,
    is_secret_header,
    is_secret_member,
    name_words,
    sanitize,
    sanitize_text,
    sanitize_url,
)


def resolve(document: Any, pointer: str) -> Any:
    """RFC 6901."""
    for part in pointer.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        document = document[int(key)] if isinstance(document, list) else document[key]
    return document


@pytest.mark.parametrize(("name", "words"), [
    ("X-Api-Key", ("x", "api", "key")), ("apiKey", ("api", "key")), ("api_key", ("api", "key")),
    ("APIKey", ("api", "key")), ("client_secret", ("client", "secret")),
    ("X-Amz-Signature", ("x", "amz", "signature")),
])
def test_names_split_into_words_whatever_their_case_and_separators(
    name: str, words: tuple[str, ...]
) -> None:
    assert name_words(name) == words


@pytest.mark.parametrize("name", ["api_key", "apiKey", "access_token", "refresh_token", "secret",
                                  "password", "client_secret", "Authorization", "x-api-key",
                                  "privateKey", "id_token", "webhookSecret", "apikey"])
def test_member_names_that_hold_credentials(name: str) -> None:
    assert is_secret_member(name)


@pytest.mark.parametrize("name", ["token", "key", "max_tokens", "input_token_details", "keyword",
                                  "secretary", "monkey", "type", "passwords_hint", "tokens"])
def test_member_names_that_do_not(name: str) -> None:
    assert not is_secret_member(name)


@pytest.mark.parametrize(("name", "secret"), [
    ("Authorization", True), ("Proxy-Authorization", True), ("api-key", True), ("Cookie", True),
    ("X-Goog-Api-Key", True), ("X-Amz-Credential", True), ("sig", True), ("Accept", False),
    ("Content-Type", False), ("keyword", False), ("page", False),
])
def test_header_and_query_names(name: str, secret: bool) -> None:
    assert is_secret_header(name) is secret


def test_a_url_loses_userinfo_and_credential_query_values_only() -> None:
    url = "wss://me:pw@api.example.com:8443/v1/realtime?model=gpt&api_key=s3cr3t&page=2#frag"
    assert sanitize_url(url) == "wss://api.example.com:8443/v1/realtime?model=gpt&api_key=REDACTED&page=2#frag"
    assert sanitize_url("https://example.com/a?page=2") == "https://example.com/a?page=2"


def test_text_keeps_everything_but_the_secret() -> None:
    text = "key sk-proj-abcdefghijklmnop1234 and Bearer abcdefgh1234 at https://u:p@h.example/x"
    assert sanitize_text(text) == f"key {PLACEHOLDER} and Bearer {PLACEHOLDER} at https://h.example/x"


def test_pointers_escape_slash_and_tilde() -> None:
    result = sanitize({"a/b": {"c~d": {"api_key": "x"}}})
    assert result.redactions == ("/a~1b/c~0d/api_key",)
    assert resolve(result.payload, result.redactions[0]) == PLACEHOLDER


def test_the_input_is_not_modified() -> None:
    payload = {"api_key": "x", "list": [{"password": "y"}]}
    before = json.dumps(payload)
    sanitize(payload)
    assert json.dumps(payload) == before


# --- the property: secrets planted anywhere a credential may sit never survive -----------------

SECRET = st.from_regex(r"[A-Za-z0-9]{20,40}", fullmatch=True).map(lambda s: "persykSECRET" + s)
WORDS = st.sampled_from(["type", "event_id", "item", "content", "text", "delta", "session",
                         "tools", "response", "output", "error", "message", "audio", "logprobs"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), WORDS)
SECRET_MEMBERS = st.sampled_from(["api_key", "apiKey", "access_token", "refresh_token", "secret",
                                  "password", "client_secret", "authorization", "x-api-key"])
HEADERS = st.sampled_from(["Authorization", "Proxy-Authorization", "api-key", "x-api-key",
                           "Cookie", "X-Goog-Api-Key"])
QUERY = st.sampled_from(["api_key", "key", "token", "access_token", "sig", "signature",
                         "X-Amz-Signature", "X-Amz-Credential", "X-Goog-Signature"])


@st.composite
def planted(draw: st.DrawFn, secret: str) -> Any:
    """One credential position (RT-29..RT-32) holding ``secret``."""
    kind = draw(st.integers(0, 7))
    if kind == 0:
        return {draw(SECRET_MEMBERS): secret}
    if kind == 1:
        return {"headers": {draw(HEADERS): secret, "Accept": "text/plain"}}
    if kind == 2:
        return {"headers": [[draw(HEADERS), secret]]}
    if kind == 3:
        return {"headers": [{"name": draw(HEADERS), "value": secret}]}
    if kind == 4:
        return f"https://user:{secret}@api.example.com/v1"
    if kind == 5:
        return f"wss://api.example.com/v1?model=x&{draw(QUERY)}={secret}"
    if kind == 6:
        prefix = draw(st.sampled_from(["sk-", "sk-proj-", "ek_", "Bearer "]))
        return f"the provider said: {prefix}{secret}, try again"
    return {"error": {"message": f"openai-insecure-api-key.{secret}"}}


@st.composite
def events(draw: st.DrawFn) -> tuple[Any, list[str]]:
    secrets = draw(st.lists(SECRET, min_size=1, max_size=4, unique=True))
    values: list[Any] = [draw(planted(secret)) for secret in secrets]

    def wrap(value: Any) -> Any:
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                value = {draw(WORDS): draw(SCALARS), "wrapped": value}
            else:
                value = [draw(SCALARS), value]
        return value

    event: dict[str, Any] = {"type": draw(WORDS)}
    for index, value in enumerate(values):
        event[f"part{index}"] = wrap(value)
    return event, secrets


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(events())
def test_no_planted_secret_survives_and_every_pointer_resolves(case: tuple[Any, list[str]]) -> None:
    event, secrets = case
    result = sanitize(event)
    stored = json.dumps(result.payload)
    assert not [s for s in secrets if s in stored]
    assert result.redactions, "a secret was removed, so a pointer is listed"
    assert len(set(result.redactions)) == len(result.redactions)
    for pointer in result.redactions:
        resolve(result.payload, pointer)  # RT-2: every pointer still resolves
    again = sanitize(result.payload)
    assert again.payload == result.payload and again.redactions == ()


# --- the command ---------------------------------------------------------------------------------


def run_cli(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "persyk_session.cli", "sanitize", *args],
                          input=stdin, capture_output=True, check=False)


def test_cli_prints_the_sanitized_payload_redactions_and_url() -> None:
    done = run_cli("--url", "wss://u:p@h.example/x?key=k1", stdin=b'{"type":"x","api_key":"k2"}')
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "payload": {"type": "x", "api_key": PLACEHOLDER}, "redactions": ["/api_key"],
        "url": "wss://h.example/x?key=REDACTED",
    }


def test_cli_refuses_what_is_not_json_without_quoting_it() -> None:
    done = run_cli(stdin=b'{"api_key": "sk-hidden-hidden-hidden-1",')
    assert done.returncode == 2
    assert b"USAGE" in done.stderr and b"hidden" not in done.stderr + done.stdout
