"""Every dsh-v0 rule is proven by its cases: break the reference on exactly that rule and the
named cases fail (docs/spec-dsh-v0.md; the house rule "before calling a rule covered, break the
reference on it and watch a case fail").

Each mutation patches the reference in this process; the suite's in-process run then executes
the cases expected to catch it. The unbroken reference passes every case
(tests/dsh/test_dsh_conformance.py), so a failure here is the mutation's doing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli import RunConfig, execute
from persyk_conformance.run._outcomes import Outcome
from persyk_dsh import _encode, _header, _layout, _records, _recover, _scan, _store
from persyk_dsh._errors import DshCode, DshError
from persyk_dsh.fast import FastCodec

Patch = Callable[[pytest.MonkeyPatch], None]


def _list_without_no_cwd(mp: pytest.MonkeyPatch) -> None:
    real = _store.DshStore._buckets
    mp.setattr(_store.DshStore, "_buckets",
               lambda self: [b for b in real(self) if b != _layout.NO_CWD_BUCKET])


def _wrong_bucket(mp: pytest.MonkeyPatch) -> None:
    def short(cwd: str | None) -> str:
        name = _layout.bucket_name(cwd)
        return name[:-1] + "0" if cwd is not None else name
    mp.setattr(_store, "bucket_name", short)
    mp.setattr(_header, "bucket_name", short)


def _dot_literal(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_layout, "_LITERAL", _layout._LITERAL | frozenset(b"."))


def _any_origin(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_header, "_OPTIONAL", {**_header._OPTIONAL, "origin": lambda v: True})


def _version_after_shape(mp: pytest.MonkeyPatch) -> None:
    real = _header.check_header

    def check(header: object, **kw: Any) -> None:
        if isinstance(header, dict) and header.get("version") != 0:
            raise DshError.of(DshCode.HEADER_INVALID, line=kw.get("line", 1))
        real(header, **kw)
    mp.setattr(_header, "check_header", check)


def _no_location_check(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_store, "check_location", lambda *a, **k: None)


def _arrays_skipped(mp: pytest.MonkeyPatch) -> None:
    real = _records.parse_record

    def parse(line: bytes, codec: Any, *, line_number: int) -> list[dict[str, Any]]:
        return [] if line.startswith(b"[") else real(line, codec, line_number=line_number)
    mp.setattr(_scan, "parse_record", parse)


def _envelope_type_only(mp: pytest.MonkeyPatch) -> None:
    def check(event: object, *, line: int | None, pointer: str | None = None) -> None:
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise DshError.of(DshCode.EVENT_INVALID, line=line, pointer=pointer)
        event.setdefault("seq", -1)
        event.setdefault("data", None)
    mp.setattr(_records, "check_envelope", check)
    mp.setattr(_encode, "check_envelope", check)


def _extra_members_dropped(mp: pytest.MonkeyPatch) -> None:
    real = _records.parse_record

    def parse(line: bytes, codec: Any, *, line_number: int) -> list[dict[str, Any]]:
        keep = ("type", "seq", "time", "data")
        return [{k: e[k] for k in keep} for e in real(line, codec, line_number=line_number)]
    mp.setattr(_scan, "parse_record", parse)


def _row_times_ignore_dt(mp: pytest.MonkeyPatch) -> None:
    real = _records.expand_row

    def expand(row: Mapping[str, Any], *, line: int) -> list[dict[str, Any]]:
        return [{**e, "time": row["time0"]} for e in real(row, line=line)]
    mp.setattr(_records, "expand_row", expand)


def _repeats_allowed(mp: pytest.MonkeyPatch) -> None:
    real = _records.parse_record
    counter = {"next": 0}

    def parse(line: bytes, codec: Any, *, line_number: int) -> list[dict[str, Any]]:
        events = real(line, codec, line_number=line_number)
        if line_number == 2:
            counter["next"] = 0
        out = []
        for event in events:  # renumber: a gap or a repeat goes unseen
            out.append({**event, "seq": counter["next"]})
            counter["next"] += 1
        return out
    mp.setattr(_scan, "parse_record", parse)


def _recovery_data_unchecked(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_records, "recovery_data_ok", lambda *a: True)


def _torn_last_line_fatal(mp: pytest.MonkeyPatch) -> None:
    real = _records.parse_record

    def parse(line: bytes, codec: Any, *, line_number: int) -> list[dict[str, Any]]:
        try:
            return real(line, codec, line_number=line_number)
        except _records.Unparseable:
            raise DshError.of(DshCode.LINE_UNPARSEABLE, line=line_number) from None
    mp.setattr(_scan, "parse_record", parse)


def _no_step_closer(mp: pytest.MonkeyPatch) -> None:
    real = _recover.closers
    mp.setattr(_store, "closers", lambda events, time: [
        {**c, "seq": len(events) + i} for i, c in
        enumerate(c for c in real(events, time) if c["type"] != "step/end")])


def _other_text(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_recover, "INTERRUPTED_TEXT", "Interrupted.")


def _reclose_every_load(mp: pytest.MonkeyPatch) -> None:
    def last_start(events: Any) -> int | None:
        starts = [i for i, e in enumerate(events) if e["type"] == "turn/start"]
        return starts[-1] if starts else None
    mp.setattr(_recover, "orphaned_turn_start", last_start)


def _create_writes(mp: pytest.MonkeyPatch) -> None:
    from persyk_dsh import operations

    real = operations.op_create

    def op_create(args: dict[str, Any]) -> dict[str, Any]:
        result = real(args)
        if "header" in result:
            Path(args["root"]).mkdir(parents=True, exist_ok=True)
        return result
    mp.setitem(operations.DSH_OPERATIONS, "create", op_create)  # type: ignore[index]


def _loose_logs_found(mp: pytest.MonkeyPatch) -> None:
    real = _store.DshStore.find

    def find(self: Any, session_id: str, cwd: str | None = None, *,
             exact_bucket: bool = False) -> Any:
        loose = self.root / _layout.log_name(session_id)
        return loose if loose.is_file() else real(self, session_id, cwd,
                                                  exact_bucket=exact_bucket)
    mp.setattr(_store.DshStore, "find", find)


def _directories_before_checks(mp: pytest.MonkeyPatch) -> None:
    real = _store.DshStore._materialize

    def materialize(self: Any, path: Any, header: Any, events: Any) -> Any:
        path.parent.mkdir(parents=True, exist_ok=True)
        return real(self, path, header, events)
    mp.setattr(_store.DshStore, "_materialize", materialize)


def _append_without_recovery(mp: pytest.MonkeyPatch) -> None:
    def cursor(self: Any, path: Any, header: Any) -> Any:
        scan = _scan.scan_log(path.read_bytes(), self.codec)
        return _store._Cursor(path.stat().st_size, len(scan.events))
    mp.setattr(_store.DshStore, "_cursor", cursor)


def _no_seq_continuation(mp: pytest.MonkeyPatch) -> None:
    real = _encode.encode_batch
    mp.setattr(_store, "encode_batch", lambda events, next_seq, codec: real(
        events, events[0]["seq"] if events and isinstance(events[0], dict)
        and isinstance(events[0].get("seq"), int) else next_seq, codec))


def _nan_written(mp: pytest.MonkeyPatch) -> None:
    def encode(value: Any, *, pointer: str, event_type: str | None) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode() + b"\n"
    mp.setattr(_encode, "encode_record", encode)


def _batch_envelope_unchecked(mp: pytest.MonkeyPatch) -> None:
    def lenient(event: object, *, line: int | None, pointer: str | None = None) -> None:
        if isinstance(event, dict):
            event.setdefault("type", "x")
    mp.setattr(_encode, "check_envelope", lenient)
    mp.setattr(_encode, "check_recovery_data", lambda *a, **k: None)


def _first_bucket_wins(mp: pytest.MonkeyPatch) -> None:
    real = _store.DshStore.find

    def find(self: Any, session_id: str, cwd: str | None = None, *,
             exact_bucket: bool = False) -> Any:
        try:
            return real(self, session_id, cwd, exact_bucket=exact_bucket)
        except DshError as error:
            if error.diagnostic.code is not DshCode.AMBIGUOUS:
                raise
            return self.root / self._buckets()[0] / _layout.log_name(session_id)
    mp.setattr(_store.DshStore, "find", find)


# rule -> (how the reference is broken, the cases that must then fail)
MUTATIONS: Mapping[str, tuple[Patch, tuple[str, ...]]] = {
    "DSH-1": (_loose_logs_found, ("DR-029",)),
    "DSH-2": (_wrong_bucket, ("DG-001", "DS-002")),
    "DSH-3": (_dot_literal, ("DG-008",)),
    "DSH-4": (_any_origin, ("DR-003",)),
    "DSH-5": (_version_after_shape, ("DR-006", "DR-007")),
    "DSH-6": (_no_location_check, ("DR-008", "DR-009")),
    "DSH-7": (_arrays_skipped, ("DR-011",)),
    "DSH-8": (_envelope_type_only, ("DR-012", "DR-014", "DR-015")),
    "DSH-9": (_extra_members_dropped, ("DG-004",)),
    "DSH-10": (_row_times_ignore_dt, ("DG-005",)),
    "DSH-11": (_repeats_allowed, ("DR-019", "DR-020")),
    "DSH-12": (_recovery_data_unchecked, ("DR-022", "DR-023")),
    "DSH-13": (_torn_last_line_fatal, ("DS-013",)),
    "DSH-14": (_no_step_closer, ("DS-011", "DS-015")),
    "DSH-15": (_other_text, ("DS-011", "DS-015")),
    "DSH-16": (_reclose_every_load, ("DG-001", "DS-011")),
    "DSH-17": (_create_writes, ("DS-001",)),
    "DSH-18": (_directories_before_checks, ("DS-005", "DS-008")),
    "DSH-19": (_append_without_recovery, ("DS-017",)),
    "DSH-20": (_no_seq_continuation, ("DS-004",)),
    "DSH-21": (_nan_written, ("DS-007", "DS-008")),
    "DSH-22": (_batch_envelope_unchecked, ("DS-009",)),
    "DSH-23": (_list_without_no_cwd, ("DG-010",)),
    "DSH-24": (_first_bucket_wins, ("DR-027",)),
}


@pytest.fixture
def mp() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        # The mutations break parse_record's rules: every line goes through it, as with the
        # readable codec (the fast codec's inline scan is held to it by
        # tests/dsh/test_dsh_scan_agreement.py).
        patch.setattr(FastCodec, "scan_log", lambda self, data: _scan.scan_log(data, self))
        yield patch


def test_every_rule_has_a_mutation() -> None:
    from persyk_contract import profile_rules

    assert sorted(MUTATIONS) == sorted(rule.id for rule in profile_rules("dsh-v0"))


@pytest.mark.parametrize("rule", list(MUTATIONS), ids=list(MUTATIONS))
def test_breaking_the_reference_on_a_rule_fails_its_cases(rule: str,
                                                          mp: pytest.MonkeyPatch) -> None:
    patch, cases = MUTATIONS[rule]
    patch(mp)
    record = execute(RunConfig(in_process=True, profile="dsh-v0", only=cases))
    outcomes = {r.id: r.outcome for r in record.results}
    assert set(outcomes) == set(cases)
    passing = [case for case, outcome in outcomes.items() if outcome is Outcome.PASS]
    assert not passing, f"{rule} broken, yet {passing} pass"
