"""A JSON tree that keeps what a mistaken reader would see and nothing the reference needs lost:
number literals as written (``Num``), every member of an object in order, duplicates included
(``Obj``). Python's ``json`` is lenient where the strict grammar is not (NaN, lone surrogates),
which is fine: a tree is rewritten only where a mistake changes it, and a line whose tree did
not change is handed on byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# The members whose values are free JSON (ENT-3 data, CTX-9/CTX-10 details, tool arguments,
# provider payloads): a mistake about the format's own members does not reach inside them.
FREE_MEMBERS: frozenset[str] = frozenset({"data", "details", "arguments", "payload"})


class Num(str):
    """A number literal, exactly as written."""


@dataclass(slots=True)
class Obj:
    pairs: list[tuple[str, Any]]

    def get(self, name: str) -> Any:
        return next((value for key, value in self.pairs if key == name), None)


def parse(line: bytes) -> Any | None:
    """The tree of ``line``, or None when Python's json cannot read it at all."""
    try:
        text = line.decode("utf-8")
        return json.loads(text, object_pairs_hook=Obj, parse_float=Num, parse_int=Num,
                          parse_constant=Num)
    except (ValueError, RecursionError):
        return None


def dump(value: Any) -> bytes:
    return _dump(value).encode("utf-8")


def _dump(value: Any) -> str:
    if isinstance(value, Num):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # ASCII escapes: a lone surrogate stays a \u escape
    if isinstance(value, Obj):
        return "{" + ",".join(f"{json.dumps(k)}:{_dump(v)}" for k, v in value.pairs) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump(item) for item in value) + "]"
    return json.dumps(value)


Change = Callable[[Any], Any]


def through_tree(change: Change) -> Callable[[bytes], bytes]:
    """A line view: the line rewritten from ``change(tree)`` where that differs, else as is."""

    def view(line: bytes) -> bytes:
        stripped = line.rstrip(b"\r")
        tree = parse(stripped)
        if tree is None:
            return line
        changed = change(tree)
        if dump(changed) == dump(tree):
            return line
        return dump(changed)

    return view


def map_objects(change: Callable[[Obj, int], Obj], *, free: bool = False) -> Change:
    """Apply ``change(obj, depth)`` to every object, bottom up; ``free``: inside free members
    too."""

    def walk(value: Any, depth: int) -> Any:
        if isinstance(value, Obj):
            pairs = [(k, v if (k in FREE_MEMBERS and not free) else walk(v, depth + 1))
                     for k, v in value.pairs]
            return change(Obj(pairs), depth)
        if isinstance(value, list):
            return [walk(item, depth + 1) for item in value]
        return value

    return lambda tree: walk(tree, 1)


def map_members(change: Callable[[str, Any], Any], *, free: bool = False) -> Change:
    """Apply ``change(name, value)`` to every member value outside free members."""

    def each(obj: Obj, depth: int) -> Obj:
        return Obj([(k, change(k, v)) for k, v in obj.pairs])

    return map_objects(each, free=free)


def map_scalars(change: Callable[[Any], Any]) -> Change:
    """Apply ``change`` to every number and string value (keys excluded), everywhere."""

    def walk(value: Any) -> Any:
        if isinstance(value, Obj):
            return Obj([(k, walk(v)) for k, v in value.pairs])
        if isinstance(value, list):
            return [walk(item) for item in value]
        return change(value)

    return walk


def depth_of(value: Any) -> int:
    if isinstance(value, Obj):
        return 1 + max((depth_of(v) for _, v in value.pairs), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def last_wins(obj: Obj) -> Obj:
    seen: dict[str, Any] = {}
    for key, value in obj.pairs:
        seen.pop(key, None)
        seen[key] = value
    return Obj(list(seen.items()))


def first_wins(obj: Obj) -> Obj:
    seen: dict[str, Any] = {}
    for key, value in obj.pairs:
        seen.setdefault(key, value)
    return Obj(list(seen.items()))
