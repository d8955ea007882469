"""``persyk-session dsh ...``: results, exit statuses and stdin/--events input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _dsh import closed_turn


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "persyk_session.cli", "dsh", *args],
                          input=stdin, capture_output=True)


def _jsonl(events: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def test_create_prints_a_header_and_writes_nothing(tmp_path: Path) -> None:
    proc = _run("create", "--root", str(tmp_path / "r"), "--id", "x", "--created-at", "3",
                "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["header"] == {"type": "session", "version": 0, "id": "x",
                                                 "createdAt": 3}
    assert not (tmp_path / "r").exists()


def test_append_from_stdin_then_load_and_list(tmp_path: Path) -> None:
    root = str(tmp_path)
    appended = _run("append", "--root", root, "--id", "x", "--cwd", "/w", "--json",
                    stdin=_jsonl(closed_turn()))
    assert appended.returncode == 0 and json.loads(appended.stdout)["nextSeq"] == 6
    loaded = _run("load", "--root", root, "--id", "x", "--json")
    assert json.loads(loaded.stdout)["events"] == closed_turn()
    listed = _run("list", "--root", root, "--json")
    assert [s["id"] for s in json.loads(listed.stdout)["sessions"]] == ["x"]


def test_append_from_events_file_refuses_nan_with_exit_1(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_bytes(b'{"type":"odd/one","seq":0,"time":1,"data":{"v":NaN}}\n')
    proc = _run("append", "--root", str(tmp_path / "r"), "--id", "x", "--events", str(events),
                "--json")
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "DSH_EVENT_NOT_JSON" and error["eventType"] == "odd/one"


def test_load_of_an_absent_session_exits_1_with_a_fixed_message(tmp_path: Path) -> None:
    proc = _run("load", "--root", str(tmp_path), "--id", "secret-id")
    assert proc.returncode == 1 and b"secret-id" not in proc.stderr
    assert proc.stderr.strip() == b"no log of this session id"


def test_malformed_events_input_is_a_usage_error(tmp_path: Path) -> None:
    proc = _run("append", "--root", str(tmp_path), "--id", "x", stdin=b"{oops\n")
    assert proc.returncode == 2
