"""The shared record kit (persyk_conformance.records) spells valid v1 records: every builder's
default output passes the reference's read rules, so a case, test or benchmark that starts from
the kit starts from a valid record and adds exactly the fault it means."""

from __future__ import annotations

from pathlib import Path

from persyk_conformance import records as kit
from persyk_session.operations import op_validate


def test_every_builder_gives_a_valid_record_in_one_session(tmp_path: Path) -> None:
    entries = [
        kit.user("m1", None),
        kit.assistant("m2", "m1"),
        kit.message("m3", "m2", kit.tool_result_msg()),
        kit.custom("c1", "m3"),
        kit.custom_message("c2", "c1"),
        kit.session_info("i1", "c2", name="n"),
        kit.label("l1", "i1", "m1", "first"),
        kit.removed("x1", "l1", "c2"),
        kit.model_change("mc", "x1"),
        kit.api_connection("k1", "mc"),
        kit.realtime_event("e1", "k1", media=[{"pointer": "/type", "asset": kit.media_asset()}]),
        kit.rec_started("r1", "e1"),
        kit.rec_finished("r2", "r1"),
        kit.rec_started("r3", "r2", "rec-2"),
        kit.rec_interrupted("r4", "r3", "rec-2"),
        *kit.chain("n", 3, parent="r4"),
    ]
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "session.jsonl").write_bytes(kit.jsonl(kit.HEADER, *entries))
    assert op_validate({"session": str(tmp_path / "s")}) == {
        "valid": True, "errors": [], "truncated": False
    }


def test_timestamps_count_seconds_across_days() -> None:
    assert kit.ts(0) == "2026-01-01T00:00:00.000Z"
    assert kit.ts(86_399) == "2026-01-01T23:59:59.000Z"
    assert kit.ts(86_400) == "2026-01-02T00:00:00.000Z"
    assert kit.ms(1) == kit.BASE_MS + 1000


def test_chain_links_each_record_to_the_one_before() -> None:
    records = kit.chain("p", 3, parent="root")
    assert [(r["id"], r["parentId"]) for r in records] == [
        ("p0", "root"), ("p1", "p0"), ("p2", "p1")
    ]
    assert kit.line(records[0]) == kit.record(records[0]) + b"\n"
