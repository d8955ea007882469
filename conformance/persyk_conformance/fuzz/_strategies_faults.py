"""Single-fault mutants of a valid session: one class per rejection class of the read phase.

Each class is a way the rejection cases (fixtures/v1/rejection) break a session, named by the
error code it must produce (the catalog, contract/persyk_contract/errors.json) and the rules it
breaks. A mutant is a valid session from ``sessions`` with one fault placed on a line of its
own: usually a new line inserted after any record, whose id nothing later names, so the first
error (DIAG-5) is the fault's code at the fault's physical line, and nothing else is wrong with
the file (DIAG-6). Some classes need a valid entry or two before the faulty one (a recording
that started, a message that is not an ancestor); those are inserted with it and are valid.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ._strategies_sessions import EntryGraph, Line, Session, draw_entry, sessions, spell
from ._strategies_values import ENTRY_TYPES, headers, timestamps

__all__ = ["FAULT_CLASSES", "Fault", "FaultClass", "faulty_sessions"]


@dataclass(frozen=True, slots=True)
class Fault:
    """A session with exactly one fault, and what every conforming reader must report as its
    first error: ``code`` at physical ``line`` (``None``: the code has no line, SESSION_EMPTY)."""

    kind: str
    code: str
    line: int | None
    rules: tuple[str, ...]
    session: Session

    @property
    def data(self) -> bytes:
        return self.session.data


@dataclass(frozen=True, slots=True)
class _Place:
    """Where the faulty lines go: before line index ``at`` of ``base``, with the entries
    before it as ``graph`` and every id of the session ``taken``."""

    base: Session
    at: int
    graph: EntryGraph

    def insert(self, *lines: Line) -> tuple[Session, int]:
        """The session with ``lines`` inserted; the physical line of the last one."""
        out = (*self.base.lines[: self.at], *lines, *self.base.lines[self.at :])
        return Session(out), self.at + len(lines)


Build = Callable[[st.DrawFn, _Place], tuple[Session, int | None]]


@dataclass(frozen=True, slots=True)
class FaultClass:
    code: str
    rules: tuple[str, ...]
    group: str  # "byte", "schema" or "graph"
    build: Build


def _place(draw: st.DrawFn, base: Session) -> _Place:
    at = draw(st.integers(1, len(base.lines)))
    before = [line.value for line in base.lines[1:at] if line.is_record]
    graph = EntryGraph.of(before)
    graph.reserved.update(base.entry_ids)
    for entry in base.entries:
        if entry["type"] == "recording.started":
            graph.reserved.add("recording:" + entry["recordingId"])
    return _Place(base, at, graph)


def _entry(draw: st.DrawFn, place: _Place, types: Sequence[str] = ENTRY_TYPES) -> dict[str, Any]:
    return draw_entry(draw, place.graph, types)


def _line(value: Any) -> Line:
    return Line(spell(value), value)


def _bytes_fault(mutate: Callable[[bytes, st.DrawFn], bytes]) -> Build:
    """A new valid entry whose bytes ``mutate`` breaks."""

    def build(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
        entry = _entry(draw, place)
        return place.insert(Line(mutate(spell(entry), draw)))

    return build


def _in_id(inserted: bytes) -> Callable[[bytes, st.DrawFn], bytes]:
    """Insert bytes at the start of the entry's own id value (the first "id" member)."""

    def mutate(data: bytes, draw: st.DrawFn) -> bytes:
        at = data.index(b'"id":"') + len(b'"id":"')
        return data[:at] + inserted + data[at:]

    return mutate


def _choice(*mutations: Callable[[bytes, st.DrawFn], bytes]) -> Callable[[bytes, st.DrawFn], bytes]:
    def mutate(data: bytes, draw: st.DrawFn) -> bytes:
        return draw(st.sampled_from(mutations))(data, draw)

    return mutate


def _custom_with_data(draw: st.DrawFn, place: _Place, data: Any) -> dict[str, Any]:
    parent = draw(st.sampled_from([None, *place.graph.types]))
    return {"type": "custom", "id": place.graph.fresh_id(draw), "parentId": parent,
            "timestamp": draw(timestamps), "customType": "fault", "data": data}


def _raw_value(raw: Sequence[bytes]) -> Build:
    """A custom entry whose data is spelt as one of ``raw`` (a number JSON cannot hold)."""

    def build(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
        entry = _custom_with_data(draw, place, "\x00SENTINEL")
        data = spell(entry).replace(b'"\\u0000SENTINEL"', draw(st.sampled_from(list(raw))))
        return place.insert(Line(data))

    return build


def _too_large(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
    entry = _custom_with_data(draw, place, "")
    entry["data"] = "a" * (1_048_577 - (len(spell(entry)) - 1))  # REC-11: one byte over
    return place.insert(Line(spell(entry)))


def _too_deep(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
    value: Any = []
    for _ in range(127):
        value = [value]
    return place.insert(Line(spell(_custom_with_data(draw, place, value))))  # 129 containers


def _unterminated(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
    lines = list(place.base.lines)
    if draw(st.booleans()):
        lines.append(_line(draw_entry(draw, EntryGraph.of(place.base.entries))))
    last = lines[-1]
    lines[-1] = Line(last.data[:-1], last.value)  # REC-16: no LF after the last line
    return Session(tuple(lines)), len(lines)


def _empty(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
    blank = draw(st.lists(st.sampled_from([b"\n", b" \t\r\n"]), max_size=3))
    return Session(tuple(Line(data) for data in blank)), None


def _replace_header(make: Callable[[st.DrawFn, dict[str, Any]], Any]) -> Build:
    def build(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
        value = make(draw, dict(place.base.records[0]))
        return Session((_line(value), *place.base.lines[1:])), 1

    return build


def _header_invalid(draw: st.DrawFn, header: dict[str, Any]) -> Any:
    change = draw(st.sampled_from(["drop", "extra", "id", "timestamp", "version"]))
    if change == "drop":
        del header[draw(st.sampled_from(["version", "id", "timestamp"]))]
    elif change == "extra":
        header["cwd"] = "/tmp"
    elif change == "id":
        header["id"] = draw(st.sampled_from(["", "-x", "a b", "x" * 129, 7]))
    elif change == "timestamp":
        header["timestamp"] = draw(st.sampled_from(["2026-02-30T00:00:00Z", "yesterday", 0]))
    else:
        header["version"] = draw(st.sampled_from(["1", 1.5, None, True]))
    return header


def _entry_change(change: Callable[[st.DrawFn, dict[str, Any]], dict[str, Any]],
                  types: Sequence[str] = ENTRY_TYPES) -> Build:
    """A new entry of ``types`` broken by ``change`` (a schema fault)."""

    def build(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
        entry = _entry(draw, place, types)
        return place.insert(_line(change(draw, dict(entry))))

    return build


def _pick(*options: Callable[[dict[str, Any]], None]) -> Callable[[st.DrawFn, dict[str, Any]],
                                                                  dict[str, Any]]:
    def change(draw: st.DrawFn, entry: dict[str, Any]) -> dict[str, Any]:
        draw(st.sampled_from(options))(entry)
        return entry

    return change


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda entry: entry.__setitem__(key, value)


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda entry: entry.pop(key)


def _set_in(outer: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(entry: dict[str, Any]) -> None:
        entry[outer] = {**entry[outer], key: value}

    return apply


def _block(value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(entry: dict[str, Any]) -> None:
        message = dict(entry["message"])
        message["content"] = [*message["content"], value]
        entry["message"] = message

    return apply


def _graph_fault(make: Callable[[st.DrawFn, _Place], list[dict[str, Any]]]) -> Build:
    """Valid entries, then one whose reference does not hold (the last of ``make``'s)."""

    def build(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
        return place.insert(*(_line(value) for value in make(draw, place)))

    return build


def _with_parent(draw: st.DrawFn, place: _Place, **members: Any) -> dict[str, Any]:
    return {"id": place.graph.fresh_id(draw),
            "parentId": draw(st.sampled_from([None, *place.graph.types])),
            "timestamp": draw(timestamps), **members}


def _duplicate_id(draw: st.DrawFn, place: _Place) -> list[dict[str, Any]]:
    first = [] if place.graph.types else [_entry(draw, place)]
    earlier = list(place.graph.types)
    again = _entry(draw, place)
    again["id"] = draw(st.sampled_from(earlier))
    return [*first, again]


def _not_ancestor(draw: st.DrawFn, place: _Place) -> list[dict[str, Any]]:
    target = _entry(draw, place, ("message", "custom_message"))
    parents = [None, *(i for i in place.graph.types if i != target["id"])]
    removal = {"type": "message.removed", "id": place.graph.fresh_id(draw),
               "parentId": draw(st.sampled_from(parents)), "timestamp": draw(timestamps),
               "targetId": target["id"]}
    return [target, removal]


_NOT_REMOVABLE = ("custom", "session_info", "model_change", "api_connection", "realtime_event")


def _wrong_type(draw: st.DrawFn, place: _Place) -> list[dict[str, Any]]:
    target = _entry(draw, place, _NOT_REMOVABLE)
    removal = {"type": "message.removed", "id": place.graph.fresh_id(draw),
               "parentId": target["id"], "timestamp": draw(timestamps), "targetId": target["id"]}
    return [target, removal]


def _recording(draw: st.DrawFn, place: _Place) -> str:
    name = place.graph.fresh_id(draw)
    while "recording:" + name in place.graph.reserved:
        name += "r"
    place.graph.reserved.add(name)  # an id of its own too: no entry takes it
    return name


def _started(draw: st.DrawFn, place: _Place, name: str) -> dict[str, Any]:
    return {"type": "recording.started", **_with_parent(draw, place), "recordingId": name,
            "asset": {"status": "available", "path": f"assets/{name}.wav",
                      "mimeType": "audio/wav"}}


def _terminal(draw: st.DrawFn, place: _Place, name: str) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"type": "recording.finished", **_with_parent(draw, place), "recordingId": name,
                "durationMs": 10, "outcome": "complete"}
    return {"type": "recording.interrupted", **_with_parent(draw, place), "recordingId": name,
            "reason": "quit"}


def _not_started(draw: st.DrawFn, place: _Place) -> list[dict[str, Any]]:
    return [_terminal(draw, place, _recording(draw, place))]


def _started_twice(draw: st.DrawFn, place: _Place) -> list[dict[str, Any]]:
    name = _recording(draw, place)
    first = _started(draw, place, name)
    place.graph.add(first)
    return [first, _started(draw, place, name)]


def _ended_twice(draw: st.DrawFn, place: _Place) -> list[dict[str, Any]]:
    name = _recording(draw, place)
    first = _started(draw, place, name)
    place.graph.add(first)
    end = _terminal(draw, place, name)
    place.graph.add(end)
    return [first, end, _terminal(draw, place, name)]


def _unknown_id(draw: st.DrawFn, place: _Place) -> str:
    return place.graph.fresh_id(draw)


_BAD_UTF8 = (b"\x80", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xff",
             b"\xe2\x82")
_SYNTAX = _choice(
    lambda data, draw: data[:-2] + b",}\n",  # a trailing comma
    lambda data, draw: data[:-1] + b"x\n",  # a second JSON text, or none
    lambda data, draw: data[:-2] + b"\n",  # the object never closes
    _in_id(b"\x01"),  # an unescaped control character in a string
    lambda data, draw: data.replace(b'"type":', b"'type':", 1),  # a single-quoted key
    lambda data, draw: data[:-2] + b',"n":NaN}\n',  # the literal NaN
)
_NOT_OBJECT = _choice(
    lambda data, draw: b"[" + data[:-1] + b"]\n",
    lambda data, draw: draw(st.sampled_from([b'"entry"\n', b"1\n", b"null\n", b"true\n", b"[]\n"])),
)
_DUPLICATE_KEY = _choice(
    lambda data, draw: data[:-2] + b',"type":' + json.dumps("custom").encode() + b"}\n",
    lambda data, draw: b'{"id":"x",' + data[1:],
)
_LONE_SURROGATE = _choice(_in_id(b"\\ud83d"), _in_id(b"\\udc00"), _in_id(b"\\ud83dx\\ude00"))


def _header_entry(draw: st.DrawFn, header: dict[str, Any]) -> Any:
    return draw(st.sampled_from([{"type": "message", "id": "m", "parentId": None}, {},
                                 {**header, "type": "Session"}]))


def _header_version(draw: st.DrawFn, header: dict[str, Any]) -> Any:
    return {**header, "version": draw(st.sampled_from([2, 0, -1, 100]))}


def _repeated_header(draw: st.DrawFn, place: _Place) -> tuple[Session, int | None]:
    return place.insert(_line(draw(headers)))


def _bad_envelope(draw: st.DrawFn, entry: dict[str, Any]) -> dict[str, Any]:
    key = draw(st.sampled_from(["id", "parentId", "timestamp", "type"]))
    if key == "type":
        entry["type"] = draw(st.sampled_from([None, 5]))
    elif draw(st.booleans()) and key != "parentId":
        del entry[key]
    elif key == "timestamp":
        entry[key] = draw(st.sampled_from(["2026-02-30T00:00:00Z", "2026-01-01 00:00:00Z", 7]))
    else:
        entry[key] = draw(st.sampled_from(["", "-a", "a/b", "x" * 129, 5]))
    return entry


# One class per way the rejection cases break a session, named by the code it must produce.
FAULT_CLASSES: dict[str, FaultClass] = {
    "record.invalid-utf8": FaultClass(
        "RECORD_INVALID_UTF8", ("REC-2",), "byte",
        lambda draw, place: _bytes_fault(_in_id(draw(st.sampled_from(_BAD_UTF8))))(draw, place)),
    "record.byte-order-mark": FaultClass(
        "RECORD_BYTE_ORDER_MARK", ("REC-13",), "byte",
        _bytes_fault(lambda data, draw: b"\xef\xbb\xbf" + data)),
    "record.json-syntax": FaultClass("RECORD_JSON_SYNTAX", ("REC-3",), "byte",
                                     _bytes_fault(_SYNTAX)),
    "record.not-object": FaultClass("RECORD_NOT_OBJECT", ("REC-4",), "byte",
                                    _bytes_fault(_NOT_OBJECT)),
    "record.duplicate-key": FaultClass("RECORD_DUPLICATE_KEY", ("REC-7",), "byte",
                                       _bytes_fault(_DUPLICATE_KEY)),
    "record.lone-surrogate": FaultClass("RECORD_LONE_SURROGATE", ("REC-5",), "byte",
                                        _bytes_fault(_LONE_SURROGATE)),
    "record.number-out-of-range": FaultClass(
        "RECORD_NUMBER_OUT_OF_RANGE", ("REC-8",), "byte",
        _raw_value([b"1e309", b"-1e309", b"1.8e308", b"123e99999", b"1" + b"0" * 309])),
    "record.too-large": FaultClass("RECORD_TOO_LARGE", ("REC-11",), "byte", _too_large),
    "record.too-deep": FaultClass("RECORD_TOO_DEEP", ("REC-12",), "byte", _too_deep),
    "record.unterminated": FaultClass("RECORD_UNTERMINATED", ("REC-16",), "byte", _unterminated),
    "session.empty": FaultClass("SESSION_EMPTY", ("HDR-1",), "byte", _empty),
    "header.not-first": FaultClass("HEADER_NOT_FIRST", ("HDR-2",), "schema",
                                   _replace_header(_header_entry)),
    "header.invalid": FaultClass("HEADER_INVALID", ("HDR-3", "HDR-5", "HDR-6"), "schema",
                                 _replace_header(_header_invalid)),
    "header.version": FaultClass("HEADER_VERSION_UNSUPPORTED", ("HDR-4",), "schema",
                                 _replace_header(_header_version)),
    "header.repeated": FaultClass("HEADER_REPEATED", ("HDR-7",), "schema", _repeated_header),
    "entry.type-unknown": FaultClass(
        "ENTRY_TYPE_UNKNOWN", ("ENV-2",), "schema",
        _entry_change(_pick(*(_set("type", name) for name in
                              ("thinking_level_change", "Message", "", "message ", "header"))),
                      ("session_info",))),
    "entry.field-unknown": FaultClass(
        "ENVELOPE_FIELD_UNKNOWN", ("ENV-3",), "schema",
        _entry_change(_pick(_set("extra", 1), _set("details", {}), _set("Type", "x")),
                      ("message", "custom", "label", "session_info", "model_change"))),
    "entry.envelope": FaultClass("ENVELOPE_INVALID", ("ENV-1", "ENV-4", "ID-1"), "schema",
                                 _entry_change(_bad_envelope)),
    "entry.fields": FaultClass(
        "ENTRY_FIELDS_INVALID", ("ENT-19",), "schema",
        _entry_change(_pick(_drop("customType"), _set("customType", ""), _set("customType", 3)),
                      ("custom",))),
    "message.invalid": FaultClass(
        "MESSAGE_INVALID", ("MSG-1",), "schema",
        _entry_change(_pick(_set("message", "hello"), _set("message", None),
                            _set_in("message", "role", "robot"),
                            _set_in("message", "timestamp", -1),
                            _set_in("message", "content", "hi")), ("message",))),
    "block.invalid": FaultClass(
        "BLOCK_INVALID", ("BLK-1",), "schema",
        _entry_change(_pick(_block("text"), _block(None), _block({"type": 5}), _block({}),
                            _block({"type": "text"}),
                            _block({"type": "thinking", "thinking": "", "redacted": "yes"})),
                      ("message",))),
    "asset.invalid": FaultClass(
        "ASSET_REF_INVALID", ("AST-2", "AST-3"), "schema",
        _entry_change(_pick(*(_block({"type": "image", "asset": asset}) for asset in (
            {"path": "assets/a.png", "mimeType": "image/png"},
            {"status": "available", "path": "../a.png", "mimeType": "image/png"},
            {"status": "available", "path": "assets/.a", "mimeType": "image/png"},
            {"status": "available", "path": "assets/a.png", "mimeType": "png"},
            {"status": "gone"}))), ("message",))),
    "graph.id-duplicate": FaultClass("ID_DUPLICATE", ("ID-3",), "graph",
                                     _graph_fault(_duplicate_id)),
    "graph.parent-not-found": FaultClass(
        "PARENT_NOT_FOUND", ("TREE-1",), "graph",
        _graph_fault(lambda draw, place: [{**_entry(draw, place, ("custom", "session_info")),
                                           "parentId": _unknown_id(draw, place)}])),
    "graph.label-target": FaultClass(
        "LABEL_TARGET_NOT_FOUND", ("TREE-4",), "graph",
        _graph_fault(lambda draw, place: [{"type": "label", **_with_parent(draw, place),
                                           "targetId": _unknown_id(draw, place),
                                           "label": "x"}])),
    "graph.removal-target": FaultClass(
        "REMOVAL_TARGET_NOT_FOUND", ("TREE-5",), "graph",
        _graph_fault(lambda draw, place: [{"type": "message.removed",
                                           **_with_parent(draw, place),
                                           "targetId": _unknown_id(draw, place)}])),
    "graph.removal-not-ancestor": FaultClass("REMOVAL_TARGET_NOT_ANCESTOR", ("TREE-6",), "graph",
                                             _graph_fault(_not_ancestor)),
    "graph.removal-wrong-type": FaultClass("REMOVAL_TARGET_WRONG_TYPE", ("TREE-7",), "graph",
                                           _graph_fault(_wrong_type)),
    "graph.recording-not-started": FaultClass("RECORDING_NOT_STARTED", ("TREE-10",), "graph",
                                              _graph_fault(_not_started)),
    "graph.recording-duplicate": FaultClass("RECORDING_DUPLICATE", ("TREE-9",), "graph",
                                            _graph_fault(_started_twice)),
    "graph.recording-ended": FaultClass("RECORDING_ALREADY_ENDED", ("TREE-11",), "graph",
                                        _graph_fault(_ended_twice)),
}


@st.composite
def faulty_sessions(
    draw: st.DrawFn,
    kinds: Sequence[str] | None = None,
    base: st.SearchStrategy[Session] | None = None,
) -> Fault:
    """A valid session from ``base`` (default: small ``sessions()`` without records near the size
    limits) broken by one fault of one of ``kinds`` (default: every class of FAULT_CLASSES)."""
    kind = draw(st.sampled_from(list(kinds if kinds is not None else FAULT_CLASSES)))
    fault_class = FAULT_CLASSES[kind]
    session = draw(base if base is not None else sessions(max_entries=6,
                                                          near_limits=("long-id", "numbers")))
    mutant, line = fault_class.build(draw, _place(draw, session))
    return Fault(kind, fault_class.code, line, fault_class.rules, mutant)
