"""The sans-IO recovery planner (docs/spec.md, section RCV): bytes and facts in, a plan out.

Reading never repairs (RCV-1); only ``_recovery.recover`` changes a damaged file. The decision is
made here, without I/O: :func:`scan_prefix` and :func:`classify_fragment` look at the bytes after
the last LF, :func:`plan_recovery` turns that and the state of the committed lines (a
:class:`TailInfo` the I/O edge gathers) into a :class:`RecoveryPlan` the edge executes.

What counts as a "genuinely incomplete fragment" (RCV-5, RCV-9, RCV-12)
------------------------------------------------------------------------
The fragment is decoded as UTF-8 with an incremental decoder; a multi-byte sequence cut off at
the very end is held back, not an error (RCV-12), but any other ill-formed byte is definite.
The text is then run through an iterative RFC 8259 pushdown scanner (a stack of open containers,
a state per position, string/escape state inside strings) that accepts exactly the *prefixes*
of JSON texts. It ends in one of four shapes:

* ``COMPLETE``   -- one JSON value followed only by whitespace;
* ``INCOMPLETE`` -- the input ran out inside a value: some continuation makes it a JSON text
  (an open string, a partial escape such as ``\\u12``, a number such as ``1e`` or ``-``, a
  partial literal such as ``tr``, an open container, a dangling ``,`` or ``:``);
* ``SYNTAX``     -- a byte no continuation can repair (``{"a":1,]``, ``01``, a control
  character in a string, a bad escape, a UTF-8 fault before the end, a byte order mark);
* ``TOO_DEEP``   -- container 129 opened (RCV-10).

An incomplete fragment must also be able to become a *record* (RCV-5): its root must be an
object, and the faults the record rules (REC-5, REC-7, REC-8, REC-9) would find in the part
already written must not be definite. To decide that, the scanner builds a *probe*: the fragment
completed minimally (an open string closed, a partial escape padded -- with a low surrogate where
a high one is pending, a partial literal finished, a number still being written replaced by
``0``, a key still being written cut off together with its comma, a dangling ``,`` cut, a ``:``
given the value ``0``, the open containers closed) and parsed with :func:`parse_record`. The
completion never adds a key or a surrogate half that could create a fault, so a fault in the
probe is a fault of every continuation. Two things are deliberately lenient: a number running
to the end (more digits, a fraction or an exponent could still change its range) and a key
still being written are never judged. Leniency errs towards truncating, which is safe because
the fragment's bytes are preserved first (RCV-6); schema and graph rules are not applied to an
incomplete fragment at all (its missing members are exactly what the tear removed).

A file with no complete record (RCV-16)
---------------------------------------
An unterminated first record that is a complete, valid header gets its LF (RCV-4). A file that
holds no complete record at all -- zero bytes, blank lines only, or blank lines followed by an
incomplete fragment (a creator that crashed before or while writing the header) -- holds nothing
committed: recovery preserves its bytes under ``recovery/`` (if there are any) and then removes
``session.jsonl`` (action ``removed``), so that ``create`` can start the session again (GEN-1).
A torn header with a definite fault is damage, not a crash artefact, and is refused as before.
"""

from __future__ import annotations

import codecs
import enum
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from ._errors import Code, ContractError, Diagnostic
from ._records import MAX_DEPTH, MAX_RECORD_BYTES, parse_record

__all__ = [
    "RECOVERY_DIR",
    "FragmentVerdict",
    "RecoveryPlan",
    "Shape",
    "TailInfo",
    "TailScan",
    "classify_fragment",
    "fragment_name",
    "plan_recovery",
    "scan_prefix",
]

# RCV-6: preserved fragments live here, relative to the session directory.
RECOVERY_DIR: Final = "recovery"


# --- the prefix scanner (pure) -----------------------------------------------------------------


class Shape(enum.Enum):
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    SYNTAX = "syntax"
    TOO_DEEP = "too-deep"


@dataclass(frozen=True, slots=True)
class TailScan:
    """The shape of a fragment's text; for INCOMPLETE, the probe (None if no value started)."""

    shape: Shape
    object_root: bool = True
    probe: str | None = None
    ends_in_string: bool = False


_WS: Final = re.compile(r"[ \t\n\r]*")
_STRING_RUN: Final = re.compile(r'[^"\\\x00-\x1f]*')
_ESCAPE: Final = re.compile(r'\\(?:["\\/bfnrt]|u([0-9a-fA-F]{4}))')
_PARTIAL_ESCAPE: Final = re.compile(r"\\(u[0-9a-fA-F]{0,3})?\Z")
_DIGITS: Final = re.compile(r"[0-9]*")
_LITERALS: Final = {"t": "true", "f": "false", "n": "null"}

# Scanner states: what the grammar accepts next.
_VALUE_TOP, _VALUE_MEMBER, _VALUE_OR_CLOSE, _VALUE_AFTER_COMMA = range(4)
_KEY_OR_CLOSE, _KEY_AFTER_COMMA, _COLON, _AFTER_VALUE = range(4, 8)


def _closers(stack: list[str]) -> str:
    return "".join("}" if c == "{" else "]" for c in reversed(stack))


def _is_high(unit: int) -> bool:
    return 0xD800 <= unit <= 0xDBFF


def _escape_completion(pending: str, high_pending: bool) -> str:
    """Finish a partial escape (``pending`` starts at the backslash) without inventing a fault.

    After a high surrogate escape the continuation that pairs it is chosen where one exists;
    a new high surrogate gets a low one after it.
    """
    if pending == "":
        return "\\uDC00" if high_pending else ""
    if pending == "\\":
        return "uDC00" if high_pending else "n"
    digits = pending[2:]
    if high_pending:
        paired = digits + "DC00"[len(digits):]
        if 0xDC00 <= int(paired, 16) <= 0xDFFF:
            return paired[len(digits):]
    fill = "0" * (4 - len(digits))
    return fill + ("\\uDC00" if _is_high(int(digits + fill, 16)) else "")


def _scan_string(text: str, pos: int) -> tuple[str, int, str, bool]:
    """Scan the string opening at ``pos``.

    Returns ``("closed", end, "", False)``, ``("open", len, pending_escape, high_pending)`` when
    the text ends inside it, or ``("syntax", offset, "", False)``.
    """
    size = len(text)
    i = pos + 1
    high_end = -1  # where the last escaped high surrogate ended
    while True:
        i = _STRING_RUN.match(text, i).end()  # type: ignore[union-attr]
        if i == size:
            return "open", size, "", high_end == size
        char = text[i]
        if char == '"':
            return "closed", i + 1, "", False
        if char != "\\":
            return "syntax", i, "", False  # REC-3: a raw control character
        escape = _ESCAPE.match(text, i)
        if escape is None:
            if _PARTIAL_ESCAPE.match(text, i):
                return "open", size, text[i:], high_end == i
            return "syntax", i, "", False
        if escape.group(1) is not None and _is_high(int(escape.group(1), 16)):
            high_end = escape.end()
        i = escape.end()


def _scan_number(text: str, pos: int) -> tuple[int, bool]:
    """The end of the number token at ``pos`` and whether it is a complete number there."""
    size = len(text)
    i = pos + (text[pos] == "-")
    if i == size:
        return size, False
    if text[i] == "0":
        i += 1
    elif "1" <= text[i] <= "9":
        i = _DIGITS.match(text, i + 1).end()  # type: ignore[union-attr]
    else:
        return i, False
    if i < size and text[i] == ".":
        i += 1
        if i == size or not "0" <= text[i] <= "9":
            return i, False
        i = _DIGITS.match(text, i).end()  # type: ignore[union-attr]
    if i < size and text[i] in "eE":
        i += 1
        if i < size and text[i] in "+-":
            i += 1
        if i == size or not "0" <= text[i] <= "9":
            return i, False
        i = _DIGITS.match(text, i).end()  # type: ignore[union-attr]
    return i, True


def scan_prefix(text: str) -> TailScan:
    """Classify ``text`` as a complete JSON text, a proper prefix of one, or neither."""
    size = len(text)
    stack: list[str] = []
    state = _VALUE_TOP
    root: str | None = None
    last_comma = -1
    pos = 0

    def incomplete(probe: str | None, *, in_string: bool = False) -> TailScan:
        return TailScan(Shape.INCOMPLETE, root in (None, "{"), probe, in_string)

    while True:
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if pos == size:
            break
        char = text[pos]
        if state == _AFTER_VALUE:
            if not stack:
                return TailScan(Shape.SYNTAX)  # content after the value
            if char == ",":
                last_comma = pos
                state = _KEY_AFTER_COMMA if stack[-1] == "{" else _VALUE_AFTER_COMMA
            elif char == ("}" if stack[-1] == "{" else "]"):
                stack.pop()
            else:
                return TailScan(Shape.SYNTAX)
            pos += 1
            continue
        if state in (_KEY_OR_CLOSE, _KEY_AFTER_COMMA):
            if char == "}" and state == _KEY_OR_CLOSE:
                stack.pop()
                state = _AFTER_VALUE
                pos += 1
                continue
            if char != '"':
                return TailScan(Shape.SYNTAX)
            outcome, end, _, _ = _scan_string(text, pos)
            if outcome == "syntax":
                return TailScan(Shape.SYNTAX)
            if outcome == "open":
                # A key still being written is never judged: cut it (and its comma) off.
                cut = last_comma if state == _KEY_AFTER_COMMA else pos
                return incomplete(text[:cut] + _closers(stack), in_string=True)
            state = _COLON
            pos = end
            continue
        if state == _COLON:
            if char != ":":
                return TailScan(Shape.SYNTAX)
            state = _VALUE_MEMBER
            pos += 1
            continue
        # A value may start here.
        if char == "]" and state == _VALUE_OR_CLOSE:
            stack.pop()
            state = _AFTER_VALUE
            pos += 1
            continue
        if root is None:
            root = char
        if char in "{[":
            if len(stack) == MAX_DEPTH:  # RCV-10: container 129
                return TailScan(Shape.TOO_DEEP)
            stack.append(char)
            state = _KEY_OR_CLOSE if char == "{" else _VALUE_OR_CLOSE
            pos += 1
        elif char == '"':
            outcome, end, pending, high_pending = _scan_string(text, pos)
            if outcome == "syntax":
                return TailScan(Shape.SYNTAX)
            if outcome == "open":
                finish = _escape_completion(pending, high_pending) + '"'
                return incomplete(text + finish + _closers(stack), in_string=not pending)
            state = _AFTER_VALUE
            pos = end
        elif char == "-" or "0" <= char <= "9":
            end, whole = _scan_number(text, pos)
            if end == size:
                # Lenient: a number still being written is replaced by 0 in the probe.
                return incomplete(text[:pos] + "0" + _closers(stack))
            if not whole:
                return TailScan(Shape.SYNTAX)
            state = _AFTER_VALUE
            pos = end
        elif char in _LITERALS:
            word = _LITERALS[char]
            have = text[pos : pos + len(word)]
            if have == word:
                state = _AFTER_VALUE
                pos += len(word)
            elif pos + len(have) == size and word.startswith(have):
                return incomplete(text + word[len(have):] + _closers(stack))
            else:
                return TailScan(Shape.SYNTAX)
        else:
            return TailScan(Shape.SYNTAX)

    # Only whitespace is left: the state says what a continuation still needs.
    if state == _AFTER_VALUE and not stack:
        return TailScan(Shape.COMPLETE, root == "{")
    if state == _VALUE_TOP:
        return incomplete(None)  # nothing but whitespace yet: a prefix of any record
    if state in (_KEY_AFTER_COMMA, _VALUE_AFTER_COMMA):
        return incomplete(text[:last_comma] + _closers(stack))
    if state == _COLON:
        return incomplete(text + ":0" + _closers(stack))
    if state == _VALUE_MEMBER:
        return incomplete(text + "0" + _closers(stack))
    return incomplete(text + _closers(stack))  # an open container after a value or its opening


# --- classifying a fragment (pure) -------------------------------------------------------------


class FragmentVerdict(enum.Enum):
    VALID_RECORD = "valid-record"  # RCV-4: add the LF
    INCOMPLETE = "incomplete"  # RCV-5: preserve and truncate
    SYNTAX = "syntax"  # RCV-9
    LIMIT = "limit"  # RCV-10
    INVALID_RECORD = "invalid-record"  # RCV-11 (and an incomplete fragment that cannot be one)


def _utf8_prefix_ok(pending: bytes) -> bool:
    """True if ``pending`` (1-3 bytes held back by the decoder) starts a well-formed sequence.

    CPython's incremental decoder holds back ED A0 (an encoded surrogate) instead of failing,
    so the second-byte ranges of RFC 3629 are checked here.
    """
    lead = pending[0]
    second = pending[1] if len(pending) > 1 else None
    if 0xC2 <= lead <= 0xDF:
        return len(pending) == 1
    lows = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}
    if 0xE1 <= lead <= 0xEF or 0xF1 <= lead <= 0xF3 or lead in lows:
        low, high = lows.get(lead, (0x80, 0xBF))
        need = 3 if lead < 0xF0 else 4
        if len(pending) >= need:
            return False
        if second is not None and not low <= second <= high:
            return False
        return all(0x80 <= b <= 0xBF for b in pending[2:])
    return False


# Record faults that no continuation of an incomplete fragment can remove.
_DEFINITE_RECORD_FAULTS: Final = frozenset({
    Code.RECORD_DUPLICATE_KEY,
    Code.RECORD_LONE_SURROGATE,
    Code.RECORD_NUMBER_OUT_OF_RANGE,
    Code.RECORD_NOT_OBJECT,
    Code.RECORD_BYTE_ORDER_MARK,
})


def classify_fragment(
    fragment: bytes,
    *,
    line: int,
    check_record: Callable[[dict[str, Any], int], list[Diagnostic]],
) -> FragmentVerdict:
    """What recovery may do with the bytes after the last LF (non-empty, no LF).

    ``check_record(value, line)`` applies the header, entry and graph rules to a complete
    record as the next line of the committed session (it must not commit anything).
    """
    if len(fragment) > MAX_RECORD_BYTES:
        return FragmentVerdict.LIMIT
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(fragment, final=False)
    except UnicodeDecodeError:
        return FragmentVerdict.SYNTAX  # REC-2 before the end: definite
    held_back = decoder.getstate()[0]
    if held_back and not _utf8_prefix_ok(held_back):
        return FragmentVerdict.SYNTAX
    scan = scan_prefix(text)
    if scan.shape is Shape.SYNTAX:
        return FragmentVerdict.SYNTAX
    if scan.shape is Shape.TOO_DEEP:
        return FragmentVerdict.LIMIT
    if held_back and not scan.ends_in_string:
        # A cut multi-byte character is only ever valid inside a string.
        return FragmentVerdict.SYNTAX
    if scan.shape is Shape.COMPLETE:
        return _judge_complete(fragment, line, check_record)
    if not scan.object_root:
        return FragmentVerdict.INVALID_RECORD  # REC-4: can never become an object
    if scan.probe is None:
        return FragmentVerdict.INCOMPLETE
    try:
        parse_record(scan.probe.encode("utf-8"), line=line)
    except ContractError as error:
        if error.code is Code.RECORD_TOO_LARGE:
            return FragmentVerdict.LIMIT  # no continuation fits in 1 MiB
        if error.code in _DEFINITE_RECORD_FAULTS:
            return FragmentVerdict.INVALID_RECORD
        # The probe is built to be JSON; if it is not, refuse rather than truncate.
        return FragmentVerdict.SYNTAX
    return FragmentVerdict.INCOMPLETE


def _judge_complete(
    fragment: bytes,
    line: int,
    check_record: Callable[[dict[str, Any], int], list[Diagnostic]],
) -> FragmentVerdict:
    try:
        value = parse_record(fragment, line=line)
    except ContractError as error:
        if error.code is Code.RECORD_TOO_LARGE:
            return FragmentVerdict.LIMIT
        return FragmentVerdict.INVALID_RECORD
    return FragmentVerdict.INVALID_RECORD if check_record(value, line) else (
        FragmentVerdict.VALID_RECORD
    )


# --- planning (pure) ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TailInfo:
    """What the shell learned about the file, for :func:`plan_recovery`.

    ``interior_fault`` is the first fault of the LF-terminated part (or of the whole file when
    it is empty); ``fragment`` is None when the file ends with LF; ``verdict`` classifies it.
    """

    size: int
    interior_fault: Diagnostic | None
    tail_offset: int
    tail_line: int
    fragment: bytes | None
    verdict: FragmentVerdict | None
    # RCV-16: the file holds no complete record; ``fragment`` is then the whole file.
    no_record: bool = False


@dataclass(frozen=True, slots=True)
class RecoveryPlan:
    """``action`` is none, newline-added, truncated, removed or refused (carrying ``error``)."""

    action: str
    error: Diagnostic | None = None
    truncate_to: int | None = None
    fragment: bytes | None = None
    preserve_as: str | None = None  # relative to the session directory


def fragment_name(offset: int, fragment: bytes) -> str:
    """Where a fragment is preserved: unique per position and content, so a rerun after a crash
    between preserving and truncating finds its own earlier copy."""
    digest = hashlib.sha256(fragment).hexdigest()[:12]
    return f"{RECOVERY_DIR}/session.jsonl.{offset}-{digest}.fragment"


_REFUSALS: Final = {
    FragmentVerdict.SYNTAX: (Code.RECOVER_TAIL_SYNTAX, "the last line has a definite syntax error"),
    FragmentVerdict.LIMIT: (Code.RECOVER_TAIL_LIMIT, "the last line exceeds the record limits"),
    FragmentVerdict.INVALID_RECORD: (
        Code.RECOVER_TAIL_INVALID_RECORD, "the last line cannot be a valid record"),
}


def plan_recovery(tail: TailInfo) -> RecoveryPlan:
    """Decide the repair; refusals change nothing (RCV-8..RCV-11)."""
    if tail.no_record and tail.verdict in (None, FragmentVerdict.INCOMPLETE):
        # RCV-16: nothing committed to keep; preserve what there is, then remove the file.
        kept = tail.fragment or None
        return RecoveryPlan(
            "removed", fragment=kept,
            preserve_as=fragment_name(0, kept) if kept is not None else None,
        )
    # RCV-15: interior faults first.
    if tail.interior_fault is not None:
        return RecoveryPlan("refused", Diagnostic(
            Code.RECOVER_INTERIOR_DAMAGE, line=tail.interior_fault.line,
            detail="a complete line of the session is invalid"))
    if tail.fragment is None or tail.verdict is None:
        return RecoveryPlan("none")  # RCV-3
    if tail.verdict is FragmentVerdict.VALID_RECORD:
        return RecoveryPlan("newline-added")  # RCV-4
    if tail.verdict is FragmentVerdict.INCOMPLETE:
        if tail.tail_offset == 0:
            # No committed header: truncating would leave no session (module docstring).
            return RecoveryPlan("refused", Diagnostic(
                Code.RECOVER_TAIL_INVALID_RECORD, line=tail.tail_line,
                detail="the session has no complete header to keep"))
        return RecoveryPlan(
            "truncated",
            truncate_to=tail.tail_offset,
            fragment=tail.fragment,
            preserve_as=fragment_name(tail.tail_offset, tail.fragment),
        )
    code, detail = _REFUSALS[tail.verdict]
    return RecoveryPlan("refused", Diagnostic(code, line=tail.tail_line, detail=detail))
