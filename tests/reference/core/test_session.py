"""The graph rules of IndexBuilder, fed parsed records directly (no files)."""

from __future__ import annotations

from typing import Any

import pytest
from persyk_conformance.records import (
    HEADER_ID,
    custom,
    entry,
    header,
    label,
    rec_finished,
    rec_interrupted,
    rec_started,
    removed,
    session_info,
    user,
)
from persyk_session import Code, IndexBuilder, SessionIndex
from persyk_session.read._index import MAX_REPORTED_DIAGNOSTICS


def build(records: list[dict[str, Any]]) -> SessionIndex:
    builder = IndexBuilder()
    for line, record in enumerate(records, start=1):
        builder.add_record(record, line=line, offset=line * 1000, length=10)
    return builder.build()


def codes(index: SessionIndex) -> list[tuple[str, int | None]]:
    return [(str(d.code), d.line) for d in index.diagnostics]


def test_valid_linear_session_has_no_diagnostics() -> None:
    index = build([header(), user("m1", None), user("m2", "m1"), custom("s1", "m2")])
    assert index.valid
    assert codes(index) == []
    assert [e.id for e in index.entries] == ["m1", "m2", "s1"]
    assert index.header == header()


def test_header_only_session_is_valid_with_no_default_leaf() -> None:
    index = build([header()])
    assert index.valid
    assert index.default_leaf is None


def test_default_leaf_is_last_entry_of_any_type() -> None:
    index = build([header(), user("m1", None), user("m2", "m1"), label("l1", None, "m1", "x")])
    assert index.default_leaf == "l1"


def test_entry_meta_records_position_and_graph_fields_only() -> None:
    index = build(
        [header(), user("m1", None), removed("r1", "m1", "m1"), rec_started("a", "r1", "rec")]
    )
    m1, r1, rec = index.entries
    assert (m1.line, m1.offset, m1.length, m1.depth) == (2, 2000, 10, 0)
    assert (r1.parent_id, r1.target_id, r1.depth) == ("m1", "m1", 1)
    assert rec.recording_id == "rec"
    # The index shares one string per id instead of copying it into each reference.
    assert r1.parent_id is m1.id
    assert r1.target_id is m1.id


def test_first_record_not_a_session_is_header_not_first() -> None:
    index = build([user("m1", None), user("m2", "m1")])
    assert not index.valid
    # m1 is not indexed (it is not a header), so m2's parent is missing too.
    assert codes(index) == [("HEADER_NOT_FIRST", 1), ("PARENT_NOT_FOUND", 2)]


def test_second_session_record_is_header_repeated() -> None:
    index = build([header(), user("m1", None), header()])
    assert codes(index) == [("HEADER_REPEATED", 3)]


def test_invalid_header_is_reported_and_not_kept() -> None:
    bad = {**header(), "version": 2}
    index = build([bad, user("m1", None)])
    assert index.header is None
    assert not index.valid
    assert [d.line for d in index.diagnostics] == [1]


GRAPH_REJECTIONS = [
    pytest.param(
        [header(), user("m1", None), user("m1", None)], "ID_DUPLICATE", 3, id="duplicate-id"
    ),
    pytest.param(
        [header(), user("m2", "m1"), user("m1", None)], "PARENT_NOT_FOUND", 2, id="parent-later"
    ),
    pytest.param(
        [header(), user("m1", HEADER_ID)], "PARENT_NOT_FOUND", 2, id="parent-is-header-id"
    ),
    pytest.param([header(), user("m1", "m1")], "PARENT_NOT_FOUND", 2, id="parent-is-self"),
    pytest.param(
        [header(), label("l1", None, "m1", "x"), user("m1", None)],
        "LABEL_TARGET_NOT_FOUND",
        2,
        id="label-target-later",
    ),
    pytest.param(
        [header(), user("m1", None), removed("r1", "m1", "nope")],
        "REMOVAL_TARGET_NOT_FOUND",
        3,
        id="removal-target-absent",
    ),
    pytest.param(
        [header(), user("m1", None), user("m2", "m1"), user("m3", "m1"), removed("r1", "m3", "m2")],
        "REMOVAL_TARGET_NOT_ANCESTOR",
        5,
        id="removal-target-on-sibling",
    ),
    pytest.param(
        [header(), user("m1", None), removed("r1", None, "m1")],
        "REMOVAL_TARGET_NOT_ANCESTOR",
        3,
        id="removal-at-root",
    ),
    pytest.param(
        [header(), user("m1", None), custom("s1", "m1"), removed("r1", "s1", "s1")],
        "REMOVAL_TARGET_WRONG_TYPE",
        4,
        id="removal-of-custom-state",
    ),
    pytest.param(
        [header(), rec_finished("f1", None, "rec")],
        "RECORDING_NOT_STARTED",
        2,
        id="finish-unstarted",
    ),
    pytest.param(
        [header(), rec_started("a", None, "rec"), rec_started("b", "a", "rec")],
        "RECORDING_DUPLICATE",
        3,
        id="started-twice",
    ),
    pytest.param(
        [
            header(),
            rec_started("a", None, "rec"),
            rec_finished("b", "a", "rec"),
            rec_interrupted("c", "b", "rec"),
        ],
        "RECORDING_ALREADY_ENDED",
        4,
        id="ended-twice",
    ),
]


@pytest.mark.parametrize(("records", "code", "line"), GRAPH_REJECTIONS)
def test_graph_rule_rejects_with_code_and_line(
    records: list[dict[str, Any]], code: str, line: int
) -> None:
    index = build(records)
    assert codes(index) == [(code, line)]
    assert not index.valid


def test_removal_may_target_its_own_parent() -> None:
    index = build([header(), user("m1", None), removed("r1", "m1", "m1")])
    assert index.valid


def test_removal_may_target_a_custom_message_ancestor() -> None:
    cm = entry("custom_message", "c1", None, customType="x", content=[], display=True)
    assert build([header(), cm, user("m1", "c1"), removed("r1", "m1", "c1")]).valid


def test_removing_an_already_removed_target_again_is_allowed() -> None:
    index = build(
        [header(), user("m1", None), removed("r1", "m1", "m1"), removed("r2", "r1", "m1")]
    )
    assert index.valid


def test_recording_may_end_on_another_branch_after_its_start() -> None:
    # The lifecycle is global, in file order, not branch-local.
    index = build(
        [header(), user("m1", None), rec_started("a", "m1", "rec"), rec_finished("b", "m1", "rec")]
    )
    assert index.valid
    assert index.recordings == {"rec": True}


def test_schema_invalid_entry_is_not_indexed() -> None:
    bad = {**user("m1", None), "extra": 1}
    index = build([header(), bad])
    assert [d.code for d in index.diagnostics] == [Code.ENVELOPE_FIELD_UNKNOWN]
    assert "m1" not in index.by_id
    assert index.default_leaf is None


def test_child_of_rejected_record_reports_parent_not_found() -> None:
    bad = {**user("m1", None), "extra": 1}
    index = build([header(), bad, user("m2", "m1")])
    assert codes(index) == [("ENVELOPE_FIELD_UNKNOWN", 2), ("PARENT_NOT_FOUND", 3)]


def test_check_entry_commits_nothing() -> None:
    builder = IndexBuilder()
    builder.add_header(header(), line=1)
    assert builder.check_entry(user("m1", None), line=2) == []
    assert builder.check_entry(user("m2", "m1"), line=3)[0].code == Code.PARENT_NOT_FOUND
    assert "m1" not in builder
    assert builder.build().entries == ()


def test_add_entry_commits_only_without_findings() -> None:
    builder = IndexBuilder()
    builder.add_header(header(), line=1)
    assert builder.add_entry(user("m1", None), line=2, offset=0, length=1) == []
    found = builder.add_entry(user("m1", None), line=3, offset=1, length=1)
    assert [d.code for d in found] == [Code.ID_DUPLICATE]
    assert [e.line for e in builder.build().entries] == [2]


def test_builder_from_index_continues_after_committed_entries() -> None:
    index = build([header(), user("m1", None), rec_started("a", "m1", "rec")])
    builder = IndexBuilder.from_index(index)
    assert builder.check_entry(user("m2", "m1"), line=4) == []
    assert builder.check_entry(user("m1", None), line=4)[0].code == Code.ID_DUPLICATE
    duplicate_start = rec_started("b", "a", "rec")
    assert builder.check_entry(duplicate_start, line=4)[0].code == Code.RECORDING_DUPLICATE
    assert builder.check_entry(header(), line=4)[0].code == Code.HEADER_REPEATED
    builder.add_entry(user("m2", "m1"), line=4, offset=0, length=1)
    assert index.default_leaf == "a"  # the original index is untouched
    assert builder.build().default_leaf == "m2"


def test_session_name_last_wins_globally_each_field_independently() -> None:
    index = build(
        [
            header(),
            user("m1", None),
            session_info("i1", "m1", name="first", archived=True),
            session_info("i2", "m1", name="sibling"),  # another branch: still global
            session_info("i3", "i1", name=""),
        ]
    )
    assert index.name == ""
    assert index.archived is True


def test_session_name_defaults_to_none_and_not_archived() -> None:
    index = build([header(), user("m1", None)])
    assert (index.name, index.archived) == (None, False)


def test_label_last_wins_and_null_clears() -> None:
    index = build(
        [
            header(),
            user("m1", None),
            user("m2", "m1"),
            label("l1", "m2", "m1", "one"),
            label("l2", "m1", "m1", "two"),
            label("l3", "l2", "m2", "keep"),
            label("l4", "l3", "m2", None),
            label("l5", "l4", "m2", "again"),
            label("l6", "l5", "m1", None),
        ]
    )
    assert dict(index.labels) == {"m2": "again"}


def test_diagnostics_are_bounded_and_truncation_is_reported() -> None:
    records = [header()] + [user(f"m{i}", "absent") for i in range(MAX_REPORTED_DIAGNOSTICS + 5)]
    index = build(records)
    assert len(index.diagnostics) == MAX_REPORTED_DIAGNOSTICS
    assert index.diagnostic_count == MAX_REPORTED_DIAGNOSTICS + 5
    assert index.truncated


def test_empty_file_is_session_empty() -> None:
    index = IndexBuilder().build(empty=True)
    assert [d.code for d in index.diagnostics] == [Code.SESSION_EMPTY]
    assert not index.valid


@pytest.mark.slow
def test_deep_chain_removal_is_checked_without_recursion() -> None:
    records = [header(), user("m0", None)]
    records += [custom(f"s{i}", "m0" if i == 1 else f"s{i - 1}") for i in range(1, 5000)]
    records.append(removed("r", "s4999", "m0"))
    assert build(records).valid


def test_counts_by_type() -> None:
    index = build([header(), user("m1", None), user("m2", "m1"), custom("s1", "m2")])
    assert index.counts_by_type() == {"message": 2, "custom": 1}


def test_builder_commits_nothing_after_build() -> None:
    builder = IndexBuilder()
    builder.add_header(header(), line=1)
    index = builder.build()
    with pytest.raises(RuntimeError, match="from_index"):
        builder.add_entry(user("m1", None), line=2, offset=0, length=1)
    assert "m1" not in index.by_id


def test_entries_view_behaves_as_a_tuple_of_entry_meta() -> None:
    index = build([header(), user("m1", None), user("m2", "m1"), label("l1", "m2", "m1", "x")])
    entries = index.entries
    as_tuple = tuple(entries)
    assert entries == as_tuple and len(entries) == 3
    assert entries[-1] == as_tuple[-1] and entries[-1].target_id == "m1"
    assert entries[1:] == as_tuple[1:] and entries[::-1] == as_tuple[::-1]
    assert entries[5:] == ()
    with pytest.raises(IndexError):
        entries[3]
    with pytest.raises(IndexError):
        entries[-4]
    assert entries[1] == ("m2", "m1", "message", 3, 3000, 10, 1, None, None)


def test_by_id_view_behaves_as_a_mapping_of_entry_meta() -> None:
    index = build([header(), user("m1", None), user("m2", "m1")])
    by_id = index.by_id
    assert list(by_id) == ["m1", "m2"] and len(by_id) == 2
    assert "m2" in by_id and "absent" not in by_id and 7 not in by_id
    assert by_id["m2"] == index.entries[1]
    assert by_id.get("absent") is None and by_id.get("absent", 0) == 0
    with pytest.raises(KeyError):
        by_id["absent"]
    assert dict(by_id) == {e.id: e for e in index.entries}


def test_two_builders_continuing_one_index_do_not_see_each_other() -> None:
    index = build([header(), user("m1", None)])
    first = IndexBuilder.from_index(index)
    second = IndexBuilder.from_index(index)
    assert first.add_entry(user("a", "m1"), line=3, offset=3000, length=10) == []
    assert "a" not in second and "a" not in index.by_id
    assert second.add_entry(user("b", "a"), line=3, offset=3000, length=10)[0].code == (
        Code.PARENT_NOT_FOUND
    )
    assert second.add_entry(user("a", None), line=3, offset=3000, length=10) == []
    assert first.add_entry(user("c", "a"), line=4, offset=4000, length=10) == []
    assert [(e.id, e.parent_id) for e in first.build().entries] == [
        ("m1", None), ("a", "m1"), ("c", "a")]
    assert [(e.id, e.parent_id) for e in second.build().entries] == [("m1", None), ("a", None)]
    assert [e.id for e in index.entries] == ["m1"] and len(index.by_id) == 1


def test_position_at_offset_finds_only_record_starts() -> None:
    index = build([header(), user("m1", None), user("m2", "m1")])
    assert index.position_at_offset(3000) == 1
    assert index.position_at_offset(2500) is None
    assert index.position_at_offset(9000) is None
