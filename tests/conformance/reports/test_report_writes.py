"""Report files are written whole or not at all (``_whole_files``): a path that cannot be
written (a folder at the path, a folder that is not there) or a full file system (``os.write``
failing with ENOSPC, a file size limit) is one ``IO_FAILED`` line naming the path, exit status 2,
no partial or temporary file, an earlier file at the path untouched, and the other report files
still written.

Broken variants these tests catch: ``Path.write_text`` straight onto the target (a partial
file, the earlier report truncated), a write error escaping as a traceback, a failed first file
that stops the second, a temporary file left beside the target.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from _paths import TESTS_DIR
from _shards import two_tiny_shards
from persyk_conformance.cli import main

RUN = ["run", "--in-process", "--only", "R-001", "--no-harness", "--no-progress", "-q"]


def _one_error_line(err: str, path: Path) -> str:
    lines = [line for line in err.splitlines() if "IO_FAILED" in line]
    assert len(lines) == 1, err
    assert str(path) in lines[0] and "Traceback" not in err
    return lines[0]


def _folder_at(tmp_path: Path) -> Path:
    target = tmp_path / "report.json"
    target.mkdir()
    return target


def _missing_folder(tmp_path: Path) -> Path:
    return tmp_path / "no" / "such" / "folder" / "report.json"


@pytest.mark.parametrize("unwritable", [_folder_at, _missing_folder],
                         ids=["a-folder-at-the-path", "a-folder-that-is-not-there"])
def test_report_that_cannot_be_written_is_io_failed_and_junit_still_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unwritable: Callable[[Path], Path],
) -> None:
    target = unwritable(tmp_path)
    junit = tmp_path / "junit.xml"
    status = main([*RUN, "--report", str(target), "--junit", str(junit)])
    out, err = capsys.readouterr()
    assert status == 2
    assert "cannot write" in _one_error_line(err, target)
    assert junit.read_text("utf-8").startswith("<?xml")
    assert "PASSED: 1 pass" in out  # the report on stdout is still printed
    assert not target.is_file()
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["junit.xml"]  # no temporary


def _fail_writes_under(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.write`` fails as on a full disk for every file under ``folder``."""
    real_write = os.write

    def write(fd: int, data: bytes | memoryview) -> int:
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            where = ""
        if where.startswith(str(folder) + os.sep):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)


def test_full_disk_keeps_the_earlier_report_whole_and_writes_the_other_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    full, roomy = tmp_path / "full", tmp_path / "roomy"
    full.mkdir()
    roomy.mkdir()
    earlier = full / "report.json"
    earlier.write_text('{"an": "earlier report"}\n', "utf-8")
    _fail_writes_under(full, monkeypatch)
    status = main([*RUN, "--report", str(earlier), "--junit", str(roomy / "junit.xml"),
                   "--format", "json"])
    out, err = capsys.readouterr()
    assert status == 2
    assert "No space left on device" in _one_error_line(err, earlier)
    assert earlier.read_text("utf-8") == '{"an": "earlier report"}\n'
    assert [p.name for p in full.iterdir()] == ["report.json"]
    assert (roomy / "junit.xml").read_text("utf-8").startswith("<?xml")
    assert json.loads(out)["cases"][0]["id"] == "R-001"


def test_full_disk_on_the_junit_file_still_writes_the_json_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    report = tmp_path / "report.json"
    _fail_writes_under(full, monkeypatch)
    status = main([*RUN, "--junit", str(full / "junit.xml"), "--report", str(report)])
    _, err = capsys.readouterr()
    assert status == 2
    _one_error_line(err, full / "junit.xml")
    assert list(full.iterdir()) == []
    assert json.loads(report.read_text("utf-8"))["cases"][0]["id"] == "R-001"


@pytest.fixture(scope="module")
def shard_reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two tiny real shards of one run (R-001 and R-002, in-process)."""
    return two_tiny_shards(tmp_path_factory.mktemp("shards"))


def _limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_merge_past_a_file_size_limit_is_io_failed_and_leaves_no_file(
    tmp_path: Path, shard_reports: list[Path],
) -> None:
    merged = tmp_path / "merged.json"
    # A child whose writes fail with EFBIG past 512 bytes (Python ignores SIGXFSZ at start),
    # as a file system with no room left would: the merged report is a few KiB.
    proc = subprocess.run(
        [sys.executable, "-m", "persyk_conformance.cli", "merge", *map(str, shard_reports),
         "--report", str(merged), "-q"],
        capture_output=True, text=True, preexec_fn=_limit_file_size(512), timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "File too large" in _one_error_line(proc.stderr, merged)
    assert list(tmp_path.iterdir()) == []


BENCH_REPORT = TESTS_DIR / "data" / "bench-report.json"


def test_bench_markdown_on_a_full_disk_is_io_failed_and_the_json_still_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    from persyk_maintainers.cli._bench import _write

    full = tmp_path / "full"
    full.mkdir()
    _fail_writes_under(full, monkeypatch)
    args = argparse.Namespace(report=tmp_path / "bench.json", markdown=full / "bench.md",
                              plot=None, publishable=False)
    report = json.loads(BENCH_REPORT.read_text("utf-8"))
    assert _write(report, args).value == 2
    _one_error_line(capsys.readouterr().err, full / "bench.md")
    assert list(full.iterdir()) == []
    assert json.loads((tmp_path / "bench.json").read_text("utf-8")) == report
