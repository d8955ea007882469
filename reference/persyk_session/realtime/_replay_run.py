"""The I/O edge of a replay: write media, run the capture, append the evidence records.

Each record is appended and fsynced on its own (APP-8), chained onto the previous one from the
caller's explicit leaf, as a capture appends each observation when it happens. Media bytes are
written and fsynced before the record that names them (RT-7): a range of the capture WAV when
its bytes there are identical (RT-8), else a ``protocol-<uuid>.bin`` asset (RT-10). The planner
(``_replay_plan``) decides what to do; this module does it. A failed append halts the replay
(CAP-12): the result says so, and nothing after it is written.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._errors import Code, ContractError, Diagnostic, UsageError, io_failures
from ..media._assets import ASSETS_DIR, write_protocol_asset
from ..media._capture import Capture, finish_capture, release_capture, start_capture, write_frames
from ..media._wav import duration_ms
from ..read._context import LeafSelector
from ..read._engine import READABLE_ENGINE, Engine
from ..write._append import AppendResult, append_records, items_from_objects
from ._evidence import (
    CaptureFrames,
    Halt,
    MediaPlan,
    PlannedRecord,
    ScriptLine,
    StopCapture,
    parse_script,
    timestamp_at,
)
from ._ordering_model import Gap
from ._ordering_restart import restart_report
from ._replay_plan import Copy, DriveStep, Publish, ReplayDriver, Unpublish
from ._replay_records import located_gaps, message_record, ordering_report, removal_record

__all__ = ["MAX_SCRIPT_BYTES", "ReplayResult", "read_script_file", "replay"]

# A script is read whole; past this size it is refused rather than read into memory.
MAX_SCRIPT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a replay appended, the assets it wrote, where and why it halted, and what the
    ordering engine published, closed and left unsaved (RT-12..RT-28, CAP-11..CAP-16)."""

    appended: tuple[str, ...]
    evidence: int  # realtime_event records appended
    connections: int  # api_connection records appended
    media: int  # media references in the appended records
    assets: tuple[str, ...]  # protocol assets written (RT-10)
    not_replayed: int  # audio lines without a recording
    halted: Halt | None
    ordering: dict[str, Any] = field(default_factory=dict)  # _replay_records.ordering_report

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
            **self.ordering,
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
    """One replay in progress: where the chain is, what was written and published."""

    session: str
    start: str
    timeout: float | None
    parent: str | None
    selector: LeafSelector
    capture: Capture | None = None
    engine: Engine = READABLE_ENGINE
    appended: list[str] = field(default_factory=list)
    assets: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {
        "api_connection": 0, "realtime_event": 0, "media": 0})
    messages: dict[str, str] = field(default_factory=dict)  # provider item -> message entry
    published: list[dict[str, str]] = field(default_factory=list)
    removed: list[dict[str, str]] = field(default_factory=list)
    copies: list[dict[str, Any]] = field(default_factory=list)

    def chain(self, entry_id: str) -> None:
        self.appended.append(entry_id)
        self.parent, self.selector = entry_id, LeafSelector.explicit(entry_id)

    def media_reference(self, plan: MediaPlan) -> dict[str, Any]:
        """RT-6..RT-8, RT-10: the asset holding ``plan``'s bytes, written and fsynced."""
        encoding = "base64"  # the payload carried the bytes as base64 at plan.pointer (RT-6)
        if plan.wav_range is not None and self.capture is not None:
            start, end = plan.wav_range
            with io_failures("syncing the capture WAV failed"):  # APP-19: halts (CAP-12)
                os.fsync(self.capture.fd)  # RT-7: the capture's bytes are durable first
                same = os.pread(self.capture.fd, end - start, start) == plan.data
            if same:  # RT-8
                return {"status": "available", "path": f"{ASSETS_DIR}/{self.capture.name}",
                        "mimeType": "audio/wav", "byteRange": {"start": start, "end": end},
                        "encoding": encoding}
        reference = write_protocol_asset(self.session, plan.data, plan.mime_type)
        self.assets.append(str(reference["path"]))
        return {**reference, "byteRange": {"start": 0, "end": len(plan.data)},
                "encoding": encoding}

    def write(self, record: dict[str, Any], line: int) -> Halt | None:
        """Append one record on the chain, fsynced (APP-8); a failure halts (CAP-12)."""
        try:
            result = append_records(self.session,
                                    items_from_objects([record], engine=self.engine),
                                    leaf=self.selector, timeout=self.timeout,
                                    engine=self.engine)
        except ContractError as error:  # the lock could not be had
            result = AppendResult(error=error.diagnostics[0])
        if result.error is not None:
            return Halt(result.error.code, line)  # CAP-12: capture halts visibly
        self.chain(record["id"])
        return None

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
        halted = self.write(record, planned.line)
        if halted is None:
            self.counts[str(record["type"])] += 1
            self.counts["media"] += len(planned.media)
        return halted

    def publish(self, step: Publish) -> Halt | None:
        """RT-12, RT-15: the canonical message, once its turn in predecessor order came."""
        if step.fails is not None:
            return Halt(Code.IO_FAILED, step.fails)
        record = message_record(step.effect, self.start, self.parent)
        halted = self.write(record, step.line)
        if halted is None:
            self.messages[step.effect.item] = record["id"]
            self.published.append({"item": step.effect.item, "role": step.effect.role,
                                   "id": record["id"]})
        return halted

    def unpublish(self, item: str, at: int, line: int, fails: int | None) -> Halt | None:
        """RT-18, RT-22: ``message.removed`` after the provider acknowledged the delete."""
        if fails is not None:
            return Halt(Code.IO_FAILED, fails)  # RT-22: the acknowledgement is the kept intent
        record = removal_record(self.messages[item], timestamp_at(self.start, at), self.parent)
        halted = self.write(record, line)
        if halted is None:
            self.removed.append({"item": item, "id": record["id"]})
        return halted

    def finish(self, step: StopCapture) -> None:
        """CAP-15: finish the same recording, with the gaps located in its audio."""
        if self.capture is None:
            return
        duration = duration_ms(self.capture.frames, self.capture.rate)
        gaps = [gap for gap in step.gaps if isinstance(gap, Gap)]
        finished = finish_capture(self.capture, gaps=located_gaps(gaps, duration),
                                  incomplete=step.incomplete, timeout=self.timeout,
                                  engine=self.engine)
        self.capture = None
        self.chain(str(finished["finished"]))

    def step(self, step: DriveStep) -> Halt | None:
        try:
            if isinstance(step, CaptureFrames):
                if self.capture is not None:
                    write_frames(self.capture, step.data)
                return None
            if isinstance(step, StopCapture):
                self.finish(step)
                return None
            if isinstance(step, Halt):
                return step
            if isinstance(step, Publish):
                return self.publish(step)
            if isinstance(step, Unpublish):
                return self.unpublish(step.effect.item, step.effect.at, step.line, step.fails)
            if isinstance(step, Copy):  # RT-26: its failure has no bearing on saving
                self.copies.append({"items": list(step.effect.items), "ok": step.fails is None})
                return None
            return self.append(step)
        except ContractError as error:
            return Halt(error.code, getattr(step, "line", 0))


def _restart(run: _Run, prior: list[dict[str, Any]]) -> list[dict[str, str]]:
    """CAP-16, RT-22: report the unfinished work of earlier captures; apply acknowledged
    removals that were never saved, without sending their delete again."""
    report = restart_report(prior)
    for item, target in report.apply:
        run.messages[item] = target
        halted = run.unpublish(item, 0, 0, None)
        if halted is not None:
            raise ContractError([Diagnostic(Code(halted.code),
                                            detail="the kept removal could not be appended")])
    return [work.to_json() for work in report.unfinished]


def _steps(driver: ReplayDriver, lines: list[ScriptLine]) -> Iterator[DriveStep]:
    for line in lines:
        yield from driver.feed(line)
    yield from driver.end()


def replay(
    session: str,
    script: bytes,
    leaf: LeafSelector,
    start: str,
    *,
    recording: str | None = None,
    timeout: float | None = None,
    prior: list[dict[str, Any]] | None = None,
    engine: Engine = READABLE_ENGINE,
) -> ReplayResult:
    """Play ``script`` into ``session`` from the explicit ``leaf`` (an id or null); the virtual
    clock starts at ``start`` (RT-35). With ``recording``, a capture of that id runs beside the
    connection: ``recording.started`` first, the script's audio lines as its frames, and
    ``recording.finished`` once the ordering engine closed the conversation (CAP-15).
    ``prior``: the records of the leaf's ancestry, for the restart report (CAP-16)."""
    if leaf.kind == "default":
        raise UsageError(Code.USAGE, "replay needs an explicit leaf (an entry id, or null)")
    lines = parse_script(script)
    run = _Run(session, start, timeout, leaf.id if leaf.kind == "id" else None, leaf,
               engine=engine)
    unfinished = _restart(run, prior or [])
    halted: Halt | None = None
    if recording is not None:
        run.capture, started = start_capture(session, recording, leaf=run.selector,
                                             timeout=timeout, timestamp=start, engine=engine)
        run.chain(str(started["started"]))
    driver = ReplayDriver(start, recording is not None)
    try:
        for step in _steps(driver, lines):
            halted = run.step(step)
            if halted is not None:
                driver.halt()
                break
    finally:
        if run.capture is not None:
            # Halted: persistence failed, so nothing more is written; the WAV keeps its
            # placeholder sizes and its lock is released, as when a capture process dies, and
            # interrupted-WAV recovery finishes it later (CAP-5..CAP-7).
            release_capture(run.capture)
    return ReplayResult(
        appended=tuple(run.appended),
        evidence=run.counts["realtime_event"],
        connections=run.counts["api_connection"],
        media=run.counts["media"],
        assets=tuple(run.assets),
        not_replayed=sum(1 for line in lines if recording is None and line.kind == "audio"),
        halted=halted,
        ordering=ordering_report(driver, run.published, run.removed, run.copies, unfinished),
    )
