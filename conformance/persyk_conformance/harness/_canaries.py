"""Built-in harness cases (H-NNN): checks only a harness can make, generated fresh per run.

DIAG-1 says diagnostics never contain message bodies, string values from the input or secrets.
A fixture cannot prove that, because an implementation could special-case a known string. So
each run plants *canaries* -- unique random tokens -- in every place a leak could come from
(message text, thinking, tool arguments, custom data, a realtime payload's ``authorization``,
an endpoint's api key, a session name, an offending value itself) and fails the case if any
token appears in a diagnostic (a result's ``error`` or ``errors``, an ``internal`` message) or
on the adapter's stderr. A canary *may* appear in a successful result: a context result returns
message text, which is the data. Every harness case also gets the runner's usual checks: the
workspace is unchanged by reads and nothing is written outside it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import records as kit
from ..cases._load import Case, Step
from ..run._runner import Planned

__all__ = ["HARNESS_IDS", "harness_cases"]

TS = "2026-01-01T00:00:00Z"
MS = 1767225600000


class _Canaries:
    """Fresh tokens, each remembered with the place it was planted in."""

    def __init__(self) -> None:
        self.planted: dict[str, str] = {}

    def __call__(self, where: str) -> str:
        token = f"pkcanary{secrets.token_hex(10)}"
        self.planted[token] = where
        return token


def _valid_session(c: _Canaries) -> bytes:
    """Every kind of place a secret or a body can sit, in a session that is valid."""
    records = [
        {"type": "session", "version": 1, "id": "harness", "timestamp": TS},
        kit.entry("message", "m1", None, message={
            "role": "user", "timestamp": MS,
            "content": [{"type": "text", "text": c("user message text")}]}),
        kit.entry("message", "m2", "m1", message={
            "role": "assistant", "timestamp": MS,
            "content": [
                {"type": "thinking", "thinking": c("assistant thinking")},
                {"type": "toolCall", "id": "call1", "name": "lookup",
                 "arguments": {"query": c("tool call arguments")}},
            ],
            "errorMessage": c("assistant errorMessage")}),
        kit.entry("message", "m3", "m2", message={
            "role": "toolResult", "toolCallId": "call1", "toolName": "lookup", "isError": False,
            "timestamp": MS, "content": [{"type": "text", "text": c("tool result text")}],
            "details": {"raw": c("tool result details")}}),
        kit.entry("custom", "c1", "m3", customType="harness.state",
               data={"note": c("custom data")}),
        kit.entry("api_connection", "a1", "c1", connectionId="conn1", provider="example",
               endpoint="wss://realtime.example.com/v1", requestedModel="model", api="realtime",
               originId="m3"),
        kit.entry("realtime_event", "e1", "a1", connectionId="conn1", direction="outgoing",
               observation="send_attempt", observedAt=TS, sequence=0,
               payload={"type": "session.update",
                        "authorization": "Bearer " + c("realtime payload authorization")}),
        kit.entry("session_info", "i1", "e1", name=c("session name")),
        kit.entry("label", "l1", "i1", targetId="m1", label=c("label text")),
    ]
    return b"".join(kit.line(r) for r in records)


def _record_faults(c: _Canaries) -> bytes:
    """Record-level faults (REC) whose bytes hold canaries; nothing depends on a faulty line."""
    head = _valid_session(c)
    faults = [
        # REC-3: a trailing comma after a canary value.
        b'{"type":"custom","id":"f1","parentId":"m1","timestamp":"' + TS.encode()
        + b'","customType":"x","data":"' + c("value before a syntax error").encode() + b'",}\n',
        # REC-7: the two values of a duplicate key.
        b'{"type":"custom","id":"f2","parentId":"m1","timestamp":"' + TS.encode()
        + b'","customType":"x","data":{"k":"' + c("first duplicate-key value").encode()
        + b'","k":"' + c("second duplicate-key value").encode() + b'"}}\n',
        # REC-2: an invalid UTF-8 byte right after a canary.
        b'{"type":"custom","id":"f3","parentId":"m1","timestamp":"' + TS.encode()
        + b'","customType":"x","data":"' + c("text before invalid UTF-8").encode() + b'\xff"}\n',
        # REC-5: an escaped lone surrogate after a canary.
        b'{"type":"custom","id":"f4","parentId":"m1","timestamp":"' + TS.encode()
        + b'","customType":"x","data":"' + c("text before a lone surrogate").encode()
        + b'\\ud800"}\n',
    ]
    return head + b"".join(faults)


def _entry_faults(c: _Canaries) -> bytes:
    """Schema and entry faults where the offending value, or a sibling of it, is a canary."""
    head = _valid_session(c)
    faults = [
        kit.entry("message", "g1", "m1", message={
            "role": "user", "timestamp": MS, "secret": c("unknown message member value"),
            "content": [{"type": "text", "text": c("text of an invalid message")}]}),
        kit.entry("message", "g2", "m1", message={
            "role": c("invalid role value"), "timestamp": MS, "content": []}),
        kit.entry("message", "g3", "m1", message={
            "role": "assistant", "timestamp": MS,
            "content": [{"type": "thinking", "thinking": c("thinking of an invalid block"),
                         "redacted": c("non-boolean redacted value")}]}),
        kit.entry("message", "g4", "m1", message={
            "role": "assistant", "timestamp": MS,
            "content": [{"type": "toolCall", "id": "call2", "name": 42,
                         "arguments": {"token": c("arguments of an invalid tool call")}}]}),
        kit.entry("custom", "g5", "m1", customType="", data={"k": c("data of an invalid custom")}),
        kit.entry("api_connection", "g6", "m1", connectionId="conn2", provider="example",
               endpoint="https://api.example.com/v1?api_key=" + c("api key in an endpoint"),
               requestedModel="model", api="responses", originId=None),
        kit.entry("api_connection", "g7", "m1", connectionId="conn3", provider="example",
               endpoint="https://user:" + c("password in an endpoint") + "@api.example.com/v1",
               requestedModel="model", api="responses", originId=None),
        kit.entry("realtime_event", "g8", "m1", connectionId="conn1", direction="outgoing",
               observation="received", observedAt=TS, sequence=1,
               payload={"type": "session.update",
                        "authorization": "Bearer " + c("authorization in an invalid event")}),
        kit.entry(c("unknown entry type value"), "g9", "m1"),
        {**kit.entry("custom", "g10", "m1", customType="x", data=None),
         "timestamp": c("invalid timestamp value")},
        kit.entry("model_change", "g11", "m1", provider="example", modelId=""),
        kit.entry("label", "g12", "m1", targetId="m1", label=["not", c("label of a bad label")]),
    ]
    return head + b"".join(kit.line(f) for f in faults)


def _write(
    root: Path, files: dict[str, bytes], fifos: tuple[str, ...] = (),
    symlinks: tuple[tuple[str, str], ...] = (),
) -> None:
    for rel, data in files.items():
        path = root / "tree" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for rel in fifos:  # no fixture can ship a FIFO: made here, in the case's tree
        path = root / "tree" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
    for rel, target in symlinks:  # nor a symlink (package data drops them)
        path = root / "tree" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)


@dataclass(frozen=True, slots=True)
class _Spec:
    title: str
    rules: tuple[str, ...]
    requires: tuple[str, ...]
    files: dict[str, bytes]
    steps: tuple[Step, ...]
    fifos: tuple[str, ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()  # (path, relative target)


_NO_LEAK_RULES = ("DIAG-1", "CTX-19")
# Any failure result: the check is about what the diagnostic says, not which code it has.
_ERROR: dict[str, Any] = {"error": {}}


def _step(op: str, expect: dict[str, Any], **args: Any) -> Step:
    return Step(op=op, args=args, expect=expect)


def _h001(c: _Canaries) -> _Spec:
    return _Spec(
        "no canary in the diagnostics of record-level faults",
        _NO_LEAK_RULES,
        ("read",),
        {"bad/session.jsonl": _record_faults(c)},
        (
            _step("validate", {"valid": False}, session="bad"),
            _step("context", _ERROR, session="bad"),
            _step("context", _ERROR, session="bad", leaf="m2"),
            _step("info", _ERROR, session="bad"),
        ),
    )


def _h002(c: _Canaries) -> _Spec:
    return _Spec(
        "no canary in the diagnostics of schema and entry faults (secrets, bodies, bad values)",
        _NO_LEAK_RULES,
        ("read",),
        {"bad/session.jsonl": _entry_faults(c)},
        (
            _step("validate", {"valid": False}, session="bad"),
            _step("context", _ERROR, session="bad"),
            _step("info", _ERROR, session="bad"),
        ),
    )


def _h003(c: _Canaries) -> _Spec:
    return _Spec(
        "canaries in a valid session are data: valid, readable, never on stderr",
        _NO_LEAK_RULES,
        ("read",),
        {"good/session.jsonl": _valid_session(c)},
        (
            _step("validate", {"valid": True, "errors": []}, session="good"),
            _step("context", {"leaf": "l1"}, session="good"),
            _step("context", {"leaf": "m2"}, session="good", leaf="m2"),
            _step("context", _ERROR, session="good", leaf="nope"),
            _step("info", {"defaultLeaf": "l1"}, session="good"),
        ),
    )


def _h004(c: _Canaries) -> _Spec:
    return _Spec(
        "paged reads: canaries are data in pages and absent from diagnostics",
        (*_NO_LEAK_RULES, "CTX-24"),
        ("read", "paged-read"),
        {"good/session.jsonl": _valid_session(c), "bad/session.jsonl": _entry_faults(c)},
        (
            _step("read", {}, session="good", pageSize=3),
            _step("read", _ERROR, session="bad", pageSize=3),
        ),
    )


def _h005(c: _Canaries) -> _Spec:
    bad_record = kit.entry("message", "n1", "l1", message={
        "role": "user", "timestamp": MS, "secret": c("member of a refused append record"),
        "content": [{"type": "text", "text": c("text of a refused append record")}]})
    return _Spec(
        "a refused append names no canary of the refused record",
        ("DIAG-1", "APP-9"),
        ("read", "append"),
        {"good/session.jsonl": _valid_session(c)},
        (_step("append", _ERROR, session="good", records=[bad_record]),),
    )


def _h006(c: _Canaries) -> _Spec:
    # AST-8: a FIFO never yields end-of-file and blocks whoever opens it for reading without a
    # writer, so an implementation that opens a referenced asset while validating hangs here.
    image = {"type": "image", "asset": {"status": "available", "path": "assets/pipe.png",
                                        "mimeType": "image/png"}}
    records = [
        {"type": "session", "version": 1, "id": "harness", "timestamp": TS},
        kit.entry("message", "m1", None, message={"role": "user", "timestamp": MS,
                                                  "content": [image]}),
    ]
    return _Spec(
        "validation never opens an asset: the referenced file is a FIFO",
        ("AST-8", "CTX-19"),
        ("read",),
        {"good/session.jsonl": kit.jsonl(*records)},
        (
            _step("validate", {"valid": True, "errors": []}, session="good"),
            _step("context", {"leaf": "m1"}, session="good"),
            _step("info", {"defaultLeaf": "m1"}, session="good"),
        ),
        fifos=("good/assets/pipe.png",),
    )


def _session_bytes() -> tuple[bytes, bytes]:
    """A valid session and the same with a torn last record."""
    header = {"type": "session", "version": 1, "id": "harness-links", "timestamp": TS}
    records = [kit.user("m0", None, "first"), kit.user("m1", "m0", "second")]
    valid = kit.jsonl(header, *records)
    return valid, valid + kit.line(kit.user("m2", "m1", "torn"))[:40]


_REFUSED_LINK: dict[str, Any] = {"error": {"code": "SESSION_PATH_REFUSED"}}


def _h110(c: _Canaries) -> _Spec:
    # APP-25: `session.jsonl -> elsewhere` once made append create elsewhere's session.lock.
    valid, _ = _session_bytes()
    untouched = {
        "outside/session.jsonl": {"unchanged": True},
        "outside/session.lock": {"absent": True},
        "linked/session.lock": {"absent": True},
    }
    return _Spec(
        "a mutation never follows a symlinked session.jsonl; reading still does",
        ("APP-25", "CTX-19"),
        ("read", "append"),
        {"outside/session.jsonl": valid},
        (
            Step("append", {"session": "linked", "records": [kit.user("n0", "m1", "new")]},
                 {**_REFUSED_LINK, "committed": [], "alreadyPresent": []}, untouched),
            Step("remove", {"session": "linked", "targetId": "m1", "id": "r1", "leaf": "m1",
                            "timestamp": TS},
                 {**_REFUSED_LINK, "committed": [], "alreadyPresent": []}, untouched),
            _step("validate", {"valid": True, "errors": []}, session="linked"),
        ),
        symlinks=(("linked/session.jsonl", "../outside/session.jsonl"),),
    )


def _h111(c: _Canaries) -> _Spec:
    # APP-25: `recovery -> elsewhere` once made recover write its fragment there and succeed.
    _, torn = _session_bytes()
    return _Spec(
        "recovery never follows a symlinked recovery/ or session.jsonl",
        ("APP-25", "RCV-19"),
        ("read", "recover"),
        {"torn/session.jsonl": torn, "elsewhere/README.txt": b"not for fragments\n",
         "target/session.jsonl": torn},
        (
            Step("recover", {"session": "torn"}, _REFUSED_LINK,
                 {"torn/session.jsonl": {"unchanged": True},
                  "elsewhere/README.txt": {"unchanged": True}}),
            Step("recover", {"session": "linked"}, _REFUSED_LINK,
                 {"target/session.jsonl": {"unchanged": True},
                  "target/session.lock": {"absent": True},
                  "target/recovery": {"absent": True}}),
        ),
        symlinks=(("torn/recovery", "../elsewhere"),
                  ("linked/session.jsonl", "../target/session.jsonl")),
    )


_BUILDERS: dict[str, Callable[[_Canaries], _Spec]] = {
    "H-001": _h001,
    "H-002": _h002,
    "H-003": _h003,
    "H-004": _h004,
    "H-005": _h005,
    "H-006": _h006,
    "H-110": _h110,
    "H-111": _h111,
}
HARNESS_IDS: tuple[str, ...] = tuple(_BUILDERS)


def harness_cases(root: Path) -> list[Planned]:
    """Write the harness cases under ``root`` (fresh canaries) and return them ready to run."""
    planned: list[Planned] = []
    for case_id, build in _BUILDERS.items():
        canaries = _Canaries()
        spec = build(canaries)
        directory = root / case_id
        _write(directory, spec.files, spec.fifos, spec.symlinks)
        case = Case(
            id=case_id,
            kind="harness",
            title=spec.title,
            rules=spec.rules,
            level="MUST",
            requires=spec.requires,
            steps=spec.steps,
            directory=directory,
            group="harness",
        )
        planned.append(Planned(case=case, canaries=dict(canaries.planted)))
    return planned
