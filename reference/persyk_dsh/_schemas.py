"""The data checks of the event types recovery reads (DSH-12), from schemas/dsh-v0/events.json.

The schema file is the contract; a codec (``_codec.DshCodec``) compiles it once per type. Types
not in it pass (DSH-9). The readable codec compiles with python-jsonschema, the fast one with
jsonschema-rs; tests/test_dsh_schema_portability.py holds them to one verdict.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from persyk_contract import schema

from ._codec import DshCodec

__all__ = ["RECOVERY_TYPES", "load_dsh_schema", "recovery_data_ok", "recovery_schemas"]

RECOVERY_TYPES: tuple[str, ...] = (
    "turn/start", "turn/end", "step/start", "step/end", "tool/call", "tool/result",
    "assistant/message",
)


def load_dsh_schema(name: str) -> dict[str, Any]:
    """One schema of schemas/dsh-v0, from the contract package."""
    return schema("dsh-v0/" + name)


@cache
def recovery_schemas() -> dict[str, dict[str, Any]]:
    """One schema per type recovery reads; a type not in it passes on its envelope."""
    events = load_dsh_schema("events.json")
    return {
        t: {**events, "$ref": "#/$defs/" + t.replace("/", "~1")}
        for t in RECOVERY_TYPES
    }


def recovery_data_ok(event_type: str, data: Any, codec: DshCodec) -> bool:
    validator = codec.recovery_validators().get(event_type)
    return validator is None or bool(validator.is_valid(data))
