"""The write workloads of ``persyk-conformance bench``: single-record and 256-record appends with
fsync, identical-retry detection, recovery of a torn tail, a capture. Each implementation (and
the floor) writes to its own copy; every acknowledged write is read back from the file before
its time counts."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Any

import orjson
from persyk_conformance import records as kit

from ._data import DataStore, write_audio_session
from ._floors import bare_appends, conforming_capture, preserve_and_cut, read_tail_record
from ._workloads import FSYNC_PRECISION, Call, Prepared, Workload, expect, no_error, scaled

__all__ = ["AppendBatch", "AppendSingle", "Capture", "RecoverTorn", "RetryLarge", "RetrySmall"]

TS = "2026-01-01T00:00:00.000Z"
BATCH = 256
FRAGMENT = (b'{"type":"message","id":"torn","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
            b'"message":{"role":"user","content":[{"type":"text","text":"cut her')
RATE = 24000
CHUNK_FRAMES = RATE // 10  # 100 ms of 16-bit mono audio a write


def _user(entry_id: str, parent: str | None) -> dict[str, Any]:
    return {
        "type": "message", "id": entry_id, "parentId": parent, "timestamp": TS,
        "message": {"role": "user", "timestamp": 1767225600000,
                    "content": [{"type": "text", "text": "a short user message " * 4}]},
    }


def _line(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


def write_chain_session(path: Path, entries: int) -> None:
    """A valid session of ``entries`` chained user messages e0, e1, ..."""
    with open(path, "wb") as out:
        out.write(_line(kit.header("bench")))
        for i in range(entries):
            out.write(_line(_user(f"e{i}", f"e{i - 1}" if i else None)))


def _last_id(file: Path) -> Any:
    size = file.stat().st_size
    with open(file, "rb") as stream:
        stream.seek(max(size - (1 << 16), 0))
        tail = stream.read()
    start = tail.rfind(b"\n", 0, len(tail) - 1) + 1
    return orjson.loads(tail[start:]).get("id")


def _make_durable(file: Path) -> None:
    """Sync a working copy and its directory before anything is timed. Otherwise the first
    fsync of a timed repetition writes the whole fresh copy back: the floor, which has no
    warm-up, paid it in its first repetition (recover-torn@1000MB: 0.44 s, then 0.5 ms twice,
    a spread of 880x, in 2026-12-03-bench-evening.json), while the implementations had paid
    it in their untimed probe and warm-up, so the floor measured work their figures did not."""
    for path, flags in ((file, os.O_RDONLY), (file.parent, os.O_RDONLY | os.O_DIRECTORY)):
        fd = os.open(path, flags)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class Chain:
    """One implementation's (or the floor's) copy of a session and the records that continue it."""

    def __init__(self, directory: Path, source: Path, last: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.session = directory / "session"
        self.session.mkdir()
        shutil.copyfile(source / "session.jsonl", self.file)
        _make_durable(self.file)
        self.parent = last
        self.count = 0
        self.repetition = 0  # operations in one repetition
        self.retry: dict[str, Any] = {}  # the record a retry workload sends again

    @property
    def file(self) -> Path:
        return self.session / "session.jsonl"

    def take(self, count: int) -> list[dict[str, Any]]:
        records = []
        for _ in range(count):
            entry_id = f"n{self.count}"
            self.count += 1
            records.append(_user(entry_id, self.parent))
            self.parent = entry_id
        return records


class AppendSingle(Workload):
    name = "append-single"
    operations = ("append",)
    precision_target = FSYNC_PRECISION
    title = "single-record append with fsync (10,000-entry session at scale 1)"
    capability = "append"
    unit = "append"
    floor_title = "a bare write+fsync of the same bytes (O_APPEND)"
    round_trip_target = 1.5
    per_batch = 1
    default_count = 100  # appends of one repetition (scaled, at least min_count)
    min_count = 5

    def prepare(self, store: DataStore) -> Prepared:
        entries = scaled(10_000, self.scale, 100)
        item = store.session("chain", {"entries": entries},
                             lambda p: write_chain_session(p, entries))
        count = scaled(self.default_count, self.scale, self.min_count)
        return Prepared((item,), item.bytes,
                        {"entries": entries, "records": self.per_batch, "perRepetition": count})

    def setup(self, prepared: Prepared, directory: Path) -> Chain:
        chain = Chain(directory, prepared.first.path, prepared.first.facts["leaf"])
        chain.repetition = prepared.params["perRepetition"]
        return chain

    def units(self, prepared: Prepared) -> int:
        return int(prepared.params["perRepetition"])

    def floor(self, prepared: Prepared, state: Chain) -> float:
        count: int = prepared.params["perRepetition"]
        chunks = [b"".join(_line(r) for r in state.take(self.per_batch)) for _ in range(count)]
        began = time.perf_counter()
        bare_appends(state.file, chunks)
        return (time.perf_counter() - began) / count

    def measure(self, call: Call, state: Chain) -> tuple[float, dict[str, Any]]:
        count = state.repetition
        size = state.file.stat().st_size
        for _ in range(count):
            leaf = state.parent
            batch = state.take(self.per_batch)
            result = call("append", {"session": str(state.session), "records": batch,
                                     "leaf": leaf})
            no_error(result, "append")
            ids = [r["id"] for r in batch]
            expect(result.get("committed") == ids, "committed does not list the records sent")
            expect(result.get("alreadyPresent") == [], "new records reported already present")
        expect(state.file.stat().st_size > size, "the session file did not grow")
        expect(_last_id(state.file) == state.parent, "the last record on disk is not the last sent")
        return call.elapsed / count, {}


class AppendBatch(AppendSingle):
    name = "append-batch"
    title = f"{BATCH}-record batch append with fsync (10,000-entry session at scale 1)"
    unit = "batch"
    per_batch = BATCH
    round_trip_target = 3.0
    default_count = 10
    min_count = 2


class RetrySmall(Workload):
    name = "retry-100"
    operations = ("append",)
    title = "identical-retry detection, 100-entry session"
    capability = "append"
    unit = "retry"
    # One no-op round trip alone is about ten times this floor, so the target (2x) is against
    # the floor plus a no-op round trip of the same request (Workload.round_trip_target).
    floor_title = ("read the tail and compare the last record; the figure includes the "
                   "adapter's round trip, which this floor does not make")
    round_trip_target = 2.0
    entries = 100
    scales_entries = False

    def prepare(self, store: DataStore) -> Prepared:
        entries = scaled(self.entries, self.scale, 200) if self.scales_entries else self.entries
        item = store.session("chain", {"entries": entries},
                             lambda p: write_chain_session(p, entries))
        count = scaled(100, self.scale, 10)
        return Prepared((item,), item.bytes, {"entries": entries, "perRepetition": count})

    def setup(self, prepared: Prepared, directory: Path) -> Chain:
        chain = Chain(directory, prepared.first.path, prepared.first.facts["leaf"])
        entries = prepared.params["entries"]
        chain.retry = _user(f"e{entries - 1}", f"e{entries - 2}")
        chain.repetition = prepared.params["perRepetition"]
        return chain

    def units(self, prepared: Prepared) -> int:
        return int(prepared.params["perRepetition"])

    def floor(self, prepared: Prepared, state: Chain) -> float:
        count: int = prepared.params["perRepetition"]
        began = time.perf_counter()
        for _ in range(count):
            if not read_tail_record(state.file, state.retry):
                raise RuntimeError("the floor did not find the last record at the tail")
        return (time.perf_counter() - began) / count

    def measure(self, call: Call, state: Chain) -> tuple[float, dict[str, Any]]:
        record = state.retry
        size = state.file.stat().st_size
        count = state.repetition
        for _ in range(count):
            result = call("append", {"session": str(state.session), "records": [record],
                                     "leaf": record["parentId"]})
            no_error(result, "append")
            expect(result.get("committed") == [], "an identical retry was written again")
            expect(result.get("alreadyPresent") == [record["id"]],
                   "an identical retry is not reported already present")
        expect(state.file.stat().st_size == size, "a retry changed the session file")
        return call.elapsed / count, {}


class RetryLarge(RetrySmall):
    name = "retry-20000"
    title = "identical-retry detection (20,000-entry session at scale 1)"
    entries = 20_000
    scales_entries = True


class RecoverTorn(Workload):
    name = "recover-torn"
    operations = ("recover",)
    precision_target = FSYNC_PRECISION
    title = "recovery of a torn tail, 151-byte fragment (1 GB session at scale 1)"
    capability = "recover"
    unit = "recovery"
    floor_title = "read the tail, write+fsync a copy, truncate+fsync"

    def prepare(self, store: DataStore) -> Prepared:
        size = self.target_bytes(1024)
        item = store.session("audio", {"bytes": size, "payload": 512 * 1024},
                             lambda p: write_audio_session(p, size))
        return Prepared((item,), item.bytes, {"fragment": len(FRAGMENT)})

    def setup(self, prepared: Prepared, directory: Path) -> Chain:
        return Chain(directory, prepared.first.path, prepared.first.facts["leaf"])

    @staticmethod
    def _tear(state: Chain) -> int:
        shutil.rmtree(state.session / "recovery", ignore_errors=True)
        size = state.file.stat().st_size
        with open(state.file, "ab") as stream:
            stream.write(FRAGMENT)
        return size

    def floor(self, prepared: Prepared, state: Chain) -> float:
        self._tear(state)
        keep = state.session / "kept"
        keep.unlink(missing_ok=True)
        began = time.perf_counter()
        preserve_and_cut(state.file, len(FRAGMENT), keep)
        return time.perf_counter() - began

    def measure(self, call: Call, state: Chain) -> tuple[float, dict[str, Any]]:
        size = self._tear(state)
        result = call("recover", {"session": str(state.session)})
        no_error(result, "recover")
        expect(result.get("action") == "truncated", f"action {result.get('action')!r}, "
               "not 'truncated'")
        expect(state.file.stat().st_size == size, "the committed bytes were not kept exactly")
        preserved = result.get("preserved")
        expect(isinstance(preserved, str)
               and (state.session / preserved).is_file()
               and (state.session / preserved).read_bytes() == FRAGMENT,
               "the fragment was not preserved")
        return call.elapsed, {}


_STARTED = _line({
    "type": "recording.started", "id": "started", "parentId": None, "timestamp": TS,
    "recordingId": "r1",
    "asset": {"status": "available", "path": "assets/r1.wav", "mimeType": "audio/wav"},
})


def _finished(duration_ms: int) -> bytes:
    return _line({"type": "recording.finished", "id": "finished", "parentId": "started",
                  "timestamp": TS, "recordingId": "r1", "durationMs": duration_ms,
                  "outcome": "complete"})


class Capture(Workload):
    name = "capture"
    operations = ("captureStart", "captureWrite", "captureFinish")
    precision_target = FSYNC_PRECISION
    title = "a capture, 24 kHz mono, 100 ms writes (60 s at scale 1)"
    capability = "capture"
    unit = "second of audio"
    # The least a conforming capture does (_floors.conforming_capture): six syncs a capture,
    # none per write; until 2026-12-03 one sync (write_pcm), less than the contract demands.
    floor_title = ("the contract's least capture: assets/ and the WAV header synced, "
                   "recording.started synced, the frames, sizes synced, recording.finished synced")
    round_trip_target = 3.0

    def prepare(self, store: DataStore) -> Prepared:
        seconds = scaled(60, self.scale, 1)
        pcm = hashlib.shake_256(b"capture").digest(seconds * RATE * 2)
        step = CHUNK_FRAMES * 2
        chunks = [pcm[i:i + step] for i in range(0, len(pcm), step)]
        return Prepared((), len(pcm), {"seconds": seconds, "rate": RATE, "writes": len(chunks)},
                        {"chunks": chunks, "seconds": seconds})

    def setup(self, prepared: Prepared, directory: Path) -> Any:
        directory.mkdir(parents=True, exist_ok=True)
        return {"directory": directory, "next": 0, "prepared": prepared}

    def units(self, prepared: Prepared) -> int:
        return int(prepared.data["seconds"])

    def floor(self, prepared: Prepared, state: Any) -> float:
        state["next"] += 1
        session = state["directory"] / f"floor-{state['next']}"
        session.mkdir()
        (session / "session.jsonl").write_bytes(_line(kit.header(f"floor-{state['next']}")))
        seconds: int = prepared.data["seconds"]
        began = time.perf_counter()
        conforming_capture(session, prepared.data["chunks"], RATE, _STARTED,
                           _finished(seconds * 1000))
        elapsed = time.perf_counter() - began
        shutil.rmtree(session)
        return elapsed / seconds

    def measure(self, call: Call, state: Any) -> tuple[float, dict[str, Any]]:
        prepared: Prepared = state["prepared"]
        state["next"] += 1
        session = state["directory"] / f"s{state['next']}"
        session.mkdir()
        (session / "session.jsonl").write_bytes(_line(kit.header(f"capture-{state['next']}")))
        started = call("captureStart", {"session": str(session), "recordingId": "r1",
                                        "leaf": None, "rate": RATE, "channels": 1})
        no_error(started, "captureStart")
        for chunk in prepared.data["chunks"]:
            no_error(call("captureWrite", {"handle": started["handle"],
                                           "pcm": base64.b64encode(chunk).decode()}),
                     "captureWrite")
        finished = call("captureFinish", {"handle": started["handle"]})
        no_error(finished, "captureFinish")
        frames = prepared.size_bytes // 2
        expect(finished.get("frames") == frames, f"{finished.get('frames')} frames, not {frames}")
        expect(finished.get("outcome") == "complete", "the capture is not complete")
        return call.elapsed / prepared.data["seconds"], {}
