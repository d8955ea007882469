"""The graph rules of an entry against the entries committed before it (no I/O).

Written once against ``_entries.EntryLookup`` (is an id committed, and what is kept of it), so
the readable table and the column-wise one run the same rules. Only called for an entry that
passed the schema: its envelope members are present and well typed, and so is the ``targetId``
or ``recordingId`` of the types that require one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._errors import Code, Diagnostic
from ._entries import EntryLookup, EntryMeta

__all__ = [
    "RECORDING_TERMINAL_TYPES",
    "RECORDING_TYPES",
    "REMOVABLE_TYPES",
    "TARGETING_TYPES",
    "graph_findings",
]

# TREE-7: a removal may only target conversation content.
REMOVABLE_TYPES: Final = frozenset({"message", "custom_message"})
# TREE-11: the entry types that end a recording (at most one per recording, after its start).
RECORDING_TERMINAL_TYPES: Final = frozenset({"recording.finished", "recording.interrupted"})
RECORDING_TYPES: Final = frozenset({"recording.started", *RECORDING_TERMINAL_TYPES})
# TREE-4, TREE-5: the entry types whose ``targetId`` names an earlier entry.
TARGETING_TYPES: Final = frozenset({"label", "message.removed"})


def graph_findings(
    entry: dict[str, Any],
    line: int,
    committed: EntryLookup,
    recordings: Mapping[str, bool],
) -> list[Diagnostic]:
    """The findings for ``entry`` as the next entry after ``committed``.

    ``recordings`` maps each recordingId started so far to whether a terminal entry was seen.
    TREE-12: every finding is reported at ``line``, the line of the referring entry. ID-2:
    ids are looked up by exact, case-sensitive string equality.
    """
    found: list[Diagnostic] = []
    entry_type: str = entry["type"]
    parent_id: str | None = entry["parentId"]

    # ID-3: entry ids are unique within a session.
    if entry["id"] in committed:
        found.append(_finding(Code.ID_DUPLICATE, line, "/id", "an earlier entry has the same id"))
    # TREE-1, ID-4: a parent is an earlier entry (the header is not an entry). TREE-2: a null
    # parent (another root) and several children are fine; TREE-3: of any type.
    if parent_id is not None and parent_id not in committed:
        found.append(_finding(
            Code.PARENT_NOT_FOUND, line, "/parentId", "the parent is not an earlier entry"))

    if entry_type == "label":
        # TREE-4: the target is an earlier entry.
        if entry["targetId"] not in committed:
            found.append(_finding(
                Code.LABEL_TARGET_NOT_FOUND, line, "/targetId",
                "the label target is not an earlier entry"))
    elif entry_type == "message.removed":
        found.extend(_removal_findings(entry["targetId"], parent_id, line, committed))
    elif entry_type in RECORDING_TYPES:
        found.extend(_recording_findings(entry_type, entry["recordingId"], line, recordings))
    return found


def _removal_findings(
    target_id: str, parent_id: str | None, line: int, committed: EntryLookup
) -> list[Diagnostic]:
    target = committed.get(target_id)
    # TREE-5: the target is an earlier entry.
    if target is None:
        return [_finding(
            Code.REMOVAL_TARGET_NOT_FOUND, line, "/targetId",
            "the removal target is not an earlier entry")]
    parent = None if parent_id is None else committed.get(parent_id)
    if parent_id is not None and parent is None:
        return []  # PARENT_NOT_FOUND already says why the chain cannot be followed
    # TREE-6: the target is on the removal's own parent chain.
    if parent is None or not _is_ancestor_or_self(target, parent, committed):
        return [_finding(
            Code.REMOVAL_TARGET_NOT_ANCESTOR, line, "/targetId",
            "the removal target is not an ancestor of the removal")]
    # TREE-7: only message and custom_message entries can be removed.
    if target.type not in REMOVABLE_TYPES:
        return [_finding(
            Code.REMOVAL_TARGET_WRONG_TYPE, line, "/targetId",
            "the removal target is not a message or custom message")]
    return []


def _is_ancestor_or_self(target: EntryMeta, start: EntryMeta, committed: EntryLookup) -> bool:
    """Walk up from ``start`` only as far as the target's depth: O(depth difference)."""
    node: EntryMeta | None = start
    while node is not None and node.depth > target.depth:
        node = None if node.parent_id is None else committed.get(node.parent_id)
    return node is not None and node.id == target.id


def _recording_findings(
    entry_type: str, recording_id: str, line: int, recordings: Mapping[str, bool]
) -> list[Diagnostic]:
    ended = recordings.get(recording_id)
    # TREE-9..TREE-11: one recording.started per recording, at most one terminal entry after
    # it, in file order only (TREE-13).
    if entry_type == "recording.started" and ended is not None:
        return [_finding(
            Code.RECORDING_DUPLICATE, line, "/recordingId", "the recording was already started")]
    if entry_type in RECORDING_TERMINAL_TYPES and ended is None:  # TREE-10
        return [_finding(
            Code.RECORDING_NOT_STARTED, line, "/recordingId",
            "the recording was not started earlier")]
    if entry_type in RECORDING_TERMINAL_TYPES and ended:
        return [_finding(
            Code.RECORDING_ALREADY_ENDED, line, "/recordingId",
            "the recording already has a terminal entry")]
    return []


def _finding(code: Code, line: int, pointer: str, detail: str) -> Diagnostic:
    return Diagnostic(code, line=line, pointer=pointer, detail=detail)
