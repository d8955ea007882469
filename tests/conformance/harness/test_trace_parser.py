"""The trace parser (harness/_trace.py) on ``strace -xx -yy`` text: whatever bytes a file name
holds, the parser reads the right path, descriptor and data; and the per-step budget."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _trace_text import call, fd, hx, openat, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_conformance.cli._run import _trace_budget
from persyk_conformance.harness._trace import (
    TraceBudget,
    TraceReader,
    TraceTooLarge,
    parse_trace,
)

# The names that broke the -x form: a quote ends the string early, ") = 0" in a -y path reads
# as the call's end, a newline ends the line, and bytes that are not UTF-8.
HOSTILE_NAMES = [b'c"d', b"m) = 0", b"m) = 0>", b"a\nb", b"\xff\xfe", b"x<y>z", b"e, f",
                 b"<unfinished ...>", b"(deleted)", b"\\x41"]


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=[repr(n) for n in HOSTILE_NAMES])
def test_read_path_descriptor_and_data_of_a_hostile_file_name(name: bytes) -> None:
    path = b"/w/s/" + name
    text = openat(7, path, 0x441, 3) + write(7, 3, path, b'x"y') + call(7, "fsync", fd(3, path))
    opened, written, synced = parse_trace(text)
    decoded = path.decode("utf-8", "surrogateescape")
    assert (opened.kind, opened.fd, opened.path) == ("open", 3, decoded)
    assert (written.kind, written.fd, written.path, written.data) == ("write", 3, decoded,
                                                                      b'x"y')
    assert (synced.kind, synced.fd, synced.path) == ("sync", 3, decoded)


_NAMES = st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b and b"/" not in b)


@given(names=st.lists(_NAMES, min_size=1, max_size=5), data=st.binary(max_size=64),
       number=st.integers(0, 1 << 20))
def test_any_name_and_data_round_trip_through_synthesized_lines(
    names: list[bytes], data: bytes, number: int
) -> None:
    path = b"/w/" + b"/".join(names)
    ops = parse_trace(openat(1, path, 0x241, number) + write(1, number, path, data))
    decoded = path.decode("utf-8", "surrogateescape")
    assert [(op.kind, op.fd, op.path) for op in ops] == [("open", number, decoded),
                                                         ("write", number, decoded)]
    assert ops[1].data == data


def test_read_a_device_annotation_and_a_socket_with_an_arrow() -> None:
    text = (f'1 write({fd(4, "/dev/null")[:-1]}<char 1:3>>, "{hx("a")}", 1) = 1\n'
            '1 write(5<UNIX-STREAM:[1->2]>, "\\x62", 1) = 1\n'
            f"1 dup2(4<{hx('/dev/null')}<char 1:3>>, 3<{hx('/w/f')}>) = 3<{hx('/dev/null')}>\n")
    null, socket, dup = parse_trace(text)
    assert (null.fd, null.path, null.data) == (4, "/dev/null", b"a")
    assert (socket.fd, socket.path, socket.data) == (5, "UNIX-STREAM:[1->2]", b"b")
    assert (dup.kind, dup.fd, dup.new_fd) == ("dup", 4, 3)


def test_read_a_removed_file_as_deleted() -> None:
    [op] = parse_trace(call(1, "fsync", fd(3, "/w/s/.t1", deleted=True)))
    assert (op.fd, op.path, op.deleted) == (3, "/w/s/.t1", True)


def test_a_failed_close_still_frees_the_descriptor() -> None:
    [op] = parse_trace(call(1, "close", fd(3, "/w/f"), ret="-1 EINTR (Interrupted)"))
    assert (op.kind, op.fd) == ("close", 3)


def test_a_child_seen_before_its_fork_returns_waits_for_it() -> None:
    text = ("1 clone(child_stack=NULL, flags=0x1200000|17 <unfinished ...>\n"
            + call(2, "fsync", fd(3, "/w/f"))
            + "1 <... clone resumed>, child_tidptr=0x7f00) = 2\n")
    fork, sync = parse_trace(text)
    assert (fork.kind, fork.pid, fork.new_pid, fork.flags) == ("fork", 1, 2, 0x1200011)
    assert (sync.kind, sync.pid) == ("sync", 2)


def test_writes_outside_the_workspace_keep_no_data() -> None:
    reader = TraceReader(root="/w")
    reader.feed((write(1, 4, "/dev/null", b"flood") + write(1, 3, "/w/f", b"kept")).encode())
    assert [op.data for op in reader.end()] == [b"", b"kept"]


def _reply(pid: int) -> str:
    return write(pid, 1, "pipe:[9]", b"{}\n")


def test_a_step_past_the_line_budget_is_too_large_and_a_reply_starts_the_count_again() -> None:
    small = TraceBudget(bytes=1 << 20, lines=10)
    lines = "".join(call(1, "close", "9", ret="-1 EBADF") for _ in range(9))
    reader = TraceReader(small)
    reader.feed((lines + _reply(1) + lines).encode())  # 10 and 9 lines: within
    with pytest.raises(TraceTooLarge, match=r"TRACE_TOO_LARGE: .* 10 lines of trace per step"):
        reader.feed((lines + lines).encode())


def test_a_line_past_the_byte_budget_is_too_large_before_it_ends() -> None:
    reader = TraceReader(TraceBudget(bytes=1000, lines=100))
    with pytest.raises(TraceTooLarge, match="1,000 bytes"):
        reader.feed(b'1 write(4<\\x2f>, "' + b"\\x00" * 400)


# --- a real strace run ------------------------------------------------------------------------

_PROGRAM = """
import os, sys
root = os.fsencode(sys.argv[1])
for index, name in enumerate(sys.argv[2:]):
    path = root + b"/" + bytes.fromhex(name)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, b'%d"' % index)
    os.fsync(fd)
    os.close(fd)
"""


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (Linux)")
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAMES.filter(lambda b: b not in (b".", b"..")), min_size=1, max_size=6,
                      unique=True))
def test_names_written_by_a_real_program_parse_to_their_path_and_descriptor(
    tmp_path: Path, names: list[bytes]
) -> None:
    root = tmp_path / "w"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    trace = tmp_path / "trace.txt"
    subprocess.run(["strace", "-f", "-qq", "-X", "raw", "-xx", "-yy", "-s", "4096", "-o",
                    str(trace), "-e", "trace=openat,write,fsync,close", sys.executable, "-I",
                    "-S", "-c", _PROGRAM, str(root), *(n.hex() for n in names)], check=True)
    ops = parse_trace(trace.read_bytes().decode("utf-8", "surrogateescape"))
    prefix = os.path.realpath(root) + "/"
    mine = [op for op in ops if (op.path or "").startswith(prefix)]
    expected = []
    for index, name in enumerate(names):
        path = prefix + name.decode("utf-8", "surrogateescape")
        fd_number = next(op.fd for op in mine if op.kind == "open" and op.path == path)
        expected += [("open", fd_number, path, b""), ("write", fd_number, path, b'%d"' % index),
                     ("sync", fd_number, path, b""), ("close", fd_number, path, b"")]
    assert [(op.kind, op.fd, op.path, op.data) for op in mine] == expected


@pytest.mark.parametrize(("text", "budget"), [
    ("8", TraceBudget(8 << 20, TraceBudget().lines)),
    ("8:1000", TraceBudget(8 << 20, 1000)),
], ids=["mib", "mib-and-lines"])
def test_trace_budget_option_reads_mib_and_lines(text: str, budget: TraceBudget) -> None:
    assert _trace_budget(text) == budget


@pytest.mark.parametrize("text", ["", "0", "8:0", "eight", "8:x"])
def test_trace_budget_option_refuses_what_is_no_budget(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        _trace_budget(text)
