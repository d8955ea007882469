"""The data checks of the event types recovery reads (DSH-12), from schemas/dsh-v0/events.json.

The schema file is the contract; it is compiled once per type. Types not in it pass (DSH-9).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from persyk_contract import schema

if TYPE_CHECKING:
    import jsonschema_rs

__all__ = ["RECOVERY_TYPES", "load_dsh_schema", "recovery_data_ok", "recovery_validators"]

RECOVERY_TYPES: tuple[str, ...] = (
    "turn/start", "turn/end", "step/start", "step/end", "tool/call", "tool/result",
    "assistant/message",
)


def load_dsh_schema(name: str) -> dict[str, Any]:
    """One schema of schemas/dsh-v0, from the contract package."""
    return schema("dsh-v0/" + name)


@cache
def recovery_validators() -> Mapping[str, jsonschema_rs.Validator]:
    """One validator per type recovery reads; a type not in it passes on its envelope."""
    import jsonschema_rs  # here: only recovery's data checks need it (issue 29)

    events = load_dsh_schema("events.json")
    return {
        t: jsonschema_rs.Draft202012Validator({**events, "$ref": "#/$defs/" + t.replace("/", "~1")})
        for t in RECOVERY_TYPES
    }


def recovery_data_ok(event_type: str, data: Any) -> bool:
    validator = recovery_validators().get(event_type)
    return validator is None or bool(validator.is_valid(data))
