"""Replaying provider-event scripts (RT-3..RT-5, RT-34..RT-37, CAP-12): the script reader, the
planner, the command line and the shipped examples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_session._errors import UsageError
from persyk_session.read._store import open_session
from persyk_session.realtime._evidence import PlannedRecord, parse_script, plan_replay, timestamp_at

EXAMPLES = CHECKOUT / "examples" / "realtime"
START = "2026-01-01T00:00:00.000Z"


def lines(*objects: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


OPEN = {"at": 0, "connection": "c1", "open": {"provider": "openai", "endpoint":
        "wss://api.example.com/v1?api_key=k", "model": "m", "api": "realtime"}}


@pytest.mark.parametrize(("script", "why"), [
    (b"not json\n", "line 1 is not JSON"),
    (lines([1]), "line 1 is not a JSON object"),
    (lines({"connection": "c1", "open": {}}), "line 1 has no 'at'"),
    (lines({"at": -1, "fault": "persistence"}), "line 1 has no 'at'"),
    (lines({"at": 0, "fault": "persistence", "local": "stop"}), "exactly one of"),
    (lines({"at": 0, "direction": "received", "event": {"type": "x"}}), "needs a 'connection'"),
    (lines({"at": 0, "connection": "c", "direction": "sideways", "event": {"type": "x"}}),
     "needs a direction"),
    (lines({"at": 5, "local": "stop"}, {"at": 4, "local": "stop"}), "line 2 goes back in time"),
])
def test_a_malformed_script_is_a_usage_error_naming_its_line(script: bytes, why: str) -> None:
    with pytest.raises(UsageError, match=why):
        parse_script(script)


def test_usage_errors_never_quote_the_script() -> None:
    with pytest.raises(UsageError) as raised:
        parse_script(b'{"at": 0, "api_key": "sk-hidden-hidden-hidden-hidden"\n')
    assert "hidden" not in str(raised.value)


def test_blank_lines_are_skipped_and_keep_their_numbers() -> None:
    parsed = parse_script(b"\n" + lines(OPEN) + b"  \n" + lines({"at": 1, "local": "stop"}))
    assert [(line.line, line.kind) for line in parsed] == [(2, "open"), (4, "local")]


def test_an_event_of_a_connection_never_opened_is_refused() -> None:
    script = parse_script(lines({"at": 0, "connection": "c9", "direction": "received",
                                 "event": {"type": "x"}}))
    with pytest.raises(UsageError, match="never opened"):
        list(plan_replay(script, START))


def test_a_connection_opened_twice_is_refused() -> None:
    with pytest.raises(UsageError, match="already open"):
        list(plan_replay(parse_script(lines(OPEN, OPEN)), START))


def test_the_plan_sanitizes_endpoint_and_payload_and_marks_the_append_a_fault_fails() -> None:
    script = parse_script(lines(
        OPEN,
        {"at": 7, "connection": "c1", "direction": "received",
         "event": {"type": "x", "event_id": "e1", "password": "p"}},
        {"at": 8, "fault": "persistence"},
        {"at": 9, "connection": "c1", "direction": "received", "event": {"type": "y"}},
    ))
    planned = list(plan_replay(script, START))
    assert isinstance(planned[0], PlannedRecord)
    assert planned[0].record["endpoint"] == "wss://api.example.com/v1?api_key=REDACTED"
    assert isinstance(planned[1], PlannedRecord)
    assert planned[1].record["payload"] == {"type": "x", "event_id": "e1",
                                            "password": "[REDACTED]"}
    assert planned[1].record["redactions"] == ["/password"]
    assert planned[1].record["observedAt"] == "2026-01-01T00:00:00.007Z"
    # The fault marks the next record: its append fails (after its media, RT-7).
    assert isinstance(planned[2], PlannedRecord) and planned[2].fails == 3
    assert planned[1].fails is None and len(planned) == 3


def test_the_virtual_clock_crosses_days() -> None:
    assert timestamp_at("2026-12-31T23:59:59.999Z", 2) == "2027-01-01T00:00:00.001Z"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "persyk_session.cli", *args],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("example", ["two-turn-voice.jsonl", "credentials-everywhere.jsonl"])
def test_the_shipped_examples_replay_as_documented(example: str, tmp_path: Path) -> None:
    session = tmp_path / "s"
    assert run("create", str(session), "--json").returncode == 0
    done = run("replay", str(session), "--script", str(EXAMPLES / example), "--leaf-null",
               "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["halted"] is None and result["connections"] == 1
    index = open_session(session).index
    assert index.valid
    assert index.counts_by_type()["realtime_event"] == result["evidence"]
    stored = (session / "session.jsonl").read_text("utf-8")
    assert "EXAMPLE" not in stored  # every example secret is spelled with EXAMPLE


def test_the_voice_example_counts_its_audio_and_local_lines(tmp_path: Path) -> None:
    session = tmp_path / "s"
    run("create", str(session), "--json")
    result = json.loads(run("replay", str(session), "--script",
                            str(EXAMPLES / "two-turn-voice.jsonl"), "--leaf-null",
                            "--json").stdout)
    script = [json.loads(line) for line in (EXAMPLES / "two-turn-voice.jsonl").open("rb")]
    assert result["notReplayed"] == sum(1 for line in script if "audio" in line)
    assert result["notReplayed"] == 6  # six lines of capture frames, and no recording ran


def test_replay_needs_an_explicit_leaf_and_changes_nothing_without_it(tmp_path: Path) -> None:
    session = tmp_path / "s"
    run("create", str(session), "--json")
    before = (session / "session.jsonl").read_bytes()
    done = run("replay", str(session), "--script", str(EXAMPLES / "two-turn-voice.jsonl"))
    assert done.returncode == 2 and "leaf" in done.stderr
    assert (session / "session.jsonl").read_bytes() == before


def test_a_script_that_is_not_a_regular_file_is_refused_without_hanging(tmp_path: Path) -> None:
    import os

    session = tmp_path / "s"
    run("create", str(session), "--json")
    fifo = tmp_path / "script.fifo"
    os.mkfifo(fifo)
    done = run("replay", str(session), "--script", str(fifo), "--leaf-null", "--json")
    assert done.returncode == 2 and "PATH_NOT_FOUND" in done.stdout + done.stderr


def test_the_examples_follow_the_script_schema() -> None:
    from jsonschema import Draft202012Validator
    from persyk_contract import schema

    validator = Draft202012Validator(schema("realtime/script-line.schema.json"))
    for example in sorted(EXAMPLES.glob("*.jsonl")):
        for number, line in enumerate(example.open("rb"), start=1):
            errors = list(validator.iter_errors(json.loads(line)))
            assert not errors, f"{example.name} line {number}: {errors[0].message}"


def test_a_chunk_waits_for_the_capture_then_reuses_its_range() -> None:
    import base64

    from persyk_session.realtime._evidence import CaptureFrames, StopCapture

    frames = bytes(range(10))
    chunk = {"at": 1, "connection": "c1", "direction": "send_attempt", "captureOffset": 0,
             "event": {"type": "input_audio_buffer.append",
                       "audio": base64.b64encode(frames).decode()}}
    steps = list(plan_replay(parse_script(lines(
        OPEN, chunk, {"at": 2, "audio": {"pcm16_b64": base64.b64encode(frames).decode()}},
    )), START, recording=True))
    assert [type(step).__name__ for step in steps] == [
        "PlannedRecord", "CaptureFrames", "PlannedRecord", "StopCapture"]
    assert isinstance(steps[1], CaptureFrames) and steps[1].data == frames
    record = steps[2]
    assert isinstance(record, PlannedRecord) and isinstance(steps[3], StopCapture)
    assert record.record["payload"]["audio"] == ""
    assert record.media[0].wav_range == (44, 54) and record.media[0].data == frames


def test_without_a_recording_audio_lines_are_not_written_and_input_gets_its_own_asset() -> None:
    import base64

    chunk = {"at": 1, "connection": "c1", "direction": "send_attempt", "captureOffset": 0,
             "event": {"type": "input_audio_buffer.append", "audio": "AAAA"}}
    steps = list(plan_replay(parse_script(lines(
        OPEN, {"at": 0, "audio": {"pcm16_b64": base64.b64encode(b"ab").decode()}}, chunk,
    )), START))
    assert [type(step).__name__ for step in steps] == ["PlannedRecord", "PlannedRecord"]
    record = steps[1]
    assert isinstance(record, PlannedRecord) and record.media[0].wav_range is None


@pytest.mark.parametrize(("start", "at", "expected"), [
    ("2026-01-01T00:00:00Z", 7, "2026-01-01T00:00:00.007Z"),
    ("2026-01-01T00:00:00.5Z", 1, "2026-01-01T00:00:00.501Z"),
    ("2026-01-01T00:00:00.123456789Z", 0, "2026-01-01T00:00:00.123Z"),
    ("2026-01-01T01:30:00+01:30", 2, "2026-01-01T00:00:00.002Z"),
    ("2025-12-31T23:00:00-01:00", 0, "2026-01-01T00:00:00.000Z"),
], ids=["no-fraction", "one-digit", "nine-digits", "plus-offset", "minus-offset"])
def test_the_virtual_clock_starts_at_any_header_timestamp(
    start: str, at: int, expected: str
) -> None:
    """ENV-4 allows these in a header; replay crashed on all but ``.fffZ``."""
    assert timestamp_at(start, at) == expected
