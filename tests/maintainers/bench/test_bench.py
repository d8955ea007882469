"""``persyk-conformance bench``: end to end against the reference adapter at a tiny scale (its
figures are never asserted), wrong and slow adapters, the report's schema, ``bench compare``,
the generated inputs' manifest, and the plots."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli import main
from persyk_maintainers.bench._data import DataStore, write_text_session
from persyk_maintainers.bench._report import compare, report_problems
from persyk_maintainers.bench._run import WORKLOADS

TINY = ["--scale", "0.005", "--rounds", "2", "--pairs", "1", "-q"]

# An adapter that speaks the protocol but answers every read wrongly (or slowly, or not at all).
FAKE = r'''
import json, sys, time
mode = sys.argv[1]
for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "hello":
        reply = {"protocol": 1, "implementation": {"name": "fake-" + mode, "version": "0",
                 "language": "python"}, "capabilities": ["read", "paged-read"]}
    elif request["cmd"] == "stop":
        break
    else:
        op, seq = request["op"], request["seq"]
        if mode == "slow":
            time.sleep(30)
        if mode == "unsupported":
            reply = {"seq": seq, "unsupported": True, "message": "not here"}
        elif op == "validate" and mode == "always-valid":  # without reading the file
            reply = {"seq": seq, "result": {"valid": True, "truncated": False, "errors": []}}
        elif op == "validate":  # a valid session reported invalid
            reply = {"seq": seq, "result": {"valid": False, "truncated": False, "errors": [
                {"code": "RECORD_JSON_SYNTAX", "line": 2, "message": "x"}]}}
        elif op == "context":  # the empty conversation instead of the leaf's path
            reply = {"seq": seq, "result": {"leaf": None, "messages": [], "custom": []}}
        elif op == "read":  # one page, then the end: entries are missing
            reply = {"seq": seq, "result": {"entries": [], "nextCursor": None}}
        else:
            reply = {"seq": seq, "unsupported": True}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
'''


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One bench run of every workload against the reference adapter, at a tiny scale."""
    out = tmp_path_factory.mktemp("bench")
    status = main(["bench", *TINY, "--report", str(out / "bench.json"),
                   "--markdown", str(out / "bench.md")])
    report: dict[str, Any] = json.loads((out / "bench.json").read_text("utf-8"))
    return {"status": status, "report": report, "markdown": (out / "bench.md").read_text("utf-8")}


def _fake(tmp_path: Path, mode: str) -> str:
    script = tmp_path / "fake_adapter.py"
    script.write_text(FAKE, "utf-8")
    return f"{sys.executable} {script} {mode}"


def _outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {w["key"]: r["outcome"] for w in report["workloads"] for r in w["results"]}


@pytest.mark.slow
def test_the_bench_times_every_workload_through_the_reference_adapter(
    reference_run: dict[str, Any],
) -> None:
    report = reference_run["report"]
    assert reference_run["status"] == 0
    assert {w["name"] for w in report["workloads"]} == {kind.name for kind in WORKLOADS}
    for workload in report["workloads"]:
        (result,) = workload["results"]
        assert result["outcome"] == "ok", (workload["key"], result["detail"])
        assert len(result["seconds"]) == 2 and len(workload["floor"]["seconds"]) == 2
        assert set(result["ratio"]) == {"least", "pairsMedian", "perRound", "low", "high",
                                        "halfWidth", "spread", "rounds", "pairs"}
        assert result["ratio"]["rounds"] == 2 and result["ratio"]["low"] is not None
    (reference,) = report["implementations"]
    assert reference["implementation"]["name"] == "persyk-session"
    assert reference["roundTripSeconds"] > 0
    info = next(w for w in report["workloads"] if w["name"] == "info-audio")
    assert len(info["results"][0]["extra"]["peakRssKiB"]) == 2


@pytest.mark.slow
def test_each_figure_carries_its_round_trips_measured_beside_it(
    reference_run: dict[str, Any],
) -> None:
    # The protocol's share of every figure, per repetition, and in the Markdown cell.
    workloads = {w["key"]: w["results"][0] for w in reference_run["report"]["workloads"]}
    for key, result in workloads.items():
        extra = result["extra"]
        assert len(extra["requestsPerUnit"]) == 2 and len(extra["roundTripSeconds"]) == 2, key
        assert all(trip > 0 for trip in extra["roundTripSeconds"]), key
    assert workloads["append-single"]["extra"]["requestsPerUnit"] == pytest.approx([1, 1])
    assert workloads["append-batch"]["extra"]["requestsPerUnit"] == pytest.approx([1, 1])
    # One second of audio: captureStart, ten 100 ms writes, captureFinish.
    assert workloads["capture"]["extra"]["requestsPerUnit"] == pytest.approx([12, 12])
    assert reference_run["markdown"].count("; round trips 1 of ") >= 4


@pytest.mark.slow
def test_the_bench_report_fits_its_schema_and_the_schema_can_refuse(
    reference_run: dict[str, Any],
) -> None:
    report = reference_run["report"]
    assert report_problems(report) == []
    broken = copy.deepcopy(report)
    del broken["workloads"][0]["floor"]
    broken["workloads"][1]["results"][0]["outcome"] = "fast"
    assert len(report_problems(broken)) == 2


@pytest.mark.slow
def test_the_markdown_names_the_machine_every_workload_and_every_input(
    reference_run: dict[str, Any],
) -> None:
    markdown, report = reference_run["markdown"], reference_run["report"]
    assert report["machine"]["cpu"] in markdown
    for workload in report["workloads"]:
        assert f"| {workload['key']}: " in markdown
    for item in report["inputs"]:
        assert item["sha256"] in markdown


def test_a_wrong_answer_is_reported_invalid_and_never_timed(tmp_path: Path) -> None:
    report_file = tmp_path / "fake.json"
    status = main(["bench", *TINY, "--impl", _fake(tmp_path, "wrong"), "--only", "validate-*",
                   "context-branched", "paged-walk", "info-audio", "append-single",
                   "--report", str(report_file)])
    report = json.loads(report_file.read_text("utf-8"))
    assert status == 1
    assert report_problems(report) == []
    assert _outcomes(report) == {
        "validate-short": "invalid", "validate-events": "invalid", "context-branched": "invalid",
        "paged-walk": "invalid", "info-audio": "unsupported", "append-single": "unsupported",
    }
    for workload in report["workloads"]:
        assert workload["results"][0]["seconds"] == []
        assert "ratio" not in workload["results"][0]


def test_an_adapter_that_answers_valid_without_reading_is_caught_by_the_probe(
    tmp_path: Path,
) -> None:
    report_file = tmp_path / "always.json"
    status = main(["bench", *TINY, "--impl", _fake(tmp_path, "always-valid"),
                   "--only", "validate-*", "--report", str(report_file)])
    report = json.loads(report_file.read_text("utf-8"))
    assert status == 1
    assert _outcomes(report) == {"validate-short": "invalid", "validate-events": "invalid"}
    assert "not JSON was reported valid" in report["workloads"][0]["results"][0]["detail"]


def test_an_adapter_past_the_deadline_is_reported_timeout(tmp_path: Path) -> None:
    report_file = tmp_path / "slow.json"
    status = main(["bench", *TINY, "--impl", _fake(tmp_path, "slow"), "--only", "validate-short",
                   "--timeout", "1", "--report", str(report_file)])
    assert status == 1
    assert _outcomes(json.loads(report_file.read_text("utf-8"))) == {"validate-short": "timeout"}


def test_an_unsupported_answer_is_reported_unsupported_and_exits_zero(tmp_path: Path) -> None:
    report_file = tmp_path / "unsupported.json"
    status = main(["bench", *TINY, "--impl", _fake(tmp_path, "unsupported"),
                   "--only", "validate-short", "--report", str(report_file)])
    assert status == 0
    assert _outcomes(json.loads(report_file.read_text("utf-8"))) == {
        "validate-short": "unsupported"}


def test_an_interrupted_run_reports_the_workloads_that_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from persyk_maintainers.bench import _run as _bench_run

    real = _bench_run._run_round
    calls: list[str] = []

    def interrupted_second(cell: Any, *args: Any) -> None:
        calls.append(cell.workload.key)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(cell, *args)

    monkeypatch.setattr(_bench_run, "_run_round", interrupted_second)
    report_file = tmp_path / "stopped.json"
    status = main(["bench", *TINY, "--only", "retry-*", "--report", str(report_file)])
    report = json.loads(report_file.read_text("utf-8"))
    assert status == 1
    assert report_problems(report) == []
    assert [w["key"] for w in report["workloads"]] == ["retry-100"]
    assert report["aborted"] == "interrupted during round 1 of 2"
    assert "the run stopped early: interrupted during round 1 of 2" in report["quiet"]["reasons"]


@pytest.mark.slow
def test_compare_of_two_tiny_runs_declines_to_judge_and_says_why(
    reference_run: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # Two rounds of one pair at scale 0.005 are never precise enough: no regression is called
    # from them, in words and with exit 6.
    (tmp_path / "old.json").write_text(json.dumps(reference_run["report"]), "utf-8")
    assert main(["bench", "compare", str(tmp_path / "old.json"), str(tmp_path / "old.json")]) == 6
    out = capsys.readouterr().out
    assert "REGRESSION" not in out and "declined to judge" in out


@pytest.mark.slow
def test_compare_flags_a_lost_result(reference_run: dict[str, Any]) -> None:
    old = reference_run["report"]
    broken = copy.deepcopy(old)
    broken["workloads"][0]["results"][0].update(outcome="invalid", detail="wrong")
    result = compare(old, broken, 10.0)
    assert result.regressions == 1
    assert [line for line in result.lines if "was ok, now invalid" in line]


def test_sizes_make_a_scaling_series_and_only_selects_by_glob(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "--list", "--sizes", "10,1000", "--only", "validate-*", "capture"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == ["validate-short@10MB", "validate-short@1000MB", "validate-events@10MB",
                      "validate-events@1000MB", "capture"]
    assert main(["bench", "--list", "--only", "no-such-workload"]) == 2


def test_a_paged_walk_point_holds_entries_in_proportion_to_its_size(tmp_path: Path) -> None:
    # The paged walk is a scaling series, so the cost-against-size table can show it
    # linear; each point's session must grow with the point's size, not stay at 100,000 entries.
    from persyk_maintainers.bench._run import BenchConfig, workloads_for

    points = workloads_for(BenchConfig(impls=(), scale=0.1, sizes=(10.0, 40.0),
                                       only=("paged-walk*",)))
    assert [w.key for w in points] == ["paged-walk@10MB", "paged-walk@40MB"]
    store = DataStore(tmp_path)
    small, large = (w.prepare(store).params["entries"] for w in points)
    assert 3.9 < large / small < 4.1, (small, large)
    assert 0.9 < points[0].prepare(store).size_bytes / (10 * 0.1 * 2**20) < 1.1


def test_generated_inputs_are_reused_only_while_their_bytes_match(tmp_path: Path) -> None:
    first = DataStore(tmp_path).session("text", {"bytes": 70_000},
                                        lambda p: write_text_session(p, 70_000))

    def must_not_run(path: Path) -> None:
        raise AssertionError("a matching input was generated again")

    again = DataStore(tmp_path).session("text", {"bytes": 70_000}, must_not_run)
    assert again.sha256 == first.sha256
    with open(first.path / "session.jsonl", "r+b") as stream:
        stream.write(b" ")  # one byte changed: the sidecar's SHA-256 no longer matches
    regenerated = DataStore(tmp_path).session("text", {"bytes": 70_000},
                                              lambda p: write_text_session(p, 70_000))
    assert regenerated.sha256 == first.sha256  # seeded: the same bytes again
    fresh = DataStore(tmp_path / "elsewhere").session("text", {"bytes": 70_000},
                                                      lambda p: write_text_session(p, 70_000))
    assert fresh.sha256 == first.sha256 and fresh.facts["entries"] == first.facts["entries"]


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_the_plot_is_written(reference_run: dict[str, Any], tmp_path: Path, suffix: str) -> None:
    pytest.importorskip("matplotlib", reason="plots need the 'plot' extra (matplotlib)")
    from persyk_maintainers.bench._plot import plot_report

    report = copy.deepcopy(reference_run["report"])
    # A scaling series of two points, as --sizes makes, for the cost-against-size panel.
    point = next(w for w in report["workloads"] if w["name"] == "validate-short")
    for size in (10, 20):
        report["workloads"].append({**copy.deepcopy(point), "key": f"validate-short@{size}MB",
                                    "sizeMB": size, "bytes": point["bytes"] * size})
    target = tmp_path / f"bench{suffix}"
    plot_report(report, target)
    head = target.read_bytes()[:200]
    assert head.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in target.read_bytes()


def test_without_matplotlib_the_bench_still_writes_its_reports_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    status = main(["bench", *TINY, "--only", "retry-100", "--report", str(tmp_path / "b.json"),
                   "--markdown", str(tmp_path / "b.md"), "--plot", str(tmp_path / "b.png")])
    assert status == 0
    assert (tmp_path / "b.json").is_file() and (tmp_path / "b.md").is_file()
    assert not (tmp_path / "b.png").exists()
    assert "pip install" in capsys.readouterr().err


@pytest.mark.slow
def test_every_figure_of_the_whole_bench_carries_its_conformance(
    reference_run: dict[str, Any],
) -> None:
    # The reference passes every case each workload relies on (those calling its operations).
    assert reference_run["report"]["conformance"] == {"ran": True, "reports": []}
    for workload in reference_run["report"]["workloads"]:
        (result,) = workload["results"]
        member = result["conformance"]
        assert member["cases"] > 0 and member["failed"] == 0, (workload["key"], member)
        assert f"cases passed {member['passed']} of {member['cases']}" in reference_run["markdown"]
