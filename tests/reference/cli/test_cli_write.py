"""The write commands of ``persyk-session``: exit statuses (DIAG-7) and bounded batch input."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from _writes import chain, line, new_session
from persyk_session import Code
from persyk_session.cli import main
from persyk_session.write._append import MAX_BATCH_BYTES, items_from_jsonl_stream


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("records", ["absent.jsonl", "."], ids=["absent-file", "a-directory"])
def test_append_with_unreadable_records_file_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], records: str
) -> None:
    file = new_session(tmp_path / "s")
    before = file.read_bytes()
    status, _, err = _run(
        capsys, "append", str(tmp_path / "s"), "--records", str(tmp_path / records), "--json"
    )
    assert status == 2
    assert "PATH_NOT_FOUND" in err
    assert file.read_bytes() == before


def test_append_with_records_file_over_4_mib_is_refused_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = new_session(tmp_path / "s")
    before = file.read_bytes()
    # Valid records first, then padding: the batch is refused whole, nothing is committed.
    batch = b"".join(line(r) for r in chain("m", 2)) + b" " * MAX_BATCH_BYTES
    (tmp_path / "batch.jsonl").write_bytes(batch)
    status, out, _ = _run(
        capsys, "append", str(tmp_path / "s"), "--records", str(tmp_path / "batch.jsonl"), "--json"
    )
    assert status == 1
    assert '"APPEND_BATCH_TOO_LARGE"' in out
    assert file.read_bytes() == before


class _EndlessZeros(io.RawIOBase):
    """A stream that never ends, like ``/dev/zero``; counts what was asked of it."""

    def __init__(self) -> None:
        self.handed_out = 0

    def read(self, size: int = -1) -> bytes:
        assert size >= 0, "an unbounded read of an endless stream never returns"
        self.handed_out += size
        return b"\0" * size


def test_endless_records_stream_is_read_only_past_the_batch_limit() -> None:
    stream = _EndlessZeros()
    items = items_from_jsonl_stream(stream.read)
    assert stream.handed_out == MAX_BATCH_BYTES + 1
    assert len(items) == 1
    assert items[0].size > MAX_BATCH_BYTES
    assert items[0].fault is not None and items[0].fault.code is Code.APPEND_BATCH_TOO_LARGE


def test_records_stream_at_the_batch_limit_is_parsed_as_jsonl() -> None:
    data = b"".join(line(r) for r in chain("m", 3))
    items = items_from_jsonl_stream(io.BytesIO(data).read)
    assert [item.value["id"] for item in items if item.value is not None] == ["m0", "m1", "m2"]


def test_remove_without_a_leaf_exits_2_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # APP-18 (rev. 2): no default leaf for a removal, which would be a silent rebase.
    file = new_session(tmp_path / "s", *chain("m", 2))
    before = file.read_bytes()
    status, _, err = _run(capsys, "remove", str(tmp_path / "s"), "--target", "m0", "--id", "r",
                          "--timestamp", "2026-01-01T00:01:00Z")
    assert status == 2
    assert "USAGE" in err
    assert file.read_bytes() == before
    status, _, _ = _run(capsys, "remove", str(tmp_path / "s"), "--target", "m0", "--id", "r",
                        "--timestamp", "2026-01-01T00:01:00Z", "--leaf", "m1")
    assert status == 0
