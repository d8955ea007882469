"""The shape of a mistake and the layers that apply one to the reference.

A mistake is a layer over the reference's ``dispatch``: the adapter of an implementation that
differs from the reference in that one habit. Reading habits (a JSON library, a line reader, a
time parser) are emulated by giving the reference the *view* of the session file that the
mistaken reader would have: the line it would accept is rewritten into one the reference
accepts (same values, the fault gone), the line it would refuse into one the reference refuses.
Writing habits change what the reference wrote, or the calls it makes (``unittest.mock``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Dispatch = Callable[[str, dict[str, Any]], dict[str, Any]]
Layer = Callable[[Dispatch], Dispatch]

# The origins, in the order the results table lists them.
ORIGINS: tuple[str, ...] = (
    "Go", "Java", "JavaScript", "Rust", "Python", "time parsers", "URL parsers",
    "line readers", "ids and diagnostics", "cursors", "locks", "CR/LF and bytes on write",
    "prefix commits", "cleanup of a failed create", "recovery",
)
# The operations that read session.jsonl through the implementation's reader.
READING_OPS: frozenset[str] = frozenset(
    {"validate", "context", "info", "read", "append", "remove"})
READ_ONLY_OPS: frozenset[str] = frozenset({"validate", "context", "info", "read"})


@dataclass(frozen=True, slots=True)
class Mistake:
    """One switchable mistake: ``breaks`` names the MUST rules it breaks (the cases expected to
    catch it are data: registry.catching()); an allowed one has ``allowed`` (why), breaks
    none."""

    name: str
    origin: str
    does: str
    layer: Layer = field(repr=False, compare=False)
    breaks: tuple[str, ...] = ()
    allowed: str | None = None

    def dispatch(self, inner: Dispatch) -> Dispatch:
        return self.layer(inner)


def session_file(args: dict[str, Any]) -> Path | None:
    value = args.get("session")
    if not isinstance(value, str):
        return None
    path = Path(value)
    return path / "session.jsonl" if path.is_dir() else path


def split_lines(data: bytes) -> list[bytes]:
    """The physical lines without their LF; an unterminated last line is the last item, an
    empty last item means the file ended with LF."""
    return data.split(b"\n")


def on_lines(change: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    """A file view that changes each line (LF excluded) on its own."""

    def view(data: bytes) -> bytes:
        parts = split_lines(data)
        return b"\n".join([change(line) for line in parts[:-1]] + [parts[-1]])

    return view


def viewing(view: Callable[[bytes], bytes], *, records: bool = True) -> Layer:
    """The reader sees ``view(file bytes)`` in place of the file: read-only operations run on a
    private copy; append and remove run on the copy too and what they wrote is written after
    the real file's bytes. ``records``: the batch of an append goes through the same view."""

    def layer(inner: Dispatch) -> Dispatch:
        def dispatch(op: str, args: dict[str, Any]) -> dict[str, Any]:
            if op not in READING_OPS:
                return inner(op, args)
            args = _batch_through(view, op, args) if records else args
            file = session_file(args)
            if file is None or not file.is_file() or file.is_symlink():
                return inner(op, args)
            data = file.read_bytes()
            seen = view(data)
            if seen == data:
                return inner(op, args)
            return _on_copy(inner, op, args, file, data, seen)

        return dispatch

    return layer


def _batch_through(view: Callable[[bytes], bytes], op: str, args: dict[str, Any]
                   ) -> dict[str, Any]:
    if op != "append":
        return args
    if isinstance(args.get("records"), list):
        changed = []
        for record in args["records"]:
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
            seen = view(line + b"\n")[:-1]
            try:
                changed.append(record if seen == line else json.loads(seen))
            except ValueError:  # the view refuses it: keep the record, the reference judges
                changed.append(record)
        return {**args, "records": changed}
    return args


def _on_copy(inner: Dispatch, op: str, args: dict[str, Any], file: Path, data: bytes,
             seen: bytes) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="persyk-mistake-"))
    try:
        copy = scratch / "s"
        shutil.copytree(file.parent, copy, symlinks=True)
        target = copy / file.name
        target.write_bytes(seen)
        given = Path(args["session"])
        moved = str(copy) if given.is_dir() else str(target)
        result = inner(op, {**args, "session": moved})
        if op not in READ_ONLY_OPS:
            after = target.read_bytes()
            if after.startswith(seen) and len(after) > len(seen):
                with open(file, "ab") as out:
                    out.write(after[len(seen):])
            lock = file.parent / "session.lock"
            if (copy / "session.lock").exists() and not lock.exists():
                lock.touch()
        text = json.dumps(result).replace(str(copy), str(file.parent))
        return dict(json.loads(text))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def on_result(change: Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]]
              ) -> Layer:
    """The reply body of each call goes through ``change(op, args, body)``."""

    def layer(inner: Dispatch) -> Dispatch:
        def dispatch(op: str, args: dict[str, Any]) -> dict[str, Any]:
            return change(op, args, inner(op, args))

        return dispatch

    return layer


def around(wrap: Callable[[Dispatch, str, dict[str, Any]], dict[str, Any]]) -> Layer:
    """``wrap(inner, op, args)`` answers each call, calling the reference as it likes."""

    def layer(inner: Dispatch) -> Dispatch:
        def dispatch(op: str, args: dict[str, Any]) -> dict[str, Any]:
            return wrap(inner, op, args)

        return dispatch

    return layer


def patching(*patches: Callable[[], AbstractContextManager[Any]]) -> Layer:
    """Each call runs with the reference's functions replaced (``unittest.mock.patch``)."""

    def layer(inner: Dispatch) -> Dispatch:
        def dispatch(op: str, args: dict[str, Any]) -> dict[str, Any]:
            with ExitStack() as stack:
                for make in patches:
                    stack.enter_context(make())
                return inner(op, args)

        return dispatch

    return layer


def result_of(body: dict[str, Any]) -> dict[str, Any] | None:
    result = body.get("result")
    return result if isinstance(result, dict) else None


def walk_lines(value: Any) -> Iterator[dict[str, Any]]:
    """Every diagnostic-like object (a dict with an integer ``line``) inside a result."""
    if isinstance(value, dict):
        if isinstance(value.get("line"), int) and "code" in value:
            yield value
        for item in value.values():
            yield from walk_lines(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_lines(item)


def rewrite_new_bytes(file: Path, before: int, change: Callable[[bytes], bytes]) -> None:
    """Replace the bytes written past ``before`` with ``change(them)``."""
    data = file.read_bytes()
    if len(data) <= before:
        return
    tail = change(data[before:])
    fd = os.open(file, os.O_WRONLY)
    try:
        os.ftruncate(fd, before)
        os.pwrite(fd, tail, before)
    finally:
        os.close(fd)


def size_of(file: Path | None) -> int:
    try:
        return file.stat().st_size if file is not None else 0
    except OSError:
        return 0


def registry_names(mistakes: Sequence[Mistake]) -> list[str]:
    return [mistake.name for mistake in mistakes]
