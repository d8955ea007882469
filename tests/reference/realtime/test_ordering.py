"""The ordering engine (RT-12..RT-28, CAP-11..CAP-16) without files: it runs on a virtual clock
alone, and its effects follow predecessor order, the stop deadline and the queue bounds."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from persyk_session.realtime._evidence import parse_script
from persyk_session.realtime._ordering import OrderingEngine
from persyk_session.realtime._ordering_model import (
    ORDERED_ITEMS,
    REMOVAL_TIMEOUT_MS,
    STOP_DEADLINE_MS,
    FinishRecording,
    PublishMessage,
    SendEvent,
)
from persyk_session.realtime._replay_plan import Publish, drive

START = "2026-01-01T00:00:00.000Z"


def placed(item: str, previous: str | None, role: str = "user") -> dict[str, Any]:
    return {"type": "conversation.item.added", "previous_item_id": previous,
            "item": {"id": item, "type": "message", "role": role,
                     "content": [{"type": "input_audio"}]}}


def transcribed(item: str, text: str) -> dict[str, Any]:
    return {"type": "conversation.item.input_audio_transcription.completed", "item_id": item,
            "transcript": text}


def published(effects: list[Any]) -> list[str]:
    return [e.item for e in effects if isinstance(e, PublishMessage)]


_CLOCKS = ("time", "monotonic", "perf_counter", "sleep", "time_ns", "monotonic_ns")
_IO = ("open", "read", "write", "fsync", "stat", "fstat", "listdir", "scandir", "rename",
       "replace", "unlink", "getpid", "urandom")


@contextmanager
def no_clock_no_io() -> Iterator[list[str]]:
    """Every clock and every file or process call raises while inside; what was called is
    listed (a raise alone could be swallowed by the code under test)."""
    used: list[str] = []
    saved = [(time, n, getattr(time, n)) for n in _CLOCKS]
    saved += [(os, n, getattr(os, n)) for n in _IO]

    def refusing(name: str) -> Any:
        def refuse(*_args: object, **_kwargs: object) -> Any:
            used.append(name)
            raise AssertionError(f"{name} was called")
        return refuse
    for module, name, _ in saved:
        setattr(module, name, refusing(name))
    try:
        yield used
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def script(*lines: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def test_the_engine_and_its_driver_run_on_the_virtual_clock_alone() -> None:
    lines = parse_script(script(
        {"at": 0, "connection": "c1", "open": {"provider": "openai"}},
        {"at": 10, "connection": "c1", "direction": "received", "event": placed("A", None)},
        {"at": 20, "connection": "c1", "direction": "received", "event": placed("B", "A")},
        {"at": 30, "connection": "c1", "direction": "received", "event": transcribed("B", "b")},
        {"at": 40, "local": "stop"},
        {"at": 9000, "connection": "c1", "direction": "received", "event": transcribed("A", "a")},
    ))
    with no_clock_no_io() as used:
        driver, steps = drive(lines, START)
    assert used == []
    assert [s.effect.item for s in steps if isinstance(s, Publish)] == ["A", "B"]
    assert driver.engine.closed_at == 9000  # drained early, inside the 10 s deadline


def test_a_late_predecessor_holds_every_later_item_back() -> None:
    engine = OrderingEngine()
    for item, previous in (("A", None), ("B", "A"), ("C", "B")):
        engine.received(0, "c1", placed(item, previous))
    assert published(engine.received(1, "c1", transcribed("C", "c"))) == []
    assert published(engine.received(2, "c1", transcribed("B", "b"))) == []
    assert engine.provisional() == ["B", "C"]
    assert published(engine.received(3, "c1", transcribed("A", "a"))) == ["A", "B", "C"]


def test_an_item_placed_after_a_pending_predecessor_goes_before_its_successor() -> None:
    engine = OrderingEngine()
    engine.received(0, "c1", placed("A", None))
    engine.received(0, "c1", placed("C", "A"))
    engine.received(0, "c1", placed("B", "A"))  # the provider inserted B after A
    assert [p.id for p in engine.pending] == ["A", "B", "C"]


def test_the_drain_deadline_fires_from_advance_alone() -> None:
    engine = OrderingEngine()
    engine.received(0, "c1", placed("A", None))
    engine.stop(100)
    assert engine.next_deadline() == 100 + STOP_DEADLINE_MS
    assert engine.advance(100 + STOP_DEADLINE_MS - 1) == []
    finish = engine.advance(100 + STOP_DEADLINE_MS)
    assert isinstance(finish[-1], FinishRecording) and finish[-1].gaps[0].reason == "unresolved"


def test_a_removal_times_out_after_its_own_deadline_only() -> None:
    engine = OrderingEngine()
    engine.received(0, "c1", placed("A", None))
    engine.received(1, "c1", transcribed("A", "a"))
    sent = engine.remove(10, "A", "e1")
    assert isinstance(sent[0], SendEvent) and sent[0].event["item_id"] == "A"
    assert engine.advance(10 + REMOVAL_TIMEOUT_MS - 1) == []
    closed = engine.advance(10 + REMOVAL_TIMEOUT_MS)
    assert isinstance(closed[-1], FinishRecording) and closed[-1].incomplete
    assert engine.outcomes == {"A": "timed-out"} and engine.alive == ["A"]


def test_the_ordered_item_bound_is_inclusive() -> None:
    engine = OrderingEngine()
    previous = None
    for n in range(ORDERED_ITEMS):
        engine.received(n, "c1", placed(f"i{n}", previous))
        previous = f"i{n}"
    assert engine.phase == "capturing" and len(engine.pending) == ORDERED_ITEMS
    engine.received(ORDERED_ITEMS, "c1", placed("over", previous))
    assert engine.phase == "draining" and engine.gaps[-1].reason == "ordering-limit"


def test_every_new_script_line_follows_the_script_schema() -> None:
    from jsonschema import Draft202012Validator
    from persyk_contract import schema

    validator = Draft202012Validator(schema("realtime/script-line.schema.json"))
    new_lines = [{"at": 1, "clock": "tick"}, {"at": 1, "disk": "stall"},
                 {"at": 1, "disk": "resume"}, {"at": 1, "local": "copy"},
                 {"at": 1, "local": "remove", "message": "item_1", "eventId": "del-1"},
                 {"at": 1, "fault": "publication"}, {"at": 1, "fault": "clipboard"}]
    for line in new_lines:
        assert not list(validator.iter_errors(line)), line
    assert list(validator.iter_errors({"at": 1, "clock": "stop"}))
    parse_script(script(*new_lines))  # and the reader takes them
