"""The one switch of dsh-v0's JSON reader and writer (DSH-7), by ``PERSYK_SESSION_MODE``.

Readable mode reads and writes with the standard ``json`` module (``_json_readable``) and never
imports orjson; the fast mode (the default) uses orjson (``_json_fast``). Both give the same
verdicts, values and bytes (tests/test_dsh_json_agreement.py).
"""

from __future__ import annotations

from typing import Final

from .._mode_name import MODE

__all__ = ["READABLE", "DecodeError", "dumps_indented", "loads"]

READABLE: Final = MODE == "readable"

if READABLE:
    from ._json_readable import DecodeError, dumps_indented, loads
else:
    from ._json_fast import DecodeError, dumps_indented, loads  # type: ignore[assignment]
