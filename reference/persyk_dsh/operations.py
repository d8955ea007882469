"""The dsh-v0 operations: one function each, JSON arguments in, the JSON result out.

The command line (``persyk-session dsh ... --json``), the conformance adapter (profile
``dsh-v0``) and the runner's in-process path call these, so all answer alike. A refusal is a
result ``{"error": diagnostic}``; so is a file-system failure (``DSH_IO``).

The edge of the dsh core: the codec (``_codec.DshCodec``) is chosen here, once, by
``PERSYK_SESSION_MODE`` (``persyk_session._mode_name``), and passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from persyk_session._mode_name import MODE

from ._codec import DshCodec
from ._errors import DshCode, DshError
from ._readable import ReadableCodec
from ._store import DshStore, make_header

__all__ = ["DSH_OPERATIONS", "mode_codec", "op_append", "op_create", "op_list", "op_load"]

Operation = Callable[[dict[str, Any]], dict[str, Any]]

_HEADER_ARGS: Mapping[str, str] = {
    "parentSession": "parentSession", "seedLength": "seedLength",
    "delegationDepth": "delegationDepth", "origin": "origin", "agentPreset": "agentPreset",
}


@cache
def mode_codec() -> DshCodec:
    """The codec of the mode: the readable one never imports orjson or jsonschema-rs."""
    if MODE == "readable":
        return ReadableCodec()
    from .fast import FastCodec

    return FastCodec()


def _usage(what: str) -> DshError:
    return DshError.of(DshCode.USAGE, detail=what)


def _string(args: Mapping[str, Any], key: str, *, required: bool = True) -> str | None:
    value = args.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise _usage(f"{key} must be a string")
    return value


def _root(args: Mapping[str, Any]) -> DshStore:
    root = _string(args, "root")
    assert root is not None
    return DshStore(Path(root), mode_codec())


def _guarded(operation: Callable[[dict[str, Any]], dict[str, Any]]) -> Operation:
    def run(args: dict[str, Any]) -> dict[str, Any]:
        try:
            return operation(args)
        except DshError as error:
            return {"error": error.diagnostic.to_json()}
        except OSError:
            return {"error": DshError.of(DshCode.IO).diagnostic.to_json()}

    run.__name__ = operation.__name__
    run.__doc__ = operation.__doc__
    return run


@_guarded
def op_create(args: dict[str, Any]) -> dict[str, Any]:
    """DSH-17: the header of a new session; nothing is written."""
    _root(args)
    created_at = args.get("createdAt")
    if created_at is not None and type(created_at) is not int:
        raise _usage("createdAt must be an integer")
    extra = {key: args[arg] for arg, key in _HEADER_ARGS.items() if arg in args}
    header = make_header(_string(args, "id") or "", _string(args, "cwd", required=False),
                         created_at, **extra)
    return {"header": header}


def read_events(data: bytes) -> list[Any]:
    """JSON Lines of events (an eventsFile or stdin). JSON's strict grammar applies, except that
    NaN and Infinity literals are read as numbers so the writer can refuse them (DSH-21)."""
    import json

    events: list[Any] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except ValueError:
            raise DshError.of(DshCode.USAGE, detail=f"events line {number} is not JSON") from None
    return events


@_guarded
def op_append(args: dict[str, Any]) -> dict[str, Any]:
    """DSH-18..DSH-22: append a batch, materializing the log on its first append."""
    store = _root(args)
    header = args.get("header")
    if not isinstance(header, dict):
        raise _usage("header must be an object")
    if "events" in args:
        events = args["events"]
        if not isinstance(events, list):
            raise _usage("events must be a list")
    else:
        events_file = _string(args, "eventsFile")
        assert events_file is not None
        events = read_events(Path(events_file).read_bytes())
    result = store.append(header, events)
    return {"appended": result.appended, "nextSeq": result.next_seq,
            "materialized": result.materialized}


@_guarded
def op_load(args: dict[str, Any]) -> dict[str, Any]:
    """DSH-13, DSH-14, DSH-24: the recovered logical log."""
    store = _root(args)
    loaded = store.load(_string(args, "id") or "", _string(args, "cwd", required=False))
    return {
        "header": loaded.header,
        "events": loaded.events,
        "recovery": {"truncatedBytes": loaded.truncated_bytes, "closers": loaded.closers},
    }


@_guarded
def op_list(args: dict[str, Any]) -> dict[str, Any]:
    """DSH-23: every materialized session's header."""
    sessions, unreadable = _root(args).list_sessions()
    return {"sessions": sessions, "unreadable": unreadable}


DSH_OPERATIONS: Mapping[str, Operation] = {
    "create": op_create,
    "append": op_append,
    "load": op_load,
    "list": op_list,
}


def dumps(result: Mapping[str, Any]) -> bytes:
    return mode_codec().dumps_indented(result)
