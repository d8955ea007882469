"""The readable JSON reader and writer of dsh-v0 (DSH-7), on the standard ``json`` module.

They give orjson's verdicts, values and bytes exactly, so that the modes agree
(tests/dsh/test_dsh_json_agreement.py holds them to it):

* ``loads``: strict UTF-8 (a BOM is refused), RFC 8259 (no NaN or Infinity), a number whose
  double is infinite refused (``1e400``; ``1e-400`` is ``0.0``), integers outside
  [-2**63, 2**64-1] read as floats, no string or key holding a lone surrogate, arrays and
  objects nested at most 1024 deep; duplicate keys: the last one wins.
* ``dumps_indented``: orjson's ``OPT_INDENT_2`` spelling (two spaces, ``": "``, raw UTF-8, and
  floats as orjson writes them: ``1e-7`` and ``0.00001`` where ``repr`` gives ``1e-07`` and
  ``1e-05``). It nests without recursion, so it also writes what orjson refuses as too deep.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

__all__ = ["DecodeError", "dumps_indented", "loads"]

DecodeError = json.JSONDecodeError

MAX_DEPTH = 1024  # orjson's limit: 1024 nested arrays or objects parse, 1025 do not
_INT_RANGE = range(-(2**63), 2**64)  # orjson's integers; beyond them it reads a float
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# The stdlib scanner recurses once per level, and Python's default limit (1000) is below 1024:
# a text nested deeper than _SHALLOW is parsed with more room.
_SHALLOW = 256
_RECURSION_PER_LEVEL = 2


def _refuse(what: str) -> DecodeError:
    return DecodeError(what, "", 0)


def _constant(name: str) -> Any:
    raise _refuse(f"{name} is not JSON (RFC 8259)")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _refuse("number is infinity when parsed as double")
    return value


def _int(text: str) -> int | float:
    # A literal of over 20 digits is beyond 2**64 anyway: float() without int()'s digit limit.
    value = int(text) if len(text) <= 21 else None
    if value is not None and value in _INT_RANGE:
        return value
    return _float(text)


def _depth(text: str) -> int:
    """The deepest nesting of arrays and objects (brackets inside strings not counted), or an
    upper bound of it when that is at most _SHALLOW: the common case costs two counts."""
    brackets = text.count("[") + text.count("{")
    if brackets <= _SHALLOW:
        return brackets
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


@contextmanager
def _recursion_for(depth: int) -> Iterator[None]:
    """Room for the stdlib scanner to descend ``depth`` levels below the caller."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, limit + _RECURSION_PER_LEVEL * depth))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def _strings(value: Any) -> Iterator[str]:
    """Every string of a parsed value, keys included, without recursion (it nests 1024 deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def loads(data: bytes) -> Any:
    """One JSON text, or :class:`DecodeError` wherever orjson raises its ``JSONDecodeError``."""
    try:
        text = data.decode("utf-8")  # strict: no surrogates, no overlong forms; "\ufeff" stays
    except UnicodeDecodeError:
        raise _refuse("not UTF-8") from None
    depth = _depth(text)
    if depth > MAX_DEPTH:
        raise _refuse("depth limit exceeded")
    with _recursion_for(depth) if depth > _SHALLOW else nullcontext():
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    # Only a \u escape can make a lone surrogate: the decoded text holds none.
    if "\\u" in text and any(_LONE_SURROGATE.search(s) for s in _strings(value)):
        raise _refuse("lone surrogate in string")
    return value


def _float_text(value: float) -> str:
    """A float as orjson writes it: repr, but exponents -5 written out and -6..-9 unpadded."""
    if not math.isfinite(value):
        return "null"
    text = repr(value)
    mantissa, e, exponent = text.partition("e")
    if not e or not exponent.startswith("-0"):
        return text
    if exponent == "-05":
        sign, digits = ("-", mantissa[1:]) if mantissa.startswith("-") else ("", mantissa)
        return f"{sign}0.0000{digits.replace('.', '')}"
    return f"{mantissa}e-{exponent[2:]}"


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return _float_text(value)
    return json.dumps(value)  # None, True, False, int


def _pieces(value: Any) -> Iterator[str]:
    """The indented text of ``value``, piece by piece; a stack of open containers, no recursion."""
    # Each frame: the members still to write, the closing bracket, the indent of the container.
    stack: list[tuple[Iterator[tuple[str | None, Any]], str, str]] = []
    pending: list[tuple[Any, str]] = [(value, "")]
    while pending or stack:
        if pending:
            item, indent = pending.pop()
            if isinstance(item, dict | list) and item:
                yield "{" if isinstance(item, dict) else "["
                members = iter(item.items() if isinstance(item, dict)
                               else ((None, v) for v in item))
                stack.append((members, "}" if isinstance(item, dict) else "]", indent))
                first = True
            elif isinstance(item, dict):
                yield "{}"
                continue
            elif isinstance(item, list):
                yield "[]"
                continue
            else:
                yield _scalar(item)
                continue
        else:
            first = False
        members, closing, indent = stack[-1]
        member = next(members, None)
        if member is None:
            stack.pop()
            yield f"\n{indent}{closing}"
            continue
        key, item = member
        inner = indent + "  "
        yield ("\n" if first else ",\n") + inner
        if key is not None:
            yield _scalar(key) + ": "
        pending.append((item, inner))


def dumps_indented(value: Any) -> bytes:
    """``orjson.dumps(value, option=orjson.OPT_INDENT_2)``, byte for byte, without orjson."""
    return "".join(_pieces(value)).encode("utf-8")
