"""Creating sessions and appending batches: APP-1..APP-23 (the reference's own tests)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from _writes import (
    HEADER_ID,
    T0,
    append,
    chain,
    custom,
    header_line,
    line,
    new_session,
    user,
    write_session,
)
from persyk_session import Code, ContractError, UsageError
from persyk_session.read._context import LeafSelector
from persyk_session.read._live import LiveFile
from persyk_session.read._store import open_session
from persyk_session.write._append import (
    MAX_BATCH_BYTES,
    MAX_BATCH_RECORDS,
    append_records,
    create_session,
    items_from_jsonl,
    json_equal,
    remove_entry,
)

# --- create ------------------------------------------------------------------------------------


def test_create_writes_exactly_the_header(tmp_path: Path) -> None:
    header = create_session(tmp_path / "s", id=HEADER_ID, timestamp=T0)
    assert header == {"type": "session", "version": 1, "id": HEADER_ID, "timestamp": T0}
    assert (tmp_path / "s" / "session.jsonl").read_bytes() == header_line()
    # No temporary file is left behind, and no lock file is created by creation.
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["session.jsonl"]


def test_create_generates_a_valid_id_and_timestamp(tmp_path: Path) -> None:
    create_session(tmp_path / "s")
    assert open_session(tmp_path / "s").valid


def test_create_makes_missing_directories(tmp_path: Path) -> None:
    create_session(tmp_path / "a" / "b" / "s", id="x")
    assert (tmp_path / "a" / "b" / "s" / "session.jsonl").is_file()


def test_create_refuses_an_existing_session_and_changes_nothing(tmp_path: Path) -> None:
    file = write_session(tmp_path / "s", b"anything at all")
    with pytest.raises(ContractError) as caught:
        create_session(tmp_path / "s", id="other")
    assert caught.value.code is Code.SESSION_EXISTS
    assert file.read_bytes() == b"anything at all"


@pytest.mark.parametrize(
    ("kwargs"),
    [{"id": "bad id"}, {"id": "-lead"}, {"timestamp": "2026-02-30T00:00:00Z"},
     {"timestamp": "2026-01-01 00:00:00Z"}],
    ids=["space-in-id", "id-leading-dash", "impossible-date", "space-separator"],
)
def test_create_refuses_a_bad_id_or_timestamp(tmp_path: Path, kwargs: dict[str, str]) -> None:
    with pytest.raises(ContractError) as caught:
        create_session(tmp_path / "s", **kwargs)
    assert caught.value.code is Code.HEADER_INVALID
    assert not (tmp_path / "s").exists()


def test_create_fsyncs_file_then_directory_before_returning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real_fsync, real_link = os.fsync, os.link

    def fsync(fd: int) -> None:
        calls.append("fsync-dir" if os.path.isdir(f"/proc/self/fd/{fd}") else "fsync-file")
        real_fsync(fd)

    def link(src: Any, dst: Any) -> None:
        calls.append("link")
        real_link(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "link", link)
    create_session(tmp_path / "s", id="x")
    # APP-3/APP-4: the header is durable before it is published, the name after the fsync.
    assert calls[:3] == ["fsync-file", "link", "fsync-dir"]
    # The created directory's own entry is made durable too (its parent is fsynced).
    assert calls[3:] == ["fsync-dir"]


# --- append basics -----------------------------------------------------------------------------


def test_append_commits_in_batch_order_and_reports_the_leaf(tmp_path: Path) -> None:
    file = new_session(tmp_path / "s")
    records = chain("m", 3)
    result = append(tmp_path / "s", records)
    assert result.committed == ("m0", "m1", "m2")
    assert result.already_present == ()
    assert result.leaf == "m2"
    assert file.read_bytes() == header_line() + b"".join(line(r) for r in records)


def test_append_to_a_missing_session_is_path_not_found(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    with pytest.raises(UsageError) as caught:
        append(tmp_path / "s", [user("a", None)])
    assert caught.value.code is Code.PATH_NOT_FOUND
    assert list((tmp_path / "s").iterdir()) == []  # APP-21: no session, no lock file


def test_append_acknowledges_only_after_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = new_session(tmp_path / "s")
    events: list[str] = []
    real_write, real_fsync = os.write, os.fsync

    def write(fd: int, data: Any) -> int:
        events.append("write")
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        events.append("fsync")
        real_fsync(fd)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)
    result = append(tmp_path / "s", chain("m", 3))
    events.append("acknowledged")
    assert result.committed == ("m0", "m1", "m2")
    # APP-11 with one write of the whole valid prefix.
    assert events == ["write", "fsync", "acknowledged"]
    assert open_session(file).valid


def test_append_with_failing_fsync_acknowledges_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = new_session(tmp_path / "s")
    before = file.read_bytes()
    real_fsync = os.fsync
    failed = []

    def fsync(fd: int) -> None:
        if not failed:
            failed.append(fd)
            raise OSError(5, "EIO")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    result = append(tmp_path / "s", [user("a", None)])
    assert result.committed == ()
    assert result.error is not None and result.error.code is Code.IO_FAILED
    assert file.read_bytes() == before


# --- identical retries and conflicts -----------------------------------------------------------


def test_identical_retry_writes_nothing(tmp_path: Path) -> None:
    file = new_session(tmp_path / "s", *chain("m", 3))
    before = file.read_bytes()
    result = append(tmp_path / "s", chain("m", 3))
    assert result.committed == ()
    assert result.already_present == ("m0", "m1", "m2")
    assert result.leaf == "m2"
    assert file.read_bytes() == before


def test_retry_compares_json_values_not_bytes(tmp_path: Path) -> None:
    stored = custom("c", None, data={"b": 1, "a": [1.0, "x"]})
    file = new_session(tmp_path / "s", stored)
    before = file.read_bytes()
    # Member order and number spelling differ; the JSON value is the same (APP-12).
    retry = items_from_jsonl(
        b'{"data":{"a":[1,"x"],"b":1.0},"customType":"x.state","type":"custom","id":"c",'
        b'"parentId":null,"timestamp":"2026-01-01T00:00:01.000Z"}\n'
    )
    result = append_records(tmp_path / "s", retry)
    assert result.already_present == ("c",)
    assert file.read_bytes() == before


def test_retry_of_the_committed_bytes_reads_no_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # APP-12 by bytes: the retry's encoding is the committed record's own bytes, so
    # the committed value is never parsed again.
    file = new_session(tmp_path / "s", *chain("m", 3))
    before = file.read_bytes()

    def no_parse(self: object, entry: object) -> None:
        raise AssertionError("an identical retry parsed the committed record")

    monkeypatch.setattr(LiveFile, "load", no_parse)
    result = append(tmp_path / "s", chain("m", 3)[-1:])
    assert result.already_present == ("m2",)
    assert file.read_bytes() == before


def _header(version: bytes, *, blank_lines: int = 0, timestamp: bool = True) -> bytes:
    rest = b',"timestamp":"2026-01-01T00:00:00Z"' if timestamp else b""
    blank = b"\n" * blank_lines
    return blank + b'{"type":"session","version":' + version + b',"id":"h"' + rest + b"}"


@pytest.mark.parametrize(
    ("header", "refused_before_the_lock"),
    [(_header(b"2"), True), (_header(b"2.0"), True), (_header(b"3", blank_lines=5000), True),
     (_header(b'"2"'), False), (_header(b"true"), False), (_header(b"2", timestamp=False), True)],
    ids=["version-2", "version-2.0", "after-5000-blank-lines", "string-version",
         "boolean-version", "version-2-invalid-otherwise"],
)
def test_other_version_is_refused_before_the_lock(
    tmp_path: Path, header: bytes, refused_before_the_lock: bool
) -> None:
    # APP-24, HDR-4: an integral version other than 1 is refused before any lock; any other
    # header fault is judged under the lock (SESSION_BLOCKED).
    file = write_session(tmp_path / "s", header + b"\n")
    if refused_before_the_lock:
        with pytest.raises(ContractError) as caught:
            append(tmp_path / "s", [custom("c", None)])
        assert caught.value.code is Code.HEADER_VERSION_UNSUPPORTED
    else:
        result = append(tmp_path / "s", [custom("c", None)])
        assert result.error is not None and result.error.code is Code.SESSION_BLOCKED
    assert (tmp_path / "s" / "session.lock").exists() is not refused_before_the_lock
    assert file.read_bytes() == header + b"\n"


@pytest.mark.parametrize(
    "data",
    [True, 2, "1", [1], {"v": 1}, None],
    ids=["true-is-not-1", "other-number", "string", "array", "object", "null"],
)
def test_same_id_with_other_content_is_a_conflict(tmp_path: Path, data: Any) -> None:
    file = new_session(tmp_path / "s", custom("c", None, data=1))
    before = file.read_bytes()
    result = append(tmp_path / "s", [custom("c", None, data=data)])
    assert result.error is not None and result.error.code is Code.APPEND_ID_CONFLICT
    assert result.error.line == 3
    assert result.committed == ()
    assert file.read_bytes() == before


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
        ([1, 2], [2, 1], False),
        (None, None, True),
        ({"a": None}, {}, False),
        ("é", "é", True),
    ],
    ids=["int-float", "true-one", "false-zero", "member-order", "array-order", "null",
         "missing-member", "string"],
)
def test_json_equal(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal


# --- prefix commit -----------------------------------------------------------------------------


def test_failing_record_commits_the_prefix_then_retry_completes(tmp_path: Path) -> None:
    file = new_session(tmp_path / "s")
    good = chain("m", 2)
    bad = user("m2", "missing-parent")
    first = append(tmp_path / "s", [*good, bad])
    assert first.committed == ("m0", "m1")
    assert first.error is not None and first.error.code is Code.PARENT_NOT_FOUND
    assert first.error.line == 4  # the line the refused record would have occupied (APP-9)
    assert first.leaf is None  # APP-17: the continuation does not advance
    fixed = user("m2", "m1")
    second = append(tmp_path / "s", [*good, fixed])
    assert second.already_present == ("m0", "m1")
    assert second.committed == ("m2",)
    assert second.leaf == "m2"
    assert file.read_bytes() == header_line() + b"".join(line(r) for r in [*good, fixed])


def test_conflict_mid_batch_keeps_the_records_before_it(tmp_path: Path) -> None:
    new_session(tmp_path / "s", custom("c", None, data=1))
    result = append(tmp_path / "s", [user("a", None), custom("c", None, data=2), user("b", "a")])
    assert result.committed == ("a",)
    assert result.error is not None and result.error.code is Code.APPEND_ID_CONFLICT
    assert result.error.line == 4


def test_later_records_may_reference_earlier_records_of_the_batch(tmp_path: Path) -> None:
    new_session(tmp_path / "s")
    label = {"type": "label", "id": "l", "parentId": "m1", "timestamp": T0,
             "targetId": "m0", "label": "x"}
    result = append(tmp_path / "s", [*chain("m", 2), label])
    assert result.committed == ("m0", "m1", "l")


def test_repeated_id_within_a_batch_is_written_once(tmp_path: Path) -> None:
    file = new_session(tmp_path / "s")
    record = user("a", None)
    result = append(tmp_path / "s", [record, record])
    assert result.committed == ("a",)
    assert result.already_present == ("a",)
    assert file.read_bytes() == header_line() + line(record)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b'{"type":"message",\n', "RECORD_JSON_SYNTAX"),
        (b"\xef\xbb\xbf{}\n", "RECORD_BYTE_ORDER_MARK"),
        (b'{"a":1,"a":2}\n', "RECORD_DUPLICATE_KEY"),
        (b"[1]\n", "RECORD_NOT_OBJECT"),
        (b'{"type":"session","version":1,"id":"h","timestamp":"2026-01-01T00:00:00Z"}\n',
         "HEADER_REPEATED"),
        (b'{"type":"nope","id":"x","parentId":null,"timestamp":"2026-01-01T00:00:00Z"}\n',
         "ENTRY_TYPE_UNKNOWN"),
        (b'{"type":"custom"', "RECORD_UNTERMINATED"),
    ],
    ids=["syntax", "byte-order-mark", "duplicate-key", "not-object", "header-repeated",
         "unknown-type", "unterminated"],
)
def test_records_file_faults_take_their_read_code_and_would_be_line(
    tmp_path: Path, raw: bytes, code: str
) -> None:
    file = new_session(tmp_path / "s", user("m0", None))
    batch = line(user("m1", "m0")) + raw
    result = append_records(tmp_path / "s", items_from_jsonl(batch))
    assert result.committed == ("m1",)
    assert result.error is not None and result.error.code == code
    assert result.error.line == 4
    assert open_session(file).valid


def test_supplied_parents_are_kept(tmp_path: Path) -> None:
    new_session(tmp_path / "s", *chain("m", 3))
    # A new root and a branch off m0: never rebased onto the default leaf (APP-15).
    append(tmp_path / "s", [user("root2", None), user("branch", "m0")])
    index = open_session(tmp_path / "s").index
    assert index.by_id["root2"].parent_id is None
    assert index.by_id["branch"].parent_id == "m0"


# --- continuations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("leaf", "first_parent"),
    [(LeafSelector.explicit("m1"), "m0"), (LeafSelector.null(), "m1"),
     (LeafSelector.explicit("m1"), None)],
    ids=["other-id", "null-leaf-but-parent", "id-leaf-but-root"],
)
def test_leaf_mismatch_writes_nothing(
    tmp_path: Path, leaf: LeafSelector, first_parent: str | None
) -> None:
    file = new_session(tmp_path / "s", *chain("m", 2))
    before = file.read_bytes()
    result = append(tmp_path / "s", [user("x", first_parent), user("y", "x")], leaf=leaf)
    assert result.error is not None and result.error.code is Code.APPEND_LEAF_MISMATCH
    assert result.committed == ()
    assert file.read_bytes() == before


def test_sibling_continuations_never_rebase_each_other(tmp_path: Path) -> None:
    new_session(tmp_path / "s", user("root", None))
    leaf_a = LeafSelector.explicit("root")
    leaf_b = LeafSelector.explicit("root")
    a = append(tmp_path / "s", [user("a1", "root")], leaf=leaf_a)
    b = append(tmp_path / "s", [user("b1", "root")], leaf=leaf_b)
    assert (a.leaf, b.leaf) == ("a1", "b1")
    # B continues from its own acknowledged leaf, not from A's entries.
    b2 = append(tmp_path / "s", [user("b2", "b1")], leaf=LeafSelector.explicit(b.leaf or ""))
    assert b2.leaf == "b2"
    # A stale continuation that tries to continue from the file's last entry is refused.
    stale = append(tmp_path / "s", [user("a2", "b2")], leaf=LeafSelector.explicit("a1"))
    assert stale.error is not None and stale.error.code is Code.APPEND_LEAF_MISMATCH


def test_retry_under_a_continuation_checks_the_first_record_of_the_batch(tmp_path: Path) -> None:
    new_session(tmp_path / "s", user("root", None))
    batch = [user("a1", "root"), user("a2", "a1"), user("bad", "nowhere")]
    first = append(tmp_path / "s", batch, leaf=LeafSelector.explicit("root"))
    assert first.committed == ("a1", "a2") and first.leaf is None
    retry = append(tmp_path / "s", [*batch[:2], user("a3", "a2")],
                   leaf=LeafSelector.explicit("root"))
    assert retry.already_present == ("a1", "a2")
    assert retry.committed == ("a3",)
    assert retry.leaf == "a3"


# --- batch limits ------------------------------------------------------------------------------


def _sized(entry_id: str, total: int) -> dict[str, Any]:
    """A custom record whose encoded form, LF included, is exactly ``total`` bytes."""
    base = len(orjson.dumps(custom(entry_id, None, data=""))) + 1
    return custom(entry_id, None, data="x" * (total - base))


@pytest.mark.parametrize(
    ("count", "accepted"),
    [(MAX_BATCH_RECORDS, True), (MAX_BATCH_RECORDS + 1, False)],
    ids=["256-records", "257-records"],
)
def test_batch_record_limit(tmp_path: Path, count: int, accepted: bool) -> None:
    file = new_session(tmp_path / "s")
    before = file.read_bytes()
    result = append(tmp_path / "s", [custom(f"c{i}", None) for i in range(count)])
    if accepted:
        assert len(result.committed) == count
    else:
        assert result.error is not None and result.error.code is Code.APPEND_BATCH_TOO_LARGE
        assert result.committed == ()
        assert file.read_bytes() == before


@pytest.mark.parametrize(
    ("extra", "accepted"), [(0, True), (1, False)], ids=["exactly-4-MiB", "4-MiB-plus-1"]
)
def test_batch_byte_limit(tmp_path: Path, extra: int, accepted: bool) -> None:
    file = new_session(tmp_path / "s")
    before = file.read_bytes()
    # Each record is 1 MiB with its LF; the extra byte still keeps c0 within REC-11.
    quarter = MAX_BATCH_BYTES // 4
    records = [_sized("c0", quarter + extra)] + [_sized(f"c{i}", quarter) for i in (1, 2, 3)]
    sizes = [len(orjson.dumps(r)) + 1 for r in records]
    assert sum(sizes) == MAX_BATCH_BYTES + extra
    result = append(tmp_path / "s", records)
    if accepted:
        assert len(result.committed) == 4
    else:
        assert result.error is not None and result.error.code is Code.APPEND_BATCH_TOO_LARGE
        assert file.read_bytes() == before


# --- blocked sessions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tail", "line_no"),
    [
        (b'{"type":"custom","id":"x"', 3),
        (b"not json\n", 3),
        (line(user("orphan", "nowhere")), 3),
    ],
    ids=["unterminated-tail", "interior-syntax", "missing-parent"],
)
def test_invalid_session_is_blocked_and_unchanged(
    tmp_path: Path, tail: bytes, line_no: int
) -> None:
    data = header_line() + line(user("m0", None)) + tail
    file = write_session(tmp_path / "s", data)
    result = append(tmp_path / "s", [user("m1", "m0")])
    assert result.error is not None and result.error.code is Code.SESSION_BLOCKED
    assert result.error.line == line_no
    assert file.read_bytes() == data


# --- removal -----------------------------------------------------------------------------------


def test_remove_appends_onto_the_explicit_leaf(tmp_path: Path) -> None:
    new_session(tmp_path / "s", *chain("m", 3))
    result = remove_entry(tmp_path / "s", "m1", id="r", timestamp=T0,
                          leaf=LeafSelector.explicit("m2"))
    assert result.committed == ("r",) and result.leaf == "r"
    index = open_session(tmp_path / "s").index
    assert index.by_id["r"].parent_id == "m2"
    # The removed content stays in the file.
    assert index.by_id["m1"].type == "message"


def test_remove_without_an_explicit_leaf_is_a_usage_error(tmp_path: Path) -> None:
    # APP-18 (rev. 2): the default leaf would be a silent rebase onto another writer's branch.
    file = new_session(tmp_path / "s", *chain("m", 3))
    before = file.read_bytes()
    with pytest.raises(UsageError):
        remove_entry(tmp_path / "s", "m1", id="r", timestamp=T0, leaf=LeafSelector.default())
    assert file.read_bytes() == before


def test_remove_retry_is_already_present(tmp_path: Path) -> None:
    file = new_session(tmp_path / "s", *chain("m", 2))
    leaf = LeafSelector.explicit("m1")
    remove_entry(tmp_path / "s", "m0", id="r", timestamp=T0, leaf=leaf)
    before = file.read_bytes()
    again = remove_entry(tmp_path / "s", "m0", id="r", timestamp=T0, leaf=leaf)
    assert again.already_present == ("r",)
    assert file.read_bytes() == before


@pytest.mark.parametrize(
    ("target", "leaf", "code"),
    [
        ("nowhere", LeafSelector.explicit("m2"), Code.REMOVAL_TARGET_NOT_FOUND),
        ("b1", LeafSelector.explicit("m2"), Code.REMOVAL_TARGET_NOT_ANCESTOR),
        ("c", LeafSelector.explicit("c"), Code.REMOVAL_TARGET_WRONG_TYPE),
        ("m0", LeafSelector.null(), Code.REMOVAL_TARGET_NOT_ANCESTOR),
        ("m0", LeafSelector.explicit("ghost"), Code.LEAF_NOT_FOUND),
    ],
    ids=["target-missing", "sibling-branch", "custom-entry", "null-leaf", "leaf-missing"],
)
def test_remove_refusals_write_nothing(
    tmp_path: Path, target: str, leaf: LeafSelector, code: Code
) -> None:
    records = [*chain("m", 3), user("b1", "m0"), custom("c", "m2")]
    file = new_session(tmp_path / "s", *records)
    before = file.read_bytes()
    result = remove_entry(tmp_path / "s", target, id="r", timestamp=T0, leaf=leaf)
    assert result.error is not None and result.error.code is code
    assert file.read_bytes() == before


def test_appending_unknown_blocks_keeps_them_unchanged(tmp_path: Path) -> None:
    record = user("m0", None)
    record["message"]["content"] = [{"type": "future", "z": [1, {"y": None}], "a": "é"}]
    new_session(tmp_path / "s", record)
    session = open_session(tmp_path / "s")
    assert session.read_entry(session.index.by_id["m0"]) == record
