"""The adapter protocol, version 1, without I/O: messages as frozen values, encoding, decoding.

Every message has a JSON Schema under ``persyk_contract.schemas/protocol``
(docs/implementers/protocol.md). Decoding checks each adapter message against its schema and, for a
``result``, against the result shape of the requested operation, so a malformed reply becomes a
:class:`ProtocolViolation` with a readable detail rather than a confusing mismatch later. Requests
are checked only in strict mode (they are ours; strict mode proves it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jsonschema_rs
import orjson
import persyk_contract

__all__ = [
    "CAPABILITIES",
    "CAPABILITY_OF_OP",
    "OPERATIONS",
    "PATH_ARGS",
    "PROTOCOL_VERSION",
    "READ_ONLY_OPS",
    "RESERVED_CAPABILITIES",
    "Hello",
    "Implementation",
    "Internal",
    "NotJson",
    "ProtocolViolation",
    "Reply",
    "Result",
    "UndefinedOperationResult",
    "Unsupported",
    "check_request",
    "decode_hello",
    "decode_reply",
    "encode_hello",
    "encode_run",
    "encode_stop",
    "schema_problems",
]

PROTOCOL_VERSION = 1

# Each operation of protocol 1 and the capability an adapter declares to be sent it; the table
# is the contract's (persyk_contract.capabilities), shared with the reference.
CAPABILITY_OF_OP: Mapping[str, str] = {
    op: capability for capability, ops in persyk_contract.capabilities().items() for op in ops
}
OPERATIONS: tuple[str, ...] = tuple(CAPABILITY_OF_OP)
CAPABILITIES: tuple[str, ...] = tuple(persyk_contract.capabilities())
# Declarable now; no case and no operation of protocol 1 uses them yet.
RESERVED_CAPABILITIES: tuple[str, ...] = tuple(
    capability for capability, ops in persyk_contract.capabilities().items() if not ops
)

# CTX-19: these never write; the runner checks the workspace is byte-identical after each.
READ_ONLY_OPS: frozenset[str] = persyk_contract.read_only_operations()

# The argument keys that hold paths. A case gives them relative to its workspace; the runner
# sends them absolute, so an adapter never depends on its working directory.
PATH_ARGS: frozenset[str] = frozenset({"session", "recordsFile", "script"})


class ProtocolViolation(Exception):
    """The adapter sent a message that breaks the protocol (outcome: error)."""


class UndefinedOperationResult(ProtocolViolation):
    """A result to an operation the profile does not define (the bench's no-op, _noop): there
    is no results schema to check it against."""


class NotJson(ValueError):
    """The adapter wrote a non-JSON line: its stdout is not protocol-only (outcome: crash)."""


@dataclass(frozen=True, slots=True)
class Implementation:
    name: str
    version: str
    language: str
    homepage: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"name": self.name, "version": self.version, "language": self.language}
        if self.homepage is not None:
            out["homepage"] = self.homepage
        return out


@dataclass(frozen=True, slots=True)
class Hello:
    """The adapter's reply to ``hello``."""

    protocol: int
    implementation: Implementation
    capabilities: frozenset[str]
    # The format profiles the adapter speaks (hello's "profiles"; absent there: v1 only).
    profiles: frozenset[str] = frozenset({"v1"})


@dataclass(frozen=True, slots=True)
class Result:
    """The operation ran; ``value`` is its result object (possibly with an ``error`` key)."""

    seq: int
    value: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Internal:
    """The adapter could not perform the operation at all."""

    seq: int
    message: str
    traceback: str | None = None


@dataclass(frozen=True, slots=True)
class Unsupported:
    """The adapter does not implement the operation."""

    seq: int
    message: str | None = None


Reply = Result | Internal | Unsupported


@dataclass(frozen=True, slots=True)
class _Schemas:
    hello_request: jsonschema_rs.Validator
    hello_response: jsonschema_rs.Validator
    run_request: jsonschema_rs.Validator
    run_response: jsonschema_rs.Validator
    stop_request: jsonschema_rs.Validator
    results: Mapping[str, jsonschema_rs.Validator] = field(default_factory=dict)


def load_schema(name: str) -> dict[str, Any]:
    """One schema of schemas/protocol, from the installed package (never a checkout path)."""
    data = persyk_contract.schema_bytes(f"protocol/{name}")
    schema: dict[str, Any] = orjson.loads(data)
    return schema


@cache
def _schemas() -> _Schemas:
    def compile_(schema: dict[str, Any]) -> jsonschema_rs.Validator:
        return jsonschema_rs.Draft202012Validator(schema)

    results = load_schema("results.json")
    # A root $ref into results.json's own $defs: one validator per operation, same document.
    per_op = {op: compile_({**results, "$ref": f"#/$defs/{op}"}) for op in OPERATIONS}
    return _Schemas(
        hello_request=compile_(load_schema("hello.request.json")),
        hello_response=compile_(load_schema("hello.response.json")),
        run_request=compile_(load_schema("run.request.json")),
        run_response=compile_(load_schema("run.response.json")),
        stop_request=compile_(load_schema("stop.request.json")),
        results=per_op,
    )


def schema_problems(validator: jsonschema_rs.Validator, instance: Any, limit: int = 5) -> list[str]:
    """Readable schema violations (at most ``limit``), each led by the instance's JSON pointer."""
    problems: list[str] = []
    for error in validator.iter_errors(instance):
        problems.extend(_closest(error))
        if len(problems) >= limit:
            break
    return problems[:limit]


_WRONG_BRANCH = frozenset({"Type", "Constant", "Enum"})


def _closest(error: jsonschema_rs.ValidationError) -> list[str]:
    """A failed oneOf/anyOf is explained by its closest alternative (the one with the fewest
    errors), recursively: "/leaf: '-x' does not match '^[A-Za-z0-9]...'" rather than "/: {the
    whole result} is not valid under any of the schemas listed in the 'oneOf' keyword"."""
    branches = getattr(error.kind, "context", None)
    if branches:
        # The alternative whose shape the value has (fewest errors about the value itself,
        # rather than about one of its members) is the closest; then the fewest errors; on a
        # tie, an alternative of another type or const is farther. A validate result whose
        # `valid` is a string is explained by validate ("/valid: ... is not of type boolean"),
        # not by the error alternative's "additional properties".
        depth = len(error.instance_path)
        closest = min(branches, key=lambda errors: (
            sum(len(e.instance_path) <= depth for e in errors),
            len(errors), sum(type(e.kind).__name__ in _WRONG_BRANCH for e in errors)))
        return [problem for inner in closest for problem in _closest(inner)]
    where = "/" + "/".join(str(part) for part in error.instance_path)
    return [f"{where}: {error.message}"]


# orjson reads an integer outside [-2**63, 2**64 - 1] as a float. Every integer inside that
# range has at most 19 digits, and every one outside it at least 19 (-9223372036854775809 has
# 19), so a line holding a run of 19 digits anywhere is read by the json module instead, which
# keeps every integer exactly (REC-9, rev. 2). The probe maps each digit to "9" and every other
# byte to a space, then looks for nineteen nines: two passes in C, ten times faster than a
# regular expression and cheaper than the parse it guards.
_DIGIT_RUN = b"9" * 19
_DIGITS_ONLY = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")  # as orjson refuses NaN and Infinity


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # as orjson refuses 1e400
        raise ValueError(f"number is infinity when parsed as double: {text}")
    return value


def dumps_line(message: Any) -> bytes:
    """One protocol line; integers beyond 64 bits (which orjson refuses) keep their digits."""
    try:
        return orjson.dumps(message) + b"\n"
    except TypeError:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def loads_line(line: bytes) -> Any:
    """Parse one protocol line, keeping integers exact whatever their size."""
    if _DIGIT_RUN not in line.translate(_DIGITS_ONLY):
        return orjson.loads(line)
    try:
        return json.loads(line, parse_constant=_refuse_constant, parse_float=_finite_float)
    except ValueError as exc:
        raise orjson.JSONDecodeError(str(exc), line.decode("utf-8", "replace"), 0) from None


def _line(message: Mapping[str, Any]) -> bytes:
    return dumps_line(message)


def encode_hello() -> bytes:
    return _line({"cmd": "hello", "protocol": PROTOCOL_VERSION})


def encode_run(seq: int, op: str, args: Mapping[str, Any], profile: str = "v1") -> bytes:
    """A run request; a profile other than v1 is named in it (v1 requests stay as they were)."""
    if profile == "v1":
        return _line({"cmd": "run", "seq": seq, "op": op, "args": args})
    return _line({"cmd": "run", "seq": seq, "profile": profile, "op": op, "args": args})


def encode_stop() -> bytes:
    return _line({"cmd": "stop"})


def check_request(line: bytes) -> list[str]:
    """Strict mode: the schema violations of one of our own requests (empty = valid)."""
    message = loads_line(line)
    schemas = _schemas()
    validator = {
        "hello": schemas.hello_request,
        "run": schemas.run_request,
        "stop": schemas.stop_request,
    }.get(message.get("cmd"), schemas.run_request)
    profile = message.get("profile") if message.get("cmd") == "run" else None
    if isinstance(profile, str):
        validator = _profile_schemas(profile)[0]
    return schema_problems(validator, message)


@cache
def _profile_schemas(
    profile: str,
) -> tuple[jsonschema_rs.Validator, Mapping[str, jsonschema_rs.Validator]]:
    """The run request and per-operation result validators of a profile other than v1
    (``run.<profile>.request.json``, ``results.<profile>.json``)."""
    request = jsonschema_rs.Draft202012Validator(load_schema(f"run.{profile}.request.json"))
    results = load_schema(f"results.{profile}.json")
    ops = load_schema(f"run.{profile}.request.json")["properties"]["op"]["enum"]
    per_op = {op: jsonschema_rs.Draft202012Validator({**results, "$ref": f"#/$defs/{op}"})
              for op in ops}
    return request, per_op


def _parse(line: bytes) -> Any:
    """A line as JSON; a non-JSON line is a crash-class fault (NotJson)."""
    try:
        return loads_line(line)
    except (orjson.JSONDecodeError, UnicodeDecodeError) as exc:
        raise NotJson(f"the adapter wrote a line that is not JSON: {_preview(line)}") from exc


def decode_hello(line: bytes) -> Hello:
    """Decode the hello reply. NotJson: not JSON; ProtocolViolation: not a valid reply."""
    message = _parse(line)
    problems = schema_problems(_schemas().hello_response, message)
    if problems:
        raise ProtocolViolation(
            "the hello reply does not match hello.response.json: " + "; ".join(problems)
        )
    if message["protocol"] != PROTOCOL_VERSION:
        raise ProtocolViolation(
            f"the adapter speaks protocol {message['protocol']}; "
            f"this runner speaks protocol {PROTOCOL_VERSION}"
        )
    impl = message["implementation"]
    return Hello(
        protocol=message["protocol"],
        implementation=Implementation(
            name=impl["name"],
            version=impl["version"],
            language=impl["language"],
            homepage=impl.get("homepage"),
        ),
        capabilities=frozenset(message["capabilities"]),
        profiles=frozenset(message.get("profiles", ("v1",))),
    )


def decode_reply(line: bytes, *, seq: int, op: str, profile: str = "v1") -> Reply:
    """Decode the reply to request ``seq`` (an ``op``), checking it against the schemas."""
    message = _parse(line)
    schemas = _schemas()
    problems = schema_problems(schemas.run_response, message)
    if problems:
        raise ProtocolViolation(
            "the reply does not match run.response.json: " + "; ".join(problems)
        )
    if message["seq"] != seq:
        raise ProtocolViolation(
            f"the reply carries seq {message['seq']}; the request had seq {seq}"
        )
    if "internal" in message:
        internal = message["internal"]
        return Internal(seq=seq, message=internal["message"], traceback=internal.get("traceback"))
    if "unsupported" in message:
        return Unsupported(seq=seq, message=message.get("message"))
    result = message["result"]
    validator = (schemas.results if profile == "v1" else _profile_schemas(profile)[1]).get(op)
    if validator is None:
        raise UndefinedOperationResult(
            f"a result to {op}, which the {profile} protocol does not define")
    problems = schema_problems(validator, result)
    if problems:
        where = "results.json" if profile == "v1" else f"results.{profile}.json"
        raise ProtocolViolation(
            f"the {op} result does not match {where}#/$defs/{op}: " + "; ".join(problems)
        )
    return Result(seq=seq, value=result)


def _preview(line: bytes, limit: int = 120) -> str:
    text = line.decode("utf-8", "replace").rstrip("\n")
    return repr(text if len(text) <= limit else text[:limit] + "...")
