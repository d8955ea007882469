"""The ``equalsRecords`` file check: the records a writer wrote, compared by JSON value.

A writer's MUST rules (REC-22, APP-10, APP-15) fix *which* records it writes and that committed
bytes never change, not how it spells them: key order, number spelling and (REC-24 being a
SHOULD) insignificant whitespace are its own. So a written file is compared with the expected
one line by line as JSON values, while the lines the case's tree already held stay
byte-identical (an append never rewrites them), and each written line ends in a bare LF
(REC-22). ``compact`` adds REC-24 for SHOULD cases: no
insignificant whitespace and non-ASCII text as raw UTF-8, judged on each line by itself (key
order still free).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["record_file_problems"]

# A \u escape of a non-ASCII code point (surrogate halves of astral characters included).
# An even run of backslashes before it is escaped backslashes, not part of the escape.
_ESCAPED_NON_ASCII = re.compile(rb"(?:^|[^\\])(?:\\\\)*\\u(?:00[89a-fA-F][0-9a-fA-F]"
                                rb"|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def record_file_problems(
    rel: str, actual: bytes, expected: bytes, before: bytes | None, *, compact: bool
) -> list[str]:
    """Why ``actual`` does not hold ``expected``'s records (empty: it does)."""
    # Only the complete lines the tree held: a torn tail may be a prefix of the expected record.
    lines_before = before[: before.rfind(b"\n") + 1] if before else b""
    kept = lines_before if expected.startswith(lines_before) else b""
    if not actual.startswith(kept):
        return [f"{rel}: the lines the session held before the case changed"]
    first_line = kept.count(b"\n") + 1
    want = expected[len(kept):].split(b"\n")
    got = actual[len(kept):].split(b"\n")
    if got[-1] != b"":
        return [f"{rel}: the file does not end with LF"]
    if len(got) != len(want):
        return [f"{rel}: expected {len(want) - 1} written record line(s), got {len(got) - 1}"]
    problems: list[str] = []
    for offset, (line, wanted) in enumerate(zip(got[:-1], want[:-1], strict=True)):
        where = f"{rel} line {first_line + offset}"
        value = _value(line)
        if line.endswith(b"\r"):
            # REC-22 (MUST): a single LF with no CR before it; REC-14 lets a reader take the
            # CR as whitespace, which is why the value comparison alone cannot see it.
            problems.append(f"{where}: a CR before its LF (REC-22)")
        elif value is _NOT_JSON:
            problems.append(f"{where}: not a JSON text")
        elif value != _value(wanted):
            problems.append(f"{where}: a different JSON value than expected")
        elif compact and not _is_compact(line):
            problems.append(f"{where}: not compact raw UTF-8 (REC-24)")
    return problems


_NOT_JSON: Any = object()


def _value(line: bytes) -> Any:
    try:
        return json.loads(line.decode("utf-8"))
    except ValueError:
        return _NOT_JSON


def _is_compact(line: bytes) -> bool:
    """No whitespace outside strings, and no escaped non-ASCII character inside them."""
    strings = _STRING.findall(line)
    outside = _STRING.sub(b'""', line)
    if any(byte in outside for byte in b" \t\r"):
        return False
    return not any(_ESCAPED_NON_ASCII.search(s) for s in strings)
