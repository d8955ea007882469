"""The protocol's messages, schemas and the reference adapter that speaks it."""

from __future__ import annotations

import io
import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import orjson
import pytest
from persyk_conformance._protocol import (
    Internal,
    NotJson,
    ProtocolViolation,
    Result,
    UndefinedOperationResult,
    Unsupported,
    check_request,
    decode_hello,
    decode_reply,
    encode_hello,
    encode_run,
    encode_stop,
    loads_line,
)
from persyk_session.adapter import serve

PROTOCOL_DIR = files("persyk_contract.schemas") / "protocol"
SCHEMA_NAMES = sorted(p.name for p in PROTOCOL_DIR.iterdir() if p.name.endswith(".json"))
SESSION = (
    b'{"type":"session","version":1,"id":"s1","timestamp":"2026-01-01T00:00:00Z"}\n'
    b'{"type":"custom","id":"c1","parentId":null,"timestamp":"2026-01-01T00:00:00Z",'
    b'"customType":"x","data":null}\n'
)


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_protocol_schema_is_valid_2020_12_with_an_id(name: str) -> None:
    schema = json.loads((PROTOCOL_DIR / name).read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith(f"/protocol/{name}")


def converse(*requests: bytes) -> tuple[int, list[dict[str, object]]]:
    stdout = io.BytesIO()
    status = serve(io.BytesIO(b"".join(requests)), stdout)
    return status, [orjson.loads(line) for line in stdout.getvalue().splitlines()]


def test_reference_adapter_hello_declares_its_operations() -> None:
    status, replies = converse(encode_hello(), encode_stop())
    assert status == 0
    hello = decode_hello(orjson.dumps(replies[0]))
    assert hello.implementation.name == "persyk-session"
    assert {"read", "append", "recover", "paged-read"} <= hello.capabilities


def test_reference_adapter_answers_run_with_the_same_seq(tmp_path: Path) -> None:
    (tmp_path / "session.jsonl").write_bytes(SESSION)
    _status, replies = converse(
        encode_hello(), encode_run(7, "validate", {"session": str(tmp_path)}), encode_stop()
    )
    reply = decode_reply(orjson.dumps(replies[1]), seq=7, op="validate")
    assert isinstance(reply, Result)
    assert reply.value == {"valid": True, "errors": [], "truncated": False}


def test_reference_adapter_turns_usage_errors_into_results(tmp_path: Path) -> None:
    _, replies = converse(encode_run(1, "info", {"session": str(tmp_path / "none")}))
    reply = decode_reply(orjson.dumps(replies[0]), seq=1, op="info")
    assert isinstance(reply, Result)
    assert reply.value["error"]["code"] == "PATH_NOT_FOUND"  # type: ignore[index]


@pytest.mark.parametrize(
    ("request_line", "kind"),
    [
        (encode_run(1, "capture", {"session": "/x"}), Unsupported),
        (b'{"cmd":"run","seq":1,"op":"validate","args":[]}\n', Internal),
    ],
    ids=["unknown-op", "args-not-object"],
)
def test_reference_adapter_never_dies_on_a_bad_request(request_line: bytes, kind: type) -> None:
    status, replies = converse(request_line, encode_run(2, "validate", {"session": "/nope"}))
    assert status == 0
    assert replies[0]["seq"] == 1
    first = replies[0]
    assert ("unsupported" in first) == (kind is Unsupported)
    assert ("internal" in first) == (kind is Internal)
    assert replies[1]["seq"] == 2


def test_reference_adapter_ends_on_stop_and_writes_nothing_after() -> None:
    status, replies = converse(encode_stop(), encode_hello())
    assert (status, replies) == (0, [])


@pytest.mark.parametrize(
    ("line", "error", "detail"),
    [
        (b"not json\n", NotJson, "not JSON"),
        (b'{"seq":1}\n', ProtocolViolation, "run.response.json"),
        (b'{"seq":2,"result":{"valid":true,"errors":[],"truncated":false}}\n',
         ProtocolViolation, "seq 2"),
        (b'{"seq":1,"result":{"valid":true}}\n', ProtocolViolation, "results.json"),
        (b'{"seq":1,"result":{},"internal":{"message":"x"}}\n', ProtocolViolation, "run.response"),
        (b'{"seq":1,"result":{"valid":true,"errors":[{"code":"X","message":"m"}],'
         b'"truncated":false}}\n', ProtocolViolation, "results.json"),
    ],
    ids=["not-json", "no-body", "wrong-seq", "incomplete-result", "two-bodies",
         "valid-with-errors"],
)
def test_decode_reply_rejects_malformed_replies(line: bytes, error: type, detail: str) -> None:
    with pytest.raises(error, match=detail):
        decode_reply(line, seq=1, op="validate")


@pytest.mark.parametrize(
    ("result", "detail"),
    [
        # pi accepts ids outside the Id syntax: the leaf is named, not the whole result.
        ({"leaf": "-x", "messages": [], "custom": []}, "/leaf: \"-x\" does not match"),
        ({"leaf": None, "messages": [{"id": "a", "type": "message"}]},
         "/messages/0: \"message\" is a required property"),
        ({"error": {"code": "x", "message": "m"}}, "/error/code: \"x\" does not match"),
    ],
    ids=["bad-leaf", "item-without-message", "bad-code"],
)
def test_a_result_breaking_a_oneof_is_explained_by_its_closest_alternative(
    result: dict[str, object], detail: str
) -> None:
    line = orjson.dumps({"seq": 1, "result": result}) + b"\n"
    with pytest.raises(ProtocolViolation) as caught:
        decode_reply(line, seq=1, op="context")
    assert detail in str(caught.value)
    assert "is not valid under any of the schemas" not in str(caught.value)


def test_a_result_to_an_operation_the_protocol_does_not_define_is_a_protocol_violation() -> None:
    # The bench's no-op (bench/_noop.py) must be answered unsupported; a result has no schema.
    line = orjson.dumps({"seq": 1, "result": {}}) + b"\n"
    with pytest.raises(UndefinedOperationResult, match="a result to benchNoOp, which the v1 "):
        decode_reply(line, seq=1, op="benchNoOp")
    assert issubclass(UndefinedOperationResult, ProtocolViolation)
    assert isinstance(decode_reply(orjson.dumps({"seq": 1, "unsupported": True}), seq=1,
                                   op="benchNoOp"), Unsupported)


@pytest.mark.parametrize(
    ("hello", "detail"),
    [
        ({"protocol": 2, "implementation": {"name": "x", "version": "1", "language": "c"},
          "capabilities": []}, "speaks protocol 2"),
        ({"protocol": 1, "implementation": {"name": "x", "version": "1", "language": "c"},
          "capabilities": ["telepathy"]}, "hello.response.json"),
        ({"protocol": 1, "capabilities": []}, "hello.response.json"),
    ],
    ids=["other-version", "unknown-capability", "no-implementation"],
)
def test_decode_hello_rejects_bad_replies(hello: dict[str, object], detail: str) -> None:
    with pytest.raises(ProtocolViolation, match=detail):
        decode_hello(orjson.dumps(hello))


def test_reserved_capabilities_may_be_declared() -> None:
    hello = decode_hello(orjson.dumps({
        "protocol": 1, "implementation": {"name": "x", "version": "1", "language": "c"},
        "capabilities": ["read", "search", "assets", "capture"]}))
    assert "capture" in hello.capabilities


@pytest.mark.parametrize(
    ("line", "valid"),
    [
        (encode_hello(), True),
        (encode_stop(), True),
        (encode_run(1, "context", {"session": "/s", "leaf": None}), True),
        (encode_run(1, "append", {"session": "/s", "records": [{}], "leaf": "m1"}), True),
        (encode_run(1, "read", {"session": "/s", "pageSize": 2, "cursor": None}), True),
        (encode_run(1, "validate", {"session": "relative/path"}), False),
        (encode_run(1, "append", {"session": "/s"}), False),
        (encode_run(1, "read", {"session": "/s", "pageSize": 0}), False),
        (encode_run(1, "capture", {"session": "/s"}), False),
    ],
    ids=["hello", "stop", "context-null-leaf", "append-records", "read", "relative-path",
         "append-without-records", "page-size-0", "reserved-op"],
)
def test_strict_request_check(line: bytes, valid: bool) -> None:
    assert (check_request(line) == []) is valid


# Integers at and just past orjson's 64-bit bounds, where it would read a float (REC-9, rev. 2);
# a long digit run inside a string or a fraction goes the slow way and reads the same.
EXACT_NUMBERS = [
    (b"-9223372036854775808", -(2**63)),
    (b"-9223372036854775809", -(2**63) - 1),
    (b"-9999999999999999999", -9999999999999999999),
    (b"9999999999999999999", 9999999999999999999),
    (b"18446744073709551615", 2**64 - 1),
    (b"18446744073709551616", 2**64),
    (b"123456789012345678901234567890", 123456789012345678901234567890),
    (b'{"a":[1,-12345678901234567890]}', {"a": [1, -12345678901234567890]}),
    (b'"12345678901234567890123"', "12345678901234567890123"),
    (b"0.12345678901234567890", 0.12345678901234567890),
]


@pytest.mark.parametrize(("line", "value"), EXACT_NUMBERS,
                         ids=[line.decode() for line, _ in EXACT_NUMBERS])
def test_loads_line_keeps_every_integer_exact(line: bytes, value: object) -> None:
    loaded = loads_line(line + b"\n")
    assert loaded == value and type(loaded) is type(value)


@pytest.mark.parametrize("line", [b"[NaN, 12345678901234567890]", b"[Infinity]",
                                  b"[1e400, 12345678901234567890]", b"[-Infinity, 1]"],
                         ids=["nan", "infinity", "overflowing-float", "minus-infinity"])
def test_loads_line_refuses_what_orjson_refuses_on_either_path(line: bytes) -> None:
    with pytest.raises(orjson.JSONDecodeError):
        loads_line(line)
