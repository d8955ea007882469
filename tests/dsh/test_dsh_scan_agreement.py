"""The fast codec's scan of dsh-v0 (``fast/_scan.py``, the common record checked inline) reads
every log as the plain one does (``_scan.scan_log``), line by line through ``parse_record``: the
same header, events, kept length and torn tail, or the same diagnostic (DSH-7..DSH-13). Held on
every fixture of the profile, the real logs of the corpus, and generated logs with faults of every
kind in every place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from _corpora import CORPORA
from _paths import CHECKOUT
from hypothesis import given, settings
from hypothesis import strategies as st
from persyk_dsh import DshCode, DshError, _scan
from persyk_dsh.fast import FastCodec

ROOT = CHECKOUT
FIXTURE_LOGS = sorted((ROOT / "fixtures" / "dsh-v0").rglob("*.jsonl"))
CORPUS_LOGS = sorted((CORPORA / "dsh-sessions").glob("*.jsonl"))


CODEC = FastCodec()


def _outcome(data: bytes, inline: bool) -> tuple[Any, ...]:
    try:
        scan = CODEC.scan_log(data) if inline else _scan.scan_log(data, CODEC)
    except DshError as error:
        return ("refused", error.diagnostic)
    return ("read", scan.header, scan.events, scan.keep, scan.torn)


def test_the_inputs_are_there() -> None:
    assert len(FIXTURE_LOGS) > 30
    assert len(CORPUS_LOGS) == 142 or not (CORPORA / "dsh-sessions").is_dir()


@pytest.mark.parametrize(
    "path", FIXTURE_LOGS + CORPUS_LOGS,
    ids=[str(p.relative_to(ROOT / "fixtures")) if p.is_relative_to(ROOT) else p.name
         for p in FIXTURE_LOGS + CORPUS_LOGS],
)
def test_inline_path_reads_every_log_as_the_plain_path(path: Path) -> None:
    data = path.read_bytes()
    assert _outcome(data, True) == _outcome(data, False)


HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 1767225600000}


def _event(kind: str, seq: int) -> dict[str, Any]:
    data: Any = {"turn": 1}
    if kind == "step/start":
        data = {"turn": 1, "step": 1}
    return {"type": kind, "seq": seq, "time": 1767225600000 + seq, "data": data}


def _row(seq: int) -> dict[str, Any]:
    return {"type": "text-chunks", "seq0": seq, "time0": 1767225600000 + seq,
            "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 2], "texts": ["a", "b", "c"]}}


# What a fault does to one record: each breaks a rule the inline path checks itself.
FAULTS: dict[str, Any] = {
    "seq-repeated": lambda r: {**r, "seq": r.get("seq", 0) - 1},
    "seq-skipped": lambda r: {**r, "seq": r.get("seq", 0) + 1},
    "seq-float": lambda r: {**r, "seq": float(r.get("seq", 0))},
    "seq-bool": lambda r: {**r, "seq": True},
    "time-huge": lambda r: {**r, "time": 2**53},
    "time-float": lambda r: {**r, "time": 1.5},
    "type-empty": lambda r: {**r, "type": ""},
    "type-session": lambda r: {**r, "type": "session"},
    "type-row-tag": lambda r: {**r, "type": "text-chunks"},
    "type-number": lambda r: {**r, "type": 7},
    "no-data": lambda r: {k: v for k, v in r.items() if k != "data"},
    "recovery-data-invalid": lambda r: {**r, "type": "turn/start", "data": {"turn": "x"}},
    "row-gap-missing": lambda r: {**_row(r.get("seq", 0)), "data": {
        **_row(0)["data"], "dt": [1]}},
    "not-an-object": lambda r: [r],
    "not-json": lambda r: b"{torn",
}


@st.composite
def _logs(draw: st.DrawFn) -> bytes:
    kinds = draw(st.lists(st.sampled_from(["turn/start", "step/start", "assistant/chunk",
                                           "x/unknown", "row"]), max_size=12))
    records: list[Any] = []
    seq = 0
    for kind in kinds:
        if kind == "row":
            records.append(_row(seq))
            seq += 3
        else:
            records.append(_event(kind, seq))
            seq += 1
    lines = [orjson.dumps(HEADER)] + [orjson.dumps(r) for r in records]
    if records:
        places = st.integers(1, len(records))
        for at in draw(st.sets(places, max_size=2)):
            fault = FAULTS[draw(st.sampled_from(sorted(FAULTS)))]
            broken = fault(records[at - 1])
            lines[at] = broken if isinstance(broken, bytes) else orjson.dumps(broken)
    data = b"\n".join(lines) + b"\n"
    if draw(st.booleans()):
        data += draw(st.sampled_from([b"", b'{"type":"turn/st', b"\n", b"[1]"]))
    return data


@settings(max_examples=400, deadline=None)
@given(data=_logs())
def test_inline_path_agrees_on_generated_logs_with_faults(data: bytes) -> None:
    assert _outcome(data, True) == _outcome(data, False)


_HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1}\n'


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "plain"])
@pytest.mark.parametrize("kind", [b'["text-chunks"]', b'{"a":1}', b"[]", b"7", b"null"],
                         ids=["array", "object", "empty-array", "number", "null"])
def test_event_whose_type_is_no_string_is_invalid_at_its_line(kind: bytes, inline: bool) -> None:
    # DSH-8: an array or object "type" is unhashable; it once raised TypeError at the row-tag test.
    data = _HEADER + b'{"type":' + kind + b',"seq":0,"time":1,"data":{}}\n'
    outcome = _outcome(data, inline)
    assert outcome[0] == "refused"
    assert (outcome[1].code, outcome[1].line) == (DshCode.EVENT_INVALID, 2)
