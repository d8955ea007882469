"""Leaf selection, ancestry and the three context layers (no I/O).

The layers are separate on purpose (spec.md, "Branches and context"):

1. :func:`effective_history` -- the selected ancestry's message and custom_message entries minus
   the removed ones, plus the branch-local custom state. This is what ``context`` returns.
2. :func:`to_generic_context` -- the role/content messages an LLM API would be given.
3. :func:`validate_for_target` -- what one target API accepts; it omits (and reports) orphan tool
   results and unsupported blocks, never touching the layers above.

Bodies are read through a ``load(entry)`` callback so that this module stays free of I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .._errors import Code, ContractError, Diagnostic
from ._index import EntryMeta, SessionIndex

__all__ = [
    "HISTORY_BODY_TYPES",
    "TARGETS",
    "History",
    "LeafSelector",
    "Omission",
    "ancestry",
    "effective_history",
    "select_leaf",
    "to_generic_context",
    "validate_for_target",
]

LoadBody = Callable[[EntryMeta], dict[str, Any]]

# CTX-6, CTX-8: only these entry types are conversation content; custom state is kept apart.
CONVERSATION_TYPES = frozenset({"message", "custom_message"})
# The entry types whose bodies effective_history reads (CTX-6, CTX-11): a read that projects
# context keeps these from its validating pass (``open_session(keep=...)``).
HISTORY_BODY_TYPES = CONVERSATION_TYPES | {"custom"}

# CTX-15, CTX-16: block types each target API accepts in a message's content. Anything else
# (including unknown blocks, which history keeps unchanged) is omitted at this layer only.
TARGETS: dict[str, frozenset[str]] = {
    "openai-chat": frozenset({"text", "image", "audio", "toolCall"}),
    "anthropic-messages": frozenset({"text", "image", "thinking", "toolCall"}),
}
DEFAULT_TARGET = "openai-chat"


@dataclass(frozen=True, slots=True)
class LeafSelector:
    """Which leaf a read selects: the default (omitted), explicit null, or an explicit id."""

    kind: Literal["default", "null", "id"]
    id: str | None = None

    @classmethod
    def default(cls) -> LeafSelector:
        return cls("default")

    @classmethod
    def null(cls) -> LeafSelector:
        return cls("null")

    @classmethod
    def explicit(cls, entry_id: str) -> LeafSelector:
        return cls("id", entry_id)


def select_leaf(index: SessionIndex, selector: LeafSelector) -> str | None:
    """The selected leaf id, or None for empty ancestry.

    CTX-1: omitted selects the last entry of any type; CTX-2: null selects empty ancestry;
    CTX-3: an explicit id that is not an entry fails with LEAF_NOT_FOUND, never falling back.
    """
    if selector.kind == "default":
        return index.default_leaf
    if selector.kind == "null":
        return None
    # CTX-21: an entry of any type may be the leaf. CTX-26: the header is not an entry, so its
    # id is not found here (ID-4).
    if selector.id is None or selector.id not in index.by_id:
        raise ContractError(
            [Diagnostic(Code.LEAF_NOT_FOUND, detail="the selected leaf is not an entry")]
        )
    return selector.id


def ancestry(index: SessionIndex, leaf: str | None) -> list[EntryMeta]:
    """The leaf and its ancestors, root first (empty for a null leaf). O(depth).

    CTX-4: root first; CTX-21: followed the same way whatever the leaf's type."""
    return index.ancestry(leaf)


@dataclass(frozen=True, slots=True)
class History:
    """The effective history of one leaf: the ``context`` result of
    docs/maintainers/architecture.md."""

    leaf: str | None
    messages: tuple[dict[str, Any], ...]
    custom: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"leaf": self.leaf, "messages": list(self.messages), "custom": list(self.custom)}


def effective_history(index: SessionIndex, leaf: str | None, load: LoadBody) -> History:
    """The conversation along ``leaf``'s ancestry with removals applied.

    Only entries on the path are read. CTX-7: a removal applies only when the
    removal entry itself is on the selected path, so a removal on a sibling branch hides nothing
    here. Custom state (``custom`` entries) is branch-local: only the path's entries count.
    """
    # CTX-5: only the ancestry is read; siblings and other branches contribute nothing.
    path = ancestry(index, leaf)
    removed = {
        entry.target_id
        for entry in path
        if entry.type == "message.removed" and entry.target_id is not None
    }
    messages: list[dict[str, Any]] = []
    custom: list[dict[str, Any]] = []
    # TREE-8: a target removed twice is simply in the set once. CTX-18: API events and
    # connections are evidence, never history, and nothing here acts on them.
    for entry in path:
        if entry.type in CONVERSATION_TYPES and entry.id not in removed:
            messages.append(_history_item(entry, load(entry)))
        elif entry.type == "custom":  # CTX-11: custom state is branch-local, in path order
            body = load(entry)
            custom.append({"id": entry.id, "customType": body["customType"], "data": body["data"]})
    # CTX-22: an empty history (nothing yet, or everything removed) is a valid result.
    return History(leaf=leaf, messages=tuple(messages), custom=tuple(custom))


def _history_item(entry: EntryMeta, body: dict[str, Any]) -> dict[str, Any]:
    if entry.type == "message":
        # AST-9, BLK-8: the message as stored: its text whatever its asset's status, unknown
        # blocks unchanged.
        return {"id": entry.id, "type": "message", "message": body["message"]}
    # CTX-9: custom_message details stay separate from content.
    item: dict[str, Any] = {
        "id": entry.id,
        "type": "custom_message",
        "customType": body["customType"],
        "content": body["content"],
        "display": body["display"],
    }
    if "details" in body:
        item["details"] = body["details"]
    return item


def to_generic_context(history: History) -> list[dict[str, Any]]:
    """The role/content messages an LLM API would be given for ``history``.

    A custom_message becomes a user-role message with its content only (no details); a tool
    result keeps its call id, name and error flag but never its details (CTX-10); unknown blocks
    are kept as they are -- deciding what a target accepts is the next layer's job.
    """
    generic: list[dict[str, Any]] = []
    for item in history.messages:
        if item["type"] == "custom_message":
            generic.append({"role": "user", "content": item["content"]})
            continue
        message = item["message"]
        role = message["role"]
        if role == "toolResult":
            generic.append(
                {
                    "role": role,
                    "toolCallId": message["toolCallId"],
                    "toolName": message["toolName"],
                    "isError": message["isError"],
                    "content": message["content"],
                }
            )
        else:
            generic.append({"role": role, "content": message["content"]})
    return generic


@dataclass(frozen=True, slots=True)
class Omission:
    """One thing left out for a target: where (a JSON pointer into the generic list) and why."""

    pointer: str
    reason: Literal["orphan-tool-result", "unsupported-block", "empty-message"]

    def to_json(self) -> dict[str, str]:
        return {"pointer": self.pointer, "reason": self.reason}


def validate_for_target(
    generic: list[dict[str, Any]], target: str = DEFAULT_TARGET
) -> tuple[list[dict[str, Any]], list[Omission]]:
    """The messages ``target`` accepts, and what was omitted to get there.

    CTX-17: orphan tool results (no earlier assistant toolCall with that id) may be omitted only
    here; the history keeps them. Blocks the target does not support are omitted, and a message
    left with no content by that is omitted too. The input list is not modified.
    """
    try:
        supported = TARGETS[target]
    except KeyError:
        raise ValueError(f"unknown target; known: {', '.join(sorted(TARGETS))}") from None
    out: list[dict[str, Any]] = []
    omissions: list[Omission] = []
    call_ids: set[str] = set()
    for i, message in enumerate(generic):
        if message["role"] == "toolResult" and message.get("toolCallId") not in call_ids:
            omissions.append(Omission(f"/{i}", "orphan-tool-result"))
            continue
        content = message.get("content")
        if not isinstance(content, list):
            out.append(message)
            continue
        kept: list[Any] = []
        for j, block in enumerate(content):
            block_type = block.get("type") if isinstance(block, dict) else None
            if block_type not in supported:
                omissions.append(Omission(f"/{i}/content/{j}", "unsupported-block"))
                continue
            kept.append(block)
            if message["role"] == "assistant" and block_type == "toolCall":
                call_id = block.get("id")
                if isinstance(call_id, str):
                    call_ids.add(call_id)
        if content and not kept:
            omissions.append(Omission(f"/{i}", "empty-message"))
            continue
        out.append({**message, "content": kept} if len(kept) != len(content) else message)
    return out, omissions
