"""The data checks of the event types recovery reads (DSH-12), from schemas/dsh-v0/events.json.

The schema file is the contract; it is compiled once per type. Types not in it pass (DSH-9).
The fast codec compiles with jsonschema-rs, the readable codec (``_readable``) with
python-jsonschema; tests/contract/test_dsh_schema_portability.py holds them to one verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from persyk_contract import schema

if TYPE_CHECKING:
    from ._codec import DshCodec

__all__ = ["RECOVERY_TYPES", "load_dsh_schema", "recovery_data_ok", "recovery_validators"]

RECOVERY_TYPES: tuple[str, ...] = (
    "turn/start", "turn/end", "step/start", "step/end", "tool/call", "tool/result",
    "assistant/message",
)


def load_dsh_schema(name: str) -> dict[str, Any]:
    """One schema of schemas/dsh-v0, from the contract package."""
    return schema("dsh-v0/" + name)


class DataValidator(Protocol):
    def is_valid(self, instance: Any) -> bool: ...


def recovery_validators(
    compile_schema: Callable[[dict[str, Any]], DataValidator],
) -> Mapping[str, DataValidator]:
    """One validator per type recovery reads; a type not in it passes on its envelope."""
    events = load_dsh_schema("events.json")
    return {
        t: compile_schema({**events, "$ref": "#/$defs/" + t.replace("/", "~1")})
        for t in RECOVERY_TYPES
    }


def recovery_data_ok(event_type: str, data: Any, codec: DshCodec) -> bool:
    validator = codec.recovery_validators().get(event_type)
    return validator is None or bool(validator.is_valid(data))
