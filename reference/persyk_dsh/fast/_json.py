"""dsh-v0's JSON in the fast codec: orjson, as it always was."""

from __future__ import annotations

from typing import Any

import orjson
from orjson import JSONDecodeError as DecodeError
from orjson import loads

__all__ = ["DecodeError", "dumps_indented", "loads"]


def dumps_indented(value: Any) -> bytes:
    """Two-space indented JSON. orjson refuses values nested 255 deep or more (an event's data
    may nest 1024 deep, DSH-7): those are written by the readable writer, the same spelling."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        from .._json_readable import dumps_indented as readable

        return readable(value)
