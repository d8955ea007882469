"""A replay's plan: a script's lines through the evidence planner (``_evidence``), the ordering
engine (``_ordering``) and the observation queue (``_ordering_queue``), on the script's virtual
clock. Sans-IO: it returns the steps the I/O edge (``_replay_run``) performs, in order.

For each line, timers due before it fire first (``advance``), then the line's evidence is
planned (RT-3), then the line is given to the engine, whose effects become steps after it. At
the end of the script, a capture still running is stopped there and the virtual clock runs on
until the engine has closed the conversation (CAP-14), and a stalled writer settles.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from .._errors import Code
from ._evidence import CaptureFrames, Halt, PlannedRecord, ScriptLine, StopCapture, _Planner
from ._ordering import OrderingEngine
from ._ordering_model import (
    CopyText,
    Effect,
    FinishRecording,
    PublishMessage,
    RemoveMessage,
    SendEvent,
)
from ._ordering_queue import ObservationQueue

__all__ = ["Copy", "DriveStep", "Publish", "ReplayDriver", "Unpublish", "drive"]


@dataclass(frozen=True, slots=True)
class Publish:
    """Append the canonical message of ``effect`` (RT-12); ``fails``: a fault's line."""

    line: int
    effect: PublishMessage
    fails: int | None = None


@dataclass(frozen=True, slots=True)
class Unpublish:
    """Append ``message.removed`` for ``effect.item`` (RT-18)."""

    line: int
    effect: RemoveMessage
    fails: int | None = None


@dataclass(frozen=True, slots=True)
class Copy:
    """Copy surviving canonical text (RT-26); ``fails``: the clipboard refuses it."""

    line: int
    effect: CopyText
    fails: int | None = None


DriveStep = PlannedRecord | CaptureFrames | StopCapture | Publish | Unpublish | Copy | Halt
# Which fault line makes which step fail (docs/implementers/realtime.md).
_FAULTS: dict[type, tuple[str, ...]] = {
    PlannedRecord: ("persistence",),
    Publish: ("persistence", "publication"),
    Unpublish: ("persistence", "publication"),
    Copy: ("clipboard",),
}


@dataclass
class ReplayDriver:
    """The state of one replay besides the engine's: faults armed, the queue, the last line."""

    start: str
    recording: bool
    engine: OrderingEngine = field(default_factory=OrderingEngine)
    queue: ObservationQueue[DriveStep] = field(default_factory=ObservationQueue)
    faults: dict[str, int] = field(default_factory=dict)
    sizes: dict[int, int] = field(default_factory=dict)  # waiting input chunks (RT-9)
    halted: bool = False
    last: tuple[int, int] = (0, 0)  # (line, at) of the last line fed
    planner: _Planner = field(init=False)

    def __post_init__(self) -> None:
        self.planner = _Planner(self.start, self.recording)

    def feed(self, line: ScriptLine) -> list[DriveStep]:
        """The steps of one script line, after the timers due before it."""
        out: list[DriveStep] = []
        if self.halted:
            return out
        self.last = (line.line, line.at)
        self._effects(line.line, self.engine.advance(line.at), out)
        _KIND_HANDLERS[line.kind](self, line, out)
        return out

    def end(self) -> list[DriveStep]:
        """The end of the script: stop, let the virtual clock run out the drain, settle."""
        out: list[DriveStep] = []
        if self.halted:
            return out
        number, at = self.last
        if self.engine.phase == "capturing":
            self._records(self.planner.stop(number), out)
            self._effects(number, self.engine.stop(at, "end"), out)
        while not self.halted and (due := self.engine.next_deadline()) is not None:
            self._effects(number, self.engine.advance(due), out)
        if not self.halted:
            out.extend(self.queue.resume())  # CAP-14: file system work settles
        return out

    # --- lines ----------------------------------------------------------------------------

    def _open(self, line: ScriptLine, out: list[DriveStep]) -> None:
        self._emit(self.planner.open(line), line.size, out)

    def _direction(self, line: ScriptLine, out: list[DriveStep]) -> None:
        records = list(self.planner.observe(line))
        if not records:
            self.sizes[line.line] = line.size  # RT-9: waits for the capture
        for record in records:
            self._emit(record, line.size, out)
        connection, event = line.body["connection"], line.body["event"]
        if line.body["direction"] == "received":
            self._effects(line.line, self.engine.received(line.at, connection, event), out)
        elif line.body["direction"] == "send_attempt":
            self._effects(line.line, self.engine.sent(line.at, connection, event), out)
        else:
            self._effects(line.line, self.engine.send_failed(line.at, connection, event), out)

    def _audio(self, line: ScriptLine, out: list[DriveStep]) -> None:
        self._records(self.planner.captured(line), out)

    def _local(self, line: ScriptLine, out: list[DriveStep]) -> None:
        command = line.body["local"]
        if command == "stop":
            self._records(self.planner.stop(line.line), out)  # the microphone stops now
            self._effects(line.line, self.engine.stop(line.at), out)
        elif command == "remove":
            item = line.body["message"]
            event_id = line.body.get("eventId")
            if not isinstance(event_id, str):
                event_id = f"persyk-remove-{line.line}"
            self._effects(line.line, self.engine.remove(line.at, item, event_id), out)
        else:
            self._effects(line.line, self.engine.copy(line.at), out)

    def _fault(self, line: ScriptLine, out: list[DriveStep]) -> None:
        self.faults[line.body["fault"]] = line.line

    def _disk(self, line: ScriptLine, out: list[DriveStep]) -> None:
        if line.body["disk"] == "stall":
            self.queue.stall()
        else:
            out.extend(self.queue.resume())

    def _clock(self, line: ScriptLine, out: list[DriveStep]) -> None:
        """Time passed (the timers were fired by ``feed``); nothing else happens."""

    # --- steps ----------------------------------------------------------------------------

    def _records(self, steps: Iterable[PlannedRecord | CaptureFrames | StopCapture],
                 out: list[DriveStep]) -> None:
        for step in steps:
            if isinstance(step, PlannedRecord):
                self._emit(step, self.sizes.pop(step.line, 0), out)
            elif isinstance(step, CaptureFrames):
                self._emit(step, None, out)
            # a StopCapture waits for the engine to close the conversation (CAP-15)

    def _effects(self, number: int, effects: Sequence[Effect], out: list[DriveStep]) -> None:
        for effect in effects:
            if isinstance(effect, PublishMessage):
                self._emit(Publish(number, effect), None, out)
            elif isinstance(effect, RemoveMessage):
                self._emit(Unpublish(number, effect), None, out)
            elif isinstance(effect, CopyText):
                self._emit(Copy(number, effect), None, out)
            elif isinstance(effect, SendEvent):
                self._send(number, effect, out)
            elif isinstance(effect, FinishRecording):
                self._records(self.planner.stop(number), out)
                if self.recording:
                    self._emit(StopCapture(number, effect.gaps, effect.incomplete), None, out)

    def _send(self, number: int, effect: SendEvent, out: list[DriveStep]) -> None:
        """RT-4, RT-37: a client event the engine sends is observed as a send attempt."""
        body = {"at": effect.at, "connection": effect.connection, "direction": "send_attempt",
                "event": dict(effect.event)}
        size = len(json.dumps(body))
        line = ScriptLine(number, effect.at, "direction", body, size)
        for record in self.planner.observe(line):
            self._emit(record, size, out)

    def _emit(self, step: DriveStep, size: int | None, out: list[DriveStep]) -> None:
        """Arm a pending fault on the step it concerns, then queue it (CAP-11, CAP-12)."""
        if self.halted:
            return
        for fault in _FAULTS.get(type(step), ()):
            if fault in self.faults:
                step = dataclasses.replace(cast(Any, step), fails=self.faults.pop(fault))
                break
        ready = self.queue.offer(step, size)
        if ready is None:  # CAP-12: backpressure halts capture visibly; what was queued settles
            out.extend(self.queue.resume())
            out.append(Halt(Code.CAPTURE_BACKPRESSURE, step_line(step)))
            self.halt()
            return
        out.extend(ready)

    def halt(self) -> None:
        """Capture halted (CAP-12): nothing more is planned."""
        self.halted = True
        self.engine.halt()


def step_line(step: DriveStep) -> int:
    return step.line


_KIND_HANDLERS = {
    "open": ReplayDriver._open,
    "direction": ReplayDriver._direction,
    "audio": ReplayDriver._audio,
    "local": ReplayDriver._local,
    "fault": ReplayDriver._fault,
    "disk": ReplayDriver._disk,
    "clock": ReplayDriver._clock,
}


def drive(lines: Sequence[ScriptLine], start: str, *, recording: bool = False
          ) -> tuple[ReplayDriver, list[DriveStep]]:
    """Every step of a script at once (tests and benchmarks; the I/O edge feeds line by line)."""
    driver = ReplayDriver(start, recording)
    steps: list[DriveStep] = []
    for line in lines:
        steps.extend(driver.feed(line))
    steps.extend(driver.end())
    return driver, steps
