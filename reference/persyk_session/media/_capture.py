"""Audio capture and interrupted-WAV recovery: the I/O edge around ``_wav`` (docs/spec.md CAP).

A capture (CAP-19..CAP-22):

1. creates ``assets/<recordingId>.wav`` by exclusive creation, without following links, with a
   44-byte header whose sizes are placeholders (CAP-8, CAP-21);
2. takes the asset lock, ``flock(LOCK_EX)`` on that descriptor, held until the capture ends;
3. fsyncs the file and ``assets/``, then appends ``recording.started`` under the session lock
   (asset lock first, CAP-4), and only then accepts frames (CAP-1);
4. on finish revalidates the file's identity (AST-19), writes the real sizes, fsyncs, appends
   ``recording.finished`` and releases the asset lock.

The caller addresses a running capture by an opaque handle (AST-13, AST-20): 128 random bits,
valid only in this process and only until the capture ends or its session is deleted.

Recovery (CAP-23..CAP-27) takes the asset lock without waiting, makes the WAV's sizes true
(header and tail only), then appends ``recording.interrupted`` under the session lock if the
recording has no terminal entry. Every step is idempotent, so a recovery killed anywhere and run
again ends in the same bytes and one entry.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import threading
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .. import _fsutil
from .._errors import Code, ContractError, Diagnostic, UsageError
from ..read._context import LeafSelector
from ..read._engine import READABLE_ENGINE, Engine
from ..read._index import IndexBuilder
from ..read._store import open_session
from ..write._append import AppendResult, append_built, now_timestamp
from . import _wav
from ._assets import (
    ASSETS_DIR,
    identity,
    not_found,
    open_asset,
    open_assets_dir,
    open_session_dir,
    refused,
    revalidate,
)

__all__ = [
    "Capture",
    "abandon_captures",
    "finish_capture",
    "lookup",
    "recover_recording",
    "release_capture",
    "start_capture",
    "stop_captures_of",
    "write_frames",
]

_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_HELD: Final = frozenset({errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES})


def _fail(code: Code, detail: str) -> ContractError:
    return ContractError([Diagnostic(code, detail=detail)])


def try_asset_lock(fd: int) -> None:
    """CAP-19: take the asset lock without waiting; a live capture elsewhere is ASSET_LOCKED."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in _HELD:
            raise _fail(Code.ASSET_LOCKED, "another live capture holds the asset lock") from None
        raise _fail(Code.LOCK_UNAVAILABLE, "the file system cannot lock the asset") from None


@contextlib.contextmanager
def _closing(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


# --- the capture -------------------------------------------------------------------------------


@dataclass(slots=True)
class Capture:
    """A running capture. Mutable on purpose: it is the state of a live resource, reachable only
    through its handle, changed only under ``lock``."""

    handle: str
    session: str
    session_identity: tuple[int, int]
    recording_id: str
    fd: int
    rate: int
    channels: int
    frames: int = 0
    carry: bytes = b""  # a partial frame waiting for the rest of its bytes
    failed_frames: int = 0  # frames given that could not be written (CAP-22: incomplete)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def frame_size(self) -> int:
        return 2 * self.channels

    @property
    def name(self) -> str:
        return f"{self.recording_id}.wav"


_registry_guard = threading.Lock()
_captures: dict[str, Capture] = {}


def lookup(handle: object) -> Capture:
    """AST-20: a handle this process issued and has not revoked; otherwise HANDLE_INVALID."""
    with _registry_guard:
        capture = _captures.get(handle) if isinstance(handle, str) else None
    if capture is None:
        raise _fail(Code.HANDLE_INVALID, "the capture handle is not valid in this process")
    return capture


def _revoke(capture: Capture) -> None:
    with _registry_guard:
        _captures.pop(capture.handle, None)
    with contextlib.suppress(OSError):
        os.close(capture.fd)  # releases the asset lock


def _parent_of(builder: IndexBuilder, leaf: LeafSelector) -> str | None:
    if leaf.kind == "null":
        return None
    if leaf.kind == "id":
        if leaf.id not in builder:
            raise _fail(Code.LEAF_NOT_FOUND, "the selected leaf is not an entry")
        return leaf.id
    return builder.last_entry_id


def _append_error(result: AppendResult) -> ContractError | None:
    return ContractError([result.error]) if result.error is not None else None


def start_capture(
    session: str,
    recording_id: str,
    *,
    leaf: LeafSelector,
    rate: int = 24000,
    channels: int = 1,
    id: str | None = None,
    timestamp: str | None = None,
    timeout: float | None = None,
    engine: Engine = READABLE_ENGINE,
) -> tuple[Capture, dict[str, Any]]:
    """CAP-20: create, lock and fsync the WAV, then append ``recording.started``."""
    _check_capture_args(recording_id, leaf, rate, channels)
    name = f"{recording_id}.wav"
    session_fd = open_session_dir(session)
    try:
        session_identity = identity(os.fstat(session_fd))
        with _closing(open_assets_dir(session_fd, create=True)) as assets_fd:
            fd = _create_locked_wav(assets_fd, name, rate, channels)
            entry_id = id or str(uuid.uuid4())
            record_time = timestamp or now_timestamp()

            def build(builder: IndexBuilder) -> list[dict[str, Any]]:
                return [{
                    "type": "recording.started", "id": entry_id,
                    "parentId": _parent_of(builder, leaf), "timestamp": record_time,
                    "recordingId": recording_id,
                    "asset": {"status": "available", "path": f"{ASSETS_DIR}/{name}",
                              "mimeType": "audio/wav"},
                }]

            try:
                error = _append_error(append_built(session, build, timeout=timeout, engine=engine))
            except BaseException:
                _discard(fd, assets_fd, name)
                raise
            if error is not None:
                # Nothing references the file (recording.started is not committed): remove it.
                _discard(fd, assets_fd, name)
                raise error
    finally:
        os.close(session_fd)
    capture = Capture(secrets.token_urlsafe(24), session, session_identity, recording_id, fd,
                      rate, channels)
    with _registry_guard:
        _captures[capture.handle] = capture
    return capture, {
        "handle": capture.handle,
        "recordingId": recording_id,
        "started": entry_id,
        "asset": {"status": "available", "path": f"{ASSETS_DIR}/{name}",
                  "mimeType": "audio/wav"},
    }


def _check_capture_args(recording_id: str, leaf: LeafSelector, rate: int, channels: int) -> None:
    if leaf.kind == "default":
        raise UsageError(Code.USAGE, "a capture needs an explicit leaf (an entry id, or null)")
    if _ID.fullmatch(recording_id) is None:
        raise UsageError(Code.USAGE, "the recording id is not an Id")
    if rate not in _wav.CAPTURE_RATES or channels not in _wav.CAPTURE_CHANNELS:
        raise UsageError(Code.USAGE, "the rate or channel count is not one a capture writes")


def _create_locked_wav(assets_fd: int, name: str, rate: int, channels: int) -> int:
    """The new WAV, under its asset lock, holding its header, fsynced with its directory; on any
    failure the file is discarded."""
    fd = _create_wav(assets_fd, name)
    try:
        try_asset_lock(fd)
        _fsutil.write_all(fd, _wav.capture_header(rate, channels))
        os.fsync(fd)
        os.fsync(assets_fd)
    except OSError:
        _discard(fd, assets_fd, name)
        # APP-19: a failed write or fsync is IO_FAILED (a full disk, a file size limit).
        raise _fail(Code.IO_FAILED, "writing the WAV header failed") from None
    except BaseException:
        _discard(fd, assets_fd, name)
        raise
    return fd


def _create_wav(assets_fd: int, name: str) -> int:
    try:
        return os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644,
                       dir_fd=assets_fd)
    except FileExistsError:
        raise _fail(Code.ASSET_EXISTS, "exclusive creation found the asset's name taken") from None


def _discard(fd: int, assets_fd: int, name: str) -> None:
    """Remove a WAV this capture created and nothing references yet (still holding its lock,
    and only if the name still holds it)."""
    with contextlib.suppress(OSError, ContractError):
        revalidate(fd, assets_fd, name)
        os.unlink(name, dir_fd=assets_fd)
    with contextlib.suppress(OSError):
        os.close(fd)


def write_frames(capture: Capture, pcm: bytes) -> dict[str, Any]:
    """Append whole frames at the end of the data (CAP-21); a partial frame waits for its rest."""
    with capture.lock:
        data = capture.carry + pcm
        whole = len(data) - len(data) % capture.frame_size
        capture.carry = data[whole:]
        if capture.failed_frames:
            capture.failed_frames += whole // capture.frame_size
            raise _fail(Code.IO_FAILED, "the capture stopped after a failed write")
        offset = _wav.HEADER_SIZE + capture.frames * capture.frame_size
        try:
            view = memoryview(data)[:whole]
            while view:
                written = os.pwrite(capture.fd, view, offset)
                if written <= 0:
                    raise OSError(errno.ENOSPC, "write made no progress")
                capture.frames += written // capture.frame_size
                view, offset = view[written:], offset + written
        except OSError:
            # CAP-12: halt visibly; what was not written is counted, the outcome is incomplete.
            capture.failed_frames += len(view) // capture.frame_size
            raise _fail(Code.IO_FAILED, "writing audio frames failed") from None
        return {"frames": capture.frames,
                "durationMs": _wav.duration_ms(capture.frames, capture.rate)}


def gaps_arg(value: Any) -> list[dict[str, Any]]:
    """Reported gaps (ENT-16): ``[{"startMs", "endMs", "reason"?}]`` with 0 <= start < end."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise UsageError(Code.USAGE, "the argument 'gaps' must be an array")
    gaps = []
    for gap in value:
        ok = (isinstance(gap, dict) and {"startMs", "endMs"} <= gap.keys() <= {
            "startMs", "endMs", "reason"}
            and all(isinstance(gap[k], int) and not isinstance(gap[k], bool)
                    for k in ("startMs", "endMs"))
            and 0 <= gap["startMs"] < gap["endMs"]
            and isinstance(gap.get("reason", ""), str))
        if not ok:
            raise UsageError(Code.USAGE, "a gap must be {startMs, endMs, reason?} with "
                             "integers 0 <= startMs < endMs")
        gaps.append(dict(gap))
    return gaps


def finish_capture(
    capture: Capture,
    *,
    gaps: Sequence[dict[str, Any]] = (),
    incomplete: bool = False,
    id: str | None = None,
    timestamp: str | None = None,
    timeout: float | None = None,
    engine: Engine = READABLE_ENGINE,
) -> dict[str, Any]:
    """CAP-22: revalidate, write the real sizes, fsync, append ``recording.finished``, unlock."""
    with capture.lock:
        data_size = capture.frames * capture.frame_size
        duration = _wav.duration_ms(capture.frames, capture.rate)
        reported = list(gaps)
        if capture.failed_frames:
            lost = _wav.duration_ms(capture.frames + capture.failed_frames, capture.rate)
            if lost > duration:
                reported.append({"startMs": duration, "endMs": lost, "reason": "write-failed"})
        if any(gap["endMs"] > max(duration, 1) for gap in gaps):
            raise UsageError(Code.USAGE, "a reported gap ends after the recording")
        with _closing(open_session_dir(capture.session)) as session_fd, \
                _closing(open_assets_dir(session_fd)) as assets_fd:
            revalidate(capture.fd, assets_fd, capture.name)  # AST-19
            try:
                os.pwrite(capture.fd, (data_size + 36).to_bytes(4, "little"),
                          _wav.RIFF_SIZE_OFFSET)
                os.pwrite(capture.fd, data_size.to_bytes(4, "little"), _wav.DATA_SIZE_OFFSET)
                os.fsync(capture.fd)
            except OSError:
                raise _fail(Code.IO_FAILED, "writing the WAV sizes failed") from None
        # RT-20: an uncertain removal ends the recording incomplete even without a gap.
        outcome = "incomplete" if reported or incomplete else "complete"
        entry_id = id or str(uuid.uuid4())
        record_time = timestamp or now_timestamp()

        def build(builder: IndexBuilder) -> list[dict[str, Any]]:
            if builder.recording_ended(capture.recording_id):
                raise _fail(Code.RECORDING_ALREADY_ENDED, "the recording already ended")
            record: dict[str, Any] = {
                "type": "recording.finished", "id": entry_id,
                "parentId": builder.last_entry_id, "timestamp": record_time,
                "recordingId": capture.recording_id, "durationMs": duration, "outcome": outcome,
            }
            if reported:
                record["gaps"] = reported
            return [record]

        # The handle stays valid if the append fails (a held session lock): finish can be retried.
        error = _append_error(append_built(capture.session, build, timeout=timeout, engine=engine))
        if error is not None:
            raise error
        _revoke(capture)
    return {"recordingId": capture.recording_id, "finished": entry_id,
            "frames": capture.frames, "durationMs": duration, "outcome": outcome}


def stop_captures_of(session_identity: tuple[int, int]) -> int:
    """CAP-9: stop this process's captures of one session and revoke their handles (their WAV
    sizes are made true first; the session is about to go). Returns how many were stopped."""
    with _registry_guard:
        mine = [c for c in _captures.values() if c.session_identity == session_identity]
    for capture in mine:
        with capture.lock, contextlib.suppress(OSError):
            size = capture.frames * capture.frame_size
            os.pwrite(capture.fd, (size + 36).to_bytes(4, "little"), _wav.RIFF_SIZE_OFFSET)
            os.pwrite(capture.fd, size.to_bytes(4, "little"), _wav.DATA_SIZE_OFFSET)
        _revoke(capture)
    return len(mine)


def release_capture(capture: Capture) -> None:
    """Forget one capture as a killed process would: its descriptor closed (the kernel frees the
    asset lock), nothing more written; its WAV is left for interrupted-WAV recovery."""
    _revoke(capture)


def abandon_captures() -> None:
    """Forget every capture as a killed process would: close the descriptors (the kernel frees
    the asset locks), write nothing more. The in-process conformance adapter calls this where a
    subprocess adapter's process group would be killed."""
    with _registry_guard:
        every = list(_captures.values())
        _captures.clear()
    for capture in every:
        with contextlib.suppress(OSError):
            os.close(capture.fd)


# --- interrupted-WAV recovery (CAP-5..CAP-7, CAP-23..CAP-27) -----------------------------------


def recover_recording(
    session: str,
    recording_id: str,
    *,
    id: str | None = None,
    timestamp: str | None = None,
    timeout: float | None = None,
    engine: Engine = READABLE_ENGINE,
) -> dict[str, Any]:
    """Make the WAV of ``recording_id`` readable and end the recording if nothing ended it."""
    opened = open_session(session, engine=engine)
    if not opened.index.valid:
        line = opened.index.diagnostics[0].line if opened.index.diagnostics else None
        raise ContractError([Diagnostic(
            Code.SESSION_BLOCKED, line=line,
            detail="the committed session is invalid; nothing was written")])
    if recording_id not in opened.index.recordings:
        raise _fail(Code.RECORDING_UNKNOWN, "the session has no recording.started of that id")
    name = f"{recording_id}.wav"
    with _closing(open_session_dir(session)) as session_fd:
        try:
            assets_fd = open_assets_dir(session_fd)
        except ContractError as error:
            if error.code is Code.ASSET_NOT_FOUND:
                raise not_found("the recording's WAV does not exist") from None
            raise
        with _closing(assets_fd), _closing(open_asset(assets_fd, name, os.O_RDWR)) as fd:
            try_asset_lock(fd)  # CAP-27: never waited for; a live capture is ASSET_LOCKED
            rate, plan = _repair_wav(fd, assets_fd, name)
            entry_id = id or str(uuid.uuid4())
            record_time = timestamp or now_timestamp()
            appended: list[str] = []

            def build(builder: IndexBuilder) -> list[dict[str, Any]]:
                if builder.recording_ended(recording_id) is not False:
                    return []
                appended.append(entry_id)
                return [{
                    "type": "recording.interrupted", "id": entry_id,
                    "parentId": builder.last_entry_id, "timestamp": record_time,
                    "recordingId": recording_id, "reason": "capture-interrupted",
                    "durationMs": _wav.duration_ms(plan.frames, rate),
                }]

            # Asset lock first, then the session lock (CAP-4); the asset lock is released when
            # the descriptor closes, after the append.
            failure = _append_error(append_built(session, build, timeout=timeout, engine=engine))
            if failure is not None:
                raise failure
    changed = plan.changes or bool(appended)
    return {
        "action": "recovered" if changed else "none",
        "frames": plan.frames,
        "interrupted": appended[0] if appended else None,
    }


def _reader(fd: int) -> Any:
    return lambda offset, size: os.pread(fd, size, offset)


def _repair_wav(fd: int, assets_fd: int, name: str) -> tuple[int, _wav.RecoveryPlan]:
    """CAP-24, CAP-25: cut a partial frame, write the data size, pad, write the RIFF size,
    fsync; identity first. In this order a run killed between two writes and run again ends
    in the same bytes (the data size is written before the pad byte that it does not count)."""
    size = os.fstat(fd).st_size  # the held descriptor's size, never one seen earlier
    layout = _wav.parse_layout(_reader(fd), size)
    plan = _wav.plan_recovery(layout, size)
    if not plan.changes:
        return layout.rate, plan
    revalidate(fd, assets_fd, name)  # AST-19: before recovery writes
    try:
        if plan.truncate_to is not None:
            os.ftruncate(fd, plan.truncate_to)
        if plan.rewrite_data_size:
            os.pwrite(fd, plan.data_size.to_bytes(4, "little"), layout.data_size_field)
        if plan.pad:
            os.pwrite(fd, b"\0", layout.data_offset + plan.data_size)
        if plan.rewrite_riff_size:
            os.pwrite(fd, plan.riff_size.to_bytes(4, "little"), _wav.RIFF_SIZE_OFFSET)
        os.fsync(fd)
    except OSError:
        raise _fail(Code.IO_FAILED, "repairing the WAV failed") from None
    return layout.rate, plan


__all__ += ["gaps_arg", "refused", "try_asset_lock"]
