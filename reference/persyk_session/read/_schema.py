"""Validate the header and entries against schemas/v1 and map failures to codes.

The schema files (``persyk_contract.schemas/v1``, the contract package) are the single source
of truth, and python-jsonschema (draft 2020-12, ``referencing`` registry, unpatched) is the one
validator that reads them: each leaf failure it reports is mapped to a code (ENV-7) and a JSON
pointer, in the order ENV-8 asks. This module is the readable engine's ``schema``
(``_engine.SchemaRules``); the fast engine's (``fast/_schema_fast``) answers the common "valid"
with jsonschema-rs and comes back here for everything else.

Rules the schemas cannot express (a real calendar day, ``startMs < endMs``, ``end > start``, the
recording asset name) are checked here in Python, after the schema.

Diagnostics carry codes, pointers and fixed texts only, never input values. ``line`` is left
``None``: the caller knows the line and fills it with :func:`dataclasses.replace`.
"""

from __future__ import annotations

import calendar
import copy
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urljoin

import persyk_contract

from .._errors import Code, Diagnostic

if TYPE_CHECKING:
    # python-jsonschema ships no type information; its objects are typed Any here. It is
    # imported by _validators(), on the first check that needs it: the fast path's "valid"
    # answers and the facts below never load it (a command loads only what it runs).
    from jsonschema.protocols import Validator  # type: ignore[import-untyped]

__all__ = [
    "KNOWN_BLOCK_TYPES",
    "KNOWN_ENTRY_TYPES",
    "TYPES_WITH_RULES_BEYOND_SCHEMA",
    "diagnostics",
    "entry_faults_beyond_schema",
    "entry_references",
    "impossible_day",
    "is_other_version",
    "load_schema",
    "schema_files",
    "schemas",
    "validate_entry",
    "validate_header",
]

_SCHEMA_DIR = "v1"

Path = tuple[str | int, ...]
# A fault ready to report: its code, where it is, and a fixed text.
Located = tuple[Code, Path, str]


# --- loading ---------------------------------------------------------------------------------


def schema_files() -> list[Traversable]:
    """The v1 schema files shipped as package data, sorted by name."""
    return persyk_contract.schema_files(_SCHEMA_DIR)


@functools.cache
def _schemas() -> Mapping[str, dict[str, Any]]:
    """Every v1 schema by file stem (``"header"``), parsed once."""
    loaded: dict[str, dict[str, Any]] = {}
    for entry in schema_files():
        loaded[entry.name.removesuffix(".json")] = json.loads(entry.read_text(encoding="utf-8"))
    return loaded


def load_schema(name: str) -> dict[str, Any]:
    """A fresh copy of one v1 schema, by stem or file name (``"header"`` or ``"header.json"``)."""
    return copy.deepcopy(_schemas()[name.removesuffix(".json")])


# --- the oracle: python-jsonschema, unpatched ------------------------------------------------
# The schemas end every pattern with (?![\s\S]) ("no character follows"), not $, because
# Python's $ also matches before a final newline; so Python, ECMA-262 and Rust engines agree
# (tests/contract/test_schema_portability.py proves it with Ajv, python-jsonschema and
# jsonschema-rs).


@functools.cache
def _python_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# --- the validators, built once on first use ------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Validators:
    header: Validator
    entry: Validator


@functools.cache
def _validators() -> _Validators:
    import referencing
    import referencing.jsonschema
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (schema["$id"], referencing.jsonschema.DRAFT202012.create_resource(schema))
        for schema in _schemas().values()
    )

    def validator(schema: dict[str, Any]) -> Validator:
        compiled: Validator = Draft202012Validator(schema, registry=registry)
        return compiled

    return _Validators(header=validator(_schemas()["header"]), entry=validator(_schemas()["entry"]))


# --- facts read from the schemas (the files stay the source of truth) ------------------------

KNOWN_ENTRY_TYPES: frozenset[str] = frozenset(_schemas()["entry"]["properties"]["type"]["enum"])
KNOWN_BLOCK_TYPES: frozenset[str] = frozenset(
    branch["if"]["properties"]["type"]["const"]
    for branch in _schemas()["blocks"]["$defs"]["Block"]["allOf"]
)
_ENVELOPE_FIELDS: frozenset[str] = frozenset(_schemas()["envelope"]["properties"])


def schemas() -> Mapping[str, dict[str, Any]]:
    """Every v1 schema by file stem, parsed once (shared, never to be modified)."""
    return _schemas()


def entry_references() -> dict[str, str]:
    """Each entry type and the absolute ``$ref`` of its definition, as entry.json names them."""
    entry = _schemas()["entry"]
    return {
        branch["if"]["properties"]["type"]["const"]: urljoin(entry["$id"], branch["then"]["$ref"])
        for branch in entry["allOf"]
    }


def _entry_definitions() -> dict[str, dict[str, Any]]:
    entries = _schemas()["entries"]["$defs"]
    by_type: dict[str, dict[str, Any]] = {}
    for branch in _schemas()["entry"]["allOf"]:
        name = branch["then"]["$ref"].rpartition("/")[2]
        by_type[branch["if"]["properties"]["type"]["const"]] = entries[name]
    return by_type


# ENV-3: an entry carries the envelope plus only its type's own fields.
_ALLOWED_FIELDS: dict[str, frozenset[str]] = {
    entry_type: _ENVELOPE_FIELDS | frozenset(definition.get("properties", {}))
    for entry_type, definition in _entry_definitions().items()
}
_TIMESTAMP_PATTERN = _python_pattern(_schemas()["defs"]["$defs"]["Timestamp"]["pattern"])


# --- where each kind of failure sits inside an entry ------------------------------------------

_INDEX = -1  # stands for any array index in a location pattern

# Failures at or below these locations are attributed to a content block / an asset reference.
_BLOCK_ROOTS: dict[str, tuple[Path, ...]] = {
    "message": (("message", "content", _INDEX),),
    "custom_message": (("content", _INDEX),),
}
_ASSET_ROOTS: dict[str, tuple[Path, ...]] = {
    "message": (("message", "content", _INDEX, "asset"),),
    "custom_message": (("content", _INDEX, "asset"),),
    "recording.started": (("asset",),),
    "realtime_event": (("media", _INDEX, "asset"),),
}
_MESSAGE_ROOTS: dict[str, tuple[Path, ...]] = {"message": (("message",),)}

# Fixed texts by failing JSON Schema keyword (never an input value).
_DETAIL_BY_KEYWORD: dict[str, str] = {
    "required": "required field is missing",
    "dependentRequired": "field is missing that must come with another field",
    "additionalProperties": "field is not allowed in this object",
    "unevaluatedProperties": "field is neither an envelope field nor a field of this entry type",
    "type": "value has the wrong JSON type",
    "const": "value is not the one allowed here",
    "enum": "value is not one of those allowed here",
    "pattern": "string does not have the required form",
    "minLength": "string must not be empty",
    "minimum": "number is below the allowed range",
    "maximum": "number is above the allowed range",
}
_DETAIL_FALLBACK = "value does not match the v1 schema"


def _under(path: Path, root: Path) -> bool:
    return len(path) >= len(root) and all(
        (isinstance(step, int) if want == _INDEX else step == want)
        for step, want in zip(path, root, strict=False)
    )


def _region(entry_type: str, path: Path) -> Code:
    """The code of a failure at ``path`` inside an entry of a known type (innermost wins)."""
    if not path:
        return Code.ENTRY_FIELDS_INVALID
    if path[0] in _ENVELOPE_FIELDS:
        return Code.ENVELOPE_INVALID
    for code, roots in (
        (Code.ASSET_REF_INVALID, _ASSET_ROOTS),
        (Code.BLOCK_INVALID, _BLOCK_ROOTS),
        (Code.MESSAGE_INVALID, _MESSAGE_ROOTS),
    ):
        if any(_under(path, root) for root in roots.get(entry_type, ())):
            return code
    return Code.ENTRY_FIELDS_INVALID


# --- turning oracle errors into located faults ------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Fault:
    """One failure: ``owner`` is the object the keyword applied to; ``key`` names a field of it
    that is missing or not allowed (then the fault sits at ``owner + (key,)``)."""

    keyword: str
    owner: Path
    key: str | None = None

    @property
    def path(self) -> Path:
        return self.owner if self.key is None else (*self.owner, self.key)


def _schema_faults(validator: Validator, instance: object) -> Iterator[_Fault]:
    for error in validator.iter_errors(instance):
        keyword = str(error.validator)
        owner: Path = tuple(error.absolute_path)
        found = error.instance
        if keyword == "required" and isinstance(found, dict):
            for key in error.validator_value:
                if key not in found:
                    yield _Fault(keyword, owner, key)
        elif keyword == "dependentRequired" and isinstance(found, dict):
            for present, needed in error.validator_value.items():
                for key in needed:
                    if present in found and key not in found:
                        yield _Fault(keyword, owner, key)
        elif keyword == "additionalProperties" and isinstance(found, dict):
            known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            for key in found:
                if key not in known:
                    yield _Fault(keyword, owner, key)
        else:
            # For unevaluatedProperties the caller lists the unknown fields itself: the
            # validator's own list also names envelope fields whenever the envelope failed.
            yield _Fault(keyword, owner)


def _sort_key(path: Path) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, step) if isinstance(step, int) else (1, step) for step in path)


def _pointer(path: Path) -> str:
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in path)


# ENV-8: envelope faults first, then unknown top-level fields, then type-specific faults.
_CODE_RANK: dict[Code, int] = {Code.ENVELOPE_INVALID: 0, Code.ENVELOPE_FIELD_UNKNOWN: 1}


def diagnostics(located: list[Located]) -> list[Diagnostic]:
    """One diagnostic per distinct location (the first found wins), each with the pointer of
    the offending member (DIAG-8), in ENV-8 order, then by
    location (array indices numerically)."""
    seen: dict[Path, tuple[Code, str]] = {}
    for code, path, detail in located:
        seen.setdefault(path, (code, detail))
    ordered = sorted(
        seen.items(), key=lambda item: (_CODE_RANK.get(item[1][0], 2), _sort_key(item[0]))
    )
    return [
        Diagnostic(code, pointer=_pointer(path), detail=detail) for path, (code, detail) in ordered
    ]


# --- rules beyond the schema ------------------------------------------------------------------


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def impossible_day(value: object) -> bool:
    """ENV-5: True for a string of the Timestamp form naming a day its month does not have
    (``2026-02-30``); a string of another form is the schema's to report."""
    if not isinstance(value, str) or _TIMESTAMP_PATTERN.search(value) is None:
        return False
    year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
    days_in_month = calendar.monthrange(year, month)[1]
    return day > days_in_month


_NO_SUCH_DAY = "date names a day that its month does not have"


def _asset_faults(asset: object, at: Path) -> Iterator[Located]:
    if not isinstance(asset, dict):
        return
    byte_range = asset.get("byteRange")
    if isinstance(byte_range, dict):
        start, end = byte_range.get("start"), byte_range.get("end")
        if _is_number(start) and _is_number(end) and end <= start:
            yield (
                Code.ASSET_REF_INVALID,
                (*at, "byteRange", "end"),
                "byte range end must be greater than its start",
            )


def _block_faults(blocks: object, at: Path) -> Iterator[Located]:
    if not isinstance(blocks, list):
        return
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "audio":
            start, end = block.get("startMs"), block.get("endMs")
            if _is_number(start) and _is_number(end) and end <= start:
                yield (
                    Code.BLOCK_INVALID,
                    (*at, index, "endMs"),
                    "audio endMs must be greater than startMs",
                )
        if kind in ("image", "audio"):
            yield from _asset_faults(block.get("asset"), (*at, index, "asset"))


def _message_faults(entry: dict[str, Any]) -> Iterator[Located]:
    message = entry.get("message")
    if isinstance(message, dict):
        yield from _block_faults(message.get("content"), ("message", "content"))


def _custom_message_faults(entry: dict[str, Any]) -> Iterator[Located]:
    yield from _block_faults(entry.get("content"), ("content",))


def _realtime_event_faults(entry: dict[str, Any]) -> Iterator[Located]:
    if impossible_day(entry.get("observedAt")):
        yield Code.ENTRY_FIELDS_INVALID, ("observedAt",), _NO_SUCH_DAY
    media = entry.get("media")
    if isinstance(media, list):
        for index, item in enumerate(media):
            if isinstance(item, dict):
                yield from _asset_faults(item.get("asset"), ("media", index, "asset"))


def _recording_started_faults(entry: dict[str, Any]) -> Iterator[Located]:
    asset = entry.get("asset")
    if not isinstance(asset, dict):
        return
    recording_id, path = entry.get("recordingId"), asset.get("path")
    # ENT-15: one capture period owns exactly one asset, named after the recording. The fault
    # sits inside the asset reference, so ENV-7 gives it the asset's code.
    expected = f"assets/{recording_id}.wav"
    if isinstance(recording_id, str) and isinstance(path, str) and path != expected:
        yield (
            Code.ASSET_REF_INVALID,
            ("asset", "path"),
            "recording asset path must be assets/<recordingId>.wav",
        )
    yield from _asset_faults(asset, ("asset",))


def _recording_finished_faults(entry: dict[str, Any]) -> Iterator[Located]:
    gaps = entry.get("gaps")
    if not isinstance(gaps, list):
        return
    for index, gap in enumerate(gaps):
        if isinstance(gap, dict):
            start, end = gap.get("startMs"), gap.get("endMs")
            if _is_number(start) and _is_number(end) and end <= start:
                yield (
                    Code.ENTRY_FIELDS_INVALID,
                    ("gaps", index, "endMs"),
                    "gap endMs must be greater than startMs",
                )


_BEYOND_SCHEMA: dict[str, Callable[[dict[str, Any]], Iterator[Located]]] = {
    "message": _message_faults,
    "custom_message": _custom_message_faults,
    "realtime_event": _realtime_event_faults,
    "recording.started": _recording_started_faults,
    "recording.finished": _recording_finished_faults,
}
# The entry types that have rules beyond the schema (the timestamp's day aside).
TYPES_WITH_RULES_BEYOND_SCHEMA: frozenset[str] = frozenset(_BEYOND_SCHEMA)


def entry_faults_beyond_schema(entry: dict[str, Any], entry_type: str) -> Iterator[Located]:
    """The faults of rules the schemas cannot express (ENV-5, ENT-15, the ranges)."""
    if impossible_day(entry.get("timestamp")):
        yield Code.ENVELOPE_INVALID, ("timestamp",), _NO_SUCH_DAY
    check = _BEYOND_SCHEMA.get(entry_type)
    if check is not None:
        yield from check(entry)


# --- public API -------------------------------------------------------------------------------


def is_other_version(value: object) -> bool:
    """HDR-4: an integral JSON number other than 1, a version this reader does not support."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and value != 1


def validate_header(obj: dict[str, Any]) -> list[Diagnostic]:
    """Diagnostics (``line=None``) for the header record; empty when it is valid."""
    if is_other_version(obj.get("version")):
        # HDR-4: another version's header is judged by nothing else: its members may differ.
        return [
            Diagnostic(
                Code.HEADER_VERSION_UNSUPPORTED,
                pointer="/version",
                detail="session format version is not supported",
            )
        ]
    # HDR-3, HDR-5, HDR-6: the header schema.
    located: list[Located] = [
        (Code.HEADER_INVALID, fault.path, _DETAIL_BY_KEYWORD.get(fault.keyword, _DETAIL_FALLBACK))
        for fault in _schema_faults(_validators().header, obj)
        if fault.keyword != "unevaluatedProperties"
    ]
    if impossible_day(obj.get("timestamp")):  # ENV-5
        located.append((Code.HEADER_INVALID, ("timestamp",), _NO_SUCH_DAY))
    return diagnostics(located)


def validate_entry(obj: dict[str, Any]) -> list[Diagnostic]:
    """Diagnostics (``line=None``) for one entry after the header; empty when it is valid."""
    entry_type = obj.get("type")
    if not isinstance(entry_type, str):  # ENV-1
        detail = _DETAIL_BY_KEYWORD["required" if entry_type is None else "type"]
        return [Diagnostic(Code.ENVELOPE_INVALID, pointer="/type", detail=detail)]
    if entry_type not in KNOWN_ENTRY_TYPES:  # ENV-2
        detail = "entry type is not one of the v1 types"
        return [Diagnostic(Code.ENTRY_TYPE_UNKNOWN, pointer="/type", detail=detail)]
    located = list(_entry_schema_faults(obj, entry_type))
    located.extend(entry_faults_beyond_schema(obj, entry_type))
    return diagnostics(located)


def _entry_schema_faults(obj: dict[str, Any], entry_type: str) -> Iterator[Located]:
    """The entry schema's failures, each with the code of the region it sits in (ENV-7)."""
    for fault in _schema_faults(_validators().entry, obj):
        if fault.keyword == "unevaluatedProperties":
            if not fault.owner:  # ENV-3: a field neither of the envelope nor of this type
                for field in sorted(obj.keys() - _ALLOWED_FIELDS[entry_type]):
                    detail = _DETAIL_BY_KEYWORD["unevaluatedProperties"]
                    yield Code.ENVELOPE_FIELD_UNKNOWN, (field,), detail
            continue
        if fault.key is not None and fault.keyword != "additionalProperties" and not fault.owner:
            # A missing top-level field: an envelope field, or one of the type's own.
            envelope = fault.key in _ENVELOPE_FIELDS
            code = Code.ENVELOPE_INVALID if envelope else Code.ENTRY_FIELDS_INVALID
        elif fault.key is not None:
            # Missing or not allowed in a nested object: the object that requires or closes it.
            code = _region(entry_type, fault.owner)
        else:
            code = _region(entry_type, fault.path)
        yield code, fault.path, _DETAIL_BY_KEYWORD.get(fault.keyword, _DETAIL_FALLBACK)
