"""The schema validator's fast path: jsonschema-rs says "valid" for the common record.

Same results as ``_schema`` (tests/reference/fast/test_schema_agreement.py holds the two to one
verdict on generated entries, and the conformance suite runs in both modes): a record jsonschema-rs
finds valid is checked only for the rules beyond the schema, and only when one of them can apply;
anything else goes to ``_schema``, whose python-jsonschema failures become the diagnostics.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import jsonschema_rs

from .._errors import Code, Diagnostic
from ..read import _schema
from ..read._schema import (
    KNOWN_ENTRY_TYPES,
    TYPES_WITH_RULES_BEYOND_SCHEMA,
    entry_faults_beyond_schema,
    impossible_day,
)

__all__ = ["validate_entry", "validate_header"]

_DISAGREEMENT: Final = "value does not match the v1 schema"


@dataclass(frozen=True, slots=True)
class _Validators:
    header: jsonschema_rs.Validator
    # ENV-2: the entry schema dispatches on ``type`` (an if/then per type). For an entry whose
    # type is already known to be one of them, its own definition alone decides the same thing,
    # and skipping the eleven other ``if`` branches saves about a third of the fast path.
    entry_by_type: Mapping[str, jsonschema_rs.Validator]


class _CompiledOnFirstUse(dict[str, jsonschema_rs.Validator]):
    """Each entry type's validator, compiled at its type's first lookup: a small session pays
    only for the types it holds (all twelve cost about 5 ms of a small command's start-up). A hit
    is a plain dict lookup."""

    def __init__(self, compile_: Callable[[str], jsonschema_rs.Validator]) -> None:
        super().__init__()
        self._compile = compile_

    def __missing__(self, entry_type: str) -> jsonschema_rs.Validator:
        validator = self[entry_type] = self._compile(entry_type)
        return validator


@functools.cache
def _validators() -> _Validators:
    schemas = _schema.schemas()
    registry = jsonschema_rs.Registry([(schema["$id"], schema) for schema in schemas.values()])
    dialect = schemas["entry"]["$schema"]
    references = _schema.entry_references()

    def compile_entry(entry_type: str) -> jsonschema_rs.Validator:
        return jsonschema_rs.validator_for(
            {"$schema": dialect, "$ref": references[entry_type]}, registry=registry)

    return _Validators(
        header=jsonschema_rs.validator_for(schemas["header"], registry=registry),
        entry_by_type=_CompiledOnFirstUse(compile_entry),
    )


def validate_header(obj: dict[str, Any]) -> list[Diagnostic]:
    """``_schema.validate_header``, fast for a valid header."""
    if _validators().header.is_valid(obj) and not impossible_day(obj["timestamp"]):
        return []
    return _schema.validate_header(obj)


def validate_entry(obj: dict[str, Any]) -> list[Diagnostic]:
    """``_schema.validate_entry``, fast for a valid entry."""
    entry_type = obj.get("type")
    if isinstance(entry_type, str) and entry_type in KNOWN_ENTRY_TYPES:
        if _validators().entry_by_type[entry_type].is_valid(obj):
            if not _beyond_schema_may_apply(obj, entry_type):
                return []
            return _schema.diagnostics(list(entry_faults_beyond_schema(obj, entry_type)))
        found = _schema.validate_entry(obj)
        # jsonschema-rs and python-jsonschema disagree: never call an invalid record valid.
        return found or [Diagnostic(Code.ENTRY_FIELDS_INVALID, pointer="", detail=_DISAGREEMENT)]
    return _schema.validate_entry(obj)


# Block types with rules beyond the schema (see ``_schema.entry_faults_beyond_schema``): an audio
# block's startMs < endMs, and an asset's byteRange end > start (image and audio blocks carry
# assets).
_BLOCK_TYPES_WITH_RULES: Final = frozenset({"image", "audio"})


def _beyond_schema_may_apply(entry: dict[str, Any], entry_type: str) -> bool:
    """False when no rule beyond the schema can apply to this *schema-valid* entry.

    A cheap screen for the common record, trusting what the schema has just guaranteed: the
    timestamp has the Timestamp form, a message has content, and every block is an object with
    a string type. True means only "check": ``entry_faults_beyond_schema`` decides.
    """
    if entry["timestamp"][8:10] > "28":  # ENV-5: days 29..31 need the calendar
        return True
    if entry_type == "message":
        blocks = entry["message"]["content"]
    elif entry_type == "custom_message":
        blocks = entry["content"]
    else:
        return entry_type in TYPES_WITH_RULES_BEYOND_SCHEMA
    return any(block["type"] in _BLOCK_TYPES_WITH_RULES for block in blocks)
