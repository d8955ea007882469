"""The I/O edge of a replay: write media, run the capture, append the evidence records.

Each record is appended and fsynced on its own (APP-8), chained onto the previous one from the
caller's explicit leaf, as a capture appends each observation when it happens. Media bytes are
written and fsynced before the record that names them (RT-7): a range of the capture WAV when
its bytes there are identical (RT-8), else a ``protocol-<uuid>.bin`` asset (RT-10). The planner
(``_replay``) decides what to do; this module does it. A failed append halts the replay
(CAP-12): the result says so, and nothing after it is written.
"""

from __future__ import annotations

import os
import stat
import uuid
from dataclasses import dataclass, field
from typing import Any

from ._append import AppendResult, append_records, items_from_objects
from ._assets import ASSETS_DIR, write_protocol_asset
from ._capture import Capture, finish_capture, release_capture, start_capture, write_frames
from ._context import LeafSelector
from ._errors import Code, ContractError, UsageError
from ._replay import (
    CaptureFrames,
    Halt,
    MediaPlan,
    PlannedRecord,
    StopCapture,
    parse_script,
    plan_replay,
    timestamp_at,
)

__all__ = ["MAX_SCRIPT_BYTES", "ReplayResult", "read_script_file", "replay"]

# A script is read whole; past this size it is refused rather than read into memory.
MAX_SCRIPT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a replay appended, the assets it wrote, and where and why it halted."""

    appended: tuple[str, ...]
    evidence: int  # realtime_event records appended
    connections: int  # api_connection records appended
    media: int  # media references in the appended records
    assets: tuple[str, ...]  # protocol assets written (RT-10)
    not_replayed: int  # local lines other than stop, and audio lines without a recording
    halted: Halt | None

    def to_json(self) -> dict[str, Any]:
        return {
            "appended": list(self.appended),
            "evidence": self.evidence,
            "connections": self.connections,
            "media": self.media,
            "assets": list(self.assets),
            "notReplayed": self.not_replayed,
            "halted": None if self.halted is None else {
                "code": self.halted.code, "line": self.halted.line},
        }


def read_script_file(name: str) -> bytes:
    """The bytes of a script file: a regular file, opened without blocking (a FIFO with no
    writer never hangs the replay), at most MAX_SCRIPT_BYTES; otherwise PATH_NOT_FOUND."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        raise UsageError(Code.PATH_NOT_FOUND, "the script file cannot be opened") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCRIPT_BYTES:
            raise UsageError(Code.PATH_NOT_FOUND, "the script is not a regular file of at most "
                                                  f"{MAX_SCRIPT_BYTES} bytes")
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, "the script file cannot be read") from None
    finally:
        os.close(fd)


@dataclass
class _Run:
    """One replay in progress: where the chain is, what was written."""

    session: str
    start: str
    timeout: float | None
    parent: str | None
    selector: LeafSelector
    capture: Capture | None = None
    appended: list[str] = field(default_factory=list)
    assets: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {
        "api_connection": 0, "realtime_event": 0, "media": 0})

    def chain(self, entry_id: str) -> None:
        self.appended.append(entry_id)
        self.parent, self.selector = entry_id, LeafSelector.explicit(entry_id)

    def media_reference(self, plan: MediaPlan) -> dict[str, Any]:
        """RT-6..RT-8, RT-10: the asset holding ``plan``'s bytes, written and fsynced."""
        encoding = "base64"  # the payload carried the bytes as base64 at plan.pointer (RT-6)
        if plan.wav_range is not None and self.capture is not None:
            start, end = plan.wav_range
            os.fsync(self.capture.fd)  # RT-7: the capture's bytes are durable first
            if os.pread(self.capture.fd, end - start, start) == plan.data:  # RT-8
                return {"status": "available", "path": f"{ASSETS_DIR}/{self.capture.name}",
                        "mimeType": "audio/wav", "byteRange": {"start": start, "end": end},
                        "encoding": encoding}
        reference = write_protocol_asset(self.session, plan.data, plan.mime_type)
        self.assets.append(str(reference["path"]))
        return {**reference, "byteRange": {"start": 0, "end": len(plan.data)},
                "encoding": encoding}

    def append(self, planned: PlannedRecord) -> Halt | None:
        record: dict[str, Any] = {
            "type": planned.record["type"], "id": str(uuid.uuid4()), "parentId": self.parent,
            "timestamp": timestamp_at(self.start, planned.at), **planned.record,
        }
        if planned.media:
            record["media"] = [{"pointer": plan.pointer, "asset": self.media_reference(plan)}
                               for plan in planned.media]
        if planned.fails is not None:
            return Halt(Code.IO_FAILED, planned.fails)  # CAP-12, after its media (RT-7)
        try:
            result = append_records(self.session, items_from_objects([record]),
                                    leaf=self.selector, timeout=self.timeout)
        except ContractError as error:  # the lock could not be had
            result = AppendResult(error=error.diagnostics[0])
        if result.error is not None:
            return Halt(result.error.code, planned.line)  # CAP-12: capture halts visibly
        self.chain(record["id"])
        self.counts[str(record["type"])] += 1
        self.counts["media"] += len(planned.media)
        return None

    def step(self, step: PlannedRecord | CaptureFrames | StopCapture) -> Halt | None:
        try:
            if isinstance(step, CaptureFrames):
                if self.capture is not None:
                    write_frames(self.capture, step.data)
                return None
            if isinstance(step, StopCapture):
                if self.capture is not None:
                    finished = finish_capture(self.capture, timeout=self.timeout)
                    self.capture = None
                    self.chain(str(finished["finished"]))
                return None
            return self.append(step)
        except ContractError as error:
            return Halt(error.code, getattr(step, "line", 0))


def replay(
    session: str,
    script: bytes,
    leaf: LeafSelector,
    start: str,
    *,
    recording: str | None = None,
    timeout: float | None = None,
) -> ReplayResult:
    """Play ``script`` into ``session`` from the explicit ``leaf`` (an id or null); the virtual
    clock starts at ``start`` (RT-35). With ``recording``, a capture of that id runs beside the
    connection: ``recording.started`` first, the script's audio lines as its frames, and
    ``recording.finished`` at its stop."""
    if leaf.kind == "default":
        raise UsageError(Code.USAGE, "replay needs an explicit leaf (an entry id, or null)")
    lines = parse_script(script)
    run = _Run(session, start, timeout, leaf.id if leaf.kind == "id" else None, leaf)
    halted: Halt | None = None
    if recording is not None:
        run.capture, started = start_capture(session, recording, leaf=leaf, timeout=timeout,
                                             timestamp=start)
        run.chain(str(started["started"]))
    try:
        for step in plan_replay(lines, start, recording=recording is not None):
            halted = run.step(step)
            if halted is not None:
                break
    finally:
        if run.capture is not None:
            # Halted: persistence failed, so nothing more is written; the WAV keeps its
            # placeholder sizes and its lock is released, as when a capture process dies, and
            # interrupted-WAV recovery finishes it later (CAP-5..CAP-7).
            release_capture(run.capture)
    skipped = {"audio"} if recording is None else set()
    return ReplayResult(
        appended=tuple(run.appended),
        evidence=run.counts["realtime_event"],
        connections=run.counts["api_connection"],
        media=run.counts["media"],
        assets=tuple(run.assets),
        not_replayed=sum(
            1 for line in lines
            if line.kind in skipped or (line.kind == "local" and line.body.get("local") != "stop")
        ),
        halted=halted,
    )
