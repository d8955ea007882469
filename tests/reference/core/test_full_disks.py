"""Every write operation on a full disk answers IO_FAILED with exit status 2 (APP-19 rev. 2, the
exit table), found systematically: each ``persyk-session`` write command
runs on a small tmpfs that is out of space, on one that is out of inodes, and under
``RLIMIT_FSIZE``. Whatever happens there is no traceback; a failure is ``IO_FAILED`` with exit
status 2; nothing is acknowledged that is not on disk, and nothing is lost: every file of the
mount is byte-identical to before, or holds exactly what was acknowledged.

Mounting needs root (CAP_SYS_ADMIN); where ``mount`` fails the tmpfs conditions are skipped
with the reason, and the RLIMIT_FSIZE condition still runs on the ordinary temporary directory.
"""

from __future__ import annotations

import base64
import json
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _dsh import closed_turn

PAYLOAD_TEXT = "x" * 9000  # more than two pages: a tmpfs with no free page cannot take it
FILLER = "filler"


def cli(*args: str, stdin: bytes = b"", fsize: int | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG, not a killed process

    return subprocess.run([sys.executable, "-m", "persyk_session.cli", *args], input=stdin,
                          capture_output=True, timeout=timeout, preexec_fn=limit, check=False)


def ok(done: subprocess.CompletedProcess[bytes]) -> None:
    assert done.returncode == 0, done.stderr.decode()


def message(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "user", "content": [{"type": "text", "text": text}],
                        "timestamp": 1767225601000}}


def jsonl(*objects: Any) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


# --- the operations: how to prepare each on a roomy disk, and how to run it ----------------------


@dataclass(frozen=True)
class WriteOp:
    name: str
    prepare: Callable[[Path, Path], None]  # (mount, scratch outside the mount)
    run: Callable[[Path, Path, int | None], subprocess.CompletedProcess[bytes]]


def _session(root: Path, *records: dict[str, Any]) -> Path:
    session = root / "s"
    ok(cli("create", str(session), "--id", "s1", "--timestamp", "2026-01-01T00:00:00.000Z"))
    if records:
        scratch = root.parent / f"{root.name}-records.jsonl"
        scratch.write_bytes(jsonl(*records))
        ok(cli("append", str(session), "--records", str(scratch), "--leaf-null"))
        scratch.unlink()
    return session


def _prepare_with_message(root: Path, scratch: Path) -> None:
    _session(root, message("m1", None, "hi"))
    (scratch / "big.jsonl").write_bytes(jsonl(message("m2", "m1", PAYLOAD_TEXT)))


def _prepare_first(root: Path, scratch: Path) -> None:
    _session(root)
    (scratch / "big.jsonl").write_bytes(jsonl(message("m2", None, PAYLOAD_TEXT)))


def _prepare_torn(root: Path, scratch: Path) -> None:
    session = _session(root, message("m1", None, "hi"))
    with (session / "session.jsonl").open("ab") as handle:
        handle.write(json.dumps(message("m2", "m1", PAYLOAD_TEXT)).encode()[:-9])


def _prepare_killed_capture(root: Path, scratch: Path) -> None:
    session = _session(root, message("m1", None, "hi"))
    capture = subprocess.Popen(
        [sys.executable, "-m", "persyk_session.cli", "capture", str(session), "--recording",
         "r1", "--leaf", "m1"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert capture.stdin is not None
    capture.stdin.write(b"\x01\x02" * 12000)
    capture.stdin.flush()
    wav = session / "assets" / "r1.wav"
    deadline = time.monotonic() + 20
    while (not wav.exists() or wav.stat().st_size < 20000) and time.monotonic() < deadline:
        time.sleep(0.02)
    capture.kill()  # an interrupted recording: placeholder sizes, no recording.finished
    capture.wait()


def _prepare_replay(root: Path, scratch: Path) -> None:
    _session(root, message("m1", None, "hi"))
    audio = base64.b64encode(b"\x03\x04" * 6000).decode()
    (scratch / "script.jsonl").write_bytes(jsonl(
        {"at": 0, "connection": "c1", "open": {"provider": "openai", "model": "m",
                                               "endpoint": "wss://api.example.com/v1",
                                               "api": "realtime"}},
        {"at": 1, "connection": "c1", "direction": "received", "event": {
            "type": "response.output_audio.delta", "response_id": "r1", "item_id": "i1",
            "output_index": 0, "content_index": 0, "delta": audio}},
    ))


def _prepare_dsh(root: Path, scratch: Path) -> None:
    (root / "dsh").mkdir()
    ok(cli("dsh", "append", "--root", str(root / "dsh"), "--id", "d1", "--cwd", "/w",
           "--created-at", "1", stdin=jsonl(*closed_turn(0, 1))))
    big = closed_turn(6, 2)
    big[3]["data"]["message"]["content"][0]["content"][0]["text"] = PAYLOAD_TEXT
    (scratch / "events.jsonl").write_bytes(jsonl(*big))


OPS = [
    WriteOp("create", lambda root, scratch: None,
            lambda root, scratch, fsize: cli("create", str(root / "new"), "--json", fsize=fsize)),
    WriteOp("append", _prepare_with_message,
            lambda root, scratch, fsize: cli("append", str(root / "s"), "--records",
                                             str(scratch / "big.jsonl"), "--leaf", "m1",
                                             "--json", fsize=fsize)),
    # the session's first mutation: the lock file is made too (APP-19 rev. 2, not APP-6)
    WriteOp("first-append", lambda root, scratch: _prepare_first(root, scratch),
            lambda root, scratch, fsize: cli("append", str(root / "s"), "--records",
                                             str(scratch / "big.jsonl"), "--leaf-null",
                                             "--json", fsize=fsize)),
    WriteOp("remove", _prepare_with_message,
            lambda root, scratch, fsize: cli("remove", str(root / "s"), "--target", "m1", "--id",
                                             "r1", "--timestamp", "2026-01-01T00:00:02Z",
                                             "--leaf", "m1", "--json", fsize=fsize)),
    WriteOp("recover", _prepare_torn,
            lambda root, scratch, fsize: cli("recover", str(root / "s"), "--json", fsize=fsize)),
    WriteOp("asset-write", lambda root, scratch: _session(root) and None,
            lambda root, scratch, fsize: cli("asset", "write", str(root / "s"), "--mime-type",
                                             "application/octet-stream", "--json",
                                             stdin=b"\x05" * 20000, fsize=fsize)),
    WriteOp("capture", lambda root, scratch: _session(root) and None,
            lambda root, scratch, fsize: cli("capture", str(root / "s"), "--recording", "r9",
                                             "--leaf-null", stdin=b"\x06\x07" * 20000,
                                             fsize=fsize)),
    WriteOp("recover-recording", _prepare_killed_capture,
            lambda root, scratch, fsize: cli("recover-recording", str(root / "s"),
                                             "--recording", "r1", "--json", fsize=fsize)),
    WriteOp("delete", lambda root, scratch: _session(root, message("m1", None, "hi")) and None,
            lambda root, scratch, fsize: cli("delete", str(root / "s"), "--confirm", "--json",
                                             fsize=fsize)),
    WriteOp("replay", _prepare_replay,
            lambda root, scratch, fsize: cli("replay", str(root / "s"), "--script",
                                             str(scratch / "script.jsonl"), "--leaf", "m1",
                                             "--json", fsize=fsize)),
    WriteOp("dsh-append", _prepare_dsh,
            lambda root, scratch, fsize: cli("dsh", "append", "--root", str(root / "dsh"),
                                             "--id", "d1", "--cwd", "/w", "--created-at", "1",
                                             "--events", str(scratch / "events.jsonl"),
                                             "--json", fsize=fsize)),
]

# Where the condition leaves the operation no way to succeed (it needs a new inode, a new page
# or bytes past the limit): these must fail, so the table cannot pass by never failing. The
# others may also succeed (a directory rename needs no page), and then must have kept what
# they acknowledged.
MUST_FAIL = {
    "space": {"create", "append", "first-append", "asset-write", "capture", "replay",
              "dsh-append"},
    "inodes": {"create", "first-append", "recover", "asset-write", "capture", "delete",
               "replay"},
    "fsize": {"create", "append", "first-append", "remove", "asset-write", "capture", "replay",
              "dsh-append"},
}


# --- the conditions -------------------------------------------------------------------------------




def _mount_small_tmpfs(point: Path) -> None:
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=256", "tmpfs",
                           str(point)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {done.stderr.decode().strip()}")


def _fill_space(root: Path) -> None:
    try:
        with (root / FILLER).open("wb") as handle:
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()
    except OSError:
        pass


def _fill_inodes(root: Path) -> None:
    number = 0
    try:
        while True:
            (root / f"{FILLER}-{number}").touch()
            number += 1
    except OSError:
        pass


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` but the filler and the empty lock files (a lock file
    holds no data: making one loses nothing), by relative path."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and not rel.startswith(FILLER):
            data = path.read_bytes()
            if data or not rel.endswith(".lock"):
                out[rel] = data
    return out


def _limit_for(before: dict[str, bytes]) -> int:
    """An RLIMIT_FSIZE that lets no session file or log grow: the smallest non-empty one."""
    return min((len(data) for data in before.values() if data), default=0)


@pytest.fixture
def disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, Path, str]]:
    condition: str = request.param
    root, scratch = tmp_path / "disk", tmp_path / "scratch"
    root.mkdir()
    scratch.mkdir()
    if condition != "fsize":
        _mount_small_tmpfs(root)
    try:
        yield root, scratch, condition
    finally:
        if condition != "fsize":
            subprocess.run(["umount", "-l", str(root)], capture_output=True, check=False)


def _result(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    try:
        value = json.loads(done.stdout)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _added_ids(before: bytes, after: bytes) -> list[str]:
    assert after.startswith(before), "a record that was on disk before is gone"
    return [json.loads(line)["id"] for line in after[len(before):].splitlines()]


@pytest.mark.parametrize("disk", ["space", "inodes", "fsize"], indirect=True)
@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_a_write_on_a_full_disk_answers_io_failed_and_loses_nothing(
    op: WriteOp, disk: tuple[Path, Path, str]
) -> None:
    root, scratch, condition = disk
    op.prepare(root, scratch)
    fsize = None
    if condition == "space":
        _fill_space(root)
    elif condition == "inodes":
        _fill_inodes(root)
    before = _snapshot(root)
    if condition == "fsize":
        fsize = _limit_for(before)
    done = op.run(root, scratch, fsize)
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    after = _snapshot(root)
    assert "Traceback" not in said, said
    assert done.returncode in (0, 2), said
    if op.name in MUST_FAIL[condition]:
        assert done.returncode == 2, f"{op.name} cannot succeed here, yet answered: {said}"
    if done.returncode == 2:
        # dsh-v0 has its own catalog: DSH_IO is its IO_FAILED (docs/spec-dsh-v0.md)
        assert ("DSH_IO" if op.name.startswith("dsh") else "IO_FAILED") in said, said
        _nothing_but_the_acknowledged(op.name, before, after, _result(done))
    else:
        _acknowledged_is_on_disk(op.name, before, after, _result(done))


def _nothing_but_the_acknowledged(
    name: str, before: dict[str, bytes], after: dict[str, bytes], result: dict[str, Any]
) -> None:
    """A failed write acknowledged nothing, so every file is as before; a replay halted part
    way acknowledged its ``appended`` records and ``assets``, exactly those."""
    if name == "recover-recording":
        # CAP-24: the sizes in the header may be repaired before the record fails; a repair is
        # idempotent, and the audio bytes are the same
        before, after = _without_wav_sizes(before), _without_wav_sizes(after)
    if name != "replay":
        assert after == before, "a failed write changed or left files"
        return
    assert _added_ids(before["s/session.jsonl"], after["s/session.jsonl"]) \
        == result.get("appended", [])
    new_files = sorted(set(after) - set(before))
    assert new_files == sorted(result.get("assets", [])), "an unacknowledged asset was left"
    assert all(after[rel] == data for rel, data in before.items() if rel != "s/session.jsonl")


def _without_wav_sizes(files: dict[str, bytes]) -> dict[str, bytes]:
    return {rel: (data[:4] + data[8:40] + data[44:] if rel.endswith(".wav") else data)
            for rel, data in files.items()}


def _acknowledged_is_on_disk(
    name: str, before: dict[str, bytes], after: dict[str, bytes], result: dict[str, Any]
) -> None:
    """What a successful write acknowledged is on disk, and nothing it did not touch changed."""
    if name == "delete":
        assert result == {"action": "deleted"} and not any(r.startswith("s/") for r in after)
        return
    if name == "append":
        assert _added_ids(before["s/session.jsonl"], after["s/session.jsonl"]) \
            == result["committed"]
    if name == "recover":
        assert before["s/session.jsonl"].startswith(after["s/session.jsonl"])
        torn = before["s/session.jsonl"][len(after["s/session.jsonl"]):]
        assert [data for rel, data in after.items() if rel.startswith("s/recovery/")] == [torn]
        return
    for rel, data in before.items():
        if rel.endswith(".wav"):
            continue  # recover-recording rewrites the sizes in the header (CAP-24)
        assert after[rel].startswith(data), f"{rel} lost bytes it had"


# --- the adapter answers the same code, never ``internal`` -------------------------------------


ADAPTER_OPS = [
    pytest.param("assetWrite", {"data": base64.b64encode(b"\x05" * 20000).decode(),
                                "mimeType": "application/octet-stream"}, id="assetWrite"),
    pytest.param("captureStart", {"recordingId": "r1", "leaf": None, "rate": 24000,
                                  "id": "st", "timestamp": "2026-01-01T00:00:10.000Z"},
                 id="captureStart"),
    pytest.param("deleteSession", {"confirm": True}, id="deleteSession"),
]


@pytest.mark.parametrize("disk", ["inodes"], indirect=True)
@pytest.mark.parametrize(("op", "args"), ADAPTER_OPS)
def test_the_adapter_answers_io_failed_on_a_disk_without_inodes(
    op: str, args: dict[str, Any], disk: tuple[Path, Path, str]
) -> None:
    from persyk_session.adapter import dispatch

    root, _, _ = disk
    session = _session(root, message("m1", None, "hi"))
    _fill_inodes(root)
    before = _snapshot(root)
    reply = dispatch(op, {"session": str(session), **args})
    assert "internal" not in reply, reply
    assert reply["result"]["error"]["code"] == "IO_FAILED", reply
    assert _snapshot(root) == before
