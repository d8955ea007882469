"""dsh-v0 reference backend: create, append, load, list on a real file system."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _dsh import closed_turn, event, header, is_balanced, log_bytes
from persyk_dsh import (
    INTERRUPTED_TEXT,
    DshCode,
    DshError,
    DshStore,
    make_header,
    mode_codec,
)
from persyk_dsh import _store as store_module

CODEC = mode_codec()  # the codec of PERSYK_SESSION_MODE, as the operations choose it


def _code(call: Any) -> DshCode:
    with pytest.raises(DshError) as caught:
        call()
    code: DshCode = caught.value.diagnostic.code
    return code


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _write_log(root: Path, head: dict[str, Any], events: list[dict[str, Any]]) -> Path:
    path = DshStore(root, CODEC).log_path(head)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(log_bytes(head, events))
    return path


def test_create_writes_nothing(tmp_path: Path) -> None:
    make_header("s1", "/w", 5)
    assert not any(tmp_path.iterdir())


def test_first_append_publishes_header_and_batch_without_temp_files(tmp_path: Path) -> None:
    store = DshStore(tmp_path / "root", CODEC)
    result = store.append(header(), closed_turn())
    assert result.materialized and result.next_seq == 6
    path = store.log_path(header())
    assert _files(tmp_path / "root") == [str(path.relative_to(tmp_path / "root"))]
    assert path.read_bytes() == log_bytes(header(), closed_turn())


def test_later_append_continues_at_the_end(tmp_path: Path) -> None:
    DshStore(tmp_path, CODEC).append(header(), closed_turn())
    # a fresh store (another process) must read the log to find its cursor
    DshStore(tmp_path, CODEC).append(header(), closed_turn(6, turn=2))
    path = DshStore(tmp_path, CODEC).log_path(header())
    assert path.read_bytes() == log_bytes(header(), closed_turn() + closed_turn(6, turn=2))


@pytest.mark.parametrize("first_seq", [0, 5, 7], ids=["repeat", "overlap", "gap"])
def test_batch_that_does_not_continue_the_log_is_refused(tmp_path: Path, first_seq: int) -> None:
    store = DshStore(tmp_path, CODEC)
    store.append(header(), closed_turn())
    before = store.log_path(header()).read_bytes()
    assert _code(lambda: store.append(header(), closed_turn(first_seq))) is DshCode.SEQ_MISMATCH
    assert store.log_path(header()).read_bytes() == before


def test_first_append_must_start_at_seq_zero(tmp_path: Path) -> None:
    assert _code(lambda: DshStore(tmp_path, CODEC).append(header(), closed_turn(1))) is (
        DshCode.SEQ_MISMATCH
    )
    assert not tmp_path.joinpath("cwd-").exists() and _files(tmp_path) == []


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), {1, 2}, "\udc00", b"x"],
                         ids=["nan", "infinity", "set", "lone-surrogate", "bytes"])
def test_non_json_data_is_refused_naming_the_event_type(tmp_path: Path, bad: object) -> None:
    events = [*closed_turn()[:2], event("custom/thing", 2, {"value": bad})]
    with pytest.raises(DshError) as caught:
        DshStore(tmp_path, CODEC).append(header(), events)
    diagnostic = caught.value.diagnostic.to_json()
    assert diagnostic["code"] == "DSH_EVENT_NOT_JSON"
    assert diagnostic["eventType"] == "custom/thing" and diagnostic["pointer"] == "/2"
    assert _files(tmp_path) == []


def test_race_lost_at_the_link_is_refused_and_overwrites_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DshStore(tmp_path, CODEC)
    real_link = store_module.link_new
    winner = log_bytes(header(), closed_turn())

    def rival_wins_first(source: Path, name: Path) -> None:
        name.write_bytes(winner)  # another process published between our check and our link
        real_link(source, name)

    monkeypatch.setattr(store_module, "link_new", rival_wins_first)
    assert _code(lambda: store.append(header(), closed_turn()[:1])) is DshCode.EXISTS
    assert store.log_path(header()).read_bytes() == winner
    assert len(_files(tmp_path)) == 1  # our temporary file is gone


def test_crash_between_temp_file_and_link_leaves_no_session(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from persyk_dsh import _store, mode_codec
        _store.link_new = lambda source, name: os._exit(9)
        _store.DshStore(Path({str(tmp_path)!r}), mode_codec()).append(
            {header()!r}, {closed_turn()!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert proc.returncode == 9
    assert len(_files(tmp_path)) == 1  # the temporary file a crash leaves behind
    store = DshStore(tmp_path, CODEC)
    assert store.list_sessions() == ([], [])
    assert _code(lambda: store.load("s1")) is DshCode.NOT_FOUND
    store.append(header(), closed_turn())  # and the session can still be created afresh
    assert store.load("s1").events == closed_turn()


def test_load_closes_orphaned_turn_in_order_and_durably(tmp_path: Path) -> None:
    events = [*closed_turn(), event("turn/start", 6, {"turn": 2}),
              event("step/start", 7, {"turn": 2, "step": 1}),
              event("assistant/message", 8, {"turn": 2, "step": 1, "message": {
                  "role": "assistant", "content": [
                      {"type": "tool-call", "id": "a", "name": "x", "arguments": "{}"},
                      {"type": "tool-call", "id": "b", "name": "x", "arguments": "{}"}]}}),
              event("tool/call", 9, {"turn": 2, "step": 1, "callId": "a", "name": "x",
                                     "arguments": "{}"}),
              event("tool/result", 10, {"turn": 2, "step": 1, "message": {
                  "source": {"kind": "tool", "callId": "a"}, "content": []}})]
    path = _write_log(tmp_path, header(), events)
    loaded = DshStore(tmp_path, CODEC).load("s1", "/w")
    added = loaded.events[len(events):]
    assert [(e["type"], e["seq"]) for e in added] == [
        ("tool/result", 11), ("step/end", 12), ("turn/end", 13)]
    assert added[0]["data"]["message"]["source"]["callId"] == "b"
    assert added[0]["data"]["message"]["content"][0]["content"][0]["text"] == INTERRUPTED_TEXT
    assert added[2]["data"] == {"turn": 2, "reason": {"kind": "interrupted"}}
    assert path.read_bytes() == log_bytes(header(), loaded.events)
    again = path.read_bytes()
    assert DshStore(tmp_path, CODEC).load("s1").events == loaded.events
    assert path.read_bytes() == again  # DSH-16: a second load changes nothing


def test_torn_tail_is_cut_before_closers(tmp_path: Path) -> None:
    events = [event("turn/start", 0, {"turn": 1}), event("step/start", 1, {"turn": 1, "step": 1})]
    path = _write_log(tmp_path, header(), events)
    with path.open("ab") as handle:
        handle.write(b'{"type":"assistant/chunk","seq":2,"ti')
    loaded = DshStore(tmp_path, CODEC).load("s1")
    assert loaded.truncated_bytes == len(b'{"type":"assistant/chunk","seq":2,"ti')
    assert [e["type"] for e in loaded.events] == [
        "turn/start", "step/start", "step/end", "turn/end"]
    assert path.read_bytes() == log_bytes(header(), loaded.events)


def test_unparseable_last_complete_line_is_a_torn_write(tmp_path: Path) -> None:
    path = _write_log(tmp_path, header(), closed_turn())
    with path.open("ab") as handle:
        handle.write(b'{"partial\n')
    loaded = DshStore(tmp_path, CODEC).load("s1")
    assert loaded.events == closed_turn() and loaded.truncated_bytes == 10


def _every_cut(log: bytes, from_offset: int) -> list[int]:
    return list(range(from_offset, len(log)))


def test_torn_at_every_byte_of_the_last_records_loads_balanced(tmp_path: Path) -> None:
    events = closed_turn() + closed_turn(6, turn=2)
    log = log_bytes(header(), events)
    lines = log.splitlines(keepends=True)
    start = len(log) - len(lines[-1]) - len(lines[-2]) - len(lines[-3])
    for cut in _every_cut(log, start):
        root = tmp_path / str(cut)
        path = DshStore(root, CODEC).log_path(header())
        path.parent.mkdir(parents=True)
        path.write_bytes(log[:cut])
        loaded = DshStore(root, CODEC).load("s1")
        complete = log_bytes(header(), [])
        kept = [e for e in events
                if len(complete := complete + log_bytes({}, [e])[3:]) <= cut]
        assert loaded.events[: len(kept)] == kept, cut
        assert is_balanced(loaded.events), cut


@pytest.mark.parametrize(
    ("line", "code"),
    [(b"not json", DshCode.LINE_UNPARSEABLE), (b"[1]", DshCode.LINE_UNPARSEABLE),
     (b'{"type":"x","seq":1,"time":1}', DshCode.EVENT_INVALID),
     (b'{"type":"x","seq":9,"time":1,"data":{}}', DshCode.SEQ_GAP),
     (b'{"type":"text-chunks","seq0":1,"time0":1,"data":{}}', DshCode.ROW_INVALID),
     (b'{"type":"turn/end","seq":1,"time":1,"data":{"turn":1}}', DshCode.EVENT_INVALID)],
    ids=["not-json", "not-object", "no-data", "seq-gap", "bad-row", "turn-end-without-reason"],
)
def test_mid_log_fault_makes_the_log_unloadable_and_untouched(
    tmp_path: Path, line: bytes, code: DshCode
) -> None:
    path = _write_log(tmp_path, header(), [])
    good = log_bytes({}, [event("x", 2, {})])[3:]
    data = path.read_bytes() + log_bytes({}, [event("x", 0, {})])[3:] + line + b"\n" + good
    path.write_bytes(data)
    with pytest.raises(DshError) as caught:
        DshStore(tmp_path, CODEC).load("s1")
    assert caught.value.diagnostic.code is code and caught.value.diagnostic.line == 3
    assert path.read_bytes() == data


def test_packed_rows_expand_and_keep_seq_contiguous(tmp_path: Path) -> None:
    row = {"type": "tool-call-chunks", "seq0": 1, "time0": 10,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [2, -1], "id": "c", "name": "n",
                    "args": ["{", "}", ""]}}
    path = _write_log(tmp_path, header(), [event("turn/start", 0, {"turn": 1})])
    with path.open("ab") as handle:
        handle.write(json.dumps(row).encode() + b"\n")
        handle.write(json.dumps(event("turn/end", 4, {"turn": 1, "reason": {"kind": "x"}}))
                     .encode() + b"\n")
    events = DshStore(tmp_path, CODEC).load("s1").events
    chunks = [e for e in events if e["type"] == "assistant/chunk"]
    assert [(e["seq"], e["time"]) for e in chunks] == [(1, 10), (2, 12), (3, 11)]
    assert chunks[1]["data"]["chunk"] == {"type": "tool-call-delta", "index": 0, "id": "c",
                                          "name": "n", "argumentsDelta": "}"}


def test_unknown_event_types_come_back_member_for_member(tmp_path: Path) -> None:
    odd = {"type": "plugin/whatever", "seq": 0, "time": -5, "data": [1, {"a": None}],
           "ignorable": True, "extra": {"k": "v"}}
    _write_log(tmp_path, header(), [odd])
    assert DshStore(tmp_path, CODEC).load("s1").events == [odd]


@pytest.mark.parametrize(
    ("change", "code"),
    [({"version": 1}, DshCode.VERSION_UNSUPPORTED), ({"createdAt": -1}, DshCode.HEADER_INVALID),
     ({"type": "sess"}, DshCode.HEADER_INVALID), ({"id": "other"}, DshCode.HEADER_MISMATCH),
     ({"cwd": "/elsewhere"}, DshCode.HEADER_MISMATCH)],
    ids=["version", "created-at", "type", "id", "cwd"],
)
def test_header_faults(tmp_path: Path, change: dict[str, Any], code: DshCode) -> None:
    path = _write_log(tmp_path, header(), closed_turn())
    lines = path.read_bytes().split(b"\n", 1)
    path.write_bytes(json.dumps({**header(), **change}).encode() + b"\n" + lines[1])
    assert _code(lambda: DshStore(tmp_path, CODEC).load("s1")) is code


def test_load_without_cwd_searches_buckets_and_refuses_two(tmp_path: Path) -> None:
    _write_log(tmp_path, header(cwd="/a"), closed_turn())
    assert DshStore(tmp_path, CODEC).load("s1").header["cwd"] == "/a"
    assert _code(lambda: DshStore(tmp_path, CODEC).load("s1", "/b")) is DshCode.NOT_FOUND
    _write_log(tmp_path, header(cwd="/b"), closed_turn())
    assert _code(lambda: DshStore(tmp_path, CODEC).load("s1")) is DshCode.AMBIGUOUS


def test_list_reports_appended_sessions_only(tmp_path: Path) -> None:
    store = DshStore(tmp_path, CODEC)
    make_header("never", None, 1)
    store.append(header("b", None), closed_turn())
    store.append(header("a", "/w"), closed_turn())
    (tmp_path / "_no-cwd" / "junk.jsonl.zstd").write_bytes(b"x")
    sessions, unreadable = store.list_sessions()
    assert sorted(s["id"] for s in sessions) == ["a", "b"] and unreadable == []


def test_append_to_an_orphaned_log_continues_after_the_closers(tmp_path: Path) -> None:
    _write_log(tmp_path, header(), [event("turn/start", 0, {"turn": 1})])
    store = DshStore(tmp_path, CODEC)
    assert _code(lambda: store.append(header(), [event("x", 1, {})])) is DshCode.SEQ_MISMATCH
    assert store.append(header(), [event("x", 2, {})]).next_seq == 3


def test_failed_write_leaves_the_log_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DshStore(tmp_path, CODEC)
    store.append(header(), closed_turn())
    before = store.log_path(header()).read_bytes()

    def half_then_fail(fd: int, data: bytes) -> None:
        os.write(fd, data[:5])
        raise OSError(28, "no space")

    monkeypatch.setattr(store_module, "append_all", half_then_fail)
    with pytest.raises(OSError):
        store.append(header(), closed_turn(6, turn=2))
    assert store.log_path(header()).read_bytes() == before
