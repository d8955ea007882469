"""The inputs of ``persyk-conformance bench``: deterministic session generators and their manifest.

The generators are seeded, so the same parameters always give the same bytes; the manifest of a
run names every input with its size and SHA-256, so two reports are known to have timed the same
bytes. ``benchmarks/_sessions.py`` (the pytest-benchmark suites) uses the same generators. The
facts a workload checks a result against (entry counts, the leaf's path) are computed here from
the generated lines with orjson alone, never by running an implementation. Nothing here is timed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from persyk_conformance import records as kit
from persyk_conformance._bounded import refuse_special

__all__ = [
    "DataStore",
    "Input",
    "conversation_records",
    "session_facts",
    "write_audio_session",
    "write_branched_session",
    "write_repository",
    "write_text_session",
]

HEADER_ID = "00000000-0000-4000-8000-00000000be00"
WORDS = [
    "session", "record", "parent", "branch", "leaf", "message", "assistant", "context", "audio",
    "capture", "provider", "ordering", "removal", "label", "archive", "recording", "canonical",
    "history", "naïve", "café", "Grüße", "東京", "🎧",
]
CHUNK = 1 << 20
NEEDLE = "Zebracorn"  # the search query; one session in NEEDLE_EVERY holds it
NEEDLE_EVERY = 200
VARIANTS = 8


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _encode(obj: dict[str, Any]) -> bytes:
    # orjson rather than kit.line: the same bytes for these records, and much faster for the
    # hundreds of megabytes a benchmark session takes.
    return orjson.dumps(obj) + b"\n"


def _message(rng: random.Random, i: int) -> dict[str, Any]:
    kind = i % 5
    if kind == 0:
        return {"role": "user", "content": [{"type": "text", "text": _text(rng, 40)}]}
    if kind == 1:
        return {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": _text(rng, 20)},
                {"type": "toolCall", "id": f"call{i}", "name": "read",
                 "arguments": {"path": "a.txt"}},
            ],
            "provider": "openai", "model": "gpt-realtime", "usage": {"input": 120, "output": 40},
            "stopReason": "toolUse",
        }
    if kind == 2:
        return {
            "role": "toolResult", "toolCallId": f"call{i - 1}", "toolName": "read",
            "isError": False, "content": [{"type": "text", "text": _text(rng, 60)}],
        }
    return {"role": "assistant", "content": [{"type": "text", "text": _text(rng, 80)}]}


def conversation_records(
    rng: random.Random, count: int, *, branch_every: int = 0
) -> Iterator[bytes]:
    """User/assistant/tool exchanges; every ``branch_every`` entries the chain forks back."""
    parent: str | None = None
    previous: list[str] = []
    for i in range(count):
        entry_id = f"e{i:08d}"
        if branch_every and i and i % branch_every == 0 and len(previous) > 10:
            parent = previous[-10]  # fork: continue from an older entry
        message = _message(rng, i)
        message["timestamp"] = 1767225600000 + i
        yield _encode(kit.message(entry_id, parent, message, t=i))
        previous.append(entry_id)
        parent = entry_id


def _write(path: Path, chunks: Iterator[bytes], limit: int) -> None:
    tmp = path.with_suffix(".tmp")
    written = 0
    with open(tmp, "wb") as out:
        out.write(_encode(kit.header(HEADER_ID)))
        for chunk in chunks:
            out.write(chunk)
            written += len(chunk)
            if written >= limit:
                break
    os.replace(tmp, path)


def write_text_session(path: Path, target_bytes: int) -> None:
    """A linear conversation of about ``target_bytes`` (records of ~670 bytes)."""
    _write(path, conversation_records(random.Random(1), 10**9), target_bytes)


def write_branched_session(path: Path, entries: int) -> None:
    """``entries`` messages that fork every 50 entries, so ancestry differs from file order."""
    _write(path, conversation_records(random.Random(2), entries, branch_every=50), 1 << 62)


def _audio_records(payload_bytes: int) -> Iterator[bytes]:
    audio = base64.b64encode(hashlib.shake_256(b"pcm").digest(payload_bytes * 3 // 4)).decode()
    rng = random.Random(3)
    parent: str | None = None
    for i in range(10**9):
        entry_id = f"a{i:08d}"
        if i % 4 == 3:
            body: dict[str, Any] = {
                "type": "message",
                "message": {"role": "user", "content": [{"type": "text", "text": _text(rng, 20)}],
                            "timestamp": 1767225600000 + i},
            }
        else:
            body = {
                "type": "realtime_event", "connectionId": "conn-1", "direction": "incoming",
                "observation": "received", "observedAt": kit.ts(i), "sequence": i,
                "payload": {"type": "response.output_audio.delta", "delta": audio},
            }
        kind = body.pop("type")
        yield _encode(kit.entry(kind, entry_id, parent, i, **body))
        parent = entry_id


def write_audio_session(path: Path, target_bytes: int, payload_bytes: int = 512 * 1024) -> None:
    """Realtime events carrying base64 audio payloads of ``payload_bytes`` between short
    messages, about ``target_bytes`` in all."""
    _write(path, _audio_records(payload_bytes), target_bytes)


def _repository_body(rng: random.Random, target: int, needle: bool) -> bytes:
    """The entries of one session of about ``target`` bytes (header excluded)."""
    out = bytearray()
    for record in conversation_records(rng, 10**9):
        out += record
        if len(out) >= target:
            break
    if needle:
        out += _encode(kit.user("needle", None, f"the {NEEDLE} was here"))
    return bytes(out)


def write_repository(root: Path, sessions: int, total: int) -> list[str]:
    """``sessions`` session directories of ``total / sessions`` bytes each under ``root``; one
    in NEEDLE_EVERY holds NEEDLE. Returns the names of those that hold it."""
    rng = random.Random(12)
    per = max(total // sessions, 200)
    plain = [_repository_body(rng, per, False) for _ in range(VARIANTS)]
    marked = [_repository_body(rng, per, True) for _ in range(VARIANTS)]
    holding = []
    for i in range(sessions):
        directory = root / f"s{i:06d}"
        directory.mkdir()
        created = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00.000Z"
        head = _encode(kit.header(f"s{i:06d}", created))
        body = (marked if i % NEEDLE_EVERY == 0 else plain)[i % VARIANTS]
        (directory / "session.jsonl").write_bytes(head + body)
        if i % NEEDLE_EVERY == 0:
            holding.append(directory.name)
    return holding


# --- facts and the manifest -------------------------------------------------------------------


def session_facts(path: Path) -> dict[str, Any]:
    """What a correct reader reports about a generated (valid) session: entry count, count by
    type, ids in file order, the last entry and the ids on its path from the root."""
    parents: dict[str, str | None] = {}
    by_type: dict[str, int] = {}
    ids: list[str] = []
    with open(path, "rb") as stream:
        stream.readline()  # the header
        for line in stream:
            record = orjson.loads(line)
            ids.append(record["id"])
            parents[record["id"]] = record["parentId"]
            by_type[record["type"]] = by_type.get(record["type"], 0) + 1
    path_ids: list[str] = []
    cursor = ids[-1] if ids else None
    while cursor is not None:
        path_ids.append(cursor)
        cursor = parents[cursor]
    path_ids.reverse()
    return {"entries": len(ids), "byType": by_type, "ids": ids,
            "leaf": ids[-1] if ids else None, "path": path_ids}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Input:
    """One generated input: a session file (or a directory of sessions) and what it holds."""

    name: str
    path: Path
    generator: str
    params: dict[str, Any]
    bytes: int
    sha256: str
    facts: dict[str, Any]

    def manifest(self) -> dict[str, Any]:
        return {"name": self.name, "generator": self.generator, "params": self.params,
                "bytes": self.bytes, "sha256": self.sha256}


class DataStore:
    """Generated inputs under ``root``, each beside a sidecar naming its generator, parameters,
    SHA-256 and facts. An input whose sidecar matches and whose bytes still hash to it is reused
    (``--data DIR`` across runs); anything else is generated again."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        # --data is the caller's folder: a planted link would have a generated input
        # written over its target, a FIFO would hang the hashing; both are refused, naming them.
        for _ in refuse_special(root):
            pass
        self.inputs: dict[str, Input] = {}

    def session(
        self, generator: str, params: dict[str, Any], write: Callable[[Path], None]
    ) -> Input:
        """A session directory holding ``session.jsonl`` as ``write(path)`` writes it."""
        name = generator + "-" + "-".join(f"{k}{v}" for k, v in sorted(params.items()))
        if name in self.inputs:
            return self.inputs[name]
        directory = self.root / name
        file = directory / "session.jsonl"
        sidecar = self.root / f"{name}.json"
        found = self._reuse(sidecar, generator, params, file)
        if found is None:
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir(parents=True)
            write(file)
            found = {"generator": generator, "params": params, "sha256": sha256_of(file),
                     "facts": session_facts(file)}
            sidecar.write_bytes(orjson.dumps(found))
        item = Input(name, directory, generator, params, file.stat().st_size, found["sha256"],
                     found["facts"])
        self.inputs[name] = item
        return item

    def repository(self, sessions: int, total: int) -> Input:
        """A root of ``sessions`` sessions (write_repository); the SHA-256 is of every file's
        name and bytes in name order."""
        params = {"sessions": sessions, "bytes": total}
        name = f"repository-sessions{sessions}-bytes{total}"
        if name in self.inputs:
            return self.inputs[name]
        root = self.root / name
        sidecar = self.root / f"{name}.json"
        found = self._reuse(sidecar, "repository", params, root)
        if found is None:
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            holding = write_repository(root, sessions, total)
            found = {"generator": "repository", "params": params, "sha256": _tree_sha256(root),
                     "facts": {"holding": holding, "query": NEEDLE}}
            sidecar.write_bytes(orjson.dumps(found))
        size = sum(f.stat().st_size for f in root.glob("*/session.jsonl"))
        item = Input(name, root, "repository", params, size, found["sha256"], found["facts"])
        self.inputs[name] = item
        return item

    @staticmethod
    def _reuse(
        sidecar: Path, generator: str, params: dict[str, Any], target: Path
    ) -> dict[str, Any] | None:
        if not sidecar.is_file() or not target.exists():
            return None
        found: dict[str, Any] = orjson.loads(sidecar.read_bytes())
        if found.get("generator") != generator or found.get("params") != params:
            return None
        actual = _tree_sha256(target) if target.is_dir() else sha256_of(target)
        return found if actual == found.get("sha256") else None


def _tree_sha256(root: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(root.glob("*/session.jsonl")):
        digest.update(file.parent.name.encode() + b"\0")
        digest.update(sha256_of(file).encode())
    return digest.hexdigest()
