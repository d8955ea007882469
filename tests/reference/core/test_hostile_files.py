"""Hostile files: each test reproduces one finding against the reference.

Commands that could hang on a regression (a FIFO, /proc/kmsg) run as a subprocess with a
deadline, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import fcntl
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _writes import append, header_line, line, new_session, user, write_session
from persyk_session import Code
from persyk_session._errors import ContractError
from persyk_session.adapter import dispatch
from persyk_session.write._lock import session_lock
from persyk_session.write._recovery import recover

BASE = header_line() + line(user("m0", None)) + line(user("m1", "m0"))
FRAGMENT = b'{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-0'
DEADLINE = 30.0


def _cli(*argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "persyk_session.cli", *argv],
        capture_output=True, text=True, timeout=DEADLINE, check=False, **kwargs,
    )


def _no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr, done.stderr


def _error_code(result: dict[str, Any]) -> str:
    return str(result["result"]["error"]["code"])


def _torn(directory: Path) -> Path:
    return write_session(directory, BASE + FRAGMENT)


def _recovery_files(session: Path) -> list[str]:
    return sorted(p.name for p in (session / "recovery").iterdir())


# --- 1: recovery is restartable --------------------------------------------------------------


def test_a_temporary_left_by_a_killed_recovery_is_removed_and_the_fragment_kept_once(
    tmp_path: Path,
) -> None:
    # An attempt killed while writing its temporary copy left half the fragment behind.
    session = tmp_path / "s"
    file = _torn(session)
    (session / "recovery").mkdir()
    (session / "recovery" / ".session.jsonl.0123456789abcdef.tmp").write_bytes(FRAGMENT[:9])
    result = recover(session)
    assert result.action == "truncated"
    assert result.preserved is not None
    assert _recovery_files(session) == [Path(result.preserved).name]
    assert (session / result.preserved).read_bytes() == FRAGMENT
    assert file.read_bytes() == BASE


def test_a_copy_published_by_a_killed_recovery_is_reused_not_duplicated(tmp_path: Path) -> None:
    session = tmp_path / "s"
    file = _torn(session)
    first = recover(session)
    assert first.preserved is not None
    file.write_bytes(BASE + FRAGMENT)  # as if killed after publishing, before truncating
    again = recover(session)
    assert again.action == "truncated"
    assert again.preserved == first.preserved
    assert _recovery_files(session) == [Path(first.preserved).name]


# --- 2: nothing a mutation creates lands outside the session directory ----------------------


@pytest.fixture
def linked_session(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(session directory whose session.jsonl is a symlink, the directory of the target)."""
    outside = tmp_path / "outside"
    target = write_session(outside, BASE + FRAGMENT)
    session = tmp_path / "s"
    session.mkdir()
    (session / "session.jsonl").symlink_to(target)
    yield session, outside


@pytest.mark.parametrize(
    "request_args",
    [
        {"op": "append", "records": [user("n1", "m1")]},
        {"op": "remove", "targetId": "m1", "id": "r1", "timestamp": "2026-01-01T00:00:00Z",
         "leaf": "m1"},
        {"op": "recover"},
    ],
    ids=["append", "remove", "recover"],
)
def test_a_symlinked_session_file_is_refused_and_nothing_is_created_beside_its_target(
    linked_session: tuple[Path, Path], request_args: dict[str, Any]
) -> None:
    # Through session.jsonl -> /etc/passwd, the lock was created as /etc/session.lock.
    session, outside = linked_session
    args = {k: v for k, v in request_args.items() if k != "op"}
    reply = dispatch(request_args["op"], {"session": str(session), **args})
    assert _error_code(reply) == "SESSION_PATH_REFUSED"
    assert sorted(p.name for p in outside.iterdir()) == ["session.jsonl"]
    assert (outside / "session.jsonl").read_bytes() == BASE + FRAGMENT
    assert sorted(p.name for p in session.iterdir()) == ["session.jsonl"]


def test_a_symlinked_session_file_is_still_readable(linked_session: tuple[Path, Path]) -> None:
    session, _ = linked_session
    (session.parent / "outside" / "session.jsonl").write_bytes(BASE)
    assert dispatch("validate", {"session": str(session)})["result"]["valid"] is True


def test_a_symlinked_recovery_directory_is_refused_and_nothing_is_written_there(
    tmp_path: Path,
) -> None:
    # Recovery -> elsewhere made recover write its fragment there and succeed.
    session = tmp_path / "s"
    file = _torn(session)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (session / "recovery").symlink_to(elsewhere)
    reply = dispatch("recover", {"session": str(session)})
    assert _error_code(reply) == "SESSION_PATH_REFUSED"
    assert list(elsewhere.iterdir()) == []
    assert file.read_bytes() == BASE + FRAGMENT


def test_a_recovery_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    session = tmp_path / "s"
    file = _torn(session)
    (session / "recovery").write_bytes(b"not a directory")
    reply = dispatch("recover", {"session": str(session)})
    assert _error_code(reply) == "SESSION_PATH_REFUSED"
    assert file.read_bytes() == BASE + FRAGMENT


def test_a_symlinked_assets_directory_is_never_touched_by_an_append(tmp_path: Path) -> None:
    # AST-10/AST-15 and APP-25 agree: no v1 mutation writes into assets/, so a link there is
    # left alone (capture refuses it, AST-15).
    file = new_session(tmp_path / "s", user("m0", None))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "s" / "assets").symlink_to(elsewhere)
    assert append(tmp_path / "s", [user("m1", "m0")]).committed == ("m1",)
    assert list(elsewhere.iterdir()) == []
    assert file.read_bytes().endswith(line(user("m1", "m0")))


# --- 3: what is planted at a fragment's name is never trusted --------------------------------


def _plant(kind: str, where: Path) -> None:
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "zero-link":
        where.symlink_to("/dev/zero")
    else:
        where.mkdir()


@pytest.mark.parametrize("kind", ["fifo", "zero-link", "directory"])
def test_a_file_planted_at_a_fragment_name_is_neither_read_nor_reused(
    tmp_path: Path, kind: str
) -> None:
    # A FIFO at the predictable name hung recover under the lock, a link to
    # /dev/zero read 3.8 GB, a directory gave IO_FAILED. Plant each at the name the reference
    # used before (offset and digest) and at a name of today's published shape.
    session = tmp_path / "s"
    file = _torn(session)
    (session / "recovery").mkdir()
    import hashlib

    stem = f"session.jsonl.{len(BASE)}-{hashlib.sha256(FRAGMENT).hexdigest()[:12]}"
    planted = [f"{stem}.fragment", f"{stem}.0000000000000000.fragment"]
    for name in planted:
        _plant(kind, session / "recovery" / name)
    done = _cli("recover", str(session), "--json")
    _no_traceback(done)
    assert done.returncode == 0, done.stdout
    assert file.read_bytes() == BASE
    kept = [n for n in _recovery_files(session) if n not in planted]
    assert len(kept) == 1
    assert (session / "recovery" / kept[0]).read_bytes() == FRAGMENT
    for name in planted:
        assert os.path.lexists(session / "recovery" / name)  # left alone


# --- 4: special and unreadable files ---------------------------------------------------------


@pytest.mark.parametrize("command", [
    ["validate"], ["context", "--json"], ["info", "--json"], ["read", "--page-size", "5", "--json"],
])
@pytest.mark.parametrize("special", ["/proc/self/mem", "/proc/kmsg"])
def test_reading_a_special_file_is_a_clear_error(command: list[str], special: str) -> None:
    # /proc/self/mem gave an OSError traceback, /proc/kmsg hung.
    if not os.path.exists(special):
        pytest.skip(f"{special} does not exist on this system")
    done = _cli(command[0], special, *command[1:])
    _no_traceback(done)
    assert done.returncode == 2
    assert "PATH_NOT_FOUND" in done.stdout + done.stderr


@pytest.mark.parametrize("records", ["fifo", "/proc/kmsg", "/dev/zero"])
def test_append_from_a_special_records_file_is_a_clear_error(
    tmp_path: Path, records: str
) -> None:
    # --records FIFO (no writer) and --records /proc/kmsg hung.
    file = new_session(tmp_path / "s")
    before = file.read_bytes()
    if records == "fifo":
        records = str(tmp_path / "batch.fifo")
        os.mkfifo(records)
    elif not os.path.exists(records):
        pytest.skip(f"{records} does not exist on this system")
    done = _cli("append", str(tmp_path / "s"), "--records", records, "--json")
    _no_traceback(done)
    assert done.returncode == 2
    assert "PATH_NOT_FOUND" in done.stderr
    assert file.read_bytes() == before


def _without_read_override() -> list[str]:
    """A command prefix under which the file permissions apply: root reads any file, so as
    root the capabilities that override them are dropped (setpriv, util-linux)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no file is unreadable to this process")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"]


def test_an_unreadable_session_file_is_path_not_found_for_every_command(tmp_path: Path) -> None:
    # Recover gave a PermissionError traceback where every other command said
    # PATH_NOT_FOUND.
    session = tmp_path / "s"
    file = _torn(session)
    file.chmod(0)
    prefix = _without_read_override()
    try:
        for command in (["recover"], ["validate"], ["append", "--records", "-"]):
            done = subprocess.run(
                [*prefix, sys.executable, "-m", "persyk_session.cli", command[0], str(session),
                 *command[1:]],
                capture_output=True, text=True, timeout=DEADLINE, check=False, input="",
            )
            _no_traceback(done)
            assert done.returncode == 2, (command, done.stderr)
            assert "PATH_NOT_FOUND" in done.stdout + done.stderr
    finally:
        file.chmod(0o644)
    assert file.read_bytes() == BASE + FRAGMENT


# --- 5: limits on inputs --------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "1e10", "nan", "-1", "junk"])
def test_an_out_of_range_lock_timeout_in_the_environment_is_usage(
    tmp_path: Path, value: str
) -> None:
    # inf and 1e10 crashed every mutation with OverflowError.
    file = new_session(tmp_path / "s")
    before = file.read_bytes()
    env = {**os.environ, "PERSYK_LOCK_TIMEOUT": value}
    done = _cli("recover", str(tmp_path / "s"), env=env)
    _no_traceback(done)
    assert done.returncode == 2
    assert "USAGE" in done.stderr
    assert file.read_bytes() == before


@pytest.mark.parametrize(
    "value", [1e308, 3600.5, 10**400, -0.5], ids=["1e308", "3600.5", "10**400", "negative"]
)
def test_an_out_of_range_lock_timeout_argument_is_usage(tmp_path: Path, value: float) -> None:
    new_session(tmp_path / "s")
    for op, extra in (("recover", {}), ("append", {"records": [user("n", None)]})):
        reply = dispatch(op, {"session": str(tmp_path / "s"), "lockTimeout": value, **extra})
        assert _error_code(reply) == "USAGE", reply


@pytest.mark.parametrize("op", ["create", "validate", "append", "recover"])
def test_a_nul_byte_in_a_path_is_usage(tmp_path: Path, op: str) -> None:
    extra = {"records": [user("n", None)]} if op == "append" else {}
    reply = dispatch(op, {"session": str(tmp_path / "a\x00b"), **extra})
    assert _error_code(reply) == "USAGE", reply
    assert list(tmp_path.iterdir()) == []


def test_a_nul_byte_in_a_records_file_path_is_usage(tmp_path: Path) -> None:
    new_session(tmp_path / "s")
    reply = dispatch("append", {"session": str(tmp_path / "s"), "recordsFile": "a\x00b"})
    assert _error_code(reply) == "USAGE"


# --- 6: one file, two names ------------------------------------------------------------------


def test_a_hard_linked_session_file_is_locked_by_its_identity(tmp_path: Path) -> None:
    # Two writers through two hard-linked names held two different session.lock
    # files, appended at once and produced ID_DUPLICATE. Now the file itself is locked too.
    file = new_session(tmp_path / "one", user("m0", None))
    (tmp_path / "two").mkdir()
    os.link(file, tmp_path / "two" / "session.jsonl")
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with session_lock(tmp_path / "one", timeout=5, file=file):
            held.set()
            release.wait(DEADLINE)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(DEADLINE)
        before = file.read_bytes()
        with pytest.raises(ContractError) as caught:
            append(tmp_path / "two", [user("m1", "m0")], timeout=0.2)
        assert caught.value.code is Code.LOCK_UNAVAILABLE
        assert file.read_bytes() == before
    finally:
        release.set()
        holder.join()
    assert append(tmp_path / "two", [user("m1", "m0")], timeout=5).committed == ("m1",)


def test_a_session_file_locked_by_another_process_is_waited_for(tmp_path: Path) -> None:
    # The identity lock is a plain flock on session.jsonl, as another process would take it.
    file = new_session(tmp_path / "s", user("m0", None))
    fd = os.open(file, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        reply = dispatch("recover", {"session": str(tmp_path / "s"), "lockTimeout": 0.1})
        assert _error_code(reply) == "LOCK_UNAVAILABLE"
    finally:
        os.close(fd)


# --- 7: create under a file size limit -------------------------------------------------------


def _file_size_limit() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (10, 10))


def test_a_create_that_fails_leaves_no_directory_it_made(tmp_path: Path) -> None:
    # The header write failed (EFBIG) but a/b/c stayed behind.
    done = _cli("create", str(tmp_path / "a" / "b" / "c"), "--json",
                preexec_fn=_file_size_limit)
    _no_traceback(done)
    assert done.returncode == 2
    assert "IO_FAILED" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_create_that_fails_keeps_a_directory_that_existed(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    done = _cli("create", str(tmp_path / "a" / "b"), preexec_fn=_file_size_limit)
    assert done.returncode == 2
    assert [p.name for p in tmp_path.iterdir()] == ["a"]
    assert list((tmp_path / "a").iterdir()) == []
    assert stat.S_ISDIR((tmp_path / "a").stat().st_mode)
