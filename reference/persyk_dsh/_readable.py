"""The readable codec of dsh-v0 (``_codec.DshCodec``): the standard ``json`` module
(``_json_readable``), python-jsonschema, and every line of a log read through
``_records.parse_record`` (``_scan.scan_log``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _json_readable, _scan
from ._schemas import DataValidator, recovery_validators

__all__ = ["ReadableCodec"]


class ReadableCodec:
    decode_error: type[Exception] = _json_readable.DecodeError

    def __init__(self) -> None:
        self._validators: Mapping[str, DataValidator] | None = None

    def loads(self, data: bytes) -> Any:
        return _json_readable.loads(data)

    def dumps_indented(self, value: Any) -> bytes:
        return _json_readable.dumps_indented(value)

    def recovery_validators(self) -> Mapping[str, DataValidator]:
        if self._validators is None:
            # Imported here: only recovery's data checks need a validator.
            from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

            self._validators = recovery_validators(Draft202012Validator)
        return self._validators

    def scan_log(self, data: bytes) -> _scan.LogScan:
        return _scan.scan_log(data, self)
