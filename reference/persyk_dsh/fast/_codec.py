"""The fast codec of dsh-v0 (``_codec.DshCodec``): orjson, jsonschema-rs, and the scan that
checks the common record inline (``_scan``)."""

from __future__ import annotations

from collections.abc import Mapping

from .._scan import LogScan
from .._schemas import DataValidator, recovery_validators
from . import _json
from ._scan import scan_log_inline

__all__ = ["FastCodec"]


class FastCodec:
    decode_error: type[Exception] = _json.DecodeError
    # orjson's own functions, not methods calling them: the scan calls loads once per line.
    loads = staticmethod(_json.loads)
    dumps_indented = staticmethod(_json.dumps_indented)

    def __init__(self) -> None:
        self._validators: Mapping[str, DataValidator] | None = None

    def recovery_validators(self) -> Mapping[str, DataValidator]:
        if self._validators is None:
            # Imported here: only recovery's data checks need a validator.
            from jsonschema_rs import Draft202012Validator

            self._validators = recovery_validators(Draft202012Validator)
        return self._validators

    def scan_log(self, data: bytes) -> LogScan:
        return scan_log_inline(data, self)
