"""Replaying a provider-event script into evidence records (RT-3..RT-5, RT-34..RT-37). Sans-IO.

A script (docs/implementers/realtime.md, ``schemas/realtime/script-line.schema.json``) is JSON
Lines, one line per thing that happens, each at a virtual time ``at`` (milliseconds from the
replay's start):

* ``{"at", "connection", "open": {"provider", "endpoint", "model", "api"}}``: a connection opens;
* ``{"at", "connection", "direction": "received"|"send_attempt"|"send_failed", "event": {...}}``:
  one observation of a provider event (received) or of a client event (attempted or failed);
* ``{"at", "audio": {"pcm16_b64": "..."}}``: frames the local capture wrote;
* ``{"at", "local": "stop"|"remove"|"copy", ...}``: a local command (``remove`` names the
  provider item of a published message, ``message``, and optionally the delete's ``eventId``);
* ``{"at", "clock": "tick"}``: time passes, nothing happens (timers may fire);
* ``{"at", "disk": "stall"|"resume"}``: the writer blocks, or runs again (CAP-11);
* ``{"at", "fault": "persistence"|"publication"|"clipboard"}``: the next append (of any record,
  or of a message or removal) fails, or the next copy fails.

:func:`plan_replay` turns the script into the records to append, in order, each without the
envelope members (``id``, ``parentId``, ``timestamp``) that the I/O edge gives it when it
appends. Everything a record takes from the provider is sanitized first (RT-1).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from .._errors import Code, UsageError
from ..media._wav import HEADER_SIZE
from ._sanitize import sanitize, sanitize_url

__all__ = [
    "CaptureFrames",
    "Halt",
    "MediaPlan",
    "PlannedRecord",
    "ScriptLine",
    "Step",
    "StopCapture",
    "parse_script",
    "plan_replay",
]

# RT-3: the observation recorded for each script direction, and the record's direction.
_DIRECTIONS: Mapping[str, str] = {
    "received": "incoming", "send_attempt": "outgoing", "send_failed": "outgoing",
}
_KINDS = ("open", "direction", "audio", "local", "fault", "clock", "disk")
# The values each kind of line may take (docs/implementers/realtime.md).
_VALUES: Mapping[str, frozenset[str]] = {
    "local": frozenset({"stop", "remove", "copy"}),
    "fault": frozenset({"persistence", "publication", "clipboard"}),
    "clock": frozenset({"tick"}),
    "disk": frozenset({"stall", "resume"}),
}


@dataclass(frozen=True, slots=True)
class ScriptLine:
    """One line of a script: its virtual time, its line number, and the parsed object."""

    line: int
    at: int
    kind: str  # open | direction | audio | local | fault | clock | disk
    body: Mapping[str, Any]
    size: int = 0  # the line's bytes: an observation's size in the queue (CAP-11)


@dataclass(frozen=True, slots=True)
class PlannedRecord:
    """A record to append (without id, parentId, timestamp), its time and its script line, the
    media to write before it (RT-7), and the line of a fault that makes its append fail."""

    at: int
    line: int
    record: dict[str, Any]
    media: tuple[MediaPlan, ...] = ()
    fails: int | None = None


@dataclass(frozen=True, slots=True)
class Halt:
    """Capture halts here (CAP-12): the code the replay reports, and the script line."""

    code: str
    line: int


def _usage(line: int, what: str) -> UsageError:
    # Never quote the line: a script carries provider payloads, and those may hold secrets.
    return UsageError(Code.USAGE, f"the script's line {line} {what}")


def _script_line(number: int, obj: Any, size: int = 0) -> ScriptLine:
    if not isinstance(obj, dict):
        raise _usage(number, "is not a JSON object")
    at = obj.get("at")
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise _usage(number, "has no 'at' (milliseconds, an integer >= 0)")
    kinds = [k for k in _KINDS if k in obj]
    if len(kinds) != 1:
        raise _usage(number, "needs exactly one of open, direction, audio, local, fault")
    kind = kinds[0]
    if kind in _VALUES and obj[kind] not in _VALUES[kind]:
        raise _usage(number, f"has an unknown '{kind}' (one of {', '.join(sorted(_VALUES[kind]))})")
    if kind == "local" and obj["local"] == "remove" and not isinstance(obj.get("message"), str):
        raise _usage(number, "removes no 'message' (the provider item id of a message)")
    if kind in ("open", "direction") and not isinstance(obj.get("connection"), str):
        raise _usage(number, "needs a 'connection' (a string)")
    if kind == "direction" and (
        obj["direction"] not in _DIRECTIONS or not isinstance(obj.get("event"), dict)
        or not isinstance(obj["event"].get("type"), str)
    ):
        raise _usage(number, "needs a direction (received, send_attempt, send_failed) and an "
                             "event object with a string type")
    if kind == "open" and not isinstance(obj["open"], dict):
        raise _usage(number, "has an 'open' that is not an object")
    return ScriptLine(number, at, kind, obj, size)


def parse_script(data: bytes) -> list[ScriptLine]:
    """Every line of a script; blank lines are skipped. Times never go backwards."""
    lines: list[ScriptLine] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            raise _usage(number, "is not JSON") from None
        line = _script_line(number, obj, len(raw))
        if lines and line.at < lines[-1].at:
            raise _usage(number, "goes back in time")
        lines.append(line)
    return lines


@dataclass
class _Connections:
    """RT-5: the next sequence number of each connection; RT-34: which connections are open."""

    opened: set[str] = field(default_factory=set)
    sequence: dict[str, int] = field(default_factory=dict)

    def next_sequence(self, connection: str) -> int:
        number = self.sequence.get(connection, 0)
        self.sequence[connection] = number + 1
        return number


# ENV-4: seconds, an optional fraction of 1 to 9 digits, then Z or an offset. The start is the
# session header's timestamp, so any valid one may come (a header without a fraction crashed
# replay before, found by tests/reference/core/test_full_disks.py).
_TIMESTAMP = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?"
    r"(Z|([+-])([0-9]{2}):([0-9]{2}))"
)


def timestamp_at(start: str, at: int) -> str:
    """ENV-4 Timestamp ``at`` milliseconds after ``start`` (the replay's virtual clock), in UTC
    with milliseconds."""
    parts = _TIMESTAMP.fullmatch(start)
    if parts is None:
        raise UsageError(Code.USAGE, "the replay's start is not a Timestamp (ENV-4)")
    offset = timedelta(0)
    if parts[3] != "Z":
        offset = timedelta(hours=int(parts[5]), minutes=int(parts[6]))
        offset = -offset if parts[4] == "-" else offset
    try:
        moment = datetime.strptime(parts[1], "%Y-%m-%dT%H:%M:%S").replace(
            microsecond=int((parts[2] or "0").ljust(6, "0")[:6]), tzinfo=timezone(offset))
    except ValueError:
        raise UsageError(Code.USAGE, "the replay's start is not a Timestamp (ENV-4)") from None
    moment = moment.astimezone(UTC) + timedelta(milliseconds=at)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _api_connection(line: ScriptLine) -> dict[str, Any]:
    """RT-34: the connection's provenance, endpoint sanitized (RT-32, ENT-9)."""
    opened = line.body["open"]
    return {
        "type": "api_connection",
        "connectionId": line.body["connection"],
        "provider": str(opened.get("provider", "")),
        "endpoint": sanitize_url(str(opened.get("endpoint", ""))),
        "requestedModel": str(opened.get("model", "")),
        "api": str(opened.get("api", "")),
        "originId": None,
    }


def _realtime_event(line: ScriptLine, start: str, sequence: int) -> dict[str, Any]:
    """RT-3: one observation, with the members of ENT-10."""
    observation = line.body["direction"]
    cleaned = sanitize(line.body["event"])  # RT-1, RT-2
    record: dict[str, Any] = {
        "type": "realtime_event",
        "connectionId": line.body["connection"],
        "direction": _DIRECTIONS[observation],
        "observation": observation,  # RT-4: an attempt is recorded as an attempt, nothing more
        "observedAt": timestamp_at(start, line.at),  # RT-36
        "sequence": sequence,  # RT-5
        "payload": cleaned.payload,
    }
    event_id = line.body["event"].get("event_id")
    if observation == "received" and isinstance(event_id, str):
        record["remoteEventId"] = sanitize(event_id).payload  # RT-37: the provider's id
    if cleaned.redactions:
        record["redactions"] = list(cleaned.redactions)
    return record


# RT-10: the events whose audio is taken out of the payload, the member holding it (base64), and
# whether it is the client's own input (which may reuse the capture WAV, RT-8) or provider output.
_MEDIA_MEMBERS: Mapping[str, tuple[str, bool]] = {
    "input_audio_buffer.append": ("audio", True),
    "response.output_audio.delta": ("delta", False),
    "response.audio.delta": ("delta", False),  # the beta name (RT-28)
}
PCM_MIME = "audio/pcm"
FRAME_BYTES = 2  # a replay captures 16-bit mono (CAP-21)


@dataclass(frozen=True, slots=True)
class CaptureFrames:
    """Frames the capture writes to its WAV now (an ``audio`` line)."""

    line: int
    data: bytes


@dataclass(frozen=True, slots=True)
class StopCapture:
    """The capture ends here (a ``stop`` line, or the end of the script), with the gaps the
    ordering engine closed (CAP-15) and whether the outcome is forced incomplete (RT-20)."""

    line: int
    gaps: tuple[Any, ...] = ()
    incomplete: bool = False


@dataclass(frozen=True, slots=True)
class MediaPlan:
    """RT-6..RT-10: bytes taken out of a payload at ``pointer``. ``wav_range`` is the range of
    the capture WAV file they may reuse when its bytes are identical (RT-8); else, or when it is
    None, they get a ``protocol-<uuid>.bin`` asset of their own."""

    pointer: str
    data: bytes
    mime_type: str
    wav_range: tuple[int, int] | None


def _media_of(line: ScriptLine, recording: bool) -> tuple[str, bytes, int | None] | None:
    """(member, bytes, offset in the WAV data or None) of an event whose audio is externalized."""
    event = line.body["event"]
    found = _MEDIA_MEMBERS.get(event["type"])
    if found is None or not isinstance(event.get(found[0]), str):
        return None
    member, is_input = found
    try:
        data = base64.b64decode(event[member], validate=True)
    except (binascii.Error, ValueError):
        return None  # not base64: kept in the payload as it came, as evidence
    offset = line.body.get("captureOffset")
    if not (recording and is_input and type(offset) is int and offset >= 0):
        return member, data, None
    return member, data, offset


class _Planner:
    """The state of one replay: connections (RT-5, RT-34), the capture's progress, and input
    chunks waiting for the capture to write their bytes (RT-9)."""

    def __init__(self, start: str, recording: bool) -> None:
        self.start = start
        self.recording = recording
        self.connections = _Connections()
        self.written = 0  # bytes of whole frames the capture has written (RT-9)
        self.pending: list[tuple[ScriptLine, str, bytes, int]] = []
        self.fail_next: int | None = None  # the line of a fault: the next append fails
        self.stopped = False

    def open(self, line: ScriptLine) -> PlannedRecord:
        """RT-34: a connection's ``api_connection``, once per connection id."""
        connection = line.body["connection"]
        if connection in self.connections.opened:
            raise _usage(line.line, "opens a connection that is already open (RT-34)")
        self.connections.opened.add(connection)
        fails, self.fail_next = self.fail_next, None
        return PlannedRecord(line.at, line.line, _api_connection(line), (), fails)

    def observe(self, line: ScriptLine) -> Iterator[PlannedRecord]:
        connection = line.body["connection"]
        if connection not in self.connections.opened:
            raise _usage(line.line, "observes an event of a connection never opened (RT-34)")
        media = _media_of(line, self.recording and not self.stopped)
        if media is not None:
            member, data, offset = media
            if offset is not None and offset + len(data) > self.written:
                self.pending.append((line, member, data, offset))  # RT-9: wait for the capture
                return
        yield self._record(line, media)

    def _record(
        self, line: ScriptLine, media: tuple[str, bytes, int | None] | None
    ) -> PlannedRecord:
        sequence = self.connections.next_sequence(line.body["connection"])
        record = _realtime_event(line, self.start, sequence)
        plans: tuple[MediaPlan, ...] = ()
        if media is not None:
            member, data, offset = media
            payload = dict(record["payload"])
            payload[member] = ""  # the bytes live in the asset the reference names (RT-6)
            record["payload"] = payload
            wav = None if offset is None else (
                HEADER_SIZE + offset, HEADER_SIZE + offset + len(data))  # after the WAV header
            plans = (MediaPlan(f"/{member}", data, PCM_MIME, wav),)
        fails, self.fail_next = self.fail_next, None
        return PlannedRecord(line.at, line.line, record, plans, fails)

    def captured(self, line: ScriptLine) -> Iterator[PlannedRecord | CaptureFrames]:
        """An audio line: the capture wrote these frames; release the chunks now written."""
        try:
            frames = base64.b64decode(line.body["audio"]["pcm16_b64"], validate=True)
        except (binascii.Error, ValueError, KeyError, TypeError):
            raise _usage(line.line, "has audio that is not base64") from None
        if self.stopped or not self.recording:
            return
        yield CaptureFrames(line.line, frames)
        self.written += len(frames)
        self.written -= self.written % FRAME_BYTES
        yield from self.release(lambda offset, size: offset + size <= self.written)

    def release(self, ready: Callable[[int, int], bool]) -> Iterator[PlannedRecord]:
        waiting, self.pending = self.pending, []
        for line, member, data, offset in waiting:
            if ready(offset, len(data)):
                yield self._record(line, (member, data, offset))
            else:
                self.pending.append((line, member, data, offset))

    def stop(self, line: int) -> Iterator[PlannedRecord | StopCapture]:
        """The capture ended: chunks it never wrote use their own assets (RT-10)."""
        if self.stopped:
            return
        self.stopped = True
        waiting, self.pending = self.pending, []
        for pending_line, member, data, _offset in waiting:
            yield self._record(pending_line, (member, data, None))
        if self.recording:
            yield StopCapture(line)


Step = PlannedRecord | CaptureFrames | StopCapture


def plan_replay(
    lines: Sequence[ScriptLine], start: str, *, recording: bool = False
) -> Iterator[Step]:
    """The records a conforming writer appends for ``lines``, in order. With ``recording``, a
    capture runs beside the connection: ``audio`` lines are its frames, and an input chunk with a
    ``captureOffset`` may reuse their WAV range (RT-8..RT-10). A ``fault`` line makes the next
    record's append fail (``fails``): its media are written first (RT-7)."""
    planner = _Planner(start, recording)
    for line in lines:
        if line.kind == "fault":
            if line.body["fault"] == "persistence":  # the others concern ordering (_replay_plan)
                planner.fail_next = line.line
        elif line.kind == "open":
            yield planner.open(line)
        elif line.kind == "direction":
            yield from planner.observe(line)
        elif line.kind == "audio":
            yield from planner.captured(line)
        elif line.body.get("local") == "stop":
            yield from planner.stop(line.line)
    yield from planner.stop(lines[-1].line if lines else 0)
