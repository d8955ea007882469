"""The session mutation lock: APP-5, APP-6, RCV-2, CTX-19."""

from __future__ import annotations

import errno
import fcntl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _writes import append, new_session, user
from persyk_session import Code, ContractError, UsageError
from persyk_session.operations import OPERATIONS
from persyk_session.write._lock import LOCK_FILE, lock_timeout, session_lock

HOLDER = """
import sys
from pathlib import Path
from persyk_session.write._lock import session_lock
with session_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock of tmp_path/s until its stdin closes."""
    new_session(tmp_path / "s")
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "s")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def test_append_waits_then_fails_with_lock_unavailable(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    before = (tmp_path / "s" / "session.jsonl").read_bytes()
    with pytest.raises(ContractError) as caught:
        append(tmp_path / "s", [user("a", None)], timeout=0.2)
    assert caught.value.code is Code.LOCK_UNAVAILABLE
    assert (tmp_path / "s" / "session.jsonl").read_bytes() == before


def test_append_through_a_symlinked_session_file_is_refused_before_any_lock(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    # APP-25 (contract 1.3.0): a link inside the session directory is never followed, so the
    # lock is never taken beside the link's target (it was, until 1.2.0).
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / "session.jsonl").symlink_to(tmp_path / "s" / "session.jsonl")
    before = (tmp_path / "s" / "session.jsonl").read_bytes()
    with pytest.raises(ContractError) as caught:
        append(tmp_path / "link", [user("a", None)], timeout=0.2)
    assert caught.value.code is Code.SESSION_PATH_REFUSED
    assert (tmp_path / "s" / "session.jsonl").read_bytes() == before
    assert not (tmp_path / "link" / LOCK_FILE).exists()


def test_operation_reports_lock_unavailable_as_result(
    tmp_path: Path, holder: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERSYK_LOCK_TIMEOUT", "0.1")
    result = OPERATIONS["recover"]({"session": str(tmp_path / "s")})
    assert result["error"]["code"] == "LOCK_UNAVAILABLE"


def test_lock_of_a_killed_holder_is_released(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    holder.kill()
    holder.wait()
    assert append(tmp_path / "s", [user("a", None)], timeout=5).committed == ("a",)


def test_append_succeeds_once_the_holder_finishes(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait()
    assert append(tmp_path / "s", [user("a", None)], timeout=5).committed == ("a",)


def test_threads_of_one_process_exclude_each_other(tmp_path: Path) -> None:
    new_session(tmp_path / "s")
    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with session_lock(tmp_path / "s"):
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert entered.wait(10)
        with pytest.raises(ContractError) as caught:
            append(tmp_path / "s", [user("a", None)], timeout=0.1)
        assert caught.value.code is Code.LOCK_UNAVAILABLE
    finally:
        release.set()
        thread.join()


@pytest.mark.parametrize("code", [errno.ENOLCK, errno.ENOSYS], ids=["ENOLCK", "ENOSYS"])
def test_unsupported_locking_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    new_session(tmp_path / "s")
    before = (tmp_path / "s" / "session.jsonl").read_bytes()

    def refuse(fd: int, operation: int) -> None:
        raise OSError(code, "no locks here")

    monkeypatch.setattr(fcntl, "flock", refuse)
    with pytest.raises(ContractError) as caught:
        append(tmp_path / "s", [user("a", None)], timeout=5)
    assert caught.value.code is Code.LOCK_UNAVAILABLE
    assert (tmp_path / "s" / "session.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("append", {"records": [user("a", None)]}),
        ("recover", {}),
        ("remove", {"targetId": "m0", "id": "r", "timestamp": "2026-01-01T00:00:09Z",
                    "leaf": "m0"}),
    ],
    ids=["append", "recover", "remove"],
)
def test_mutations_leave_the_lock_file_in_place(
    tmp_path: Path, op: str, args: dict[str, object]
) -> None:
    new_session(tmp_path / "s", user("m0", None))
    OPERATIONS[op]({"session": str(tmp_path / "s"), **args})
    assert (tmp_path / "s" / LOCK_FILE).is_file()
    OPERATIONS[op]({"session": str(tmp_path / "s"), **args})
    assert (tmp_path / "s" / LOCK_FILE).is_file()


@pytest.mark.parametrize(
    ("op", "args"),
    [("validate", {}), ("context", {}), ("info", {}), ("read", {"pageSize": 10})],
    ids=["validate", "context", "info", "read"],
)
def test_reads_never_create_the_lock_file(tmp_path: Path, op: str, args: dict[str, object]) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "session.jsonl").write_bytes(
        b'{"type":"session","version":1,"id":"h","timestamp":"2026-01-01T00:00:00Z"}\n'
    )
    OPERATIONS[op]({"session": str(tmp_path / "s"), **args})
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["session.jsonl"]


@pytest.mark.parametrize(
    ("given", "env", "expected"),
    [(2.5, None, 2.5), (None, "0.5", 0.5), (None, None, 10.0), (-1, None, 0.0)],
    ids=["argument", "environment", "default", "negative"],
)
def test_lock_timeout_sources(
    monkeypatch: pytest.MonkeyPatch, given: float | None, env: str | None, expected: float
) -> None:
    if env is None:
        monkeypatch.delenv("PERSYK_LOCK_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("PERSYK_LOCK_TIMEOUT", env)
    assert lock_timeout(given) == expected


@pytest.mark.parametrize("env", ["junk", "inf", "1e10", "nan", "-1", "3600.01"])
def test_a_lock_timeout_outside_0_to_3600_seconds_is_usage(
    monkeypatch: pytest.MonkeyPatch, env: str
) -> None:
    # inf and 1e10 overflowed the thread lock; junk was silently ignored.
    monkeypatch.setenv("PERSYK_LOCK_TIMEOUT", env)
    with pytest.raises(UsageError) as caught:
        lock_timeout()
    assert caught.value.code is Code.USAGE


def test_symlinked_lock_file_fails_closed_and_creates_nothing_outside(tmp_path: Path) -> None:
    session = tmp_path / "s"
    session.mkdir()
    outside = tmp_path / "elsewhere.lock"
    (session / "session.lock").symlink_to(outside)  # dangling: following it would create it
    with pytest.raises(ContractError) as caught, session_lock(session, timeout=0.1):
        pass
    assert caught.value.code is Code.LOCK_UNAVAILABLE
    assert not outside.exists()
