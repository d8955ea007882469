"""The ordering engine: when a realtime conversation becomes saved history (RT-12..RT-28,
CAP-11..CAP-16). Sans-IO: no threads, no clock, no files.

The engine is fed provider events (``received``), client events (``sent``), local commands
(``remove``, ``stop``, ``copy``) and the virtual time of each (``at``, milliseconds); it answers
with effects (``_ordering_model``) that a shell performs: append a message, send a delete,
append a removal, finish the recording, copy text. Timers (the removal timeout, the stop
deadline) fire when an input carries a later time, or when the shell calls ``advance``.

The conversation is a list of items in the provider's predecessor order (RT-12); ``pending``
holds those not yet settled, first to last. An item is *resolved* when its final text or its
failure is known, and *settled* when it has been published or closed as a gap; only the first
pending item may settle, so an item resolved early stays provisional (RT-13).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._ordering_model import (
    ASSISTANT_TEXT_DONE,
    ITEM_PLACED,
    ORDERED_ITEMS,
    ORDERED_TEXT_BYTES,
    REMOVAL_TIMEOUT_MS,
    STOP_DEADLINE_MS,
    CopyText,
    Effect,
    FinishRecording,
    Gap,
    PublishMessage,
    RemoveMessage,
    SendEvent,
    canonical_type,
)

__all__ = ["OrderingEngine"]

_TRANSCRIBED = "conversation.item.input_audio_transcription.completed"
_TRANSCRIPTION_FAILED = "conversation.item.input_audio_transcription.failed"
_MESSAGE = "message"  # an item's resolution: a message (else the reason of its gap)


@dataclass
class _Item:
    """One conversation item while it is pending (RT-13: provisional once it has text)."""

    id: str
    role: str  # user | assistant | other (not a message: settles without publication)
    connection: str
    text: str | None = None  # the final text, known but not yet saved (RT-24)
    resolution: str | None = None  # _MESSAGE or a gap reason (RT-14)
    resolved_at: int = 0
    response_id: str | None = None


@dataclass
class _Removal:
    """RT-18: a removal sent to the provider and waiting for its acknowledgement."""

    item: str
    event_id: str
    connection: str
    deadline: int


def _text_bytes(text: str | None) -> int:
    return 0 if text is None else len(text.encode("utf-8", "surrogatepass"))


def _user_text(item: Mapping[str, Any]) -> str | None:
    """A user item typed as text is complete when placed; one with audio awaits its transcript."""
    content = item.get("content")
    if not isinstance(content, list) or not content:
        return None
    texts = [c.get("text") for c in content if isinstance(c, dict)]
    if any(isinstance(c, dict) and c.get("type") == "input_audio" for c in content):
        return None
    strings = [t for t in texts if isinstance(t, str)]
    return "".join(strings) if strings else None


@dataclass
class OrderingEngine:
    """One realtime conversation's ordered publication. Every public method takes the virtual
    time of its input and returns the effects to perform, in order."""

    pending: list[_Item] = field(default_factory=list)  # RT-12: unsettled, predecessor order
    settled: dict[str, str] = field(default_factory=dict)  # item -> published | gap
    alive: list[str] = field(default_factory=list)  # published, not removed (RT-26)
    published: list[str] = field(default_factory=list)  # every item published, in order
    gaps: list[Gap] = field(default_factory=list)
    unsaved: list[str] = field(default_factory=list)  # closed while provisional (RT-24)
    speech: dict[str, list[int | None]] = field(default_factory=dict)  # item -> [start, end]
    removals: dict[str, _Removal] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)  # item -> removal outcome
    responses: set[str] = field(default_factory=set)  # in progress (CAP-14)
    requested: int = 0  # response.create sent, response.created not yet seen (CAP-14)
    text_bytes: int = 0  # CAP-11: text held by pending items
    phase: str = "capturing"  # capturing | draining | closed | halted
    deadline: int | None = None  # CAP-14: the end of the stop drain
    stopped: tuple[str, int] | None = None  # (reason, at) when the conversation closed
    evidence_only: int = 0  # resolving events that changed nothing (RT-16, RT-17, RT-21)
    closed_at: int | None = None  # CAP-14: when the drain ended
    peak_items: int = 0  # CAP-11: the most ordered work ever held (items, text bytes)
    peak_text: int = 0
    connections: dict[str, str] = field(default_factory=dict)  # published item -> connection

    # --- inputs ---------------------------------------------------------------------------

    def received(self, at: int, connection: str, event: Mapping[str, Any]) -> list[Effect]:
        """A provider event. Its evidence is the shell's (RT-3); here it may change order."""
        effects = self.advance(at)
        if self.phase in ("closed", "halted"):
            self.evidence_only += self._is_resolving(event)  # RT-21: evidence only
            return effects
        kind = canonical_type(str(event.get("type", "")))  # RT-28
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, at, connection, event, effects)
        self.peak_items = max(self.peak_items, len(self.pending))
        self.peak_text = max(self.peak_text, self.text_bytes)
        self._settle(at, effects)
        self._drained(at, effects)
        return effects

    def sent(self, at: int, connection: str, event: Mapping[str, Any]) -> list[Effect]:
        """A client event attempted. CAP-14: a requested response is work the drain awaits."""
        effects = self.advance(at)
        if self.phase in ("capturing", "draining") and event.get("type") == "response.create":
            self.requested += 1
        return effects

    def send_failed(self, at: int, connection: str, event: Mapping[str, Any]) -> list[Effect]:
        """RT-20: a delete that could not be sent leaves the removal uncertain: close now."""
        effects = self.advance(at)
        removal = self.removals.get(str(event.get("item_id")))
        if (self.phase in ("capturing", "draining") and removal is not None
                and event.get("type") == "conversation.item.delete"):
            del self.removals[removal.item]
            self.outcomes[removal.item] = "uncertain"
            self._close(at, "removal-uncertain", effects, incomplete=True)
        return effects

    def remove(self, at: int, item: str, event_id: str) -> list[Effect]:
        """RT-18: ask the provider to delete a published message; saved once it acknowledges."""
        effects = self.advance(at)
        if self.phase not in ("capturing", "draining"):
            self.outcomes[item] = "connection-closed"
        elif item not in self.alive:
            # RT-24: a provisional or unknown item is not canonical content and is not removed.
            self.outcomes.setdefault(item, "not-canonical")
        elif item in self.removals:
            pass  # already waiting for its acknowledgement
        else:
            connection = self._connection_of(item)
            self.removals[item] = _Removal(item, event_id, connection, at + REMOVAL_TIMEOUT_MS)
            self.outcomes[item] = "pending"
            effects.append(SendEvent(at, connection, {
                "type": "conversation.item.delete", "event_id": event_id, "item_id": item}))
        return effects

    def stop(self, at: int, reason: str = "stop") -> list[Effect]:
        """CAP-14: stop capturing; requested and streaming work gets at most 10 s to drain."""
        effects = self.advance(at)
        if self.phase == "capturing":
            self.phase, self.deadline = "draining", at + STOP_DEADLINE_MS
            self.stopped = (reason, at)
        self._drained(at, effects)
        return effects

    def copy(self, at: int) -> list[Effect]:
        """RT-26: the clipboard gets the surviving canonical messages only."""
        effects = self.advance(at)
        effects.append(CopyText(at, tuple(self.alive)))
        return effects

    def halt(self) -> None:
        """CAP-12: persistence failed; nothing more is published (the shell reports it)."""
        self.phase = "halted"

    def advance(self, at: int) -> list[Effect]:
        """Fire every timer due at or before ``at``, earliest first."""
        effects: list[Effect] = []
        while self.phase in ("capturing", "draining"):
            due = self.next_deadline()
            if due is None or due > at:
                break
            late = [r for r in self.removals.values() if r.deadline == due]
            if late:  # RT-20: uncertain removal: close the connection, outcome incomplete
                for removal in late:
                    self.outcomes[removal.item] = "timed-out"
                    del self.removals[removal.item]
                self._close(due, "removal-timeout", effects, incomplete=True)
            else:  # CAP-14: the drain deadline
                self._close(due, self.stopped[0] if self.stopped else "stop", effects)
        return effects

    def next_deadline(self) -> int | None:
        """The virtual time of the next timer, if any (the shell advances to it at the end)."""
        times = [r.deadline for r in self.removals.values()]
        if self.phase == "draining" and self.deadline is not None:
            times.append(self.deadline)
        return min(times) if times else None

    # --- RT-12, RT-13: placement and settling ---------------------------------------------

    def _place(self, at: int, connection: str, event: Mapping[str, Any],
               effects: list[Effect]) -> None:
        item = event.get("item")
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            return
        item_id = item["id"]
        if item_id in self.settled or any(p.id == item_id for p in self.pending):
            return  # placed already (added, then done): the first placement counts
        if self.phase == "draining" and self.stopped and self.stopped[0] == "ordering-limit":
            self._refuse(item_id)  # CAP-13: finishing takes no new items
            return
        if len(self.pending) >= ORDERED_ITEMS:  # CAP-11, CAP-13: the 257th item
            self._refuse(item_id)
            self._finish(at)
            return
        role = item.get("role") if item.get("type") == "message" else None
        entry = _Item(item_id, role if role in ("user", "assistant") else "other", connection)
        if entry.role == "other":
            entry.resolution = "not-a-message"  # settles in its place, publishes nothing
        elif entry.role == "user":
            text = _user_text(item)
            if text is not None:  # typed: resolved when placed
                self._complete(entry, at, text, effects)
                if entry.resolution is None:
                    entry.resolution, entry.resolved_at = _MESSAGE, at
        self.pending.insert(self._position(event.get("previous_item_id")), entry)

    def _position(self, previous: object) -> int:
        """RT-12: right after the predecessor while it is pending; first among the pending
        when it is settled or null (history is never reordered, RT-17); last when unknown."""
        for index, entry in enumerate(self.pending):
            if entry.id == previous:
                return index + 1
        if previous is None or previous in self.settled:
            return 0
        return len(self.pending)

    def _refuse(self, item_id: str) -> None:
        self.settled[item_id] = "gap"
        self.gaps.append(Gap(item_id, "ordering-limit"))

    def _finish(self, at: int) -> None:
        """CAP-13: an ordering limit moves to finishing (a stop), never to dropping evidence."""
        if self.phase == "capturing":
            self.phase, self.deadline = "draining", at + STOP_DEADLINE_MS
            self.stopped = ("ordering-limit", at)

    def _settle(self, at: int, effects: list[Effect]) -> None:
        """RT-12, RT-13: publish or close the first pending items, in order, while resolved."""
        while self.pending and self.pending[0].resolution is not None:
            self._settle_first(at, effects)

    def _settle_first(self, at: int, effects: list[Effect]) -> None:
        entry = self.pending.pop(0)
        self.text_bytes -= _text_bytes(entry.text)
        if entry.resolution == _MESSAGE:
            self.settled[entry.id] = "published"
            self.alive.append(entry.id)
            self.published.append(entry.id)
            self.connections[entry.id] = entry.connection
            effects.append(PublishMessage(at, entry.resolved_at, entry.id, entry.connection,
                                          entry.role, entry.text or "", entry.response_id))
        elif entry.resolution == "not-a-message":
            self.settled[entry.id] = "skipped"
        else:
            self.settled[entry.id] = "gap"
            self.gaps.append(self._gap(entry.id, str(entry.resolution)))

    def _gap(self, item: str, reason: str) -> Gap:
        start, end = self.speech.get(item, [None, None])
        if start is None or end is None or end <= start:
            return Gap(item, reason)
        return Gap(item, reason, start, end)

    def _pending(self, item_id: object) -> _Item | None:
        for entry in self.pending:
            if entry.id == item_id:
                return entry
        return None

    def _complete(self, entry: _Item, at: int, text: str, effects: list[Effect]) -> None:
        """Hold an item's final text (CAP-11: within 4 MiB of text, else finishing)."""
        size = _text_bytes(text)
        if self.text_bytes + size > ORDERED_TEXT_BYTES:
            entry.resolution, entry.resolved_at = "ordering-limit", at
            self._finish(at)
            return
        self.text_bytes += size - _text_bytes(entry.text)
        entry.text = text

    # --- RT-14..RT-17: resolution ---------------------------------------------------------

    def _transcribed(self, at: int, connection: str, event: Mapping[str, Any],
                     effects: list[Effect]) -> None:
        entry = self._pending(event.get("item_id"))
        if entry is None or entry.resolution is not None:
            self.evidence_only += 1  # RT-16, RT-17: repeated or late: evidence only
            return
        transcript = event.get("transcript")
        self._complete(entry, at, transcript if isinstance(transcript, str) else "", effects)
        if entry.resolution is None:
            entry.resolution, entry.resolved_at = _MESSAGE, at

    def _transcription_failed(self, at: int, connection: str, event: Mapping[str, Any],
                              effects: list[Effect]) -> None:
        entry = self._pending(event.get("item_id"))
        if entry is None or entry.resolution is not None:
            self.evidence_only += 1
            return
        entry.resolution, entry.resolved_at = "transcription-failed", at  # RT-14: a gap

    def _assistant_text(self, at: int, connection: str, event: Mapping[str, Any],
                        effects: list[Effect]) -> None:
        """RT-15: finished text is provisional; only response.done makes it canonical."""
        entry = self._pending(event.get("item_id"))
        member = ASSISTANT_TEXT_DONE[canonical_type(str(event["type"]))]
        text = event.get(member)
        if entry is None or entry.resolution is not None or not isinstance(text, str):
            return
        self._complete(entry, at, text, effects)

    def _response_created(self, at: int, connection: str, event: Mapping[str, Any],
                          effects: list[Effect]) -> None:
        response = event.get("response")
        self.requested = max(0, self.requested - 1)
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            self.responses.add(response["id"])

    def _response_done(self, at: int, connection: str, event: Mapping[str, Any],
                       effects: list[Effect]) -> None:
        """RT-15: response.done resolves its items; completed publishes, any other status is a
        gap. RT-27: items never placed in the conversation (out-of-band) are not touched."""
        response = event.get("response")
        if not isinstance(response, dict):
            return
        self.responses.discard(str(response.get("id")))
        status = response.get("status")
        output = response.get("output")
        for item in output if isinstance(output, list) else ():
            item_id = item.get("id") if isinstance(item, dict) else None
            entry = self._pending(item_id)
            if entry is None or entry.resolution is not None or entry.role != "assistant":
                # RT-16, RT-17: a repeated or late response.done; RT-27: an item never placed
                self.evidence_only += entry is not None or item_id in self.settled
                continue
            entry.response_id = str(response.get("id"))
            if status == "completed":
                if entry.text is None:
                    self._complete(entry, at, _output_text(item), effects)
                if entry.resolution is None:
                    entry.resolution = _MESSAGE
            else:
                entry.resolution = f"response-{status}"
            entry.resolved_at = at

    def _speech(self, at: int, connection: str, event: Mapping[str, Any],
                effects: list[Effect]) -> None:
        """Where a user item's speech lies in the input audio: a gap's location (RT-14)."""
        item = event.get("item_id")
        if not isinstance(item, str):
            return
        span = self.speech.setdefault(item, [None, None])
        if event["type"] == "input_audio_buffer.speech_started":
            value, index = event.get("audio_start_ms"), 0
        else:
            value, index = event.get("audio_end_ms"), 1
        if type(value) is int and value >= 0:
            span[index] = value

    # --- RT-18..RT-21: removal ------------------------------------------------------------

    def _deleted(self, at: int, connection: str, event: Mapping[str, Any],
                 effects: list[Effect]) -> None:
        removal = self.removals.pop(str(event.get("item_id")), None)
        if removal is None:
            self.evidence_only += 1  # RT-21: an acknowledgement nobody waits for
            return
        self.outcomes[removal.item] = "removed"
        self.alive.remove(removal.item)
        effects.append(RemoveMessage(at, removal.item))  # RT-18: after the acknowledgement

    def _error(self, at: int, connection: str, event: Mapping[str, Any],
               effects: list[Effect]) -> None:
        error = event.get("error")
        caused_by = error.get("event_id") if isinstance(error, dict) else None
        for removal in list(self.removals.values()):
            if removal.event_id == caused_by:  # RT-19: an explicit rejection
                del self.removals[removal.item]
                self.outcomes[removal.item] = "rejected"

    # --- CAP-14, CAP-15: stop, drain and close --------------------------------------------

    def _drained(self, at: int, effects: list[Effect]) -> None:
        busy = self.pending or self.removals or self.responses or self.requested
        if self.phase == "draining" and not busy:
            self._close(at, self.stopped[0] if self.stopped else "stop", effects)

    def _close(self, at: int, reason: str, effects: list[Effect], *,
               incomplete: bool = False) -> None:
        """CAP-15: close unresolved items as gaps, publish every finalized message, finish
        the recording once. A provisional item closed here stays unsaved (RT-24)."""
        for removal in self.removals.values():
            self.outcomes[removal.item] = "timed-out"
            incomplete = True
        self.removals.clear()
        for entry in self.pending:
            if entry.resolution is None:
                if entry.text is not None:
                    self.unsaved.append(entry.id)
                entry.resolution = "unresolved"
        self._settle(at, effects)
        if self.stopped is None or reason.startswith("removal-"):
            self.stopped = (reason, at)
        self.phase, self.closed_at = "closed", at
        effects.append(FinishRecording(at, self.stopped[0], tuple(self.gaps),
                                       incomplete or bool(self.gaps)))

    # --- reporting ------------------------------------------------------------------------

    def provisional(self) -> list[str]:
        """RT-24: items shown as "not yet saved": text known, never published."""
        held = [p.id for p in self.pending
                if p.text is not None and p.resolution in (None, _MESSAGE)]
        return self.unsaved + held

    def _connection_of(self, item: str) -> str:
        return self.connections.get(item, "")

    @staticmethod
    def _is_resolving(event: Mapping[str, Any]) -> bool:
        return canonical_type(str(event.get("type", ""))) in _RESOLVING


def _output_text(item: Mapping[str, Any]) -> str:
    """The text of a response.done output item, when no text-done event came before it."""
    content = item.get("content")
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            for member in ("transcript", "text"):
                if isinstance(block.get(member), str):
                    parts.append(block[member])
                    break
    return "".join(parts)


_HANDLERS: Mapping[str, Any] = {
    **{name: OrderingEngine._place for name in ITEM_PLACED},
    _TRANSCRIBED: OrderingEngine._transcribed,
    _TRANSCRIPTION_FAILED: OrderingEngine._transcription_failed,
    **{name: OrderingEngine._assistant_text for name in ASSISTANT_TEXT_DONE},
    "response.created": OrderingEngine._response_created,
    "response.done": OrderingEngine._response_done,
    "input_audio_buffer.speech_started": OrderingEngine._speech,
    "input_audio_buffer.speech_stopped": OrderingEngine._speech,
    "conversation.item.deleted": OrderingEngine._deleted,
    "error": OrderingEngine._error,
}
# Events that resolve something: after the conversation closed they are evidence only (RT-21).
_RESOLVING = frozenset({_TRANSCRIBED, _TRANSCRIPTION_FAILED, "response.done",
                        "conversation.item.deleted"})
