"""Interrupted-WAV recovery in the wrong order (against CAP-27): it appends
recording.interrupted first and repairs the WAV after, and a rerun that finds the recording
ended does nothing. Killed between the two, the WAV keeps its placeholder sizes for good, which
H-151 must catch. Every other operation is the reference's.
"""

import json
import os
import struct
import sys
from pathlib import Path

from _fake import serve
from persyk_session.adapter import capabilities, dispatch


def entries(session):
    lines = (Path(session) / "session.jsonl").read_bytes().splitlines()
    return [json.loads(line) for line in lines[1:]]


def recover_recording(args):
    session, recording = args["session"], args["recordingId"]
    ended = any(e.get("recordingId") == recording
                and e["type"] in ("recording.finished", "recording.interrupted")
                for e in entries(session))
    wav = Path(session) / "assets" / f"{recording}.wav"
    header = wav.read_bytes()[:44]
    rate, frame = struct.unpack_from("<I", header, 24)[0], 2 * struct.unpack_from("<H", header,
                                                                                   22)[0]
    frames = (os.stat(wav).st_size - 44) // frame
    if ended:
        return {"result": {"action": "none", "frames": frames, "interrupted": None}}
    record = {"type": "recording.interrupted", "id": args.get("id", "interrupted"),
              "parentId": entries(session)[-1]["id"],
              "timestamp": args.get("timestamp", "2026-01-01T00:00:00.000Z"),
              "recordingId": recording, "reason": "capture-interrupted",
              "durationMs": frames * 1000 // rate}
    dispatch("append", {"session": session, "records": [record]})
    dispatch("recoverRecording", args)  # repairs the WAV; the recording has ended already
    return {"result": {"action": "recovered", "frames": frames, "interrupted": record["id"]}}


def answer(request):
    if request["op"] == "recoverRecording":
        return recover_recording(request["args"])
    return dispatch(request["op"], request["args"])


sys.exit(serve(answer, capabilities=tuple(capabilities())))
