"""How ``persyk-conformance bench`` times (bench/_run.py; docs/maintainers/performance.md, "Every
figure with its uncertainty"): single runs paired with the floor's, the floor first in one pair
and last in the next; rounds that cycle through the workloads; every run kept, round by round,
so that the report can be judged again from its raw times."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli import main
from persyk_maintainers.bench import _run
from persyk_maintainers.bench._floors import read_tail_record
from persyk_maintainers.bench._reads import ValidateShort
from persyk_maintainers.bench._writes import RetrySmall

# No conformance run: these tests look at the order of the timed runs alone.
TINY = ["--scale", "0.005", "--rounds", "2", "--pairs", "2", "-q", "--no-conformance"]


def test_pairs_alternate_which_runs_first_and_rounds_cycle_through_the_workloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    real = _run._repetition

    def logged(workload: Any, one: Any, timeout: float, *, record: bool = False,
               probe: Path | None = None) -> None:
        if record:
            events.append(f"{workload.key}:impl")
        real(workload, one, timeout, record=record, probe=probe)

    def floor(self: Any, prepared: Any, state: Any) -> float:
        events.append(f"{self.key}:floor")
        return 1.0

    monkeypatch.setattr(_run, "_repetition", logged)
    monkeypatch.setattr(ValidateShort, "floor", floor)
    monkeypatch.setattr(RetrySmall, "floor", floor)
    report = tmp_path / "bench.json"
    assert main(["bench", *TINY, "--no-warmup", "--only", "validate-short", "retry-100",
                 "--report", str(report)]) == 0
    one_round = ["validate-short:floor", "validate-short:impl", "validate-short:impl",
                 "validate-short:floor", "retry-100:floor", "retry-100:impl", "retry-100:impl",
                 "retry-100:floor"]
    assert events == one_round * 2
    data: dict[str, Any] = json.loads(report.read_text("utf-8"))
    assert (data["rounds"], data["pairs"]) == (2, 2)
    for workload in data["workloads"]:
        assert workload["floor"]["rounds"] == [[1.0, 1.0], [1.0, 1.0]]
        (result,) = workload["results"]
        assert [len(r) for r in result["rounds"]] == [2, 2]
        assert result["ratio"]["rounds"] == 2 and result["ratio"]["pairs"] == 2


def test_each_round_warms_up_the_floor_and_the_implementation_untimed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Scripted floor times: each round's untimed warm-up is 100.0 and never counts.
    times = itertools.cycle([100.0, 1.0, 2.0])
    monkeypatch.setattr(ValidateShort, "floor", lambda self, prepared, state: next(times))
    report = tmp_path / "bench.json"
    assert main(["bench", *TINY, "--only", "validate-short", "--report", str(report)]) == 0
    (workload,) = json.loads(report.read_text("utf-8"))["workloads"]
    assert workload["floor"]["rounds"] == [[1.0, 2.0], [1.0, 2.0]]
    assert workload["floor"]["min"] == 1.0
    (result,) = workload["results"]
    assert result["ratio"]["least"] == pytest.approx(result["min"] / 1.0)


def test_the_defaults_are_five_rounds_of_twenty_pairs() -> None:
    config = _run.BenchConfig(impls=())
    assert (config.rounds, config.pairs) == (5, 20)


@pytest.mark.parametrize("body", [10, 5000, 70_000], ids=["short", "past-4KiB", "past-64KiB"])
def test_the_retry_floor_finds_the_last_record_whatever_its_length(
    tmp_path: Path, body: int,
) -> None:
    # read_tail_record reads the last 4 KiB and four times more while they hold no earlier
    # line end: a record longer than each window is still read whole, and compared.
    last = {"type": "message", "id": "e2", "text": "y" * body}
    session = tmp_path / "session.jsonl"
    session.write_bytes(b'{"type":"session"}\n' + json.dumps({"id": "e1"}).encode() + b"\n"
                        + json.dumps(last).encode() + b"\n")
    assert read_tail_record(session, last)
    assert not read_tail_record(session, {**last, "text": "z"})
