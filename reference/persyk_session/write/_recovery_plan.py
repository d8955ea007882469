"""The sans-IO recovery planner (docs/spec.md, section RCV): bytes and facts in, a plan out.

Reading never repairs (RCV-1); only ``_recovery.recover`` changes a damaged file. The decision is
made here, without I/O: :func:`classify_fragment` judges the bytes after the last LF, and
:func:`plan_recovery` turns that and the state of the committed lines (a :class:`TailInfo` the
I/O edge gathers) into a :class:`RecoveryPlan` the edge executes.

What counts as a "genuinely incomplete fragment" (RCV-5, RCV-9..RCV-12)
------------------------------------------------------------------------
The fragment is checked as UTF-8 with an incremental decoder: a multi-byte sequence cut off at
the very end is held back, not an error (RCV-12), but any other ill-formed byte is definite
(RCV-9). Then the one JSON grammar that reads every record (``read/_grammar``) reads it in
*prefix mode*: running out of bytes inside a value is not a fault there, and the faults already
written are judged as in a whole record. So a fragment ends in one of these:

* a grammar fault (``{"a":1,]``, ``01``, a control character in a string, a bad escape, a cut
  character outside a string, a byte order mark): ``SYNTAX`` (RCV-9);
* container 129 opened, or no way to close what is open within 1 MiB: ``LIMIT`` (RCV-10);
* a record-rule fault no continuation can undo -- a duplicate key, a lone surrogate escape, a
  number out of range, a root that is not an object: ``INVALID_RECORD`` (RCV-11);
* one complete JSON value: judged as the next record of the session, ``VALID_RECORD`` (RCV-4)
  or ``INVALID_RECORD`` (RCV-11);
* otherwise ``INCOMPLETE`` (RCV-5): some continuation makes it a record.

The grammar does not judge what the next bytes could still change: a number or literal still
being written, a key still being written, an escaped high surrogate at the very end (its low
half may follow), an escape cut off at the end unless every way to finish it is a lone
surrogate. Leniency errs towards truncating, which is safe because the fragment's bytes are
preserved first (RCV-6); schema and graph rules are not applied to an incomplete fragment at all
(its missing members are exactly what the tear removed).

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from .._errors import Code, Diagnostic
from ..read._grammar import Incomplete, JsonFault, parse_json
from ..read._records import MAX_RECORD_BYTES

__all__ = [
    "RECOVERY_DIR",
    "FragmentVerdict",
    "RecoveryPlan",
    "TailInfo",
    "classify_fragment",
    "fragment_name",
    "plan_recovery",
]

# RCV-6: preserved fragments live here, relative to the session directory.
RECOVERY_DIR: Final = "recovery"


# --- classifying a fragment (pure) -------------------------------------------------------------


class FragmentVerdict(enum.Enum):
    VALID_RECORD = "valid-record"  # RCV-4: add the LF
    INCOMPLETE = "incomplete"  # RCV-5: preserve and truncate
    SYNTAX = "syntax"  # RCV-9
    LIMIT = "limit"  # RCV-10
    INVALID_RECORD = "invalid-record"  # RCV-11 (and an incomplete fragment that cannot be one)


# The verdict of each fault the grammar can find in a fragment.
_VERDICT_OF_FAULT: Final = {
    Code.RECORD_JSON_SYNTAX: FragmentVerdict.SYNTAX,  # RCV-9
    Code.RECORD_TOO_DEEP: FragmentVerdict.LIMIT,  # RCV-10
    Code.RECORD_DUPLICATE_KEY: FragmentVerdict.INVALID_RECORD,  # RCV-11
    Code.RECORD_LONE_SURROGATE: FragmentVerdict.INVALID_RECORD,
    Code.RECORD_NUMBER_OUT_OF_RANGE: FragmentVerdict.INVALID_RECORD,
}
_BYTE_ORDER_MARK: Final = b"\xef\xbb\xbf"

CheckRecord = Callable[[dict[str, Any], int], list[Diagnostic]]


def classify_fragment(fragment: bytes, *, line: int, check_record: CheckRecord) -> FragmentVerdict:
    """What recovery may do with the bytes after the last LF (non-empty, no LF).

    ``check_record(value, line)`` applies the header, entry and graph rules to a complete
    record as the next line of the committed session (it must not commit anything).
    """
    if len(fragment) > MAX_RECORD_BYTES:  # RCV-10
        return FragmentVerdict.LIMIT
    if fragment.startswith(_BYTE_ORDER_MARK) or not _utf8_but_a_cut_sequence(fragment):
        return FragmentVerdict.SYNTAX  # RCV-9: REC-13, or REC-2 before the end
    try:
        value = parse_json(fragment, prefix=True)
    except JsonFault as fault:
        return _VERDICT_OF_FAULT[fault.code]
    if isinstance(value, Incomplete):
        return _judge_incomplete(value, len(fragment))
    if type(value) is not dict:  # REC-4
        return FragmentVerdict.INVALID_RECORD
    if check_record(value, line):
        return FragmentVerdict.INVALID_RECORD
    return FragmentVerdict.VALID_RECORD


def _judge_incomplete(fragment: Incomplete, size: int) -> FragmentVerdict:
    if not fragment.object_root:
        return FragmentVerdict.INVALID_RECORD  # REC-4: can never become an object
    # RCV-10: each open container needs at least its closing byte, an open string its quote.
    shortest_completion = size + fragment.open_containers + fragment.in_string
    if shortest_completion > MAX_RECORD_BYTES:
        return FragmentVerdict.LIMIT
    return FragmentVerdict.INCOMPLETE


def _utf8_but_a_cut_sequence(fragment: bytes) -> bool:
    """REC-2 and RCV-12: well-formed UTF-8, except that the last 1-3 bytes may start a
    multi-byte sequence the cut left unfinished (the grammar accepts those only in a string)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        decoder.decode(fragment, final=False)
    except UnicodeDecodeError:
        return False
    held_back: bytes = decoder.getstate()[0]
    return not held_back or _starts_a_sequence(held_back)


def _starts_a_sequence(pending: bytes) -> bool:
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
        # RCV-3; RCV-13: so recovery run on its own result (a file ending with LF) does
        # nothing, and after "removed" there is no session left to recover.
        return RecoveryPlan("none")
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
