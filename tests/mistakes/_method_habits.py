"""Mistakes the method cases are for (fixtures/_cases/method_cases.py, limit_boundaries.py):
a blank string taken for an empty one, a retry compared by its re-serialized text, a member
named ``__proto__`` lost to JavaScript's object model, a whitespace-only tail taken for a blank
line, a query limit counted in UTF-16 code units."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from persyk_session.operations import _search as _search_operation
from persyk_session.write import _append_plan

from ._model import Dispatch, Mistake, around, on_lines, patching, session_file, viewing
from ._search_habits import _utf16_length
from ._tree import Obj, map_members, map_objects, through_tree

# The members docs/spec.md calls non-empty strings (ENT-3, ENT-4, ENT-7, ENT-17, AST-7).
NON_EMPTY_MEMBERS: frozenset[str] = frozenset({"customType", "provider", "modelId", "reason"})
# JavaScript's String.prototype.trim removes these (WhiteSpace and LineTerminator of ECMA-262).
_JS_SPACE = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_BLANK = b" \t\r"


def _tree(change: Any) -> Any:
    return viewing(on_lines(through_tree(change)))


def _trimmed_empty(name: str, value: Any) -> Any:
    # `if (!value.trim()) reject`: a whitespace-only value is read as the empty string.
    if name in NON_EMPTY_MEMBERS and isinstance(value, str) and value and \
            not value.strip(_JS_SPACE):
        return ""
    return value


def _without_proto(obj: Obj, depth: int) -> Obj:
    # `out[key] = value` for each member: "__proto__" sets the prototype, no member is made.
    return Obj([(k, v) for k, v in obj.pairs if k != "__proto__"])


def _equal_by_dumps(a: Any, b: Any) -> bool:
    # The stored record and the retry compared as json.dumps(sort_keys=True) texts: a float
    # 1.767225603e12 is "1767225603000.0", the int "1767225603000".
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _blank_tail_completed(inner: Dispatch, op: str, args: dict[str, Any]) -> dict[str, Any]:
    # A whitespace-only unterminated last line taken for a blank line that lost its LF.
    file = session_file(args)
    if op != "recover" or file is None or not file.is_file() or file.is_symlink():
        return inner(op, args)
    data = file.read_bytes()
    tail = data[data.rfind(b"\n") + 1:]
    if not tail or tail.strip(_BLANK):
        return inner(op, args)
    with open(file, "ab") as out:
        out.write(b"\n")
    return {"result": {"action": "newline-added", "preserved": None}}


MISTAKES: tuple[Mistake, ...] = (
    Mistake("js-trim-before-non-empty", "JavaScript",
            "a non-empty string member tested with `!value.trim()`: a whitespace-only "
            "customType, provider, modelId or reason refused",
            _tree(map_members(_trimmed_empty)),
            breaks=("ENT-3", "ENT-4", "ENT-7", "ENT-17", "AST-7")),
    Mistake("js-proto-member-dropped", "JavaScript",
            "objects rebuilt by assignment (`out[key] = value`): a member named __proto__ "
            "sets the prototype and is lost, in free values (data, details, arguments) too",
            _tree(map_objects(_without_proto, free=True)),
            breaks=("ENT-3", "CTX-11", "BLK-7")),
    Mistake("py-retry-equality-by-dumps", "Python",
            "an existing id compared with json.dumps(sort_keys=True) texts: a retry whose "
            "timestamp is spelt 1.767225603e12 (a float) is a conflict with 1767225603000",
            patching(lambda: mock.patch.object(_append_plan, "json_equal", _equal_by_dumps)),
            breaks=("APP-12",)),
    Mistake("recover-blank-tail-newline", "recovery",
            "an unterminated whitespace-only last line completed with an LF (a blank line), "
            "not preserved and cut", around(_blank_tail_completed), breaks=("RCV-5", "RCV-16")),
    Mistake("js-query-limit-in-utf16-units", "JavaScript",
            "the 256 code points of a query measured with string length (UTF-16 code units)",
            patching(lambda: mock.patch.object(_search_operation, "len", _utf16_length,
                                               create=True)),
            breaks=("SRCH-29",)),
)
