"""Secrets by meaning, not only by list (RT-29..RT-32 rev. 2): every header
shape without case, secret-shaped member names, percent- and base64-encoded values, JSON inside
strings and credential headers written out in text. A property plants secrets in these shapes and
finds none in what replay would persist, and none in a replay diagnostic."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from _paths import CHECKOUT
from fakes.casetree import fake, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_session.realtime._evidence import PlannedRecord, parse_script, plan_replay
from persyk_session.realtime._sanitize import PLACEHOLDER, is_secret_header, sanitize

KEY = "sk-proj-" + "Q7" * 12


def b64(text: str, *, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(text.encode()).decode()


def every_byte_percent_encoded(text: str) -> str:
    return "".join(f"%{byte:02X}" for byte in text.encode())


@pytest.mark.parametrize("name", ["AuThOrIzAtIoN", "AUTHORIZATION", "X-API-KEY", "x-Api-KEY",
                                  "PROXY-authorization", "COOKIE", "XApiKey"])
def test_header_names_are_compared_without_case(name: str) -> None:
    assert is_secret_header(name)


@pytest.mark.parametrize(("payload", "pointer"), [
    ({"headers": [["AuThOrIzAtIoN", "opaque-token-1"]]}, "/headers/0/1"),
    ({"headers": [{"Name": "Authorization", "Value": "opaque-token-2"}]}, "/headers/0/Value"),
    ({"headers": [{"NAME": "x-api-key", "VALUE": "opaque-token-3"}]}, "/headers/0/VALUE"),
    ({"HEADERS": {"X-API-KEY": "opaque-token-4"}}, "/HEADERS/X-API-KEY"),
    ({"extra": [["Authorization", "opaque-token-5"]]}, "/extra/0/1"),
    ({"meta": {"name": "api_key", "value": "opaque-token-6"}}, "/meta/value"),
], ids=["pair-mixed-case", "Name-Value", "NAME-VALUE", "HEADERS-upper", "pair-outside-headers",
        "name-value-outside-headers"])
def test_every_header_shape_is_read_without_case(payload: Any, pointer: str) -> None:
    result = sanitize(payload)
    assert pointer in result.redactions
    assert "opaque-token" not in json.dumps(result.payload)


def test_a_secret_used_as_a_member_name_is_replaced_and_listed() -> None:
    result = sanitize({"tools": {KEY: {"type": "function"}, "[REDACTED]": 1, "other": 2}})
    stored = json.dumps(result.payload)
    assert KEY not in stored
    assert result.payload["tools"]["[REDACTED]"] == 1, "a name that did not change keeps it"
    assert result.payload["tools"]["[REDACTED]#2"] == {"type": "function"}, "nothing lost"
    assert result.redactions == ("/tools/[REDACTED]#2",)


@pytest.mark.parametrize("text", [
    f"wss://api.example.com/v1?q={every_byte_percent_encoded(KEY)}",
    f"see {quote(KEY, safe='').replace('-', '%2D')} there",
    b64(f"Bearer {KEY}"),
    f"auth blob {b64(f'Bearer {KEY}', urlsafe=True).rstrip('=')} end",
    b64(quote(KEY).replace("-", "%2D")),
    b64(KEY),
], ids=["percent-in-query", "percent-in-text", "base64-bearer", "base64url-unpadded",
        "base64-of-percent", "base64-key"])
def test_encoded_secrets_are_decoded_and_removed(text: str) -> None:
    result = sanitize({"value": text})
    assert result.redactions == ("/value",)
    stored = json.dumps(result.payload)
    assert text not in stored and "Q7Q7Q7" not in stored


def test_a_string_holding_json_is_sanitized_as_json() -> None:
    arguments = json.dumps({"city": "Oslo", "auth": {"api_key": "opaque-arg-key"},
                            "nested": json.dumps({"password": "opaque-inner"})})
    result = sanitize({"type": "response.function_call_arguments.done", "arguments": arguments})
    assert result.redactions == ("/arguments",)
    inner = json.loads(result.payload["arguments"])
    assert inner["city"] == "Oslo" and inner["auth"]["api_key"] == PLACEHOLDER
    assert json.loads(inner["nested"]) == {"password": PLACEHOLDER}


@pytest.mark.parametrize(("message", "kept"), [
    ("upstream said Authorization: Token opaque-err-1, retry",
     f"upstream said Authorization: Token {PLACEHOLDER}, retry"),
    ("header 'x-api-key: opaque-err-2' refused", f"header 'x-api-key: {PLACEHOLDER}' refused"),
    ("proxy-authorization=Basic opaque-err-3", f"proxy-authorization=Basic {PLACEHOLDER}"),
    ("Cookie: opaque-err-4; path=/", f"Cookie: {PLACEHOLDER}; path=/"),
], ids=["authorization-token", "x-api-key", "proxy-basic", "cookie"])
def test_credential_headers_written_in_text_lose_their_value(message: str, kept: str) -> None:
    result = sanitize({"error": {"message": message}})
    assert result.payload == {"error": {"message": kept}}


@pytest.mark.parametrize("payload", [
    {"text": "the key word and an api key example", "headers": {"Accept": "text/plain"}},
    {"audio": b64("\x00\x01binary-looking audio frames\x02" * 20)},
    {"arguments": json.dumps({"city": "Oslo", "max_tokens": 5})},
    {"url": "https://example.com/docs?page=2&lang=en"},
    {"id": "item_CzUeXbQ2k5n8YbWzQ3dA"},
], ids=["words", "base64-audio", "json-without-secret", "url", "provider-id"])
def test_values_that_are_not_secrets_stay_unchanged(payload: Any) -> None:
    assert sanitize(payload).payload == payload  # RT-33


# --- the property: planted in every shape, found nowhere persisted or reported -----------------

SECRET = st.from_regex(r"[A-Za-z0-9]{20,32}", fullmatch=True).map(lambda s: "persykZ" + s)
HEADERS = st.sampled_from(["Authorization", "Proxy-Authorization", "api-key", "x-api-key",
                           "Cookie", "X-Goog-Api-Key"])
MEMBERS = st.sampled_from(["api_key", "apiKey", "access_token", "password", "client_secret"])


def recase(draw: st.DrawFn, name: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    return "".join(c.upper() if flip else c.lower() for c, flip in zip(name, flips, strict=True))


@st.composite
def planted(draw: st.DrawFn, secret: str) -> tuple[Any, list[str]]:
    """One secret in one shape, and every spelling of it that must not be persisted."""
    key = f"sk-proj-{secret}"
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return {"headers": [[recase(draw, draw(HEADERS)), secret]]}, [secret]
    if kind == 1:
        name, value = recase(draw, "name"), recase(draw, "value")
        return {"headers": [{name: draw(HEADERS), value: secret}]}, [secret]
    if kind == 2:
        return {key: draw(st.sampled_from(["x", 1, None]))}, [secret]
    if kind == 3:
        encoded = every_byte_percent_encoded(key)
        where = draw(st.sampled_from([f"wss://h.example/v1?model=m&q={encoded}",
                                      f"sent {encoded} twice"]))
        return where, [secret, encoded]
    if kind == 4:
        encoded = b64(draw(st.sampled_from([f"Bearer {key}", key, f"Bearer {secret}"])),
                      urlsafe=draw(st.booleans()))
        return f"blob {encoded} end", [secret, encoded.rstrip("=")]
    if kind == 5:
        inner = json.dumps({draw(MEMBERS): secret, "city": "Oslo"})
        if draw(st.booleans()):
            inner = json.dumps({"call": inner})  # JSON in a string in a string
        return {"arguments": inner}, [secret]
    scheme = draw(st.sampled_from(["Token ", "Bearer ", "Basic ", ""]))
    header = recase(draw, draw(st.sampled_from(["Authorization", "x-api-key", "Cookie"])))
    return {"error": {"message": f"refused {header}: {scheme}{secret} now"}}, [secret]


@st.composite
def events(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    secrets = draw(st.lists(SECRET, min_size=1, max_size=3, unique=True))
    event: dict[str, Any] = {"type": "response.done"}
    spellings: list[str] = []
    for index, secret in enumerate(secrets):
        value, forms = draw(planted(secret))
        event[f"part{index}"] = value if draw(st.booleans()) else {"wrapped": [1, value]}
        spellings += forms
    return event, spellings


OPEN = {"at": 0, "connection": "c1", "open": {"provider": "openai", "model": "m",
        "endpoint": "wss://api.example.com/v1", "api": "realtime"}}


@pytest.mark.slow
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(events())
def test_no_secret_planted_by_meaning_is_persisted(case: tuple[dict[str, Any], list[str]]) -> None:
    event, spellings = case
    script = b"".join(json.dumps(line).encode() + b"\n" for line in (
        OPEN, {"at": 1, "connection": "c1", "direction": "received", "event": event}))
    records = [p.record for p in plan_replay(parse_script(script), "2026-01-01T00:00:00.000Z")
               if isinstance(p, PlannedRecord)]
    stored = json.dumps(records, ensure_ascii=False)
    assert [form for form in spellings if form in stored] == []
    again = sanitize(records[-1]["payload"])
    assert again.redactions == (), "sanitizing twice changes nothing (RT-2)"


def test_a_replay_diagnostic_names_no_planted_secret(tmp_path: Path) -> None:
    """A script refused for its shape is refused by line number, never by its text."""
    encoded = b64(f"Bearer {KEY}")
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps(OPEN) + "\n" + json.dumps({
        "at": 1, "connection": "c9", "direction": "received",
        "event": {"type": "x", "headers": [["AUTHORIZATION", KEY]], "blob": encoded}}) + "\n")
    session = tmp_path / "s"
    subprocess.run([sys.executable, "-m", "persyk_session.cli", "create", str(session)],
                   check=True, capture_output=True)
    done = subprocess.run(
        [sys.executable, "-m", "persyk_session.cli", "replay", "--script", str(script),
         str(session), "--leaf-null"], capture_output=True, check=False)
    assert done.returncode == 2 and b"line 2" in done.stderr, done.stderr
    said = done.stdout + done.stderr
    assert KEY.encode() not in said and encoded.encode() not in said and b"Q7Q7" not in said


# --- the cases catch a sanitizer that lacks exactly one reading --------------------------------

FIXTURES = CHECKOUT / "fixtures" / "v1"


@pytest.mark.parametrize(("flag", "case_id"), [
    ("--no-case", "S-995"), ("--no-names", "S-996"), ("--no-decode", "S-997"),
    ("--no-json", "S-998"), ("--no-header-text", "S-999"),
])
@pytest.mark.slow
def test_each_case_fails_the_sanitizer_that_lacks_its_reading(flag: str, case_id: str) -> None:
    # a generous deadline: the machine is shared, and a timeout is not the outcome under test
    honest = run(FIXTURES, fake("sanitize_by_list"), case_id, timeout=60)
    assert {str(r.outcome) for r in honest.results} == {"pass"}, "without a flag: the reference"
    record = run(FIXTURES, fake("sanitize_by_list", flag), case_id, timeout=60)
    assert [(r.id, str(r.outcome)) for r in record.results] == [(case_id, "fail")]
