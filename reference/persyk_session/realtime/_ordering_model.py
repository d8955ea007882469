"""The vocabulary of ordered publication (RT-12..RT-28, CAP-11..CAP-16): limits, provider event
names, and the effects the ordering engine (``_ordering``) asks its shell to perform. Sans-IO.

Times are virtual milliseconds (``at``), the same clock as a replay script's (RT-35): the engine
has no clock of its own and learns the time only from its inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "ASSISTANT_TEXT_DONE",
    "ITEM_PLACED",
    "OBSERVATION_BYTES",
    "OBSERVATION_JOBS",
    "ORDERED_ITEMS",
    "ORDERED_TEXT_BYTES",
    "REMOVAL_TIMEOUT_MS",
    "STOP_DEADLINE_MS",
    "CopyText",
    "Effect",
    "FinishRecording",
    "Gap",
    "PublishMessage",
    "RemoveMessage",
    "SendEvent",
    "canonical_type",
]

MIB = 1024 * 1024
# CAP-11: the observation queue (observations waiting to be persisted) holds at most 512 jobs
# and 8 MiB; a job's bytes are the observation as received (the event's JSON text).
OBSERVATION_JOBS = 512
OBSERVATION_BYTES = 8 * MIB
# CAP-11: ordered work (conversation items placed but not yet published or closed) holds at most
# 256 items and 4 MiB of text (UTF-8 bytes of the completed text those items hold).
ORDERED_ITEMS = 256
ORDERED_TEXT_BYTES = 4 * MIB
# CAP-14: after stop, realtime and deletion work drains for at most 10 seconds.
STOP_DEADLINE_MS = 10_000
# RT-20: a removal not acknowledged within 5 seconds is uncertain (project decision: inside the
# stop deadline, so a removal asked for just before stop still settles within the drain).
REMOVAL_TIMEOUT_MS = 5_000

# RT-28 (project addition): beta event names are aliases of the GA names.
_ALIASES: Mapping[str, str] = {
    "conversation.item.created": "conversation.item.added",
    "response.audio_transcript.done": "response.output_audio_transcript.done",
    "response.text.done": "response.output_text.done",
    "response.audio.delta": "response.output_audio.delta",
}


def canonical_type(name: str) -> str:
    """RT-28: the GA name of a provider event (beta names are aliases)."""
    return _ALIASES.get(name, name)


# RT-12: the events that place an item in the conversation, after its ``previous_item_id``.
ITEM_PLACED = frozenset({"conversation.item.added", "conversation.item.done"})
# RT-15: the events that carry an assistant item's finished text (not yet canonical), and the
# member holding it.
ASSISTANT_TEXT_DONE: Mapping[str, str] = {
    "response.output_audio_transcript.done": "transcript",
    "response.output_text.done": "text",
}


@dataclass(frozen=True, slots=True)
class Gap:
    """RT-14, CAP-15: a conversation item closed without a message. ``reason`` is a fixed text
    (never provider text); the speech interval is known only for user audio."""

    item: str
    reason: str  # transcription-failed | response-<status> | unresolved | ordering-limit
    start_ms: int | None = None
    end_ms: int | None = None


@dataclass(frozen=True, slots=True)
class PublishMessage:
    """Append a canonical ``message`` (RT-12, RT-15) now (``at``): the item's role, its final
    text, and when that text became final (``resolved_at``, the message's own timestamp)."""

    at: int
    resolved_at: int
    item: str
    connection: str
    role: str
    text: str
    response_id: str | None


@dataclass(frozen=True, slots=True)
class SendEvent:
    """Send a client event (recorded as a ``send_attempt``, RT-4, RT-37)."""

    at: int
    connection: str
    event: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class RemoveMessage:
    """Append ``message.removed`` for the published message of ``item`` (RT-18, RT-22)."""

    at: int
    item: str


@dataclass(frozen=True, slots=True)
class FinishRecording:
    """CAP-15: the conversation is closed; finish the recording with these gaps. ``incomplete``
    forces the outcome (RT-20) even without a located gap."""

    at: int
    reason: str  # stop | end | removal-timeout | removal-uncertain | ordering-limit
    gaps: tuple[Gap, ...]
    incomplete: bool


@dataclass(frozen=True, slots=True)
class CopyText:
    """RT-26: copy the surviving canonical messages (their items) to the clipboard."""

    at: int
    items: tuple[str, ...]


Effect = PublishMessage | SendEvent | RemoveMessage | FinishRecording | CopyText
