"""The parts of dsh-v0's reader and writer that have a fast twin: the JSON reader and writer
(DSH-7), the data checks of the types recovery reads (DSH-12) and the scan of a whole log
(DSH-4..DSH-13).

The core declares them here and takes one as an argument; it never imports a fast one
(``persyk_dsh.fast``). Its own is :class:`persyk_dsh._readable.ReadableCodec`; the edge
(``operations``) chooses between the two once, by ``PERSYK_SESSION_MODE``. Every codec gives
the same verdicts, values and bytes (tests/dsh/test_dsh_json_agreement.py,
tests/dsh/test_dsh_scan_agreement.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ._scan import LogScan
    from ._schemas import DataValidator

__all__ = ["DshCodec"]


class DshCodec(Protocol):
    @property
    def decode_error(self) -> type[Exception]:
        """What ``loads`` raises on bytes that are not one JSON text."""
        ...

    def loads(self, data: bytes) -> Any:
        """One JSON text, as orjson reads it (strict UTF-8, RFC 8259, 1024 levels deep)."""
        ...

    def dumps_indented(self, value: Any) -> bytes:
        """Two-space indented JSON, as orjson's ``OPT_INDENT_2`` writes it."""
        ...

    def recovery_validators(self) -> Mapping[str, DataValidator]:
        """One validator per type recovery reads (DSH-12), compiled on first use."""
        ...

    def scan_log(self, data: bytes) -> LogScan:
        """A whole log read from its bytes: ``_scan.scan_log``'s verdicts."""
        ...
