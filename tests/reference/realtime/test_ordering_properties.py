"""Model-based test of the ordering engine (RT-12..RT-17, CAP-15): random interleavings of one
provider conversation (completions in any order, repeated, failed, late, with time passing)
always publish the same canonical sequence in predecessor order, never publish an item before
every earlier item resolved, and never lose a completed item."""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from persyk_session.realtime._ordering import OrderingEngine
from persyk_session.realtime._ordering_model import Effect, PublishMessage

# One item's fate: a user turn transcribed or failed, an assistant completed or cancelled.
FATES = ("heard", "not-heard", "said", "cancelled")


def _placement(index: int, role: str) -> dict[str, Any]:
    return {"type": "conversation.item.added",
            "previous_item_id": None if index == 0 else f"i{index - 1}",
            "item": {"id": f"i{index}", "type": "message", "role": role, "content": []}}


def _resolving(index: int, fate: str, text: str) -> list[dict[str, Any]]:
    """The events that resolve item ``index`` as its fate says (RT-14, RT-15)."""
    item = f"i{index}"
    if fate == "heard":
        return [{"type": "conversation.item.input_audio_transcription.completed",
                 "item_id": item, "transcript": text}]
    if fate == "not-heard":
        return [{"type": "conversation.item.input_audio_transcription.failed", "item_id": item}]
    status = "completed" if fate == "said" else "cancelled"
    return [{"type": "response.output_audio_transcript.done", "item_id": item,
             "transcript": text},
            {"type": "response.done", "response": {
                "id": f"r{index}", "status": status,
                "output": [{"id": item, "type": "message", "role": "assistant"}]}}]


class Conversation(RuleBasedStateMachine):
    """One conversation of 1..8 items whose fates are drawn first; the rules deliver its
    events in an order hypothesis chooses."""

    def __init__(self) -> None:
        super().__init__()
        self.engine = OrderingEngine()
        self.fates: list[str] = []
        self.placed = 0
        self.resolved: set[int] = set()  # items whose first resolving event was delivered
        self.published: list[str] = []
        self.now = 0

    @initialize(fates=st.lists(st.sampled_from(FATES), min_size=1, max_size=8))
    def draw(self, fates: list[str]) -> None:
        self.fates = fates

    def _role(self, index: int) -> str:
        return "user" if self.fates[index] in ("heard", "not-heard") else "assistant"

    def _feed(self, event: dict[str, Any]) -> None:
        self.now += 1
        self._take(self.engine.received(self.now, "c1", event))

    def _take(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, PublishMessage):
                index = int(effect.item[1:])
                # RT-13: published only once every earlier item has resolved
                assert all(i in self.resolved for i in range(index + 1)), effect.item
                assert effect.text == f"text {index}"  # never invented text (RT-14)
                self.published.append(effect.item)

    @precondition(lambda self: self.placed < len(self.fates))
    @rule()
    def place_next(self) -> None:
        """RT-12: the provider places items in speech order."""
        self._feed(_placement(self.placed, self._role(self.placed)))
        self.placed += 1

    @precondition(lambda self: self.placed > 0)
    @rule(data=st.data())
    def resolve(self, data: st.DataObject) -> None:
        """Any placed item's resolution, in any order, possibly again (RT-16)."""
        index = data.draw(st.integers(0, self.placed - 1))
        self.resolved.add(index)  # its resolving event is being delivered
        for event in _resolving(index, self.fates[index], f"text {index}"):
            self._feed(event)

    @precondition(lambda self: any(
        self.fates[i] in ("not-heard", "cancelled") and i in self.resolved
        for i in range(self.placed)))
    @rule(data=st.data())
    def complete_after_failure(self, data: st.DataObject) -> None:
        """RT-17: a success arriving after the failure closed the item changes nothing."""
        failed = [i for i in sorted(self.resolved) if self.fates[i] in ("not-heard", "cancelled")]
        index = data.draw(st.sampled_from(failed))
        fate = "heard" if self.fates[index] == "not-heard" else "said"
        for event in _resolving(index, fate, "a late success"):
            self._feed(event)

    @rule(delay=st.integers(0, 20_000))
    def time_passes(self, delay: int) -> None:
        self.now += delay
        self._take(self.engine.advance(self.now))

    def _expected(self) -> list[str]:
        return [f"i{i}" for i, fate in enumerate(self.fates) if fate in ("heard", "said")]

    @invariant()
    def publication_is_a_prefix_of_the_canonical_sequence(self) -> None:
        assert self.published == self._expected()[:len(self.published)]

    def teardown(self) -> None:
        """Deliver what never came, then stop: every completed item is published, in order."""
        while self.placed < len(self.fates):
            self.place_next()
        for index in range(len(self.fates)):
            if index not in self.resolved:
                self.resolved.add(index)
                for event in _resolving(index, self.fates[index], f"text {index}"):
                    self._feed(event)
        self._take(self.engine.stop(self.now + 1))
        assert self.engine.phase == "closed"
        assert self.published == self._expected()
        failed = [f"i{i}" for i, f in enumerate(self.fates) if f in ("not-heard", "cancelled")]
        assert [gap.item for gap in self.engine.gaps] == failed


Conversation.TestCase.settings = settings(max_examples=60, stateful_step_count=25,
                                          deadline=None)
test_random_interleavings_publish_the_canonical_sequence = Conversation.TestCase
