"""Forty malformed command lines to ``persyk-session``: each ends with a status of 1 or 2 and a
``persyk-session:`` message or a stable code, never a traceback, and the session it names is
byte for byte and entry for entry what it was (no file added, none removed).

The inputs are those a script, a shell or a fuzzer hands over: missing or doubled options,
numbers that are not numbers or out of their range, cursors and results that are not the
runner's, paths that are empty, climb out, or name a file inside a file, record files that are
not JSONL (invalid UTF-8, a lone surrogate, 100,000 levels of nesting, a second header), and
arguments that are not text (an undecodable byte, which Python passes as a lone surrogate).
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from persyk_conformance.records import header, user
from persyk_session.cli import main

STABLE_CODE = re.compile(r"\b[A-Z][A-Z0-9_]+: ")
TIME = "2026-01-01T00:00:01Z"
# Each record file the append inputs name, by its name in the table below.
RECORD_FILES: dict[str, bytes] = {
    "not-json.jsonl": b"not json\n",
    "incomplete.jsonl": b'{"type":"message"}\n',
    "invalid-utf8.jsonl": b'{"type":"message","id":"\xff\xfe"}\n',
    "lone-surrogate.jsonl": b'{"type":"message","id":"m9","parentId":"m2","timestamp":"'
                            + TIME.encode() + b'","message":{"role":"user","content":"\\ud800"}}\n',
    "deep.jsonl": b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "second-header.jsonl": orjson.dumps(header("s-2")) + b"\n",
    "torn.jsonl": b'{"type":"message","id":"m9"',
}

# (id, argv): {S} is the session folder, {F} its session.jsonl, {T} the test's folder.
MALFORMED: list[tuple[str, list[str]]] = [
    ("no-command", []),
    ("unknown-command", ["frobnicate", "{S}"]),
    ("validate-without-path", ["validate"]),
    ("validate-unknown-flag", ["validate", "{S}", "--bogus"]),
    ("validate-empty-path", ["validate", ""]),
    ("validate-undecodable-path", ["validate", "{S}\udcff"]),
    ("validate-file-inside-a-file", ["validate", "{F}/session.jsonl"]),
    ("context-leaf-without-value", ["context", "{S}", "--leaf"]),
    ("context-two-leaves", ["context", "{S}", "--leaf", "m1", "--leaf-null"]),
    ("context-unknown-view", ["context", "{S}", "--view", "raw"]),
    ("context-undecodable-leaf", ["context", "{S}", "--leaf", "m\udcff"]),
    ("context-absent-leaf", ["context", "{S}", "--leaf", "nope", "--json"]),
    ("read-without-page-size", ["read", "{S}"]),
    ("read-page-size-zero", ["read", "{S}", "--page-size", "0"]),
    ("read-page-size-negative", ["read", "{S}", "--page-size", "-1"]),
    ("read-page-size-not-a-number", ["read", "{S}", "--page-size", "ten"]),
    ("read-page-size-too-large", ["read", "{S}", "--page-size", "1001"]),
    ("read-page-size-huge", ["read", "{S}", "--page-size", "9" * 40]),
    ("read-cursor-garbage", ["read", "{S}", "--page-size", "10", "--cursor", "garbage"]),
    ("read-cursor-json", ["read", "{S}", "--page-size", "10", "--cursor", '{"offset": -5}']),
    ("append-without-records", ["append", "{S}"]),
    ("append-records-missing", ["append", "{S}", "--records", "{T}/absent.jsonl"]),
    ("append-records-a-folder", ["append", "{S}", "--records", "{T}"]),
    *[(f"append-{name.removesuffix('.jsonl')}", ["append", "{S}", "--records", "{T}/" + name])
      for name in RECORD_FILES],
    ("append-absent-leaf", ["append", "{S}", "--records", "{T}/torn.jsonl", "--leaf", "nope"]),
    ("remove-without-target", ["remove", "{S}", "--id", "r1", "--timestamp", TIME]),
    ("remove-absent-target", ["remove", "{S}", "--target", "nope", "--id", "r1",
                              "--timestamp", TIME]),
    ("remove-bad-timestamp", ["remove", "{S}", "--target", "m1", "--id", "r1",
                              "--timestamp", "yesterday"]),
    ("remove-duplicate-id", ["remove", "{S}", "--target", "m1", "--id", "m2", "--timestamp", TIME]),
    ("create-over-a-session", ["create", "{S}", "--timestamp", TIME]),
    ("create-bad-timestamp-over-a-session", ["create", "{S}", "--timestamp", "not a time"]),
    ("delete-without-confirm", ["delete", "{S}"]),
    ("asset-verify-climbing-path", ["asset", "verify", "{S}", "--path", "../session.jsonl"]),
    ("asset-verify-bad-range", ["asset", "verify", "{S}", "--path", "assets/a", "--range", "5:1"]),
    ("asset-verify-bad-sha256", ["asset", "verify", "{S}", "--path", "assets/a",
                                 "--sha256", "XYZ"]),
    ("search-limit-zero", ["search", "m", "--root", "{T}", "--limit", "0"]),
    ("search-cursor-garbage", ["search", "m", "--root", "{T}", "--cursor", "garbage"]),
    ("open-result-not-json", ["open-result", "not json"]),
    ("open-result-climbing", ["open-result", '{"path": "../../etc/passwd", "entryId": "m1"}']),
    ("replay-script-missing", ["replay", "{S}", "--script", "{T}/absent.json"]),
]


def _state(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(folder.rglob("*"))}


def _placed(arg: str, places: dict[str, str]) -> str:
    for mark, value in places.items():
        arg = arg.replace(mark, value)
    return arg


def test_the_table_holds_forty_inputs() -> None:
    assert len(MALFORMED) >= 40
    assert len({name for name, _ in MALFORMED}) == len(MALFORMED)


@pytest.mark.parametrize("argv", [argv for _, argv in MALFORMED],
                         ids=[name for name, _ in MALFORMED])
def test_a_malformed_command_line_exits_with_a_message_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    session = tmp_path / "session"
    session.mkdir()
    (session / "session.jsonl").write_bytes(b"".join(
        orjson.dumps(r) + b"\n" for r in (header("s-1"), user("m1", None), user("m2", "m1"))))
    (session / "session.lock").touch()  # as a write leaves it (it stays, by design)
    for name, data in RECORD_FILES.items():
        (tmp_path / name).write_bytes(data)
    before = _state(tmp_path)
    places = {"{S}": str(session), "{F}": str(session / "session.jsonl"), "{T}": str(tmp_path)}
    args = [_placed(a, places) for a in argv]
    status = main(args)
    out, err = capsys.readouterr()
    assert status in (1, 2), (status, out, err)
    assert "Traceback" not in out + err
    # A usage problem names the command; a refusal names its stable code (DIAG-7).
    assert err.startswith("persyk-session: ") or STABLE_CODE.search(out + err), (out, err)
    assert _state(tmp_path) == before
