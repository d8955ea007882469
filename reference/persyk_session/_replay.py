"""Replaying a provider-event script into evidence records (RT-3..RT-5, RT-34..RT-37). Sans-IO.

A script (docs/realtime.md, ``schemas/realtime/script.schema.json``) is JSON Lines, one line per
thing that happens, each at a virtual time ``at`` (milliseconds from the replay's start):

* ``{"at", "connection", "open": {"provider", "endpoint", "model", "api"}}``: a connection opens;
* ``{"at", "connection", "direction": "received"|"send_attempt"|"send_failed", "event": {...}}``:
  one observation of a provider event (received) or of a client event (attempted or failed);
* ``{"at", "audio": {"pcm16_b64": "..."}}``: frames the local capture wrote;
* ``{"at", "local": "stop"|"remove", ...}``: a local command;
* ``{"at", "fault": "persistence"}``: the next append fails.

:func:`plan_replay` turns the script into the records to append, in order, each without the
envelope members (``id``, ``parentId``, ``timestamp``) that the I/O edge gives it when it
appends. Everything a record takes from the provider is sanitized first (RT-1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ._errors import Code, UsageError
from ._sanitize import sanitize, sanitize_url

__all__ = ["Halt", "PlannedRecord", "ScriptLine", "parse_script", "plan_replay"]

# RT-3: the observation recorded for each script direction, and the record's direction.
_DIRECTIONS: Mapping[str, str] = {
    "received": "incoming", "send_attempt": "outgoing", "send_failed": "outgoing",
}
_KINDS = ("open", "direction", "audio", "local", "fault")


@dataclass(frozen=True, slots=True)
class ScriptLine:
    """One line of a script: its virtual time, its line number, and the parsed object."""

    line: int
    at: int
    kind: str  # open | direction | audio | local | fault
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PlannedRecord:
    """A record to append (without id, parentId, timestamp), its time and its script line."""

    at: int
    line: int
    record: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Halt:
    """Capture halts here (CAP-12): the code the replay reports, and the script line."""

    code: str
    line: int


def _usage(line: int, what: str) -> UsageError:
    # Never quote the line: a script carries provider payloads, and those may hold secrets.
    return UsageError(Code.USAGE, f"the script's line {line} {what}")


def _script_line(number: int, obj: Any) -> ScriptLine:
    if not isinstance(obj, dict):
        raise _usage(number, "is not a JSON object")
    at = obj.get("at")
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise _usage(number, "has no 'at' (milliseconds, an integer >= 0)")
    kinds = [k for k in _KINDS if k in obj]
    if len(kinds) != 1:
        raise _usage(number, "needs exactly one of open, direction, audio, local, fault")
    kind = kinds[0]
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
    return ScriptLine(number, at, kind, obj)


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
        line = _script_line(number, obj)
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


def timestamp_at(start: str, at: int) -> str:
    """ENV-4 Timestamp ``at`` milliseconds after ``start`` (the replay's virtual clock)."""
    moment = datetime.strptime(start, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    moment += timedelta(milliseconds=at)
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


def plan_replay(
    lines: Sequence[ScriptLine], start: str
) -> Iterator[PlannedRecord | Halt]:
    """The records a conforming writer appends for ``lines``, in order; a Halt ends them."""
    connections = _Connections()
    for line in lines:
        if line.kind == "fault":
            if line.body["fault"] == "persistence":
                yield Halt(Code.IO_FAILED, line.line)  # CAP-12: halt visibly
                return
            raise _usage(line.line, "names an unknown fault")
        if line.kind == "open":
            connection = line.body["connection"]
            if connection in connections.opened:
                raise _usage(line.line, "opens a connection that is already open (RT-34)")
            connections.opened.add(connection)
            yield PlannedRecord(line.at, line.line, _api_connection(line))
        elif line.kind == "direction":
            connection = line.body["connection"]
            if connection not in connections.opened:
                raise _usage(line.line, "observes an event of a connection never opened (RT-34)")
            sequence = connections.next_sequence(connection)
            yield PlannedRecord(line.at, line.line, _realtime_event(line, start, sequence))
        # audio and local lines produce no record here: media references (RT-6..RT-10) and
        # ordered publication (RT-12..) are not replayed yet; the result counts them
        # (notReplayed), so a script's unplayed lines are never silent (docs/realtime.md).
