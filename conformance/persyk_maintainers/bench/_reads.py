"""The read workloads of ``persyk-conformance bench``: validate, context, info, a paged walk,
search. Each checks its answer against facts computed from the generated lines
(``_data.session_facts``), never against another implementation."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ._data import DataStore, Input, write_audio_session, write_branched_session, write_text_session
from ._floors import parse_every_line, parse_every_line_mapped, peak_rss_kib, scan_for
from ._workloads import Call, Prepared, Workload, expect, no_error, scaled

__all__ = [
    "ContextBranched",
    "InfoAudio",
    "PagedWalk",
    "SearchRepository",
    "ValidateEvents",
    "ValidateShort",
]

PARSE_FLOOR = "orjson parses every line of the same file"
PAGE_SIZE = 1000


def _timed(function: Any, *args: Any) -> float:
    began = time.perf_counter()
    function(*args)
    return time.perf_counter() - began


# The size of the branched session at scale 1 (100,000 entries of ~666 bytes), in MB.
BRANCHED_MB = 66.6


def _branched(store: DataStore, scale: float) -> Input:
    """The branched session of the context and paged-read workloads (100,000 entries)."""
    entries = scaled(100_000, scale, 200)
    return store.session("branched", {"entries": entries},
                         lambda p: write_branched_session(p, entries))


def _validate(call: Call, prepared: Prepared) -> tuple[float, dict[str, Any]]:
    result = call("validate", {"session": str(prepared.first.path)})
    no_error(result, "validate")
    expect(result.get("valid") is True, "a valid session was reported invalid")
    expect(result.get("errors") == [], "a valid session was reported with errors")
    return call.elapsed, {}


class ValidateShort(Workload):
    name = "validate-short"
    title = "validate a session of short records (~670 bytes; 100 MB at scale 1)"
    floor_title = PARSE_FLOOR

    def probe(self, call: Call, state: Prepared, scratch: Path) -> None:
        """The input's first lines, then one that is not JSON: an implementation that answers
        "valid" without reading is caught here."""
        broken = scratch / "probe"
        broken.mkdir(parents=True, exist_ok=True)
        with open(state.first.path / "session.jsonl", "rb") as stream:
            head = b"".join(stream.readline() for _ in range(3))
        (broken / "session.jsonl").write_bytes(head + b"{not json}\n")
        result = call("validate", {"session": str(broken)})
        no_error(result, "validate")
        expect(result.get("valid") is False,
               "a session whose line 4 is not JSON was reported valid")

    def prepare(self, store: DataStore) -> Prepared:
        size = self.target_bytes(100)
        item = store.session("text", {"bytes": size}, lambda p: write_text_session(p, size))
        return Prepared((item,), item.bytes, {"entries": item.facts["entries"]})

    def floor(self, prepared: Prepared, state: Any) -> float:
        return _timed(parse_every_line, prepared.first.path / "session.jsonl")

    def measure(self, call: Call, state: Any) -> tuple[float, dict[str, Any]]:
        return _validate(call, state)


class ValidateEvents(ValidateShort):
    name = "validate-events"
    title = "validate a session of 16 KiB realtime events (100 MB at scale 1)"

    def prepare(self, store: DataStore) -> Prepared:
        size = self.target_bytes(100)
        item = store.session("audio", {"bytes": size, "payload": 16384},
                             lambda p: write_audio_session(p, size, 16384))
        return Prepared((item,), item.bytes, {"entries": item.facts["entries"]})


class ContextBranched(Workload):
    name = "context-branched"
    operations = ("context",)
    title = "context of branched entries, forking every 50 (100,000 at scale 1)"
    floor_title = PARSE_FLOOR

    def prepare(self, store: DataStore) -> Prepared:
        item = _branched(store, self.scale)
        return Prepared((item,), item.bytes, {"entries": item.facts["entries"],
                                              "onPath": len(item.facts["path"])})

    def floor(self, prepared: Prepared, state: Any) -> float:
        return _timed(parse_every_line, prepared.first.path / "session.jsonl")

    def measure(self, call: Call, state: Prepared) -> tuple[float, dict[str, Any]]:
        facts = state.first.facts
        result = call("context", {"session": str(state.first.path)})
        no_error(result, "context")
        expect(result.get("leaf") == facts["leaf"], "the default leaf is not the last entry")
        ids = [m.get("id") for m in result.get("messages", [])]
        expect(len(ids) == len(facts["path"]),
               f"{len(ids)} messages instead of the {len(facts['path'])} on the leaf's path")
        expect(ids == facts["path"], "the messages are not the leaf's path, root first")
        return call.elapsed, {}


class InfoAudio(Workload):
    name = "info-audio"
    operations = ("info",)
    title = "info of an audio-heavy session, 512 KiB events (1 GB at scale 1; peak RSS)"
    floor_title = "orjson parses every line of the same file (memory-mapped)"
    fresh_process = True  # so that the peak resident set is this repetition's alone

    def prepare(self, store: DataStore) -> Prepared:
        size = self.target_bytes(1024)
        item = store.session("audio", {"bytes": size, "payload": 512 * 1024},
                             lambda p: write_audio_session(p, size))
        return Prepared((item,), item.bytes, {"entries": item.facts["entries"]})

    def floor(self, prepared: Prepared, state: Any) -> float:
        return _timed(parse_every_line_mapped, prepared.first.path / "session.jsonl")

    def measure(self, call: Call, state: Prepared) -> tuple[float, dict[str, Any]]:
        facts = state.first.facts
        result = call("info", {"session": str(state.first.path)})
        no_error(result, "info")
        counts = result.get("counts", {})
        expect(counts.get("entries") == facts["entries"],
               f"counts.entries is {counts.get('entries')}, not {facts['entries']}")
        expect(counts.get("byType") == facts["byType"], "counts.byType is wrong")
        expect(result.get("defaultLeaf") == facts["leaf"], "defaultLeaf is not the last entry")
        pid = call.adapter.pid
        peak = peak_rss_kib(pid) if pid is not None else None
        return call.elapsed, ({"peakRssKiB": peak} if peak is not None else {})


class PagedWalk(Workload):
    name = "paged-walk"
    operations = ("read",)
    title = f"paged read of every branched entry, pages of {PAGE_SIZE} (100,000 at scale 1)"
    capability = "paged-read"
    unit = "walk"
    floor_title = PARSE_FLOOR

    def prepare(self, store: DataStore) -> Prepared:
        # A point of the scaling series (--sizes) holds as many entries as fill its size: the
        # cost-against-size table is what shows the walk linear.
        scale = self.scale if self.size_mb is None else self.scale * self.size_mb / BRANCHED_MB
        item = _branched(store, scale)
        return Prepared((item,), item.bytes,
                        {"entries": item.facts["entries"], "pageSize": PAGE_SIZE})

    def floor(self, prepared: Prepared, state: Any) -> float:
        return _timed(parse_every_line, prepared.first.path / "session.jsonl")

    def measure(self, call: Call, state: Prepared) -> tuple[float, dict[str, Any]]:
        facts = state.first.facts
        ids: list[Any] = []
        cursor: str | None = None
        while True:
            args: dict[str, Any] = {"session": str(state.first.path), "pageSize": PAGE_SIZE}
            if cursor is not None:
                args["cursor"] = cursor
            result = call("read", args)
            no_error(result, "read")
            page = result.get("entries", [])
            expect(len(page) <= PAGE_SIZE, "a page holds more entries than asked")
            ids += [entry.get("id") for entry in page]
            cursor = result.get("nextCursor")
            if cursor is None:
                break
            expect(len(ids) <= facts["entries"], "the walk yields more entries than the file")
        expect(ids == facts["ids"], "the walk did not yield every entry once, in file order")
        return call.elapsed, {"pages": call.calls}


class SearchRepository(Workload):
    name = "search"
    operations = ("search",)
    title = "search sessions for a word one in 200 holds (1,000 sessions, 100 MB at scale 1)"
    capability = "search"
    floor_title = "every session file read in 1 MiB chunks and searched (lower().find)"

    def prepare(self, store: DataStore) -> Prepared:
        sessions = scaled(1000, self.scale, 20)
        item = store.repository(sessions, self.target_bytes(100))
        return Prepared((item,), item.bytes,
                        {"sessions": sessions, "holding": len(item.facts["holding"])})

    def floor(self, prepared: Prepared, state: Any) -> float:
        return _timed(scan_for, prepared.first.path, prepared.first.facts["query"])

    def measure(self, call: Call, state: Prepared) -> tuple[float, dict[str, Any]]:
        facts = state.first.facts
        names: list[str] = []
        cursor: str | None = None
        while True:
            args: dict[str, Any] = {"roots": [str(state.first.path)], "query": facts["query"],
                                    "limit": 50}
            if cursor is not None:
                args["cursor"] = cursor
            result = call("search", args)
            no_error(result, "search")
            names += [Path(str(r.get("location"))).name for r in result.get("results", [])]
            cursor = result.get("nextCursor")
            if cursor is None or len(names) > len(facts["holding"]):
                break
        expect(sorted(names) == sorted(facts["holding"]),
               f"{len(names)} results instead of the {len(facts['holding'])} sessions that match")
        return call.elapsed, {}
