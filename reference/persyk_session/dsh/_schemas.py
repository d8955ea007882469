"""The data checks of the event types recovery reads (DSH-12), from schemas/dsh-v0/events.json.

The schema file is the contract; it is compiled once per type. Types not in it pass (DSH-9).
The fast mode compiles with jsonschema-rs, the readable mode (``_json.READABLE``) with
python-jsonschema; tests/test_dsh_schema_portability.py holds them to one verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

from persyk_contract import schema

from ._json import READABLE

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


@cache
def recovery_validators() -> Mapping[str, DataValidator]:
    """One validator per type recovery reads; a type not in it passes on its envelope."""
    # Imported here: only recovery's data checks need a validator (issue 29).
    if READABLE:
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    else:
        from jsonschema_rs import Draft202012Validator

    events = load_dsh_schema("events.json")
    return {
        t: Draft202012Validator({**events, "$ref": "#/$defs/" + t.replace("/", "~1")})
        for t in RECOVERY_TYPES
    }


def recovery_data_ok(event_type: str, data: Any) -> bool:
    validator = recovery_validators().get(event_type)
    return validator is None or bool(validator.is_valid(data))
