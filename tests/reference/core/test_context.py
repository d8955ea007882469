"""Leaf selection, ancestry and the three context layers, over an in-memory index."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from persyk_session import (
    Code,
    ContractError,
    EntryMeta,
    IndexBuilder,
    LeafSelector,
    SessionIndex,
    ancestry,
    effective_history,
    select_leaf,
    to_generic_context,
    validate_for_target,
)
from persyk_session.read._context import TARGETS

TS = "2026-01-01T00:00:00.000Z"


def header() -> dict[str, Any]:
    return {"type": "session", "version": 1, "id": "s-1", "timestamp": TS}


def entry(type_: str, id_: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": type_, "id": id_, "parentId": parent, "timestamp": TS, **fields}


def message(
    id_: str, parent: str | None, role: str, *blocks: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    body = {"role": role, "timestamp": 1767225601000, "content": list(blocks), **extra}
    return entry("message", id_, parent, message=body)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_call(call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {}}


def tool_result(id_: str, parent: str | None, call_id: str) -> dict[str, Any]:
    return message(
        id_,
        parent,
        "toolResult",
        text("result"),
        toolCallId=call_id,
        toolName="read",
        isError=False,
        details={"raw": "tool details"},
    )


class Session:
    """An index plus a body loader over the same records, counting what was loaded."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        builder = IndexBuilder()
        self.bodies: dict[int, dict[str, Any]] = {}
        for line, record in enumerate(records, start=1):
            assert builder.add_record(record, line=line, offset=line, length=1) == []
            self.bodies[line] = record
        self.index: SessionIndex = builder.build()
        self.loaded: list[str] = []

    def load(self, meta: EntryMeta) -> dict[str, Any]:
        self.loaded.append(meta.id)
        return copy.deepcopy(self.bodies[meta.line])

    def history(self, leaf: str | None) -> list[str]:
        return [m["id"] for m in effective_history(self.index, leaf, self.load).messages]


def linear() -> Session:
    return Session(
        [
            header(),
            message("m1", None, "user", text("one")),
            message("m2", "m1", "assistant", text("two")),
            entry("label", "l1", "m2", targetId="m1", label="x"),
        ]
    )


def test_default_leaf_is_last_entry_of_any_type() -> None:
    assert select_leaf(linear().index, LeafSelector.default()) == "l1"


def test_explicit_null_leaf_gives_empty_history() -> None:
    session = linear()
    leaf = select_leaf(session.index, LeafSelector.null())
    assert leaf is None
    history = effective_history(session.index, leaf, session.load)
    assert history.to_json() == {"leaf": None, "messages": [], "custom": []}


def test_explicit_leaf_selects_that_entry() -> None:
    assert select_leaf(linear().index, LeafSelector.explicit("m1")) == "m1"


def test_absent_explicit_leaf_fails_without_fallback() -> None:
    with pytest.raises(ContractError) as caught:
        select_leaf(linear().index, LeafSelector.explicit("nope"))
    assert caught.value.code == Code.LEAF_NOT_FOUND
    assert "nope" not in str(caught.value)


def test_ancestry_is_root_first() -> None:
    session = linear()
    assert [e.id for e in ancestry(session.index, "l1")] == ["m1", "m2", "l1"]
    assert ancestry(session.index, None) == []


def test_history_has_only_conversation_entries_of_the_path() -> None:
    session = Session(
        [
            header(),
            message("m1", None, "user", text("one")),
            entry("session_info", "i1", "m1", name="n"),
            entry("model_change", "mc", "i1", provider="p", modelId="m"),
            message("m2", "mc", "assistant", text("two")),
            message("m3", "m1", "assistant", text("sibling")),
        ]
    )
    assert session.history("m2") == ["m1", "m2"]
    assert session.history("m3") == ["m1", "m3"]


def test_only_bodies_on_the_path_are_loaded() -> None:
    session = Session(
        [
            header(),
            message("m1", None, "user", text("one")),
            message("big", "m1", "assistant", text("sibling")),
            entry("label", "l1", "m1", targetId="m1", label="x"),
            message("m2", "l1", "assistant", text("two")),
        ]
    )
    session.history("m2")
    assert session.loaded == ["m1", "m2"]


def test_removal_hides_target_only_on_its_branch() -> None:
    session = Session(
        [
            header(),
            message("m1", None, "user", text("one")),
            message("m2", "m1", "assistant", text("two")),
            entry("message.removed", "r1", "m2", targetId="m1"),
            message("m3", "r1", "user", text("three")),
            message("b1", "m2", "user", text("sibling branch")),
        ]
    )
    assert session.history("m3") == ["m2", "m3"]
    assert session.history("b1") == ["m1", "m2", "b1"]
    # Above the removal on its own branch, the target is still there.
    assert session.history("m2") == ["m1", "m2"]


def test_custom_message_removal_hides_it() -> None:
    session = Session(
        [
            header(),
            entry("custom_message", "c1", None, customType="x", content=[text("c")], display=True),
            entry("message.removed", "r1", "c1", targetId="c1"),
        ]
    )
    assert session.history("r1") == []


def test_custom_state_is_branch_local() -> None:
    session = Session(
        [
            header(),
            message("m1", None, "user", text("one")),
            entry("custom", "s1", "m1", customType="x.mode", data={"mode": "a"}),
            entry("custom", "s2", "m1", customType="x.mode", data=None),
            message("m2", "s1", "assistant", text("two")),
        ]
    )
    history = effective_history(session.index, "m2", session.load)
    assert history.custom == ({"id": "s1", "customType": "x.mode", "data": {"mode": "a"}},)
    assert [c["id"] for c in effective_history(session.index, "s2", session.load).custom] == ["s2"]
    assert [m["id"] for m in history.messages] == ["m1", "m2"]


def test_custom_message_details_kept_separate_from_content() -> None:
    cm = entry(
        "custom_message",
        "c1",
        None,
        customType="x.note",
        content=[text("visible")],
        display=False,
        details={"k": "v"},
    )
    session = Session([header(), cm])
    (item,) = effective_history(session.index, "c1", session.load).messages
    assert item == {
        "id": "c1",
        "type": "custom_message",
        "customType": "x.note",
        "content": [text("visible")],
        "display": False,
        "details": {"k": "v"},
    }


def tool_session() -> Session:
    return Session(
        [
            header(),
            message("u1", None, "user", text("read it"), {"type": "x.future", "v": 1}),
            message(
                "a1", "u1", "assistant", {"type": "thinking", "thinking": "hmm"}, tool_call("c1")
            ),
            tool_result("t1", "a1", "c1"),
            tool_result("t2", "t1", "c-orphan"),
            entry(
                "custom_message",
                "cm",
                "t2",
                customType="x.note",
                content=[text("note")],
                display=True,
                details={"d": 1},
            ),
        ]
    )


def generic_of(session: Session, leaf: str) -> list[dict[str, Any]]:
    return to_generic_context(effective_history(session.index, leaf, session.load))


def test_generic_context_turns_custom_message_into_user_content_only() -> None:
    generic = generic_of(tool_session(), "cm")
    assert generic[-1] == {"role": "user", "content": [text("note")]}


def test_generic_context_drops_tool_result_details() -> None:
    generic = generic_of(tool_session(), "cm")
    assert generic[2] == {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "isError": False,
        "content": [text("result")],
    }


def test_generic_context_keeps_unknown_blocks() -> None:
    generic = generic_of(tool_session(), "cm")
    assert generic[0]["content"][1] == {"type": "x.future", "v": 1}


def test_orphan_tool_result_omitted_only_at_target_layer() -> None:
    session = tool_session()
    history = effective_history(session.index, "cm", session.load)
    assert [m["id"] for m in history.messages] == ["u1", "a1", "t1", "t2", "cm"]
    generic = to_generic_context(history)
    assert [m.get("toolCallId") for m in generic if m["role"] == "toolResult"] == ["c1", "c-orphan"]
    messages, omissions = validate_for_target(generic, "openai-chat")
    assert [m.get("toolCallId") for m in messages if m["role"] == "toolResult"] == ["c1"]
    assert {"pointer": "/3", "reason": "orphan-tool-result"} in [o.to_json() for o in omissions]


def test_tool_result_before_its_call_is_an_orphan() -> None:
    generic: list[dict[str, Any]] = [
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "r",
            "isError": False,
            "content": [],
        },
        {"role": "assistant", "content": [tool_call("c1")]},
    ]
    messages, omissions = validate_for_target(generic)
    assert [m["role"] for m in messages] == ["assistant"]
    assert [o.reason for o in omissions] == ["orphan-tool-result"]


@pytest.mark.parametrize(
    ("target", "omitted_pointers"),
    [
        pytest.param("openai-chat", ["/0/content/1", "/1/content/0"], id="openai-omits-thinking"),
        pytest.param("anthropic-messages", ["/0/content/1"], id="anthropic-keeps-thinking"),
    ],
)
def test_unsupported_blocks_omitted_for_target_but_kept_in_history(
    target: str, omitted_pointers: list[str]
) -> None:
    session = tool_session()
    generic = generic_of(session, "t1")
    before = copy.deepcopy(generic)
    _, omissions = validate_for_target(generic, target)
    assert [o.pointer for o in omissions if o.reason == "unsupported-block"] == omitted_pointers
    assert generic == before  # the layer below is never modified


def test_message_emptied_by_omissions_is_omitted() -> None:
    generic: list[dict[str, Any]] = [
        {"role": "user", "content": [text("q")]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "only"}]},
    ]
    messages, omissions = validate_for_target(generic, "openai-chat")
    assert messages == [generic[0]]
    assert [o.to_json() for o in omissions] == [
        {"pointer": "/1/content/0", "reason": "unsupported-block"},
        {"pointer": "/1", "reason": "empty-message"},
    ]


def test_unknown_target_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown target"):
        validate_for_target([], "no-such-api")


def test_targets_table_names_only_known_block_types() -> None:
    from persyk_session.read._schema import KNOWN_BLOCK_TYPES

    assert frozenset[str]().union(*TARGETS.values()) <= KNOWN_BLOCK_TYPES
